#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bring $SRC to "Debian's linux-source-6.12 + patches/series".
#
# $SRC is a git work tree. Its root commit (tag "base") is the pristine
# tarball; branch "series" holds one commit per entry of patches/series.
# The series is applied in a scratch index, never in the work tree, so a patch
# that does not apply leaves the tree exactly as it was; when it applies, the
# work tree is moved to the new commit, which rewrites only the files that
# differ (an incremental kernel build stays incremental).
. "$(dirname "$0")/lib.sh"

PKG=linux-source-6.12
TARBALL=/usr/src/$PKG.tar.xz
SERIES=$TOP/patches/series

git_src() { git -C "$SRC" -c user.name=biocache -c user.email=biocache@localhost "$@"; }

check_installed_version() {
	local v
	v=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) ||
		die "$PKG is not installed (run 'make deps' as root)"
	[ -f "$TARBALL" ] || die "$TARBALL is missing although $PKG $v is installed"
	if [ "${v%%-*}" != "$KVER" ]; then
		die "installed $PKG is $v (upstream ${v%%-*}), but the series is pinned to $KVER" \
			"(KVER in the top-level Makefile). Install $PKG for $KVER, or move KVER and" \
			"re-test every patch in patches/."
	fi
	echo "$v"
}

# Extract the tarball and commit it as the base, once per $SRC.
import_base() {
	local deb=$1 tmp=$SRC.import
	if git_src rev-parse -q --verify base >/dev/null 2>&1; then
		local have
		have=$(git_src log -1 --format=%s base)
		case "$have" in
		"Linux $KVER "*) return 0 ;;
		*) die "$SRC holds '$have', not Linux $KVER: remove it (rm -rf $SRC, or make distclean) to re-import" ;;
		esac
	fi
	[ ! -e "$SRC" ] || die "$SRC exists but is not an imported tree: remove it to re-import"

	msg "Extracting $TARBALL (once; about a minute with the git import)"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -C "$tmp" -xf "$TARBALL" --strip-components=1
	local mk
	mk=$(sed -n '2,4s/^[A-Z]* = //p' "$tmp/Makefile" | paste -sd.)
	[ "$mk" = "$KVER" ] || die "$TARBALL is Linux $mk, expected $KVER"
	git -C "$tmp" init -q -b series
	git -C "$tmp" add -A -f  # Debian's .gitignore ignores "/*"
	git -C "$tmp" -c user.name=biocache -c user.email=biocache@localhost \
		commit -q --no-verify -m "Linux $KVER (Debian $PKG $deb)"
	git -C "$tmp" tag base
	mv "$tmp" "$SRC"
	info "imported Linux $KVER into $SRC"
}

# Print the lines of the series file that name patches.
series_entries() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$SERIES" | grep -v '^$' || true
}

# Apply the series onto "base" in a scratch index; print the last commit.
build_series() {
	local idx commit tree p files info msg
	idx=$(mktemp)
	info=$(mktemp)
	msg=$(mktemp)
	trap 'rm -f "$idx" "$info" "$msg" "$idx.err"' RETURN
	export GIT_INDEX_FILE=$idx
	git_src read-tree base
	commit=$(git_src rev-parse base)
	while read -r p; do
		[ -f "$TOP/patches/$p" ] || die "patches/series names $p, which does not exist"
		if ! git_src apply --cached -v "$TOP/patches/$p" > "$idx.err" 2>&1; then
			{
				echo "patches/$p does not apply on Linux $KVER + the patches before it:"
				if grep -q '^error: while searching for:' "$idx.err"; then
					sed -n '/^error: while searching for:/,$p' "$idx.err"
				else
					grep '^error:' "$idx.err"
				fi
				echo "The work tree $SRC was not changed."
			} | tee "$LOGS/series.log" >&2
			die "series stopped at patches/$p (log: $LOGS/series.log)"
		fi
		# A patch may come with new files kept as sources in this
		# repository (rust/, c-glue/): "<patch>.files" lists them as
		# "repo-path tree-path" lines, and they go into the same commit.
		files=$TOP/patches/${p%.patch}.files
		if [ -f "$files" ]; then
			local from to blob
			while read -r from to; do
				case "$from" in '' | \#*) continue ;; esac
				[ -f "$TOP/$from" ] || die "${files#$TOP/} names $from, which does not exist"
				blob=$(git_src hash-object -w "$TOP/$from")
				git_src update-index --add --cacheinfo "100644,$blob,$to"
			done < "$files"
		fi
		tree=$(git_src write-tree)
		git mailinfo -b "$msg" /dev/null < "$TOP/patches/$p" > "$info"
		local name email date subject
		name=$(sed -n 's/^Author: //p' "$info")
		email=$(sed -n 's/^Email: //p' "$info")
		date=$(sed -n 's/^Date: //p' "$info")
		subject=$(sed -n 's/^Subject: //p' "$info")
		[ -n "$subject" ] || die "patches/$p has no Subject: is it a git format-patch file?"
		commit=$({ echo "$subject"; echo; cat "$msg"; } |
			GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email GIT_AUTHOR_DATE=$date \
			GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email GIT_COMMITTER_DATE=$date \
			git_src commit-tree "$tree" -p "$commit")
	done < <(series_entries)
	unset GIT_INDEX_FILE
	echo "$commit"
}

deb=$(check_installed_version)
import_base "$deb"

target=$(build_series)
head=$(git_src rev-parse HEAD)
n=$(series_entries | wc -l)
if [ "$head" = "$target" ] && git_src diff --quiet HEAD; then
	echo "$target" > "$SRC/.git/biocache-applied"
	info "tree: Linux $KVER + $n patches, up to date ($SRC)"
	exit 0
fi

# FORCE=1: build the tree as it is, edits and commits of its own included,
# while they are being worked on (the series is not applied again).
if [ "${FORCE:-0}" = 1 ]; then
	info "tree: FORCE=1: $SRC as it is, not patches/series:" \
		"$(git_src rev-list --count "$target..HEAD") commits of its own," \
		"$(git_src diff --name-only HEAD | wc -l) files edited"
	exit 0
fi

# Never throw away somebody's edits or commits in the tree. Commits that
# make export turned into patches/ give the tree the series gives: moving
# to the series' own commits then loses nothing.
applied=$(cat "$SRC/.git/biocache-applied" 2>/dev/null || git_src rev-parse HEAD)
if [ "$head" != "$applied" ] && git_src diff --quiet HEAD && git_src diff --quiet HEAD "$target"; then
	info "tree: $SRC's commits are patches/series as it is (exported); taking the series' commits"
elif [ "$head" != "$applied" ]; then
	git_src log --oneline "$applied..HEAD" | head -n 10 >&2
	die "$SRC has commits (above) that are not in patches/; export them with" \
		"'make export', build the tree as it is with FORCE=1, or drop them with" \
		"'make reset-tree'."
fi
if ! git_src diff --quiet HEAD; then
	git_src diff --stat HEAD | tail -n 20 >&2
	die "$SRC has local changes (above); they would be lost. Build the tree as it is" \
		"with FORCE=1; commit them in $SRC and run 'make export' to turn them into" \
		"patches/ (docs/hacking.md); or discard them with 'make reset-tree'."
fi
git_src reset -q --hard "$target"
echo "$target" > "$SRC/.git/biocache-applied"
msg "tree: Linux $KVER + $n patches applied ($SRC at $(git_src rev-parse --short HEAD))"
