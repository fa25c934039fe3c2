# SPDX-License-Identifier: GPL-2.0
# The configuration a distribution ships, checked for correctness: make
# bench's kernels are built without statistics (the Rust cache's Uncounted
# counters, the C cache's compiled out), as a distribution would build them,
# so the guest tests, which assert on the statistics, never run there. Every
# boot of make bench runs this first, on its kernel and its rule, before
# anything is measured, and make bench fails if it fails: verified IO (a
# pattern written, read back and compared byte for byte) through each of the
# cache's users:
#  - a memory-backed null_blk, polled (IOPOLL) and interrupt-driven
#    (hrtimer completions: the hard-IRQ list);
#  - the emulated NVMe whose namespace keeps its data (serial biocachesm; the
#    one the bench measures is QEMU's null-co, which keeps nothing), polled
#    and not, and as passthrough commands (fs_bio_set), polled and not;
#  - dm-linear over the polled null_blk (dm's bio_set), polled and not;
#  - ext4 on a memory-backed null_blk with hrtimer completions: 4 KiB files
#    written with fsync (its journal), unmounted, e2fsck -fn clean, mounted
#    again and compared.
# Data only: there are no statistics to check here.
# timeout: 900
. /tests/lib.sh

nullb_create smokep queue_mode=2 submit_queues=1 poll_queues=2 memory_backed=1 \
	size=16 blocksize=512
nullb_create smokei queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=1000 memory_backed=1 size=16 blocksize=512
polled_verify smokep -r 2M -b 512 -B 16k -q 16
io_verify smokei -r 2M -b 512 -B 16k -q 16

nvme_find biocachesm 1
polled_verify "$NVME_BLK" -r 2M -b 512 -B 16k -q 16
io_verify "$NVME_BLK" -r 2M -b 512 -B 16k -q 16
lba=$(cat "/sys/block/$NVME_BLK/queue/logical_block_size")
for poll in "" -p; do
	out=$(nvme-pt -d "/dev/$NVME_CHR" -L "$lba" -o verify -b 512 -B 16k -q 8 -r 2M $poll) ||
		{ echo "$out"; fail "verified passthrough IO ${poll:+(IOPOLL) }on $NVME_CHR failed"; }
	log "$out"
done

table="0 $(blockdev --getsz /dev/smokep) linear /dev/smokep 0"
dms create smokedm --table "$table" || fail "dmsetup create smokedm failed"
DMS="$DMS smokedm"
dm=$(dm_name_dev smokedm)
polled_verify "$dm" -r 2M -b 512 -B 16k -q 16
io_verify "$dm" -r 2M -b 512 -B 16k -q 16

nullb_create smokefs queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=1000 memory_backed=1 size=64
ext4_mkfs smokefs
mkdir -p /mnt/smokefs
mount -t ext4 /dev/smokefs /mnt/smokefs || fail "cannot mount /dev/smokefs"
: > /tmp/smoke.md5
for i in $(seq 64); do
	yes "smoke $i $RANDOM" | head -c 4096 > /tmp/smoke.blk
	dd if=/tmp/smoke.blk of=/mnt/smokefs/f$i bs=4k conv=fsync 2> /dev/null ||
		fail "writing /mnt/smokefs/f$i with fsync failed"
	echo "$(md5sum < /tmp/smoke.blk | cut -d' ' -f1)  f$i" >> /tmp/smoke.md5
done
umount /mnt/smokefs || fail "cannot unmount /mnt/smokefs"
ext4_check smokefs
ext4_compare smokefs /tmp/smoke.md5
log "ext4: 64 files written with fsync, identical after a remount, e2fsck -fn clean"
