# SPDX-License-Identifier: GPL-2.0
# Device-mapper's device-less "error" target. It has no device below that
# could refuse to poll, so its table's bio_set gets the per-CPU cache (patch
# 11 asks the table; 6.12 as released asked the queue), and dm completes
# every clone with EIO in the submitter's context, before any device sees it.
# Its io_poll is 1.
#  - n polled reads: n EIOs to userspace, n cached allocations from dm's
#    bio_set and n from the direct-IO bio_set, each put back on the task
#    list (dm ends the clone in the submitting task); reads that are not
#    polled the same (io_uring asks for the cache either way).
#  - an "error" <-> "linear" table swap under IO: a polled and an
#    interrupt-driven read stream, told that EIO may happen, while the
#    table goes to "error" and back 4 times: both streams saw EIOs and
#    successful reads, no other error, and each made progress across every
#    swap; then polled IO on the linear table verifies. EOPNOTSUPP is
#    allowed too: the error target does not take REQ_NOWAIT bios (no
#    DM_TARGET_NOWAIT), so a read io_uring issued non-blocking while the
#    linear table was live and that reaches dm after the swap fails in
#    submit_bio_noacct(). (Not a verify stream, which writes a failed block
#    again with pwrite(): a swap deadlocks on it, dm's suspend waiting for
#    the stream's polled bios, which only the stream can complete by
#    polling, while the stream waits in pwrite() for the resume.)
# Every bio_set involved balances. Removing the device frees its bio_set:
# its line goes.
. /tests/lib.sh

EIO=5
EOPNOTSUPP=95
cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"

nullb_create_polled pe size=16
sz=$(blockdev --getsz /dev/pe)
terr="0 $sz error"
tlin="0 $sz linear /dev/pe 0"

dm_create bcerr "$terr"
dev=$DM_DEV
expect_eq "$dev io_poll" "$(cat /sys/block/$dev/queue/io_poll)" 1

# eio_reads N ARGS...: N reads with ARGS, every one failing with EIO; sets
# DM_A/DM_P and DIO_A/DIO_P to the cached allocations and task puts of dm's
# and the direct-IO bio_set they made.
eio_reads() {
	local n=$1 out da dp ia ip
	shift
	da=$(cache_allocs "$dev") dp=$(cache_stat "$dev" all put_task)
	ia=$(cache_allocs $DIO_BIOSET) ip=$(cache_stat $DIO_BIOSET all put_task)
	out=$(taskset -c $cpu uring-io -d "/dev/$dev" -o read -q 8 -n "$n" -e $EIO "$@") ||
		fail "reads on the error target did not all fail with EIO: $out"
	expect_eq "EIOs for $n reads ($*)" "$(field expected_errors "$out")" "$n"
	DM_A=$(($(cache_allocs "$dev") - da)) DM_P=$(($(cache_stat "$dev" all put_task) - dp))
	DIO_A=$(($(cache_allocs $DIO_BIOSET) - ia)) DIO_P=$(($(cache_stat $DIO_BIOSET all put_task) - ip))
}

n=$(scaled 2000)
eio_reads "$n" -p
log "$n polled reads on $dev: $n EIOs; $dev: $DM_A cached allocations, $DM_P task puts;" \
	"$DIO_BIOSET: $DIO_A, $DIO_P"
expect_eq "$dev cached allocations for $n polled reads" "$DM_A" "$n"
expect_eq "$dev task puts for $n polled reads" "$DM_P" "$n"
expect_eq "$DIO_BIOSET cached allocations for $n polled reads" "$DIO_A" "$n"
expect_eq "$DIO_BIOSET task puts for $n polled reads" "$DIO_P" "$n"

# io_uring asks for the cache whether it polls or not (since 6.2's
# 12e4e8c7ab59), so these are cached under either rule.
m=64
eio_reads $m
log "$m reads, not polled, on $dev: $m EIOs; $dev: $DM_A cached allocations, $DM_P task puts;" \
	"$DIO_BIOSET: $DIO_A"
expect_eq "$dev cached allocations for $m reads, not polled" "$DM_A" "$m"
expect_eq "$dev task puts for $m reads, not polled" "$DM_P" "$m"
expect_eq "$DIO_BIOSET cached allocations for $m reads, not polled" "$DIO_A" "$m"
cache_check_balance "$dev"

# error <-> linear under IO
dm_swap bcerr "$tlin"
cache_has "$dev" || fail "$dev: the linear table's bio_set has no cache"
worker_start ep $cpu "$dev" 0 -o read -b 4k -p -q 8 -E $EIO -E $EOPNOTSUPP
worker_start ei all "$dev" 4M -o read -b 4k -q 8 -E $EIO -E $EOPNOTSUPP
sleep 1
workers_alive "on the linear table"
for s in 1 2 3 4; do
	dm_swap bcerr "$terr"
	log "swap $s: error table live"
	sleep 0.5
	dm_swap bcerr "$tlin"
	log "swap $s: linear table live"
	workers_alive "after swap $s to error and back"
done
workers_stop
for w in ep ei; do
	out=$(tail -n 1 /tmp/$w.out)
	log "$w: $out"
	[ "$(field errors "$out")" = 0 ] || { cat /tmp/$w.out; fail "$w: IO errors other than EIO and EOPNOTSUPP"; }
	[ "$(field expected_errors "$out")" -gt 0 ] || fail "$w: no EIO in 4 swaps to the error target"
	[ "$(field expected_errors "$out")" -lt "$(field ios "$out")" ] || fail "$w: every read failed"
done
WORKERS=""
polled_verify "$dev" -b 512 -B 16k -q 8 -r 4M
cache_check_balance "$dev"

dms remove bcerr || fail "dmsetup remove bcerr failed"
cache_has "$dev" && fail "$dev's bio_set is still listed after removal"
cache_check_balance $DIO_BIOSET
