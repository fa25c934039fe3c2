# SPDX-License-Identifier: GPL-2.0
# Polled IO through device-mapper, the cache's second user. A bio-based
# table whose devices all poll gets a bio_set (io_bs, named after the mapped
# device: dm-N) with a per-CPU cache; dm clones io_uring's bios from it, and
# a clone asks for the cache when the bio it clones did.
#  - The first table of a dm device has the cache (dm_create; 6.12 as
#    released gives it none: it read the queue's poll flag before the first
#    table set it, fixed by patch 11).
#  - dm-linear over a polled null_blk, dm-stripe over two of them in 4 KiB
#    chunks, dm-stripe over the two emulated NVMe controllers: io_poll is 1,
#    IOPOLL writes and reads of 512 B to 16 KiB verify, and through NVMe
#    complete without interrupts.
#  - Steady polled reads through dm-linear (5 x 4000, 20000 in all; a
#    quarter of it on the debug variant): one allocation from dm's
#    bio_set and one from the direct-IO bio_set above it per read, more
#    than 99% of each a cache hit, each bio back on the task list. Through
#    the stripe, an aligned 16 KiB read is four chunks: four allocations
#    from dm's bio_set, all cached.
#  - A table over a device that cannot poll: io_poll is 0, IOPOLL fails with
#    EOPNOTSUPP, and its bio_set has no cache. The table being loaded
#    decides, not the live table's queue limits (patch 11): a table over a
#    polled null_blk swapped in over it has the cache, and one over the
#    device that cannot poll, swapped in over that, has none.
# Removing the devices frees their bio_sets: no dm line remains.
. /tests/lib.sh

EOPNOTSUPP=95
cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"

expect_eq "cache enabled" "$(cache_info enabled)" 1
nullb_create_polled pa size=16
nullb_create_polled pb size=16
sz=$(blockdev --getsz /dev/pa)

# dm-linear over pa
dm_create bclin "0 $sz linear /dev/pa 0"
lin=$DM_DEV
expect_eq "$lin io_poll" "$(cat /sys/block/$lin/queue/io_poll)" 1
polled_verify "$lin" -b 512 -B 16k -q 8 -r 4M

# counts BIOSET: its allocation hits, misses and task puts so far
counts() {
	echo "$(cache_stat $1 all alloc_hit) $(cache_stat $1 all alloc_miss) $(cache_stat $1 all put_task)"
}

# steady BIOSET "COUNTS BEFORE" READS: each of READS polled reads took one
# bio from BIOSET, through its cache, more than 99% hits, and put it back
# on the task list.
steady() {
	local b=$1 n=$3 hits misses puts
	# shellcheck disable=SC2086
	set -- $2
	hits=$(($(cache_stat $b all alloc_hit) - $1))
	misses=$(($(cache_stat $b all alloc_miss) - $2))
	puts=$(($(cache_stat $b all put_task) - $3))
	log "$b: $n polled reads through $lin: $hits hits, $misses misses, $puts task puts"
	expect_eq "$b cached allocations for $n reads" $((hits + misses)) "$n"
	hit_rate_ok $hits $misses || fail "$b: hit rate $hits/$((hits + misses)) is not above 99%"
	expect_eq "$b task puts for $n reads" "$puts" "$n"
}

# steady state, on one CPU: warm up, then 5 x 4000 reads (a quarter of it
# on the debug variant)
n=$(scaled 4000)
taskset -c $cpu uring-io -d /dev/$lin -o read -p -q 32 -c 8 -n $((n / 2)) > /dev/null ||
	fail "polled reads on $lin failed"
dm0=$(counts $lin)
dio0=$(counts $DIO_BIOSET)
for i in 1 2 3 4 5; do
	out=$(taskset -c $cpu uring-io -d /dev/$lin -o read -p -q 32 -c 8 -n $n) ||
		fail "polled reads on $lin failed: $out"
	cache_check_bound $lin
	cache_check_bound $DIO_BIOSET
done
steady $lin "$dm0" $((5 * n))
steady $DIO_BIOSET "$dio0" $((5 * n))
cache_check_balance $lin
cache_check_balance $DIO_BIOSET

# dm-stripe over pa and pb, 4 KiB chunks: IO up to 16 KiB crosses chunks
dm_create bcstr "0 $((2 * sz)) striped 2 8 /dev/pa 0 /dev/pb 0"
str=$DM_DEV
expect_eq "$str io_poll" "$(cat /sys/block/$str/queue/io_poll)" 1
polled_verify "$str" -b 512 -B 16k -q 8 -r 4M
n=$(scaled 2000)
taskset -c $cpu uring-io -d /dev/$str -o read -p -b 16k -q 16 -n $((n / 4)) > /dev/null ||
	fail "polled reads on $str failed"
h0=$(cache_stat $str all alloc_hit)
m0=$(cache_stat $str all alloc_miss)
out=$(taskset -c $cpu uring-io -d /dev/$str -o read -p -b 16k -q 16 -n $n) ||
	fail "polled reads on $str failed: $out"
hits=$(($(cache_stat $str all alloc_hit) - h0))
misses=$(($(cache_stat $str all alloc_miss) - m0))
log "$str: $n aligned 16 KiB polled reads over 4 KiB chunks: $hits hits, $misses misses"
expect_eq "$str cached allocations for $n reads of 4 chunks" $((hits + misses)) $((4 * n))
hit_rate_ok $hits $misses || fail "$str: hit rate $hits/$((hits + misses)) is not above 99%"
cache_check_balance $str

# dm-stripe over the two NVMe controllers' namespaces
nvme_find biocache0 1
n0=$NVME_BLK
nvme_find biocache1 1
n1=$NVME_BLK
nvme_keeps_writes "$n0"
nvme_keeps_writes "$n1"
nsz=$(blockdev --getsz /dev/$n0)
expect_eq "$n1 sectors" "$(blockdev --getsz /dev/$n1)" "$nsz"
dm_create bcnvme "0 $((2 * nsz)) striped 2 8 /dev/$n0 0 /dev/$n1 0"
nv=$DM_DEV
expect_eq "$nv io_poll" "$(cat /sys/block/$nv/queue/io_poll)" 1
h0=$(cache_stat $nv all alloc_hit)
polled_verify "$nv" -b 512 -B 16k -q 8 -r 2M
[ $(($(cache_stat $nv all alloc_hit) - h0)) -gt 0 ] || fail "$nv: no cache hit"

# a table over a device that cannot poll
nullb_create np queue_mode=2 submit_queues=1 poll_queues=0 size=16
tnp="0 $(blockdev --getsz /dev/np) linear /dev/np 0"
expect_eq "np sectors" "$(blockdev --getsz /dev/np)" "$sz"
dms create bcnp --table "$tnp" || fail "dmsetup create bcnp failed"
DMS="$DMS bcnp"
np=$(dm_name_dev bcnp)
expect_eq "$np io_poll" "$(cat /sys/block/$np/queue/io_poll)" 0
uring_io -d /dev/$np -o read -p -n 32 -q 4 -e $EOPNOTSUPP
uring_io -d /dev/$np -o read -n 32 -q 4
cache_has "$np" && fail "$np, over a device that cannot poll, has a cache"
dm_swap bcnp "0 $sz linear /dev/pa 0"
expect_eq "$np io_poll, over pa" "$(cat /sys/block/$np/queue/io_poll)" 1
cache_has "$np" || fail "$np: a table over pa, loaded over one that cannot poll, has no cache"
uring_io -d /dev/$np -o read -p -n 32 -q 4
dm_swap bcnp "$tnp"
expect_eq "$np io_poll, over np again" "$(cat /sys/block/$np/queue/io_poll)" 0
cache_has "$np" && fail "$np: a table over np, loaded over one that can poll, has a cache"

for n in bclin bcstr bcnvme bcnp; do
	dms remove $n || fail "dmsetup remove $n failed"
done
expect_eq "dm bio_sets with a cache after removal" "$(cache_sets | grep -c '^dm-' || true)" 0
