#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's initramfs ($BUILD/initramfs.cpio) from tests/initramfs.list
# plus what is only known here: the Debian binaries' shared libraries and the
# tests.
. "$(dirname "$0")/lib.sh"

OUT=$BUILD/initramfs
CPIO=$BUILD/initramfs.cpio
mkdir -p "$OUT" "$BUILD/tools"
[ -f "$SRC/usr/gen_init_cpio.c" ] || die "no kernel tree at $SRC: run make tree first"

# Test programs: static, against Debian's liburing.a.
for c in "$TOP"/tests/src/*.c; do
	bin=$OUT/$(basename "$c" .c)
	gcc -static -O2 -g -Wall -Wextra -Werror -o "$bin" "$c" -luring ||
		die "building $(basename "$c") failed"
done

gcc -O2 -o "$BUILD/tools/gen_init_cpio" "$SRC/usr/gen_init_cpio.c" ||
	die "building usr/gen_init_cpio failed"

list=$OUT/initramfs.list
{
	cat "$TOP/tests/initramfs.list"

	# Debian's binaries the tests run, with the shared libraries they need:
	# fio, dmsetup (libdevmapper) for the device-mapper tests, mke2fs and
	# e2fsck for the ext4 tests.
	bins=()
	for b in fio dmsetup mke2fs e2fsck; do
		path=$(PATH=$PATH:/usr/sbin:/sbin command -v "$b") || die "no $b on this machine (make deps)"
		bins+=("$path")
	done
	echo "# ${bins[*]} and their shared libraries"
	for b in "${bins[@]}"; do
		echo "file $b $b 0755 0 0"
	done
	libs=$(for b in "${bins[@]}"; do ldd "$b"; done |
		sed -nE 's|^[[:space:]]*([^ ]+ => )?(/[^ ]+) \(0x.*|\2|p' | sort -u)
	for lib in $libs; do
		d=$(dirname "$lib")
		while [ "$d" != / ]; do echo "$d"; d=$(dirname "$d"); done
	done | sort -u | while read -r d; do echo "dir $d 0755 0 0"; done
	for lib in $libs; do
		echo "file $lib $(readlink -f "$lib") 0755 0 0"
	done

	echo "# the tests and workloads"
	for d in t bench; do
		echo "dir /tests/$d 0755 0 0"
		for t in "$TOP"/tests/guest/$d/*.sh; do
			echo "file /tests/$d/$(basename "$t") $t 0644 0 0"
		done
	done
} > "$list"

# gen_init_cpio rejects a dir that exists already; keep the first of each.
awk '$1 != "dir" || !seen[$2]++' "$list" > "$list.tmp" && mv "$list.tmp" "$list"

TOP=$TOP OUT=$OUT "$BUILD/tools/gen_init_cpio" "$list" > "$CPIO.tmp" 2> "$LOGS/initramfs.log" ||
	{ cat "$LOGS/initramfs.log" >&2; die "gen_init_cpio failed (list: $list)"; }
mv "$CPIO.tmp" "$CPIO"
info "initramfs: $CPIO ($(du -k "$CPIO" | cut -f1) KiB, $(grep -c '^file' "$list") files)"
