#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: the cost of the two caches, in guest instructions.
#
# Builds c-bench and rust-bench (the variants without statistics or tests,
# plus the microbenchmark), boots them under TCG with -icount
# shift=0,sleep=off, so that the guest clock counts instructions, and runs
# tests/guest/bench/bench.sh in three configurations: on the C cache, on the
# Rust cache, and on the C kernel with bio_alloc_cache=off, each in BOOTS
# boots (default 2). The repetitions of one boot agree to 1-2 instructions per
# IO, but two boots of one kernel can differ by 3-4 (null_blk at QD 1), as
# much as the C and Rust kernels do: the figures are medians over every
# boot's repetitions, and the C cache's second boot against its first is the
# noise floor against which the Rust/C figures are read.
# scripts/bench-report.py turns the results into a table, $BUILD/bench.json
# and $BUILD/bench.svg. The NVMe is backed by QEMU's null-co driver, which
# completes IO at once, but in a bottom half of QEMU's main loop: QEMU runs
# in lockstep with the guest (run-guest.sh -l, scripts/qemu-lockstep.sh) so
# that polling for it costs the same number of instructions every time.
. "$(dirname "$0")/lib.sh"

# name kernel extra-command-line
configs=(
	"c c-bench"
	"rust rust-bench"
	"off c-bench bio_alloc_cache=off"
)
boots=${BOOTS:-2}
[[ $boots =~ ^[1-9][0-9]*$ ]] || die "BOOTS=$boots: expected a number of boots, 1 or more"
for k in c-bench rust-bench; do
	"$TOP/scripts/build-kernel.sh" "$k"
done
"$TOP/scripts/mkinitramfs.sh"

runs=()
for c in "${configs[@]}"; do
	read -r name kernel args <<< "$c"
	paths=
	for b in $(seq "$boots"); do
		run=bench-$name-$b
		ACCEL=tcg NVME=null "$TOP/scripts/run-guest.sh" -l -n "$run" -t bench -T 3600 \
			-q "-icount shift=0,sleep=off" -a "$args" "$kernel" ||
			die "bench on $name, boot $b, failed (results: $BUILD/runs/$kernel/$run)"
		paths+=${paths:+,}$BUILD/runs/$kernel/$run/results.ktap
	done
	runs+=("$name=$paths")
done
python3 "$TOP/scripts/bench-report.py" --json "$BUILD/bench.json" --svg "$BUILD/bench.svg" \
	"${runs[@]}"
