#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: the cost of the two caches, in guest instructions.
#
# Builds c-bench and rust-bench (the variants without statistics or tests,
# plus the microbenchmark), boots them under TCG with -icount
# shift=0,sleep=off, so that the guest clock counts instructions, and runs
# tests/guest/bench/bench.sh three times: on the C cache, on the Rust cache,
# and on the C kernel with bio_alloc_cache=off. scripts/bench-report.py turns
# the results into a table, $BUILD/bench.json and $BUILD/bench.svg. The NVMe
# is backed by QEMU's null-co driver, which completes IO at once, but in a
# bottom half of QEMU's main loop: QEMU runs in lockstep with the guest
# (run-guest.sh -l, scripts/qemu-lockstep.sh) so that polling for it costs
# the same number of instructions every time.
. "$(dirname "$0")/lib.sh"

# name kernel extra-command-line
configs=(
	"c c-bench"
	"rust rust-bench"
	"off c-bench bio_alloc_cache=off"
)
for k in c-bench rust-bench; do
	"$TOP/scripts/build-kernel.sh" "$k"
done
"$TOP/scripts/mkinitramfs.sh"

runs=()
for c in "${configs[@]}"; do
	read -r name kernel args <<< "$c"
	ACCEL=tcg NVME=null "$TOP/scripts/run-guest.sh" -l -n "bench-$name" -t bench -T 3600 \
		-q "-icount shift=0,sleep=off" -a "$args" "$kernel" ||
		die "bench on $name failed (results: $BUILD/runs/$kernel/bench-$name)"
	runs+=("$name=$BUILD/runs/$kernel/bench-$name/results.ktap")
done
python3 "$TOP/scripts/bench-report.py" --json "$BUILD/bench.json" --svg "$BUILD/bench.svg" \
	"${runs[@]}"
