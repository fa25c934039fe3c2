#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The KUnit suite the kernel's way: tools/testing/kunit/kunit.py with the
# series' block/.kunitconfig, under QEMU (x86_64), with this project's
# toolchain.
#
#   scripts/kunit.sh [c|rust]      (default: c; rust adds the Rust cache)
#
# kunit.py configures its own kernel from the fragment (no tinyconfig, no
# test.config), builds it in $BUILD/kunit/IMPL, boots it with two CPUs (the
# suite's CPU-dead and cross-CPU cases need a second one) and parses the
# KTAP itself. Not part of make test: the guest tests run the same suite on
# every boot. Equivalent by hand, from $SRC:
#   tools/testing/kunit/kunit.py run --kunitconfig=block --arch=x86_64 \
#       --qemu_args='-smp 2' --make_options LLVM=-22 [RUST toolchain options]
. "$(dirname "$0")/lib.sh"

impl=${1:-c}
args=(--kunitconfig=block --arch=x86_64 --qemu_args='-smp 2' --jobs="$JOBS"
	--build_dir="$BUILD/kunit/$impl" --timeout=600
	--make_options "LLVM=$LLVM_SUFFIX" --make_options "CC=$KCC")
case $impl in
c) ;;
rust)
	args+=(--kconfig_add CONFIG_RUST=y --kconfig_add CONFIG_BIO_ALLOC_CACHE_RUST=y
		--make_options "RUSTC=$RUSTC" --make_options "BINDGEN=$BINDGEN"
		--make_options "RUSTFMT=$RUSTFMT" --make_options "RUSTDOC=$RUSTDOC"
		--make_options "CLIPPY_DRIVER=$CLIPPY_DRIVER")
	;;
*) die "usage: scripts/kunit.sh [c|rust]" ;;
esac
[ -f "$SRC/block/.kunitconfig" ] || die "no $SRC/block/.kunitconfig: the tree lacks the series (make tree)"
mkdir -p "$BUILD/kunit"
log=$LOGS/kunit-$impl.log
msg "kunit.py run --kunitconfig=block ($impl), in $BUILD/kunit/$impl"
start=$SECONDS
rc=0
(cd "$SRC" && python3 tools/testing/kunit/kunit.py run "${args[@]}") 2>&1 | tee "$log" || rc=$?
# pipefail (lib.sh): rc is kunit.py's status, not tee's
[ "$rc" = 0 ] || die "kunit.py failed (log: $log)"
info "kunit.py ($impl): $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s (log: $log)"
