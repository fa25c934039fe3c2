# SPDX-License-Identifier: GPL-2.0
# NVMe passthrough, the cache's third user: NVMe I/O commands sent through
# io_uring (IORING_OP_URING_CMD) on a namespace's character device
# (/dev/ngXnY) map the user buffer into a bio from fs_bio_set and ask for
# its cache, polled or not; the bio is freed by task_work in the submitting
# task, whatever completed the command.
#  - fio 3.33's io_uring_cmd engine: random 4 KiB writes, every block read
#    back and checked (crc32c), with IOPOLL (completed without interrupts) and
#    without, and from registered buffers; one cached allocation from
#    fs_bio_set per command.
#  - Exact counts (nvme-pt, N = 2000, a quarter of it on the debug
#    variant): N reads take N bios through fs_bio_set's
#    cache, more than 99% hits once warm, and put N back on its task list,
#    none on the IRQ list even when the device's interrupt completed them;
#    the direct-IO bio_set is not touched. Polled: fewer NVMe interrupts
#    than N/10; not polled, at queue depth 1: at least N/2.
#  - Which buffers go through the cache (data verified in each case): up to
#    4 pages, 4-byte aligned, yes (4 KiB, 16 KiB, 4 KiB at offset 4); 5
#    pages or more no (16 KiB at offset 512, 32 KiB); a registered buffer
#    of any size yes (32 KiB); a buffer not 4-byte aligned is bounced
#    through pages of the kernel's: through the cache if those are at most
#    4 (4 KiB at offset 1), not if more (32 KiB at offset 1). Before patch
#    16 (upstream's 05ce4c584cc6) a bounced buffer never was.
#  - Afterwards the bio and biovec slabs hold what they held before (the
#    commands of 5 pages or more take their vectors from biovec-16).
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
nvme_find biocache0 1
blk=$NVME_BLK chr=$NVME_CHR
nvme_keeps_writes "$blk"
lba=$(cat /sys/block/$blk/queue/logical_block_size)
log "namespace 1 of biocache0: /dev/$blk, /dev/$chr, $lba-byte blocks"
cache_has $FS_BIOSET || fail "$FS_BIOSET has no cache"
before=$(bios_outside_cache)

# fio, verified, polled and not
size=$(scaled 8)M
for opts in "" "--hipri=1" "--fixedbufs=1"; do
	a0=$(cache_allocs $FS_BIOSET)
	# shellcheck disable=SC2086
	fio_pt "$chr" --size=$size $opts
	n=$((FIO_READS + FIO_WRITES))
	expect_eq "$FS_BIOSET cached allocations for fio's $n commands ($opts)" \
		$(($(cache_allocs $FS_BIOSET) - a0)) $n
	case $opts in
	*hipri*)
		[ "$IRQS" -lt $((n / 10)) ] || fail "$n polled commands but $IRQS NVMe interrupts: not polled"
		log "$n polled commands, $IRQS NVMe interrupts"
		;;
	esac
done

# nvme-pt, verified, polled and not
for poll in "" -p; do
	out=$(nvme-pt -d /dev/$chr -L $lba -o verify -b 512 -B 16k -q 8 -r 2M $poll) ||
		{ echo "$out"; fail "verified passthrough IO ${poll:+(IOPOLL) }on $chr failed"; }
	echo "$out"
done

# exact counts: N reads of 4 KiB at queue depth 1 on one CPU, after a warm-up
n=$(scaled 2000)
for poll in -p ""; do
	pt_reads_counted $cpu $chr $lba $n "$n reads${poll:+ (IOPOLL)}" $poll
done
cache_check_bound $FS_BIOSET
cache_check_balance $FS_BIOSET

# cached or not, by the buffer's shape: verified IO of 256 KiB each, whose
# commands (one write and one read each) are counted
pt_shape $chr $lba all -b 4k
pt_shape $chr $lba all -b 16k
pt_shape $chr $lba all -b 4k -a 4
pt_shape $chr $lba none -b 16k -a 512
pt_shape $chr $lba none -b 32k
pt_shape $chr $lba all -b 32k -X
pt_shape $chr $lba all -b 4k -a 1
pt_shape $chr $lba none -b 32k -a 1
cache_check_balance $FS_BIOSET
expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
