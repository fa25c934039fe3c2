# SPDX-License-Identifier: GPL-2.0
# ext4 under bio_alloc_cache=all (6.19's rule), the cache's new users: the
# journal (jbd2 and buffer heads), direct IO through iomap (io_uring not
# polled, psync, libaio) and small reads allocate from fs_bio_set, whose
# cache now serves them. The same workload as ext4 (buffered writes with
# fsync, the files intact after a remount, e2fsck -fn clean):
#  - on a null_blk with hrtimer completions: hard-IRQ puts, splices, hits;
#  - on an NVMe namespace, whose completions come in its interrupt handler,
#    on whichever CPU that runs;
# at least 1000 allocations from fs_bio_set's cache per device, most of
# them hits, each bio put once (no more puts than allocations, every put
# counted), the lists within their bound and
# balanced, and the bio slabs hold what they held before. The null_blk's
# file system is then filled: ENOSPC, and nothing lost. On the debug
# variant kmemleak scans every 3 s all along: the cache's recycled bios in
# flight must not be reported.
# boot: all
# timeout: 300
. /tests/lib.sh

expect_eq "rule" "$(cache_rule)" all
nullb_create e4 queue_mode=2 submit_queues=1 irqmode=2 completion_nsec=20000 \
	memory_backed=1 size=48
nvme_find biocache0 1
nv=$NVME_BLK
nvme_keeps_writes "$nv"
before=$(bios_outside_cache)

kmemleak_scanning_start
for dev in e4 "$nv"; do
	fs0=$(cache_snap $FS_BIOSET)
	ext4_workload "$dev"
	[ "$dev" != e4 ] || ext4_full e4
	cache_delta $FS_BIOSET "$fs0"
	allocs=$D_allocs
	puts=$D_puts
	[ "$allocs" -ge 1000 ] || fail "$dev: only $allocs allocations asked fs_bio_set's cache"
	[ "$D_alloc_hit" -gt $((allocs / 2)) ] || fail "$dev: only $D_alloc_hit of $allocs allocations hit"
	[ "$D_put_irq" -gt 0 ] || fail "$dev: no bio was put in hard-IRQ context"
	[ "$D_splices" -gt 0 ] || fail "$dev: the hard-IRQ list was never spliced"
	# Bios allocated without the cache (more than 4 vecs) are not put to it.
	[ "$puts" -le "$allocs" ] || fail "$dev: $puts puts to the cache for $allocs allocations"
	cache_check_bound $FS_BIOSET
	cache_check_balance $FS_BIOSET
done
kmemleak_scanning_stop
expect_bios_outside_cache "bio and biovec objects outside the caches" "$before"
