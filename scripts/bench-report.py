#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the results of tests/guest/bench/bench.sh into figures.

Arguments: NAME=RESULTS.KTAP for each configuration (c, rust, off), whose
"# RESULT name=W rep=R ops=N ns=T" lines were measured under -icount
shift=0,sleep=off: T is a number of guest instructions. For each
configuration and workload: the median of T/N over the repetitions (guest
instructions per IO, or per bio_alloc_bioset() + bio_put() pair), the
minimum, the maximum and the spread (max - min) / median, flagged above 1%.

Prints a table and what the cache saves (no cache minus cache) with each
implementation, writes --json (one record per configuration and workload,
and the savings) and --svg (through Debian's gnuplot, when it is installed:
each configuration's cost relative to the C cache, on an axis where 1%
shows, the per-pair figures, and the savings).
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


def chart(svg, names, by, savings):
    """Three panels: the Rust cache's cost relative to the C cache, in percent,
    on an axis where a tenth of a percent shows; the per-pair figures; and
    what each cache saves per IO and per pair."""
    dat = svg + ".dat"
    ratio = []
    for w, _, _ in WORKLOADS:
        c, r = by.get(("c", w)), by.get(("rust", w))
        if c is not None and r is not None:
            noisy = "*" if (r["flagged"] or c["flagged"]) else ""
            ratio.append((w + noisy, 100 * (r["median"] / c["median"] - 1)))
    with open(dat, "w") as f:
        f.write("# Rust / C - 1, in percent\n")
        for lab, v in ratio:
            f.write(f'"{lab}" {v:.3f}\n')
        f.write("\n\n# per pair\nworkload " + " ".join(names) + "\n")
        for w in ("pair-hit", "pair-splice", "pair-off"):
            f.write(w + " " + " ".join(str(by[(n, w)]["median"]) if (n, w) in by else "NaN"
                                       for n in names) + "\n")
        f.write("\n\n# saving\nworkload c rust\n")
        for row in savings:
            f.write(f"{row['workload']} {row['c']} {row['rust']}\n")
    lo = min([v for _, v in ratio] + [-1.0]) - 0.5
    hi = max([v for _, v in ratio] + [5.0]) + 1.0
    # Clustered boxes at explicit positions, each with its value on top.
    def clustered(index, cols, titles):
        k, w = len(cols), 0.8 / len(cols)
        out = []
        for i, (col, title) in enumerate(zip(cols, titles)):
            x = f"($0 + {(i - (k - 1) / 2) * w:.3f})"
            out.append(f"'{dat}' index {index} using {x}:{col}:({w:.3f}){':xtic(1)' if i == 0 else ''}"
                       f" with boxes title '{title}'")
            out.append(f"'' index {index} using {x}:{col}:(sprintf('%.0f', ${col}))"
                       " with labels offset 0,0.7 notitle")
        return ", ".join(out)

    titles = {"c": "C cache", "rust": "Rust cache", "off": "no cache"}
    per_pair = clustered(1, [i + 2 for i in range(len(names))], [titles.get(n, n) for n in names])
    saved = clustered(2, [2, 3], ["C cache", "Rust cache"])
    script = f"""
set terminal svg size 1000,1100 dynamic font 'sans,11'
set output '{svg}'
set termoption noenhanced
set multiplot layout 3,1 title "Guest instructions under QEMU -icount (median of the repetitions; * = spread above 1%)"
set style fill solid 0.8 border -1
set grid ytics
set boxwidth 0.6
set title "Rust cache relative to C cache: (Rust - C) / C, in percent (0: same cost)"
set yrange [{lo:.2f}:{hi:.2f}]
set ylabel 'percent more than C'
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 2 lc rgb 'black'
set arrow 2 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lc rgb 'red'
set arrow 3 from graph 0, first 5 to graph 1, first 5 nohead dt 3 lc rgb 'red'
set label 1 'per IO: +0.5%' at graph 0.01, first 0.5 offset 0,0.6 tc rgb 'red'
set label 2 'per pair: +5%' at graph 0.01, first 5 offset 0,0.6 tc rgb 'red'
plot '{dat}' index 0 using 0:2:xtic(1) with boxes notitle lc rgb '#4477aa', \\
     '' index 0 using 0:2:(sprintf('%+.2f%%', $2)) with labels offset 0,0.8 notitle
unset arrow 1; unset arrow 2; unset arrow 3; unset label 1; unset label 2
set title "bio_alloc_bioset() + bio_put(), per pair"
set yrange [0:*]
set xrange [-0.6:*]
set ylabel 'instructions per pair'
set key top left
plot {per_pair}
set title "What the cache saves: no cache minus cache, per IO, and per pair (no cache minus hit, splice)"
set ylabel 'instructions saved'
plot {saved}
unset multiplot
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print(f"chart: {svg}")


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

    # What the cache saves: no cache minus cache, per IO and per pair.
    savings = []
    if "off" in names:
        base = {"pair-hit": "pair-off", "pair-splice": "pair-off"}
        for w, label, unit in WORKLOADS:
            off = by.get(("off", base.get(w, w)))
            if off is None or w == "pair-off":
                continue
            row = {"workload": w, "label": label, "unit": unit}
            for n in ("c", "rust"):
                r = by.get((n, w))
                if r is not None:
                    row[n] = off["median"] - r["median"]
            if "c" in row and "rust" in row:
                savings.append(row)
        if savings:
            print()
            print("What the cache saves (no cache minus cache), and the share of the C cache's")
            print("saving the Rust cache keeps:")
            for row in savings:
                keep = f"{100 * row['rust'] / row['c']:.1f}%" if row["c"] else "-"
                print(f"  {row['label'] + ' (per ' + row['unit'] + ')':<{width}} C {row['c']:7.0f}"
                      f"   Rust {row['rust']:7.0f}   Rust keeps {keep}")
                records.append({"config": "saving", "workload": row["workload"],
                                "unit": f"guest instructions per {row['unit']}",
                                "c": round(row["c"], 1), "rust": round(row["rust"], 1),
                                "rust_keeps": round(row["rust"] / row["c"], 4) if row["c"]
                                else None})

    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"\n{len(records)} records in {args.json}")

    if args.svg and shutil.which("gnuplot"):
        chart(args.svg, names, by, savings)
    flagged = [f"{r['config']}/{r['workload']}" for r in records if r.get("flagged")]
    if flagged:
        print("spread above 1%: " + ", ".join(flagged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
