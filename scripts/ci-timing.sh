#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# How long CI takes: `bash .ci/run` (make test) in a fresh clone of this
# repository's HEAD, as CI runs it, recorded in results/ci-cold.json or
# results/ci-warm.json with the commit, and rendered into the README.
#
#   scripts/ci-timing.sh cold    with an empty ccache, as on a new machine
#   scripts/ci-timing.sh warm    with this machine's ccache
#
# The clone builds everything in its own build folder (kernel tree, O=
# folders), $CI_DIR (default /tmp/biocache-ci), removed first. Debian's
# packages must be installed already (make deps): their download time
# depends on the mirror, not on the project. Nothing else should run on the
# machine meanwhile: the time is the machine's, not the project's alone.
. "$(dirname "$0")/lib.sh"

kind=${1:?usage: ci-timing.sh cold|warm}
case $kind in cold | warm) ;; *) die "ci-timing.sh: cold or warm, not '$kind'" ;; esac
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
msg "CI, $kind ccache: bash .ci/run in $dir/repo (log: $dir/ci.log)"
t0=$SECONDS rc=0
(cd "$dir/repo" && env "${env[@]}" bash .ci/run) > "$dir/ci.log" 2>&1 || rc=$?
secs=$((SECONDS - t0))
result=$(tail -n 1 "$dir/ci.log")
info "CI, $kind: $result, exit $rc, $((secs / 60))m$((secs % 60))s"
mkdir -p "$TOP/results"
python3 - "$TOP/results/ci-$kind.json" "$commit" "$secs" "$result" "$rc" "$kind" <<'PY'
import json, sys, time
out, commit, secs, result, rc, kind = sys.argv[1:]
json.dump({"command": "bash .ci/run", "ccache": kind, "commit": commit,
           "date": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": int(secs),
           "result": result, "exit": int(rc)}, open(out, "w"), indent=1)
PY
python3 "$TOP/scripts/render-docs.py"
exit "$rc"
