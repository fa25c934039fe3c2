# SPDX-License-Identifier: GPL-2.0
# Sourced by every test in /tests/t. A test passes by exiting 0; fail and
# skip print the reason in the form /init reports (FAIL:, SKIP:), on stderr,
# so that a helper failing inside $(...) is still heard.

set -eu

log() { echo "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 4; }

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1 is '$2', expected '$3'"
	log "$1 = $2"
}

NULLB_CFG=/sys/kernel/config/nullb
NULLBS=""

# Devices a test created are removed when it exits, passed or not: its IO
# workers stopped first, then the device-mapper devices, which hold the
# devices below them; and a CPU it left offline (a test that failed
# halfway through a hotplug cycle) comes back, so that the tests after it
# in the same boot find every CPU online.
nullb_cleanup() {
	local n
	for n in $NULLBS; do
		[ -d "$NULLB_CFG/$n" ] && nullb_remove "$n"
	done
	return 0
}
cpus_restore() {
	local c
	for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat "$c")" = 1 ] || echo 1 > "$c" || true
	done
	return 0
}
# On kernels with kmemleak (the debug variant), scans while IO is in flight:
# kmemleak_scanning_start runs one scan after another in the background
# until kmemleak_scanning_stop. A bio the cache recycled keeps, to kmemleak,
# the age of its first allocation unless the cache says otherwise, so a scan
# that finds it in flight where kmemleak does not look reports it at once
# ("new suspected memory leaks" on the console fails the boot).
KMEMLEAK=/sys/kernel/debug/kmemleak
KMEMLEAK_PID=""
kmemleak_scanning_start() {
	[ -w $KMEMLEAK ] || return 0
	(while :; do echo scan > $KMEMLEAK || exit 1; sleep 3; done) &
	KMEMLEAK_PID=$!
}
kmemleak_scanning_stop() {
	[ -n "$KMEMLEAK_PID" ] || return 0
	kill "$KMEMLEAK_PID" 2>/dev/null || fail "the kmemleak scans stopped early (kmemleak off?)"
	wait "$KMEMLEAK_PID" 2>/dev/null || true
	KMEMLEAK_PID=""
	log "kmemleak scanned while the IO ran"
}

# File systems a test left mounted under /mnt, which hold their devices.
mounts_cleanup() {
	local m
	for m in $(awk '$2 ~ "^/mnt/" { print $2 }' /proc/mounts); do
		umount "$m" || true
	done
	return 0
}
test_cleanup() {
	[ -z "$KMEMLEAK_PID" ] || kill "$KMEMLEAK_PID" 2>/dev/null || true
	workers_stop
	if [ -n "$FWRITER" ]; then
		touch /tmp/fw.stop
		wait "$FWRITER" 2> /dev/null || true
	fi
	mounts_cleanup
	dm_cleanup
	nullb_cleanup
	cpus_restore
}
trap test_cleanup EXIT

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

# cpus_all: every CPU, online or not, by number.
cpus_all() {
	local c
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		echo "${c##*cpu}"
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

# A failed IO in uring-io's output: "uring-io: read at 8192 len 8192:
# res=-11 EAGAIN (Resource temporarily unavailable)".
URING_RES='^uring-io: .*: res=-[0-9]* [A-Z0-9?]* ('

# uring_errnos FILE: the errnos of the failed IOs uring-io reported in FILE,
# by name, each once, sorted: "EAGAIN", "EIO, ENOLINK"; empty if none.
uring_errnos() {
	grep "$URING_RES" "$1" | sed 's/.*: res=-[0-9]* \([A-Z0-9?]*\) (.*/\1/' | sort -u |
		tr '\n' ' ' | sed 's/ *$//; s/ /, /g'
}

# uring_failure FILE STATUS: how uring-io (output in FILE, exit status
# STATUS) failed, to follow "failed" in a FAIL: line: " with EAGAIN: 12
# failed IOs, the first: read at 8192 len 8192: res=-11 EAGAIN (Resource
# temporarily unavailable)" (several errnos: " with EAGAIN, EIO: ..."); with
# no failed IO, ": " and its last complaint (a data mismatch, a setup
# error), or its exit status.
uring_failure() {
	local errs last
	errs=$(uring_errnos "$1")
	if [ -n "$errs" ]; then
		echo " with $errs: $(grep -c "$URING_RES" "$1") failed IOs, the first:" \
			"$(grep "$URING_RES" "$1" | head -n 1 | sed 's/^uring-io: //')"
		return 0
	fi
	last=$(grep -v '^uring-io: dev=' "$1" | tail -n 1)
	echo ": ${last:-uring-io exited with status $2}"
}

# io_verify DEV ARGS...: uring-io's verify over /dev/DEV; prints its summary
# line and sets IOS and IRQS (NVMe interrupts meanwhile). A failure names
# the errnos the failed IOs ended with (uring_failure).
io_verify() {
	local dev=$1 before out rc
	shift
	before=$(nvme_irqs)
	out=$(uring_io -d "/dev/$dev" -o verify "$@" 2> /tmp/io_verify.err) || {
		rc=$?
		cat /tmp/io_verify.err >&2
		echo "$out"
		fail "IO on $dev failed$(uring_failure /tmp/io_verify.err $rc)"
	}
	cat /tmp/io_verify.err >&2
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
	nvme* | dm-*)
		[ "$IRQS" -lt $((IOS / 10)) ] ||
			fail "$1: $IOS polled IOs but $IRQS NVMe interrupts: not polled"
		log "$1: $IOS polled IOs, $IRQS NVMe interrupts"
		;;
	esac
}

# The block layer's debugfs (CONFIG_BLK_DEBUG_FS): a folder per request
# queue, named after its disk, with a folder per hardware queue (hctxN).
BLK_DEBUGFS=/sys/kernel/debug/block

# poll_hctxs DEV: the hardware queues of DEV of type "poll", one a line.
poll_hctxs() {
	local h
	for h in "$BLK_DEBUGFS/$1"/hctx*; do
		[ "$(cat "$h/type" 2> /dev/null)" != poll ] || echo "${h##*/}"
	done
	return 0
}

# poll_inflight DEV: the requests in flight on DEV's poll queues that carry
# REQ_POLLED, which only a poller completes, per queue: "hctx1: 2,
# hctx2: 1"; empty if none.
poll_inflight() {
	local h n out=""
	for h in $(poll_hctxs "$1"); do
		n=$(grep -c 'cmd_flags=[^,]*POLLED.*\.state=in_flight' "$BLK_DEBUGFS/$1/$h/busy") || true
		[ "${n:-0}" = 0 ] || out="$out, $h: $n"
	done
	echo "${out#, }"
}

# run_deadline SECS DEV CMD...: CMD, its output (stdout and stderr) in
# /tmp/deadline.out, killed (SIGKILL) once it has run for SECS seconds;
# returns its status, 137 if killed. Before the kill, DEADLINE_POLLED is
# set to what poll_inflight DEV finds, looked for up to 2 s (a request that
# timed out may just have left the queue before the next one came).
run_deadline() {
	local secs=$1 dev=$2 pid end i rc=0
	shift 2
	DEADLINE_POLLED=""
	"$@" > /tmp/deadline.out 2>&1 &
	pid=$!
	end=$(($(date +%s) + secs))
	# (a zombie passes kill -0)
	while grep -q '^State:.*[RSD]' "/proc/$pid/status" 2> /dev/null; do
		if [ "$(date +%s)" -gt $end ]; then
			for i in 1 2 3 4 5 6 7 8 9 10; do
				DEADLINE_POLLED=$(poll_inflight "$dev")
				[ -z "$DEADLINE_POLLED" ] || break
				sleep 0.2
			done
			kill -KILL "$pid" 2> /dev/null || true
			break
		fi
		sleep 0.5
	done
	wait "$pid" || rc=$?
	return $rc
}

# Background verified IO. worker_start NAME CPUS DEV OFFSET ARGS...:
# uring-io's verify over /dev/DEV from OFFSET (4 MiB unless ARGS say -r)
# until workers_stop, on CPUS (a taskset list, or "all"), its output in
# /tmp/NAME.out, its count of completed IOs in /tmp/NAME.progress (-P).
WORKERS="" WORKER_PIDS=""
worker_start() {
	local name=$1 cpus=$2 dev=$3 off=$4
	shift 4
	[ "$cpus" != all ] || cpus=0-$(cpus_all | tail -n 1)
	# the count file exists, 8 bytes, before the worker maps it: workers_ios
	# reads every worker's at once
	head -c 8 /dev/zero > "/tmp/$name.progress"
	eval "SEEN_$name=0"
	taskset -c "$cpus" uring-io -d "/dev/$dev" -o verify -O "$off" -r 4M -t 3600 \
		-P "/tmp/$name.progress" "$@" > "/tmp/$name.out" 2>&1 &
	WORKERS="$WORKERS $name"
	WORKER_PIDS="$WORKER_PIDS $!"
}

# pt_worker_start NAME CPUS CHR LBASIZE OFFSET ARGS...: worker_start for NVMe
# passthrough: nvme-pt's verify over /dev/CHR (an NVMe namespace's character
# device, LBASIZE-byte blocks) from byte OFFSET, 4 MiB unless ARGS say -r.
pt_worker_start() {
	local name=$1 cpus=$2 chr=$3 lba=$4 off=$5
	shift 5
	[ "$cpus" != all ] || cpus=0-$(cpus_all | tail -n 1)
	head -c 8 /dev/zero > "/tmp/$name.progress"
	eval "SEEN_$name=0"
	taskset -c "$cpus" nvme-pt -d "/dev/$chr" -L "$lba" -o verify -O "$off" -r 4M -t 3600 \
		-P "/tmp/$name.progress" "$@" > "/tmp/$name.out" 2>&1 &
	WORKERS="$WORKERS $name"
	WORKER_PIDS="$WORKER_PIDS $!"
}

# workers_ios: the IOs each worker completed so far, in the order of
# $WORKERS, one od for all (a fork per worker per hotplug cycle costs
# seconds under TCG).
workers_ios() {
	local n files=""
	for n in $WORKERS; do files="$files /tmp/$n.progress"; done
	# shellcheck disable=SC2086
	od -A n -t u8 -v $files
}

# workers_alive WHEN: every worker still runs, and each completed IO since
# the last call (or since it started): one that stopped, or whose IO
# stalled for 30 s (times biotest.slowness: 4 on the debug variants,
# whatever the length of the run), fails, named.
workers_alive() {
	local when=$1 p n now was tenths limit stalled
	for p in $WORKER_PIDS; do
		kill -0 "$p" 2> /dev/null && continue
		for n in $WORKERS; do tail -n 3 "/tmp/$n.out" | sed "s/^/$n: /"; done
		fail "a worker stopped $when"
	done
	WORKERS_LIMIT=${WORKERS_LIMIT:-$((300 * $(karg slowness 1)))}
	limit=$WORKERS_LIMIT
	tenths=0
	while :; do
		stalled=""
		# shellcheck disable=SC2046
		set -- "$when" $(workers_ios)
		for n in $WORKERS; do
			now=${2:-0}
			[ $# -lt 2 ] || shift
			eval "was=\${SEEN_$n:-0}"
			if [ "$now" -gt "$was" ]; then
				eval "SEEN_$n=$now"
			else
				stalled="$stalled $n"
			fi
		done
		[ -n "$stalled" ] || return 0
		if [ $tenths -ge "$limit" ]; then
			for n in $stalled; do tail -n 3 "/tmp/$n.out" | sed "s/^/$n: /"; done
			fail "worker(s)$stalled completed no IO $when for $((limit / 10))s"
		fi
		sleep 0.1
		tenths=$((tenths + 1))
	done
}

# workers_stop: interrupt the workers; each finishes its pass and prints
# its summary.
workers_stop() {
	[ -n "$WORKER_PIDS" ] || return 0
	# shellcheck disable=SC2086
	kill -INT $WORKER_PIDS 2> /dev/null || true
	# shellcheck disable=SC2086
	wait $WORKER_PIDS || true
	WORKER_PIDS=""
}

# workers_check: each stopped worker verified data and saw no IO error.
workers_check() {
	local n out v
	for n in $WORKERS; do
		out=$(tail -n 1 "/tmp/$n.out")
		log "$n: $out"
		[ "$(field errors "$out")" = 0 ] || { cat "/tmp/$n.out"; fail "$n: IO errors"; }
		v=$(field verified "$out")
		[ "${v:-0}" -gt 0 ] || fail "$n: no block verified"
	done
	WORKERS=""
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
# path frees when task + IRQ list exceed ALLOC_CACHE_MAX (256), checked
# before the push: a put in hard IRQ can land between a task put's check and
# its push, so the lists may reach 258 between them.
cache_check_bound() {
	local cpu nr
	for cpu in $(seq 0 $(($(grep -c ^processor /proc/cpuinfo) - 1))); do
		nr=$(($(cache_stat "$1" "$cpu" nr) + $(cache_stat "$1" "$cpu" nr_irq)))
		[ "$nr" -le 258 ] || fail "$1 cpu$cpu holds $nr bios, above the bound"
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

# cache_held BIOSET [CPU]: bios on the bio_set's lists, on CPU or all CPUs.
cache_held() {
	echo $(($(cache_stat "$1" "${2:-all}" nr) + $(cache_stat "$1" "${2:-all}" nr_irq)))
}

# cache_allocs BIOSET: allocations that asked the bio_set's cache, all CPUs
# (hits and misses).
cache_allocs() {
	echo $(($(cache_stat "$1" all alloc_hit) + $(cache_stat "$1" all alloc_miss)))
}

# cache_sets: the names of the bio_sets with a cache, one a line. A name is
# the bio_set's symbol (fs_bio_set, blkdev_dio_pool) or, for device-mapper,
# the mapped device's disk (dm-0); cache_stat sums the lines of one name.
cache_sets() {
	awk '$1 == "bio_set" { next } NF == 12 { print $1 }' "$CACHE_STATS" | sort -u
}

# cache_has BIOSET: the bio_set has a cache (cache_stat reads 0 otherwise).
cache_has() {
	cache_sets | grep -qxF "$1"
}

# hit_rate_ok HITS MISSES: more than 99% of the cached allocations hit.
hit_rate_ok() {
	[ $(($1 * 1000)) -gt $((($1 + $2) * 990)) ]
}

# bios_cached: bios on the lists of every bio_set, all CPUs.
bios_cached() {
	awk '$1 == "bio_set" { next } NF == 12 { s += $11 + $12 } END { print s + 0 }' "$CACHE_STATS"
}

# slab_inuse PATTERN: objects allocated from the slabs /sys/kernel/slab/
# PATTERN (slab_nomerge keeps them apart from other caches), after flushing
# the per-CPU slabs so that the count is exact.
slab_inuse() {
	local s n=0
	for s in /sys/kernel/slab/$1; do
		[ -d "$s" ] || fail "no slab $1 in /sys/kernel/slab (CONFIG_SLUB_DEBUG?)"
		echo 1 > "$s/shrink"
		n=$((n + $(cut -d' ' -f1 "$s/objects")))
	done
	echo "$n"
}

# bio_slab_inuse: bio objects allocated from the bio slabs (bio-*: the bio
# and the bio_set's front pad).
bio_slab_inuse() {
	slab_inuse 'bio-*'
}

# bios_outside_cache: "bios=N biovecs=M": bio objects allocated and not on a
# cache's list (the mempools' reserves and bios in flight), and bio_vec
# arrays allocated from the biovec-* slabs (the same reserves' and those of
# bios in flight: a cached bio's vectors are inline). With no IO in flight,
# a change between two calls is a leak (or a double free); the biovecs catch
# a bio freed without its vectors, which the bio slabs do not (a bio from a
# bio_set freed by kfree(): the 2023 passthrough leak, 46930b7cc772). With
# integrity profiles (CONFIG_BLK_DEV_INTEGRITY), also "bips=K": integrity
# payloads from the bio_sets' pools (fs_bio_set's, for passthrough commands
# with metadata), which a bio parked in the cache must no longer hold.
#
# The figure is a difference of counters read one after the other, so it is
# only a count when no bio is allocated or freed meanwhile: a bio taken from
# a cache between the slab count and the cache count, or one in flight
# during the slab count, shows up as a bio outside the caches. A caller
# makes sure its own IO is done (and that no file system is mounted: ext4's
# lazyinit thread reads block bitmaps up to 5 s after a mount); the kernel's
# own background IO is ruled out by reading the figure twice, with the
# caches' statistics unchanged across both readings, and trying again a
# second later if not (10 tries). A leak or a double free gives the same
# figure twice; IO that never stops fails with both readings.
bios_outside_cache_once() {
	local bips=""
	[ ! -d /sys/kernel/slab/bio_integrity_payload ] ||
		bips=" bips=$(slab_inuse bio_integrity_payload)"
	echo "bios=$(($(bio_slab_inuse) - $(bios_cached))) biovecs=$(slab_inuse 'biovec-*')$bips"
}

bios_outside_cache() {
	local try s0 s1 r1 r2
	for try in 1 2 3 4 5 6 7 8 9 10; do
		s0=$(cat "$CACHE_STATS")
		r1=$(bios_outside_cache_once)
		r2=$(bios_outside_cache_once)
		s1=$(cat "$CACHE_STATS")
		if [ "$r1" = "$r2" ] && [ "$s0" = "$s1" ]; then
			echo "$r1"
			return 0
		fi
		sleep 1
	done
	fail "bios outside the caches: no two readings agree in $try tries, IO in flight ('$r1', then '$r2')"
}

# expect_bios_outside_cache WHAT BEFORE: the figure above, read now, is
# BEFORE. A reading that never settles fails the test with both readings
# (its own FAIL: line), never reads as a figure.
expect_bios_outside_cache() {
	local now
	now=$(bios_outside_cache) || exit 1
	expect_eq "$1" "$now" "$2"
}

# karg NAME DEFAULT: biotest.NAME=value from the kernel command line.
karg() {
	local v
	v=$(tr ' ' '\n' < /proc/cmdline | sed -n "s/^biotest\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}

# scaled N: N divided by biotest.slowness (4 on the debug variants), at
# least 1: how much bulk work a test does on a slow kernel.
scaled() {
	local n
	n=$(($1 / $(karg slowness 1)))
	[ "$n" -ge 1 ] || n=1
	echo "$n"
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

# Device-mapper, through Debian's dmsetup, without udev: libdevmapper makes
# /dev/mapper/NAME itself; the tests use /dev/dm-N, which devtmpfs makes.
export DM_DISABLE_UDEV=1
DMS=""

# dms ARGS...: dmsetup ARGS, without the notice libdevmapper prints on every
# command when the kernel has no SysV semaphores (for udev synchronisation,
# which the tests do not use).
dms() {
	local rc=0
	dmsetup --noudevsync "$@" 2> /tmp/dms.err || rc=$?
	grep -v 'Kernel not configured for semaphores' /tmp/dms.err >&2 || true
	return $rc
}

# dm_name_dev NAME: the disk of dm device NAME (dm-N), empty if none.
dm_name_dev() {
	local d
	for d in /sys/block/dm-*; do
		[ -f "$d/dm/name" ] && [ "$(cat "$d/dm/name")" = "$1" ] && echo "${d##*/}"
	done
	return 0
}

# dm_load NAME TABLE: load TABLE (one target a line) as NAME's inactive
# table, with a new bio_set, replacing the inactive table if there is one.
dm_load() {
	printf '%s\n' "$2" | dms reload "$1" || fail "dmsetup reload $1 failed"
}

# dm_swap NAME TABLE: load TABLE, then resume, which suspends NAME, swaps the
# table in (freeing the old table's bio_sets, and with them any bios cached
# there) and resumes.
dm_swap() {
	dm_load "$1" "$2"
	dms resume "$1" || fail "dmsetup resume $1 failed"
}

# dm_create NAME TABLE: a dm device whose bio_set has the per-CPU cache
# (unless bio_alloc_cache=off), as /dev/$DM_DEV. A bio-based table's
# bio_set (io_bs) has the cache if every device below can poll, from its
# first table on (patch 11: 6.12 as released gives the first table none).
dm_create() {
	printf '%s\n' "$2" | dms create "$1" || fail "dmsetup create $1 failed"
	DMS="$DMS $1"
	DM_DEV=$(dm_name_dev "$1")
	[ -n "$DM_DEV" ] && [ -b "/dev/$DM_DEV" ] || fail "dm device $1: no /dev/dm-N"
	[ "$(cache_info enabled)" = 0 ] || cache_has "$DM_DEV" ||
		fail "$1 ($DM_DEV): the first table's bio_set has no cache"
	log "dm $1: $DM_DEV, $(echo "$2" | tr '\n' ';')" \
		"(io_poll=$(cat "/sys/block/$DM_DEV/queue/io_poll"))"
}

# dm_fill_cpus DEV: leave bios cached in DEV's bio_set on every CPU, on both
# lists: polled reads on each CPU, 32 at a time (their bios go back to the
# task list), then 8 reads completed by the device's interrupt (on a
# null_blk with irqmode=2, in hard IRQ: onto the IRQ list, too few to be
# spliced back). Checks that every CPU holds bios on both lists; logs them.
dm_fill_cpus() {
	local c l held=""
	for c in $(cpus_all); do
		taskset -c "$c" uring-io -d "/dev/$1" -o read -p -q 32 -c 32 -n 256 > /dev/null ||
			fail "polled reads on $1, cpu$c, failed"
		taskset -c "$c" uring-io -d "/dev/$1" -o read -q 4 -n 8 > /dev/null ||
			fail "reads on $1, cpu$c, failed"
	done
	for c in $(cpus_all); do
		for l in nr nr_irq; do
			[ "$(cache_stat "$1" "$c" $l)" -gt 0 ] ||
				fail "$1: cpu$c's $l is 0 after polled and interrupt-completed reads there"
		done
		held="$held cpu$c=$(cache_stat "$1" "$c" nr)+$(cache_stat "$1" "$c" nr_irq)"
	done
	log "$1 holds (task+IRQ list):$held"
}

dm_cleanup() {
	local n
	for n in $DMS; do
		dms info "$n" > /dev/null 2>&1 || continue
		dms remove "$n" || dms remove --force "$n" || true
	done
	return 0
}

# nvme_find SERIAL NSID: sets NVME_BLK (nvmeXnY) and NVME_CHR (ngXnY), the
# block and passthrough character devices of namespace NSID of the NVMe
# controller with that serial (scripts/run-guest.sh: biocache0, biocache1).
# The guest probes controllers and scans namespaces asynchronously, so
# nvmeX need not be the Xth controller; this waits for them.
nvme_find() {
	local i d
	NVME_BLK=""
	for i in $(seq 100); do
		for d in /sys/block/nvme*n*; do
			[ -f "$d/nsid" ] && [ -f "$d/device/serial" ] || continue
			[ "$(cat "$d/nsid")" = "$2" ] || continue
			[ "$(tr -d ' ' < "$d/device/serial")" = "$1" ] || continue
			NVME_BLK=${d##*/}
		done
		[ -n "$NVME_BLK" ] && [ -b "/dev/$NVME_BLK" ] && break
		sleep 0.2
	done
	[ -n "$NVME_BLK" ] ||
		fail "no namespace $2 on an NVMe controller with serial $1" \
			"(scripts/run-guest.sh attaches biocache0 and biocache1, only biocache0 with NVME=null)"
	[ -b "/dev/$NVME_BLK" ] || fail "no /dev/$NVME_BLK"
	NVME_CHR=ng${NVME_BLK#nvme}
	[ -e "/sys/class/nvme-generic/$NVME_CHR" ] && [ -c "/dev/$NVME_CHR" ] ||
		fail "$NVME_BLK has no passthrough character device /dev/$NVME_CHR"
}

# nvme_find_head SERIAL NSID PATHS: like nvme_find, for a namespace shared by
# the controllers of one NVMe subsystem: sets NVME_BLK to its multipath head
# (nvmeXnY, whose device is the subsystem), NVME_CHR to the head's character
# device and NVME_PATHS to its paths (nvmeXcZnY, hidden disks without a
# device node, one per controller Z), once it has PATHS of them.
nvme_find_head() {
	local i d n x y
	NVME_BLK=""
	for i in $(seq 100); do
		for d in /sys/block/nvme*n*; do
			case ${d##*/} in *c*) continue ;; esac
			[ -f "$d/device/subsysnqn" ] && [ -f "$d/nsid" ] || continue
			[ "$(cat "$d/nsid")" = "$2" ] || continue
			[ "$(tr -d ' ' < "$d/device/serial")" = "$1" ] || continue
			x=${d##*/nvme} y=${x#*n} x=${x%n*}
			NVME_PATHS=$(cd /sys/block && ls -d "nvme${x}c"*"n$y" 2> /dev/null)
			n=$(echo "$NVME_PATHS" | grep -c .)
			[ "$n" = "$3" ] && [ -b "/dev/${d##*/}" ] && NVME_BLK=${d##*/}
		done
		[ -n "$NVME_BLK" ] && break
		sleep 0.2
	done
	[ -n "$NVME_BLK" ] ||
		fail "no multipath head of namespace $2 with $3 paths on the NVMe subsystem of serial $1" \
			"(scripts/run-guest.sh attaches two controllers biocachemp of one subsystem;" \
			"CONFIG_NVME_MULTIPATH?)"
	NVME_CHR=ng${NVME_BLK#nvme}
	[ -c "/dev/$NVME_CHR" ] || fail "the head $NVME_BLK has no character device /dev/$NVME_CHR"
}

# pt_shape CHR LBASIZE WANT ARGS...: nvme-pt's verified IO of 256 KiB on
# /dev/CHR, polled, with the buffers ARGS shape; WANT is "all" (every command
# took a bio from fs_bio_set's cache) or "none" (none did).
pt_shape() {
	local chr=$1 lba=$2 want=$3 a0 out ios got
	shift 3
	a0=$(cache_allocs $FS_BIOSET)
	out=$(nvme-pt -d "/dev/$chr" -L "$lba" -o verify -q 4 -r 256k -p "$@") ||
		{ echo "$out"; fail "verified passthrough IO ($*) on $chr failed"; }
	ios=$(field ios "$out")
	got=$(($(cache_allocs $FS_BIOSET) - a0))
	log "$*: $ios commands, $got cached allocations"
	case $want in
	all) expect_eq "cached allocations for $ios commands ($*)" "$got" "$ios" ;;
	none) expect_eq "cached allocations for $ios commands ($*)" "$got" 0 ;;
	*) fail "pt_shape: want all or none, not $want" ;;
	esac
}

# pt_reads_counted CPU CHR LBASIZE N WHAT ARGS...: N passthrough reads (of 4
# KiB unless ARGS say -b) on /dev/CHR at queue depth 1 on CPU (nvme-pt -o
# read ARGS), after 100 to warm the cache: exactly N bios from fs_bio_set's
# cache, more than 99% of them hits, N put back on its task list (task_work
# frees them, however the command completed), none on its IRQ list, none
# from the direct-IO bio_set; polled (ARGS hold -p), fewer NVMe interrupts
# than N/10, else at least N/2. WHAT names them.
pt_reads_counted() {
	local cpu=$1 chr=$2 lba=$3 n=$4 what=$5 snap dio irq0 irqs out polled=""
	shift 5
	case " $* " in *" -p "*) polled=1 ;; esac
	taskset -c "$cpu" nvme-pt -d "/dev/$chr" -L "$lba" -o read -b 4k -q 1 -n 100 "$@" \
		> /dev/null || fail "$what: the warm-up failed"
	snap=$(cache_snap $FS_BIOSET)
	dio=$(cache_allocs $DIO_BIOSET)
	irq0=$(nvme_irqs)
	out=$(taskset -c "$cpu" nvme-pt -d "/dev/$chr" -L "$lba" -o read -b 4k -q 1 -n "$n" "$@") ||
		{ echo "$out"; fail "$what failed"; }
	irqs=$(($(nvme_irqs) - irq0))
	cache_delta $FS_BIOSET "$snap"
	log "$what: $irqs NVMe interrupts"
	expect_eq "$FS_BIOSET cached allocations for $what" "$D_allocs" "$n"
	hit_rate_ok "$D_alloc_hit" "$D_alloc_miss" ||
		fail "$FS_BIOSET: hit rate $D_alloc_hit/$D_allocs for $what is not above 99%"
	expect_eq "$FS_BIOSET task puts for $what" "$D_put_task" "$n"
	expect_eq "$FS_BIOSET IRQ puts for $what" "$D_put_irq" 0
	expect_eq "$DIO_BIOSET allocations for $what" $(($(cache_allocs $DIO_BIOSET) - dio)) 0
	if [ -n "$polled" ]; then
		[ "$irqs" -lt $((n / 10)) ] || fail "$what: $irqs NVMe interrupts: not polled"
	else
		[ "$irqs" -ge $((n / 2)) ] || fail "$what: only $irqs NVMe interrupts"
	fi
}

# nvme_keeps_writes DEV: what is written to NVMe namespace DEV reads back
# (it does not with NVME=null, whose backend drops writes).
nvme_keeps_writes() {
	uring-io -d "/dev/$1" -o verify -b 4k -B 4k -q 1 -r 64k > /dev/null ||
		fail "$1 does not read back what was written: its backend drops writes (NVME=null?)"
}

# NVMe passthrough (io_uring IORING_OP_URING_CMD on /dev/ngXnY) allocates
# its bios from fs_bio_set.
FS_BIOSET=fs_bio_set

# fio_report WHAT OUT: fio's report OUT says no error (fio 3.33 may exit 0
# after some); sets FIO_READS and FIO_WRITES, the IOs it issued.
fio_report() {
	local rw
	echo "$2" | grep -q 'err= 0:' || { echo "$2"; fail "$1 reported an error"; }
	rw=$(echo "$2" | sed -n 's/.*issued rwts: total=\([0-9]*\),\([0-9]*\),.*/\1 \2/p')
	[ -n "$rw" ] || { echo "$2"; fail "no 'issued rwts' in the report of $1"; }
	FIO_READS=${rw% *}
	FIO_WRITES=${rw#* }
}

# fio_pt CHR ARGS...: fio 3.33's io_uring_cmd engine on /dev/CHR: random
# 4 KiB writes over 8 MiB, then every block read back and checked (crc32c);
# ARGS add or override options (--size=, --hipri=1, --fixedbufs=1). Prints fio's
# summary; sets FIO_READS and FIO_WRITES (commands issued) and IRQS (NVMe
# interrupts meanwhile).
fio_pt() {
	local chr=$1 out irq0
	shift
	irq0=$(nvme_irqs)
	log "fio io_uring_cmd on $chr $*"
	out=$(fio --name=pt --filename="/dev/$chr" --ioengine=io_uring_cmd --cmd_type=nvme \
		--rw=randwrite --bs=4k --iodepth=16 --size=8M --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --disk_util=0 "$@" 2>&1) || {
		echo "$out"
		case $out in
		*shm*) fail "fio cannot allocate its job area: it needs SysV shared memory (CONFIG_SYSVIPC)" ;;
		esac
		fail "fio on $chr failed"
	}
	IRQS=$(($(nvme_irqs) - irq0))
	echo "$out" | grep -E 'err=|issued rwts|IOPS'
	fio_report "fio on $chr" "$out"
	[ "$FIO_WRITES" -gt 0 ] && [ "$FIO_READS" = "$FIO_WRITES" ] ||
		fail "fio wrote $FIO_WRITES blocks and read back $FIO_READS"
}

# cache_rule: which bios the cache serves, bio_alloc_cache= ("flagged":
# those whose submitter passes REQ_ALLOC_CACHE, 6.12's rule; "all": every
# bio a bio_set with a cache hands out with at most 4 vecs, 6.19's rule).
cache_rule() {
	cache_info rule
}

# cache_snap BIOSET: prints its counters summed over CPUs, in the order of
# CACHE_FIELDS, for cache_delta.
CACHE_FIELDS="alloc_hit alloc_miss put_task put_irq free_full free_other splices"
cache_snap() {
	local f
	for f in $CACHE_FIELDS; do printf '%s ' "$(cache_stat "$1" all "$f")"; done
}

# cache_delta BIOSET SNAP: sets D_<field> to each counter's growth since
# cache_snap printed SNAP, D_allocs to the cached allocations (hits and
# misses) and D_puts to the puts of any kind (onto a list, or freed), and
# logs them.
cache_delta() {
	local f v
	set -- "$1" $2
	local b=$1
	shift
	for f in $CACHE_FIELDS; do
		v=$(($(cache_stat "$b" all "$f") - $1))
		eval "D_$f=$v"
		shift
	done
	D_allocs=$((D_alloc_hit + D_alloc_miss))
	D_puts=$((D_put_task + D_put_irq + D_free_full + D_free_other))
	log "$b: hits $D_alloc_hit, misses $D_alloc_miss, task puts $D_put_task," \
		"IRQ puts $D_put_irq, freed full $D_free_full, freed other $D_free_other," \
		"splices $D_splices"
}

# fio_fs DIR NAME ARGS...: fio's verified IO on files in DIR (4 KiB random
# writes over 4 MiB, then every block read back and checked); ARGS choose
# the engine and mode. Prints fio's summary; sets FIO_IOS (IOs issued).
fio_fs() {
	local dir=$1 name=$2 out
	shift 2
	out=$(fio --name="$name" --directory="$dir" --rw=randwrite --bs=4k --size=4M \
		--iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--disk_util=0 "$@" 2>&1) || { echo "$out"; fail "fio $name in $dir failed"; }
	fio_report "fio $name" "$out"
	FIO_IOS=$((FIO_READS + FIO_WRITES))
	log "fio $name $*: $FIO_IOS IOs, verified"
}

# ext4_mkfs DEV: a new ext4 on /dev/DEV, initialised now rather than by
# ext4lazyinit behind the tests' back.
ext4_mkfs() {
	/usr/sbin/mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 "/dev/$1" ||
		fail "mke2fs on $1 failed"
}

# ext4_check DEV: e2fsck -fn finds nothing to fix.
ext4_check() {
	local out
	out=$(/usr/sbin/e2fsck -fn "/dev/$1" 2>&1) || { echo "$out"; fail "e2fsck -fn /dev/$1 found errors"; }
	log "e2fsck -fn /dev/$1: clean"
}

# ext4_compare DEV SUMS: mounted again, the files on /dev/DEV match the
# checksums in SUMS (md5sum's format, paths relative to the mount point).
ext4_compare() {
	local mnt=/mnt/$1
	mount -t ext4 "/dev/$1" "$mnt" || fail "cannot mount /dev/$1 again"
	(cd "$mnt" && md5sum -c "$2") > /dev/null || fail "files on $1 differ from $2"
	umount "$mnt" || fail "cannot unmount $mnt"
}

# The file writer, a stream of metadata-heavy IO: fwriter_start DIR writes
# one 4 KiB file of its own content at a time in DIR with fsync (a journal
# commit each), in the background, over 1024 names in turn (4 MiB: a soak
# rewrites them rather than fill the file system), noting each write's
# checksum in /tmp/fw.md5; fwriter_alive WHEN waits for it to have written
# since the last call, failing if it stopped or wrote nothing for 30 s
# (times biotest.slowness); fwriter_stop stops it, failing if it
# failed, sets FWRITER_FILES to the writes and leaves each file's last
# checksum in /tmp/fw.md5.last (md5sum's format, paths relative to DIR).
FWRITER="" FWRITER_SEEN=0
fwriter_start() {
	rm -f /tmp/fw.stop /tmp/fw.err /tmp/fw.md5 /tmp/fw.md5.last /tmp/fw.n
	(
		i=0
		while [ ! -e /tmp/fw.stop ]; do
			i=$((i + 1))
			# (not /dev/urandom, which blocks until the guest's CRNG is ready)
			f=f$((i % 1024))
			yes "f$i $RANDOM $RANDOM" | head -c 4096 > /tmp/fw.blk
			dd if=/tmp/fw.blk of="$1/$f" bs=4k conv=fsync 2> /tmp/fw.dd ||
				{ { echo "write $i ($f) failed:"; cat /tmp/fw.dd; } > /tmp/fw.err; exit 1; }
			echo "$(md5sum < /tmp/fw.blk | cut -d' ' -f1)  $f" >> /tmp/fw.md5
			# through a rename: a reader never sees the file empty
			echo $i > /tmp/fw.n.new && mv /tmp/fw.n.new /tmp/fw.n
		done
	) &
	FWRITER=$! FWRITER_SEEN=0
}

fwriter_alive() {
	local n tenths=0 limit=$((300 * $(karg slowness 1)))
	while :; do
		# a zombie passes kill -0
		if [ -s /tmp/fw.err ] || ! grep -q '^State:.*[RSD]' "/proc/$FWRITER/status" 2> /dev/null; then
			cat /tmp/fw.err 2> /dev/null || true
			fail "the file writer stopped $1"
		fi
		n=$(cat /tmp/fw.n 2> /dev/null || echo 0)
		[ "$n" -le "$FWRITER_SEEN" ] || break
		[ $tenths -lt $limit ] ||
			fail "the file writer wrote no file $1 for $((limit / 10))s ($n files)"
		sleep 0.1
		tenths=$((tenths + 1))
	done
	FWRITER_SEEN=$n
}

fwriter_stop() {
	touch /tmp/fw.stop
	wait "$FWRITER" || { cat /tmp/fw.err 2> /dev/null; fail "the file writer failed"; }
	FWRITER=""
	FWRITER_FILES=$(wc -l < /tmp/fw.md5)
	awk '{ last[$2] = $0 } END { for (f in last) print last[f] }' /tmp/fw.md5 > /tmp/fw.md5.last
}

# ext4_workload DEV: ext4 on /dev/DEV under what the cache's new users do:
# buffered 4 KiB writes with fsync after each (the journal commits through
# jbd2 and buffer heads), O_DIRECT through io_uring without IOPOLL, psync
# and libaio; every file checksummed, then compared after a remount;
# e2fsck -fn clean. The mount point is /mnt/DEV.
ext4_workload() {
	local dev=$1 mnt=/mnt/$1
	ext4_mkfs "$dev"
	mkdir -p "$mnt"
	mount -t ext4 "/dev/$dev" "$mnt" || fail "cannot mount /dev/$dev"
	fio_fs "$mnt" buffered --ioengine=psync --fsync=1
	fio_fs "$mnt" uring --ioengine=io_uring --direct=1
	fio_fs "$mnt" psync --ioengine=psync --direct=1
	fio_fs "$mnt" libaio --ioengine=libaio --direct=1
	sync
	(cd "$mnt" && md5sum ./*.0.0) > /tmp/ext4-$dev.md5 || fail "cannot checksum the files"
	umount "$mnt" || fail "cannot unmount $mnt"
	ext4_check "$dev"
	ext4_compare "$dev" "/tmp/ext4-$dev.md5"
	log "ext4 on $dev: $(wc -l < /tmp/ext4-$dev.md5) files identical after a remount"
}

# ext4_full DEV: after ext4_workload, fill the file system on /dev/DEV:
# the write that does not fit fails with ENOSPC, and once the filler is
# gone the files of ext4_workload read back as written, after a remount,
# and e2fsck -fn is clean.
ext4_full() {
	local dev=$1 mnt=/mnt/$1 err
	mount -t ext4 "/dev/$dev" "$mnt" || fail "cannot mount /dev/$dev"
	err=$(dd if=/dev/zero of="$mnt/fill" bs=1M 2>&1) && fail "filling $dev did not fail"
	case $err in
	*"No space left on device"*) ;;
	*) echo "$err"; fail "filling $dev failed, but not with ENOSPC" ;;
	esac
	rm "$mnt/fill"
	umount "$mnt" || fail "cannot unmount $mnt"
	ext4_check "$dev"
	ext4_compare "$dev" "/tmp/ext4-$dev.md5"
	log "ext4 on $dev: full (ENOSPC), then clean, and the files intact"
}
