# SPDX-License-Identifier: GPL-2.0
# Stress: verified IO from four tasks on one shared poll queue, mixed with
# hard-IRQ (null_blk irqmode=2, hrtimer) and softirq (irqmode=1) completions,
# while every CPU but CPU0 goes offline and online, biotest.stress_cycles
# times (default 200; 50 on the debug variant, where a cycle costs four
# times as much: make soak runs it long). Several pollers on one poll queue
# complete each other's bios, which then go back to the poller's CPU cache
# while their submitter may still poll for them (the 2023 recycling crash).
# Afterwards: every IO verified, the cache's statistics balance, and the bio
# slabs hold what they held before, once the cached bios are counted.
# boot: stress
# timeout: 600
. /tests/lib.sh

cycles=$(karg stress_cycles "$(scaled 200)")
cpus=$(hotplug_cpus)
[ -n "$cpus" ] || fail "no CPU can go offline (SMP and CPU hotplug needed)"

# hardq has one poll queue, so that every poller polls the same hctx, and
# completes its non-polled IO from an hrtimer (hard IRQ). softq completes
# from the block softirq: blk-mq raises it only for a single hardware queue,
# so softq has no poll queue (with one, null_blk completes in the submitter).
nullb_create hardq queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 \
	size=128 blocksize=512 irqmode=2 completion_nsec=20000
nullb_create softq queue_mode=2 submit_queues=1 poll_queues=0 memory_backed=1 \
	size=64 blocksize=512 irqmode=1
expect_eq "hardq poll queues" "$(ls -d /sys/block/hardq/mq/* | wc -l)" 2

before=$(bios_outside_cache)
s0=$(cache_stat $DIO_BIOSET all splices)
i0=$(cache_stat $DIO_BIOSET all put_irq)
f0=$(cache_stat $DIO_BIOSET all free_other)
d0=$(cache_stat $DIO_BIOSET all drain_hotplug)

# Verified IO over 16 MiB of each device (lib.sh's worker_start), until
# the end; each worker must complete IO in every cycle (workers_alive).
worker_start poll0 all hardq 0 -r 16M -p -q 8
worker_start poll1 all hardq 16M -r 16M -p -q 8 -B 4k
worker_start poll2 all hardq 32M -r 16M -p -q 4 -X -F
worker_start poll3 all hardq 48M -r 16M -p -q 16 -c 4
worker_start irq0 all hardq 64M -r 16M -q 8
worker_start soft0 all softq 0 -r 16M -q 8
worker_start soft1 all softq 16M -r 16M -q 4 -B 4k

start=$(date +%s)
for c in $(seq "$cycles"); do
	# shellcheck disable=SC2086
	cpus_cycle $cpus
	workers_alive "in cycle $c"
done
log "$cycles cycles of CPUs $(echo $cpus) offline/online in $(($(date +%s) - start))s"

workers_stop
ios=0 verified=0
for name in $WORKERS; do
	out=$(tail -n 1 "/tmp/$name.out")
	ios=$((ios + $(field ios "$out")))
	verified=$((verified + $(field verified "$out")))
done
workers_check
log "$ios IOs, $verified reads verified"

# Each kind of completion reached the cache, and hotplug drained it.
spl=$(($(cache_stat $DIO_BIOSET all splices) - s0))
irq=$(($(cache_stat $DIO_BIOSET all put_irq) - i0))
other=$(($(cache_stat $DIO_BIOSET all free_other) - f0))
drained=$(($(cache_stat $DIO_BIOSET all drain_hotplug) - d0))
log "IRQ puts $irq, splices $spl, freed from softirq $other, drained by hotplug $drained"
[ "$irq" -gt 0 ] && [ "$spl" -gt 0 ] || fail "no hard-IRQ puts or splices"
[ "$other" -gt 0 ] || fail "no softirq completion freed a bio"
[ "$drained" -gt 0 ] || fail "hotplug never drained a bio"
cache_check_bound $DIO_BIOSET
cache_check_balance $DIO_BIOSET
expect_eq "bio and biovec objects outside the caches (before: $before)" "$(bios_outside_cache)" "$before"
