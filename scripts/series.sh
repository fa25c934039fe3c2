#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make series`: export the whole series, C patches with the Rust and C files
# they add, as git format-patch files with a cover letter in $BUILD/series,
# and check that `git am` applies it to a pristine tree.
#
#   scripts/series.sh               the whole series, in $BUILD/series
#   UPSTREAM=1 scripts/series.sh    only the fixes of mainline code that
#                                   patches/upstream lists, as a series of
#                                   their own on the pristine tree, in
#                                   $BUILD/series-upstream
#
# The cover letter ends with "base-commit:", the pristine tree's commit in
# $SRC ("base": the imported tarball, whose hash is this import's). Each
# patch gets To: and Cc: headers from the tree's scripts/get_maintainer.pl
# (the people it names To:, the lists Cc:), the cover letter their union.
. "$(dirname "$0")/lib.sh"

git_src() { git -C "$SRC" -c user.name=biocache -c user.email=biocache@localhost "$@"; }

# A throw-away worktree of $SRC at base: new_worktree DIR, drop_worktree DIR.
new_worktree() {
	drop_worktree "$1"
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$1" base
}
drop_worktree() {
	git -C "$SRC" worktree remove --force "$1" 2>/dev/null || rm -rf "$1"
}

# recipients DIR: To: and Cc: headers in every patch of DIR from
# get_maintainer.pl, run from the tree's top; their union in the cover
# letter. Without git history (the tree is an imported tarball): --no-git,
# --no-git-fallback, and --no-fixes, which would look up the commit a
# Fixes: tag names. The patch's author is left out (the sender).
recipients() {
	python3 - "$SRC" "$1" <<-'PY'
		import email.utils, glob, os, re, subprocess, sys
		src, out = sys.argv[1:]

		def header(name, addrs):
		    if not addrs:
		        return ""
		    return f"{name}: " + ",\n    ".join(email.utils.formataddr(a, "utf-8") for a in addrs) + "\n"

		def split(text):
		    """(head, rest) of a patch file: rest starts at the blank line
		    that ends its headers."""
		    i = text.index("\n\n")
		    return text[:i + 1], text[i + 1:]

		def author(head):
		    for line in re.sub(r"\n[ \t]+", " ", head).splitlines():
		        if line.startswith("From: "):
		            return email.utils.parseaddr(line[6:])[1].lower()
		    return ""

		all_to, all_cc = {}, {}
		patches = sorted(p for p in glob.glob(os.path.join(out, "[0-9]*.patch"))
		                 if not p.endswith("/0000-cover-letter.patch"))
		cover = os.path.join(out, "0000-cover-letter.patch")
		for p in patches:
		    text = open(p).read()
		    head, rest = split(text)
		    me = author(head)
		    r = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-rolestats",
		                        "--no-git-fallback", "--no-fixes", p],
		                       cwd=src, capture_output=True, text=True)
		    if r.returncode:
		        sys.exit(f"get_maintainer.pl failed on {p}: {r.stderr.strip()}")
		    to, cc = {}, {}
		    for line in r.stdout.splitlines():
		        name, addr = email.utils.parseaddr(line.strip())
		        if not addr or addr.lower() == me:
		            continue
		        # A person ("Name <address>") is written to, a list copied.
		        (to if "<" in line else cc)[addr.lower()] = (name, addr)
		    all_to.update(to)
		    all_cc.update(cc)
		    open(p, "w").write(head + header("To", to.values()) + header("Cc", cc.values()) + rest)
		    print(f"{os.path.basename(p)}: {len(to)} To, {len(cc)} Cc")
		if os.path.exists(cover):
		    head, rest = split(open(cover).read())
		    me = author(head)
		    to = [a for k, a in all_to.items() if k != me]
		    cc = [a for k, a in all_cc.items() if k not in all_to and k != me]
		    open(cover, "w").write(head + header("To", to) + header("Cc", cc) + rest)
		PY
}

# cover_letter FILE SUBJECT BODY-FILE: the subject and text of a cover
# letter written by format-patch --cover-letter.
cover_letter() {
	python3 - "$@" <<-'PY'
		import sys
		path, subject, body = sys.argv[1:]
		text = open(path).read()
		body = open(body).read()
		text = text.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body.rstrip("\n"))
		open(path, "w").write(text)
		PY
}

# am_check OUT HEAD: git am of OUT's patches onto the pristine base, in a
# throw-away worktree, must give the tree of HEAD.
am_check() {
	local out=$1 head=$2 wt=$BUILD/series-check p patches=()
	for p in "$out"/[0-9]*.patch; do
		[ "${p##*/}" = 0000-cover-letter.patch ] || patches+=("$p")
	done
	new_worktree "$wt"
	if ! git -C "$wt" -c user.name=biocache -c user.email=biocache@localhost \
		am -q "${patches[@]}" > "$LOGS/series-am.log" 2>&1 ||
		! git -C "$wt" diff --quiet HEAD "$head"; then
		drop_worktree "$wt"
		die "git am of $out on Linux $KVER failed or gave another tree (log: $LOGS/series-am.log)"
	fi
	drop_worktree "$wt"
}

if [ "${UPSTREAM:-0}" != 1 ]; then
	out=$BUILD/series
	rm -rf "$out"
	git -C "$SRC" -c core.abbrev=12 format-patch -q --zero-commit --no-signature \
		--cover-letter --base=base -o "$out" base..HEAD
	n=$(git -C "$SRC" rev-list --count base..HEAD)
	# The cover letter: subject and body from patches/cover-letter.
	cover=$TOP/patches/cover-letter
	cover_letter "$out/0000-cover-letter.patch" "$(head -n 1 "$cover")" <(tail -n +3 "$cover")
	recipients "$out" > "$LOGS/series-recipients.log" ||
		die "get_maintainer.pl failed (log: $LOGS/series-recipients.log)"
	am_check "$out" "$(git -C "$SRC" rev-parse HEAD)"
	info "series: $n patches and a cover letter in $out; git am on Linux $KVER gives the same tree"
	exit 0
fi

# UPSTREAM=1: the fixes patches/upstream lists, each taken from the applied
# series (the commit of its entry in patches/series) and applied with git am
# onto the pristine base in that order: one that needs a patch of the series
# left out does not apply, and stops the export.
out=$BUILD/series-upstream
list=$TOP/patches/upstream
mapfile -t series < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TOP/patches/series" | grep -v '^$')
mapfile -t commits < <(git -C "$SRC" rev-list --reverse base..HEAD)
[ ${#series[@]} = ${#commits[@]} ] ||
	die "$SRC has ${#commits[@]} patches on base, patches/series ${#series[@]}: run make tree first"
subject=$(sed -n 's/^subject: *//p' "$list" | head -n 1)
[ -n "$subject" ] || die "patches/upstream has no \"subject:\" line"
picks=() names=()
while read -r p; do
	case $p in '' | \#* | subject:*) continue ;; esac
	for i in "${!series[@]}"; do
		if [ "${series[$i]}" = "$p" ]; then
			picks+=("${commits[$i]}") names+=("$p")
			continue 2
		fi
	done
	die "patches/upstream names $p, which patches/series does not"
done < "$list"
[ ${#picks[@]} -gt 0 ] || die "patches/upstream names no patch"

wt=$BUILD/series-upstream-wt
new_worktree "$wt"
for i in "${!picks[@]}"; do
	# git am, not a 3-way cherry-pick: a patch whose context the left-out
	# patches changed must fail here, not merge.
	if ! git -C "$SRC" format-patch -1 --stdout "${picks[$i]}" |
		git -C "$wt" -c user.name=biocache -c user.email=biocache@localhost \
			am -q > "$LOGS/series-upstream.log" 2>&1; then
		git -C "$wt" am --abort 2>/dev/null || true
		drop_worktree "$wt"
		die "patches/${names[$i]} does not apply to Linux $KVER with only the patches before it in patches/upstream (log: $LOGS/series-upstream.log)"
	fi
done
head=$(git -C "$wt" rev-parse HEAD)
rm -rf "$out"
git -C "$wt" -c core.abbrev=12 format-patch -q --zero-commit --no-signature \
	--cover-letter --base=base -o "$out" base..HEAD
drop_worktree "$wt"

# The cover letter, generated: what the fixes are and where they come from,
# then each one with what it fixes.
body=$(mktemp)
trap 'rm -f "$body"' EXIT
{
	cat <<-EOF
		These ${#picks[@]} patches fix bugs in mainline code of device-mapper and
		null_blk, found while testing polled IO through the per-CPU bio cache
		on Linux $KVER (Debian's linux-source-6.12). They come from a larger
		series that ports that cache to Rust but need nothing of it: they
		apply to Linux $KVER as they are, in this order.

	EOF
	for c in "${picks[@]}"; do
		echo " - $(git -C "$SRC" log -1 --format=%s "$c")"
		git -C "$SRC" log -1 --format=%b "$c" | sed -n 's/^Fixes: /   Fixes: /p'
	done
} > "$body"
cover_letter "$out/0000-cover-letter.patch" "$subject" "$body"
recipients "$out" > "$LOGS/series-upstream-recipients.log" ||
	die "get_maintainer.pl failed (log: $LOGS/series-upstream-recipients.log)"
am_check "$out" "$head"
info "series UPSTREAM=1: ${#picks[@]} fixes and a cover letter in $out; git am on Linux $KVER applies them"
