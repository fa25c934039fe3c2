# SPDX-License-Identifier: GPL-2.0
# Polled bios that the block layer must split: it clears their polled flag
# (cc29e1bf0d63, "block: disable iopoll for split bio"), so that their parts
# complete by interrupt and never wait on a poll queue nobody polls. A
# null_blk with a poll queue, hrtimer completions (hard IRQ) and
# max_sectors=8: every IO above 4 KiB is split. Per IO above 4 KiB through
# io_uring's IOPOLL:
#  - the first, non-blocking issue (REQ_NOWAIT) cannot be split
#    (bio_split_rw_at()): its bio, taken from the cache, ends at once with
#    BLK_STS_AGAIN in the submitting task and goes back on the task list;
#  - io_uring issues it again from its worker, blocking: the block layer
#    splits it and clears its polled flag (bio_clear_polled()), so the parts
#    go to the device's interrupt-driven queue; the split-off parts come
#    from the queue's bio_split, which has no cache, and the cached parent
#    is put by the hrtimer completion of its last part, in hard IRQ: the IRQ
#    list.
# So N reads of 8 or 16 KiB take 2N bios from blkdev_dio_pool's cache and
# put N on the task list and N on the IRQ list; N of 4 KiB (no split) take
# N and put N on the task list. The same through dm-linear, below. Data
# written and read back in 4-16 KiB IOs verifies; then the cache balances,
# and the bio and biovec slabs hold what they held before (the harness
# checks that for every test too). First, the hang cc29e1bf0d63 describes:
# on a queue of depth 2, a polled read of 64 KiB is split into 16 parts by
# io_uring's worker, which waits for a tag for its third part; were the
# parts polled, the two that hold the tags would wait on the poll queue,
# which nobody polls while the worker sleeps, until the device's timeout.
# So 8 polled reads of 64 KiB on that queue must complete within 20 s.
# Through dm-linear over the same null_blk (dm maps without splitting; the
# device below splits dm's clone): verified IOPOLL IO of 4-16 KiB, and per
# read of 8 or 16 KiB exactly one bio from blkdev_dio_pool's cache, put in
# hard IRQ, and two from dm's bio_set: the first clone, ended by
# BLK_STS_AGAIN and put back by the submitter, and the one dm's worker
# issues again, put in hard IRQ. Before patch 36 (dm requeued the bio with
# REQ_NOWAIT kept) every such read ended in EAGAIN in userspace.
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
nullb_create sp queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 size=16 \
	blocksize=512 max_sectors=8 irqmode=2 completion_nsec=20000
expect_eq "sp max_sectors_kb" "$(cat /sys/block/sp/queue/max_sectors_kb)" 4
expect_eq "sp io_poll" "$(cat /sys/block/sp/queue/io_poll)" 1
nullb_create spq queue_mode=2 submit_queues=1 poll_queues=1 hw_queue_depth=2 \
	memory_backed=1 size=16 blocksize=512 max_sectors=8 irqmode=2 completion_nsec=20000
echo none > /sys/block/spq/queue/scheduler 2> /dev/null || true
before=$(bios_outside_cache)

polled_verify sp -b 4k -B 16k -q 4 -r 1M

# The hang: 16 parts, 2 tags (no I/O scheduler, whose own requests would
# stand between the parts and the tags). It is that hang only if, when the
# 20 s are up, spq's poll queue holds polled requests in flight: the parts
# that hold the tags (null_blk fails them after its 5 s timeout, and the
# next two take their place). A hang without them, or a failed read, is
# another failure, and says so.
[ -n "$(poll_hctxs spq)" ] || fail "spq: no poll queue in $BLK_DEBUGFS/spq (CONFIG_BLK_DEBUG_FS?)"
what="8 polled reads of 64k on spq (16 parts each, queue depth 2)"
t0=$(date +%s)
rc=0
run_deadline 20 spq taskset -c $cpu uring-io -d /dev/spq -o read -p -q 1 -n 8 -b 64k -B 64k ||
	rc=$?
case $rc in
0) ;;
137)
	cat /tmp/deadline.out
	[ -z "$DEADLINE_POLLED" ] ||
		fail "$what hung for 20s with polled requests in flight on spq's poll queue" \
			"($DEADLINE_POLLED): split parts wait on the poll queue"
	fail "$what did not complete within 20s, and no polled request was in flight" \
		"on spq's poll queues"
	;;
*)
	cat /tmp/deadline.out
	fail "$what failed$(uring_failure /tmp/deadline.out $rc)"
	;;
esac
log "$what in $(($(date +%s) - t0))s"

# counted DEV BS N BIOSET:ALLOCS:TASK:IRQ...: N polled reads of BS from DEV
# on cpu$cpu; per BIOSET, that many cached allocations, task puts and
# hard-IRQ puts, and no softirq free.
counted() {
	local dev=$1 bs=$2 n=$3 e i=0 out b allocs task irq
	shift 3
	for e in "$@"; do
		i=$((i + 1))
		eval "SNAP_$i=\"$(cache_snap "${e%%:*}")\""
	done
	out=$(taskset -c $cpu uring-io -d "/dev/$dev" -o read -p -q 1 -n "$n" -b "$bs" -B "$bs") ||
		{ echo "$out"; fail "$n polled reads of $bs on $dev failed"; }
	expect_eq "reads of $bs on $dev completed" "$(field ios "$out")" "$n"
	i=0
	for e in "$@"; do
		i=$((i + 1))
		IFS=: read -r b allocs task irq <<- EOF
			$e
		EOF
		eval "cache_delta \"\$b\" \"\$SNAP_$i\"" > /dev/null
		expect_eq "$b: cached allocations for $n polled reads of $bs on $dev" \
			"$D_allocs" "$allocs"
		expect_eq "$b: task puts for $n polled reads of $bs on $dev" "$D_put_task" "$task"
		expect_eq "$b: hard-IRQ puts for $n polled reads of $bs on $dev" "$D_put_irq" "$irq"
		expect_eq "$b: softirq frees for $n polled reads of $bs on $dev" "$D_free_other" 0
	done
}
n=$(scaled 200)
counted sp 4k "$n" "$DIO_BIOSET:$n:$n:0"
counted sp 8k "$n" "$DIO_BIOSET:$((2 * n)):$n:$n"
counted sp 16k "$n" "$DIO_BIOSET:$((2 * n)):$n:$n"

# Through dm-linear, which maps without splitting: the device below splits
# dm's clone. Its first, non-blocking issue ends in BLK_STS_AGAIN there,
# which dm takes back and requeues to its worker without the polled flag;
# the worker issues it again, blocking (patch 36: before it, still
# REQ_NOWAIT, it failed the same way and the read ended in EAGAIN), and the
# device splits it and completes it by interrupt. Per read of 8 or 16 KiB:
# one bio from blkdev_dio_pool's cache, put in hard IRQ, and two from dm's
# (the first clone, put back by the submitter, and the one the worker
# issued, put in hard IRQ).
dm_create bcsplit "0 $(blockdev --getsz /dev/sp) linear /dev/sp 0"
dm=$DM_DEV
polled_verify "$dm" -b 4k -B 16k -q 4 -r 1M
counted "$dm" 4k "$n" "$DIO_BIOSET:$n:$n:0" "$dm:$n:$n:0"
counted "$dm" 8k "$n" "$DIO_BIOSET:$n:0:$n" "$dm:$((2 * n)):$n:$n"
counted "$dm" 16k "$n" "$DIO_BIOSET:$n:0:$n" "$dm:$((2 * n)):$n:$n"
cache_check_bound "$dm"
cache_check_balance "$dm"
dms remove bcsplit || fail "dmsetup remove bcsplit failed"

cache_check_bound $DIO_BIOSET
cache_check_balance $DIO_BIOSET

expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
