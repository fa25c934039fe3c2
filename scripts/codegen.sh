#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make codegen`: what the compilers made of the two caches.
#
# Builds c-bench and rust-bench (same flags, no statistics, no tests),
# compares the machine code of each path of the cache (scripts/codegen.py:
# listings in $BUILD/codegen/, a summary on stdout and in $BUILD/codegen.md)
# and runs scripts/bloat-o-meter on block/bio.o and vmlinux. DISTRO=1: the
# same for c-distro-bench and rust-distro-bench (Debian's config), in
# $BUILD/codegen-distro/ and $BUILD/codegen-distro.md.
. "$(dirname "$0")/lib.sh"

case "${DISTRO:-0}" in
0) sfx="" ;;
1) sfx=-distro ;;
*) die "DISTRO=$DISTRO: expected 0 (the test kernels) or 1 (the distro-shaped kernels)" ;;
esac
t0=$SECONDS
for k in "c$sfx-bench" "rust$sfx-bench"; do
	"$TOP/scripts/build-kernel.sh" "$k"
done
c=$(objdir "c$sfx-bench")
r=$(objdir "rust$sfx-bench")
out=$BUILD/codegen$sfx
md=$BUILD/codegen$sfx.md
rm -rf "$out"

msg "Comparing the code of the cache paths (listings in $out)"
python3 "$TOP/scripts/codegen.py" "$c/vmlinux" "$r/vmlinux" "$out" "$md"

for f in block/bio.o vmlinux; do
	{
		echo
		echo "## scripts/bloat-o-meter $f (c$sfx-bench -> rust$sfx-bench)"
		echo
		echo '```'
		"$SRC/scripts/bloat-o-meter" "$c/$f" "$r/$f"
		echo '```'
	} | tee -a "$md"
done
# What recorded figures need: the commit, the command, bloat-o-meter's totals.
totals=()
for f in block/bio.o vmlinux; do
	t=$("$SRC/scripts/bloat-o-meter" "$c/$f" "$r/$f" | sed -n 's/^Total: Before=\([0-9]*\), After=\([0-9]*\),.*/\1 \2/p')
	totals+=("${f//\//_}=${t// /->}")
done
meta_json "$BUILD/codegen$sfx.meta.json" "make codegen${sfx:+ DISTRO=1}" $((SECONDS - t0)) "${totals[@]}"
info "summary: $md"

