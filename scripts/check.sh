#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The series' own checks, as KTAP in $RUNS/check/style/host.ktap for
# the summary of `make test` (and `make check`):
#   - `make series` exports it and `git am` applies it to a pristine tree;
#   - every exported patch passes checkpatch.pl --strict;
#   - the Rust code (rust/ and block/bio_cache.rs), its examples (doctests)
#     included, passes rustfmtcheck, CLIPPY=1 and `make rustdoc` without a
#     warning (in $BUILD/o/check, with
#     the rust variant's config, so the variants' objects are left alone);
#   - the misuses in tests/compile-fail do not compile, with the error each
#     names (scripts/compile-fail.py);
#   - the guest's bench program runs the workloads of the one table of them,
#     scripts/workloads.py, and no other (scripts/workloads.py --check);
#   - rust/ and block/ build for a uniprocessor kernel ($BUILD/o/check-up);
#   - the objects the series changes that Debian's config builds (rust/,
#     block/, dm, null_blk, softirq.c, the refcount_interrupt KUnit test)
#     build with it, and bio.o's debug info is sound
#     (scripts/check-debuginfo.sh);
#   - every results table in README.md and docs/ is its rendering from the
#     committed results/ (scripts/render-docs.py --check), every chart in
#     docs/ its drawing (scripts/chart.py --check), every relative link
#     resolves (scripts/check-links.py), and the README
#     stays a README (at most 350 lines).
. "$(dirname "$0")/lib.sh"

run=$RUNS/check/style
rm -rf "$run"
mkdir -p "$run"
results=()
result() { results+=("$1|$2"); }
# took WHAT: says how long WHAT took since the last call.
t_last=$SECONDS
took() { info "$1: $((SECONDS - t_last))s"; t_last=$SECONDS; }

msg "Checking the series: git am, checkpatch --strict, rustfmt, clippy, rustdoc, compile-fail, !SMP"
if out=$(python3 "$TOP/scripts/render-docs.py" --check 2>&1); then
	result "docs: every results table is its rendering from results/" ""
else
	echo "$out" > "$run/render-docs.log"
	result "docs: every results table is its rendering from results/" \
		"$(echo "$out" | sed -n 2p | sed 's/^ *//') and more ($run/render-docs.log)"
fi
if out=$(python3 "$TOP/scripts/chart.py" --check 2>&1); then
	result "docs: every chart is its drawing from results/" ""
else
	result "docs: every chart is its drawing from results/" "$(echo "$out" | head -n 1)"
fi
if out=$(python3 "$TOP/scripts/check-links.py" 2>&1); then
	result "docs: every relative link and anchor resolves" ""
else
	result "docs: every relative link and anchor resolves" "$(echo "$out" | sed -n 2p | sed 's/^ *//')"
fi
lines=$(wc -l < "$TOP/README.md")
result "docs: README.md at most 350 lines" "$([ "$lines" -le 350 ] || echo "$lines lines")"
result "bench: tests/guest/bench/bench.sh runs the workloads of scripts/workloads.py" \
	"$(python3 "$TOP/scripts/workloads.py" --check 2>&1 | paste -sd';' | sed 's/;/; /g')"
if "$TOP/scripts/series.sh" > "$run/series.log" 2>&1; then
	result "series: git am on a pristine tree" ""
	for p in "$BUILD"/series/[0-9]*.patch; do
		name=$(basename "$p" .patch)
		[ "$name" != 0000-cover-letter ] || continue
		# Debian's python3 first: checkpatch runs spdxcheck.py, which needs python3-ply.
		# The tree is Debian's source package, without upstream's history, so
		# checkpatch cannot look up the commits that Fixes: tags name; it still
		# checks their form (GIT_COMMIT_ID).
		# A backport keeps upstream's code and text as upstream merged
		# them: its trailers (a Reported-by without the Closes: checkpatch
		# asks of new patches), its changelog's lines, and what checkpatch
		# says of its code (a BUG_ON(), an extern in a header, a header
		# that names itself, shifts not written BIT(), new files that
		# MAINTAINERS already covers upstream). Those are upstream's to
		# change; the series' own patches get no such allowance.
		ignore=UNKNOWN_COMMIT_ID
		! grep -q '^\[ Backport' "$p" ||
			ignore+=,BAD_REPORTED_BY_LINK,COMMIT_LOG_LONG_LINE,AVOID_BUG,AVOID_EXTERNS,EMBEDDED_FILENAME,BIT_MACRO,FILE_PATH_CHANGES
		out=$(cd "$SRC" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict -q \
			--ignore "$ignore" "$p" 2>&1) || true
		if [ -n "$out" ]; then
			echo "$out" > "$run/checkpatch-$name.log"
			result "checkpatch --strict: $name" "$(echo "$out" | grep -m1 -E '^(ERROR|WARNING|CHECK)') ($run/checkpatch-$name.log)"
		else
			result "checkpatch --strict: $name" ""
		fi
	done
else
	result "series: git am on a pristine tree" "$(tail -n 1 "$run/series.log")"
fi

o=$BUILD/o/check
rust_config=$(objdir rust)/.config
[ -f "$rust_config" ] || die "no rust variant config ($rust_config): make kernel-rust first"
mkdir -p "$o"
# The rust variant's config, plus the examples of the kernel crate compiled
# as KUnit doctests, so that clippy sees them. (They do not go into the
# booted kernels: their symbols, which embed the absolute source path, are
# too long for kallsyms.)
cp "$rust_config" "$o/.config.new"
"$SRC/scripts/config" --file "$o/.config.new" --enable RUST_KERNEL_DOCTESTS
cmp -s "$o/.config.new" "$o/.config.base" || { cp "$o/.config.new" "$o/.config.base"; cp "$o/.config.new" "$o/.config"; }

# rust_check NAME LOG make-args...: passes if make succeeds without warnings.
rust_check() {
	local name=$1 log=$run/$2
	shift 2
	if kmake "$o" "$@" > "$log" 2>&1 && ! grep -qE '^(warning|error)(\[|:)' "$log"; then
		result "$name" ""
	else
		result "$name" "$(grep -m1 -E '^(warning|error)' "$log" || tail -n 1 "$log") ($log)"
	fi
}
took "series, git am and checkpatch"
kmake "$o" olddefconfig > "$run/config.log" 2>&1 || die "configuring $o failed ($run/config.log)"
rust_check "rustfmtcheck" rustfmt.log rustfmtcheck
# Rebuild the Rust crates, and the Rust side of block/bio.c, under clippy
# (their .o are in $o only).
rm -f "$o"/rust/*.o "$o"/block/bio_cache.o
rust_check "CLIPPY=1" clippy.log -j"$JOBS" CLIPPY=1 rust/ block/bio_cache.o
rust_check "rustdoc" rustdoc.log -j"$JOBS" rustdoc
took "rustfmt, clippy and rustdoc"

# Misuses of the Rust abstractions that must not compile (tests/compile-fail),
# each compiled as block/bio_cache.rs is in $o.
while IFS= read -r r; do
	results+=("$r")
done < <(python3 "$TOP/scripts/compile-fail.py" "$o" "$RUSTC" "$TOP"/tests/compile-fail/*.rs 2>&1 ||
	echo "compile-fail: the checker ran|failed (see above)")
took "compile-fail"

# The Rust cache on a uniprocessor kernel (!SMP, where nr_cpu_ids is the
# constant NR_CPUS and CONFIG_FORCE_NR_CPUS is set): the Rust crates and
# block/ compile, statistics included.
up=$BUILD/o/check-up
mkdir -p "$up"
{
	cat "$TOP/scripts/configs/base.config" "$TOP/scripts/configs/rust.config"
	echo "# CONFIG_SMP is not set"
	echo "CONFIG_BIO_ALLOC_CACHE_STATS=y"
} > "$run/up.config"
if { kmake "$up" tinyconfig && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$up" "$up/.config" \
	"$run/up.config" && kmake "$up" olddefconfig; } > "$run/up-config.log" 2>&1 &&
	grep -qx 'CONFIG_FORCE_NR_CPUS=y' "$up/.config" && grep -qx 'CONFIG_BIO_ALLOC_CACHE_RUST=y' "$up/.config"; then
	o_saved=$o o=$up
	rust_check "uniprocessor (!SMP, FORCE_NR_CPUS): rust/ and block/ build" up-build.log -j"$JOBS" rust/ block/
	o=$o_saved
else
	result "uniprocessor (!SMP, FORCE_NR_CPUS): rust/ and block/ build" "configuring failed ($run/up-config.log)"
fi
took "the uniprocessor build"

# The distro-shaped kernel (Debian's config, scripts/debian-config.sh): the
# objects the series changes that this config builds compile without a
# warning, in rust-distro's folder, and bio.o's debug info passes
# scripts/check-debuginfo.sh. dm-crypt and sg are modules in Debian's
# config, which the distro-shaped variants leave out; the headers the
# series changes are compiled by all of these. The whole kernel, booted
# and tested, is make test-distro.
distro_objs="rust/ block/ drivers/md/dm.o drivers/md/dm-table.o drivers/block/null_blk/main.o"
distro_objs+=" kernel/softirq.o kernel/irq/refcount_interrupt_test.o"
name="rust-distro (Debian's config): the objects the series changes build"
if BUILD_TARGETS=$distro_objs "$TOP/scripts/build-kernel.sh" rust-distro \
	> "$run/distro-build.log" 2>&1; then
	result "$name" ""
	if "$TOP/scripts/check-debuginfo.sh" rust-distro > "$run/debuginfo.log" 2>&1; then
		result "rust-distro: bio.o's debug info (one C unit, verified, BTF, gdb)" ""
	else
		result "rust-distro: bio.o's debug info (one C unit, verified, BTF, gdb)" \
			"$(grep -m1 '^error:' "$run/debuginfo.log") ($run/debuginfo.log)"
	fi
else
	result "$name" "$(grep -m1 '^error:' "$run/distro-build.log") ($run/distro-build.log)"
fi
took "the distro-shaped build and its debug info"

write_ktap "$run/host.ktap" "${results[@]}"
failed=$(grep -c '^not ok' "$run/host.ktap" || true)
grep '^not ok' "$run/host.ktap" | sed 's/^/    /' >&2 || true
info "checks: ${#results[@]} run, $failed failed"
