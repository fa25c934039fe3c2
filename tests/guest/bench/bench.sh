# SPDX-License-Identifier: GPL-2.0
# The workloads of `make bench`, for a guest under -icount shift=0,sleep=off,
# where the guest clock counts instructions: every figure below is a number
# of guest instructions. Each prints "RESULT name=... rep=N ops=N ns=N
# busy=N ticks=N" lines for scripts/bench.sh, a warm-up run (rep=0, left
# out of the figures) and REPS repetitions; busy and ticks are the other
# CPUs' busy and elapsed ticks in the timed window (read by uring-io and
# nvme-pt around their timed loop; around the write for the
# microbenchmark), since both vCPUs share the instruction clock. Each
# window is also marked for QEMU's vcpu-insns plugin (window_begin() and
# window_end() in uring-io and nvme-pt, window-mark around the
# microbenchmark's write), which counts what every vCPU executed in it: one
# pair of marks per RESULT line, in order.
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
#    path, on the IRQ-list splice path, and without the cache;
#  - "witness": polled null_blk reads while the isolated CPU spins, which
#    the report must flag.
# timeout: 3000
. /tests/lib.sh

# uring-io, nvme-pt and window-mark execute their marks only when asked
# (tests/src/window-mark.h): the smoke test before this one runs them too.
export BENCH_WINDOW=1

reps=${BENCH_REPS:-5}
# What is measured runs on CPU 0, with the work it defers (kworkers, jbd2,
# the interrupts: irqaffinity=0); the last CPU is isolated (isolcpus=, from
# scripts/bench.sh) and must stay idle but for its tick, which QEMU's
# vcpu-insns plugin checks in every window. (Until the plugin showed it, the
# workloads were meant to run on the isolated CPU, pinned to the last CPU
# $(nproc) counted: under isolcpus= it counts only the CPUs init may run on,
# so they ran on CPU 0 all along. The isolated CPU is the wrong place anyway:
# blk-mq leaves it out of every hardware queue's cpumask, so the work of an
# IO issued there moves to CPU 0, as what "the other CPU" executes; see
# docs/results.md, "Polled passthrough at QD 1".)
mcpu=0
bench=/sys/kernel/debug/block/bio_alloc_cache_bench
nullb_create bench queue_mode=2 submit_queues=1 poll_queues=2 size=1024 blocksize=512
nullb_create benchirq queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=1000 size=1024 blocksize=512
nullb_create benchfs queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=1000 memory_backed=1 size=256
# the NVMe on QEMU's null-co backend (the other one is the smoke test's)
nvme_find biocache0 1
nvme=$NVME_BLK ng=$NVME_CHR

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

# run NAME PROGRAM ARGS...: a warm-up and REPS measured runs of PROGRAM
# (uring-io or nvme-pt) on the measured CPU.
# The program reads the other CPUs' ticks just around its timed loop
# (obusy, oticks), leaving its setup and teardown out.
run() {
	local name=$1 r out
	shift
	for r in $(seq 0 "$reps"); do
		out=$(taskset -c "$mcpu" "$@") || { echo "$out"; fail "$name failed"; }
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
		taskset -c "$mcpu" sh -c "window-mark begin && echo '$1 $2' > $bench && window-mark end" ||
			fail "microbenchmark $1 failed"
		after=$(others_busy)
		out=$(cat "$bench")
		result "pair-$1" "$r" "$(field loops "$out")" "$(field ns "$out")" \
			$((${after% *} - ${before% *})) $((${after#* } - ${before#* }))
	done
}

# Each NAME below (pair-MODE for micro MODE) is a row of
# scripts/workloads.py, with the label the report and the docs print for it:
# make check fails on one that is not, and scripts/bench-report.py on its
# RESULT lines.
# Repetitions long enough (0.6 s and 0.1 s of guest clock at QD 128 and
# QD 1) that no single periodic event in the guest moves a figure by 1%: at a
# tenth of that, NVMe figures spread 1-3%.
io nullb-qd128 bench 128 32 200000 -p
io nullb-qd1 bench 1 1 20000 -p
io nvme-qd128 "$nvme" 128 32 200000 -p
io nvme-qd1 "$nvme" 1 1 20000 -p
io dm-qd128 "$dm" 128 32 200000 -p
io dm-qd1 "$dm" 1 1 20000 -p
run pt-qd128 nvme-pt -d "/dev/$ng" -o read -p -F -X -L 512 -b 512 -q 128 -c 32 -r 16M -n 200000
run pt-qd1 nvme-pt -d "/dev/$ng" -o read -p -F -X -L 512 -b 512 -q 1 -c 1 -r 16M -n 20000
io nullb-irq-qd128 benchirq 128 32 100000
io nullb-irq-qd1 benchirq 1 1 10000
io nvme-irq-qd128 "$nvme" 128 32 100000
io nvme-irq-qd1 "$nvme" 1 1 10000
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
# The witness seen to work, in every boot: null_blk reads as above, with a
# busy loop on the isolated CPU; scripts/bench-report.py fails if QEMU's
# count leaves more than one of these windows unflagged (WITNESS_MAX_UNFLAGGED).
taskset -c "$(cpus_all | tail -n 1)" sh -c 'while :; do :; done' &
spin=$!
# spinning before the first window opens
sleep 0.1
io witness bench 1 1 20000 -p
kill "$spin"
wait "$spin" 2> /dev/null || true
umount /mnt/bench
dmsetup remove bclin
