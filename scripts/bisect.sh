#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the series at every patch, as git bisect would meet it: the rust
# variant at each, and the c variant too where a patch changes what it
# compiles (C, Kconfig, make files, scripts/). One git worktree of the tree
# ($BUILD/bisect/linux) moves from patch to patch, and each variant keeps
# one O= folder, so a step rebuilds what that patch changed. Same rules as
# every build (scripts/build-kernel.sh): the variant's fragments, and not a
# single warning; a fragment's option that the tree does not define yet
# (the cache's Kconfig choice before the patch that adds it) is allowed to
# be missing. Before the patch that lets Debian
# 12's bindgen build Rust, Kconfig cannot enable CONFIG_RUST with it: such a
# patch is built as the c variant without Rust, as a bisection with these
# tools meets it. Last line: "N of N patches build".
#
# Each step is recorded with its patch's content key (scripts/serieskeys.py),
# and $BUILD/bisect/bisect.meta.json is rewritten after every step: a run
# over part of the series (FIRST, LAST), or one stopped half-way, records
# what it built, and scripts/record.sh bisect merges it with earlier runs.
# The docs count a patch as building only while its key is unchanged.
#
#   scripts/bisect.sh [FIRST [LAST]]    patches FIRST..LAST (default 1..N)
. "$(dirname "$0")/lib.sh"

first=${1:-1}
WT=$BUILD/bisect/linux
BO=$BUILD/bisect/o
BL=$BUILD/bisect/logs

git -C "$SRC" rev-parse -q --verify series > /dev/null ||
	die "no branch 'series' in $SRC: run scripts/prepare-tree.sh (make tree) first"
n=$(git -C "$SRC" rev-list --count base..series)
last=${2:-$n}
[ "$first" -ge 1 ] && [ "$first" -le "$n" ] || die "FIRST must be 1..$n"
[ "$last" -ge "$first" ] && [ "$last" -le "$n" ] || die "LAST must be $first..$n"
# The content key of each patch; the tree must hold the series of patches/.
mapfile -t keys < <(python3 "$TOP/scripts/serieskeys.py" | cut -f3)
[ "${#keys[@]}" = "$n" ] ||
	die "$SRC has $n patches on base, patches/series ${#keys[@]}: run make tree first"
[ "$(git -C "$SRC" rev-parse series)" = "$(cat "$SRC/.git/biocache-applied" 2>/dev/null)" ] ||
	die "the branch 'series' of $SRC is not patches/ as applied: run make reset-tree first"

if [ ! -e "$WT/.git" ]; then
	mkdir -p "$BUILD/bisect"
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$WT" base ||
		die "could not add the worktree $WT of $SRC"
fi
# Whether the O= folders are kept from an earlier run (each step then
# rebuilds less), for the record.
kept=empty
[ ! -f "$BO/rust/.config" ] || kept=kept
mkdir -p "$BO" "$BL"
rm -f "$BL"/*.log "$BUILD/bisect/steps.tsv"

# Whether patch $1 (a commit) changes what the c variant compiles: C,
# assembly, Kconfig or make files outside rust/ (not documentation, not
# MAINTAINERS, not Rust).
touches_c() {
	git -C "$SRC" diff-tree --no-commit-id --name-only -r "$1" | grep -v '^rust/' |
		grep -qE '\.(c|h|S|lds)$|(^|/)(Kconfig[^/]*|Makefile[^/]*|Kbuild)$|^scripts/|\.kunitconfig$'
}

range=""
[ "$first" = 1 ] && [ "$last" = "$n" ] || range=" FIRST=$first LAST=$last"
command="make bisect$range"
# The run's provenance, with its result so far: rewritten after each step.
write_meta() {
	local result="$built of $((k - first + 1)) patches build"
	[ "$k" = "$last" ] || result+=" (stopped after patch $k of $first-$last)"
	meta_json "$BUILD/bisect/bisect.meta.json" "$command" $((SECONDS - start)) \
		"result=$result" "o_folders=$kept" "first=$first" "last=$k" "patches=$n"
}
rm -f "$BUILD/bisect/bisect.meta.json"

msg "Building the series at patches $first-$last of $n (rust; c where a patch touches C)"
start=$SECONDS built=0 failed=()
for ((k = first; k <= last; k++)); do
	commit=$(git -C "$SRC" rev-parse "series~$((n - k))")
	subject=$(git -C "$SRC" log -1 --format=%s "$commit")
	git -C "$WT" checkout -q --detach --force "$commit" ||
		die "could not check out patch $k ($commit) in $WT"
	variants=rust
	! touches_c "$commit" || variants="rust c"
	# Whether this tree's `make rustavailable` takes Debian 12's bindgen.
	norust=""
	mkdir -p "$BO/rust"
	SRC=$WT kmake "$BO/rust" -s rustavailable > "$BL/rustavailable.out" 2>&1 || {
		norust=" without Rust (rustavailable refuses the toolchain)"
		variants=c
	}
	ok=1 line=""
	for v in $variants; do
		t=$SECONDS
		if SRC=$WT OBJ_ROOT=$BO LOGS=$BL KCONFIG_UNDEFINED_OK=1 RUST_UNAVAILABLE_OK=1 \
			PROGRESS_EVERY=600 "$TOP/scripts/build-kernel.sh" "$v" > "$BL/step.out" 2>&1; then
			line+=" $v $((SECONDS - t))s$norust"
		else
			ok=0
			log=$BL/patch-$(printf %02d "$k")-$v.log
			{ cat "$BL/step.out"; echo; cat "$BL/build-$v.log" 2>/dev/null; } > "$log"
			line+=" $v FAILED (log: $log)"
		fi
	done
	printf '    %2d/%d %-62.62s%s\n' "$k" "$n" "$subject" "$line" >&2
	if [ "$ok" = 1 ]; then
		built=$((built + 1))
	else
		failed+=("$k")
	fi
	# For scripts/record.sh bisect: a row per patch, and the provenance.
	printf '%d\t%s\t%s\t%s\t%s\n' "$k" "$subject" "${keys[k - 1]}" "$ok" "${line# }" \
		>> "$BUILD/bisect/steps.tsv"
	write_meta
done
rm -f "$BL/step.out" "$BL/rustavailable.out"
info "$(((SECONDS - start) / 60)) min for patches $first-$last"
[ "${#failed[@]}" = 0 ] || info "patches that do not build: ${failed[*]}"
echo "$built of $((last - first + 1)) patches build"
[ "${#failed[@]}" = 0 ]
