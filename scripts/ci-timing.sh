#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# How long the two commands of the README take: `bash .ci/run` (make test),
# or `make`, in a fresh clone of this repository's HEAD, recorded in
# results/ci-{cold,warm}.json or results/make-{cold,warm}.json with the
# commit, and rendered into the README.
#
#   scripts/ci-timing.sh cold         bash .ci/run, with an empty ccache, as
#                                     on a new machine
#   scripts/ci-timing.sh warm         bash .ci/run, with this machine's ccache
#   scripts/ci-timing.sh make-cold    make, likewise
#   scripts/ci-timing.sh make-warm
#
# The clone builds everything in its own build folder (kernel tree, O=
# folders), $CI_DIR (default /tmp/biocache-ci), removed first. Debian's
# packages must be installed already (make deps): their download time
# depends on the mirror, not on the project. Nothing else should run on the
# machine meanwhile: the time is the machine's, not the project's alone.
. "$(dirname "$0")/lib.sh"

what=${1:?usage: ci-timing.sh cold|warm|make-cold|make-warm}
case $what in
cold | warm) kind=$what cmd=(bash .ci/run) name=ci ;;
make-cold | make-warm) kind=${what#make-} cmd=(make) name=make ;;
*) die "ci-timing.sh: cold, warm, make-cold or make-warm, not '$what'" ;;
esac
"$TOP/scripts/deps.sh"
dir=${CI_DIR:-/tmp/biocache-ci}
commit=$(provenance)
case $commit in *-dirty) die "commit first: CI runs a clone of HEAD, and the record names it" ;; esac
rm -rf "$dir"
git clone -q "$TOP" "$dir/repo" || die "git clone failed"
env=()
if [ "$kind" = cold ]; then
	mkdir -p "$dir/ccache"
	env=(CCACHE_DIR="$dir/ccache")
fi
log=$dir/$name.log
msg "${cmd[*]}, $kind ccache, in $dir/repo (log: $log)"
t0=$SECONDS rc=0
(cd "$dir/repo" && env "${env[@]}" "${cmd[@]}") > "$log" 2>&1 || rc=$?
secs=$((SECONDS - t0))
if [ $name = ci ]; then
	result=$(tail -n 1 "$log")
elif [ $rc = 0 ]; then
	# make's table is on stdout, each boot's verdict a line of its own.
	result="$(grep -c '/workload: .*all passed' "$log") boots, workload passed"
else
	result="failed: $(grep -m1 '^error:' "$log" || tail -n 1 "$log")"
fi
info "${cmd[*]}, $kind: $result, exit $rc, $((secs / 60))m$((secs % 60))s"
mkdir -p "$TOP/results"
python3 - "$TOP/results/$name-$kind.json" "$commit" "$secs" "$result" "$rc" "$kind" \
	"${cmd[*]}" <<'PY'
import json, sys, time
out, commit, secs, result, rc, kind, command = sys.argv[1:]
json.dump({"command": command, "ccache": kind, "commit": commit,
           "date": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": int(secs),
           "result": result, "exit": int(rc)}, open(out, "w"), indent=1)
PY
python3 "$TOP/scripts/render-docs.py" && python3 "$TOP/scripts/chart.py"
exit "$rc"
