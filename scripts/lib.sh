# SPDX-License-Identifier: GPL-2.0
# Shared by the scripts in this folder; sourced, never run.
#
# Paths and the toolchain are set here once. Every variable can be
# overridden from the environment (the top-level Makefile exports them).

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The upstream version is pinned in the top-level Makefile, nowhere else.
KVER=${KVER:-$(sed -n 's/^KVER[[:space:]]*:=[[:space:]]*//p' "$TOP/Makefile")}
BUILD=${BUILD:-$TOP/build}
SRC=${SRC:-$BUILD/linux}
LOGS=${LOGS:-$BUILD/logs}
# Where the O= folders of the kernels and the guest runs go (make mutants
# keeps its own, beside them).
OBJ_ROOT=${OBJ_ROOT:-$BUILD/o}
RUNS=${RUNS:-$BUILD/runs}
JOBS=${JOBS:-$(($(nproc) + 1))}

# Debian 12's tools, named explicitly: another rustc (rustup's) may come first
# on PATH, and bindgen 0.60 must load libclang 14 (it panics on newer ones).
RUSTC=${RUSTC:-/usr/bin/rustc}
RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
RUSTFMT=${RUSTFMT:-/usr/bin/rustfmt}
CLIPPY_DRIVER=${CLIPPY_DRIVER:-/usr/bin/clippy-driver}
BINDGEN=${BINDGEN:-/usr/bin/bindgen}
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}

# One LLVM for C and Rust: clang, lld and the LLVM tools of the major version
# rustc-web is built with (22), so that C helpers can be inlined into Rust
# through LLVM bitcode (CONFIG_RUST_INLINE_HELPERS) and both variants share
# one C compiler. LLVM=-22 makes Kbuild use clang-22, ld.lld-22, llvm-ar-22...
export LLVM_SUFFIX=${LLVM_SUFFIX:--22}
CLANG=clang$LLVM_SUFFIX

# ccache for the C side; paths below $BUILD are hashed relative to it so that
# a fresh clone elsewhere still hits the cache.
if [ "${CCACHE:-1}" = 1 ] && command -v ccache >/dev/null; then
	KCC="ccache $CLANG"
	export CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=1
	export CCACHE_IGNOREOPTIONS="-fmacro-prefix-map=* -ffile-prefix-map=*"
else
	KCC=$CLANG
fi

mkdir -p "$LOGS"

msg() { printf '==> %s\n' "$*" >&2; }
info() { printf '    %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# provenance: this repository's commit, "-dirty" added if a tracked file
# outside results/ differs from it: what every recorded figure names.
provenance() {
	local c
	c=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; return 0; }
	git -C "$TOP" diff --quiet HEAD -- . ':!results' || c+=-dirty
	echo "$c"
}

# meta_json FILE COMMAND SECONDS [KEY=VALUE...]: the provenance of a run, as
# JSON: commit, command, date, how long it took, and any KEY=VALUE pairs.
meta_json() {
	python3 - "$@" "commit=$(provenance)" <<-'EOF'
		import json, sys, time
		out, command, secs, *kv = sys.argv[1:]
		meta = {"command": command, "seconds": int(secs),
		        "date": time.strftime("%Y-%m-%d", time.gmtime())}
		meta.update(x.split("=", 1) for x in kv)
		json.dump(meta, open(out, "w"), indent=1)
		EOF
}

# The O= folder of a build variant; its .variant says which kernel it holds
# once built.
objdir() { echo "$OBJ_ROOT/$1"; }

# make in the kernel tree with the pinned toolchain.
# MAKEFLAGS emptied: it carries the variables given to this repository's make
# (make mutants M=NAME) into the kernel's, where M= means an external module.
kmake() {
	local o=$1; shift
	MAKEFLAGS= MFLAGS= MAKELEVEL= make -C "$SRC" O="$o" LLVM="$LLVM_SUFFIX" CC="$KCC" \
		RUSTC="$RUSTC" RUSTDOC="$RUSTDOC" RUSTFMT="$RUSTFMT" \
		CLIPPY_DRIVER="$CLIPPY_DRIVER" BINDGEN="$BINDGEN" "$@"
}

# Run "$@" with output to log file $1, printing a progress line every
# $PROGRESS_EVERY seconds (the log's last line), and the log's tail on failure.
run_logged() {
	local log=$1 what=$2; shift 2
	local start=$SECONDS rc=0 ticker
	: > "$log"
	(
		while sleep "${PROGRESS_EVERY:-30}"; do
			printf '    [%s] %dm%02ds: %s\n' "$what" $(((SECONDS - start) / 60)) \
				$(((SECONDS - start) % 60)) "$(tail -n 1 "$log" | cut -c1-100)" >&2
		done
	) &
	ticker=$!
	"$@" >> "$log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
	if [ "$rc" != 0 ]; then
		tail -n 40 "$log" | sed 's/^/    | /' >&2
		die "$what failed (exit $rc); full log: $log"
	fi
	info "$what done in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s (log: $log)"
}

# write_ktap FILE "name|failure"...: a KTAP document with one result per
# argument, "ok" where the failure text after "|" is empty.
write_ktap() {
	local file=$1 i=0 r
	shift
	{
		echo "KTAP version 1"
		echo "1..$#"
		for r in "$@"; do
			i=$((i + 1))
			if [ -z "${r#*|}" ]; then echo "ok $i ${r%%|*}"; else echo "not ok $i ${r%%|*} # ${r#*|}"; fi
		done
	} > "$file"
}
