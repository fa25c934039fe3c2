# SPDX-License-Identifier: GPL-2.0
# Bad input through NVMe passthrough (io_uring IORING_OP_URING_CMD on
# /dev/ngXnY) gets the answer the kernel or the device defines, and leaks
# nothing. Each case 16 commands (2 for the namespace ID), polled and not; each command's result is
# a negative errno from the kernel or the positive NVMe status from the
# device, which the log shows decoded:
#  - a buffer where nothing is mapped: -EFAULT, from a bio that was taken
#    from fs_bio_set's cache and put back;
#  - a transfer above the controller's limit (max_hw_sectors_kb), from a
#    user buffer or a registered one: -EINVAL, no cached bio;
#  - an opcode the device does not know, and a range past the namespace's
#    end: the device's status, from QEMU Invalid Command Opcode and LBA Out
#    of Range, each with Do Not Retry (0x4001, 0x4080), the bio mapped and
#    freed as for good IO;
#  - flags in the command, another namespace's ID, a ring without 128-byte
#    SQEs: -EINVAL, -EINVAL, -EOPNOTSUPP, refused before any bio;
#  - buffers not 4-byte aligned: bounced, and the data verifies.
# Afterwards fs_bio_set balances and its cache serves passthrough reads
# again, and the bio slabs hold what they held before.
# boot: stress
. /tests/lib.sh

EFAULT=-14 EINVAL=-22 EOPNOTSUPP=-95
nvme_find biocache0 1
blk=$NVME_BLK chr=$NVME_CHR
lba=$(cat /sys/block/$blk/queue/logical_block_size)
nsbytes=$(($(blockdev --getsz /dev/$blk) * 512))
maxkb=$(cat /sys/block/$blk/queue/max_hw_sectors_kb)
big=4
while [ "$big" -le "$maxkb" ]; do big=$((big * 2)); done
log "/dev/$chr: $lba-byte blocks, $nsbytes bytes, at most $maxkb KiB a command; too large: $big KiB"
cache_has $FS_BIOSET || fail "$FS_BIOSET has no cache"
before=$(bios_outside_cache)

# bad RESULT BIOS ARGS...: $n commands (nvme-pt ARGS), polled and not, each
# completes with RESULT, having taken BIOS bios through fs_bio_set's cache
# and put them back.
n=16
bad() {
	local res=$1 per=$2 poll a0 p0 out
	shift 2
	for poll in "" -p; do
		a0=$(cache_allocs $FS_BIOSET)
		p0=$(cache_stat $FS_BIOSET all put_task)
		out=$(nvme-pt -d /dev/$chr -L $lba -q 4 -n $n $poll -e "$res" "$@") ||
			{ echo "$out"; fail "nvme-pt $poll $*: not every command completed with $res"; }
		echo "$out" | grep -v '^nvme-pt: dev='
		expect_eq "cached allocations for $n commands ($poll $*)" \
			$(($(cache_allocs $FS_BIOSET) - a0)) $((n * per))
		expect_eq "task puts for $n commands ($poll $*)" \
			$(($(cache_stat $FS_BIOSET all put_task) - p0)) $((n * per))
	done
}

bad $EFAULT 1 -o read -b 4k -U
bad $EFAULT 1 -o write -b 4k -U
bad $EINVAL 0 -o read -b ${big}k
bad $EINVAL 0 -o read -b ${big}k -X
# NVMe status: Invalid Command Opcode (SCT 0, SC 0x01) with Do Not Retry
bad $((0x4001)) 1 -o cmd -C 0x7e -b 4k
# NVMe status: LBA Out of Range (SCT 0, SC 0x80) with Do Not Retry
bad $((0x4080)) 1 -o read -b 4k -O $nsbytes -r 4k
bad $EINVAL 0 -o read -b 4k -f 1
# another namespace's ID: each command logs an error; two are enough
n=2
bad $EINVAL 0 -o read -b 4k -N $(($(cat /sys/block/$blk/nsid) + 1))
n=16
line=$(dmesg | grep 'in cmd does not match nsid' | tail -n 1)
[ -n "$line" ] || fail "no 'nsid (N) in cmd does not match' error in dmesg"
log "$line"
bad $EOPNOTSUPP 0 -o read -b 4k -W

for a in 1 2 3; do
	out=$(nvme-pt -d /dev/$chr -L $lba -o verify -b 512 -B 16k -q 4 -r 256k -a $a -p) ||
		{ echo "$out"; fail "verified passthrough IO from a buffer at offset $a failed"; }
	echo "$out"
done

cache_check_balance $FS_BIOSET
h0=$(cache_stat $FS_BIOSET all alloc_hit)
nvme-pt -d /dev/$chr -L $lba -o read -b 4k -q 8 -n 1000 -p > /dev/null ||
	fail "passthrough reads after bad input failed"
hits=$(($(cache_stat $FS_BIOSET all alloc_hit) - h0))
[ "$hits" -ge 900 ] ||
	fail "only $hits of 1000 passthrough reads hit $FS_BIOSET's cache after bad input"
cache_check_balance $FS_BIOSET
expect_bios_outside_cache "bio and biovec objects outside the caches (before: $before)" "$before"
