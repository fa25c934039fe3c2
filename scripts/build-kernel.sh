#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build one variant of the patched tree in its own O= folder.
#
#   scripts/build-kernel.sh VARIANT
#
# The config is `make tinyconfig` plus the variant's fragments from
# scripts/configs/, or, for the distro-shaped variants, Debian's own config
# of this kernel (scripts/debian-config.sh) plus theirs; it is regenerated
# only when a fragment, the Debian config or the tree changed. Every option
# a fragment asks for must end up in .config (what Kconfig changed of
# Debian's config is listed in $LOGS/config-VARIANT-debian.txt), and the
# build must not print a single warning (C, Rust, objtool, linker, pahole).
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-kernel.sh VARIANT}
CONFIGS=$TOP/scripts/configs

# Fragments per variant, merged in this order; "debian" is Debian's config.
case "$variant" in
c | rust) fragments=(base.config "$variant.config" test.config) ;;
# For make bench and make codegen: no statistics, no tests.
c-bench | rust-bench) fragments=(base.config "${variant%-bench}.config" bench.config) ;;
# The whole suite again under KASAN, lockdep, kmemleak and slab debugging,
# with either cache.
c-debug | rust-debug) fragments=(base.config "${variant%-debug}.config" test.config debug.config) ;;
# The kernel Debian ships, with either cache: the default profile's tests,
# and (-bench) make bench DISTRO=1 and make codegen DISTRO=1.
c-distro | rust-distro) fragments=(debian distro.config "${variant%-distro}.config" test.config) ;;
c-distro-bench | rust-distro-bench)
	fragments=(debian distro.config "${variant%-distro-bench}.config" bench.config) ;;
*) die "unknown variant '$variant' (known: c rust c-debug rust-debug c-bench rust-bench c-distro rust-distro c-distro-bench rust-distro-bench)" ;;
esac

o=$(objdir "$variant")
mkdir -p "$o"
[ -e "$SRC/.git" ] || die "no kernel tree at $SRC: run scripts/prepare-tree.sh (make tree) first"

files=() debian=""
for f in "${fragments[@]}"; do
	if [ "$f" = debian ]; then
		debian=$BUILD/configs/debian.config
		"$TOP/scripts/debian-config.sh" "$debian"
		continue
	fi
	[ -f "$CONFIGS/$f" ] || die "missing config fragment scripts/configs/$f"
	files+=("$CONFIGS/$f")
done

# Rust must be usable before a config with CONFIG_RUST=y means anything.
# RUST_UNAVAILABLE_OK=1 (scripts/bisect.sh): a tree in which it is not, the
# series before the patch that accepts Debian 12's bindgen, is built as
# Kconfig would leave it, without Rust: the fragments' Rust options go.
if ! kmake "$o" -s rustavailable > "$LOGS/rustavailable-$variant.log" 2>&1; then
	[ "${RUST_UNAVAILABLE_OK:-0}" = 1 ] || {
		cat "$LOGS/rustavailable-$variant.log" >&2
		die "the Rust toolchain is not usable for the kernel (log: $LOGS/rustavailable-$variant.log)"
	}
	info "Rust is not usable in this tree (log: $LOGS/rustavailable-$variant.log): $variant without CONFIG_RUST"
	mkdir -p "$o/fragments-norust"
	for i in "${!files[@]}"; do
		grep -v RUST "${files[$i]}" > "$o/fragments-norust/${files[$i]##*/}"
		files[i]=$o/fragments-norust/${files[$i]##*/}
	done
	echo '# CONFIG_RUST is not set' > "$o/fragments-norust/norust.config"
	files+=("$o/fragments-norust/norust.config")
fi

stamp=$(cat $debian "${files[@]}" | sha1sum | cut -c1-40)-$(git -C "$SRC" rev-parse HEAD)
if [ -f "$o/.config" ] && [ "$(cat "$o/.config.stamp" 2>/dev/null)" = "$stamp" ]; then
	info "config $variant: unchanged"
else
	base=tinyconfig
	[ -z "$debian" ] || base="Debian's config"
	msg "Configuring $variant: $base + ${fragments[*]/#debian/}"
	# The folder no longer holds the kernel it held (see objdir()).
	rm -f "$o/.variant"
	log=$LOGS/config-$variant.log
	{
		if [ -n "$debian" ]; then
			cp "$debian" "$o/.config"
		else
			kmake "$o" tinyconfig
		fi &&
			"$SRC/scripts/kconfig/merge_config.sh" -m -O "$o" "$o/.config" "${files[@]}" &&
			kmake "$o" olddefconfig
	} > "$log" 2>&1 || { tail -n 20 "$log" >&2; die "configuring $variant failed (log: $log)"; }

	# merge_config only warns when Kconfig drops a value; that is an error here.
	unmet=$(cat "${files[@]}" | sed -nE 's/^(CONFIG_[A-Za-z0-9_]+=.*)$/\1/p; s/^# (CONFIG_[A-Za-z0-9_]+) is not set$/\1=n/p' |
		while IFS= read -r want; do
			opt=${want%%=*}
			case "$want" in
			*=n) ! grep -q "^$opt=" "$o/.config" || echo "$want (got $(grep "^$opt=" "$o/.config"))" ;;
			*) grep -qxF "$want" "$o/.config" || echo "$want (got: $(grep -E "^(# )?$opt[= ]" "$o/.config" || echo unset))" ;;
			esac
		done)
	# KCONFIG_UNDEFINED_OK=1 (scripts/bisect.sh): an option that no Kconfig
	# file of the tree defines yet may be missing.
	if [ -n "$unmet" ] && [ "${KCONFIG_UNDEFINED_OK:-0}" = 1 ]; then
		unmet=$(while IFS= read -r line; do
			sym=${line%%=*}
			! git -C "$SRC" grep -qE "^[[:space:]]*(menu)?config ${sym#CONFIG_}[[:space:]]*$" -- '*Kconfig*' ||
				echo "$line"
		done <<< "$unmet")
	fi
	if [ -n "$unmet" ]; then
		printf '    %s\n' "$unmet" >&2
		die "config $variant: Kconfig did not take the options above (unmet dependencies?); log: $log"
	fi
	# What Kconfig changed of Debian's config: options the fragments set,
	# and those it cannot keep with this compiler and Rust (their
	# dependencies say why); a list, not an error.
	if [ -n "$debian" ]; then
		python3 "$TOP/scripts/config-diff.py" "$SRC" "$debian.package" "$o/.config" \
			"${files[@]}" > "$LOGS/config-$variant-debian.txt"
		info "config $variant, what differs from Debian's (list: $LOGS/config-$variant-debian.txt):"
		info "$(head -n 1 "$LOGS/config-$variant-debian.txt" | cut -c3-)"
	fi
	echo "$stamp" > "$o/.config.stamp"
	info "config $variant: $(grep -c '=y' "$o/.config") options enabled"
fi

# BUILD_TARGETS: build those (e.g. "rust/ block/") instead of the kernel.
targets=${BUILD_TARGETS:-bzImage}
# What a build took on this project's machines (2 cores), for the message:
# make from an empty ccache (results/make-cold.json at ea417a5c4108) built
# c in 11m03s, then rust in 3m12s, the C objects of both coming from the
# same preprocessed source; make bisect's incremental steps took 70-110 s.
if [ ! -f "$o/vmlinux" ]; then
	case "$variant" in
	*-distro*) how="the whole of Debian's built-in code: most of an hour from scratch" ;;
	*) how="from scratch: about 11 minutes on 2 cores with an empty ccache,"
	   how+=" about 3 once another variant's build filled it" ;;
	esac
else
	how="incremental: one to two minutes for a change to a few files, more for a header"
fi
msg "Building $variant: $targets in $o (-j$JOBS; $how)"
log=$LOGS/build-$variant.log
run_logged "$log" "build $variant" kmake "$o" -j"$JOBS" $targets

# Zero warnings is the baseline of this tree: any warning is new. On kernels
# with BTF that includes what pahole and resolve_btfids say while making it,
# less what scripts/btf-diagnostics.py shows to be about assembly or Rust
# units (pahole 1.24 knows neither clang's DW_TAG_label nor Rust's types,
# and leaves both out of BTF), or about struct module in a kernel without
# modules; bio.o is checked on its own by scripts/check-debuginfo.sh.
grep -nE '(warning|Warning|WARNING|WARN):|too long for kallsyms' "$log" > "$LOGS/warnings-$variant.txt" || true
# resolve_btfids' lines are judged with pahole's, below, where they can be.
if [ -f "$o/vmlinux" ] && grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$o/.config"; then
	sed -i '/^[0-9]*:WARN: resolve_btfids: /d' "$LOGS/warnings-$variant.txt"
fi
if [ -s "$LOGS/warnings-$variant.txt" ]; then
	sed 's/^/    /' "$LOGS/warnings-$variant.txt" >&2
	die "build $variant printed warnings (above; log: $log)"
fi
if [ -f "$o/vmlinux" ] && grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$o/.config"; then
	python3 "$TOP/scripts/btf-diagnostics.py" "$log" "$o/vmlinux" "$LLVM_SUFFIX" \
		> "$LOGS/warnings-$variant.txt" || {
		sed '1d; s/^/    /' "$LOGS/warnings-$variant.txt" >&2
		die "build $variant: pahole or resolve_btfids said the above (log: $log)"
	}
	known=$(sed -n '1s/^known //p' "$LOGS/warnings-$variant.txt")
	[ "$known" = 0 ] || info "build $variant: $known lines of pahole and resolve_btfids, all about" \
		"assembly or Rust units or struct module (scripts/btf-diagnostics.py)"
fi
rm -f "$LOGS/warnings-$variant.txt"
if [ -n "${BUILD_TARGETS:-}" ]; then exit 0; fi
# The distro-shaped kernels' debug info, Rust's part in bio.o above all.
if grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$o/.config"; then
	"$TOP/scripts/check-debuginfo.sh" "$variant"
fi
echo "$variant" > "$o/.variant"
info "kernel $variant: $o/arch/x86/boot/bzImage ($(du -k "$o/arch/x86/boot/bzImage" | cut -f1) KiB)"
