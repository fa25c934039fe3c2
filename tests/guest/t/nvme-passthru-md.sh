# SPDX-License-Identifier: GPL-2.0
# NVMe passthrough with a metadata buffer, and the block device of a
# namespace with metadata, through the cache: biocachemd's namespace has 8
# bytes of metadata per 512-byte block in a separate buffer, which the guest
# (CONFIG_BLK_DEV_INTEGRITY) gives an integrity profile without checksums
# ("nop").
#  - Passthrough commands with a metadata buffer (nvme-pt -M 8): the data
#    bio comes from fs_bio_set's cache, its bio_integrity_payload (the user
#    buffer pinned, or bounced when it is not 4-byte aligned) from
#    fs_bio_set's integrity pool. Data and metadata written, read back and
#    checked, polled and not, with the metadata buffer aligned, off by 4
#    bytes (pinned) and off by 1 (bounced); N reads of 4 KiB with 64 bytes
#    of metadata take N cached allocations and put N
#    bios back on the task list; the payloads are freed when the bios are
#    parked (the slab oracle counts bio_integrity_payload).
#  - Polled O_DIRECT on the namespace's block device: every bio carries a
#    payload the block layer allocates (bio_integrity_prep); verified, N
#    reads = N cached allocations from the direct-IO bio_set, N task puts.
#  - Afterwards the bio, biovec and payload slabs hold what they held before.
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
nvme_find biocachemd 1
blk=$NVME_BLK chr=$NVME_CHR
lba=$(cat /sys/block/$blk/queue/logical_block_size)
format=$(cat /sys/block/$blk/integrity/format 2> /dev/null) ||
	fail "$blk has no integrity attributes (CONFIG_BLK_DEV_INTEGRITY?)"
log "namespace 1 of biocachemd: /dev/$blk, /dev/$chr, $lba-byte blocks, integrity profile $format"
# "nop": metadata without checksums ("none" would be no metadata at all)
expect_eq "$blk integrity profile" "$format" nop
cache_has $FS_BIOSET || fail "$FS_BIOSET has no cache"
before=$(bios_outside_cache)

# verified, data and metadata, polled and not; metadata buffers aligned,
# then off by 4 (pinned) and by 1 (bounced)
for md in "" "-m 4" "-m 1"; do
	for poll in "" -p; do
		# shellcheck disable=SC2086
		out=$(nvme-pt -d /dev/$chr -L $lba -M 8 $md -o verify -b 512 -B 16k -q 8 \
			-r 1M $poll) ||
			{ echo "$out"; fail "verified passthrough IO with metadata ($md $poll) on $chr failed"; }
		echo "$out"
	done
done

# exact counts: N reads of 4 KiB with 64 bytes of metadata each (in the
# first 8 MiB: the backing file holds 8 bytes of metadata per block too, so
# the namespace is smaller than 16 MiB)
n=$(scaled 1000)
for poll in -p ""; do
	pt_reads_counted $cpu $chr $lba $n "$n reads with metadata${poll:+ (IOPOLL)}" \
		-M 8 -r 8M $poll
done
expect_bios_outside_cache "bio, biovec and payload objects outside the caches after passthrough (before: $before)" \
	"$before"

# the block device, polled: bios with payloads of the block layer's
polled_verify $blk -b 512 -B 16k -q 8 -r 2M
taskset -c $cpu uring-io -d /dev/$blk -o read -b 4k -q 1 -n 100 -p > /dev/null ||
	fail "polled reads on $blk failed"
snap=$(cache_snap $DIO_BIOSET)
out=$(taskset -c $cpu uring-io -d /dev/$blk -o read -b 4k -q 1 -n $n -p) ||
	{ echo "$out"; fail "polled reads on $blk failed"; }
cache_delta $DIO_BIOSET "$snap"
expect_eq "$DIO_BIOSET cached allocations for $n polled reads of $blk" $D_allocs $n
expect_eq "$DIO_BIOSET task puts for $n polled reads of $blk" $D_put_task $n

cache_check_bound $FS_BIOSET
cache_check_balance $FS_BIOSET
cache_check_balance $DIO_BIOSET
expect_bios_outside_cache "bio, biovec and payload objects outside the caches (before: $before)" \
	"$before"
