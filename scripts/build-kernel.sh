#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build one variant of the patched tree in its own O= folder.
#
#   scripts/build-kernel.sh VARIANT
#
# The config is `make tinyconfig` plus the variant's fragments from
# scripts/configs/; it is regenerated only when a fragment or the tree
# changed. Every option a fragment asks for must end up in .config, and the
# build must not print a single warning (C, Rust, objtool, linker).
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-kernel.sh VARIANT}
CONFIGS=$TOP/scripts/configs

# Fragments per variant, merged in this order.
case "$variant" in
c | rust) fragments=(base.config "$variant.config" test.config) ;;
# For make bench and make codegen: no statistics, no tests.
c-bench | rust-bench) fragments=(base.config "${variant%-bench}.config" bench.config) ;;
# The whole suite again under KASAN, lockdep, kmemleak and slab debugging.
rust-debug) fragments=(base.config rust.config test.config debug.config) ;;
*) die "unknown variant '$variant' (known: c rust rust-debug c-bench rust-bench)" ;;
esac

o=$(objdir "$variant")
mkdir -p "$o"
[ -d "$SRC/.git" ] || die "no kernel tree at $SRC: run scripts/prepare-tree.sh (make tree) first"

files=()
for f in "${fragments[@]}"; do
	[ -f "$CONFIGS/$f" ] || die "missing config fragment scripts/configs/$f"
	files+=("$CONFIGS/$f")
done

# Rust must be usable before a config with CONFIG_RUST=y means anything.
if ! kmake "$o" -s rustavailable > "$LOGS/rustavailable-$variant.log" 2>&1; then
	cat "$LOGS/rustavailable-$variant.log" >&2
	die "the Rust toolchain is not usable for the kernel (log: $LOGS/rustavailable-$variant.log)"
fi

stamp=$(cat "${files[@]}" | sha1sum | cut -c1-40)-$(git -C "$SRC" rev-parse HEAD)
if [ -f "$o/.config" ] && [ "$(cat "$o/.config.stamp" 2>/dev/null)" = "$stamp" ]; then
	info "config $variant: unchanged"
else
	msg "Configuring $variant: tinyconfig + ${fragments[*]}"
	log=$LOGS/config-$variant.log
	{
		kmake "$o" tinyconfig &&
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
	if [ -n "$unmet" ]; then
		printf '    %s\n' "$unmet" >&2
		die "config $variant: Kconfig did not take the options above (unmet dependencies?); log: $log"
	fi
	echo "$stamp" > "$o/.config.stamp"
	info "config $variant: $(grep -c '=y' "$o/.config") options enabled"
fi

msg "Building $variant kernel in $o (-j$JOBS; a few minutes from scratch)"
log=$LOGS/build-$variant.log
run_logged "$log" "build $variant" kmake "$o" -j"$JOBS" bzImage

# Zero warnings is the baseline of this tree: any warning is new.
if grep -nE '(warning|Warning|WARNING):|too long for kallsyms' "$log" > "$LOGS/warnings-$variant.txt"; then
	sed 's/^/    /' "$LOGS/warnings-$variant.txt" >&2
	die "build $variant printed warnings (above; log: $log)"
fi
rm -f "$LOGS/warnings-$variant.txt"
info "kernel $variant: $o/arch/x86/boot/bzImage ($(du -k "$o/arch/x86/boot/bzImage" | cut -f1) KiB)"
