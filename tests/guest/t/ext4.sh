# SPDX-License-Identifier: GPL-2.0
# ext4 under the default rule (bio_alloc_cache=on, 6.12's): its bios do not
# ask for the cache, so none of them is cached; debugfs reports the rule as
# "rule: flagged". Buffered writes with fsync after each (journal commits),
# O_DIRECT through io_uring (not polled), psync and libaio on a null_blk
# with hard-IRQ completions, each fio job verified (crc32c): every file's
# checksum is the same after a remount, e2fsck
# -fn is clean, and neither fs_bio_set's nor the direct-IO bio_set's cache
# saw an allocation or a put.
# timeout: 240
# debug: skip (none of this IO goes through the cache; ext4-all runs the same
# workload through it on the debug variant)
. /tests/lib.sh

expect_eq "rule" "$(cache_rule)" flagged
nullb_create e4 queue_mode=2 submit_queues=1 irqmode=2 completion_nsec=20000 \
	memory_backed=1 size=128
fs0=$(cache_snap $FS_BIOSET)
dio0=$(cache_snap $DIO_BIOSET)
ext4_workload e4
cache_delta $FS_BIOSET "$fs0"
expect_eq "$FS_BIOSET allocations from the cache" "$D_allocs" 0
expect_eq "$FS_BIOSET puts to the cache" "$D_puts" 0
cache_delta $DIO_BIOSET "$dio0"
expect_eq "$DIO_BIOSET allocations from the cache" "$D_allocs" 0
