# SPDX-License-Identifier: GPL-2.0
# Bad input gets the answer the kernel defines, not a hang or a crash:
#  - IOPOLL reads on a device without poll support fail with EOPNOTSUPP
#    (blk_mq_submit_bio() and __submit_bio() end REQ_POLLED bios with
#    BLK_STS_NOTSUPP), on blk-mq without poll queues (null_blk) and on a
#    bio-based driver (brd, /dev/ram0);
#  - O_DIRECT reads with a misaligned file offset or buffer fail with EINVAL;
#  - oversized O_DIRECT IO (4 MiB: more pages than one bio holds) is split
#    into several bios, which bypass the cache, and verifies;
#  - IO at and across the end of the device gets short reads and writes, 0
#    for reads at or past the end and ENOSPC for a write at the end.
. /tests/lib.sh

EOPNOTSUPP=95
EINVAL=22

nullb_create nopoll queue_mode=2 submit_queues=1 poll_queues=0 size=16
expect_eq "nopoll io_poll" "$(cat /sys/block/nopoll/queue/io_poll)" 0
uring_io -d /dev/nopoll -o read -p -n 32 -q 4 -e $EOPNOTSUPP
# the same device without IOPOLL works
uring_io -d /dev/nopoll -o read -n 32 -q 4

[ -b /dev/ram0 ] || fail "no /dev/ram0 (brd.rd_nr=1 on the kernel command line?)"
expect_eq "ram0 io_poll" "$(cat /sys/block/ram0/queue/io_poll)" 0
uring_io -d /dev/ram0 -o read -p -n 32 -q 4 -e $EOPNOTSUPP
uring_io -d /dev/ram0 -o read -n 32 -q 4

nullb_create_polled badb
for poll in "" -p; do
	uring_io -d /dev/badb -o read $poll -n 16 -q 2 -A 1 -e $EINVAL
	uring_io -d /dev/badb -o read $poll -n 16 -q 2 -A 256 -e $EINVAL
	uring_io -d /dev/badb -o read $poll -n 16 -q 2 -a 1 -e $EINVAL
done
# and aligned IO on the same device still verifies
polled_verify badb -q 4 -r 1M

# 4 MiB IOs: 1024 pages, more than BIO_MAX_VECS (256)
polled_verify badb -b 4M -B 4M -q 2 -r 16M
for poll in "" -p; do
	uring_io -d /dev/badb -o edge $poll -b 512 -B 16k
done
