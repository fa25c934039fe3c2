#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian 12 packages the build, the guest and the tests need.
# Idempotent: apt-get runs only when a package is missing.
. "$(dirname "$0")/lib.sh"

PKGS=(
	# the kernel tree we patch, and Debian's own config of it (the distro-shaped
	# variants)
	linux-source-6.12 linux-config-6.12
	# kernel build: LLVM=-22, clang, lld and the LLVM tools of the LLVM major
	# rustc-web is built with (C helpers and the Rust cache are inlined
	# through LLVM bitcode); bindgen 0.60.1 needs libclang 14
	make gcc libc6-dev clang-22 lld-22 llvm-22 libclang1-14 flex bison bc cpio
	libelf-dev libssl-dev perl python3 python3-ply python3-git ccache
	# pahole, for BTF (Debian's config has DEBUG_INFO_BTF), and gdb, which
	# scripts/check-debuginfo.sh runs on the distro-shaped kernels
	dwarves gdb
	rustc-web rust-web-src rustfmt-web rust-web-clippy bindgen
	# guest and workload
	qemu-system-x86 busybox-static fio liburing-dev dmsetup e2fsprogs
	# make bench's chart
	gnuplot-nox
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${st:0:2}" = ii ] || missing+=("$p")
done

if [ ${#missing[@]} = 0 ]; then
	info "Debian packages: all ${#PKGS[@]} present"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "missing Debian packages (${missing[*]}); run as root or install them"
msg "Installing ${#missing[@]} Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
run_logged "$LOGS/apt.log" "apt-get update" apt-get update
run_logged "$LOGS/apt.log.install" "apt-get install" \
	apt-get install -y --no-install-recommends "${missing[@]}"
