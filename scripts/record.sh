#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put what a run measured into results/, with its commit and command, and
# render the docs' tables from it (scripts/render-docs.py).
#
#   scripts/record.sh bench|bench-distro|codegen|codegen-distro|mutants|bisect
#   scripts/record.sh soak VARIANT
#
# The run must be done: make bench, make bench DISTRO=1, make codegen
# [DISTRO=1], make mutants, make bisect or make soak VARIANT=... leave their results
# under $BUILD (make bisect records each step as it goes: a run stopped
# half-way records the patches it built, and says where it stopped). A run
# made in a tree with changes that are not committed says so ("-dirty"
# after its commit); commit the results with the docs they rendered.
. "$(dirname "$0")/lib.sh"

what=${1:?usage: record.sh bench|bench-distro|codegen|codegen-distro|mutants|bisect|soak VARIANT}
mkdir -p "$TOP/results"
# merge OUT META DATA KEY: {"meta": META, KEY: DATA} into OUT
merge() {
	python3 - "$@" <<-'PY'
		import json, sys
		out, meta, data, key = sys.argv[1:]
		json.dump({"meta": json.load(open(meta)), key: json.load(open(data))},
		          open(out, "w"), indent=1)
		PY
}
need() { for f in "$@"; do [ -f "$f" ] || die "no $f: run the command that makes it first"; done; }
case $what in
bench | bench-distro)
	sfx=${what#bench}
	need "$BUILD/bench$sfx.json" "$BUILD/bench$sfx.meta.json"
	merge "$TOP/results/$what.json" "$BUILD/bench$sfx.meta.json" "$BUILD/bench$sfx.json" records
	;;
codegen | codegen-distro)
	sfx=${what#codegen}
	need "$BUILD/codegen$sfx.json" "$BUILD/codegen$sfx.meta.json"
	merge "$TOP/results/$what.json" "$BUILD/codegen$sfx.meta.json" "$BUILD/codegen$sfx.json" rows
	;;
mutants)
	need "$BUILD/mutants/mutants.json"
	cp "$BUILD/mutants/mutants.json" "$TOP/results/mutants.json"
	;;
bisect)
	# Merged with the runs recorded before: a patch's row is replaced by
	# the newest run that built it, and runs no row comes from are dropped.
	need "$BUILD/bisect/bisect.meta.json" "$BUILD/bisect/steps.tsv"
	python3 - "$BUILD/bisect/bisect.meta.json" "$BUILD/bisect/steps.tsv" "$TOP/results/bisect.json" <<-'PY'
		import json, os, sys
		meta, steps, out = sys.argv[1:]
		old = json.load(open(out)) if os.path.exists(out) else {"runs": [], "steps": []}
		runs = old["runs"] + [json.load(open(meta))]
		rows = {r["patch"]: r for r in old["steps"]}
		for line in open(steps):
		    k, subject, key, ok, builds = line.rstrip("\n").split("\t")
		    rows[int(k)] = {"patch": int(k), "subject": subject, "key": key,
		                    "ok": ok == "1", "builds": builds, "run": len(runs) - 1}
		used = sorted({r["run"] for r in rows.values()})
		index = {old_i: new_i for new_i, old_i in enumerate(used)}
		for r in rows.values():
		    r["run"] = index[r["run"]]
		json.dump({"runs": [runs[i] for i in used], "steps": [rows[k] for k in sorted(rows)]},
		          open(out, "w"), indent=1)
		PY
	;;
soak)
	v=${2:?usage: record.sh soak VARIANT}
	need "$BUILD/soak/soak-$v.json"
	cp "$BUILD/soak/soak-$v.json" "$TOP/results/soak-$v.json"
	;;
*) die "record.sh: nothing to record called '$what'" ;;
esac
info "recorded results/${what}${2:+-$2}.json"
python3 "$TOP/scripts/render-docs.py" && python3 "$TOP/scripts/chart.py"
