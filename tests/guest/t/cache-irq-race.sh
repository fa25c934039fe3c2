# SPDX-License-Identifier: GPL-2.0
# The "icount" boot, whose QEMU runs with -icount: an interrupt is taken
# between any two instructions, as on hardware, not only where TCG ends a
# block of translated code (never inside the few instructions of a splice).
# Its KUnit run is what forces hard-IRQ puts into the IRQ list's splice
# (bio_cache_test_irq_race, whose hrtimer's period varies at random so that
# it lands anywhere in the allocation path). This test is the same
# interleaving with real IO: from CPU1, reads of two memory-backed null_blks
# that complete every bio from an hrtimer (hard IRQ: onto the IRQ list), two
# streams at QD 32 whose completion delays differ, so that allocations find
# the task list empty and splice the IRQ list again and again while
# completions keep putting onto it. Then CPU1 goes offline: its drain must
# free exactly what its counts say it held and leave both counts at 0, the
# lists balance, and /init's slab check after the test finds no bio
# leaked. (Completions a fixed delay after their submission land at much
# the same instructions every time, so this test seldom meets the splice's
# few instructions itself: the KUnit case is the one that must.)
# boot: icount
# timeout: 300
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu to offline"
nullb_create raceq queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=2000 memory_backed=1 size=16 blocksize=512
nullb_create raceq2 queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=3300 memory_backed=1 size=16 blocksize=512
s0=$(cache_stat $DIO_BIOSET $cpu splices)
p0=$(cache_stat $DIO_BIOSET $cpu put_irq)
d0=$(cache_stat $DIO_BIOSET $cpu drain_hotplug)

# verified IO first, then reads, as many as the kernel's speed allows
out=$(taskset -c $cpu uring-io -d /dev/raceq -o verify -r 1M -b 512 -B 4k -q 32 -c 8 -t 1) ||
	{ echo "$out"; fail "verified IO on raceq failed"; }
log "$out"
n=$(scaled 100000)
taskset -c $cpu uring-io -d /dev/raceq2 -o read -r 16M -b 512 -q 32 -c 8 -n "$n" > /tmp/race2.out 2>&1 &
other=$!
out=$(taskset -c $cpu uring-io -d /dev/raceq -o read -r 16M -b 512 -q 32 -c 8 -n "$n") ||
	{ echo "$out"; fail "reads on raceq failed"; }
log "$out"
wait $other || { cat /tmp/race2.out; fail "reads on raceq2 failed"; }
log "$(tail -n 1 /tmp/race2.out)"
n=$((2 * n))

splices=$(($(cache_stat $DIO_BIOSET $cpu splices) - s0))
irq=$(($(cache_stat $DIO_BIOSET $cpu put_irq) - p0))
held=$(cache_held $DIO_BIOSET $cpu)
log "cpu$cpu: $irq hard-IRQ puts, $splices splices, $held bios held"
[ "$splices" -ge $((n / 64)) ] || fail "only $splices splices in $n reads"
cache_check_bound $DIO_BIOSET
cache_check_balance $DIO_BIOSET

cpu_set $cpu 0
expect_eq "cpu$cpu nr after offline" "$(cache_stat $DIO_BIOSET $cpu nr)" 0
expect_eq "cpu$cpu nr_irq after offline" "$(cache_stat $DIO_BIOSET $cpu nr_irq)" 0
expect_eq "cpu$cpu drained" "$(($(cache_stat $DIO_BIOSET $cpu drain_hotplug) - d0))" "$held"
cpu_set $cpu 1
cache_check_balance $DIO_BIOSET
