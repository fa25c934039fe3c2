# SPDX-License-Identifier: GPL-2.0
# The workloads of `make bench`, for a guest under -icount shift=0,sleep=off,
# where the guest clock counts instructions: every figure below is a number
# of guest instructions. Each prints "RESULT name=... rep=N ops=N ns=N
# busy=N ticks=N" lines for scripts/bench.sh, REPS repetitions after one
# warm-up run; busy and ticks are the other CPUs' busy and elapsed ticks in
# the timed window (read by uring-io and nvme-pt around their timed loop;
# around the write for the microbenchmark), since both vCPUs share the
# instruction clock.
#  - polled 512-byte random reads, registered file and fixed buffers, at
#    QD 128 in batches of 32 (the shape of the seed's t/io_uring -b512 -d128
#    -c32 -s32 -p1 -F1 -B1) and at QD 1, on null_blk and on the emulated
#    NVMe, then through dm-linear over that null_blk (dm's bio_set), and as
#    NVMe passthrough commands (fs_bio_set);
#  - interrupt-driven reads, the same shapes without IOPOLL, on a null_blk
#    with hrtimer completions and on the NVMe;
#  - ext4 on a null_blk with hrtimer completions: 4 KiB O_DIRECT reads of a
#    file through io_uring, not polled (upstream's 6.19 measurement, t/io_uring
#    -p0 on ext4), at QD 128 and 1, with pread(2), and 4 KiB writes each
#    followed by fsync(2);
#  - the in-kernel microbenchmark, /sys/kernel/debug/block/
#    bio_alloc_cache_bench: bio_alloc_bioset() + bio_put() pairs on the hit
#    path, on the IRQ-list splice path, and without the cache.
# timeout: 3000
. /tests/lib.sh

reps=${BENCH_REPS:-5}
# What is measured runs on the last CPU, away from CPU 0's housekeeping
# (the shell, the kworkers and timers bound there): on CPU 0, the null_blk
# figure without a cache at QD 128 spread 1.7% between repetitions in one
# boot; on CPU 1, 0.22%.
mcpu=$(($(nproc) - 1))
bench=/sys/kernel/debug/block/bio_alloc_cache_bench
nullb_create bench queue_mode=2 submit_queues=1 poll_queues=2 size=1024 blocksize=512
nullb_create benchirq queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=1000 size=1024 blocksize=512
nullb_create benchfs queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=1000 memory_backed=1 size=256
for i in $(seq 50); do [ -b /dev/nvme0n1 ] && [ -c /dev/ng0n1 ] && break; sleep 0.2; done

# dm-linear over the polled null_blk (its first table has the cache since
# patch 11).
table="0 $(blockdev --getsz /dev/bench) linear /dev/bench 0"
dmsetup create bclin --table "$table" || fail "dmsetup create failed"
dm=mapper/bclin

# ext4, with a file whose blocks are written (O_DIRECT reads of unwritten
# extents do no IO).
ext4_mkfs benchfs
mkdir -p /mnt/bench
mount -t ext4 /dev/benchfs /mnt/bench || fail "mount failed"
dd if=/dev/zero of=/mnt/bench/file bs=1M count=64 conv=fsync 2> /dev/null || fail "dd failed"

# others_busy: busy and elapsed ticks of every CPU but the measured one,
# for the microbenchmark (uring-io and nvme-pt read them themselves).
others_busy() {
	awk -v m="cpu$mcpu" '$1 ~ /^cpu[0-9]+$/ && $1 != m {
		b += $2 + $3 + $4 + $7 + $8 + $9; t += $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9
	} END { print b + 0, t + 0 }' /proc/stat
}

# result NAME REP OPS NS BUSY TICKS: a RESULT line.
result() {
	echo "RESULT name=$1 rep=$2 ops=$3 ns=$4 busy=$5 ticks=$6"
}

# run NAME PROGRAM ARGS...: REPS measured runs of PROGRAM (uring-io or
# nvme-pt) on the measured CPU (or on $cpu, if not empty), after a warm-up.
# The program reads the other CPUs' ticks just around its timed loop
# (obusy, oticks), leaving its setup and teardown out.
run() {
	local name=$1 r out
	shift
	for r in $(seq 0 "$reps"); do
		out=$(taskset -c "${cpu:-$mcpu}" "$@") || { echo "$out"; fail "$name failed"; }
		[ "$r" = 0 ] && continue	# warm-up
		result "$name" "$r" "$(field ios "$out")" "$(field ns "$out")" \
			"$(field obusy "$out")" "$(field oticks "$out")"
	done
}

# io NAME DEV QD BATCH IOS [ARGS...]: 512-byte random reads through io_uring.
io() {
	local name=$1 dev=$2 qd=$3 batch=$4 n=$5
	shift 5
	run "$name" uring-io -d "/dev/$dev" -o read -F -X -b 512 -q "$qd" -c "$batch" -r 1G \
		-n "$n" "$@"
}

# micro MODE LOOPS
micro() {
	local r out before after
	for r in $(seq 0 "$reps"); do
		before=$(others_busy)
		taskset -c "$mcpu" sh -c "echo '$1 $2' > $bench" || fail "microbenchmark $1 failed"
		out=$(cat "$bench")
		[ "$r" = 0 ] && continue
		after=$(others_busy)
		result "pair-$1" "$r" "$(field loops "$out")" "$(field ns "$out")" \
			$((${after% *} - ${before% *})) $((${after#* } - ${before#* }))
	done
}

# Repetitions long enough (0.6 s and 0.1 s of guest clock at QD 128 and
# QD 1) that no single periodic event in the guest moves a figure by 1%: at a
# tenth of that, NVMe figures spread 1-3%.
io nullb-qd128 bench 128 32 200000 -p
io nullb-qd1 bench 1 1 20000 -p
io nvme-qd128 nvme0n1 128 32 200000 -p
io nvme-qd1 nvme0n1 1 1 20000 -p
io dm-qd128 "$dm" 128 32 200000 -p
io dm-qd1 "$dm" 1 1 20000 -p
run pt-qd128 nvme-pt -d /dev/ng0n1 -o read -p -F -X -L 512 -b 512 -q 128 -c 32 -r 16M -n 200000
# Polled passthrough at QD 1 runs on CPU 0. blk-mq leaves isolated CPUs out
# of every hardware queue's cpumask (blk_mq_map_swqueue()), so a request
# that is not issued from a plug (blk_execute_rq_nowait() of a single
# command) is dispatched by kblockd on CPU 0; under QEMU's round-robin TCG,
# CPU 0 takes that wakeup only when the polling CPU's turn ends, at the
# next timer deadline: about 4 ms per command (README, "Polled passthrough
# at QD 1"). At QD 128 io_uring submits in batches, through a plug, which
# issues them directly.
cpu=0
run pt-qd1 nvme-pt -d /dev/ng0n1 -o read -p -F -X -L 512 -b 512 -q 1 -c 1 -r 16M -n 20000
cpu=""
io nullb-irq-qd128 benchirq 128 32 100000
io nullb-irq-qd1 benchirq 1 1 10000
io nvme-irq-qd128 nvme0n1 128 32 100000
io nvme-irq-qd1 nvme0n1 1 1 10000
run ext4-dio-qd128 uring-io -d /mnt/bench/file -o read -F -X -b 4k -q 128 -c 32 -n 100000
run ext4-dio-qd1 uring-io -d /mnt/bench/file -o read -F -X -b 4k -q 1 -c 1 -n 10000
run ext4-psync-qd1 uring-io -d /mnt/bench/file -o pread -b 4k -n 10000
run ext4-fsync uring-io -d /mnt/bench/file -o fsync -b 4k -n 2000
[ -w "$bench" ] || fail "no $bench (CONFIG_BIO_ALLOC_CACHE_BENCH?)"
if ! grep -qw bio_alloc_cache=off /proc/cmdline; then
	micro hit 100000
	micro splice 100000
fi
micro off 100000
umount /mnt/bench
dmsetup remove bclin
