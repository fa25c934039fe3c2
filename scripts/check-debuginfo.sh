#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Check the debug info of a kernel built with it (the distro-shaped variants:
# DWARF 5 and BTF), where the Rust cache's bitcode is linked into bio.o.
#
#   scripts/check-debuginfo.sh VARIANT
#
# On block/bio.o: its DWARF is one C compile unit, from block/bio.c, and
# nothing of Rust (no Rust unit, no .rs file in the line table) since the
# Rust code linked into it is compiled without debug info; llvm-dwarfdump
# --verify finds no error; pahole encodes its BTF without a word and finds
# struct bio in it; gdb lists bio_put() from block/bio.c. On vmlinux, if it
# was linked: it has BTF, in which pahole finds struct bio_set, and gdb lists
# bio_put() from block/bio.c. Fails with the first problem and its tool's
# output.
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: check-debuginfo.sh VARIANT}
o=$(objdir "$variant")
obj=$o/block/bio.o
dwarfdump=llvm-dwarfdump$LLVM_SUFFIX
for t in "$dwarfdump" pahole gdb; do
	command -v "$t" >/dev/null || die "$t is missing (make deps)"
done
[ -f "$obj" ] || die "no $obj: build $variant first"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { printf '%s\n' "$2" | head -n 20 | sed 's/^/    | /' >&2; die "debug info of $variant: $1"; }

# One compile unit, of C, from block/bio.c; nothing of Rust.
"$dwarfdump" --debug-info "$obj" > "$tmp/info" 2>&1 || fail "llvm-dwarfdump failed on $obj" "$(cat "$tmp/info")"
units=$(grep -c 'DW_TAG_compile_unit' "$tmp/info" || true)
[ "$units" = 1 ] || fail "$obj has $units compile units, not 1 (block/bio.c)" \
	"$(grep -A6 DW_TAG_compile_unit "$tmp/info")"
grep -A8 DW_TAG_compile_unit "$tmp/info" | grep -q 'DW_AT_language.*DW_LANG_C' ||
	fail "the compile unit of $obj is not C" "$(grep -A8 DW_TAG_compile_unit "$tmp/info")"
grep -A8 DW_TAG_compile_unit "$tmp/info" | grep -q 'DW_AT_name.*block/bio\.c' ||
	fail "the compile unit of $obj is not block/bio.c" "$(grep -A8 DW_TAG_compile_unit "$tmp/info")"
! grep -qiE 'DW_LANG_Rust|rustc version' "$tmp/info" ||
	fail "$obj describes Rust code" "$(grep -iE 'DW_LANG_Rust|rustc version' "$tmp/info")"
"$dwarfdump" --debug-line "$obj" > "$tmp/line" 2>&1 || fail "llvm-dwarfdump --debug-line failed" "$(cat "$tmp/line")"
! grep -qE 'name: "[^"]*\.rs"' "$tmp/line" ||
	fail "the line table of $obj names Rust sources" "$(grep -E 'name: "[^"]*\.rs"' "$tmp/line")"
"$dwarfdump" --verify "$obj" > "$tmp/verify" 2>&1 ||
	fail "llvm-dwarfdump --verify found errors in $obj" "$(cat "$tmp/verify")"

# BTF from the object's DWARF, as pahole makes it for vmlinux.
out=$(pahole -J --btf_encode_detached="$tmp/bio.btf" "$obj" 2>&1) && [ -z "$out" ] ||
	fail "pahole -J on $obj failed or warned" "$out"
pahole -F btf -C bio "$tmp/bio.btf" 2>&1 | grep -q '^struct bio {' ||
	fail "the BTF pahole made from $obj has no struct bio" "$(pahole -F btf -C bio "$tmp/bio.btf" 2>&1)"

# gdb finds bio_put() in block/bio.c. Its sources are looked up from this
# O= folder only, not from the compile directory the DWARF names: with
# ccache's base_dir, that can be another clone's folder, with other sources.
list_bio_put() {
	gdb -batch -nx -ex "set directories $o" -ex 'list bio_put' "$1" 2>&1
}
out=$(list_bio_put "$obj")
grep -qE '^[0-9]+[[:space:]]+([a-z_]+ )*void bio_put\(struct bio \*bio\)' <<< "$out" ||
	fail "gdb's 'list bio_put' on $obj does not show bio_put() of block/bio.c" "$out"

checked="bio.o"
if [ -f "$o/vmlinux" ] && [ "$o/vmlinux" -nt "$obj" ]; then
	checked="bio.o and vmlinux"
	pahole -F btf -C bio_set "$o/vmlinux" 2>&1 | grep -q '^struct bio_set {' ||
		fail "vmlinux has no BTF with struct bio_set" "$(pahole -F btf -C bio_set "$o/vmlinux" 2>&1)"
	out=$(list_bio_put "$o/vmlinux")
	grep -qE '^[0-9]+[[:space:]]+([a-z_]+ )*void bio_put\(struct bio \*bio\)' <<< "$out" ||
		fail "gdb's 'list bio_put' on vmlinux does not show bio_put() of block/bio.c" "$out"
fi
info "debug info of $variant ($checked): one C unit and nothing of Rust in bio.o, verified," \
	"BTF encoded, gdb lists bio_put()"
