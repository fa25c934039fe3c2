#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Draw the bench results of results/ as SVG charts in docs/.

    chart.py           rewrite docs/rust-vs-c.svg and docs/cache-saves.svg
    chart.py --check   exit 1, naming it, if a committed chart differs from
                       its rendering from results/ (or is missing)

Two charts, each with a panel for the test kernels (results/bench.json,
make bench) and one for Debian's config (results/bench-distro.json, make
bench DISTRO=1), a row per workload, per IO above and per alloc + put pair
of the microbenchmark below, on an axis of their own:

- rust-vs-c.svg: the Rust cache's guest instructions over the C cache's
  (Rust / C) as a dot, beside the noise: the C kernel's second boot over
  its first, drawn as a tick and as the band it spans about 1.000. The
  lines: parity, and the targets (bench-report.py's TARGETS).
- cache-saves.svg: what each cache saves (no cache minus cache), a bar per
  cache, as docs/results.md's "What the cache saves" table renders it.

The figures, the workloads' labels, the flags and the columns' texts come
from scripts/render-docs.py, imported, so that a chart reads as the tables
do: a figure derived from flagged ones (spread above 1%, other vCPU above
0.2% of a window) is drawn hollow or hatched and its text reads "(noise)",
"(busy)" or carries the marks; a difference within the spreads (max - min)
of the two figures it is made of (render-docs.py's indistinct() and
saving_noise()) is drawn grey or pale, a ratio or share of it reads
"(noise)" and a saving is followed by it. The caption names the files and
the commits their runs were made at. The output depends on the result files alone:
coordinates are rounded to a tenth of a pixel, and nothing depends on the
date, the host or the fonts installed (text widths are estimated).
"""

import collections
import importlib.util
import math
import os
import sys
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def load_script(name):
    """scripts/NAME as a module (the names have dashes), without writing
    its bytecode next to it."""
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location(name.replace("-", "_")[:-3],
                                                  os.path.join(HERE, name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rd = load_script("render-docs.py")
br = load_script("bench-report.py")

# (result file, panel title, the kernels it compares, the command that
# records it).
PANELS = [
    ("bench", "test kernels", "c-bench against rust-bench", "make bench"),
    ("bench-distro", "Debian's config", "c-distro-bench against rust-distro-bench",
     "make bench DISTRO=1"),
]
FONT = "sans-serif"
# Text sizes in pixels, and the width of an average character of
# DejaVu Sans (what sans-serif is on Debian) as a share of its size, a
# little over, so that estimated widths err wide.
TITLE, HEAD, LABEL, SMALL = 16, 14, 12, 11
EM = 0.62
# The geometry, in pixels: the margins, a plot's width, the gap between
# the panels, a row's height in each chart.
MARGIN, PLOT_W, PANEL_GAP = 20, 330, 40
COLORS = {"ink": "#222222", "muted": "#555555", "grid": "#dddddd", "stripe": "#f2f2f2",
          "c": "#1f5fbf", "rust": "#d9541e", "noise": "#8c8c8c", "band": "#cfcfcf",
          "target": "#c0392b", "c-pale": "#c7d7ef", "rust-pale": "#f6d4c7"}


def num(v):
    """A coordinate, as the SVG writes it."""
    return f"{v:.1f}"


def width_of(s, size):
    """The estimated width of text S at SIZE pixels."""
    return len(s) * size * EM


def text(x, y, s, size, anchor="start", weight=None, fill="ink"):
    """Text S with its baseline at Y, anchored at X (start, middle, end)."""
    w = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{num(x)}" y="{num(y)}" font-size="{size}" text-anchor="{anchor}"'
            f' fill="{COLORS[fill]}"{w}>{escape(s)}</text>')


def line(x1, y1, x2, y2, color, width=1.0, dash=None):
    """A line in COLORS[COLOR], dashed if DASH is an SVG dash array."""
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}"'
            f' stroke="{COLORS[color]}" stroke-width="{width:g}"{d}/>')


def rect(x, y, w, h, fill, stroke=None):
    """A rectangle filled with FILL (a color or a pattern's url), outlined in
    COLORS[STROKE] if given."""
    s = f' stroke="{COLORS[stroke]}" stroke-width="1"' if stroke else ""
    return f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" fill="{fill}"{s}/>'


def dot(x, y, hollow, within=False):
    """A Rust / C dot, hollow for a flagged figure, grey for one WITHIN the
    spreads of its two figures."""
    fill = "#ffffff" if hollow else COLORS["noise"] if within else COLORS["rust"]
    return (f'<circle cx="{num(x)}" cy="{num(y)}" r="4.5" fill="{fill}"'
            f' stroke="{COLORS["rust"]}" stroke-width="1.5"/>')


def hatches():
    """A hatch pattern per color, for flagged figures: url(#hatch-NAME)."""
    out = ["<defs>"]
    for name in ("c", "rust", "noise"):
        out.append(f'<pattern id="hatch-{name}" width="5" height="5" patternUnits="userSpaceOnUse"'
                   ' patternTransform="rotate(45)"><rect width="5" height="5" fill="#ffffff"/>'
                   f'<line x1="0" y1="0" x2="0" y2="5" stroke="{COLORS[name]}"'
                   ' stroke-width="2.5"/></pattern>')
    return out + ["</defs>"]


def fill_of(name, flagged, within=False):
    """COLORS[NAME], its hatch if the figure is FLAGGED, or its pale
    variant if it is WITHIN the spreads of the figures it is made of."""
    return (f"url(#hatch-{name})" if flagged else COLORS[f"{name}-pale"] if within
            else COLORS[name])


def ticks(lo, hi, decimals=None):
    """Round values between LO and HI, five to eight of them, and their
    labels."""
    raw = (hi - lo) / 6
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    if decimals is None:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (step / mag == 2.5))
    return [(k * step, f"{k * step:.{decimals}f}")
            for k in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1)]


def padded(values, room=0.1):
    """A range over VALUES with ROOM of it to spare on each side."""
    lo, hi = min(values), max(values)
    span = (hi - lo) or abs(hi) or 1.0
    return lo - room * span, hi + room * span


def datasets():
    """(result file, its panel's title and subtitle, its command, its data
    or None) per panel."""
    return [(name, title, sub, cmd, rd.load(f"{name}.json")) for name, title, sub, cmd in PANELS]


def caption(data):
    """The lines under a chart: what its figures are, and where from."""
    out = ["Guest instructions under QEMU TCG -icount shift=0,sleep=off, medians over every"
           " boot's repetitions; drawn by scripts/chart.py from the committed result files:"]
    for name, _, _, cmd, d in data:
        if d is None:
            out.append(f"results/{name}.json: not recorded yet ({cmd},"
                       f" then scripts/record.sh {name}).")
        else:
            out.append(rd.provenance(d["meta"], f"results/{name}.json").strip().replace("`", ""))
    return out


def legend(items, y, width):
    """ITEMS, (swatch drawer or None, text), laid out left to right from Y,
    on as many lines as the WIDTH takes: its parts and its height."""
    out, x, top = [], MARGIN, y
    for draw, label in items:
        pad = 24 if draw else 0
        w = pad + 2 + width_of(label, SMALL)
        if x > MARGIN and x + w > width - MARGIN:
            x, y = MARGIN, y + 20
        out += draw(x, y) if draw else []
        out.append(text(x + pad, y + 4, label, SMALL))
        x += w + 22
    return out, y - top + 20


class Layout:
    """Where a chart's parts go: the workload labels' column, then a panel
    per PANELS entry, each a plot PLOT_W wide and a column of text per
    COLUMNS (header, width)."""

    def __init__(self, labels, columns):
        self.columns = columns
        self.label_w = max(width_of(s, LABEL) for s in labels) + 14
        self.panel_w = PLOT_W + sum(w for _, w in columns)
        self.width = 2 * MARGIN + self.label_w + len(PANELS) * self.panel_w + (
            len(PANELS) - 1) * PANEL_GAP

    def left(self, p):
        """The left edge of panel P's plot."""
        return MARGIN + self.label_w + p * (self.panel_w + PANEL_GAP)

    def column_right(self, p, i):
        """The right edge of panel P's column I, where its text ends."""
        return self.left(p) + PLOT_W + sum(w for _, w in self.columns[:i + 1])


# A block of rows under a heading, on one x axis in every panel: its
# workloads (ROWS, (workload, label) each), its x range and the axis' label,
# a row's height, the vertical LINES across it ((value, color, dash) each),
# DRAW(dataset, workload, row's middle y, x of a value) drawing a row's
# marks, (under the lines, over them), CELLS(dataset, workload) its
# columns' texts, and the decimals of the tick labels (None: as the step
# needs).
Block = collections.namedtuple(
    "Block", "title rows xrange axis_label row_h lines draw cells decimals")


def block(lay, y, data, b):
    """Block B at Y: stripes, the workloads' labels, the grid, per panel each
    row's marks and texts, and the axis under them. Returns its parts and
    its bottom."""
    lo, hi = b.xrange
    title, rows, row_h = b.title, b.rows, b.row_h
    out = [text(MARGIN, y + 15, title, LABEL, weight="bold")]
    top = y + 22
    for p in range(len(PANELS)):
        for i, (head, _) in enumerate(lay.columns):
            out.append(text(lay.column_right(p, i), y + 15, head, SMALL, "end", "bold"))
    bottom = top + len(rows) * row_h
    for i in range(0, len(rows), 2):
        out.append(rect(MARGIN, top + i * row_h, lay.width - 2 * MARGIN, row_h, COLORS["stripe"]))
    for i, (_, label) in enumerate(rows):
        out.append(text(MARGIN + lay.label_w - 14, top + i * row_h + row_h / 2 + 4, label, LABEL,
                        "end"))
    for p, (_, _, _, cmd, d) in enumerate(data):
        x0 = lay.left(p)

        def px(v, x0=x0):
            return x0 + (v - lo) / (hi - lo) * PLOT_W

        for v, lab in ticks(lo, hi, b.decimals):
            out.append(line(px(v), top, px(v), bottom + 4, "grid"))
            out.append(line(px(v), bottom, px(v), bottom + 4, "ink"))
            out.append(text(px(v), bottom + 17, lab, SMALL, "middle"))
        out.append(line(x0, bottom, x0 + PLOT_W, bottom, "ink"))
        out.append(text(x0 + PLOT_W / 2, bottom + 35, b.axis_label, SMALL, "middle"))
        if d is None:
            out.append(text(x0 + PLOT_W / 2, top + row_h / 2 + 4, f"not recorded yet: {cmd}",
                            SMALL, "middle", fill="muted"))
            continue
        under, over = [], []
        for i, (w, _) in enumerate(rows):
            mid = top + i * row_h + row_h / 2
            u, o = b.draw(d, w, mid, px)
            under, over = under + u, over + o
            for c, s in enumerate(b.cells(d, w)):
                out.append(text(lay.column_right(p, c), mid + 4, s, SMALL, "end"))
        out += under
        out += [line(px(v), top, px(v), bottom, color, 1.5, dash) for v, color, dash in b.lines]
        out += over
    return out, bottom + 44


def svg(title, subtitle, legend_items, lay, blocks, data):
    """The chart: its title, legend, panel titles, BLOCKS one under the
    other, and the caption."""
    out = [text(MARGIN, 30, title, TITLE, weight="bold"), text(MARGIN, 50, subtitle, SMALL)]
    parts, h = legend(legend_items, 72, lay.width)
    out += parts
    y = 72 + h + 16
    for p, (_, ptitle, sub, _, _) in enumerate(data):
        mid = lay.left(p) + lay.panel_w / 2
        out.append(text(mid, y, ptitle, HEAD, "middle", "bold"))
        out.append(text(mid, y + 16, sub, SMALL, "middle", fill="muted"))
    y += 26
    for b in blocks:
        parts, y = block(lay, y, data, b)
        out += parts
        y += 10
    for i, s in enumerate(caption(data)):
        out.append(text(MARGIN, y + 14 + 16 * i, s, SMALL, fill="muted"))
    height = y + 16 * len(caption(data)) + 10
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}"'
            f' height="{height:.0f}" viewBox="0 0 {lay.width:.0f} {height:.0f}"'
            f' font-family="{FONT}">', f"<title>{escape(title)}</title>"]
    head += hatches()
    head.append(rect(0, 0, lay.width, height, "#ffffff"))
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>'] + head + out + ["</svg>"]) + "\n"


def present(data, workloads, has):
    """The (workload, label) of WORKLOADS for which HAS(dataset, workload)
    holds in some panel's data; all of them if no panel has data, whose
    panels then say what would record it."""
    if all(d is None for _, _, _, _, d in data):
        return list(workloads)
    return [(w, lab) for w, lab in workloads
            if any(d is not None and has(d, w) for _, _, _, _, d in data)]


# Rust / C.

def pair_of(d, w, config, ref):
    """The records of CONFIG and REF for workload W in D, or None."""
    k = rd.by_key(d["records"])
    x, r = k.get((config, w)), k.get((ref, w))
    return None if x is None or r is None else (x, r)


def quotient(d, w, config, ref):
    """CONFIG's median over REF's for workload W, whether it is flagged
    (render-docs.py prints it as "(noise)" or "(busy)") and whether the two
    are within their spreads (it prints "(noise)" too), or None."""
    p = pair_of(d, w, config, ref)
    if p is None:
        return None
    return (p[0]["median"] / p[1]["median"], rd.flagged(rd.both_flags(*p)) is not None,
            rd.indistinct(*p))


def ratio_row(d, w, mid, px):
    """A row of rust-vs-c: the noise's band (under the lines), its tick and
    the Rust / C dot (over them); a flagged dot hollow, one within the
    spreads of its two figures grey, a flagged band hatched and its tick
    dashed."""
    under, out = [], []
    n = quotient(d, w, "c#2", "c#1")
    if n is not None:
        half = px(1 + abs(n[0] - 1)) - px(1)
        if n[1]:
            # Not a figure: wide enough for its hatch to show.
            half = max(half, 6)
            under.append(rect(px(1) - half, mid - 7, 2 * half, 14, "url(#hatch-noise)", "noise"))
        else:
            under.append(rect(px(1) - half - 0.75, mid - 7, 2 * half + 1.5, 14, COLORS["band"]))
        out.append(line(px(n[0]), mid - 8, px(n[0]), mid + 8, "noise", 2, "3,2" if n[1] else None))
    r = quotient(d, w, "rust", "c")
    if r is not None:
        out.append(dot(px(r[0]), mid, r[1], r[2]))
    return under, out


def ratio_cells(d, w):
    """The texts of the summary table's Rust / C and noise columns."""
    k = rd.by_key(d["records"])
    return [rd.ratio(k.get(("rust", w)), k.get(("c", w))),
            rd.ratio(k.get(("c#2", w)), k.get(("c#1", w)))]


def ratio_range(data, rows, target):
    """The x range of a block of rust-vs-c: every dot, band and tick, parity
    and TARGET."""
    vals = [1.0, target]
    for _, _, _, _, d in data:
        for w, _ in rows:
            for cfg, ref in (("rust", "c"), ("c#2", "c#1")):
                q = d and quotient(d, w, cfg, ref)
                if q:
                    vals += [q[0], 2 - q[0]]
    return padded(vals)


def rust_vs_c():
    """docs/rust-vs-c.svg."""
    data = datasets()
    has = lambda d, w: pair_of(d, w, "rust", "c") is not None  # noqa: E731
    io, pairs = present(data, rd.IO_WORKLOADS, has), present(data, rd.PAIRS, has)
    lay = Layout([lab for _, lab in io + pairs], [("Rust / C", 62), ("noise", 52)])
    blocks = []
    for rows, unit, what in ((io, "IO", "per IO"),
                             (pairs, "pair", "per bio_alloc_bioset() + bio_put() pair")):
        if not rows:
            continue
        target = 1 + br.TARGETS[unit] / 100
        blocks.append(Block(f"Guest instructions {what}", rows, ratio_range(data, rows, target),
                            f"Rust / C, guest instructions {what if unit == 'IO' else 'per pair'}",
                            22, [(1.0, "ink", None), (target, "target", "6,4")], ratio_row,
                            ratio_cells, 3))
    spread, other = f"{100 * br.SPREAD_LIMIT:g}%", f"{100 * br.OTHER_LIMIT:g}%"
    items = [
        (lambda x, y: [dot(x + 9, y, False)], "Rust cache / C cache"),
        (lambda x, y: [dot(x + 9, y, True)],
         f"the same, flagged: a spread above {spread} or the other vCPU above {other};"
         " the column reads (noise) or (busy)"),
        (lambda x, y: [dot(x + 9, y, False, True)],
         "within the spread (max - min) of its two figures: no difference measured;"
         " the column reads (noise)"),
        (lambda x, y: [rect(x, y - 7, 18, 14, COLORS["band"]),
                       line(x + 12, y - 8, x + 12, y + 8, "noise", 2)],
         "noise: C kernel, 2nd boot / 1st (tick), and 1.000 \u00b1 its distance (band);"
         " hatched if flagged; its column reads (noise) within the boots' spreads"),
        (lambda x, y: [line(x, y, x + 18, y, "ink", 1.5)], "parity, 1.000"),
        (lambda x, y: [line(x, y, x + 18, y, "target", 1.5, "6,4")],
         f"target: Rust / C at most +{br.TARGETS['IO']:g}% per IO,"
         f" +{br.TARGETS['pair']:g}% per pair"),
    ]
    return svg("The Rust cache against the C cache: guest instructions, Rust / C, per workload",
               "Left of 1.000 the Rust cache executes fewer instructions than the C cache;"
               " the noise is how far two boots of one kernel differ.",
               items, lay, blocks, data)


# What the cache saves.

def savings(d):
    """D's "saving" records by workload."""
    return {r["workload"]: r for r in d["records"] if r["config"] == "saving"}


def saving_row(d, w, mid, px):
    """A row of cache-saves, over the zero line: C's bar above Rust's, each
    with its figure (render-docs.py's saving_cell(): the marks of its flags,
    (noise) after one within spread); a flagged bar hatched, one within
    spread pale."""
    r = savings(d).get(w)
    if r is None:
        return [], []
    noise = rd.saving_noise(d, "saving", w)
    out = []
    for key, dy in (("c", -9), ("rust", 1)):
        v = r.get(key)
        if v is None:
            continue
        x0, x1 = sorted((px(0), px(v)))
        out.append(rect(x0, mid + dy, max(x1 - x0, 1), 8,
                        fill_of(key, bool(r.get(key + "_flags")), noise[key]), stroke=key))
        out.append(text(px(v) + (4 if v >= 0 else -4), mid + dy + 7.5,
                        rd.saving_cell(r, key, noise[key]), 10, "start" if v >= 0 else "end"))
    return [], out


def saving_cells(d, w):
    """The texts of the savings table's "Rust keeps" and "C 2nd boot keeps"."""
    r = savings(d).get(w)
    if r is None:
        return ["-", "-"]
    noise = rd.saving_noise(d, "saving", w)
    return [rd.keeps_cell(r, key, noise[key]) for key in ("rust_keeps", "c_second_boot_keeps")]


def saving_range(data, rows):
    """The x range of a block of cache-saves: 0, every bar, and room for the
    longest figure beyond the bars' ends."""
    vals, labels = [0.0], [""]
    for _, _, _, _, d in data:
        for w, _ in rows:
            r = d and savings(d).get(w)
            noise = r and rd.saving_noise(d, "saving", w)
            for key in ("c", "rust"):
                if r and r.get(key) is not None:
                    vals.append(r[key])
                    labels.append(rd.saving_cell(r, key, noise[key]))
    lo, hi = min(vals), max(vals)
    room = (max(width_of(s, 10) for s in labels) + 10) / PLOT_W
    span = (hi - lo or 1.0) / (1 - room * ((lo < 0) + 1))
    return lo - room * span * (lo < 0), hi + room * span


def cache_saves():
    """docs/cache-saves.svg."""
    data = datasets()
    has = lambda d, w: w in savings(d)  # noqa: E731
    io, pairs = present(data, rd.IO_WORKLOADS, has), present(data, rd.PAIRS, has)
    lay = Layout([lab for _, lab in io + pairs], [("Rust keeps", 76), ("noise", 62)])
    blocks = []
    for rows, what, axis in ((io, "per IO", "guest instructions saved per IO"),
                             (pairs, "per bio_alloc_bioset() + bio_put() pair",
                              "guest instructions saved per pair")):
        if not rows:
            continue
        blocks.append(Block(f"Saved {what}", rows, saving_range(data, rows), axis, 28,
                            [(0.0, "ink", None)], saving_row, saving_cells, None))
    spread, other = f"{100 * br.SPREAD_LIMIT:g}%", f"{100 * br.OTHER_LIMIT:g}%"
    items = [
        (lambda x, y: [rect(x, y - 4, 18, 8, COLORS["c"], "c")], "C cache"),
        (lambda x, y: [rect(x, y - 4, 18, 8, COLORS["rust"], "rust")], "Rust cache"),
        (lambda x, y: [rect(x, y - 4, 18, 8, "url(#hatch-rust)", "rust")],
         f"flagged, its figure marked: ! a spread above {spread}, # the other vCPU above {other}"),
        (lambda x, y: [rect(x, y - 4, 18, 8, COLORS["rust-pale"], "rust")],
         "within the spreads (max - min) of the two figures it is the difference of:"
         " followed by (noise)"),
        (None, "Rust keeps: Rust's saving / C's; noise: the C kernel's 2nd boot's"
         " saving / its 1st's; a share of a saving within spread, or of two that do not"
         " differ, reads (noise)"),
    ]
    return svg("What the cache saves: guest instructions without the cache minus with it",
               "Per IO: no cache minus cache. Per pair: the microbenchmark without the cache"
               " minus its cache hit, or its IRQ-list splice.",
               items, lay, blocks, data)


CHARTS = [("docs/rust-vs-c.svg", rust_vs_c), ("docs/cache-saves.svg", cache_saves)]


def main(argv):
    check = "--check" in argv[1:]
    if any(a != "--check" for a in argv[1:]):
        sys.exit(f"usage: {argv[0]} [--check]")
    stale = []
    for rel, render in CHARTS:
        path = os.path.join(TOP, rel)
        new = render()
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = None
        if old == new:
            continue
        if check:
            stale.append(f"{rel}: {'missing' if old is None else 'differs from its rendering'}")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"rendered {rel}")
    if stale:
        print("charts that differ from their rendering from results/ (scripts/chart.py"
              " rewrites them):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
