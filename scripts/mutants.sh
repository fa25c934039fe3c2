#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put each of the cache's historical bugs back, one at a time, and check that
# the suite catches it.
#
#   scripts/mutants.sh [NAME...]      (default: every tests/mutants/*.patch)
#   scripts/mutants.sh --table [NAME...]   the table of the last runs, again
#
# A mutant is a patch onto the series-applied tree with a header:
#   # Mutant:   what it breaks
#   # Bug:      the bug it re-introduces
#   # Upstream: the commit that fixed it upstream ("-" for this project's own)
#   # Variants: the kernels it applies to (c, rust or both)
#   # Tests:    the guest tests that must catch it; "kunit" is the KUnit suite
#               of the default boot
# For every variant it names, the patch is applied, the kernel built
# incrementally in its own O= folder (a copy of the variant's, under
# $BUILD/mutants/o, kept between runs, so the variant's own kernel is never
# touched), the tree restored, and the tests run on that kernel. A mutant is killed when a test
# fails; the table (mutant, variant, upstream, the first failed test and its
# failure line) is printed and written to $BUILD/mutants/table.md. Exit
# status 1 if any mutant survived; 2 if a mutant did not apply or build.
. "$(dirname "$0")/lib.sh"

MUTANTS=$TOP/tests/mutants
MUT=$BUILD/mutants
# Every mutant's tests also run the KUnit suite (default boot), with this
# test to carry it.
CARRIER=cache-hits

hdr() { sed -n "s/^# $2: *//p" "$1" | head -n 1; }

TABLE_ONLY=0
if [ "${1:-}" = --table ]; then
	TABLE_ONLY=1
	shift
fi
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for f in "$MUTANTS"/*.patch; do names+=("$(basename "$f" .patch)"); done
fi
for n in "${names[@]}"; do
	f=$MUTANTS/$n.patch
	[ -f "$f" ] || die "no mutant '$n' in tests/mutants"
	for h in Mutant Bug Upstream Variants Tests; do
		[ -n "$(hdr "$f" "$h")" ] || die "tests/mutants/$n.patch has no '# $h:' line"
	done
done

# row NAME VARIANT: the table's row for that run (from its logs), in ROWS;
# sets VERDICT and FIRST, and counts killed and survived.
ROWS=() killed=0 survived=0 seconds=0
row() {
	local n=$1 v=$2 f=$MUTANTS/$1.patch logs=$MUT/logs/$1-$2 rc secs fails name why
	if [ ! -f "$logs/status" ]; then
		ROWS+=("| $n | $v | $(hdr "$f" Bug) | $(hdr "$f" Upstream) | not run | | |")
		VERDICT="not run"
		survived=$((survived + 1))
		return
	fi
	read -r rc secs < "$logs/status"
	seconds=$((seconds + secs))
	# The failure that names the cause: a test's or a KUnit case's first,
	# else the console's (an Oops ends the boot before any result; a splat
	# taints the kernel), else whatever failed.
	fails=$(sed -n 's/^  FAIL  //p' "$logs/summary.txt")
	FIRST=$({ grep -vE ': (guest finished|all results reported|console clean|taint|kunit:.*did not run)' <<< "$fails" || true
		grep -E ': console clean' <<< "$fails" || true
		echo "$fails"; } | head -n 1 | cut -c1-240) || true
	if [ "$rc" != 0 ] && [ -n "$FIRST" ]; then
		VERDICT=killed
		killed=$((killed + 1))
	else
		VERDICT=SURVIVED
		survived=$((survived + 1))
		FIRST="$(tail -n 1 "$logs/summary.txt")"
	fi
	# "test  (failure)" -> two columns; a | would break the table.
	name=${FIRST%%  (*} why=""
	[ "$name" = "$FIRST" ] || why=${FIRST#*  (} why=${why%)}
	ROWS+=("| $n | $v | $(hdr "$f" Bug) | $(hdr "$f" Upstream) | $VERDICT | ${name//|//} | ${why//|//} |")
}

# table: print the rows, and write them to $BUILD/mutants/table.md.
table() {
	{
		echo "| mutant | variant | bug | upstream | verdict | first failed test | its failure |"
		echo "|---|---|---|---|---|---|---|"
		printf '%s\n' "${ROWS[@]}"
		echo
		echo "$killed killed, $survived survived; $((seconds / 60)) min of builds and boots"
	} > "$MUT/table.md"
	cat "$MUT/table.md"
}

# --table: the table of the last run of each mutant, from its logs.
if [ "$TABLE_ONLY" = 1 ]; then
	for n in "${names[@]}"; do
		for v in $(hdr "$MUTANTS/$n.patch" Variants); do row "$n" "$v"; done
	done
	table
	[ "$survived" = 0 ]
	exit
fi

[ -d "$SRC/.git" ] || die "no kernel tree at $SRC: run make tree first"
git -C "$SRC" diff --quiet && git -C "$SRC" diff --cached --quiet ||
	die "$SRC has local changes: make mutants patches that tree and restores it, so it must be clean (make reset-tree)"

mkdir -p "$MUT/o" "$MUT/logs"
# Whatever happens, the tree goes back to the series.
restore() { git -C "$SRC" checkout -q -- . 2>/dev/null || true; }
trap restore EXIT

# The variants' own kernels first: each mutant's O= folder starts as a copy.
declare -A copied=()
variants=$(for n in "${names[@]}"; do hdr "$MUTANTS/$n.patch" Variants; done | tr ' ' '\n' | sort -u)
for v in $variants; do
	"$TOP/scripts/build-kernel.sh" "$v"
done

for n in "${names[@]}"; do
	f=$MUTANTS/$n.patch
	tests=$(hdr "$f" Tests)
	list=$CARRIER
	for t in $tests; do
		[ "$t" = kunit ] || list+=",$t"
	done
	for v in $(hdr "$f" Variants); do
		msg "Mutant $n on $v: $(hdr "$f" Mutant)"
		t0=$SECONDS
		o=$MUT/o/$v
		# A copy of the variant's folder the first time (or after the tree
		# or the config changed); kept between runs, built incrementally.
		if [ -z "${copied[$v]:-}" ] &&
			! cmp -s "$o/.config.stamp" "$(objdir "$v")/.config.stamp"; then
			rm -rf "$o"
			cp -a "$(objdir "$v")" "$o"
		fi
		copied[$v]=1
		git -C "$SRC" apply "$f" ||
			{ echo "error: tests/mutants/$n.patch does not apply to $SRC" >&2; exit 2; }
		logs=$MUT/logs/$n-$v
		rm -rf "$logs"
		mkdir -p "$logs"
		if ! OBJ_ROOT=$MUT/o LOGS=$logs "$TOP/scripts/build-kernel.sh" "$v" 2> "$logs/build.err"; then
			cat "$logs/build.err" >&2
			echo "error: mutant $n does not build on $v (logs: $logs)" >&2
			exit 2
		fi
		restore
		rc=0
		OBJ_ROOT=$MUT/o LOGS=$logs RUNS=$MUT/runs/$n T=$list CHECKS=0 \
			"$TOP/scripts/test.sh" "$v" > "$logs/summary.txt" 2>&1 || rc=$?
		echo "$rc $((SECONDS - t0))" > "$logs/status"
		row "$n" "$v"
		if [ "$VERDICT" = killed ]; then
			info "killed: $FIRST"
		else
			warn "mutant $n survived on $v: $FIRST (summary: $logs/summary.txt)"
		fi
	done
done
table
[ "$survived" = 0 ]
