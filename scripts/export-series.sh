#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# For developers: turn the commits on top of "base" in $SRC back into
# patches/ (numbered git format-patch files and the series file), after
# editing the tree and committing there. Files listed in a .files sidecar
# are copied back to their place in this repository (rust/, c-glue/), since
# those are the sources; the patch keeps only the rest of its commit.
. "$(dirname "$0")/lib.sh"

git -C "$SRC" diff --quiet HEAD || die "$SRC has uncommitted changes: commit them first"

# The files of .files sidecars are copied back from the tree: refuse if one
# was edited here since the series was last applied, which would be lost.
# A sidecar holds the file as its own patch leaves it (a later patch may
# change it), so it is compared with that patch's commit, in the applied
# series or in the tree as it is now.
applied=$(cat "$SRC/.git/biocache-applied" 2>/dev/null) || die "no applied series in $SRC: run make tree"
for f in "$TOP"/patches/*.files; do
	k=$(basename "$f" | cut -c1-4)
	k=$((10#$k))
	at_applied=$(git -C "$SRC" rev-list --reverse "base..$applied" | sed -n "${k}p")
	at_head=$(git -C "$SRC" rev-list --reverse base..HEAD | sed -n "${k}p")
	while read -r from to; do
		case "$from" in '' | \#*) continue ;; esac
		git -C "$SRC" show "$at_applied:$to" 2>/dev/null | cmp -s - "$TOP/$from" ||
			git -C "$SRC" show "$at_head:$to" 2>/dev/null | cmp -s - "$TOP/$from" ||
			die "$from was edited since the series was applied: run make tree first"
	done < "$f"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$SRC" -c core.abbrev=12 format-patch -q -N --zero-commit --no-signature -o "$tmp" base..HEAD
n=0
for p in "$tmp"/*.patch; do
	n=$((n + 1))
	name=$(basename "$p")
	old=$(ls "$TOP/patches/$(printf '%04d' "$n")"-*.files 2>/dev/null | head -n 1 || true)
	if [ -n "$old" ]; then
		# The new files of this commit come from the repository: copy
		# them back and leave them out of the patch.
		exclude=()
		while read -r from to; do
			case "$from" in '' | \#*) continue ;; esac
			# Through a temporary file: a failed git show must not
			# leave the repository's copy empty.
			git -C "$SRC" show "HEAD~$(($(ls "$tmp"/*.patch | wc -l) - n)):$to" > "$tmp/file" ||
				die "commit $n of the tree does not have $to, which ${old#$TOP/} lists"
			mv "$tmp/file" "$TOP/$from"
			exclude+=(":(exclude)$to")
		done < "$old"
		commit=$(git -C "$SRC" rev-list --reverse base..HEAD | sed -n "${n}p")
		{
			sed -n '1,/^---$/p' "$p" | sed '$d'
			echo "---"
			git -C "$SRC" -c core.abbrev=12 diff --stat "$commit~1" "$commit" -- . "${exclude[@]}"
			echo
			git -C "$SRC" -c core.abbrev=12 diff "$commit~1" "$commit" -- . "${exclude[@]}"
			echo "-- "
		} > "$tmp/$name.new"
		mv "$tmp/$name.new" "$p"
		[ "$old" = "$TOP/patches/${name%.patch}.files" ] || mv "$old" "$TOP/patches/${name%.patch}.files"
	fi
done
rm -f "$TOP"/patches/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$TOP/patches/"
{
	sed -n '/^#/p' "$TOP/patches/series"
	(cd "$tmp" && ls ./*.patch | sed 's|^\./||')
} > "$tmp/series"
mv "$tmp/series" "$TOP/patches/series"
info "exported $n patches to patches/"
