# SPDX-License-Identifier: GPL-2.0
# Device-mapper tables swapped and devices removed while dm's bio_set holds
# bios in its per-CPU cache: every table load makes a bio_set, every swap
# (reload, then resume) frees the old table's, and removal frees the last
# one, with bioset_exit() emptying every CPU's lists.
# Over one null_blk with a poll queue whose other IO completes in hard IRQ
# (irqmode=2), biotest.dm_cycles times (default 3, a quarter of it on the
# debug variant, at least 1):
#  - create a dm device; three verified IO streams run on it, polled from
#    CPU 0, polled from CPU 1 and completed in hard IRQ, while its table is
#    swapped 4 times for one that maps the same blocks (1 or 2 linear
#    targets), and once a table is loaded twice and cleared without being
#    swapped in: those never-used bio_sets free nothing;
#  - with the streams stopped, every CPU holds bios on dm's task or IRQ
#    lists; the cache balances; a swap frees exactly what was held
#    (teardown_drained grows by it) and the new bio_set starts at zero;
#  - with bios cached on every CPU again, removing the device frees exactly
#    what was held and its bio_set's line goes.
# Then a deferred removal while IO runs takes effect at the last close and
# frees exactly what was held then. No stream saw an IO error, every one
# verified data, and the bio slabs hold what they held before (dm's own
# slabs are destroyed with its last bio_set, which would WARN if one of
# their bios were still allocated).
# boot: stress
# timeout: 300
. /tests/lib.sh

cycles=$(scaled "$(karg dm_cycles 3)")
swaps=4
name=bcr

nullb_create dmq queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 \
	size=16 blocksize=512 irqmode=2 completion_nsec=20000
sz=$(blockdev --getsz /dev/dmq)
half=$((sz / 2))
# The same blocks in two shapes, so that data written before a swap reads
# back after it.
t1="0 $sz linear /dev/dmq 0"
t2="0 $half linear /dev/dmq 0
$half $half linear /dev/dmq $half"
before=$(bios_outside_cache)

# drained: teardown_drained so far
drained() {
	cache_info teardown_drained
}

# start_io DEV: the three verified IO streams on DEV
start_io() {
	worker_start poll0 0 "$1" 0 -p -q 8
	worker_start poll1 1 "$1" 4M -p -q 8 -B 4k
	worker_start irq0 all "$1" 8M -q 8
	sleep 1
	workers_alive "after start"
}

# swap_counted DEV TABLE: swap TABLE in; returns what that freed in the
# global SWAPPED_FREED.
swap_counted() {
	local td
	td=$(drained)
	dm_swap $name "$2"
	SWAPPED_FREED=$(($(drained) - td))
	cache_has "$1" || fail "$1: no bio_set with a cache after the swap"
}

# exact_swap DEV TABLE: quiet, bios cached on every CPU: the swap frees
# exactly them, and the new bio_set starts empty.
exact_swap() {
	local held f n
	dm_fill_cpus "$1"
	cache_check_balance "$1"
	held=$(cache_held "$1")
	swap_counted "$1" "$2"
	expect_eq "bios freed by swapping $1's table (held: $held)" "$SWAPPED_FREED" "$held"
	for f in alloc_hit alloc_miss put_task put_irq nr nr_irq; do
		n=$(cache_stat "$1" all $f)
		[ "$n" = 0 ] || fail "$1's new bio_set: $f is $n right after the swap, expected 0"
	done
}

# exact_remove DEV: quiet, bios cached on every CPU: removing the device
# frees exactly them, and its bio_set is gone.
exact_remove() {
	local held td
	dm_fill_cpus "$1"
	held=$(cache_held "$1")
	td=$(drained)
	dms remove $name || fail "dmsetup remove $name failed"
	expect_eq "bios freed by removing $1 (held: $held)" $(($(drained) - td)) "$held"
	cache_has "$1" && fail "$1's bio_set is still listed after removal"
	[ ! -e "/sys/block/$1" ] || fail "/sys/block/$1 still exists after removal"
}

start=$(date +%s)
under_io=0 nonzero=0
for c in $(seq "$cycles"); do
	dm_create $name "$t1"
	dev=$DM_DEV
	start_io "$dev"
	for s in $(seq $swaps); do
		if [ "$s" = 3 ]; then
			# inactive tables that are never swapped in
			td=$(drained)
			dm_load $name "$t2"
			dm_load $name "$t1"
			dms clear $name || fail "dmsetup clear $name failed"
			td=$(($(drained) - td))
			[ "$td" = 0 ] || fail "dropping never-used tables freed $td cached bios, expected 0"
		fi
		if [ $((s % 2)) = 1 ]; then t=$t2; else t=$t1; fi
		swap_counted "$dev" "$t"
		under_io=$((under_io + 1))
		[ "$SWAPPED_FREED" -gt 0 ] && nonzero=$((nonzero + 1))
		log "cycle $c, swap $s under IO: $SWAPPED_FREED cached bios freed"
		workers_alive "after swap $s of cycle $c"
	done
	workers_stop
	workers_check
	exact_swap "$dev" "$t1"
	exact_remove "$dev"
done
log "$cycles cycles, $under_io swaps under IO ($nonzero of them freed cached bios)" \
	"in $(($(date +%s) - start))s"
[ "$nonzero" -gt 0 ] || fail "no swap under IO found a bio in dm's cache"

# Deferred removal: requested while IO runs, done at the last close.
dm_create $name "$t1"
dev=$DM_DEV
start_io "$dev"
exec 5< "/dev/$dev"
dms remove --deferred $name || fail "dmsetup remove --deferred $name failed"
sleep 1
workers_alive "after the deferred removal request"
[ -e "/sys/block/$dev" ] || fail "$dev went while open"
workers_stop
workers_check
held=$(cache_held "$dev")
td=$(drained)
exec 5<&-
for i in $(seq 100); do
	[ -e "/sys/block/$dev" ] || break
	sleep 0.1
done
[ ! -e "/sys/block/$dev" ] || fail "$dev still exists after its last close"
expect_eq "bios freed by the deferred removal of $dev (held: $held)" $(($(drained) - td)) "$held"
cache_has "$dev" && fail "$dev's bio_set is still listed after removal"

cache_check_balance $DIO_BIOSET
expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
