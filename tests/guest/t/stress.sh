# SPDX-License-Identifier: GPL-2.0
# Stress: seven verified IO streams on two null_blk devices, four tasks on
# one shared poll queue and the others completing in hard IRQ (null_blk
# irqmode=2, hrtimer) and softirq (irqmode=1),
# and the cache's other users: polled and hard-IRQ IO through dm-linear (dm's
# bio_set), polled NVMe passthrough with and without a metadata buffer
# (fs_bio_set, its integrity pool), a file writer on ext4 (4 KiB files with
# fsync: the journal; through the cache under bio_alloc_cache=all, as make
# soak boots it); all while every CPU but CPU0 goes offline and online,
# biotest.stress_cycles times (default 200; 20 on the debug variant, where a
# cycle costs more than ten times as much: make soak runs it long). Several pollers
# on one poll queue complete each other's bios, which then go back to the
# poller's CPU cache while their submitter may still poll for them (the 2023
# recycling crash). Every stream must progress in every cycle, the file
# writer in every ten. Afterwards:
# every IO verified, every file intact after a remount and e2fsck -fn clean;
# IRQ puts, splices, softirq frees and hotplug drains all happened; dm's
# bio_set took polled and hard-IRQ puts and fs_bio_set passthrough's (and,
# under bio_alloc_cache=all, ext4's from the interrupt); the lists within
# the bound; blkdev_dio_pool, dm's bio_set and fs_bio_set balance (puts =
# hits + drains + held); and the bio, biovec and payload slabs hold what
# they held before, once the cached bios are counted.
# boot: stress
# timeout: 600
. /tests/lib.sh

# 200 cycles; 20 on the debug variant, where a cycle costs more than ten
# times as much
cycles=200
case $(karg variant "") in *-debug) cycles=20 ;; esac
cycles=$(karg stress_cycles $cycles)
cpus=$(hotplug_cpus)
[ -n "$cpus" ] || fail "no CPU can go offline (SMP and CPU hotplug needed)"

# hardq has one poll queue, so that every poller polls the same hctx, and
# completes its non-polled IO from an hrtimer (hard IRQ). softq completes
# from the block softirq: blk-mq raises it only for a single hardware queue,
# so softq has no poll queue (with one, null_blk completes in the submitter).
nullb_create hardq queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 \
	size=128 blocksize=512 irqmode=2 completion_nsec=20000
nullb_create softq queue_mode=2 submit_queues=1 poll_queues=0 memory_backed=1 \
	size=64 blocksize=512 irqmode=1
expect_eq "hardq poll queues" "$(ls -d /sys/block/hardq/mq/* | wc -l)" 2
# dm-linear over a null_blk of its own that polls and completes the rest
# from an hrtimer
nullb_create dmq queue_mode=2 submit_queues=1 poll_queues=1 memory_backed=1 \
	size=32 blocksize=512 irqmode=2 completion_nsec=20000
dm_create bcst "0 $(blockdev --getsz /dev/dmq) linear /dev/dmq 0"
dm=$DM_DEV
# ext4 on a null_blk with hrtimer completions
nullb_create fsq queue_mode=2 submit_queues=1 poll_queues=0 memory_backed=1 \
	size=64 irqmode=2 completion_nsec=20000
ext4_mkfs fsq
nvme_find biocache1 1
pt=$NVME_CHR
nvme_find biocachemd 1
ptmd=$NVME_CHR
rule=$(cache_rule)
log "rule: $rule"

# counted with the file system not mounted, as at the end (bios_outside_cache)
before=$(bios_outside_cache)
mkdir -p /mnt/fsq
mount -t ext4 /dev/fsq /mnt/fsq || fail "cannot mount /dev/fsq"
s0=$(cache_stat $DIO_BIOSET all splices)
i0=$(cache_stat $DIO_BIOSET all put_irq)
f0=$(cache_stat $DIO_BIOSET all free_other)
d0=$(cache_stat $DIO_BIOSET all drain_hotplug)
fs0=$(cache_snap $FS_BIOSET)
dm0=$(cache_snap $dm)

# Verified IO over 16 MiB of each device (lib.sh's worker_start), until
# the end; each worker must complete IO in every cycle (workers_alive).
worker_start poll0 all hardq 0 -r 16M -p -q 8
worker_start poll1 all hardq 16M -r 16M -p -q 8 -B 4k
worker_start poll2 all hardq 32M -r 16M -p -q 4 -X -F
worker_start poll3 all hardq 48M -r 16M -p -q 16 -c 4
worker_start irq0 all hardq 64M -r 16M -q 8
worker_start soft0 all softq 0 -r 16M -q 8
worker_start soft1 all softq 16M -r 16M -q 4 -B 4k
worker_start dmpoll all $dm 0 -r 8M -p -q 8 -B 16k
worker_start dmirq all $dm 8M -r 8M -q 8
pt_worker_start pt all $pt 512 0 -r 8M -p -q 8 -b 512 -B 16k
pt_worker_start ptmd all $ptmd 512 0 -r 4M -p -q 4 -b 512 -B 16k -M 8
fwriter_start /mnt/fsq
# This shell drives the cycles: ahead of the eleven streams it checks, or
# each of its commands waits behind them (on the debug variant a cycle cost
# about 5 s so, most of it this shell's forks queued behind the streams).
renice -10 -p $$ > /dev/null || fail "cannot raise the priority of the cycling shell"

start=$(date +%s)
for c in $(seq "$cycles"); do
	# shellcheck disable=SC2086
	cpus_cycle $cpus
	workers_alive "in cycle $c"
	# a file with fsync takes longer than a cycle
	[ $((c % 10)) != 0 ] || fwriter_alive "in cycles $((c - 9))-$c"
done
log "$cycles cycles of CPUs $(echo $cpus) offline/online in $(($(date +%s) - start))s"

fwriter_stop
workers_stop
ios=0 verified=0
for name in $WORKERS; do
	out=$(tail -n 1 "/tmp/$name.out")
	ios=$((ios + $(field ios "$out")))
	verified=$((verified + $(field verified "$out")))
done
workers_check
log "$ios IOs, $verified reads verified, $FWRITER_FILES files written"
umount /mnt/fsq || fail "cannot unmount /mnt/fsq"
ext4_check fsq
ext4_compare fsq /tmp/fw.md5.last
log "$(wc -l < /tmp/fw.md5.last) files identical after a remount ($FWRITER_FILES writes)"

# Each kind of completion reached the cache, and hotplug drained it.
spl=$(($(cache_stat $DIO_BIOSET all splices) - s0))
irq=$(($(cache_stat $DIO_BIOSET all put_irq) - i0))
other=$(($(cache_stat $DIO_BIOSET all free_other) - f0))
drained=$(($(cache_stat $DIO_BIOSET all drain_hotplug) - d0))
log "IRQ puts $irq, splices $spl, freed from softirq $other, drained by hotplug $drained"
[ "$irq" -gt 0 ] && [ "$spl" -gt 0 ] || fail "no hard-IRQ puts or splices"
[ "$other" -gt 0 ] || fail "no softirq completion freed a bio"
[ "$drained" -gt 0 ] || fail "hotplug never drained a bio"
# dm's and passthrough's bios went through their caches (and, under
# bio_alloc_cache=all, ext4's through fs_bio_set's from the interrupt)
cache_delta $dm "$dm0"
[ "$D_put_task" -gt 0 ] && [ "$D_put_irq" -gt 0 ] ||
	fail "$dm: no polled or no hard-IRQ put through dm"
cache_delta $FS_BIOSET "$fs0"
[ "$D_put_task" -gt 0 ] || fail "$FS_BIOSET: no passthrough bio put"
[ "$rule" != all ] || [ "$D_put_irq" -gt 0 ] || fail "$FS_BIOSET: no ext4 bio put from its interrupt"
log "drained by hotplug: $dm $(cache_stat $dm all drain_hotplug)," \
	"$FS_BIOSET $(cache_stat $FS_BIOSET all drain_hotplug)"
for b in $DIO_BIOSET $dm $FS_BIOSET; do
	cache_check_bound $b
	cache_check_balance $b
done
expect_bios_outside_cache "bio, biovec and payload objects outside the caches (before: $before)" \
	"$before"
