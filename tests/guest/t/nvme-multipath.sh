# SPDX-License-Identifier: GPL-2.0
# The cache through NVMe's multipath head (CONFIG_NVME_MULTIPATH=y, Debian's
# default): a namespace shared by the two controllers of one subsystem
# (biocachemp) is a head disk, nvmeXnY, whose bios nvme_ns_head_submit_bio()
# sends down one path (a hidden disk per controller) with REQ_NVME_MPATH;
# its character device takes passthrough commands for whichever path is
# live.
#  - Polled O_DIRECT on the head, verified: N reads take N bios from the
#    direct-IO bio_set's cache and put N back on the task list; polled
#    (fewer NVMe interrupts than N/10), though the bio was remapped to a
#    path.
#  - Passthrough on the head's character device, verified, polled and not:
#    N reads = N cached allocations from fs_bio_set, N task puts.
#  - Failover: verified IO on the head, polled and not, while NVMe's fault
#    injection (debugfs, per path; the head's I/O policy round-robin, so
#    that both paths carry IO) completes K of each path's requests with a
#    path error (Host Pathing Error, 0x370, retryable): nvme_failover_req()
#    steals their bios, requeues them on the head (polled ones lose
#    REQ_POLLED and are completed by interrupt) and resubmits them. K faults
#    injected per path (2K in all), no IO error, both workers progress;
#    then each path's controller is reset in turn under the same IO. The
#    direct-IO bio_set and fs_bio_set balance, the bio slabs hold what they
#    held before.
. /tests/lib.sh

# path_error_seen WHEN: a worker one of whose IOs ended in ENOLINK fails
# the test, named, whether it has stopped yet or not. ENOLINK is what a
# request that ends with a path error (Host Pathing Error:
# BLK_STS_TRANSPORT) completes with; the head fails such a request over
# instead, so none may reach userspace. A worker that stopped otherwise is
# left to workers_alive.
path_error_seen() {
	local when=$1 n errs
	for n in $WORKERS; do
		errs=$(uring_errnos "/tmp/$n.out")
		case ", $errs, " in
		*", ENOLINK, "*)
			tail -n 3 "/tmp/$n.out" | sed "s/^/$n: /"
			fail "a path error reached worker $n $when: its IO on $head ended in ENOLINK" \
				"(errnos: $errs)"
			;;
		esac
	done
}

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu"
nvme_find_head biocachemp 1 2
head=$NVME_BLK chr=$NVME_CHR
paths=$NVME_PATHS
log "multipath head /dev/$head (/dev/$chr), paths: $(echo $paths)"
nvme_keeps_writes "$head"
lba=$(cat /sys/block/$head/queue/logical_block_size)
[ "$(cat /sys/block/$head/queue/io_poll)" = 1 ] || fail "$head cannot poll"
cache_has $FS_BIOSET || fail "$FS_BIOSET has no cache"
before=$(bios_outside_cache)

# block IO, polled, verified, then counted
polled_verify $head -b 512 -B 16k -q 8 -r 4M
n=$(scaled 1000)
taskset -c $cpu uring-io -d /dev/$head -o read -b 4k -q 1 -n 100 -p > /dev/null ||
	fail "polled reads on $head failed"
snap=$(cache_snap $DIO_BIOSET)
irq0=$(nvme_irqs)
out=$(taskset -c $cpu uring-io -d /dev/$head -o read -b 4k -q 1 -n $n -p) ||
	{ echo "$out"; fail "polled reads on $head failed"; }
irqs=$(($(nvme_irqs) - irq0))
cache_delta $DIO_BIOSET "$snap"
expect_eq "$DIO_BIOSET cached allocations for $n polled reads of $head" $D_allocs $n
expect_eq "$DIO_BIOSET task puts for $n polled reads of $head" $D_put_task $n
[ "$irqs" -lt $((n / 10)) ] || fail "$n polled reads of $head, $irqs NVMe interrupts: not polled"

# passthrough on the head, verified, then counted
for poll in "" -p; do
	out=$(nvme-pt -d /dev/$chr -L $lba -o verify -b 512 -B 16k -q 8 -r 2M $poll) ||
		{ echo "$out"; fail "verified passthrough IO ${poll:+(IOPOLL) }on $chr failed"; }
	echo "$out"
	pt_reads_counted $cpu $chr $lba $n "$n passthrough reads${poll:+ (IOPOLL)} on $chr" $poll
done

# failover: path errors injected on each path, then each path's controller
# reset, under IO on the head
worker_start mpoll all $head 0 -r 4M -p -q 8
worker_start mirq all $head 4M -r 4M -q 8
# round-robin, so that both paths carry IO (numa keeps to one)
echo round-robin > /sys/block/$head/device/iopolicy || fail "cannot set $head's iopolicy"
workers_alive "before the failovers"
k=$(scaled 40)
for p in $paths; do
	f=$p/fault_inject
	[ -d /sys/kernel/debug/$f ] || fail "no /sys/kernel/debug/$f (CONFIG_FAULT_INJECTION_DEBUG_FS?)"
	# the status first: fault_setup turns the injection on
	echo 0x370 > /sys/kernel/debug/$f/status
	echo 0 > /sys/kernel/debug/$f/dont_retry
	fault_setup $f 10 $k
done
for i in $(seq 300); do
	n=0
	for p in $paths; do n=$((n + $(fault_injected $p/fault_inject $k))); done
	[ $n -lt $((2 * k)) ] || break
	sleep 0.1
done
for p in $paths; do
	log "path $p: $(fault_injected $p/fault_inject $k) path errors injected"
	fault_off $p/fault_inject
done
path_error_seen "while path errors were injected"
expect_eq "path errors injected in 30s" $n $((2 * k))
path_error_seen "after $n path errors"
workers_alive "after $n path errors"
for p in $paths; do
	ctrl=$(basename "$(readlink -f /sys/block/$p/device)")
	[ -w /sys/class/nvme/$ctrl/reset_controller ] || fail "path $p: no controller to reset"
	echo 1 > /sys/class/nvme/$ctrl/reset_controller || fail "resetting $ctrl failed"
	for i in $(seq 100); do
		[ "$(cat /sys/class/nvme/$ctrl/state)" = live ] && break
		sleep 0.1
	done
	expect_eq "$ctrl state after its reset" "$(cat /sys/class/nvme/$ctrl/state)" live
	path_error_seen "after resetting $ctrl (path $p)"
	workers_alive "after resetting $ctrl (path $p)"
done
workers_stop
path_error_seen "by the end of the failovers"
workers_check

cache_check_bound $DIO_BIOSET
cache_check_balance $DIO_BIOSET
cache_check_balance $FS_BIOSET
expect_bios_outside_cache "bio, biovec and payload objects outside the caches (before: $before)" \
	"$before"
