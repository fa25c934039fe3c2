# SPDX-License-Identifier: GPL-2.0
# CPU hotplug and device-mapper's bio_set: each bio_set with a cache is an
# instance of the CPU-dead callback, dm's too.
#  - After polled and interrupt-completed reads through dm-linear on CPU1
#    (bios on its task and IRQ lists), offlining CPU1 empties its lists in
#    dm's bio_set and in the direct-IO bio_set above it, each drain counter growing by exactly what that
#    bio_set held there; back online, polled reads on CPU1 hit again, and
#    both bio_sets balance.
#  - Verified IO through dm, polled and completed in hard IRQ, while every
#    CPU but CPU0 goes offline and online biotest.dm_hotplug_cycles times
#    (default 20, a quarter of it on the debug variant) and dm's table is
#    swapped every 4th cycle (bio_set instances come and go between CPU-dead
#    callbacks): no IO error, data verified, dm's bio_sets drained bios on
#    CPU death, the current one balances, and once the device is removed
#    the bio slabs hold what they held before.
# boot: stress
# timeout: 200
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu to offline"
cpus=$(hotplug_cpus)
cycles=$(scaled "$(karg dm_hotplug_cycles 20)")
name=bch

nullb_create hpq queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 \
	size=16 blocksize=512 irqmode=2 completion_nsec=20000
sz=$(blockdev --getsz /dev/hpq)
half=$((sz / 2))
t1="0 $sz linear /dev/hpq 0"
t2="0 $half linear /dev/hpq 0
$half $half linear /dev/hpq $half"
before=$(bios_outside_cache)
dm_create $name "$t1"
dev=$DM_DEV

# The exact drain of one CPU.
taskset -c $cpu uring-io -d /dev/$dev -o read -p -q 32 -c 32 -n "$(scaled 4000)" > /dev/null ||
	fail "polled reads on $dev, cpu$cpu, failed"
taskset -c $cpu uring-io -d /dev/$dev -o read -q 4 -n 8 > /dev/null ||
	fail "reads on $dev, cpu$cpu, failed"
for l in nr nr_irq; do
	[ "$(cache_stat $dev $cpu $l)" -gt 0 ] ||
		fail "$dev: cpu$cpu's $l is 0 after polled and IRQ-completed reads"
done
# held BIOSET: what it holds on $cpu, checked and logged
held() {
	local n
	n=$(cache_held $1 $cpu)
	[ "$n" -gt 0 ] || fail "$1: no bios cached on cpu$cpu after IO there"
	log "$1: cpu$cpu holds $n ($(cache_stat $1 $cpu nr_irq) on the IRQ list)" >&2
	echo "$n"
}

# drained BIOSET HELD DRAINS_BEFORE: $cpu's lists are empty and were drained
# of exactly what they held
drained() {
	expect_eq "$1 cpu$cpu nr after offline" "$(cache_stat $1 $cpu nr)" 0
	expect_eq "$1 cpu$cpu nr_irq after offline" "$(cache_stat $1 $cpu nr_irq)" 0
	expect_eq "$1 cpu$cpu drained" $(($(cache_stat $1 $cpu drain_hotplug) - $3)) "$2"
}

dm_held=$(held $dev)
dm_d0=$(cache_stat $dev $cpu drain_hotplug)
dio_held=$(held $DIO_BIOSET)
dio_d0=$(cache_stat $DIO_BIOSET $cpu drain_hotplug)
cpu_set $cpu 0
drained $dev "$dm_held" "$dm_d0"
drained $DIO_BIOSET "$dio_held" "$dio_d0"
cpu_set $cpu 1
h0=$(cache_stat $dev $cpu alloc_hit)
taskset -c $cpu uring-io -d /dev/$dev -o read -p -q 8 -n 1000 > /dev/null ||
	fail "polled reads on $dev after online failed"
hits=$(($(cache_stat $dev $cpu alloc_hit) - h0))
[ "$hits" -ge 900 ] || fail "$dev: only $hits of 1000 polled reads on cpu$cpu hit after online"
cache_check_balance $dev
cache_check_balance $DIO_BIOSET

# Hotplug cycles under IO, with table swaps.
worker_start poll0 all $dev 0 -p -q 8
worker_start poll1 all $dev 4M -p -q 8 -B 4k
worker_start irq0 all $dev 8M -q 8
sleep 1
workers_alive "after start"
ndrained=0 swaps=0
start=$(date +%s)
for c in $(seq "$cycles"); do
	# shellcheck disable=SC2086
	cpus_cycle $cpus
	workers_alive "during hotplug cycle $c"
	if [ $((c % 4)) = 0 ]; then
		# the swap frees this bio_set and its counters: count its drains first
		ndrained=$((ndrained + $(cache_stat $dev all drain_hotplug)))
		if [ $((c % 8)) = 0 ]; then t=$t1; else t=$t2; fi
		dm_swap $name "$t"
		swaps=$((swaps + 1))
	fi
done
ndrained=$((ndrained + $(cache_stat $dev all drain_hotplug)))
log "$cycles cycles of CPUs $(echo $cpus) offline/online, $swaps table swaps," \
	"in $(($(date +%s) - start))s"
workers_stop
workers_check
log "dm's bio_sets drained $ndrained bios on CPU death"
[ "$ndrained" -gt 0 ] || fail "CPU death never drained a bio from dm's bio_sets"
cache_check_bound $dev
cache_check_balance $dev
cache_check_balance $DIO_BIOSET
dms remove $name || fail "dmsetup remove $name failed"
expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
