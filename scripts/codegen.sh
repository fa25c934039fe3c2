#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make codegen`: what the compilers made of the two caches.
#
# Builds c-bench and rust-bench (same flags, no statistics, no tests),
# compares the machine code of each path of the cache (scripts/codegen.py:
# listings in $BUILD/codegen/, a summary on stdout and in $BUILD/codegen.md)
# and runs scripts/bloat-o-meter on block/bio.o and vmlinux.
. "$(dirname "$0")/lib.sh"

for k in c-bench rust-bench; do
	"$TOP/scripts/build-kernel.sh" "$k"
done
c=$(objdir c-bench)
r=$(objdir rust-bench)
out=$BUILD/codegen
md=$BUILD/codegen.md
rm -rf "$out"

msg "Comparing the code of the cache paths (listings in $out)"
python3 "$TOP/scripts/codegen.py" "$c/vmlinux" "$r/vmlinux" "$out" "$md"

for f in block/bio.o vmlinux; do
	{
		echo
		echo "## scripts/bloat-o-meter $f (c-bench -> rust-bench)"
		echo
		echo '```'
		"$SRC/scripts/bloat-o-meter" "$c/$f" "$r/$f"
		echo '```'
	} | tee -a "$md"
done
info "summary: $md"
