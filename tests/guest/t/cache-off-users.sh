# SPDX-License-Identifier: GPL-2.0
# bio_alloc_cache=off and the cache's other users: no bio_set has a cache,
# device-mapper's included, however often a table is loaded, and
# passthrough's fs_bio_set neither; their IO is still correct.
#  - dm-linear over a polled null_blk and dm-stripe over the two NVMe
#    namespaces: io_poll is 1, IOPOLL writes and reads verify, no bio_set
#    line appears, nothing is freed at teardown (teardown_drained stays 0);
#  - NVMe passthrough: fio's verified IO, polled and not, and nvme-pt's,
#    with a registered buffer too; bad input gets the same answers as with
#    the cache;
#  - passthrough bios without the cache come from fs_bio_set's mempool and
#    go back to it with bio_put() (blk_mq_map_bio_put()): the bio slabs
#    hold what they held before, once the dm devices are gone.
# boot: cacheoff
# debug: skip (with the cache off, nothing of the Rust cache runs for the
# debug kernel's checks to watch)
# timeout: 180
. /tests/lib.sh

EFAULT=-14 EINVAL=-22

expect_eq "cache enabled" "$(cache_info enabled)" 0
expect_eq "bio_sets with a cache" "$(cache_sets | wc -l)" 0
td0=$(cache_info teardown_drained)
nullb_create_polled oa size=16
nvme_find biocache0 1
n0=$NVME_BLK chr=$NVME_CHR
nvme_find biocache1 1
n1=$NVME_BLK
nvme_keeps_writes "$n0"
nvme_keeps_writes "$n1"
lba=$(cat /sys/block/$n0/queue/logical_block_size)
before=$(bios_outside_cache)

# dm
sz=$(blockdev --getsz /dev/oa)
dm_create bcol "0 $sz linear /dev/oa 0"
lin=$DM_DEV
dm_swap bcol "0 $sz linear /dev/oa 0"
nsz=$(blockdev --getsz /dev/$n0)
dm_create bcos "0 $((2 * nsz)) striped 2 8 /dev/$n0 0 /dev/$n1 0"
str=$DM_DEV
for d in $lin $str; do
	expect_eq "$d io_poll" "$(cat /sys/block/$d/queue/io_poll)" 1
	polled_verify "$d" -b 512 -B 16k -q 8 -r 2M
	uring-io -d /dev/$d -o read -p -q 32 -c 8 -n "$(scaled 2000)" > /dev/null ||
		fail "polled reads on $d failed"
done
expect_eq "bio_sets with a cache" "$(cache_sets | wc -l)" 0
dms remove bcol || fail "dmsetup remove bcol failed"
dms remove bcos || fail "dmsetup remove bcos failed"
expect_eq "teardown_drained" "$(cache_info teardown_drained)" "$td0"

# NVMe passthrough
fio_pt "$chr" --size="$(scaled 8)M"
fio_pt "$chr" --size="$(scaled 8)M" --hipri=1
for poll in "" -p; do
	for x in "" -X; do
		out=$(nvme-pt -d /dev/$chr -L $lba -o verify -b 512 -B 16k -q 8 -r 1M $poll $x) ||
			{ echo "$out"; fail "verified passthrough IO ($poll $x) failed"; }
		echo "$out"
	done
	out=$(nvme-pt -d /dev/$chr -L $lba -o read -b 4k -q 8 -n "$(scaled 2000)" $poll) ||
		{ echo "$out"; fail "passthrough reads ($poll) failed"; }
	nvme-pt -d /dev/$chr -L $lba -o read -b 4k -q 4 -n 16 $poll -U -e $EFAULT ||
		fail "an unmapped buffer did not get -EFAULT"
	nvme-pt -d /dev/$chr -L $lba -o cmd -C 0x7e -b 4k -q 4 -n 16 $poll -e $((0x4001)) ||
		fail "an unknown opcode did not get Invalid Command Opcode"
	nvme-pt -d /dev/$chr -L $lba -o read -b 4k -q 4 -n 16 $poll -f 1 -e $EINVAL ||
		fail "command flags did not get -EINVAL"
done
expect_eq "bio_sets with a cache" "$(cache_sets | wc -l)" 0
expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
