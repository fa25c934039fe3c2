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

--out DIR (scripts/test.sh: $RUNS) also writes every result of the run to
DIR/results.ktap, one KTAP v1 document (a subtest per run folder, named
VARIANT/BOOT, "style checks" for scripts/check.sh's, and in it a subtest
per KUnit suite; "# NAME took Ns" before a result that was timed), and to
DIR/results.json: {"passed", "failed", "skipped", "results": [{"variant",
"boot", "name", "result" (pass, fail or skip), "reason", "seconds"}]}, the
style checks with variant and boot null. Their paths are printed before
the counts.
"""

import argparse
import fnmatch
import json
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


def reason(status, note):
    """The reason of a failure or a skip, without the SKIP directive."""
    if status == "pass":
        return ""
    return re.sub(r"^SKIP\b\s*", "", note, flags=re.I) if status == "skip" else note


def ktap_line(status, num, name, note):
    """One KTAP result line; a name may not hold "#", which starts the
    directive, nor a reason a line break."""
    name = name.replace("#", "_")
    why = " ".join(reason(status, note).split())
    if status == "skip":
        return f"ok {num} {name} # SKIP{' ' + why if why else ''}"
    if status == "fail":
        return f"not ok {num} {name}" + (f" # {why}" if why else "")
    return f"ok {num} {name}"


def overall(statuses):
    """A subtest's result: failed if one of its results did, skipped if
    all were skipped, else passed."""
    if "fail" in statuses:
        return "fail"
    return "skip" if statuses and all(x == "skip" for x in statuses) else "pass"


def ktap_subtest(name, items, depth):
    """Lines of a subtest at depth (its results indented by 4 * depth)
    and its result: items are (name, status, note, seconds) results or
    (suite, [items]) subtests."""
    ind = "    " * depth
    lines = [f"{ind}KTAP version 1", f"{ind}# Subtest: {name}", f"{ind}1..{len(items)}"]
    statuses = []
    for i, item in enumerate(items, 1):
        if isinstance(item[1], list):
            sub, status = ktap_subtest(item[0], item[1], depth + 1)
            lines += sub
            lines.append(ind + ktap_line(status, i, item[0], ""))
        else:
            n, status, note, secs = item
            if secs is not None:
                lines.append(f"{ind}# {n} took {secs}s")
            lines.append(ind + ktap_line(status, i, n, note))
        statuses.append(status)
    return lines, overall(statuses)


def group_run(run_results):
    """A run's results with its KUnit cases gathered into one subtest per
    suite, where the suite's first case was."""
    items, suites = [], {}
    for n, status, note, secs in run_results:
        m = re.match(r"^kunit:([^.]+)\.(.+)$", n)
        if not m:
            items.append((n, status, note, secs))
            continue
        if m.group(1) not in suites:
            suites[m.group(1)] = []
            items.append((f"kunit:{m.group(1)}", suites[m.group(1)]))
        suites[m.group(1)].append((m.group(2), status, note, secs))
    return items


def write_all(out, groups, counts):
    """results.ktap and results.json of every run in out; their paths."""
    os.makedirs(out, exist_ok=True)
    lines = ["KTAP version 1", f"1..{len(groups)}"]
    rows = []
    for i, (variant, boot, run_results) in enumerate(groups, 1):
        name = f"{variant}/{boot}" if variant else "style checks"
        sub, status = ktap_subtest(name, group_run(run_results), 1)
        lines += sub
        lines.append(ktap_line(status, i, name, ""))
        rows += [{"variant": variant, "boot": boot, "name": n, "result": st,
                  "reason": reason(st, note) or None, "seconds": secs}
                 for n, st, note, secs in run_results]
    ktap, js = os.path.join(out, "results.ktap"), os.path.join(out, "results.json")
    with open(ktap, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(js, "w") as f:
        json.dump({"passed": counts["pass"], "failed": counts["fail"],
                   "skipped": counts["skip"], "results": rows}, f, indent=1)
        f.write("\n")
    return ktap, js


def main(argv):
    ap = argparse.ArgumentParser(description="Summarise guest runs.")
    ap.add_argument("--times", metavar="A,B", help="print how long these tests took")
    ap.add_argument("--out", metavar="DIR", help="write results.ktap and results.json there")
    ap.add_argument("runs", nargs="*")
    args = ap.parse_args(argv)
    runs = args.runs
    results = []
    # (variant, boot, results without the "VARIANT/BOOT: " prefix) per
    # run; the style checks' variant and boot are None.
    groups = []
    for run in runs:
        boot = os.path.basename(run.rstrip("/"))
        variant = os.path.basename(os.path.dirname(run.rstrip("/")))
        prefix = f"{variant}/{boot}: "
        host = read(os.path.join(run, "host.ktap"))
        if host is None:
            run_results = [(prefix + "(run)", "fail", f"no host.ktap in {run}", None)]
        else:
            run_results = parse_ktap(host, "")
            guest = read(os.path.join(run, "results.ktap"))
            console = read(os.path.join(run, "console.log")) or []
            if guest is not None:
                run_results += parse_ktap(guest, prefix, console_times(console))
            kunit = parse_kunit(console, prefix)
            run_results += kunit
            seen = {name for name, _, _, _ in kunit}
            for case in read(os.path.join(run, "kunit.expected")) or []:
                name = f"{prefix}kunit:{case.strip()}"
                if case.strip() and name not in seen:
                    run_results.append((name, "fail", "did not run (expected in kunit.expected)",
                                        None))
            run_results = judge_skips(run_results, prefix, allowed_skips(run))
        results += run_results
        style = (variant, boot) == ("check", "style")
        groups.append((None if style else variant, None if style else boot,
                       [(n[len(prefix):] if n.startswith(prefix) else n, st, note, secs)
                        for n, st, note, secs in run_results]))

    counts = {"pass": 0, "fail": 0, "skip": 0}
    for name, status, note, _ in results:
        counts[status] += 1
        tag = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[status]
        print(f"  {tag}  {name}" + (f"  ({note})" if note and status != "pass" else ""))
    if args.times:
        print_times(results, runs, [t for t in args.times.split(",") if t])
    if args.out:
        ktap, js = write_all(args.out, groups, counts)
        print(f"Every result: {ktap} (KTAP), {js}")
    if counts["skip"]:
        print(f"{counts['skip']} skipped, each for a reason its boot allows")
    print(f"{counts['pass']} passed, {counts['fail']} failed")
    return 1 if counts["fail"] or not counts["pass"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
