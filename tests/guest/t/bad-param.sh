# SPDX-License-Identifier: GPL-2.0
# An invalid bio_alloc_cache= value (bio_alloc_cache=maybe, the badparam
# boot profile) is reported in dmesg and ignored: the cache stays on and
# serves polled IO.
# boot: badparam
# debug: skip (a boot parameter's parsing: nothing for KASAN, lockdep or
# kmemleak to watch)
. /tests/lib.sh

dmesg | grep -q 'bio: ignoring invalid bio_alloc_cache=maybe' ||
	fail "no warning about bio_alloc_cache=maybe in dmesg"
log "$(dmesg | grep 'bio_alloc_cache=maybe' | head -n 1)"
expect_eq "cache enabled" "$(cache_info enabled)" 1
nullb_create_polled bp
h0=$(cache_stat $DIO_BIOSET all alloc_hit)
polled_verify bp -q 8 -r 4M
[ $(($(cache_stat $DIO_BIOSET all alloc_hit) - h0)) -gt 0 ] || fail "no cache hit"
