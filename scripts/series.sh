#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make series`: export the whole series, C patches with the Rust and C files
# they add, as git format-patch files with a cover letter in $BUILD/series,
# and check that `git am` applies it to a pristine tree.
. "$(dirname "$0")/lib.sh"

out=$BUILD/series
cover=$TOP/patches/cover-letter
rm -rf "$out"
git -C "$SRC" -c core.abbrev=12 format-patch -q --zero-commit --no-signature \
	--cover-letter -o "$out" base..HEAD
n=$(git -C "$SRC" rev-list --count base..HEAD)

# The cover letter: subject and body from patches/cover-letter.
subject=$(head -n 1 "$cover")
python3 - "$out"/0000-cover-letter.patch "$subject" "$cover" <<'PY'
import sys
path, subject, cover = sys.argv[1:]
text = open(path).read()
body = "".join(open(cover).readlines()[2:])
text = text.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body.rstrip("\n"))
open(path, "w").write(text)
PY

# git am onto the pristine base, in a throw-away worktree.
wt=$BUILD/series-check
git -C "$SRC" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git -C "$SRC" worktree prune
git -C "$SRC" worktree add -q --detach "$wt" base
if ! git -C "$wt" -c user.name=biocache -c user.email=biocache@localhost \
	am -q $(ls "$out"/[0-9]*.patch | grep -v /0000-cover-letter) > "$LOGS/series-am.log" 2>&1 ||
	! git -C "$wt" diff --quiet HEAD "$(git -C "$SRC" rev-parse HEAD)"; then
	git -C "$SRC" worktree remove --force "$wt"
	die "git am of $out on Linux $KVER failed or gave another tree (log: $LOGS/series-am.log)"
fi
git -C "$SRC" worktree remove --force "$wt"
info "series: $n patches and a cover letter in $out; git am on Linux $KVER gives the same tree"
