# SPDX-License-Identifier: GPL-2.0
# The kernel runs the cache its variant names (the statistics report the
# implementation, c or rust, that biotest.variant says), and steady-state
# polled reads are served by the per-CPU bio cache: more than 99% hits on
# the direct-IO bio_set, and no CPU's lists ever above the bound.
. /tests/lib.sh

cache_check_variant
expect_eq "cache enabled" "$(cache_info enabled)" 1

nullb_create_polled hits
uring-io -d /dev/hits -o read -p -q 32 -c 8 -n 2000 > /dev/null   # warm up
h0=$(cache_stat $DIO_BIOSET all alloc_hit)
m0=$(cache_stat $DIO_BIOSET all alloc_miss)
p0=$(cache_stat $DIO_BIOSET all put_task)
for i in 1 2 3 4 5; do
	out=$(uring-io -d /dev/hits -o read -p -q 32 -c 8 -n 4000) || fail "polled reads failed: $out"
	cache_check_bound $DIO_BIOSET
done
hits=$(($(cache_stat $DIO_BIOSET all alloc_hit) - h0))
misses=$(($(cache_stat $DIO_BIOSET all alloc_miss) - m0))
puts=$(($(cache_stat $DIO_BIOSET all put_task) - p0))
log "20000 polled reads: $hits hits, $misses misses, $puts task puts"
[ $((hits + misses)) -ge 20000 ] || fail "only $((hits + misses)) cached allocations for 20000 reads"
[ $((hits * 1000)) -gt $(((hits + misses) * 990)) ] ||
	fail "hit rate $hits/$((hits + misses)) is not above 99%"
[ "$puts" -ge 20000 ] || fail "only $puts bios went back to the task list"
