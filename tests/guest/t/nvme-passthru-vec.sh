# SPDX-License-Identifier: GPL-2.0
# Vectored NVMe passthrough (NVME_URING_CMD_IO_VEC): the command's buffer is
# an array of iovecs, which blk_rq_map_user_iov() maps page by page into one
# bio, or bounces through pages of the kernel's when the iovecs leave gaps
# that are not page aligned (NVMe's virt_boundary).
#  - Which commands go through fs_bio_set's cache (data verified in each
#    case): up to 4 pages, yes: 4 contiguous iovecs of 4 KiB, 4 pages each a
#    page apart, 4 iovecs of 1 KiB (bounced: one page), 4 of 4 KiB off by 4
#    bytes (bounced: 4 pages); 8 pages or more, no: 8 iovecs of 4 KiB, a
#    page apart or not, 16 of 2 KiB (bounced: 8 pages).
#  - Exact counts: N vectored reads of 4 iovecs take N cached allocations
#    and put N bios back on the task list, polled and not.
#  - With metadata (biocachemd's namespace): vectored data and a metadata
#    buffer, verified.
#  - Afterwards the bio, biovec and payload slabs hold what they held before.
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
nvme_find biocache0 1
blk=$NVME_BLK chr=$NVME_CHR
nvme_keeps_writes "$blk"
lba=$(cat /sys/block/$blk/queue/logical_block_size)
cache_has $FS_BIOSET || fail "$FS_BIOSET has no cache"
before=$(bios_outside_cache)

pt_shape $chr $lba all -b 16k -V 4
pt_shape $chr $lba all -b 16k -V 4 -g 4096
pt_shape $chr $lba all -b 4k -V 4
pt_shape $chr $lba all -b 16k -V 4 -a 4
pt_shape $chr $lba none -b 32k -V 8
pt_shape $chr $lba none -b 32k -V 8 -g 4096
pt_shape $chr $lba none -b 32k -V 16

# exact counts: N vectored reads of 4 iovecs of 4 KiB, after a warm-up
n=$(scaled 1000)
for poll in -p ""; do
	pt_reads_counted $cpu $chr $lba $n "$n vectored reads${poll:+ (IOPOLL)}" \
		-b 16k -V 4 $poll
done

# vectored, with metadata
nvme_find biocachemd 1
for poll in "" -p; do
	out=$(nvme-pt -d /dev/$NVME_CHR -L 512 -M 8 -V 4 -o verify -b 4k -B 16k -q 8 -r 1M $poll) ||
		{ echo "$out"; fail "vectored passthrough IO with metadata ${poll:+(IOPOLL) }failed"; }
	echo "$out"
done

cache_check_bound $FS_BIOSET
cache_check_balance $FS_BIOSET
expect_bios_outside_cache "bio, biovec and payload objects outside the caches (before: $before)" \
	"$before"
