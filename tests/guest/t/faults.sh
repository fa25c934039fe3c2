# SPDX-License-Identifier: GPL-2.0
# Fault injection, each phase asserting that faults were injected in it and
# accounting for each:
#  - fail_make_request on a polled null_blk, and on the null_blk below a
#    dm-linear (polled through dm): every injected fault reaches userspace
#    as exactly one EIO, every other read verifies;
#  - failslab on the bio and biovec slabs under softirq-completed IO of up to
#    64 KiB (every bio and bvec array from the slabs): the mempools cover
#    the failed allocations and IO verifies;
#  - the mempool reserve path, for each user of the cache: with CPU 1's
#    lists drained (offline, online) and the first K allocations from the
#    bio slabs failing, polled reads on CPU 1 directly, through dm-linear and
#    through NVMe passthrough: exactly K faults; each failed allocation is
#    a bio from its bio_set's reserve, which the cache must not take
#    (759aa12f1915): reserve_refused grows, and the bio_sets involved put
#    back exactly their cached allocations less the refused bios (a
#    refused bio goes back to the mempool, uncounted by the cache).
# Afterwards the caches balance, serve polled reads again, and the bio
# slabs hold what they held before.
# boot: stress
# timeout: 300
. /tests/lib.sh

EIO=5
cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"

nullb_create_polled fmr
nullb_create_polled fdm
# softirq completions (see stress.sh): its bios are freed, not cached
nullb_create fsq queue_mode=2 submit_queues=1 poll_queues=0 memory_backed=1 \
	size=64 blocksize=512 irqmode=1
before=$(bios_outside_cache)
dm_create bcfault "0 $(blockdev --getsz /dev/fdm) linear /dev/fdm 0"
dm=$DM_DEV
nvme_find biocache0 1
chr=$NVME_CHR
lba=$(cat /sys/block/$NVME_BLK/queue/logical_block_size)

# make_request_faults DISK DEV ARGS...: 10% of the bios to DISK fail at
# submission while uring-io verifies DEV with ARGS: one EIO each.
make_request_faults() {
	local disk=$1 dev=$2 times=1000 out injected
	shift 2
	fault_setup fail_make_request 10 $times
	echo 1 > "/sys/block/$disk/make-it-fail"
	out=$(uring-io -d "/dev/$dev" -o verify -q 8 -r 4M -E $EIO "$@") ||
		{ echo "$out"; fail "IO on $dev under fail_make_request on $disk"; }
	echo 0 > "/sys/block/$disk/make-it-fail"
	fault_off fail_make_request
	echo "$out"
	injected=$(fault_injected fail_make_request $times)
	[ "$injected" -gt 0 ] || fail "fail_make_request on $disk injected nothing"
	expect_eq "EIOs on $dev for $injected faults injected into $disk" \
		"$(field expected_errors "$out")" "$injected"
	[ "$(field verified "$out")" -gt 0 ] || fail "nothing verified on $dev"
}

make_request_faults fmr fmr -p
polled_verify fmr -q 8 -r 4M
make_request_faults fdm "$dm" -p
polled_verify "$dm" -q 8 -r 4M

# failslab_on PROBABILITY TIMES: fail allocations from the bio and biovec
# slabs (only those), waiting ones too.
SLABS="/sys/kernel/slab/bio-* /sys/kernel/slab/biovec-*"
failslab_on() {
	local s
	echo N > /sys/kernel/debug/failslab/ignore-gfp-wait
	echo Y > /sys/kernel/debug/failslab/cache-filter
	for s in $SLABS; do echo 1 > "$s/failslab"; done
	fault_setup failslab "$1" "$2"
}
failslab_off() {
	local s
	fault_off failslab
	for s in $SLABS; do echo 0 > "$s/failslab"; done
}

# failslab, 20% of the allocations: softirq completions free their bios,
# so every allocation on fsq goes to the slabs.
times=500
failslab_on 20 $times
out=$(uring-io -d /dev/fsq -o verify -B 64k -q 8 -r 4M) || { echo "$out"; fail "IO on fsq under failslab"; }
failslab_off
echo "$out"
injected=$(fault_injected failslab $times)
[ "$injected" -gt 0 ] || fail "failslab injected nothing under softirq-completed IO"
log "failslab: $injected bio and bvec allocations failed under softirq-completed IO, IO verified"

# reserve_phase K "BIOSETS" WHAT CMD...: CPU 1's lists drained, the first K
# allocations from the bio slabs fail while CMD runs on CPU 1: K faults,
# bios refused to the cache, and BIOSETS put back exactly their cached
# allocations less the refused.
reserve_phase() {
	local k=$1 sets=$2 what=$3 b allocs=0 puts=0 r0 refused injected
	shift 3
	cpus_cycle $cpu
	for b in $sets; do
		eval "snap_${b//-/_}=\"$(cache_snap "$b")\""
	done
	r0=$(cache_info reserve_refused)
	failslab_on 100 "$k"
	taskset -c $cpu "$@" > /tmp/reserve.out 2>&1 || { cat /tmp/reserve.out; fail "$what under failslab"; }
	failslab_off
	injected=$(fault_injected failslab "$k")
	refused=$(($(cache_info reserve_refused) - r0))
	for b in $sets; do
		eval "cache_delta $b \"\$snap_${b//-/_}\""
		allocs=$((allocs + D_allocs))
		puts=$((puts + D_puts))
	done
	log "$what: $injected faults, $refused bios refused to the cache," \
		"$allocs cached allocations, $puts puts"
	expect_eq "$what: bio allocations failed" "$injected" "$k"
	[ "$refused" -gt 0 ] || fail "$what: no bio refused to the cache for $k failed allocations"
	expect_eq "$what: puts to the cache ($allocs allocations, $refused refused)" \
		"$puts" $((allocs - refused))
}

reserve_phase 4 "$DIO_BIOSET" "polled reads on fmr" \
	uring-io -d /dev/fmr -o read -p -q 8 -n 256
reserve_phase 4 "$DIO_BIOSET $dm" "polled reads through $dm" \
	uring-io -d "/dev/$dm" -o read -p -q 8 -n 256
# fs_bio_set's reserve is 2 bios (BIO_POOL_SIZE)
reserve_phase 2 fs_bio_set "polled passthrough reads on $chr" \
	nvme-pt -d "/dev/$chr" -L "$lba" -o read -b 4k -p -q 8 -n 256

for b in $DIO_BIOSET "$dm" fs_bio_set; do cache_check_balance "$b"; done
h0=$(cache_stat $DIO_BIOSET all alloc_hit)
uring-io -d /dev/fmr -o read -p -q 32 -c 8 -n 4000 > /dev/null || fail "polled reads after faults failed"
[ $(($(cache_stat $DIO_BIOSET all alloc_hit) - h0)) -ge 3900 ] || fail "the cache no longer serves polled reads"
cache_check_balance $DIO_BIOSET
dms remove bcfault || fail "dmsetup remove bcfault failed"
expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
