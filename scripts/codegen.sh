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
info "summary: $md"
