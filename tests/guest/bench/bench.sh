# SPDX-License-Identifier: GPL-2.0
# The workloads of `make bench`, for a guest under -icount shift=0,sleep=off,
# where the guest clock counts instructions: every figure below is a number
# of guest instructions. Each prints "RESULT name=... rep=N ops=N ns=N"
# lines for scripts/bench.sh, REPS repetitions after one warm-up run.
#  - polled 512-byte random reads, registered file and fixed buffers, at
#    QD 128 in batches of 32 (the shape of the seed's t/io_uring -b512 -d128
#    -c32 -s32 -p1 -F1 -B1) and at QD 1, on null_blk and on the emulated NVMe;
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
on_cpu="taskset -c $(($(nproc) - 1))"
bench=/sys/kernel/debug/block/bio_alloc_cache_bench
nullb_create bench queue_mode=2 submit_queues=1 poll_queues=2 size=1024 blocksize=512
for i in $(seq 50); do [ -b /dev/nvme0n1 ] && break; sleep 0.2; done

# io NAME DEV QD BATCH IOS
io() {
	local r out
	for r in $(seq 0 "$reps"); do
		out=$($on_cpu uring-io -d "/dev/$2" -o read -p -F -X -b 512 -q "$3" -c "$4" -r 1G -n "$5") ||
			{ echo "$out"; fail "$1 failed"; }
		[ "$r" = 0 ] && continue	# warm-up
		echo "RESULT name=$1 rep=$r ops=$(field ios "$out") ns=$(field ns "$out")"
	done
}

# micro MODE LOOPS
micro() {
	local r out
	for r in $(seq 0 "$reps"); do
		$on_cpu sh -c "echo '$1 $2' > $bench" || fail "microbenchmark $1 failed"
		out=$(cat "$bench")
		[ "$r" = 0 ] && continue
		echo "RESULT name=pair-$1 rep=$r ops=$(field loops "$out") ns=$(field ns "$out")"
	done
}

# Repetitions long enough (0.6 s and 0.1 s of guest clock at QD 128 and
# QD 1) that no single periodic event in the guest moves a figure by 1%: at a
# tenth of that, NVMe figures spread 1-3%.
io nullb-qd128 bench 128 32 200000
io nullb-qd1 bench 1 1 20000
io nvme-qd128 nvme0n1 128 32 200000
io nvme-qd1 nvme0n1 1 1 20000
[ -w "$bench" ] || fail "no $bench (CONFIG_BIO_ALLOC_CACHE_BENCH?)"
if ! grep -qw bio_alloc_cache=off /proc/cmdline; then
	micro hit 100000
	micro splice 100000
fi
micro off 100000
