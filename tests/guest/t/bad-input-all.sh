# SPDX-License-Identifier: GPL-2.0
# bad-input under bio_alloc_cache=all (6.19's rule): the same answers as
# under 6.12's (EOPNOTSUPP for IOPOLL where polling is not supported,
# EINVAL for misaligned O_DIRECT, short IO and ENOSPC at the end of the
# device, 4 MiB IOs split and verified).
# boot: all
. /tests/t/bad-input.sh
