# SPDX-License-Identifier: GPL-2.0
# On a kernel built with BTF (the distro-shaped variants, whose bio.o holds
# the Rust cache's code): BTF loaded at boot, /sys/kernel/btf/vmlinux is
# there, and it describes bio.c's functions and types: it names bio_put,
# bio_alloc_bioset, bio_init, bioset_init and struct bio_set. Skipped on
# kernels built without debug info.
. /tests/lib.sh

[ "$(karg btf 0)" = 1 ] || skip "kernel built without CONFIG_DEBUG_INFO_BTF"
btf=/sys/kernel/btf/vmlinux
[ -s $btf ] || fail "$btf is missing or empty: BTF did not load"
# BTF's string section names every function and type it describes.
for name in bio_put bio_alloc_bioset bio_init bioset_init bio_set; do
	grep -q "$name" $btf || fail "$btf does not name $name"
done
log "$btf: $(wc -c < $btf) bytes, names bio_put, bio_alloc_bioset, bio_init, bioset_init, bio_set"
