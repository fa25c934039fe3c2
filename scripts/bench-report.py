#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the results of tests/guest/bench/bench.sh into figures.

Arguments: NAME=RESULTS.KTAP[,RESULTS.KTAP...] for each configuration (c,
rust, c612, off), one file per boot, whose "# RESULT name=W rep=R ops=N
ns=T" lines were measured under -icount shift=0,sleep=off, each beside the
vcpu-insns.log that QEMU's vcpu-insns plugin wrote in that boot: every
vCPU's instruction count at the marks around each window. A window's figure
is what the measured vCPU executed in it over N, per IO, or the kernel's
own clock T over N, per bio_alloc_bioset() + bio_put() pair (figure() says
why). For each configuration and workload: the median of the figures over
the repetitions of every boot, the minimum, the maximum, the spread (max -
min) / median, flagged above 1% ('!'), and the other vCPU's largest share
of a window's instructions, flagged above 0.2% ('#').

Prints a table, what the cache saves (no cache minus cache) with each
implementation and what 6.19's rule saves over 6.12's. With two boots of
the C cache, its second boot read against its first as the Rust cache is
against the C cache ("c 2nd/1st") shows how far two boots of one kernel
differ: the noise floor of every Rust/C figure. Every figure derived from
measured ones (a ratio, a saving, a share of a saving) carries the union of
their flags wherever it is printed, written or drawn, and a ratio or share
of flagged figures is printed as "(noise)" or "(busy)", not as a number.
A figure whose difference is within its inputs' spreads (indistinct()) is
"(noise)" too: a saving is printed followed by it, a ratio or a share (or a
saving's percentage) in its place, since the difference it reads may be
none at all.
Writes --json (one record per configuration and workload, the ratios and
the savings, each derived figure with its "flags" and whether it is
"within_spread") and --svg (through Debian's gnuplot, when it is
installed: horizontal bars, a panel per group of workloads, of the Rust
cache's cost relative to the C cache and the second boot's relative to the
first, on an axis where a tenth of a percent shows, the per-pair figures,
and the savings; flagged bars hatched).

Fails unless every window was counted, the guest clock agrees with the
count, and the witness works (check_witness()).
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

import workloads
from workloads import NOISE, indistinct

SPREAD_LIMIT = 0.01
# A window in which the other CPUs executed more than this share of the
# instructions is flagged: both vCPUs share the instruction clock, so their
# work counts against the measured CPU. QEMU's vcpu-insns plugin
# (tests/bench/vcpu-insns.c) counts each vCPU's instructions between the
# marks that open and close the window ("vcpu-insns: begin|end vcpu=V
# insns=N,N" in the run's vcpu-insns.log, one pair per RESULT line, in
# order). The isolated CPU still takes its timer tick, a larger share of a
# short window: 0.035-0.086% of each window of make bench at commit 828cc1b
# (recorded in that commit's README); a share that could move a figure by
# half a percent is well above.
OTHER_LIMIT = 0.002
# In a window that a program timed (all but the microbenchmark's, which the
# kernel times inside its marks), the guest clock and QEMU's count of what
# every vCPU executed must agree: to 0.01-0.33% in the first runs, with the
# other CPU idle or busy. A window in which they do not is an error: either
# the clock is not an instruction count there, or the count misses work.
# In the microbenchmark's, the kernel's clock must count no more than every
# vCPU executed between the marks, which enclose its loop.
CLOCK_LIMIT = 0.005
# A record's flags, each with the mark printed next to a figure that
# carries it: its spread is above SPREAD_LIMIT; in one of its windows the
# other CPUs executed more than OTHER_LIMIT of the instructions.
FLAGS = {"spread": "!", "other_cpu": "#"}
# The witness: every boot ends with polled null_blk reads beside a busy loop
# on the other CPU (tests/guest/bench/bench.sh), and the report fails if more
# than this many of each boot's measured windows of it are unflagged
# (check_witness()). Not zero, because QEMU does not allow it: its round
# robin gives a vCPU that never idles from half of a window's instructions
# down to nothing but its timer interrupts. In both boots of c-bench of one
# make bench, the fourth measured window of the witness went unflagged the
# same way (the next run of the same kernels flagged every window): the
# guest counted every tick of it busy on the other CPU, and QEMU ran that
# vCPU for 37,700 instructions, its 8 ticks (docs/results.md, "The
# witness"). One window in a boot is as much as such a run has shown; the
# busy loop starts before the warm-up, which is left out, as from every
# figure.
WITNESS_MAX_UNFLAGGED = 1
WITNESS = workloads.WITNESS
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

# The workloads, their order and labels: scripts/workloads.py, the one table
# of them that the guest program, this report and the docs follow.
WORKLOADS = [(w.name, w.label, w.unit) for w in workloads.WORKLOADS]
# The chart's panels of ratios, a group of workloads each (workloads.PANELS).
GROUPS = [(title, [w.name for w in workloads.WORKLOADS if w.panel == key])
          for key, title in workloads.PANELS]
# The most the Rust cache may cost over the C cache, in percent, per unit.
TARGETS = {"IO": 0.5, "pair": 5.0}


def windows(path):
    """The windows of the vcpu-insns log beside results file PATH: (the
    measured vCPU, the instructions it executed, those the others executed)
    in order. Without that log no figure can be read from PATH: the guest
    clock alone counts the other vCPU's instructions too, and says nothing
    of how many they were."""
    log = os.path.join(os.path.dirname(path), "vcpu-insns.log")
    if not os.path.exists(log):
        sys.exit(f"{log}: missing, the vCPUs' instruction counts in the windows of {path}:"
                 " make bench (scripts/bench.sh) loads QEMU's vcpu-insns plugin, which writes"
                 " it; results without it cannot be read")
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


def figure(name, ns, mine):
    """The instructions window NAME took, of which the measured vCPU
    executed MINE and the guest clock counted NS.

    A program's window (uring-io, nvme-pt: all but pair-*): MINE. Its marks
    sit right around the timed loop (window_begin() just before the clock is
    first read, window_end() just after it is read last), and the guest
    clock counts the other vCPU's instructions too.

    The microbenchmark's (pair-*): NS, the kernel's own clock around its
    loop. Its marks are executed by two window-mark processes around a
    shell's write(2) to debugfs (micro() in tests/guest/bench/bench.sh):
    they enclose the first one's exit, the write's entry and exit, the
    parsing of "MODE LOOPS", the benchmark's setup and the exec of the
    second, none of which is a pair, while the kernel times the loop alone
    (the splice mode its allocations and puts alone, without the irq_work
    around them). That clock counts the other vCPU's instructions too: its
    share of the window is flagged and printed as in every other window."""
    return ns if name.startswith("pair-") else mine


def parse(path):
    """The figures of results file PATH by workload, the warm-ups (rep 0)
    left out, each window checked against QEMU's count; notes the other
    CPUs' shares of the measured windows in OTHERS, BUSY and WITNESSED."""
    wins = windows(path)
    results = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("# RESULT "):
                results.append(dict(x.split("=", 1) for x in line[len("# RESULT "):].split()))
    if len(wins) != len(results):
        sys.exit(f"{path}: {len(results)} RESULT lines, but {len(wins)} windows in its vcpu-insns.log")
    runs = {}
    for kv, (_, mine, others) in zip(results, wins):
        name, ops, ns = kv["name"], int(kv["ops"]), int(kv["ns"])
        if name not in workloads.BY_NAME and name != WITNESS:
            sys.exit(f"{path}: workload {name} is not in scripts/workloads.py: add it there,"
                     " with its label, or its figures would be left out unseen")
        if int(kv["rep"]) == 0:
            continue  # the warm-up
        if name.startswith("pair-"):
            if ns > (1 + CLOCK_LIMIT) * (mine + others):
                sys.exit(f"{path}: {name} rep {kv['rep']}: the kernel's clock says {ns}"
                         f" instructions, more than the {mine} + {others} QEMU counted around it")
        elif abs(mine + others - ns) > CLOCK_LIMIT * ns:
            sys.exit(f"{path}: {name} rep {kv['rep']}: the guest clock says {ns}"
                     f" instructions, QEMU counted {mine} + {others}")
        if ops > 0:
            runs.setdefault(name, []).append(figure(name, ns, mine) / ops)
        share = others / (mine + others) if mine + others else 0.0
        if name == WITNESS:
            WITNESSED.setdefault(path, []).append(share)
        o = OTHERS.setdefault(name, {})
        o[path] = max(o.get(path, 0.0), share)
        if share > OTHER_LIMIT:
            BUSY.setdefault(name, set()).add(path)
    return runs


# Workload -> the result files in which, in one of its measured windows, the
# other CPUs executed more than OTHER_LIMIT of the instructions.
BUSY = {}
# Result file -> the other CPUs' share of each measured window of the witness.
WITNESSED = {}
# Workload -> result file -> the largest share of a measured window's
# instructions that the other CPUs executed.
OTHERS = {}


def check_witness(names, paths_of):
    """The witness rule: in every boot of every configuration, all but at
    most WITNESS_MAX_UNFLAGGED of the measured windows (rep 1 and on; the
    warm-up is left out, as from every figure) of the WITNESS workload, run
    beside a busy loop on the other CPU, must be flagged (the other CPUs'
    share of the window above OTHER_LIMIT), and at least one must be; a boot
    without such a window fails. Else a busy other CPU could go
    unflagged elsewhere too, and the report fails. Prints, per boot, how many
    were flagged and the range of the other CPUs' shares."""
    failed = []
    for n in names:
        for b, p in enumerate(paths_of[n], 1):
            shares = WITNESSED.get(p, [])
            flagged = sum(x > OTHER_LIMIT for x in shares)
            need = max(1, len(shares) - WITNESS_MAX_UNFLAGGED)
            works = flagged >= need
            line = f"witness, {n} boot {b}: {flagged} of {len(shares)} measured windows flagged"
            if shares:
                line += (f" (at least {need} must be), the other CPUs' share"
                         f" {100 * min(shares):.2f}% to {100 * max(shares):.2f}%")
            print(line + ("" if works else ": FAILS") + f" ({p})")
            if not works:
                failed.append(f"{n} boot {b}")
    if failed:
        sys.exit(f"the witness does not work in {', '.join(failed)}: more than"
                 f" {WITNESS_MAX_UNFLAGGED} (WITNESS_MAX_UNFLAGGED) of its measured windows"
                 f" beside a busy CPU were not flagged, or none was")


def flags_of(*records):
    """The flags of a figure derived from RECORDS: the union of theirs."""
    have = {f for r in records for f in r["flags"]}
    return [f for f in FLAGS if f in have]


def marks(flags):
    """The marks to print next to a figure that carries FLAGS."""
    return "".join(FLAGS[f] for f in flags)


def fig(value, flags, width, sep="", noise=False):
    """VALUE, rounded, in WIDTH characters, then FLAGS' marks, NOISE if it
    is within its inputs' spreads, and SEP, padded so that the columns
    after it stay in line."""
    text = f"{value:{width}.0f}{marks(flags)}{NOISE if noise else ''}{sep}"
    return f"{text:<{width + len(FLAGS) + len(NOISE) + len(sep)}}"


def unread(flags):
    """What a ratio or share of figures that carry FLAGS prints instead of
    itself, or None: a ratio of figures that do not repeat, or that the
    other CPU's work moved, means nothing."""
    return "(noise)" if "spread" in flags else "(busy)" if "other_cpu" in flags else None


# The chart's geometry, in SVG pixels: the tic labels' and the value labels'
# widest character (sans at 11 and 9 pixels), a bar's height, the space
# between two workloads' bars (in bars), the legends' column right of the
# plots, and the room for the titles and the x axis.
CHAR, VCHAR = 7.0, 6.0
BAR, ROW_GAP = 17, 0.9
WIDTH, KEY = 1400, 340
TITLE, PANEL_TOP, PANEL_BOTTOM = 70, 40, 70
COLORS = {"c": "#1f5fbf", "rust": "#d9541e", "c612": "#2a9d5c", "off": "#7a5195",
          "ratio": "#d9541e", "noise": "#8c8c8c"}


def bar_text(bar, fmt):
    """The label at the end of BAR (value, flags): its value and marks."""
    return (fmt % bar[0]) + marks(bar[1])


def axis(rows, fmt, targets, plot_w):
    """The x range of a panel PLOT_W pixels wide that shows 0, TARGETS and
    every bar of ROWS, each with its label (bar_text()) beyond its end, inside
    the plot."""
    bars = [b for _, bs in rows for b in bs if b is not None]
    lo = min([b[0] for b in bars] + [0.0] + [t for t, _ in targets])
    hi = max([b[0] for b in bars] + [0.0] + [t for t, _ in targets])
    # Room beyond the longest label on each side, as a share of the plot.
    room = {side: max([len(bar_text(b, fmt)) * VCHAR + 12 for b in bars
                       if (b[0] >= 0) == (side > 0)] + [0]) / plot_w for side in (1, -1)}
    span = (hi - lo) / max(0.2, 1 - room[1] - room[-1]) or 1.0
    return lo - room[-1] * span - 0.02 * span * (lo < 0), hi + room[1] * span + 0.02 * span


def panel(no, title, xlabel, series, rows, fmt, targets, xrange):
    """One panel of horizontal bars: its datablocks, its gnuplot commands and
    its height in pixels. ROWS are (workload label, [(value, flags) or None,
    one per SERIES (title, color)]), each value labelled at its bar's end
    (bar_text() with FMT); a bar whose value carries flags is hatched in its
    series' color. TARGETS: (value, title) lines. XRANGE: the x axis'
    (axis()). The left margin is "{L}", one for every panel."""
    k = len(series)
    pitch = k + ROW_GAP
    units = len(rows) * pitch
    # The legend: a series each, the hatch, the targets, right of the plot.
    key_px = (k + 1 + len(targets)) * 20 + 10
    plot_px = max(units * BAR, key_px)
    out = [f"set title '{title}'", f"set xlabel '{xlabel}'",
           f"set xrange [{xrange[0]:.4f}:{xrange[1]:.4f}]", f"set yrange [{-units:.3f}:0]",
           "set lmargin at screen {L}", f"set rmargin at screen {(WIDTH - KEY) / WIDTH:.4f}",
           "set ytics ("
           + ", ".join(f"'{label}' {-i * pitch - ROW_GAP / 2 - k / 2:.3f}"
                       for i, (label, _) in enumerate(rows)) + ")",
           "set arrow 1 from first 0, graph 0 to first 0, graph 1 nohead lw 1.5 lc rgb 'black' front"]
    for t, (x, _) in enumerate(targets):
        out.append(f"set arrow {t + 2} from first {x}, graph 0 to first {x}, graph 1 nohead"
                   " dt 2 lw 1.5 lc rgb 'red' back")
    data, plots = [], []
    for j, (stitle, color) in enumerate(series):
        plots.append(f"keyentry with boxes fs solid 0.85 border lc rgb 'black' lc rgb '{color}'"
                     f" title '{stitle}'")
        for hatched in (False, True):
            pts = []
            for i, (_, bars) in enumerate(rows):
                b = bars[j]
                if b is None or bool(b[1]) != hatched:
                    continue
                y = -i * pitch - ROW_GAP / 2 - j - 0.5
                pts.append(f"{b[0] / 2:.4f} {y:.3f} {abs(b[0]) / 2:.4f} 0.42")
            if not pts:
                continue
            block = f"$p{no}s{j}{'h' if hatched else 'c'}"
            data.append(f"{block} << EOD\n" + "\n".join(pts) + "\nEOD")
            fill = "pattern 4" if hatched else "solid 0.85"
            plots.append(f"{block} using 1:2:3:4 with boxxyerror fs {fill} border"
                         f" lc rgb '{color}' lc rgb '{color}' notitle")
    plots.append("keyentry with boxes fs pattern 4 border lc rgb 'black' lc rgb 'black'"
                 " title 'hatched, value marked ! or #: flagged'")
    for x, ttitle in targets:
        plots.append(f"keyentry with lines dt 2 lw 1.5 lc rgb 'red' title '{ttitle}'")
    labels = []
    for i, (_, bars) in enumerate(rows):
        for j, b in enumerate(bars):
            y = -i * pitch - ROW_GAP / 2 - j - 0.5
            if b is None:
                labels.append(f"'not run' at first 0, first {y:.3f} left offset 0.5,0"
                              " font ',9' tc rgb '#666666'")
                continue
            side = "left offset 0.5,0" if b[0] >= 0 else "right offset -0.5,0"
            labels.append(f"'{bar_text(b, fmt)}' at first {b[0]:.4f}, first {y:.3f} {side} font ',9'")
    out += [f"set label {n + 1} {lab} front" for n, lab in enumerate(labels)]
    out.append("plot " + ", \\\n     ".join(plots))
    out += ["unset label", "unset arrow"]
    return data, out, plot_px + PANEL_TOP + PANEL_BOTTOM


def chart(svg, names, by, comparisons, savings):
    """Horizontal bars, the workloads' names on the y axis: for each group
    of workloads (GROUPS), the Rust cache's cost relative to the C cache and
    the C kernel's second boot's relative to its first, in percent, on an
    axis where a tenth of a percent shows (one scale for every per-IO
    panel), with the target of the group's unit; then the per-pair figures
    of every configuration, and what each cache saves. The SVG's height
    follows the number of bars, and every legend is right of its plot, so
    that no text meets another; a bar whose figure carries flags is hatched
    and its value marked."""
    label = {w: lab for w, lab, _ in WORKLOADS}
    unit = {w: u for w, _, u in WORKLOADS}
    ratios = {}
    for _, ws in GROUPS:
        for w in ws:
            bars = []
            for cmp in comparisons:
                x, ref = by.get((cmp.config, w)), by.get((cmp.ref, w))
                bars.append(None if x is None or ref is None else
                            (100 * (x["median"] / ref["median"] - 1), flags_of(x, ref)))
            if any(b is not None for b in bars):
                ratios[w] = bars
    ratio_series = [(cmp.legend, COLORS["ratio"] if cmp.config == "rust" else COLORS["noise"])
                    for cmp in comparisons]
    # (title, x label, series, rows, label format, targets, scale): panels
    # of one scale share their x axis.
    panels = []
    for title, ws in GROUPS:
        rows = [(label[w], ratios[w]) for w in ws if w in ratios]
        if not rows:
            continue
        u = unit[ws[0]]
        panels.append((f"{title}: Rust cache against C cache, and C 2nd boot against 1st"
                       " (the noise floor)",
                       "percent more instructions than the C cache (than the 1st boot)",
                       ratio_series, rows, "%+.2f%%",
                       [(TARGETS[u], f"target per {u}: +{TARGETS[u]:g}%")], f"ratio per {u}"))
    titles = {"c": "C cache", "rust": "Rust cache", "c612": "C cache, 6.12 rule",
              "off": "no cache"}
    rows = []
    for w in [name for name, _, u in WORKLOADS if u == "pair"]:
        bars = [(by[(n, w)]["median"], by[(n, w)]["flags"]) if (n, w) in by else None
                for n in names]
        if any(b is not None for b in bars):
            rows.append((label[w], bars))
    if rows:
        panels.append(("The microbenchmark: bio_alloc_bioset() + bio_put(), per pair",
                       "guest instructions per pair",
                       [(titles.get(n, n), COLORS.get(n, "#444444")) for n in names], rows, "%.0f",
                       [], "per pair"))
    if savings:
        rows = [(row["label"] + (" (per pair)" if row["unit"] == "pair" else ""),
                 [(row["saved"][n], row["flags"][n]) for n in ("c", "rust")]) for row in savings]
        panels.append(("What the cache saves: no cache minus cache, per IO, and per pair"
                       " (no cache minus hit, splice)", "guest instructions saved",
                       [("C cache", COLORS["c"]), ("Rust cache", COLORS["rust"])], rows, "%.0f",
                       [], "saved"))
    left = max(len(lab) for p in panels for lab, _ in p[3]) * CHAR + 40
    plot_w = WIDTH - KEY - left
    scales = {}
    for p in panels:
        scales.setdefault(p[6], ([], p[4], []))
        scales[p[6]][0].extend(p[3])
        scales[p[6]][2].extend(p[5])
    xranges = {s: axis(rows, fmt, targets, plot_w) for s, (rows, fmt, targets) in scales.items()}
    built = [panel(i, *p[:6], xranges[p[6]]) for i, p in enumerate(panels)]
    height = TITLE + sum(b[2] for b in built) + 10
    script = [f"set terminal svg size {WIDTH},{height:.0f} dynamic font 'sans,11' background '#ffffff'",
              f"set output '{svg}'", "set termoption noenhanced"]
    for b in built:
        script += b[0]
    script += [
        "set multiplot title \"Guest instructions under QEMU -icount, median of the repetitions"
        " of every boot\\nHatched bars, values marked ! (spread above"
        f" {100 * SPREAD_LIMIT:g}%) or # (other vCPU above {100 * OTHER_LIMIT:g}% of a window's"
        " instructions): flagged, not to be read as figures\"",
        "set key outside right top vertical Left reverse samplen 2 spacing 1.3",
        "set grid xtics", "set ytics scale 0 nomirror", "set xtics nomirror",
    ]
    top = TITLE
    for b in built:
        script.append(f"set tmargin at screen {1 - (top + PANEL_TOP) / height:.5f}")
        script.append(f"set bmargin at screen {1 - (top + b[2] - PANEL_BOTTOM) / height:.5f}")
        script += [c.replace("{L}", f"{left / WIDTH:.4f}") for c in b[1]]
        top += b[2]
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, check=True)
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

    check_witness(names, paths_of)

    records = []
    for w, _, unit in WORKLOADS:
        for n in data:
            vals = data[n].get(w)
            if not vals:
                continue
            med = statistics.median(vals)
            spread = (max(vals) - min(vals)) / med if med else 0.0
            busy = any(p in BUSY.get(w, ()) for p in paths_of[n])
            shares = [OTHERS[w][p] for p in paths_of[n] if p in OTHERS.get(w, {})]
            records.append({
                "config": n, "workload": w, "unit": f"guest instructions per {unit}",
                "median": round(med, 1), "min": round(min(vals), 1), "max": round(max(vals), 1),
                "spread": round(spread, 5), "reps": len(vals), "boots": boots[n],
                # "flagged" is the spread's flag alone; "flags" has every flag.
                "flagged": spread > SPREAD_LIMIT, "other_cpu_busy": busy,
                "other_cpu_share": round(max(shares), 6),
                "flags": [f for f, on in (("spread", spread > SPREAD_LIMIT), ("other_cpu", busy))
                          if on],
            })
    measured = list(records)

    by = {(r["config"], r["workload"]): r for r in records}
    comparisons = [cmp for cmp in COMPARISONS if cmp.config in data and cmp.ref in data]
    print()
    print("Guest instructions (QEMU TCG, -icount shift=0,sleep=off), median of the repetitions:")
    print("per IO what the measured vCPU executed (QEMU's count), per pair the kernel's clock;")
    print("boots: " + ", ".join(f"{n} {boots[n]}" for n in names) + ". Spread = (max - min) / median,"
          " '!' above 1%;")
    print("[the other vCPU's largest share of a window's instructions], '#' above"
          f" {100 * OTHER_LIMIT:.1f}%.")
    print("rust/c is the ratio of the medians" + (
        "; c 2nd/1st, the same for two boots of the C kernel,\nis how far a ratio moves by noise."
        if SECOND in data else "."))
    print("A figure derived from flagged ones carries their marks; a ratio or share of them reads"
          " (noise) or (busy).")
    shown = [(w, f"{label} (per {unit})") for w, label, unit in WORKLOADS
             if any((n, w) in by for n in names)]
    width = max(len(label) for _, label in shown) + 1
    cells, ratios = {}, []
    for r in records:
        cells[r["config"], r["workload"]] = (f"{r['median']:.0f} ±{100 * r['spread']:.2f}%"
                                             f" [{100 * r['other_cpu_share']:.2f}%]"
                                             f"{marks(r['flags']):<2}")
    cw = max(len(x) for x in cells.values()) + 2
    header = f"{'workload':<{width}}" + "".join(f"{n:>{cw}}" for n in names)
    header += "".join(f"{cmp.column:>11}" for cmp in comparisons)
    print(header)
    for w, label in shown:
        row = f"{label:<{width}}"
        for n in names:
            row += f"{cells.get((n, w), '-  '):>{cw}}"
        rec = {"config": "ratio", "workload": w, "unit": "median / median"}
        for cmp in comparisons:
            c, x = by.get((cmp.ref, w)), by.get((cmp.config, w))
            if c is None or x is None:
                row += f"{'-':>11}"
                continue
            fl, noise = flags_of(c, x), indistinct(c, x)
            text = unread(fl) or (NOISE.strip() if noise else f"{x['median'] / c['median']:.3f}")
            row += f"{text:>11}"
            rec[cmp.key] = round(x["median"] / c["median"], 4)
            rec[cmp.key + "_flags"] = fl
            rec[cmp.key + "_within_spread"] = noise
        print(row)
        if len(rec) > 3:
            rec["flags"] = flags_of(*({"flags": v} for k, v in rec.items() if k.endswith("_flags")))
            ratios.append(rec)

    # What the cache saves: no cache minus cache, per IO and per pair, each
    # saving with the flags of both figures it is the difference of.
    savings = []
    if "off" in names:
        for w, label, unit in WORKLOADS:
            no_cache = workloads.BY_NAME[w].no_cache
            off = by.get(("off", no_cache)) if no_cache else None
            if off is None:
                continue
            row = {"workload": w, "label": label, "unit": unit, "saved": {}, "flags": {},
                   "within": {}}
            for n in {"c"} | {n for cmp in comparisons for n in (cmp.config, cmp.ref)}:
                r = by.get((n, w))
                if r is not None:
                    row["saved"][n] = off["median"] - r["median"]
                    row["flags"][n] = flags_of(off, r)
                    row["within"][n] = indistinct(off, r)
            if "c" in row["saved"] and "rust" in row["saved"]:
                savings.append(row)
        if savings:
            print()
            print("What the cache saves (no cache minus cache), and the share of the C cache's")
            print("saving the Rust cache keeps" + (" (and the C cache's second boot of its first: noise):"
                                                  if SECOND in data else ":"))
            for row in savings:
                saved, fl, within = row["saved"], row["flags"], row["within"]
                rec = {"config": "saving", "workload": row["workload"],
                       "unit": f"guest instructions per {row['unit']}",
                       "c": round(saved["c"], 1), "c_flags": fl["c"],
                       "c_within_spread": within["c"]}
                line = (f"  {row['label'] + ' (per ' + row['unit'] + ')':<{width}}"
                        f" C {fig(saved['c'], fl['c'], 7, noise=within['c'])}")
                for cmp in comparisons:
                    n, ref = cmp.config, cmp.ref
                    if n not in saved or ref not in saved:
                        continue
                    keep = saved[n] / saved[ref] if saved[ref] else None
                    kfl = flags_of({"flags": fl[n]}, {"flags": fl[ref]})
                    # A share of a saving within the spread is a ratio of
                    # near-zero figures; one of two savings that do not
                    # differ (their caches' figures do not) reads nothing.
                    kw = within[n] or within[ref] or indistinct(by[(n, row["workload"])],
                                                                by[(ref, row["workload"])])
                    line += f"  {cmp.saving} {fig(saved[n], fl[n], 4, ',', within[n])} keeps "
                    line += (f"{unread(kfl):>7}" if unread(kfl) else
                             f"{NOISE.strip():>7}" if kw else
                             f"{100 * keep:6.1f}%" if keep is not None else "     - ")
                    if ref != "c":
                        line += f" of {saved[ref]:.0f}{marks(fl[ref])}{NOISE if within[ref] else ''}"
                    rec[cmp.key] = round(saved[n], 1)
                    rec[cmp.key + "_flags"] = fl[n]
                    rec[cmp.key + "_within_spread"] = within[n]
                    rec[cmp.key + "_keeps"] = round(keep, 4) if keep is not None else None
                    rec[cmp.key + "_keeps_flags"] = kfl
                    rec[cmp.key + "_keeps_within_spread"] = kw
                rec["flags"] = flags_of(*({"flags": v} for k, v in rec.items() if k.endswith("_flags")))
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
            # c_percent is c's saving too, and carries c_flags and
            # c_within_spread.
            cfl, rfl, kfl = flags_of(base, c), flags_of(base, r), flags_of(base, c, r)
            cw, rw = indistinct(base, c), indistinct(base, r)
            kw = cw or rw or indistinct(c, r)
            rec = {"config": "rule_saving", "workload": w, "unit": f"guest instructions per {unit}",
                   "c": round(sc, 1), "rust": round(sr, 1),
                   "c_percent": round(100 * sc / base["median"], 2),
                   "rust_keeps": round(sr / sc, 4) if abs(sc) >= 1 else None,
                   "c_flags": cfl, "rust_flags": rfl, "rust_keeps_flags": kfl, "flags": kfl,
                   "c_within_spread": cw, "rust_within_spread": rw, "rust_keeps_within_spread": kw}
            records.append(rec)
            keep = (unread(kfl) or (NOISE.strip() if kw else None)
                    or (f"keeps {100 * sr / sc:5.1f}%" if abs(sc) >= 1 else "(no saving)"))
            # The percentage is of the same saving: "(noise)" in its place.
            cfig = f"{sc:6.0f}{marks(cfl)}" + (NOISE if cw else f" ({rec['c_percent']:+.2f}%)")
            print(f"  {label + ' (per ' + unit + ')':<{width}} C {cfig:<{6 + len(FLAGS) + 11}}"
                  f"   Rust {fig(sr, rfl, 6, ',', rw)} {keep}")

    if args.beside and savings:
        with open(args.beside) as f:
            other = {r["workload"]: r for r in json.load(f) if r.get("config") == "saving"}
        print()
        print(f"What each cache saves here, beside what it saves in {args.beside}:")
        if any("flags" not in o for o in other.values()):
            print("  (its savings carry no flags: written before they were recorded, their figures"
                  " unchecked)")
        for row in savings:
            o = other.get(row["workload"])
            if o is None:
                continue
            here = {n: fig(row["saved"][n], row["flags"][n], 5, "", row["within"][n])
                    for n in ("c", "rust")}
            there = {n: fig(o[n], o.get(n + "_flags", []), 5, ")", o.get(n + "_within_spread"))
                     for n in ("c", "rust")}
            print((f"  {row['label'] + ' (per ' + row['unit'] + ')':<{width}}"
                   f" C {here['c']} (there {there['c']}   Rust {here['rust']}"
                   f" (there {there['rust']}").rstrip())

    records[len(measured):len(measured)] = ratios
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"\n{len(records)} records in {args.json}")

    if args.svg and shutil.which("gnuplot"):
        chart(args.svg, names, by, comparisons, savings)
    flagged = [f"{r['config']}/{r['workload']}" for r in measured if "spread" in r["flags"]]
    if flagged:
        print("spread above 1%: " + ", ".join(flagged))
    shares = [r["other_cpu_share"] for r in measured]
    if shares:
        print(f"the other CPUs' share of a window's instructions (QEMU's count): "
              f"{100 * min(shares):.3f}% to {100 * max(shares):.3f}% (largest per workload"
              f" and configuration), flagged above {100 * OTHER_LIMIT:.1f}%")
    busy = [f"{r['config']}/{r['workload']}" for r in measured if "other_cpu" in r["flags"]]
    if busy:
        print("other CPUs busy in a measured window: " + ", ".join(busy))
    derived = [r for r in records[len(measured):] if r["flags"]]
    if derived:
        print(f"{len(derived)} derived records carry flags: "
              + ", ".join(f"{r['config']}/{r['workload']}" for r in derived))
    noise = [f"{r['config']}/{r['workload']}/{k[:-len('_within_spread')]}"
             for r in records[len(measured):] for k, v in r.items()
             if k.endswith("_within_spread") and v]
    if noise:
        print(f"{len(noise)} derived figures within their inputs' spreads, read (noise): "
              + ", ".join(noise))
    return 0


if __name__ == "__main__":
    sys.exit(main())
