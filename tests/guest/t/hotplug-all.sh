# SPDX-License-Identifier: GPL-2.0
# CPU hotplug under the cache's new users, with bio_alloc_cache=all:
#  - small files written with fsync on ext4 (journal commits, buffer heads)
#    over a null_blk with hrtimer completions;
#  - verified O_DIRECT IO, not polled, on a null_blk with hrtimer
#    completions and on one with softirq completions;
# while every CPU but CPU0 goes offline and online (biotest.hotplug_cycles,
# default 10; a quarter of it on the debug variant). The file writer makes
# progress in every cycle and the IO workers stay alive; then no IO error,
# every file reads back as written after a remount, e2fsck -fn is clean,
# fs_bio_set and the direct-IO bio_set balance (puts = hits + drains +
# held) within their bound, the hotplug drains took bios, and the bio
# slabs hold what they held before.
# boot: all
# timeout: 300
. /tests/lib.sh

cycles=$(scaled "$(karg hotplug_cycles 10)")
cpus=$(hotplug_cpus)
[ -n "$cpus" ] || fail "no CPU can go offline (SMP and CPU hotplug needed)"
expect_eq "rule" "$(cache_rule)" all

nullb_create hf queue_mode=2 submit_queues=1 irqmode=2 completion_nsec=20000 \
	memory_backed=1 size=64
nullb_create hi queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=20000 memory_backed=1 size=16
nullb_create hs queue_mode=2 submit_queues=1 poll_queues=0 irqmode=1 \
	memory_backed=1 size=16
ext4_mkfs hf
# counted with the file system not mounted, as at the end (bios_outside_cache)
before=$(bios_outside_cache)
mkdir -p /mnt/hf
mount -t ext4 /dev/hf /mnt/hf || fail "cannot mount /dev/hf"
d0=$(($(cache_stat $FS_BIOSET all drain_hotplug) + $(cache_stat $DIO_BIOSET all drain_hotplug)))

fwriter_start /mnt/hf
worker_start hi all hi 0 -b 4k -B 16k -q 8
worker_start hs all hs 0 -b 4k -B 16k -q 8

for c in $(seq "$cycles"); do
	# shellcheck disable=SC2086
	cpus_cycle $cpus
	sleep 1
	workers_alive "in cycle $c"
	fwriter_alive "in cycle $c"
done
fwriter_stop
log "$cycles cycles of CPUs $(echo $cpus) offline/online; $FWRITER_FILES files written"
workers_stop
workers_check
umount /mnt/hf || fail "cannot unmount /mnt/hf"
ext4_check hf
ext4_compare hf /tmp/fw.md5.last
log "$(wc -l < /tmp/fw.md5.last) files identical after a remount ($FWRITER_FILES writes)"

for b in $FS_BIOSET $DIO_BIOSET; do
	cache_check_bound $b
	cache_check_balance $b
done
d=$(($(cache_stat $FS_BIOSET all drain_hotplug) + $(cache_stat $DIO_BIOSET all drain_hotplug) - d0))
log "hotplug drains: $d bios"
[ "$d" -gt 0 ] || fail "no CPU death drained a bio"
expect_bios_outside_cache "bio and biovec objects outside the caches" "$before"
