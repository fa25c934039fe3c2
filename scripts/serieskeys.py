#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The content key of each patch of the series.

The tree at patch k is Linux $KVER with patches 1..k applied, each with the
files its .files sidecar names (scripts/prepare-tree.sh). Its key hashes
exactly that: KVER, then for each patch up to k its text and the contents
of its sidecar's files. A result recorded for patch k (make bisect) holds
for the series as it is now only if the key is the same, which
scripts/render-docs.py can tell from this repository alone, without the
tree.

    scripts/serieskeys.py        prints "k<TAB>patch<TAB>key" per patch
"""
import hashlib
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kver(top=TOP):
    """The pinned upstream version (the top-level Makefile's KVER)."""
    with open(os.path.join(top, "Makefile")) as f:
        for line in f:
            m = re.match(r"KVER\s*:=\s*(\S+)", line)
            if m:
                return m.group(1)
    raise SystemExit("serieskeys.py: no KVER in Makefile")


def entries(top=TOP):
    """The patches named by patches/series, in order."""
    with open(os.path.join(top, "patches", "series")) as f:
        lines = (line.split("#", 1)[0].strip() for line in f)
        return [line for line in lines if line]


def keys(top=TOP):
    """[(patch, key)] for the series in order."""
    h = hashlib.sha256(f"Linux {kver(top)}\n".encode())
    out = []
    for p in entries(top):
        h.update(f"patch {p}\n".encode())
        with open(os.path.join(top, "patches", p), "rb") as f:
            h.update(f.read())
        sidecar = os.path.join(top, "patches", p[:-len(".patch")] + ".files")
        if os.path.exists(sidecar):
            with open(sidecar) as f:
                for line in f:
                    words = line.split("#", 1)[0].split()
                    if not words:
                        continue
                    src, dst = words
                    h.update(f"file {dst}\n".encode())
                    with open(os.path.join(top, src), "rb") as g:
                        h.update(g.read())
        out.append((p, h.copy().hexdigest()[:16]))
    return out


if __name__ == "__main__":
    for k, (p, key) in enumerate(keys(sys.argv[1] if len(sys.argv) > 1 else TOP), 1):
        print(f"{k}\t{p}\t{key}")
