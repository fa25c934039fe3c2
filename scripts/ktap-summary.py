#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise guest runs: one line per test, then "N passed, N failed".

Each argument is a run folder of scripts/run-guest.sh, named .../VARIANT/BOOT,
holding:
  host.ktap      the host's checks of that boot (booted, powered off, clean
                 console, every result reported);
  results.ktap   the guest tests' KTAP, from the guest's second serial port;
  console.log    the kernel console, which carries KUnit's KTAP, if any;
  kunit.expected the KUnit cases the boot must run, "suite.case" a line
                 (scripts/test.sh writes it where KUnit is on): one that
                 did not report counts as failed, so a suite that was not
                 built or did not run cannot pass silently;
  skips.allowed  the skips the boot may report, "NAME-GLOB<TAB>REASON-REGEX"
                 a line (NAME as printed below without "VARIANT/BOOT: ",
                 e.g. "btf" or "kunit:bio_alloc_cache.*").

A test counts as passed on "ok", as failed on "not ok". "ok ... # SKIP
REASON" counts as skipped, reported apart, only where skips.allowed lists
it: any other skip is a failure, so that a test that did not run where it
should have (a KUnit case whose premise a regression broke) cannot hide
among the passes. A plan ("1..N") promising more results than arrived
counts the missing ones as failed. Exit status 1 if anything failed or
nothing ran.

--times a,b (scripts/test.sh with T=a,b): before the counts, how long each
of those tests took on each variant, from the "# NAME took Ns" line the
guest's /init writes before each result (or, from a guest without it, the
console's "biotest: ok N NAME (Ns)").
"""

import argparse
import fnmatch
import os
import re
import sys

RESULT = re.compile(r"^(not )?ok \d+ (.*?)(?:\s+#\s*(.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)$")
TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\] ")
TOOK = re.compile(r"^# (\S+) took (\d+)s$")
CONSOLE_TOOK = re.compile(r"^biotest: (?:not )?ok \d+ (\S+)\b.* \((\d+)s\)$")


def parse_ktap(lines, prefix, took=None):
    """Top-level results of one KTAP document: (name, status, note, seconds),
    seconds None where no "# NAME took Ns" line came before the result, nor
    in took (NAME: seconds from elsewhere)."""
    out, plan, took = [], None, dict(took or {})
    for line in lines:
        m = PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = TOOK.match(line)
        if m:
            took[m.group(1)] = int(m.group(2))
            continue
        m = RESULT.match(line)
        if not m:
            continue
        status = "fail" if m.group(1) else "pass"
        note = m.group(3) or ""
        if status == "pass" and note.upper().startswith("SKIP"):
            status = "skip"
        out.append((prefix + m.group(2), status, note, took.get(m.group(2))))
    if plan is not None and len(out) < plan:
        out.append((prefix + "(plan)", "fail", f"plan of {plan} results, got {len(out)}", None))
    return out


def console_times(console):
    """NAME: seconds, from the console's "biotest: ok N NAME (Ns)" lines."""
    out = {}
    for raw in console:
        m = CONSOLE_TOOK.match(TIMESTAMP.sub("", raw.rstrip("\r\n")))
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def parse_kunit(console, prefix):
    """KUnit test cases (indented by 4) from the console, per suite."""
    out, suite, cases, why, more = [], None, 0, {}, 0
    for raw in console:
        line = TIMESTAMP.sub("", raw.rstrip("\r\n"))
        m = re.match(r"^    # Subtest: (\S+)", line)
        if m:
            suite, cases = m.group(1), 0
            continue
        # A case's first failed expectation, and the two lines after it
        # ("Expected a == b, but", "a == 1"), are its note.
        m = re.match(r"^    # (\S+): (?:EXPECTATION|ASSERTION) FAILED at (\S+)", line)
        if suite and m:
            more = 0
            if m.group(1) not in why:
                why[m.group(1)], more = re.sub(r"^(\.\./)*(linux/)?", "", m.group(2)), 2
            continue
        if more and line.startswith("    ") and not RESULT.match(line[4:]) \
                and not line.startswith("    # "):
            why[list(why)[-1]] += (": " if more == 2 else " ") + line.strip()
            more -= 1
            continue
        more = 0
        if suite and line.startswith("    ") and not line.startswith("     "):
            r = RESULT.match(line[4:])
            if r:
                status = "fail" if r.group(1) else "pass"
                note = r.group(3) or ""
                if status == "fail" and r.group(2) in why:
                    note = (note + "; " if note else "") + why[r.group(2)]
                if status == "pass" and note.upper().startswith("SKIP"):
                    status = "skip"
                out.append((f"{prefix}kunit:{suite}.{r.group(2)}", status, note, None))
                cases += 1
                continue
        r = RESULT.match(line)
        if suite and r and r.group(2) == suite:
            if cases == 0:  # a suite without cases still has a result
                status = "fail" if r.group(1) else "pass"
                out.append((f"{prefix}kunit:{suite}", status, r.group(3) or "", None))
            suite = None
    return out


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return None


def allowed_skips(run):
    """(name glob, reason regex) pairs of the run's skips.allowed."""
    out = []
    for line in read(os.path.join(run, "skips.allowed")) or []:
        if line.strip() and not line.startswith("#"):
            glob, _, regex = line.partition("\t")
            out.append((glob.strip(), re.compile(regex.strip())))
    return out


def judge_skips(results, prefix, allowed):
    """Turns the skips of one run that skips.allowed does not list into
    failures."""
    out = []
    for name, status, note, secs in results:
        if status == "skip" and name.startswith(prefix):
            short = name[len(prefix):]
            reason = re.sub(r"^SKIP\s*", "", note, flags=re.I)
            if not any(fnmatch.fnmatchcase(short, g) and r.search(reason) for g, r in allowed):
                status = "fail"
                note = f"skipped ({reason or 'no reason'}), which this boot does not allow" \
                       " (skips.allowed)"
        out.append((name, status, note, secs))
    return out


def print_times(results, runs, tests):
    """How long each of tests took on each variant of runs: a table."""
    variants = []
    for run in runs:
        v = os.path.basename(os.path.dirname(run.rstrip("/")))
        if v != "check" and v not in variants:
            variants.append(v)
    cell = {}
    for name, _, _, secs in results:
        m = re.match(r"^([^/: ]+)/[^/: ]+: (\S+)$", name)
        if m and m.group(2) in tests:
            cell[m.group(2), m.group(1)] = "?" if secs is None else f"{secs}s"
    rows = [["test"] + variants] + [[t] + [cell.get((t, v), "-") for v in variants]
                                    for t in tests]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print("How long each test took (guest wall clock; -: did not run there):")
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def main(argv):
    ap = argparse.ArgumentParser(description="Summarise guest runs.")
    ap.add_argument("--times", metavar="A,B", help="print how long these tests took")
    ap.add_argument("runs", nargs="*")
    args = ap.parse_args(argv)
    runs = args.runs
    results = []
    for run in runs:
        boot = os.path.basename(run.rstrip("/"))
        variant = os.path.basename(os.path.dirname(run.rstrip("/")))
        prefix = f"{variant}/{boot}: "
        host = read(os.path.join(run, "host.ktap"))
        if host is None:
            results.append((prefix + "(run)", "fail", f"no host.ktap in {run}", None))
            continue
        results += parse_ktap(host, "")
        guest = read(os.path.join(run, "results.ktap"))
        console = read(os.path.join(run, "console.log")) or []
        if guest is not None:
            results += parse_ktap(guest, prefix, console_times(console))
        kunit = parse_kunit(console, prefix)
        results += kunit
        seen = {name for name, _, _, _ in kunit}
        for case in read(os.path.join(run, "kunit.expected")) or []:
            name = f"{prefix}kunit:{case.strip()}"
            if case.strip() and name not in seen:
                results.append((name, "fail", "did not run (expected in kunit.expected)", None))
        results = judge_skips(results, prefix, allowed_skips(run))

    counts = {"pass": 0, "fail": 0, "skip": 0}
    for name, status, note, _ in results:
        counts[status] += 1
        tag = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[status]
        print(f"  {tag}  {name}" + (f"  ({note})" if note and status != "pass" else ""))
    if args.times:
        print_times(results, runs, [t for t in args.times.split(",") if t])
    if counts["skip"]:
        print(f"{counts['skip']} skipped, each for a reason its boot allows")
    print(f"{counts['pass']} passed, {counts['fail']} failed")
    return 1 if counts["fail"] or not counts["pass"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
