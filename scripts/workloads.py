#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The workloads of make bench, one table for every program that names them.

tests/guest/bench/bench.sh runs each workload in the guest and prints its
"RESULT name=NAME ..." lines; scripts/bench-report.py turns them into the
terminal's table, bench.json and the chart; scripts/render-docs.py renders
the tables of README.md and docs/results.md from the recorded bench.json.
Every one of them takes the workloads, their order and their labels from
WORKLOADS below, so that a workload reads the same on the terminal, in the
chart and in the docs.

    workloads.py            print the table
    workloads.py --check    exit 1, naming them, unless the guest program
                            (tests/guest/bench/bench.sh) runs exactly the
                            workloads of the table, and the witness

Adding a workload: a row here, and its run in tests/guest/bench/bench.sh
(io/run NAME ..., or micro MODE for pair-MODE).
"""

import collections
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUEST = os.path.join(TOP, "tests", "guest", "bench", "bench.sh")

# NAME: the name of its RESULT lines (the guest's) and of its bench.json
# records. UNIT: what one of its operations is, "IO" or "pair" (one
# bio_alloc_bioset() + bio_put() pair of the microbenchmark). PANEL: the
# chart's panel it is drawn in (PANELS). LABEL: how the terminal, the chart
# and the docs name it. NO_CACHE: the workload whose figure on the kernel
# without a cache ("off") this one's saving is counted from; None for none.
Workload = collections.namedtuple("Workload", "name unit panel label no_cache")


def W(name, unit, panel, label, no_cache=""):
    return Workload(name, unit, panel, label, name if no_cache == "" else no_cache)


# In the order of every table. The chart draws each panel's workloads in
# this order too.
WORKLOADS = [
    W("nullb-qd128", "IO", "polled", "null_blk, polled, QD 128"),
    W("nullb-qd1", "IO", "polled", "null_blk, polled, QD 1"),
    W("nvme-qd128", "IO", "polled", "NVMe, polled, QD 128"),
    W("nvme-qd1", "IO", "polled", "NVMe, polled, QD 1"),
    W("dm-qd128", "IO", "polled", "dm-linear, polled, QD 128"),
    W("dm-qd1", "IO", "polled", "dm-linear, polled, QD 1"),
    W("pt-qd128", "IO", "polled", "NVMe passthrough, polled, QD 128"),
    W("pt-qd1", "IO", "polled", "NVMe passthrough, polled, QD 1"),
    W("nullb-irq-qd128", "IO", "irq", "null_blk, interrupts, QD 128"),
    W("nullb-irq-qd1", "IO", "irq", "null_blk, interrupts, QD 1"),
    W("nvme-irq-qd128", "IO", "irq", "NVMe, interrupts, QD 128"),
    W("nvme-irq-qd1", "IO", "irq", "NVMe, interrupts, QD 1"),
    W("ext4-dio-qd128", "IO", "ext4", "ext4 O_DIRECT io_uring, QD 128"),
    W("ext4-dio-qd1", "IO", "ext4", "ext4 O_DIRECT io_uring, QD 1"),
    W("ext4-psync-qd1", "IO", "ext4", "ext4 O_DIRECT pread"),
    W("ext4-fsync", "IO", "ext4", "ext4 4 KiB write + fsync"),
    W("pair-hit", "pair", "pairs", "alloc + put, cache hit", "pair-off"),
    W("pair-splice", "pair", "pairs", "alloc + put, IRQ-list splice", "pair-off"),
    W("pair-off", "pair", "pairs", "alloc + put, no cache", None),
]

# The chart's panels of ratios, in order: key, title.
PANELS = [
    ("polled", "Polled raw devices, per IO"),
    ("irq", "Interrupt-driven raw devices, per IO"),
    ("ext4", "ext4, per IO"),
    ("pairs", "The microbenchmark, per bio_alloc_bioset() + bio_put() pair"),
]

# Not a figure: polled null_blk reads beside a busy loop on the other CPU,
# which every boot of make bench ends with and whose windows
# scripts/bench-report.py requires to be flagged (check_witness()).
WITNESS = "witness"

BY_NAME = {w.name: w for w in WORKLOADS}


def indistinct(a, b):
    """Whether two measured records of these workloads, A and B, differ by
    no more than their spreads added, each the max - min of its figures over
    every boot's repetitions (the records' "min" and "max"): then their
    difference, their ratio, and a saving or share made of them tell
    nothing from none. The one rule of scripts/bench-report.py, which
    measures, and scripts/render-docs.py, which renders what was recorded."""
    return abs(a["median"] - b["median"]) <= (a["max"] - a["min"]) + (b["max"] - b["min"])


# Follows a difference within its inputs' spreads; a ratio or a share of
# such figures reads (noise) in its place.
NOISE = " (noise)"


def _validate():
    names = [w.name for w in WORKLOADS]
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"workloads named twice: {dup}"
    labels = [w.label for w in WORKLOADS]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    assert not dup, f"labels used twice: {dup}"
    # Every table lists the workloads per IO first, then the pairs.
    units = [w.unit for w in WORKLOADS]
    assert units == sorted(units, key=("IO", "pair").index), "a pair before a workload per IO"
    panels = {k for k, _ in PANELS}
    for w in WORKLOADS:
        assert w.unit in ("IO", "pair"), f"{w.name}: unit {w.unit!r}"
        # The microbenchmark's (micro MODE: pair-MODE) are timed by the
        # kernel's clock, the others by QEMU's count (bench-report.py, figure()).
        assert (w.unit == "pair") == w.name.startswith("pair-"), f"{w.name}: unit {w.unit!r}"
        # A workload without a panel would be left out of the chart unseen.
        assert w.panel in panels, f"{w.name}: no panel {w.panel!r} in PANELS"
        assert w.no_cache is None or w.no_cache in BY_NAME, f"{w.name}: no workload {w.no_cache!r}"
        assert w.name != WITNESS


_validate()


def guest_workloads(path=GUEST):
    """The workloads the guest program runs, as it names their RESULT lines:
    io NAME ..., run NAME ..., micro MODE ... (pair-MODE)."""
    out = []
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s*(io|run|micro)\s+([A-Za-z0-9_.-]+)\s", line)
            if m:
                name = ("pair-" if m.group(1) == "micro" else "") + m.group(2)
                if name not in out:
                    out.append(name)
    return out


def check(path=GUEST):
    """The differences between the table and the guest program, as lines."""
    guest = guest_workloads(path)
    table = [w.name for w in WORKLOADS] + [WITNESS]
    rel = os.path.relpath(path, TOP)
    return ([f"{rel} runs {n}, which scripts/workloads.py does not have" for n in guest
             if n not in table] +
            [f"scripts/workloads.py has {n}, which {rel} does not run" for n in table
             if n not in guest])


def main(argv):
    if argv[1:] == ["--check"]:
        diff = check()
        for line in diff:
            print(line, file=sys.stderr)
        return 1 if diff else 0
    if argv[1:]:
        sys.exit(__doc__)
    for w in WORKLOADS:
        print(f"{w.name:<16} {w.unit:<5} {w.panel:<7} {w.label}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
