#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the guest test suite on built variants and print the summary.
#
#   scripts/test.sh [VARIANT...]      (default: $VARIANTS, else "c rust")
#   scripts/test.sh --list PROFILE    the tests of a boot profile
#   scripts/test.sh --variants VARIANT...   those of the VARIANTs on which
#                                     a selected test runs, on one line
#
# T=name[,name...] runs only those tests (and skips the style checks of
# scripts/check.sh, as does CHECKS=0), and boots only the profiles that
# hold them; it ends with the time each took on each variant. A debug
# variant leaves out the tests whose header has a "# debug: skip ..." line,
# T= or not, and a variant on which no selected test runs is neither built
# nor booted.
# GUEST_ARGS adds to every boot's kernel command line (e.g.
# biotest.stress_cycles=10000); TIMEOUT_SCALE multiplies every test's
# timeout (default 1; 4 times that on the debug variants), but not how long
# a test lets an IO stream stall nor how much bulk work it does
# (biotest.slowness: 4 on the debug variants, 1 otherwise), so that a long
# soak is no more lenient than a short one. BUILD_AHEAD=1 (make test) builds each variant but the first while the previous one's
# guests run, and runs the style checks while the last one's do, in the
# background at a lower priority (the kernel builds stay one at a time;
# their output goes to $LOGS/ahead-*.log). The tests of one boot profile
# (tests/boots) share one boot; every boot's results, with the host's own
# checks and any KUnit results on the console, go to
# scripts/ktap-summary.py, which writes them all to $RUNS/results.ktap and
# $RUNS/results.json and prints "N passed, N failed" last.
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

mode=run
if [ "${1:-}" = --variants ]; then
	mode=variants
	shift
fi
read -r -a variants <<< "${*:-${VARIANTS:-c rust}}"

# skips_allowed VARIANT ARGS: the skips a boot may report, "NAME-GLOB<TAB>
# REASON-REGEX" a line, for scripts/ktap-summary.py, which fails any other
# skip: a test or KUnit case that cannot run where it should must not pass
# for one that ran.
skips_allowed() {
	local cfg
	cfg=$(objdir "$1")/.config
	case " $2 " in *" bio_alloc_cache=off "*)
		printf 'kunit:*\tthe per-CPU bio cache is off\n' ;;
	esac
	grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$cfg" 2>/dev/null ||
		printf 'btf\tkernel built without CONFIG_DEBUG_INFO_BTF\n'
}

# kunit_expected ARGS: the KUnit cases a boot with that command line must
# report ("suite.case" a line), for scripts/ktap-summary.py: the suites'
# cases as their sources list them (the bio cache's, the allocation
# path's and the counted interrupt disabling's in C, the generic cache's in
# Rust), unless KUnit is off in that boot.
kunit_expected() {
	local src rs=$SRC/rust/kernel/percpu_cache/kunit.rs suite
	case " $1 " in *" kunit.enable=0 "*) return 0 ;; esac
	for src in "$SRC/block/bio-cache-test.c" "$SRC/block/bio-gfp-test.c" \
		"$SRC/kernel/irq/refcount_interrupt_test.c"; do
		[ -f "$src" ] || die "no $src: the tree lacks the series' KUnit suite"
		suite=$(sed -n 's/^\s*\.name = "\(.*\)",$/\1/p' "$src" | head -n 1)
		[ -n "$suite" ] || die "no suite name in $src"
		sed -n "s/^\s*KUNIT_CASE\(_SLOW\)\?(\(.*\)),$/$suite.\2/p" "$src"
	done
	[ -f "$rs" ] || die "no $rs: the tree lacks the series' Rust KUnit suite"
	suite=$(sed -n 's/^kernel::kunit_unsafe_test_suite!(\([a-z_0-9]*\), .*/\1/p; s/^crate::kunit_unsafe_test_suite!(\([a-z_0-9]*\), .*/\1/p' "$rs")
	[ -n "$suite" ] || die "no suite name in $rs"
	sed -n "s/^\s*kunit_case(c_str!(\"\([a-z_0-9]*\)\"), .*/$suite.\1/p" "$rs"
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

# runs_on VARIANT TEST: whether the test runs on that variant: everywhere
# but on a debug variant, where its header may say "debug: skip" (and why).
runs_on() {
	case $1 in *-debug) ;; *) return 0 ;; esac
	[ "$(header "$TESTS/$2.sh" debug | cut -d' ' -f1)" != skip ]
}

# Only the variants on which a selected test runs: with T=, a debug
# variant may have none (T=bad-param), and building it would be for nothing.
kept=()
for v in "${variants[@]}"; do
	for t in "${tests[@]}"; do
		if runs_on "$v" "$t"; then
			kept+=("$v")
			continue 2
		fi
	done
	info "$v: leaves out every test of T=${T:-} (\"debug: skip\"): not built, not booted"
done
[ ${#kept[@]} -gt 0 ] || die "none of the selected tests runs on ${variants[*]}"
variants=("${kept[@]}")
if [ $mode = variants ]; then
	echo "${variants[*]}"
	exit 0
fi

# Profiles in the order of tests/boots; a line is "NAME ARGS [| QEMU-ARGS]".
profiles=$(sed -e 's/#.*//' "$TOP/tests/boots" | awk 'NF { print $1 }')
profile_line() { sed -e 's/#.*//' "$TOP/tests/boots" | awk -v p="$1" '$1 == p { $1 = ""; print }'; }

checks=0
[ -n "${T:-}" ] || [ "${CHECKS:-1}" != 1 ] || checks=1

# One background step at a time (BUILD_AHEAD): bg_start WHAT LOG CMD...,
# bg_wait (its exit status).
bg_pid="" bg_what="" bg_log="" bg_t0=0
bg_start() {
	bg_what=$1 bg_log=$2
	shift 2
	bg_t0=$SECONDS
	nice -n 10 "$@" > "$bg_log" 2>&1 &
	bg_pid=$!
	info "in the background: $bg_what (log: $bg_log)"
}
bg_wait() {
	local rc=0
	[ -n "$bg_pid" ] || return 0
	wait "$bg_pid" || rc=$?
	bg_pid=""
	info "in the background: $bg_what, $((SECONDS - bg_t0))s$([ $rc = 0 ] || echo ", FAILED (exit $rc)")"
	return $rc
}
trap '[ -z "$bg_pid" ] || kill "$bg_pid" 2> /dev/null || true' EXIT

runs=()
checks_done=0
for i in "${!variants[@]}"; do
	v=${variants[$i]}
	if [ "${BUILD_AHEAD:-0}" = 1 ]; then
		bg_wait || die "building $v failed; its log: $bg_log (and $LOGS/build-$v.log)"
		next=${variants[$((i + 1))]:-}
		if [ -n "$next" ]; then
			mkdir -p "$LOGS"
			bg_start "building $next" "$LOGS/ahead-build-$next.log" \
				"$TOP/scripts/build-kernel.sh" "$next"
		elif [ $checks = 1 ]; then
			mkdir -p "$LOGS"
			bg_start "the style checks" "$LOGS/ahead-check.log" "$TOP/scripts/check.sh"
			checks_done=1
		fi
	fi
	scale=${TIMEOUT_SCALE:-1} slowness=1
	case $v in *-debug) scale=$((scale * 4)) slowness=4 ;; esac
	for p in $profiles; do
		list="" budget=$((60 * scale))
		for t in "${tests[@]}"; do
			prof=$(header "$TESTS/$t.sh" boot)
			[ "${prof:-default}" = "$p" ] || continue
			runs_on "$v" "$t" || continue
			list+=${list:+,}$t
			to=$(header "$TESTS/$t.sh" timeout)
			budget=$((budget + ${to:-$DEFAULT_TIMEOUT} * scale))
		done
		[ -n "$list" ] || continue
		line=$(profile_line "$p")
		args=${line%%|*} qemu=""
		[ "$args" = "$line" ] || qemu=${line#*|}
		"$TOP/scripts/run-guest.sh" -n "$p" -t "$list" -q "$qemu" \
			-a "biotest.timeout=$DEFAULT_TIMEOUT biotest.timeout_scale=$scale biotest.slowness=$slowness $args ${GUEST_ARGS:-}" \
			-T "$budget" "$v" || true
		mkdir -p "$RUNS/$v/$p"
		kunit_expected "$args ${GUEST_ARGS:-}" > "$RUNS/$v/$p/kunit.expected"
		skips_allowed "$v" "$args ${GUEST_ARGS:-}" > "$RUNS/$v/$p/skips.allowed"
		runs+=("$RUNS/$v/$p")
	done
done

[ ${#runs[@]} -gt 0 ] || die "no test selected"

# The series' own checks (checkpatch, rustfmt, clippy, rustdoc, git am), with
# the whole suite only.
if [ $checks = 1 ]; then
	if [ $checks_done = 1 ]; then
		bg_wait || true
		cat "$LOGS/ahead-check.log" >&2
	else
		"$TOP/scripts/check.sh" || true
	fi
	runs+=("$RUNS/check/style")
fi
python3 "$TOP/scripts/ktap-summary.py" --out "$RUNS" ${T:+--times "$T"} "${runs[@]}"
