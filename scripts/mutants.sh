#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put each of the cache's historical bugs back, one at a time, and check that
# the test meant to catch it does, with the failure it names.
#
#   scripts/mutants.sh [NAME...]      (default: every tests/mutants/*.patch)
#   scripts/mutants.sh --table [NAME...]   the table of the last runs, again
#
# A mutant is a patch onto the series-applied tree with a header:
#   # Mutant:   what it breaks
#   # Bug:      the bug it re-introduces, in the form 6.12 can have it
#   # Upstream: the commit whose fix it takes out, or the posting that had the
#               bug ("-": a mutation of this project's own)
#   # Variants: the kernels it applies to (c, rust, c-debug, rust-debug)
#   # Expect:   PROFILE TEST REGEX, one line per failure that catches it
#               (scripts/mutant-verdict.py: TEST is a guest test,
#               kunit:CASE or console; REGEX is matched against its failure)
#
# First the unmutated kernels run the union of the selected mutants' tests,
# each variant on its own tests: any failure there stops the run (a test that
# fails anyway cannot tell a mutant apart). Then, for every variant a mutant
# names, the patch is applied, the kernel built incrementally in its own O=
# folder (a copy of the variant's, under $BUILD/mo, kept between runs, so
# the variant's own kernel is never touched), the tree restored, and the
# tests its Expect lines need run on that kernel. The verdict
# (scripts/mutant-verdict.py) is "killed" only if a named test failed with
# the named message and nothing crashed that no Expect line names; otherwise
# "crashed", "wrong test" or "survived". The table is printed and written to
# $BUILD/mutants/table.md, every row with its verdict to
# $BUILD/mutants/mutants.json (scripts/record.sh mutants puts that in
# results/). Exit status 1 unless every mutant was killed; 2 if a mutant did
# not apply or build, or the baseline failed.
. "$(dirname "$0")/lib.sh"

MUTANTS=$TOP/tests/mutants
MUT=$BUILD/mutants
# The mutants' O= folders. ccache (CCACHE_BASEDIR=$BUILD, lib.sh) writes the
# headers and included files a C object depends on relative to its O=
# folder ("../../linux/..."), so a copy of $BUILD/o/VARIANT must sit at the
# same depth under $BUILD: deeper, every such dependency names a file that
# does not exist, make ignores it, and a mutant of an included file (a Rust
# helper in rust/helpers/) is never built, or, once restored, never
# rebuilt out of the next mutant's kernel.
MO=$BUILD/mo
VERDICT="python3 $TOP/scripts/mutant-verdict.py"

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
	$VERDICT check "$f" || die "tests/mutants/$n.patch: malformed header (above)"
done

# row NAME VARIANT: the verdict of that run, from its logs, into ROWS and
# ROWS_JSON; counts the verdicts.
ROWS=() ROWS_JSON=() seconds=0
declare -A count=([killed]=0 [crashed]=0 ["wrong test"]=0 [survived]=0 ["not run"]=0)
row() {
	local n=$1 v=$2 f=$MUTANTS/$1.patch logs=$MUT/logs/$1-$2 rc secs verdict why
	if [ ! -f "$logs/verdict.json" ]; then
		ROWS+=("| $n | $v | $(hdr "$f" Bug) | $(hdr "$f" Upstream) | not run | | |")
		ROWS_JSON+=("$(python3 -c 'import json,sys; print(json.dumps({"mutant": sys.argv[1], "variant": sys.argv[2], "verdict": "not run"}))' "$n" "$v")")
		count["not run"]=$((count["not run"] + 1))
		VERDICT_OF=
		return
	fi
	read -r rc secs < "$logs/status"
	seconds=$((seconds + secs))
	ROWS_JSON+=("$(python3 - "$f" "$n" "$v" "$secs" "$logs/verdict.json" <<-'EOF'
		import json, re, sys
		f, n, v, secs, path = sys.argv[1:]
		h = {}
		for line in open(f):
		    m = re.match(r"^# (\w+): *(.*)$", line)
		    if not m:
		        break
		    h.setdefault(m.group(1), m.group(2).strip())
		row = {"mutant": n, "variant": v, "mutates": h["Mutant"], "bug": h["Bug"],
		       "upstream": h["Upstream"], "seconds": int(secs)}
		row.update(json.load(open(path)))
		print(json.dumps(row))
		EOF
	)")
	verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$logs/verdict.json")
	why=$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(d["matched"] or d["first_failure"])' "$logs/verdict.json")
	count[$verdict]=$((count[$verdict] + 1))
	VERDICT_OF=$verdict FIRST=$why
	ROWS+=("| $n | $v | $(hdr "$f" Bug) | $(hdr "$f" Upstream) | $verdict | ${why//|//} |")
}

# table: print the rows, and write them to $BUILD/mutants/table.md and
# $BUILD/mutants/mutants.json.
table() {
	local summary="${count[killed]} killed, ${count[crashed]} crashed, ${count["wrong test"]} wrong test, ${count[survived]} survived"
	[ "${count["not run"]}" = 0 ] || summary+=", ${count["not run"]} not run"
	{
		echo "| mutant | variant | bug | upstream | verdict | the failure that caught it (or the first one) |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "${ROWS[@]}"
		echo
		echo "$summary; $((seconds / 60)) min of builds and boots"
	} > "$MUT/table.md"
	python3 - "$MUT/mutants.json" "$summary" "${BASELINE_JSON:-null}" "${ROWS_JSON[@]}" <<-'EOF'
		import json, sys
		out, summary, baseline, *rows = sys.argv[1:]
		json.dump({"summary": summary, "baseline": json.loads(baseline),
		           "rows": [json.loads(r) for r in rows]}, open(out, "w"), indent=1)
		EOF
	cat "$MUT/table.md"
}

# --table: the table of the last run of each mutant, from its logs.
if [ "$TABLE_ONLY" = 1 ]; then
	for n in "${names[@]}"; do
		for v in $(hdr "$MUTANTS/$n.patch" Variants); do row "$n" "$v"; done
	done
	BASELINE_JSON=$(cat "$MUT/baseline.json" 2>/dev/null || echo null)
	table
	[ "${count[killed]}" = $((${#ROWS[@]})) ]
	exit
fi

[ -d "$SRC/.git" ] || die "no kernel tree at $SRC: run make tree first"
git -C "$SRC" diff --quiet && git -C "$SRC" diff --cached --quiet ||
	die "$SRC has local changes: make mutants patches that tree and restores it, so it must be clean (make reset-tree)"

mkdir -p "$MO" "$MUT/logs"
# Whatever happens, the tree goes back to the series.
restore() { git -C "$SRC" checkout -q -- . 2>/dev/null || true; }
trap restore EXIT
t_start=$SECONDS

# The variants' own kernels first: each mutant's O= folder starts as a copy.
variants=$(for n in "${names[@]}"; do hdr "$MUTANTS/$n.patch" Variants; done | tr ' ' '\n' | sort -u)
for v in $variants; do
	"$TOP/scripts/build-kernel.sh" "$v"
done

# The baseline: every variant, unmutated, on the tests of its mutants.
baseline=()
for v in $variants; do
	list=""
	for n in "${names[@]}"; do
		f=$MUTANTS/$n.patch
		case " $(hdr "$f" Variants) " in *" $v "*) ;; *) continue ;; esac
		for t in $($VERDICT tests "$f" | tr , ' '); do
			case ",$list," in *",$t,"*) ;; *) list+=${list:+,}$t ;; esac
		done
	done
	msg "Baseline: unmutated $v on $list"
	logs=$MUT/baseline/$v
	rm -rf "$logs"
	mkdir -p "$logs"
	t0=$SECONDS
	if ! LOGS=$logs RUNS=$MUT/baseline/runs T=$list CHECKS=0 "$TOP/scripts/test.sh" "$v" \
		> "$logs/summary.txt" 2>&1; then
		grep '^  FAIL' "$logs/summary.txt" >&2 || tail -n 20 "$logs/summary.txt" >&2
		echo "error: the unmutated $v kernel fails the mutants' tests (above; $logs/summary.txt):" \
			"no mutant can be judged against them" >&2
		exit 2
	fi
	info "baseline $v: $(tail -n 1 "$logs/summary.txt") in $((SECONDS - t0))s"
	baseline+=("$v|$list|$(tail -n 1 "$logs/summary.txt")|$((SECONDS - t0))")
done
BASELINE_JSON=$(python3 - "$(provenance)" \
	"make mutants${*:+ M=$(IFS=,; echo "$*")}" "${baseline[@]}" <<-'EOF'
	import json, sys, time
	commit, command, *runs = sys.argv[1:]
	print(json.dumps({"commit": commit, "command": command,
	                  "date": time.strftime("%Y-%m-%d", time.gmtime()),
	                  "runs": [dict(zip(("variant", "tests", "result", "seconds"), r.split("|")))
	                           for r in runs]}))
	EOF
)
echo "$BASELINE_JSON" > "$MUT/baseline.json"

declare -A copied=()
for n in "${names[@]}"; do
	f=$MUTANTS/$n.patch
	list=$($VERDICT tests "$f")
	for v in $(hdr "$f" Variants); do
		msg "Mutant $n on $v: $(hdr "$f" Mutant)"
		t0=$SECONDS
		o=$MO/$v
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
		if ! OBJ_ROOT=$MO LOGS=$logs "$TOP/scripts/build-kernel.sh" "$v" 2> "$logs/build.err"; then
			cat "$logs/build.err" >&2
			echo "error: mutant $n does not build on $v (logs: $logs)" >&2
			exit 2
		fi
		restore
		rc=0
		OBJ_ROOT=$MO LOGS=$logs RUNS=$MUT/runs/$n T=$list CHECKS=0 \
			"$TOP/scripts/test.sh" "$v" > "$logs/summary.txt" 2>&1 || rc=$?
		echo "$rc $((SECONDS - t0))" > "$logs/status"
		$VERDICT verdict "$f" "$v" "$logs/summary.txt" "$MUT/runs/$n" > "$logs/verdict.json"
		row "$n" "$v"
		if [ "$VERDICT_OF" = killed ]; then
			info "killed: $FIRST"
		else
			warn "mutant $n on $v: $VERDICT_OF: ${FIRST:-nothing failed} (summary: $logs/summary.txt)"
		fi
	done
done
table
info "make mutants: $(((SECONDS - t_start) / 60))m$(((SECONDS - t_start) % 60))s in all"
[ "${count[killed]}" = "${#ROWS[@]}" ]
