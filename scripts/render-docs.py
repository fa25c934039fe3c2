#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render the results tables of README.md and docs/*.md from results/.

    render-docs.py           rewrite every rendered block in place
    render-docs.py --check   exit 1, naming them, if a block differs from
                             its rendering (make check): a figure edited by
                             hand, or a result file recorded without
                             rendering

A rendered block sits between two lines

    <!-- BEGIN rendered: NAME -->
    <!-- END rendered: NAME -->

and a figure the prose repeats from results/, in a span on one line:

    ... <!-- BEGIN rendered: NAME -->FIGURE<!-- END rendered: NAME --> ...

Each file carries the blocks CARRIES names, each once. Before anything is
rendered or compared, every marker is checked (check_markers()): a BEGIN
without its END or an END without its BEGIN, markers nested or crossed, a
name that is no block, a block twice, in a file that does not carry it, or
missing from the one that does, a marker that is not of the form above, all
fail, naming the file, the line and the block, since a block whose markers
do not pair is neither rendered nor compared.

It is made from the committed result files (scripts/record.sh writes them
from what make bench, make bench DISTRO=1, make codegen, make mutants, make
soak and scripts/ci-timing.sh record), each naming the commit and command
that produced it, which every block repeats under its table. A missing file
renders as a line saying which command would produce it, never as figures.
"""

import glob
import json
import os
import re
import sys
import textwrap

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(TOP, "results")
FILES = [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md")))
BLOCK = re.compile(r"(?<!`)(<!-- BEGIN rendered: (\S+) -->\n?)(.*?)(<!-- END rendered: \2 -->)", re.S)
# A marker: an HTML comment that says "rendered", which must be one of the
# two lines above (MARKER), alone on its line, or a span's (INLINE), both on
# one line.
LOOSE = re.compile(r"<!--[^\n]*?\brendered\b[^\n]*?(?:-->|$)", re.M | re.I)
MARKER = re.compile(r"<!-- (BEGIN|END) rendered: ([a-z0-9-]+) -->")
# The blocks each file carries (paths from the top of the tree); a file not
# named here carries none.
CARRIES = {
    "README.md": ["answer", "ci-times", "summary", "targets"],
    "docs/results.md": ["bench", "bench-savings", "bench-rule", "split", "split-distro",
                        "bench-distro", "codegen", "codegen-distro", "mutants", "soak",
                        "split-c-pair-hit", "split-distro-c-pair-splice", "split-c-pair-off",
                        "split-distro-c-pair-off", "split-rust-pair-hit",
                        "split-distro-rust-pair-hit", "split-rust-pair-splice",
                        "split-distro-rust-pair-splice"],
    "docs/testing.md": ["bisect"],
}

MARKS = {"spread": "!", "other_cpu": "#"}
# The workloads of make bench, in order, each with its label, as the terminal
# (scripts/bench-report.py) prints them too: scripts/workloads.py, the one
# table of them.
sys.path.insert(0, os.path.join(TOP, "scripts"))
import workloads  # noqa: E402
from workloads import NOISE, indistinct  # noqa: E402

IO_WORKLOADS = [(w.name, w.label) for w in workloads.WORKLOADS if w.unit == "IO"]
PAIRS = [(w.name, w.label) for w in workloads.WORKLOADS if w.unit == "pair"]


def load(name):
    try:
        with open(os.path.join(RESULTS, name)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def missing(what, command):
    return f"No result recorded yet: `{command}`, then `scripts/record.sh {what}`.\n"


def provenance(meta, path):
    commit = meta.get("commit", "?")
    cmd = meta.get("command", "?")
    date = meta.get("date", "?")
    secs = meta.get("seconds")
    took = f", {fmt_secs(secs)}" if secs else ""
    return f"\n`{cmd}` at commit {commit} ({date}{took}); `{path}`.\n"


def fmt_secs(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


def marks(flags):
    return "".join(MARKS[f] for f in ("spread", "other_cpu") if f in (flags or []))


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def by_key(records):
    return {(r["config"], r["workload"]): r for r in records}


def cell(r):
    if r is None:
        return "-"
    share = r.get("other_cpu_share")
    s = f"{r['median']:.0f} ±{100 * r['spread']:.2f}%"
    if share is not None:
        s += f" [{100 * share:.2f}%]"
    return s + marks(r.get("flags"))


def flagged(flags):
    """What a figure derived from figures with these flags reads instead, or None."""
    if "spread" in flags:
        return "(noise)"
    if "other_cpu" in flags:
        return "(busy)"
    return None


def both_flags(x, ref):
    return set(x.get("flags") or []) | set(ref.get("flags") or [])


def ratio(x, ref):
    if x is None or ref is None:
        return "-"
    return (flagged(both_flags(x, ref)) or (NOISE.strip() if indistinct(x, ref) else None)
            or f"{x['median'] / ref['median']:.3f}")


def bench_legend():
    return ("Guest instructions per IO (per pair for the microbenchmark), median of every boot's "
            "repetitions, ± the spread (max - min) / median over the boots, [the other vCPU's "
            "largest share of a window's instructions]; `!` spread above 1%, `#` other vCPU above "
            "0.2%: a flagged figure is not read as a figure, and a ratio of one reads (noise) or "
            "(busy). A difference within the spreads (max - min) of the figures it is made of is "
            "followed by (noise), and a ratio or share of such figures reads (noise).\n\n")


def render_bench(name):
    d = load(f"{name}.json")
    if d is None:
        return missing(name, "make bench" + (" DISTRO=1" if name.endswith("distro") else ""))
    k = by_key(d["records"])
    rows = []
    for w, label in IO_WORKLOADS + PAIRS:
        if not any((c, w) in k for c in ("c", "rust", "c612", "off")):
            continue
        rows.append([label, cell(k.get(("c", w))), cell(k.get(("rust", w))),
                     cell(k.get(("c612", w))), cell(k.get(("off", w))),
                     ratio(k.get(("rust", w)), k.get(("c", w))),
                     ratio(k.get(("c#2", w)), k.get(("c#1", w)))])
    out = bench_legend()
    out += table(["workload", "C cache", "Rust cache", "C, 6.12's rule", "no cache", "Rust / C",
                  "C, 2nd / 1st boot"], rows)
    return out + provenance(d["meta"], f"results/{name}.json")


def saving_cell(rec, key, noise=False):
    v = rec.get(key)
    if v is None:
        return "-"
    return f"{v:.0f}{marks(rec.get(key + '_flags'))}{NOISE if noise else ''}"


def keeps_cell(rec, key, noise=False):
    v, f = rec.get(key), rec.get(key + "_flags") or []
    return (flagged(f) or (NOISE.strip() if noise else None)
            or ("-" if v is None else f"{100 * v:.1f}%"))


# The configuration a saving's key is of, and the one its share is of.
SAVERS = {"c": "c", "rust": "rust", "c_second_boot": "c#2"}
SHARE_OF = {"rust": "c", "c_second_boot": "c#1"}


def saving_noise(d, config, w):
    """Which of the figures of D's CONFIG ("saving" or "rule_saving") record
    for workload W are within spread, by the key they are printed from: "c"
    and "rust", a saving within the spreads of the two measured records it
    is the difference of, followed by (noise); "rust_keeps" and
    "c_second_boot_keeps", a share of such a saving or of two that do not
    differ, which reads (noise). Made from the measured records, since the
    recorded savings may predate bench-report.py's <key>_within_spread."""
    k = by_key(d["records"])
    # What each saving is the difference of.
    base = k.get(("off", "pair-off" if w.startswith("pair-") else w) if config == "saving"
                 else ("c612", w))

    def saves(cfg):
        x = k.get((cfg, w))
        return base is not None and x is not None and indistinct(base, x)

    def keeps(key):
        n, ref = k.get((SAVERS[key], w)), k.get((SHARE_OF[key], w))
        return (saves(SAVERS[key]) or saves(SHARE_OF[key])
                or (n is not None and ref is not None and indistinct(n, ref)))

    return {"c": saves("c"), "rust": saves("rust"), "rust_keeps": keeps("rust"),
            "c_second_boot_keeps": keeps("c_second_boot")}


def render_savings(name, config, title):
    d = load(f"{name}.json")
    if d is None:
        return missing(name, "make bench" + (" DISTRO=1" if name.endswith("distro") else ""))
    recs = {r["workload"]: r for r in d["records"] if r["config"] == config}
    rows = []
    for w, label in IO_WORKLOADS + PAIRS:
        r = recs.get(w)
        if r is None:
            continue
        noise = saving_noise(d, config, w)
        if config == "saving":
            rows.append([label, saving_cell(r, "c", noise["c"]),
                         saving_cell(r, "rust", noise["rust"]),
                         keeps_cell(r, "rust_keeps", noise["rust_keeps"]),
                         keeps_cell(r, "c_second_boot_keeps", noise["c_second_boot_keeps"])])
        else:
            # The percentage is of the same saving: (noise) in its place.
            c = (saving_cell(r, "c", True) if noise["c"] else
                 f"{saving_cell(r, 'c')} ({r.get('c_percent', 0):+.2f}%)")
            rows.append([label, c, saving_cell(r, "rust", noise["rust"]),
                         keeps_cell(r, "rust_keeps", noise["rust_keeps"])])
    if config == "saving":
        header = ["workload", "C cache saves", "Rust cache saves", "Rust keeps", "C 2nd boot keeps"]
    else:
        header = ["workload", "C cache saves", "Rust cache saves", "Rust keeps"]
    return title + table(header, rows) + provenance(d["meta"], f"results/{name}.json")


def render_summary(_):
    t, dd = load("bench.json"), load("bench-distro.json")
    if t is None and dd is None:
        return missing("bench", "make bench")
    kt = by_key(t["records"]) if t else {}
    kd = by_key(dd["records"]) if dd else {}
    rows = []
    for w, label in IO_WORKLOADS + PAIRS:
        row = [label]
        for k in (kt, kd):
            c, r = k.get(("c", w)), k.get(("rust", w))
            row += [cell(c) if c else "-", cell(r) if r else "-", ratio(r, c),
                    ratio(k.get(("c#2", w)), k.get(("c#1", w)))]
        if row[1:] != ["-", "-", "-", "-"] * 2:
            rows.append(row)
    out = bench_legend()
    out += table(["workload", "test kernels: C", "Rust", "Rust / C", "noise (C 2nd / 1st)",
                  "Debian's config: C", "Rust", "Rust / C", "noise (C 2nd / 1st)"], rows)
    for d, path in ((t, "results/bench.json"), (dd, "results/bench-distro.json")):
        if d:
            out += provenance(d["meta"], path)
    return out


def span(values, fmt="{:.3f}"):
    """The range of values as "a" or "a-b"."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def render_answer(_):
    """The result in words, for the top of the README: every figure read from
    results/, none typed."""
    runs = [(n, p, d) for n, p, d in (
        ("the test kernels", "bench.json", load("bench.json")),
        ("kernels built from Debian's config", "bench-distro.json", load("bench-distro.json"))) if d]
    if not runs:
        return missing("bench", "make bench")
    io, floor, pairs, flagged_n, noise_n = [], [], [], 0, 0
    for _, _, d in runs:
        k = by_key(d["records"])
        for w, _ in IO_WORKLOADS + PAIRS:
            c, r = k.get(("c", w)), k.get(("rust", w))
            c1, c2 = k.get(("c#1", w)), k.get(("c#2", w))
            if w == "pair-off":
                continue
            if c and r:
                if both_flags(r, c):
                    flagged_n += 1
                elif w.startswith("pair-"):
                    pairs.append((r["median"] / c["median"], c["median"] - r["median"]))
                else:
                    io.append(r["median"] / c["median"])
                    noise_n += indistinct(r, c)
            if c1 and c2 and not both_flags(c1, c2):
                floor.append(c2["median"] / c1["median"])
    where = " and on ".join(n for n, _, _ in runs)
    out = (f"Per IO, the Rust cache runs {span(io)} of the C cache's guest instructions"
           f" on every IO workload of `make bench` ({len(io)} rows, on {where});"
           f" the C kernel measured against itself, its second boot over its first,"
           f" reads {span(floor)}.")
    if noise_n:
        out += (f" On {noise_n} of the {len(io)} rows Rust and C differ by less than the"
                f" spread of their own figures: no difference is measured there.")
    if pairs:
        out += (f" Alone, one allocation and free of a cached bio costs Rust"
                f" {span([p for p, _ in pairs])} of C's ({span([s for _, s in pairs], '{:.0f}')}"
                f" instructions fewer, in the cache-hit and IRQ-list-splice pairs).")
    if flagged_n:
        out += f" {flagged_n} figures are flagged as noise and left out of these ranges."
    m = load("mutants.json")
    if m:
        out += (f" Each of the cache's historical bugs, put back, is caught by the test named for it"
                f" (`make mutants`: {m['summary'].split(';')[0]}).")
    ci = load("ci-cold.json")
    if ci:
        out += f" `make test` runs the whole suite: {ci['result']}."
    sources = ", ".join(f"`results/{p}` ({d['meta']['commit']})" for _, p, d in runs)
    out += f" (From {sources}" + (", `results/mutants.json`" if m else "") + (
        ", `results/ci-cold.json`" if ci else "") + ".)"
    return "\n".join(textwrap.wrap(out, 76, break_on_hyphens=False, break_long_words=False)) + "\n"


def delta(after, before):
    if after is None or before is None:
        return "-"
    return flagged(both_flags(after, before)) or (
        f"{before['median'] - after['median']:+.0f}{NOISE if indistinct(after, before) else ''}")


def render_split(name):
    """7.1's split allocation path (patches 40-45): each cache before and after, one table per
    pair of kernels, from the bench run recorded before the patches and the current one."""
    distro = name.endswith("distro")
    sfx = "-distro" if distro else ""
    before, after = load(f"bench{sfx}-before-split.json"), load(f"bench{sfx}.json")
    if before is None or after is None:
        return missing(f"bench{sfx}", "make bench" + (" DISTRO=1" if distro else ""))
    kb, ka = by_key(before["records"]), by_key(after["records"])
    rows = []
    for w, label in IO_WORKLOADS + PAIRS:
        row = [label]
        for c in ("c", "rust"):
            b, a = kb.get((c, w)), ka.get((c, w))
            row += [cell(b), cell(a), delta(a, b)]
        if row[1:] != ["-"] * 6:
            rows.append(row)
    out = bench_legend()
    out += table(["workload", "C cache, before", "after", "C saves", "Rust cache, before",
                  "after", "Rust saves"], rows)
    out += provenance(before["meta"], f"results/bench{sfx}-before-split.json")
    return out + provenance(after["meta"], f"results/bench{sfx}.json")


def split_figure(distro, config, workload, rose):
    """What CONFIG's WORKLOAD changed by across 7.1's allocation path, as
    render_split()'s "saves" column reads it but for its sign: after minus
    before if ROSE, else before minus after; for a span of the prose."""
    sfx = "-distro" if distro else ""
    before, after = load(f"bench{sfx}-before-split.json"), load(f"bench{sfx}.json")
    if before is None or after is None:
        return "(not recorded)"
    b, a = by_key(before["records"]).get((config, workload)), by_key(after["records"]).get(
        (config, workload))
    if a is None or b is None:
        return "(not recorded)"
    return flagged(both_flags(a, b)) or (f"{(a['median'] - b['median']) * (1 if rose else -1):.0f}"
                                         f"{NOISE if indistinct(a, b) else ''}")


def render_codegen(name):
    d = load(f"{name}.json")
    if d is None:
        return missing(name, "make codegen" + (" DISTRO=1" if name.endswith("distro") else ""))
    rows = [[r["path"], r["side"], r["functions"], r["insns"], r["bytes"], r["branches"],
             r["jumps"], r["frame"], r["calls"], r["only_this_side"]] for r in d["rows"]]
    out = table(["path", "side", "functions", "instructions", "bytes", "cond. branches", "jumps",
                 "max frame", "calls", "calls only this side makes"], rows)
    m = d["meta"]
    sizes = []
    for key, what in (("block_bio.o", "`block/bio.o`"), ("vmlinux", "`vmlinux`")):
        if m.get(key):
            before, after = (int(x) for x in m[key].split("->"))
            sizes.append(f"{what} {before} to {after} bytes ({after - before:+d})")
    if sizes:
        out += "\nbloat-o-meter, C to Rust: " + ", ".join(sizes) + ".\n"
    return out + provenance(m, f"results/{name}.json")


def render_mutants(_):
    d = load("mutants.json")
    if d is None:
        return missing("mutants", "make mutants")
    rows = [[r["mutant"], r["variant"], r.get("bug", ""), r.get("upstream", ""), r["verdict"],
             (r.get("matched") or r.get("first_failure", "")).replace("|", "/")]
            for r in d["rows"]]
    out = table(["mutant", "variant", "bug", "upstream", "verdict",
                 "the failure that caught it (or the first one)"], rows)
    b = d.get("baseline") or {}
    runs = "; ".join(f"{x['variant']}: {x['result']}" for x in b.get("runs", []))
    out += f"\n{d['summary']}. Baseline, the unmutated kernels on the same tests: {runs}.\n"
    return out + provenance(b, "results/mutants.json")


def render_soak(_):
    recs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(RESULTS, "soak-*.json")))]
    if not recs:
        return missing("soak VARIANT", "make soak VARIANT=...")
    def streams(r, names):
        s = r.get("streams", {})
        return " / ".join(f"{s[n]['ios']:,}" for n in names if n in s) or "-"
    def bal(r, b):
        x = r.get("balance", {}).get(b)
        return f"{x['puts']:,} = {x['taken_off']:,} + {x['held']:,}" if x else "-"
    fields = [
        ("result", lambda r: "passed" if r["passed"] else "FAILED"),
        ("cycles; wall time; guest time of the cycles",
         lambda r: f"{r['cycles']:,}; {fmt_secs(r['wall_seconds'])}; {r.get('cycle_seconds', '-')} s"),
        ("IOs in the verifying streams; reads verified",
         lambda r: f"{r.get('ios', 0):,}; {r.get('verified', 0):,}"),
        ("dm-linear IOs, polled / from its interrupt", lambda r: streams(r, ("dmpoll", "dmirq"))),
        ("passthrough IOs, without / with metadata", lambda r: streams(r, ("pt", "ptmd"))),
        ("ext4 file writes with fsync", lambda r: f"{r.get('file_writes', 0):,}"),
        ("`blkdev_dio_pool`: hard-IRQ puts, splices, softirq frees, drained",
         lambda r: ", ".join(f"{v:,}" for v in r.get("dio", {}).values()) or "-"),
    ]
    bsets = sorted({b for r in recs for b in r.get("balance", {})})
    fields += [(f"`{b}`: puts = taken off + held", lambda r, b=b: bal(r, b)) for b in bsets]
    fields.append(("bio, biovec, payload objects outside the caches, before / after",
                   lambda r: f"{r.get('slabs_before', '-')} / {r.get('slabs_after', '-')}"))
    rows = [[label] + [f(r) for r in recs] for label, f in fields]
    out = table([""] + [f"`{r['variant']}`" for r in recs], rows)
    for r in recs:
        out += provenance(r, f"results/soak-{r['variant']}.json").rstrip("\n") + "\n"
    return out


def render_ci_times(_):
    rows = []
    for name, what in (("make-cold", "`make` in a fresh clone, empty ccache"),
                       ("make-warm", "`make` in a fresh clone, warm ccache"),
                       ("ci-cold", "`bash .ci/run` (`make test`) in a fresh clone, empty ccache"),
                       ("ci-warm", "`bash .ci/run` (`make test`) in a fresh clone, warm ccache")):
        d = load(f"{name}.json")
        if d:
            rows.append([what, fmt_secs(d["seconds"]), d.get("result", "-"),
                         f"{d['commit']}, {d['date']}"])
    for name, what in (("bench", "`make bench` (kernels built)"),
                       ("bench-distro", "`make bench DISTRO=1` (kernels built)")):
        d = load(f"{name}.json")
        if d:
            m = d["meta"]
            rows.append([what, fmt_secs(m["seconds"]), "passed", f"{m['commit']}, {m['date']}"])
    d = load("mutants.json")
    if d and d.get("rows"):
        secs = sum(r.get("seconds", 0) for r in d["rows"]) + sum(
            int(x["seconds"]) for x in d["baseline"]["runs"])
        rows.append(["`make mutants` (variants built): baseline and every mutant", fmt_secs(secs),
                     d["summary"].split(";")[0], f"{d['baseline']['commit']}, {d['baseline']['date']}"])
    d = load("bisect.json")
    if d:
        for m in d["runs"]:
            rows.append([f"`{m['command']}` ({m['o_folders']} O= folders), patches"
                         f" {m['first']}-{m['last']}",
                         fmt_secs(m["seconds"]), m["result"], f"{m['commit']}, {m['date']}"])
    for p in sorted(glob.glob(os.path.join(RESULTS, "soak-*.json"))):
        r = json.load(open(p))
        rows.append([f"`{r['command']}` (kernel built)", fmt_secs(r["wall_seconds"]),
                     "passed" if r["passed"] else "FAILED", f"{r['commit']}, {r['date']}"])
    if not rows:
        return "No timing recorded yet: `scripts/ci-timing.sh cold` and `warm`.\n"
    return table(["command", "took", "result", "commit, date"], rows) + (
        "\nOn this project's machines: 2 cores, 24 GiB, QEMU under TCG. Every row is a recorded"
        " run (`results/`), its commit named.\n")


def spans(numbers):
    """1, 2, 3, 5 as "1-3, 5"."""
    out, first = [], None
    for i, n in enumerate(numbers):
        if first is None:
            first = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(f"{first}-{n}" if n != first else f"{n}")
            first = None
    return ", ".join(out)


def patch_subject(name):
    """The subject of patches/NAME, as git am reads it."""
    subject, inside = "", False
    with open(os.path.join(TOP, "patches", name)) as f:
        for line in f:
            if line.startswith("Subject: "):
                subject, inside = line[len("Subject: "):].rstrip("\n"), True
            elif inside and line.startswith((" ", "\t")):
                subject += " " + line.strip()
            elif inside:
                break
    return re.sub(r"^\[PATCH[^]]*\] *", "", subject)


def render_bisect(_):
    """A row per patch of the series as it is now: a recorded build counts
    only while the patch's content key (scripts/serieskeys.py) is the one it
    was built with."""
    d = load("bisect.json")
    if d is None:
        return missing("bisect", "make bisect")
    import serieskeys

    recorded = {r["patch"]: r for r in d["steps"]}
    series = serieskeys.keys(TOP)
    rows, good, stale, unbuilt, failed = [], 0, [], [], []
    for k, (name, key) in enumerate(series, 1):
        r = recorded.get(k)
        if r is None:
            what, run = "not built yet", "-"
            unbuilt.append(k)
        elif r["key"] != key:
            what, run = "changed since it was built", "-"
            stale.append(k)
        else:
            what, run = r["builds"], chr(ord("a") + r["run"])
            if r["ok"]:
                good += 1
            else:
                failed.append(k)
        rows.append([k, patch_subject(name).replace("|", "/"), what, run])
    out = table(["#", "patch", "what was built, how long", "run"], rows)
    out += f"\n{good} of {len(series)} patches build"
    notes = [f"{what}: {spans(v)}" for v, what in (
        (failed, "do not build"), (stale, "changed since they were built"),
        (unbuilt, "not built yet")) if v]
    out += f" ({'; '.join(notes)}).\n" if notes else ".\n"
    out += "\nThe runs:\n\n"
    for i, m in enumerate(d["runs"]):
        out += (f"- {chr(ord('a') + i)}: `{m['command']}` at commit {m['commit']} ({m['date']},"
                f" {fmt_secs(m['seconds'])}, {m['o_folders']} O= folders): {m['result']}.\n")
    return out + "\nRecorded in `results/bisect.json` (`scripts/record.sh bisect`).\n"


def render_targets(_):
    """README's table of targets and its variables, from scripts/targets.tsv,
    which make help prints too."""
    import help as targets

    rows, variables = [], []
    for kind, name, what, ci, link in targets.rows():
        if kind == "variable":
            variables.append(f"`{name}` {what}")
            continue
        names = ", ".join(f"`{n}`" for n in name.split(", "))
        rows.append([names, what + ("" if link == "-" else f" ([more]({link}))"), ci])
    text = ("Variables: " + "; ".join(variables) + ". `make help` prints the same, from"
            " `scripts/targets.tsv`.")
    return (table(["command", "what it does", "in CI"], rows) + "\n"
            + "\n".join(textwrap.wrap(text, 76, break_on_hyphens=False, break_long_words=False)) + "\n")


RENDER = {
    "answer": render_answer,
    "summary": render_summary,
    "split": render_split,
    "split-distro": render_split,
    "bench": lambda n: render_bench("bench"),
    "bench-distro": lambda n: render_bench("bench-distro") + "\n" + render_savings(
        "bench-distro", "saving", "What the cache saves on Debian's config (no cache minus cache):\n\n"),
    "bench-savings": lambda n: render_savings("bench", "saving", ""),
    "bench-rule": lambda n: render_savings("bench", "rule_saving", ""),
    "codegen": lambda n: render_codegen("codegen"),
    "codegen-distro": lambda n: render_codegen("codegen-distro"),
    "mutants": render_mutants,
    "soak": render_soak,
    "ci-times": render_ci_times,
    "bisect": render_bisect,
    "targets": render_targets,
}
# The spans: a figure each, on one line of prose.
INLINE = {
    "split-c-pair-hit": lambda n: split_figure(False, "c", "pair-hit", True),
    "split-distro-c-pair-splice": lambda n: split_figure(True, "c", "pair-splice", True),
    "split-c-pair-off": lambda n: split_figure(False, "c", "pair-off", False),
    "split-distro-c-pair-off": lambda n: split_figure(True, "c", "pair-off", False),
    "split-rust-pair-hit": lambda n: split_figure(False, "rust", "pair-hit", True),
    "split-distro-rust-pair-hit": lambda n: split_figure(True, "rust", "pair-hit", True),
    "split-rust-pair-splice": lambda n: split_figure(False, "rust", "pair-splice", True),
    "split-distro-rust-pair-splice": lambda n: split_figure(True, "rust", "pair-splice", True),
}


# Every block is carried by one file.
assert sorted(n for ns in CARRIES.values() for n in ns) == sorted(list(RENDER) + list(INLINE))


def check_markers(rel, text, seen):
    """What is wrong with the markers of file REL, whose text is TEXT: a
    list of "REL:LINE: ..." lines, empty if every block it carries is there
    once, between a BEGIN and an END of its name, each alone on its line (a
    span's both on one line), and nothing else is. SEEN: block name -> where
    it was found first, over every file."""
    errors, open_ = [], None
    carried = CARRIES.get(rel, [])
    found = set()
    for m in LOOSE.finditer(text):
        if text[m.start() - 1:m.start()] == "`":
            continue  # a marker quoted as code, in prose about markers
        line = text.count("\n", 0, m.start()) + 1
        at = f"{rel}:{line}"
        k = MARKER.fullmatch(m.group(0))
        if not k:
            errors.append(f"{at}: not a marker of the form '<!-- BEGIN rendered: NAME -->' or"
                          f" '<!-- END rendered: NAME -->': {m.group(0)}")
            continue
        kind, name = k.groups()
        bol = text.rfind("\n", 0, m.start()) + 1
        eol = text.find("\n", m.end())
        if name in RENDER and (text[bol:m.start()].strip()
                               or text[m.end():eol if eol >= 0 else len(text)].strip()):
            errors.append(f"{at}: {kind} rendered: {name}: not alone on its line")
        if name not in RENDER and name not in INLINE:
            errors.append(f"{at}: {kind} rendered: {name}: no such block (RENDER or INLINE in"
                          " scripts/render-docs.py)")
        elif name not in carried:
            owner = [f for f, ns in CARRIES.items() if name in ns]
            errors.append(f"{at}: {kind} rendered: {name}: carried by {owner[0]}, not {rel}"
                          " (CARRIES in scripts/render-docs.py)")
        if kind == "BEGIN":
            if open_ is not None:
                errors.append(f"{at}: BEGIN rendered: {name} inside block {open_[0]}, opened at"
                              f" line {open_[1]} and not ended")
            elif name in found or name in seen:
                errors.append(f"{at}: BEGIN rendered: {name}: the block again (first at"
                              f" {seen.get(name, rel)})")
            open_ = (name, line)
            found.add(name)
            seen.setdefault(name, at)
        elif open_ is None:
            errors.append(f"{at}: END rendered: {name} without its BEGIN")
        elif open_[0] != name:
            errors.append(f"{at}: END rendered: {name} ends block {open_[0]}, opened at line"
                          f" {open_[1]}")
            open_ = None
        else:
            if name in INLINE and open_[1] != line:
                errors.append(f"{at}: END rendered: {name}: a span, whose BEGIN (line"
                              f" {open_[1]}) must be on the same line")
            open_ = None
    if open_ is not None:
        errors.append(f"{rel}:{open_[1]}: BEGIN rendered: {open_[0]} without its END")
    errors += [f"{rel}: block {n} missing: no BEGIN rendered: {n} (CARRIES in"
               " scripts/render-docs.py)" for n in carried if n not in found]
    return errors


def render_file(path):
    text = open(path).read()

    def sub(m):
        name = m.group(2)
        return m.group(1) + (RENDER.get(name) or INLINE[name])(name) + m.group(4)

    return text, BLOCK.sub(sub, text)


def main(argv):
    check = "--check" in argv[1:]
    errors, seen = [], {}
    missing_files = [f for f in CARRIES if not os.path.exists(os.path.join(TOP, f))]
    errors += [f"{f}: missing, and it carries {', '.join(CARRIES[f])}" for f in missing_files]
    for path in FILES:
        with open(path) as f:
            errors += check_markers(os.path.relpath(path, TOP), f.read(), seen)
    if errors:
        print("rendered blocks whose markers are wrong, neither rendered nor checked"
              " (scripts/render-docs.py):\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    stale = []
    for path in FILES:
        old, new = render_file(path)
        if old == new:
            continue
        rel = os.path.relpath(path, TOP)
        if check:
            olds = dict((m.group(2), m.group(3)) for m in BLOCK.finditer(old))
            news = dict((m.group(2), m.group(3)) for m in BLOCK.finditer(new))
            stale += [f"{rel}: {n}" for n in olds if olds[n] != news.get(n)]
        else:
            with open(path, "w") as f:
                f.write(new)
            print(f"rendered {rel}")
    if stale:
        print("tables that differ from their rendering from results/ (scripts/render-docs.py"
              " rewrites them):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
