# SPDX-License-Identifier: GPL-2.0
# Fault injection during polled IO, each fault accounted for:
#  - fail_make_request on a null_blk disk: every injected fault reaches
#    userspace as exactly one -EIO, every other read verifies;
#  - failslab on the bio slabs: the bio_set's mempool covers the failed
#    allocations, so IO succeeds and verifies.
# Afterwards the cache balances, serves polled reads again, and the bio
# slabs hold what they held before.
# boot: stress
# timeout: 300
. /tests/lib.sh

EIO=5

nullb_create_polled fmr
# softirq completions (see stress.sh): its bios are freed, not cached
nullb_create fsq queue_mode=2 submit_queues=1 poll_queues=0 memory_backed=1 \
	size=64 blocksize=512 irqmode=1
before=$(bios_outside_cache)

# fail_make_request: 10% of the bios to fmr end in -EIO at submission.
times=1000
fault_setup fail_make_request 10 $times
echo 1 > /sys/block/fmr/make-it-fail
out=$(uring-io -d /dev/fmr -o verify -p -q 8 -r 4M -E $EIO) || { echo "$out"; fail "IO under fail_make_request"; }
echo 0 > /sys/block/fmr/make-it-fail
fault_off fail_make_request
echo "$out"
injected=$(fault_injected fail_make_request $times)
[ "$injected" -gt 0 ] || fail "fail_make_request injected nothing"
expect_eq "EIOs seen for $injected injected faults" "$(field expected_errors "$out")" "$injected"
[ "$(field verified "$out")" -gt 0 ] || fail "nothing verified"
polled_verify fmr -q 8 -r 4M

# failslab: 20% of the allocations from the bio slabs fail. Softirq
# completions free their bios, so every allocation on fsq goes to the slab.
times=500
echo N > /sys/kernel/debug/failslab/ignore-gfp-wait
echo Y > /sys/kernel/debug/failslab/cache-filter
for s in /sys/kernel/slab/bio-*; do echo 1 > "$s/failslab"; done
fault_setup failslab 20 $times
out1=$(uring-io -d /dev/fsq -o verify -q 8 -r 4M) || { echo "$out1"; fail "IO on fsq under failslab"; }
out2=$(uring-io -d /dev/fmr -o verify -p -q 8 -r 4M) || { echo "$out2"; fail "polled IO under failslab"; }
fault_off failslab
for s in /sys/kernel/slab/bio-*; do echo 0 > "$s/failslab"; done
echo "$out1"
echo "$out2"
injected=$(fault_injected failslab $times)
[ "$injected" -gt 0 ] || fail "failslab injected nothing"
log "failslab: $injected bio allocations failed, IO verified"

cache_check_balance $DIO_BIOSET
h0=$(cache_stat $DIO_BIOSET all alloc_hit)
uring-io -d /dev/fmr -o read -p -q 32 -c 8 -n 4000 > /dev/null || fail "polled reads after faults failed"
[ $(($(cache_stat $DIO_BIOSET all alloc_hit) - h0)) -ge 3900 ] || fail "the cache no longer serves polled reads"
cache_check_balance $DIO_BIOSET
expect_eq "bio and biovec objects outside the caches (before: $before)" "$(bios_outside_cache)" "$before"
