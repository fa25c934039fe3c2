#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the guest test suite on built variants and print the summary.
#
#   scripts/test.sh [VARIANT...]      (default: $VARIANTS, else "c rust")
#   scripts/test.sh --list PROFILE    the tests of a boot profile
#
# T=name[,name...] runs only those tests (and skips the style checks of
# scripts/check.sh, as does CHECKS=0). GUEST_ARGS adds to every boot's
# kernel command line (e.g. biotest.stress_cycles=10000); TIMEOUT_SCALE
# multiplies every test's timeout (default 1; 4 times that on the debug
# variant). The tests of one boot profile (tests/boots) share one boot;
# every boot's results, with the host's own checks and any KUnit results on
# the console, go to scripts/ktap-summary.py, which prints "N passed,
# N failed" last.
. "$(dirname "$0")/lib.sh"

TESTS=$TOP/tests/guest/t
DEFAULT_TIMEOUT=120

header() { sed -n "s/^# $2: *//p" "$1" | head -n 1; }

# scripts/test.sh --list PROFILE: the tests of a boot profile, comma-separated.
if [ "${1:-}" = --list ]; then
	list=""
	for f in "$TESTS"/*.sh; do
		prof=$(header "$f" boot)
		[ "${prof:-default}" = "${2:?usage: test.sh --list PROFILE}" ] || continue
		list+=${list:+,}$(basename "$f" .sh)
	done
	echo "$list"
	exit 0
fi

read -r -a variants <<< "${*:-${VARIANTS:-c rust}}"

# kunit_expected ARGS: the KUnit cases a boot with that command line must
# report ("suite.case" a line), for scripts/ktap-summary.py: the suite's
# cases as its source lists them, unless KUnit is off in that boot.
kunit_expected() {
	local src=$SRC/block/bio-cache-test.c suite
	case " $1 " in *" kunit.enable=0 "*) return 0 ;; esac
	[ -f "$src" ] || die "no $src: the tree lacks the series' KUnit suite"
	suite=$(sed -n 's/^\s*\.name = "\(.*\)",$/\1/p' "$src" | head -n 1)
	[ -n "$suite" ] || die "no suite name in $src"
	sed -n "s/^\s*KUNIT_CASE(\(.*\)),$/$suite.\1/p" "$src"
}

# The selected tests, in name order.
if [ -n "${T:-}" ]; then
	tests=()
	for t in ${T//,/ }; do
		[ -f "$TESTS/$t.sh" ] || die "no test '$t' in tests/guest/t"
		tests+=("$t")
	done
else
	tests=()
	for f in "$TESTS"/*.sh; do tests+=("$(basename "$f" .sh)"); done
fi

# Profiles in the order of tests/boots.
profiles=$(sed -e 's/#.*//' "$TOP/tests/boots" | awk 'NF { print $1 }')

runs=()
for v in "${variants[@]}"; do
	scale=${TIMEOUT_SCALE:-1}
	case $v in *-debug) scale=$((scale * 4)) ;; esac
	for p in $profiles; do
		list="" budget=$((60 * scale))
		for t in "${tests[@]}"; do
			prof=$(header "$TESTS/$t.sh" boot)
			[ "${prof:-default}" = "$p" ] || continue
			list+=${list:+,}$t
			to=$(header "$TESTS/$t.sh" timeout)
			budget=$((budget + ${to:-$DEFAULT_TIMEOUT} * scale))
		done
		[ -n "$list" ] || continue
		args=$(sed -e 's/#.*//' "$TOP/tests/boots" | awk -v p="$p" '$1 == p { $1 = ""; print }')
		"$TOP/scripts/run-guest.sh" -n "$p" -t "$list" \
			-a "biotest.timeout=$DEFAULT_TIMEOUT biotest.timeout_scale=$scale $args ${GUEST_ARGS:-}" \
			-T "$budget" "$v" || true
		mkdir -p "$RUNS/$v/$p"
		kunit_expected "$args ${GUEST_ARGS:-}" > "$RUNS/$v/$p/kunit.expected"
		runs+=("$RUNS/$v/$p")
	done
done

[ ${#runs[@]} -gt 0 ] || die "no test selected"

# The series' own checks (checkpatch, rustfmt, clippy, rustdoc, git am), with
# the whole suite only.
if [ -z "${T:-}" ] && [ "${CHECKS:-1}" = 1 ]; then
	"$TOP/scripts/check.sh" || true
	runs+=("$RUNS/check/style")
fi
python3 "$TOP/scripts/ktap-summary.py" "${runs[@]}"
