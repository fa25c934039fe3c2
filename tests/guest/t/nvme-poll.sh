# SPDX-License-Identifier: GPL-2.0
# Emulated NVMe with nvme.poll_queues: the driver reports a poll queue, the
# queue's io_poll is 1, and io_uring IOPOLL O_DIRECT writes and reads are
# verified and complete without NVMe interrupts; the same IO without IOPOLL
# does interrupt (at least one interrupt per two IOs), which shows that
# the interrupt count can tell the two apart.
. /tests/lib.sh

for i in $(seq 50); do
	[ -b /dev/nvme0n1 ] && break
	sleep 0.2
done
[ -b /dev/nvme0n1 ] || fail "no /dev/nvme0n1 (is the NVMe device attached?)"

line=$(dmesg | grep -E 'nvme nvme0: [0-9]+/[0-9]+/[0-9]+ default/read/poll queues' | tail -n 1)
[ -n "$line" ] || fail "the NVMe driver did not report its queues"
log "$line"
npoll=$(echo "$line" | sed -E 's|.* [0-9]+/[0-9]+/([0-9]+) default/read/poll.*|\1|')
[ "$npoll" -ge 1 ] || fail "NVMe has $npoll poll queues"
expect_eq "nvme0n1 io_poll" "$(cat /sys/block/nvme0n1/queue/io_poll)" 1

polled_verify nvme0n1 -b 512 -B 16k -q 8 -r 4M
# The check above can tell: without IOPOLL, the NVMe interrupts.
io_verify nvme0n1 -q 1 -r 1M
[ "$IRQS" -ge $((IOS / 2)) ] || fail "$IOS IOs without IOPOLL, only $IRQS NVMe interrupts"
log "nvme0n1: $IOS IOs without IOPOLL, $IRQS NVMe interrupts"
