# SPDX-License-Identifier: GPL-2.0
# The polled-IO workload of `make`: 512-byte random reads with IOPOLL,
# registered file and fixed buffers, in the shape of the seed series'
# benchmark (t/io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1) and at queue
# depth 1, through each of the cache's three users:
#  - O_DIRECT reads through io_uring (uring-io) on null_blk and on the
#    emulated NVMe: bios from the direct-IO bio_set, blkdev_dio_pool;
#  - the same through dm-linear over that null_blk: dm's clones from its own
#    bio_set (dm-N), the bios above them from blkdev_dio_pool;
#  - NVMe passthrough (nvme-pt: io_uring URING_CMD on /dev/ngXnY): bios
#    from fs_bio_set.
# Each run prints a "RESULT" line for scripts/workload.sh, with the hits and
# misses of the bio_set named in it.
# timeout: 300
. /tests/lib.sh

secs=${WORKLOAD_SECONDS:-3}
nullb_create wl queue_mode=2 submit_queues=1 poll_queues=2 size=1024 blocksize=512
dm_create bcwl "0 $(blockdev --getsz /dev/wl) linear /dev/wl 0"
dm=$DM_DEV
nvme_find biocache0 1
chr=$NVME_CHR
lba=$(cat /sys/block/$NVME_BLK/queue/logical_block_size)
nsbytes=$(($(blockdev --getsz /dev/$NVME_BLK) * 512))

# run NAME BIOSET QD BATCH COMMAND...: one workload run and its RESULT line
run() {
	local name=$1 bs=$2 qd=$3 batch=$4 h0 m0 out hits misses
	shift 4
	h0=$(cache_stat $bs all alloc_hit)
	m0=$(cache_stat $bs all alloc_miss)
	out=$("$@") || { echo "$out"; fail "workload on $name failed"; }
	echo "$out"
	hits=$(($(cache_stat $bs all alloc_hit) - h0))
	misses=$(($(cache_stat $bs all alloc_miss) - m0))
	echo "RESULT dev=$name bioset=$bs qd=$qd batch=$batch ios=$(field ios "$out")" \
		"ns=$(field ns "$out") iops=$(field iops "$out") hits=$hits misses=$misses"
}

for dev in wl $NVME_BLK $dm; do
	bs=$DIO_BIOSET
	[ "$dev" = "$dm" ] && bs=$dm
	for shape in "128 32" "1 1"; do
		set -- $shape
		run $dev $bs $1 $2 uring-io -d /dev/$dev -o read -p -F -X -b 512 -q $1 -c $2 -r 1G -t "$secs"
	done
done
for shape in "128 32" "1 1"; do
	set -- $shape
	run $chr $FS_BIOSET $1 $2 nvme-pt -d /dev/$chr -L $lba -o read -p -F -X -b 512 -q $1 -c $2 \
		-r $nsbytes -t "$secs"
done
