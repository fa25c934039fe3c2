# SPDX-License-Identifier: GPL-2.0
# Polled bios that the block layer must split (the 2021 split-flag bug: a
# split polled bio whose parts complete by interrupt). A null_blk with a
# poll queue, hrtimer completions (hard IRQ) and max_sectors=8: every IO
# above 4 KiB is split. Per IO above 4 KiB through io_uring's IOPOLL:
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
# N and put N on the task list. Data written and read back in 4-16 KiB IOs
# verifies; then the cache balances, and the bio and biovec slabs hold
# what they held before (the harness checks that for every test too).
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
nullb_create sp queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 size=16 \
	blocksize=512 max_sectors=8 irqmode=2 completion_nsec=20000
expect_eq "sp max_sectors_kb" "$(cat /sys/block/sp/queue/max_sectors_kb)" 4
expect_eq "sp io_poll" "$(cat /sys/block/sp/queue/io_poll)" 1
before=$(bios_outside_cache)

polled_verify sp -b 4k -B 16k -q 4 -r 1M

# counted BS N WANT_ALLOCS WANT_TASK WANT_IRQ: N polled reads of BS on cpu$cpu
counted() {
	local bs=$1 n=$2 a0 t0 i0 f0 out
	a0=$(cache_allocs $DIO_BIOSET)
	t0=$(cache_stat $DIO_BIOSET all put_task)
	i0=$(cache_stat $DIO_BIOSET all put_irq)
	f0=$(cache_stat $DIO_BIOSET all free_other)
	out=$(taskset -c $cpu uring-io -d /dev/sp -o read -p -q 1 -n "$n" -b "$bs" -B "$bs") ||
		{ echo "$out"; fail "$n polled reads of $bs failed"; }
	expect_eq "reads of $bs completed" "$(field ios "$out")" "$n"
	expect_eq "cached allocations for $n polled reads of $bs" \
		$(($(cache_allocs $DIO_BIOSET) - a0)) "$3"
	expect_eq "task puts for $n polled reads of $bs" \
		$(($(cache_stat $DIO_BIOSET all put_task) - t0)) "$4"
	expect_eq "hard-IRQ puts for $n polled reads of $bs" \
		$(($(cache_stat $DIO_BIOSET all put_irq) - i0)) "$5"
	expect_eq "softirq frees for $n polled reads of $bs" \
		$(($(cache_stat $DIO_BIOSET all free_other) - f0)) 0
}
n=$(scaled 200)
counted 4k "$n" "$n" "$n" 0
counted 8k "$n" $((2 * n)) "$n" "$n"
counted 16k "$n" $((2 * n)) "$n" "$n"

cache_check_bound $DIO_BIOSET
cache_check_balance $DIO_BIOSET
expect_eq "bio and biovec objects outside the caches (before: $before)" "$(bios_outside_cache)" "$before"
