# SPDX-License-Identifier: GPL-2.0
# null_blk (blk-mq, poll queues, memory backed): the queue reports io_poll
# 1, and io_uring IOPOLL O_DIRECT writes and reads of 512 B to 16 KiB, at
# queue depth 1 and 16, have every byte read back verified.
. /tests/lib.sh

nullb_create_polled pollb
expect_eq "pollb io_poll" "$(cat /sys/block/pollb/queue/io_poll)" 1
for qd in 1 16; do
	polled_verify pollb -b 512 -B 16k -q $qd -r 8M
done
