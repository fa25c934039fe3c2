# SPDX-License-Identifier: GPL-2.0
# Sourced by every test in /tests/t. A test passes by exiting 0; fail and
# skip print the reason in the form /init reports (FAIL:, SKIP:).

set -eu

log() { echo "$*"; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 4; }

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1 is '$2', expected '$3'"
	log "$1 = $2"
}

NULLB_CFG=/sys/kernel/config/nullb
NULLBS=""

# Devices a test created are removed when it exits, passed or not.
nullb_cleanup() {
	local n
	for n in $NULLBS; do
		[ -d "$NULLB_CFG/$n" ] && nullb_remove "$n"
	done
	return 0
}
trap nullb_cleanup EXIT

# nullb_create NAME [attr=value...]: a null_blk device /dev/NAME, configured
# through configfs; size is in MiB.
nullb_create() {
	local name=$1 kv
	shift
	mkdir "$NULLB_CFG/$name"
	NULLBS="$NULLBS $name"
	for kv in "$@"; do
		echo "${kv#*=}" > "$NULLB_CFG/$name/${kv%%=*}" ||
			fail "null_blk $name: cannot set $kv"
	done
	echo 1 > "$NULLB_CFG/$name/power"
	[ -b "/dev/$name" ] || fail "null_blk $name: /dev/$name did not appear"
	# A memory-backed null_blk allocates a page, with GFP_NOIO, on the first
	# write to it, and a polled write is processed in null_poll(), under the
	# rcu_read_lock() of iocb_bio_iopoll(): sleeping there is a null_blk bug
	# (DEBUG_ATOMIC_SLEEP reports it). Writing every page once, not polled,
	# keeps the tests clear of it.
	case " $* " in
	*" memory_backed=1 "*)
		uring-io -d "/dev/$name" -o verify -b 1M -B 1M -q 4 -r 1024G > /dev/null ||
			fail "null_blk $name: cannot fill it"
		;;
	esac
	log "null_blk $name: $* (io_poll=$(cat "/sys/block/$name/queue/io_poll"))"
}

nullb_remove() {
	echo 0 > "$NULLB_CFG/$1/power"
	rmdir "$NULLB_CFG/$1"
}

# A memory-backed null_blk with poll queues: the polled-IO target of most tests.
nullb_create_polled() {
	local name=$1
	shift
	nullb_create "$name" queue_mode=2 submit_queues=1 poll_queues=2 \
		memory_backed=1 size=64 blocksize=512 "$@"
}

# The CPUs that can go offline: all but CPU0.
hotplug_cpus() {
	local c
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		[ -f "$c/online" ] && echo "${c##*cpu}"
	done | sort -n
}

cpu_set() {
	echo "$2" > "/sys/devices/system/cpu/cpu$1/online" ||
		fail "cannot set cpu$1 online=$2"
	expect_eq "cpu$1/online" "$(cat "/sys/devices/system/cpu/cpu$1/online")" "$2" > /dev/null
}

# cpus_cycle CPUS...: one hotplug cycle, every CPU given offline, then online.
cpus_cycle() {
	local cpu
	for cpu in "$@"; do cpu_set "$cpu" 0; done
	for cpu in "$@"; do cpu_set "$cpu" 1; done
}

# uring_io ARGS...: run uring-io, show its summary, return its status.
uring_io() {
	log "uring-io $*"
	uring-io "$@"
}

# field KEY LINE: the value of KEY=value in a uring-io summary line.
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# nvme_irqs: NVMe interrupts so far, all queues and CPUs. Polled IO
# completes in the poller without one; non-polled IO raises about one per IO
# at queue depth 1.
nvme_irqs() {
	sed -n 's/^ *[0-9]*:\(.*nvme.*\)/\1/p' /proc/interrupts |
		awk '{ for (i = 1; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }'
}

# io_verify DEV ARGS...: uring-io's verify over /dev/DEV; prints its summary
# line and sets IOS and IRQS (NVMe interrupts meanwhile).
io_verify() {
	local dev=$1 before out
	shift
	before=$(nvme_irqs)
	out=$(uring_io -d "/dev/$dev" -o verify "$@") || { echo "$out"; fail "IO on $dev failed"; }
	IRQS=$(($(nvme_irqs) - before))
	echo "$out"
	IOS=$(field ios "$out")
	[ "$(field verified "$out")" -gt 0 ] || fail "no block was verified on $dev"
}

# polled_verify DEV ARGS...: io_verify with IOPOLL. Success means the bios
# went to poll queues: blk_mq_submit_bio() fails REQ_POLLED bios on a queue
# that cannot poll. On NVMe, also check that the completions were polled:
# fewer interrupts than a tenth of the IOs.
polled_verify() {
	io_verify "$@" -p
	case $1 in
	nvme*)
		[ "$IRQS" -lt $((IOS / 10)) ] ||
			fail "$1: $IOS polled IOs but $IRQS NVMe interrupts: not polled"
		log "$1: $IOS polled IOs, $IRQS NVMe interrupts"
		;;
	esac
}

# The per-CPU bio cache's statistics (CONFIG_BIO_ALLOC_CACHE_STATS).
CACHE_STATS=/sys/kernel/debug/block/bio_alloc_cache
# The bio_set of block device direct IO, which io_uring reads and writes use.
DIO_BIOSET=blkdev_dio_pool

# cache_info KEY: a "KEY: value" line of the statistics (implementation,
# enabled, teardown_drained).
cache_info() {
	[ -r "$CACHE_STATS" ] || fail "no $CACHE_STATS (CONFIG_BIO_ALLOC_CACHE_STATS?)"
	sed -n "s/^$1: //p" "$CACHE_STATS"
}

# cache_stat BIOSET CPU|all FIELD: a counter, summed over CPUs for "all".
cache_stat() {
	[ -r "$CACHE_STATS" ] || fail "no $CACHE_STATS (CONFIG_BIO_ALLOC_CACHE_STATS?)"
	awk -v b="$1" -v c="$2" -v f="$3" '
		$1 == "bio_set" { for (i = 1; i <= NF; i++) col[$i] = i; next }
		!(f in col) { next }
		$1 == b && (c == "all" || $2 == c) { s += $col[f] }
		END { if (!(f in col)) { print "no field " f > "/dev/stderr"; exit 1 } print s + 0 }
	' "$CACHE_STATS" || fail "cannot read $3 from $CACHE_STATS"
}

# cache_check_variant: the kernel runs the cache the host built it with.
cache_check_variant() {
	local want
	want=$(karg variant "")
	[ -n "$want" ] || return 0
	want=${want%-*}		# rust-debug runs the rust cache
	expect_eq "cache implementation" "$(cache_info implementation)" "$want"
}

# cache_check_bound BIOSET: no CPU's lists hold more than the bound. The put
# path frees when task + IRQ list exceed ALLOC_CACHE_MAX (256), so the
# lists may reach 257 between them.
cache_check_bound() {
	local cpu nr
	for cpu in $(seq 0 $(($(grep -c ^processor /proc/cpuinfo) - 1))); do
		nr=$(($(cache_stat "$1" "$cpu" nr) + $(cache_stat "$1" "$cpu" nr_irq)))
		[ "$nr" -le 257 ] || fail "$1 cpu$cpu holds $nr bios, above the bound"
	done
}

# cache_check_balance BIOSET: every bio that went onto one of the bio_set's
# lists left it through an allocation or a CPU-hotplug drain, or is still
# there. To be called with no IO in flight.
cache_check_balance() {
	local puts out held
	puts=$(($(cache_stat "$1" all put_task) + $(cache_stat "$1" all put_irq)))
	out=$(($(cache_stat "$1" all alloc_hit) + $(cache_stat "$1" all drain_hotplug)))
	held=$(($(cache_stat "$1" all nr) + $(cache_stat "$1" all nr_irq)))
	[ "$puts" = $((out + held)) ] ||
		fail "$1: $puts bios put on the lists, but $out taken off and $held held"
	log "$1 balance: $puts puts = $out taken off + $held held"
}

# bios_cached: bios on the lists of every bio_set, all CPUs.
bios_cached() {
	awk '$1 == "bio_set" { next } NF == 12 { s += $11 + $12 } END { print s + 0 }' "$CACHE_STATS"
}

# bio_slab_inuse: bio objects allocated from the bio slabs (bio-*, the bio
# and the bio_set's front pad; slab_nomerge keeps them apart from other
# caches), after flushing the per-CPU slabs so that the count is exact.
bio_slab_inuse() {
	local s n=0
	for s in /sys/kernel/slab/bio-*; do
		[ -d "$s" ] || fail "no bio slab in /sys/kernel/slab (CONFIG_SLUB_DEBUG?)"
		echo 1 > "$s/shrink"
		n=$((n + $(cut -d' ' -f1 "$s/objects")))
	done
	echo "$n"
}

# bios_outside_cache: bio objects allocated and not on a cache's list: the
# mempools' reserves and bios in flight. With no IO in flight, a change
# between two calls is a leak (or a double free).
bios_outside_cache() {
	echo $(($(bio_slab_inuse) - $(bios_cached)))
}

# karg NAME DEFAULT: biotest.NAME=value from the kernel command line.
karg() {
	local v
	v=$(tr ' ' '\n' < /proc/cmdline | sed -n "s/^biotest\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}

# Fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS): fault_setup NAME
# PROBABILITY TIMES configures /sys/kernel/debug/NAME to fail that many
# times at most, quietly (a stack trace per fault would fail the console
# check); fault_injected NAME TIMES tells how many it injected.
fault_setup() {
	local d=/sys/kernel/debug/$1
	[ -d "$d" ] || fail "no $d (CONFIG_FAULT_INJECTION_DEBUG_FS?)"
	echo 0 > "$d/verbose"
	echo 1 > "$d/interval"
	echo "$3" > "$d/times"
	echo "$2" > "$d/probability"
}

fault_injected() {
	echo $(($2 - $(cat "/sys/kernel/debug/$1/times")))
}

fault_off() {
	echo 0 > "/sys/kernel/debug/$1/probability"
}
