#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the results of tests/guest/bench/bench.sh into figures.

Arguments: NAME=RESULTS.KTAP[,RESULTS.KTAP...] for each configuration (c,
rust, c612, off), one file per boot, whose "# RESULT name=W rep=R ops=N ns=T"
lines were measured under -icount shift=0,sleep=off: T is a number of guest
instructions. For each configuration and workload: the median of T/N over
the repetitions of every boot (guest instructions per IO, or per
bio_alloc_bioset() + bio_put() pair), the minimum, the maximum and the
spread (max - min) / median, flagged above 1%.

Prints a table and what the cache saves (no cache minus cache) with each
implementation. With two boots of the C cache, its second boot read against
its first as the Rust cache is against the C cache ("c 2nd/1st") shows how
far two boots of one kernel differ: the noise floor of every Rust/C figure.
Writes --json (one record per configuration and workload, and the savings)
and --svg (through Debian's gnuplot, when it is installed: the Rust cache's
cost relative to the C cache and the second boot's relative to the first, on
an axis where a tenth of a percent shows, the per-pair figures, and the
savings).
"""

import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

SPREAD_LIMIT = 0.01
# A window in which the other CPUs executed more than this share of the
# instructions is flagged: both vCPUs share the instruction clock, so their
# work counts against the measured CPU. QEMU's vcpu-insns plugin
# (tests/bench/vcpu-insns.c) counts each vCPU's instructions between the
# marks that open and close the window ("vcpu-insns: begin|end vcpu=V
# insns=N,N" in the run's vcpu-insns.log, one pair per RESULT line, in
# order). The isolated CPU still takes its timer tick: 0.035-0.09% of a
# window (more of a short one), in one boot of c-bench (README, "make
# bench"); a share that could move a figure by half a percent is well above.
OTHER_LIMIT = 0.002
# In a window that a program timed (all but the microbenchmark's, which the
# kernel times inside its marks), the guest clock and QEMU's count of what
# every vCPU executed must agree: to 0.01-0.33% in the first runs, with the
# other CPU idle or busy. A window in which they do not is an error: either
# the clock is not an instruction count there, or the count misses work.
CLOCK_LIMIT = 0.005
# Without that log (a run from before the plugin): a window in which the
# other CPUs were busy for at least this many ticks of their /proc/stat is
# flagged. (Their elapsed ticks are printed too, but an idle CPU without its
# tick accounts its idle time only when it wakes.) Ticks sample where a CPU
# is, not what it executes: under -icount a CPU whose turn ended in a
# softirq is sampled there for as long as the other CPU's turn lasts.
BUSY_TICKS = 2
# The C cache's first and second boots, read against each other.
FIRST, SECOND = "c#1", "c#2"
# A configuration read against another: its ratio's column in the table, its
# bars' title in the chart, its title and JSON key in the savings.
Comparison = collections.namedtuple("Comparison", "config ref column legend saving key")
COMPARISONS = [
    Comparison("rust", "c", "rust/c", "Rust cache / C cache", "Rust", "rust"),
    Comparison(SECOND, FIRST, "c 2nd/1st", "C cache, 2nd boot / 1st (noise)", "C 2nd boot",
               "c_second_boot"),
]

WORKLOADS = [
    ("nullb-qd128", "null_blk, QD 128, batches of 32", "IO"),
    ("nullb-qd1", "null_blk, QD 1", "IO"),
    ("nvme-qd128", "NVMe, QD 128, batches of 32", "IO"),
    ("nvme-qd1", "NVMe, QD 1", "IO"),
    ("dm-qd128", "dm-linear, QD 128, batches of 32", "IO"),
    ("dm-qd1", "dm-linear, QD 1", "IO"),
    ("pt-qd128", "NVMe passthrough, QD 128, batches of 32", "IO"),
    ("pt-qd1", "NVMe passthrough, QD 1", "IO"),
    ("nullb-irq-qd128", "null_blk IRQ, QD 128, batches of 32", "IO"),
    ("nullb-irq-qd1", "null_blk IRQ, QD 1", "IO"),
    ("nvme-irq-qd128", "NVMe IRQ, QD 128, batches of 32", "IO"),
    ("nvme-irq-qd1", "NVMe IRQ, QD 1", "IO"),
    ("ext4-dio-qd128", "ext4 O_DIRECT io_uring, QD 128", "IO"),
    ("ext4-dio-qd1", "ext4 O_DIRECT io_uring, QD 1", "IO"),
    ("ext4-psync-qd1", "ext4 O_DIRECT pread", "IO"),
    ("ext4-fsync", "ext4 4 KiB write + fsync", "IO"),
    ("pair-hit", "alloc + put, cache hit", "pair"),
    ("pair-splice", "alloc + put, IRQ-list splice", "pair"),
    ("pair-off", "alloc + put, no cache", "pair"),
]


def windows(path):
    """The windows of the vcpu-insns log beside results file PATH: (the
    measured vCPU, the instructions it executed, those the others executed)
    in order; None if there is no log."""
    log = os.path.join(os.path.dirname(path), "vcpu-insns.log")
    if not os.path.exists(log):
        return None
    out, begin = [], None
    with open(log, errors="replace") as f:
        for line in f:
            m = MARK.match(line.strip())
            if not m:
                continue
            kind, vcpu = m.group(1), int(m.group(2))
            counts = [int(x) for x in m.group(3).split(",")]
            if kind == "begin":
                begin = (vcpu, counts)
                continue
            if begin is None or begin[0] != vcpu:
                sys.exit(f"{log}: a window ends on vCPU {vcpu} that did not begin there")
            delta = [b - a for a, b in zip(begin[1], counts)]
            out.append((vcpu, delta[vcpu], sum(delta) - delta[vcpu]))
            begin = None
    return out


MARK = re.compile(r"^vcpu-insns: (begin|end) vcpu=(\d+) insns=([\d,]+)$")


def parse(path):
    runs = {}
    wins = windows(path)
    results = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("# RESULT "):
                results.append(dict(x.split("=", 1) for x in line[len("# RESULT "):].split()))
    if wins is not None:
        COUNTED.add(path)
    if wins is not None and len(wins) != len(results):
        sys.exit(f"{path}: {len(results)} RESULT lines, but {len(wins)} windows in its vcpu-insns.log")
    for i, kv in enumerate(results):
        ops, ns = int(kv["ops"]), int(kv["ns"])
        if int(kv["rep"]) == 0:
            continue  # the warm-up
        if ops > 0:
            runs.setdefault(kv["name"], []).append(ns / ops)
        if wins is not None:
            _, mine, others = wins[i]
            share = others / (mine + others) if mine + others else 0.0
            if not kv["name"].startswith("pair-") and abs(mine + others - ns) > CLOCK_LIMIT * ns:
                sys.exit(f"{path}: {kv['name']} rep {kv['rep']}: the guest clock says {ns}"
                         f" instructions, QEMU counted {mine} + {others}")
            if kv["name"] == WITNESS:
                WITNESSED.setdefault(path, []).append(share)
            o = OTHERS.setdefault(kv["name"], {})
            o[path] = max(o.get(path, 0.0), share)
            busy = share > OTHER_LIMIT
        else:
            busy = int(kv.get("busy", 0)) >= BUSY_TICKS
        if busy:
            BUSY.setdefault(kv["name"], set()).add(path)
    return runs


# Workload -> the result files in which one of its windows had the other
# CPUs busy.
BUSY = {}
# The workload run with the other CPU busy on purpose, and the other CPUs'
# share of each of its windows, by result file: each must be flagged.
WITNESS = "witness"
WITNESSED = {}
# The result files whose windows QEMU counted (a vcpu-insns.log beside them).
COUNTED = set()
# Workload -> result file -> the largest share of a window's instructions
# that the other CPUs executed.
OTHERS = {}


def chart(svg, names, by, comparisons, savings):
    """Three panels: the Rust cache's cost relative to the C cache, in percent,
    on an axis where a tenth of a percent shows; the per-pair figures; and
    what each cache saves per IO and per pair."""
    dat = svg + ".dat"
    ratio = []
    for w, _, _ in WORKLOADS:
        rs = [(by.get((cmp.config, w)), by.get((cmp.ref, w))) for cmp in comparisons]
        if any(x is None or ref is None for x, ref in rs):
            continue
        noisy = "*" if any(x["flagged"] or ref["flagged"] for x, ref in rs) else ""
        ratio.append((w + noisy, [100 * (x["median"] / ref["median"] - 1) for x, ref in rs]))
    with open(dat, "w") as f:
        f.write("# X / reference - 1, in percent: workload "
                + " ".join(cmp.column for cmp in comparisons) + "\n")
        for lab, vs in ratio:
            f.write(f'"{lab}" ' + " ".join(f"{v:.3f}" for v in vs) + "\n")
        f.write("\n\n# per pair: workload " + " ".join(names) + "\n")
        for w in ("pair-hit", "pair-splice", "pair-off"):
            f.write(w + " " + " ".join(str(by[(n, w)]["median"]) if (n, w) in by else "NaN"
                                       for n in names) + "\n")
        f.write("\n\n# saving: workload c rust\n")
        for row in savings:
            f.write(f"{row['workload']} {row['c']} {row['rust']}\n")
    lo = min([v for _, vs in ratio for v in vs] + [-1.0]) - 0.5
    hi = max([v for _, vs in ratio for v in vs] + [5.0]) + 1.0
    # Clustered boxes at explicit positions, each with its value on top.
    def clustered(index, cols, titles, fmt="%.0f"):
        k, w = len(cols), 0.8 / len(cols)
        out = []
        for i, (col, title) in enumerate(zip(cols, titles)):
            x = f"($0 + {(i - (k - 1) / 2) * w:.3f})"
            out.append(f"'{dat}' index {index} using {x}:{col}:({w:.3f}){':xtic(1)' if i == 0 else ''}"
                       f" with boxes title '{title}'")
            out.append(f"'' index {index} using {x}:{col}:(sprintf('{fmt}', ${col}))"
                       " with labels offset 0,0.7 font ',8' notitle")
        return ", ".join(out)

    titles = {"c": "C cache", "rust": "Rust cache", "c612": "C cache, 6.12 rule",
              "off": "no cache"}
    rel = clustered(0, [i + 2 for i in range(len(comparisons))],
                    [cmp.legend for cmp in comparisons], fmt="%+.2f%%")
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
set title "Rust cache relative to C cache, and the C kernel's second boot relative to its first (the noise floor), in percent"
set yrange [{lo:.2f}:{hi:.2f}]
set ylabel 'percent more than C'
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 2 lc rgb 'black'
set arrow 2 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lc rgb 'red'
set arrow 3 from graph 0, first 5 to graph 1, first 5 nohead dt 3 lc rgb 'red'
set label 1 'per IO: +0.5%' at graph 0.01, first 0.5 offset 0,0.6 tc rgb 'red'
set label 2 'per pair: +5%' at graph 0.01, first 5 offset 0,0.6 tc rgb 'red'
set key top center
set xrange [-0.6:*]
plot {rel}
unset arrow 1; unset arrow 2; unset arrow 3; unset label 1; unset label 2
set title "bio_alloc_bioset() + bio_put(), per pair"
set yrange [0:*]
set ylabel 'instructions per pair'
plot {per_pair}
set key outside right top vertical
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
    ap.add_argument("--beside", help="another run's --json, whose savings to print beside these")
    ap.add_argument("configs", nargs="+", help="NAME=results.ktap[,results.ktap...], one per boot")
    args = ap.parse_args()

    names, data, boots, paths_of = [], {}, {}, {}
    for c in args.configs:
        name, paths = c.split("=", 1)
        names.append(name)
        paths_of[name] = paths.split(",")
        per_boot = [parse(p) for p in paths.split(",")]
        boots[name] = len(per_boot)
        data[name] = {}
        for runs in per_boot:
            for w, vals in runs.items():
                data[name].setdefault(w, []).extend(vals)
        if name == "c" and len(per_boot) >= 2:
            data[FIRST], data[SECOND] = per_boot[0], per_boot[1]
            boots[FIRST] = boots[SECOND] = 1
            paths_of[FIRST], paths_of[SECOND] = paths_of[name][:1], paths_of[name][1:2]

    # The witness seen to work, in every boot whose windows QEMU counted: a
    # busy loop on the other CPU is counted and flagged. Not in every window:
    # QEMU's round-robin gives a vCPU that never idles anything from none to
    # half of the clock, window by window.
    for n in names:
        for p in paths_of[n]:
            if p not in COUNTED:
                continue
            shares = WITNESSED.get(p, [])
            if not shares or max(shares) <= OTHER_LIMIT:
                sys.exit(f"{p}: no window run beside a busy CPU was flagged"
                         f" (the other CPUs' shares: {shares}): the witness does not work")
            flagged = sum(x > OTHER_LIMIT for x in shares)
            print(f"witness, {n}: {flagged} of {len(shares)} windows beside a busy CPU flagged,"
                  f" its share {100 * min(shares):.1f}% to {100 * max(shares):.1f}%"
                  f" ({p})")

    records = []
    for w, _, unit in WORKLOADS:
        for n in data:
            vals = data[n].get(w)
            if not vals:
                continue
            med = statistics.median(vals)
            spread = (max(vals) - min(vals)) / med if med else 0.0
            records.append({
                "config": n, "workload": w, "unit": f"guest instructions per {unit}",
                "median": round(med, 1), "min": round(min(vals), 1), "max": round(max(vals), 1),
                "spread": round(spread, 5), "reps": len(vals), "boots": boots[n],
                "flagged": spread > SPREAD_LIMIT,
                "other_cpu_busy": any(p in BUSY.get(w, ()) for p in paths_of[n]),
            })
            shares = [OTHERS.get(w, {}).get(p) for p in paths_of[n]]
            if all(x is not None for x in shares):
                records[-1]["other_cpu_share"] = round(max(shares), 6)

    by = {(r["config"], r["workload"]): r for r in records}
    comparisons = [cmp for cmp in COMPARISONS if cmp.config in data and cmp.ref in data]
    print()
    print("Guest instructions (QEMU TCG, -icount shift=0,sleep=off), median of the repetitions;")
    print("boots: " + ", ".join(f"{n} {boots[n]}" for n in names) + ". Spread = (max - min) / median,"
          " '!' above 1%;")
    print(f"'#': in a window the other CPUs executed more than {100 * OTHER_LIMIT:.1f}% of the"
          f" instructions\n(counted by QEMU; by their /proc/stat, {BUSY_TICKS}+ busy ticks, where not"
          " counted).")
    print("rust/c is the ratio of the medians" + (
        "; c 2nd/1st, the same for two boots of the C kernel,\nis how far a ratio moves by noise."
        if SECOND in data else "."))
    shown = [(w, f"{label} (per {unit})") for w, label, unit in WORKLOADS
             if any((n, w) in by for n in names)]
    width = max(len(label) for _, label in shown) + 1
    header = f"{'workload':<{width}}" + "".join(f"{n:>16}" for n in names)
    header += "".join(f"{cmp.column:>11}" for cmp in comparisons)
    print(header)
    for w, label in shown:
        row = f"{label:<{width}}"
        for n in names:
            r = by.get((n, w))
            if r is None:
                row += f"{'-':>16}"
                continue
            mark = "!" if r["flagged"] else "#" if r["other_cpu_busy"] else " "
            cell = f"{r['median']:.0f} ±{100 * r['spread']:.2f}%{mark}"
            row += f"{cell:>16}"
        for cmp in comparisons:
            c, x = by.get((cmp.ref, w)), by.get((cmp.config, w))
            if c is None or x is None:
                row += f"{'-':>11}"
            # A ratio of two figures that do not repeat means nothing.
            elif c["flagged"] or x["flagged"]:
                row += f"{'(noise)':>11}"
            elif c["other_cpu_busy"] or x["other_cpu_busy"]:
                row += f"{'(busy)':>11}"
            else:
                row += f"{x['median'] / c['median']:>11.3f}"
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
            for n in {"c"} | {n for cmp in comparisons for n in (cmp.config, cmp.ref)}:
                r = by.get((n, w))
                if r is not None:
                    row[n] = off["median"] - r["median"]
            if "c" in row and "rust" in row:
                savings.append(row)
        if savings:
            print()
            print("What the cache saves (no cache minus cache), and the share of the C cache's")
            print("saving the Rust cache keeps" + (" (and the C cache's second boot of its first: noise):"
                                                  if SECOND in data else ":"))
            for row in savings:
                rec = {"config": "saving", "workload": row["workload"],
                       "unit": f"guest instructions per {row['unit']}"}
                line = f"  {row['label'] + ' (per ' + row['unit'] + ')':<{width}} C {row['c']:7.0f}"
                rec["c"] = round(row["c"], 1)
                for cmp in comparisons:
                    n, ref = cmp.config, cmp.ref
                    if n not in row or ref not in row:
                        continue
                    keep = row[n] / row[ref] if row[ref] else None
                    line += f"   {cmp.saving} {row[n]:4.0f}, keeps "
                    line += f"{100 * keep:5.1f}%" if keep is not None else "    -"
                    if ref != "c":
                        line += f" of {row[ref]:.0f}"
                    rec[cmp.key] = round(row[n], 1)
                    rec[cmp.key + "_keeps"] = round(keep, 4) if keep is not None else None
                print(line)
                records.append(rec)

    # What 6.19's rule (bio_alloc_cache=all: c, rust) saves over 6.12's (the
    # C kernel's default: c612), per IO.
    if "c612" in names:
        print()
        print("What 6.19's rule saves per IO over 6.12's (c612 minus each, the C kernel under")
        print("6.12's rule the baseline of both), and the share of the C cache's saving the Rust")
        print("cache keeps:")
        for w, label, unit in WORKLOADS:
            base, c, r = by.get(("c612", w)), by.get(("c", w)), by.get(("rust", w))
            if base is None or c is None or r is None or unit != "IO":
                continue
            sc, sr = base["median"] - c["median"], base["median"] - r["median"]
            rec = {"config": "rule_saving", "workload": w, "unit": f"guest instructions per {unit}",
                   "c": round(sc, 1), "rust": round(sr, 1),
                   "c_percent": round(100 * sc / base["median"], 2),
                   "rust_keeps": round(sr / sc, 4) if abs(sc) >= 1 else None}
            records.append(rec)
            keep = f"keeps {100 * sr / sc:5.1f}%" if abs(sc) >= 1 else "(no saving)"
            print(f"  {label + ' (per ' + unit + ')':<{width}} C {sc:6.0f} ({rec['c_percent']:+.2f}%)"
                  f"   Rust {sr:6.0f}, {keep}")

    if args.beside and savings:
        with open(args.beside) as f:
            other = {r["workload"]: r for r in json.load(f) if r.get("config") == "saving"}
        print()
        print(f"What each cache saves here, beside what it saves in {args.beside}:")
        for row in savings:
            o = other.get(row["workload"])
            if o is None:
                continue
            print(f"  {row['label'] + ' (per ' + row['unit'] + ')':<{width}}"
                  f" C {row['c']:5.0f} (there {o['c']:5.0f})"
                  f"   Rust {row['rust']:5.0f} (there {o['rust']:5.0f})")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"\n{len(records)} records in {args.json}")

    if args.svg and shutil.which("gnuplot"):
        chart(args.svg, names, by, comparisons, savings)
    flagged = [f"{r['config']}/{r['workload']}" for r in records if r.get("flagged")]
    if flagged:
        print("spread above 1%: " + ", ".join(flagged))
    shares = [r["other_cpu_share"] for r in records if "other_cpu_share" in r]
    if shares:
        print(f"the other CPUs' share of a window's instructions (QEMU's count): "
              f"{100 * min(shares):.3f}% to {100 * max(shares):.3f}% (largest per workload"
              f" and configuration), flagged above {100 * OTHER_LIMIT:.1f}%")
    busy = [f"{r['config']}/{r['workload']}" for r in records if r.get("other_cpu_busy")]
    if busy:
        print("other CPUs busy in a measured window: " + ", ".join(busy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
