# SPDX-License-Identifier: GPL-2.0
# bio_alloc_cache=off: no bio_set has a cache, so nothing is ever served from
# one, and polled IO is still correct.
# boot: cacheoff
# debug: skip (with the cache off, nothing of the Rust cache runs for the
# debug kernel's checks to watch)
. /tests/lib.sh

cache_check_variant
expect_eq "cache enabled" "$(cache_info enabled)" 0
nullb_create_polled off
polled_verify off -q 16 -r 4M
uring-io -d /dev/off -o read -p -q 32 -n 4000 > /dev/null || fail "polled reads failed"
expect_eq "bio_sets with a cache" "$(cache_sets | wc -l)" 0
expect_eq "cache hits" "$(cache_stat $DIO_BIOSET all alloc_hit)" 0
