#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: the cost of the two caches, in guest instructions.
#
# Builds c-bench and rust-bench (the variants without statistics or tests,
# plus the microbenchmark), boots them under TCG with -icount
# shift=0,sleep=off, so that the guest clock counts instructions, and runs
# tests/guest/bench/bench.sh in four configurations: on the C cache and on
# the Rust cache with bio_alloc_cache=all (6.19's rule), on the C cache with
# 6.12's rule (the default), and on the C kernel with bio_alloc_cache=off,
# each in BOOTS boots (default 2). The figures are medians over every boot's
# repetitions, and the C kernel's second boot read against its first is the
# noise floor against which the Rust/C figures are read.
# Every boot first runs tests/guest/bench/smoke.sh, verified IO through each
# of the cache's users on that kernel and rule (these kernels, without
# statistics, are the configuration a distribution ships, which the guest
# tests never boot): a failure there fails make bench before anything is
# measured.
# scripts/bench-report.py turns the results into a table, $BUILD/bench.json
# and $BUILD/bench.svg. DISTRO=1 does the same on the distro-shaped kernels
# (c-distro-bench, rust-distro-bench: Debian's config), into
# $BUILD/bench-distro.json and .svg, and prints the C cache's saving there
# beside the test kernels' (from $BUILD/bench.json, if make bench ran). The NVMe is backed by QEMU's null-co driver, which
# completes IO at once, but in a bottom half of QEMU's main loop: QEMU runs
# in lockstep with the guest (run-guest.sh -l, scripts/qemu-lockstep.sh) so
# that polling for it costs the same number of instructions every time.
. "$(dirname "$0")/lib.sh"

# What is measured runs on CPU 0 (tests/guest/bench/bench.sh); the last CPU
# is taken out of the scheduler's domains and away from unmanaged IRQs, so
# that nothing but its tick runs there: under -icount it shares the clock,
# and QEMU's vcpu-insns plugin counts what it executes in every measured
# window (scripts/bench-report.py flags a window above 0.2%). The figures still
# differ from boot to boot: one kernel's take one of two or three values per
# boot, a few instructions per IO apart (docs/results.md shows their
# ratio, the "C, 2nd / 1st boot" column), as far apart as the two caches,
# hence the BOOTS and the noise floor.
isolate="isolcpus=$((${SMP:-2} - 1)) irqaffinity=0"
case "${DISTRO:-0}" in
0) sfx="" ;;
1) sfx=-distro ;;
*) die "DISTRO=$DISTRO: expected 0 (the test kernels) or 1 (the distro-shaped kernels)" ;;
esac
ck=c$sfx-bench rk=rust$sfx-bench
# name kernel extra-command-line
# c and rust run 6.19's rule (every bio the bio_set can cache is cached),
# c612 the C kernel under 6.12's (the default: only bios that ask), off no
# cache at all: polled IO is cached under both rules, interrupt-driven
# io_uring IO on a block device too; ext4's bios only under 6.19's.
configs=(
	"c $ck $isolate bio_alloc_cache=all"
	"rust $rk $isolate bio_alloc_cache=all"
	"c612 $ck $isolate"
	"off $ck $isolate bio_alloc_cache=off"
)
t0=$SECONDS
boots=${BOOTS:-2}
[[ $boots =~ ^[1-9][0-9]*$ ]] || die "BOOTS=$boots: expected a number of boots, 1 or more"
for k in "$ck" "$rk"; do
	"$TOP/scripts/build-kernel.sh" "$k"
done
"$TOP/scripts/mkinitramfs.sh"
# QEMU's vcpu-insns plugin: each vCPU's instructions in every measured
# window, so that a window in which the other CPU worked is flagged by what
# it executed, not by where its ticks sampled it.
plugin=$BUILD/tools/vcpu-insns.so
gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$plugin" "$TOP/tests/bench/vcpu-insns.c" ||
	die "building QEMU's vcpu-insns plugin (tests/bench/vcpu-insns.c) failed"

# Boots in turn (c, rust, c612, off, c, rust, ...), so that whatever drifts
# between boots falls on every configuration alike.
declare -A paths
for b in $(seq "$boots"); do
	for c in "${configs[@]}"; do
		read -r name kernel args <<< "$c"
		run=bench-$name-$b
		ACCEL=tcg NVME=null "$TOP/scripts/run-guest.sh" -l -n "$run" -t smoke,bench -T 4500 \
			-q "-icount shift=0,sleep=off -plugin $plugin -d plugin -D $RUNS/$kernel/$run/vcpu-insns.log" \
			-a "$args" "$kernel" ||
			die "bench on $name, boot $b, failed: its smoke test or a workload (above; results: $RUNS/$kernel/$run)"
		paths[$name]+=${paths[$name]:+,}$RUNS/$kernel/$run/results.ktap
	done
done
runs=()
for c in "${configs[@]}"; do
	read -r name _ <<< "$c"
	runs+=("$name=${paths[$name]}")
done
beside=()
[ -z "$sfx" ] || [ ! -f "$BUILD/bench.json" ] || beside=(--beside "$BUILD/bench.json")
python3 "$TOP/scripts/bench-report.py" --json "$BUILD/bench$sfx.json" --svg "$BUILD/bench$sfx.svg" \
	"${beside[@]}" "${runs[@]}"
meta_json "$BUILD/bench$sfx.meta.json" "make bench${sfx:+ DISTRO=1}${BOOTS:+ BOOTS=$BOOTS}" \
	$((SECONDS - t0)) "boots=$boots"
