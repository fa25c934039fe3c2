#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every relative link of README.md and docs/*.md resolves: its file exists
and, with a #fragment, the file has a heading of that anchor (GitHub's rule:
lowercase, punctuation dropped, spaces to hyphens, -N for repeats). Exit 1,
naming each broken link, otherwise 0 (make check)."""

import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchors(path):
    seen, out = {}, set()
    text = FENCE.sub("", open(path).read())
    for line in text.splitlines():
        m = re.match(r"#{1,6} +(.*?) *#*$", line)
        if not m:
            continue
        a = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


def main():
    files = [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md")))
    broken, cache = [], {}
    for path in files:
        text = FENCE.sub("", open(path).read())
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            rel = os.path.relpath(path, TOP)
            if not os.path.exists(dest):
                broken.append(f"{rel}: {target} (no such file)")
            elif frag and dest.endswith(".md"):
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if frag not in cache[dest]:
                    broken.append(f"{rel}: {target} (no such heading)")
    if broken:
        print("links that do not resolve:\n  " + "\n  ".join(broken), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
