# SPDX-License-Identifier: GPL-2.0
# Device-mapper targets that do not simply remap a clone and let it go:
# delay (holds clones, issues them later from a workqueue), flakey (fails
# IO in its down intervals), crypt (carries the data in bios of its own,
# encrypted and decrypted in workqueues; AES-XTS with a fixed test key) and
# thin (a pool on two null_blks, blocks provisioned on first write). Over a
# polled null_blk whose other IO completes in hard IRQ (irqmode=2), each:
#  - has io_poll 1, and its table's bio_set the per-CPU cache;
#  - verifies IO completed by interrupt and IOPOLL IO of 512 B to 16 KiB
#    (flakey, up 1 s and down 1 s: for 3 s across its up and down
#    intervals, EIOs allowed and seen; then a table that is only ever up);
#    polled IO must complete within 30 s (times the timeout scale):
#    through crypt it waited for null_blk's timeout and failed with
#    ETIMEDOUT before patch 37;
#  - N polled and N interrupt-driven reads: exactly N cached allocations
#    from dm's bio_set and N from blkdev_dio_pool for each, and as many
#    puts of dm's bios (onto a list, or freed when the lists were full or
#    outside task and hard-IRQ context): whichever context the target
#    completes them in, each goes back once;
#  - dm's bio_set stays within the bound and balances.
# The error target has a test of its own (dm-error).
# boot: stress
# timeout: 300
. /tests/lib.sh

EIO=5
cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
limit=$((30 * $(karg slowness 1)))

nullb_create_polled tb size=64 irqmode=2 completion_nsec=20000
nullb_create_polled tm size=16
[ -n "$(poll_hctxs tb)" ] || fail "tb: no poll queue in $BLK_DEBUGFS/tb (CONFIG_BLK_DEBUG_FS?)"
sz=$(blockdev --getsz /dev/tb)
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
key=$key$key

# timed_io WHAT ARGS...: uring-io ARGS on cpu$cpu, which must finish within
# $limit seconds; its summary in OUT. A hang says whether tb's poll queues
# held polled requests in flight when the time was up: no bio of crypt's
# should ever be there (patch 37 issues its data bios unpolled), and one
# that is waits for null_blk's timeout, as nobody polls it.
timed_io() {
	local what=$1 rc=0
	shift
	run_deadline $limit tb taskset -c $cpu uring-io "$@" || rc=$?
	OUT=$(cat /tmp/deadline.out)
	if [ $rc = 137 ]; then
		echo "$OUT"
		[ -z "$DEADLINE_POLLED" ] ||
			fail "$what hung for ${limit}s with polled requests left in flight on tb's" \
				"poll queues ($DEADLINE_POLLED)"
		fail "$what did not complete within ${limit}s, and no polled request was in flight" \
			"on tb's poll queues"
	fi
	[ $rc = 0 ] || { echo "$OUT"; fail "$what failed"; }
	OUT=$(echo "$OUT" | tail -n 1)
}

# reads DEV N [-p]: N reads of 4 KiB, counted: N cached allocations from
# DEV's bio_set and from blkdev_dio_pool, and N puts of DEV's bios.
reads() {
	local dev=$1 n=$2 how=interrupt-driven d0 i0 allocs puts
	shift 2
	[ $# = 0 ] || how=polled
	d0=$(cache_snap "$dev")
	i0=$(cache_allocs $DIO_BIOSET)
	timed_io "$n $how reads on $dev" -d "/dev/$dev" -o read -b 4k -q 8 -n "$n" "$@"
	cache_delta "$dev" "$d0"
	allocs=$D_allocs
	puts=$D_puts
	expect_eq "$dev: cached allocations for $n $how reads" "$allocs" "$n"
	expect_eq "$dev: puts for $n $how reads" "$puts" "$n"
	expect_eq "$DIO_BIOSET: cached allocations for $n $how reads on $dev" \
		$(($(cache_allocs $DIO_BIOSET) - i0)) "$n"
}

# target NAME TABLE [VERIFY ARGS]: the checks above for one target
target() {
	local name=$1 table=$2 dev n out
	shift 2
	dm_create "$name" "$table"
	dev=$DM_DEV
	expect_eq "$name ($dev) io_poll" "$(cat /sys/block/$dev/queue/io_poll)" 1
	cache_has "$dev" || fail "$name ($dev): its bio_set has no cache"
	timed_io "verify on $name" -d "/dev/$dev" -o verify -b 512 -B 16k -q 8 -r 2M "$@"
	log "$name, interrupt-driven: $OUT"
	VERIFY=$OUT
	timed_io "polled verify on $name" -d "/dev/$dev" -o verify -b 512 -B 16k -q 8 -r 2M -p "$@"
	log "$name, polled: $OUT"
	VERIFY_POLLED=$OUT
	for out in "$VERIFY" "$VERIFY_POLLED"; do
		[ "$(field verified "$out")" -gt 0 ] || fail "$name: nothing verified"
	done
	case $table in
	*" flakey "*" 0 1 1") ;; # reads may meet a down interval: see below
	*)
		n=$(scaled 400)
		reads "$dev" "$n" -p
		reads "$dev" "$n"
		;;
	esac
	cache_check_bound "$dev"
	cache_check_balance "$dev"
}

target bcdelay "0 $sz delay /dev/tb 0 2"
dms remove bcdelay || fail "dmsetup remove bcdelay failed"

# flakey: up 1 s, down 1 s (every bio fails with EIO then); verify for 3 s
target bcflakey "0 $sz flakey /dev/tb 0 1 1" -t 3 -E $EIO
for out in "$VERIFY" "$VERIFY_POLLED"; do
	[ "$(field expected_errors "$out")" -gt 0 ] || fail "flakey: no EIO in 3 s of IO"
	[ "$(field errors "$out")" = 0 ] || fail "flakey: IO errors other than EIO"
done
dms remove bcflakey || fail "dmsetup remove bcflakey failed"
# the counted reads on an up-only table
target bcflakeyup "0 $sz flakey /dev/tb 0 3600 0"
dms remove bcflakeyup || fail "dmsetup remove bcflakeyup failed"

target bccrypt "0 $sz crypt aes-xts-plain64 $key 0 /dev/tb 0"
dms remove bccrypt || fail "dmsetup remove bccrypt failed"

# thin: a pool with 64 KiB blocks, one thin device over all of it
dm_create bcpool "0 $sz thin-pool /dev/tm /dev/tb 128 0"
pool=$DM_DEV
dms message bcpool 0 "create_thin 0" || fail "dmsetup message bcpool create_thin failed"
target bcthin "0 $sz thin /dev/$pool 0"
dms remove bcthin || fail "dmsetup remove bcthin failed"
dms remove bcpool || fail "dmsetup remove bcpool failed"
cache_check_balance $DIO_BIOSET
