#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`make help`: the targets and variables of scripts/targets.tsv, the same
lines README.md's table is rendered from, as plain text."""

import os
import re
import sys
import textwrap

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rows():
    """(kind, name, what, in CI, link) of each line of scripts/targets.tsv."""
    with open(os.path.join(TOP, "scripts", "targets.tsv")) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                sys.exit(f"scripts/targets.tsv:{n}: {len(fields)} fields, not 5")
            yield fields


def plain(md):
    """Markdown as the terminal shows it: no backticks, no escapes."""
    return re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", md).replace("`", "").replace("\\|", "|")


def main():
    width = 24
    for kind, title in (("target", "Targets"), ("variable", "Variables")):
        print(f"{title}:")
        for k, name, what, _, _ in rows():
            if k != kind:
                continue
            lines = textwrap.wrap(plain(what), 78 - width, break_on_hyphens=False)
            first = f"  {name:<{width - 2}}"
            if len(name) > width - 3:
                print(f"  {name}")
                first = " " * width
            print(first + lines[0])
            for line in lines[1:]:
                print(" " * width + line)
    print("\nThe same, with links: README.md#the-other-targets.")


if __name__ == "__main__":
    main()
