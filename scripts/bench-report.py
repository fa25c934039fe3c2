#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the results of tests/guest/bench/bench.sh into figures.

Arguments: NAME=RESULTS.KTAP for each configuration (c, rust, off), whose
"# RESULT name=W rep=R ops=N ns=T" lines were measured under -icount
shift=0,sleep=off: T is a number of guest instructions. For each
configuration and workload: the median of T/N over the repetitions (guest
instructions per IO, or per bio_alloc_bioset() + bio_put() pair), the
minimum, the maximum and the spread (max - min) / median, flagged above 1%.

Prints a table, writes --json (one record per configuration and workload)
and --svg (a bar chart through Debian's gnuplot, when it is installed).
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys

SPREAD_LIMIT = 0.01

WORKLOADS = [
    ("nullb-qd128", "null_blk, QD 128, batches of 32", "IO"),
    ("nullb-qd1", "null_blk, QD 1", "IO"),
    ("nvme-qd128", "NVMe, QD 128, batches of 32", "IO"),
    ("nvme-qd1", "NVMe, QD 1", "IO"),
    ("pair-hit", "alloc + put, cache hit", "pair"),
    ("pair-splice", "alloc + put, IRQ-list splice", "pair"),
    ("pair-off", "alloc + put, no cache", "pair"),
]


def parse(path):
    runs = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("# RESULT "):
                continue
            kv = dict(x.split("=", 1) for x in line[len("# RESULT "):].split())
            ops, ns = int(kv["ops"]), int(kv["ns"])
            if ops > 0:
                runs.setdefault(kv["name"], []).append(ns / ops)
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--svg")
    ap.add_argument("configs", nargs="+", help="NAME=results.ktap")
    args = ap.parse_args()

    names, data = [], {}
    for c in args.configs:
        name, path = c.split("=", 1)
        names.append(name)
        data[name] = parse(path)

    records = []
    for w, _, unit in WORKLOADS:
        for n in names:
            vals = data[n].get(w)
            if not vals:
                continue
            med = statistics.median(vals)
            spread = (max(vals) - min(vals)) / med if med else 0.0
            records.append({
                "config": n, "workload": w, "unit": f"guest instructions per {unit}",
                "median": round(med, 1), "min": round(min(vals), 1), "max": round(max(vals), 1),
                "spread": round(spread, 5), "reps": len(vals),
                "flagged": spread > SPREAD_LIMIT,
            })

    by = {(r["config"], r["workload"]): r for r in records}
    print()
    print("Guest instructions (QEMU TCG, -icount shift=0,sleep=off), median of the repetitions;")
    print("spread = (max - min) / median, '!' above 1%. rust/c is the ratio of the medians.")
    shown = [(w, f"{label} (per {unit})") for w, label, unit in WORKLOADS
             if any((n, w) in by for n in names)]
    width = max(len(label) for _, label in shown) + 1
    header = f"{'workload':<{width}}" + "".join(f"{n:>16}" for n in names)
    if "c" in names and "rust" in names:
        header += f"{'rust/c':>9}"
    print(header)
    for w, label in shown:
        row = f"{label:<{width}}"
        for n in names:
            r = by.get((n, w))
            if r is None:
                row += f"{'-':>16}"
                continue
            cell = f"{r['median']:.0f} ±{100 * r['spread']:.2f}%{'!' if r['flagged'] else ' '}"
            row += f"{cell:>16}"
        if ("c", w) in by and ("rust", w) in by:
            c, rust = by[("c", w)], by[("rust", w)]
            # A ratio of two figures that do not repeat means nothing.
            if c["flagged"] or rust["flagged"]:
                row += f"{'(noise)':>9}"
            else:
                row += f"{rust['median'] / c['median']:>9.3f}"
        print(row)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"\n{len(records)} records in {args.json}")

    if args.svg and shutil.which("gnuplot"):
        io = [w for w, _, u in WORKLOADS if u == "IO" and any((n, w) in by for n in names)]
        dat = args.svg + ".dat"
        with open(dat, "w") as f:
            f.write("workload " + " ".join(names) + "\n")
            for w in io:
                # '*': a figure of this workload varies by more than 1%.
                mark = "*" if any(by[(n, w)]["flagged"] for n in names if (n, w) in by) else ""
                f.write(w + mark + " " + " ".join(str(by[(n, w)]["median"]) if (n, w) in by
                                                  else "NaN" for n in names) + "\n")
        plot = ", ".join(f"'{dat}' using {i + 2}:xtic(1) title columnheader"
                         for i in range(len(names)))
        script = f"""
set terminal svg size 800,450 dynamic font 'sans,11'
set output '{args.svg}'
set title "Guest instructions per polled 512 B read (lower is better)\\n* spread above 1% between repetitions"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set ylabel 'instructions per IO'
set yrange [0:*]
set grid ytics
plot {plot}
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
        print(f"chart: {args.svg}")
    flagged = [f"{r['config']}/{r['workload']}" for r in records if r["flagged"]]
    if flagged:
        print("spread above 1%: " + ", ".join(flagged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
