# SPDX-License-Identifier: GPL-2.0
# Stress: verified IO from four tasks on one shared poll queue, mixed with
# hard-IRQ (null_blk irqmode=2, hrtimer) and softirq (irqmode=1) completions,
# while every CPU but CPU0 goes offline and online, biotest.stress_cycles
# times (default 200). Several pollers on one poll queue complete each
# other's bios, which then go back to the poller's CPU cache while their
# submitter may still poll for them (the 2023 recycling crash).
# Afterwards: every IO verified, the cache's statistics balance, and the bio
# slabs hold what they held before, once the cached bios are counted.
# boot: stress
# timeout: 600
. /tests/lib.sh

cycles=$(karg stress_cycles 200)
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

# start_worker NAME DEVICE OFFSET OPTIONS...: verified IO over 16 MiB of
# DEVICE from OFFSET until interrupted; its summary goes to /tmp/NAME.out.
names="" pids=""
start_worker() {
	local name=$1 dev=$2 off=$3
	shift 3
	uring-io -d "/dev/$dev" -o verify -O "$off" -r 16M -t 3600 "$@" > "/tmp/$name.out" 2>&1 &
	names="$names $name"
	pids="$pids $!"
}
start_worker poll0 hardq 0 -p -q 8
start_worker poll1 hardq 16M -p -q 8 -B 4k
start_worker poll2 hardq 32M -p -q 4 -X -F
start_worker poll3 hardq 48M -p -q 16 -c 4
start_worker irq0 hardq 64M -q 8
start_worker soft0 softq 0 -q 8
start_worker soft1 softq 16M -q 4 -B 4k
# On failure too, stop the workers before their devices are removed.
stop_workers() {
	# shellcheck disable=SC2086
	kill -INT $pids 2> /dev/null || true
	wait || true
	nullb_cleanup
}
trap stop_workers EXIT

start=$(date +%s)
for c in $(seq "$cycles"); do
	# shellcheck disable=SC2086
	cpus_cycle $cpus
	for p in $pids; do
		kill -0 "$p" 2> /dev/null || fail "a worker stopped during cycle $c: $(cat /tmp/*.out)"
	done
done
log "$cycles cycles of CPUs $(echo $cpus) offline/online in $(($(date +%s) - start))s"

# shellcheck disable=SC2086
kill -INT $pids
# shellcheck disable=SC2086
wait $pids || true
ios=0 verified=0
for name in $names; do
	out=$(tail -n 1 "/tmp/$name.out")
	echo "$name: $out"
	[ "$(field errors "$out")" = 0 ] || { cat "/tmp/$name.out"; fail "$name: IO errors"; }
	[ "$(field verified "$out")" -gt 0 ] || fail "$name: no block verified"
	ios=$((ios + $(field ios "$out")))
	verified=$((verified + $(field verified "$out")))
done
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
expect_eq "bios outside the caches (before: $before)" "$(bios_outside_cache)" "$before"
