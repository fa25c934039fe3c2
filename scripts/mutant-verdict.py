#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The verdict on one mutant run, from what its tests reported.

    mutant-verdict.py tests MUTANT.patch
        the guest tests the mutant's Expect lines need, comma-separated
    mutant-verdict.py check MUTANT.patch
        exit 1, naming the line, if a header is malformed
    mutant-verdict.py verdict MUTANT.patch VARIANT SUMMARY RUNS
        print the verdict as one JSON object

A mutant (tests/mutants/*.patch) names the failures that must catch it, one
"# Expect:" line each:

    # Expect: PROFILE TEST REGEX

PROFILE is the boot profile (tests/boots), TEST a guest test
(tests/guest/t/TEST.sh), "kunit:CASE" a case of the bio cache's KUnit
suite ("kunit:SUITE.CASE" one of another suite), or
"console" the boot's console ("console:TEST" where a guest test must run
for the bug to show), and REGEX a Python regular expression. It
matches the failure note ktap-summary.py prints for that test (a guest
test's FAIL: line, a KUnit case's first failed expectation), or, for
"console", the console from the first splat on (80 lines: the splat and its
call trace, so that REGEX can name the function the crash went through).

SUMMARY is scripts/test.sh's output for the mutant's boots, RUNS the folder
holding their VARIANT/PROFILE/console.log. The verdict is:

  killed     a failure an Expect line names, with the message it names, and
             no crash it does not explain;
  crashed    a boot that did not finish, or a splat on a console, that no
             Expect line names (whatever else failed);
  wrong test failures, none of them one an Expect line names;
  survived   nothing failed.

Only "killed" counts as caught.
"""

import json
import os
import re
import sys

HEADERS = ("Mutant", "Bug", "Upstream", "Variants", "Expect")
KUNIT_SUITE = "bio_alloc_cache"
# A guest test that runs in each profile when only the boot (the KUnit suite
# at boot, the console) is what a mutant's Expect lines look at.
CARRIERS = {"default": "cache-hits", "all": "bad-input-all", "icount": "cache-irq-race"}
# What scripts/run-guest.sh counts as a splat.
SPLAT = re.compile(r"WARNING:|BUG:|Oops|Call Trace|Kernel panic|KASAN|UBSAN|kmemleak: [0-9]+ new "
                   r"suspected|leak detector disabled|possible recursive locking|possible circular "
                   r"locking|inconsistent lock state|INFO: task .* blocked|general protection fault|"
                   r"stack-protector|Unable to handle")
FAIL = re.compile(r"^  FAIL  (\S+)/(\S+): (.*?)(?:  \((.*)\))?$")
# Host checks that say a boot crashed or hung rather than a test failing.
CRASH_CHECKS = ("guest finished", "console clean")


def headers(path):
    """The header lines of a mutant: {name: [values]}."""
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^# (\w+): *(.*)$", line)
            if m:
                out.setdefault(m.group(1), []).append(m.group(2).strip())
            elif not line.startswith("#"):
                break
    return out


def expects(path):
    """The Expect lines of a mutant: [(profile, test, regex)]."""
    out = []
    for e in headers(path).get("Expect", []):
        parts = e.split(None, 2)
        if len(parts) != 3:
            sys.exit(f"{path}: '# Expect: {e}' is not 'PROFILE TEST REGEX'")
        profile, test, regex = parts
        try:
            re.compile(regex)
        except re.error as err:
            sys.exit(f"{path}: '# Expect: {e}': {err}")
        out.append((profile, test, regex))
    return out


def check(path):
    h = headers(path)
    for name in HEADERS:
        if not h.get(name):
            sys.exit(f"{path} has no '# {name}:' line")
    expects(path)


def tests(path):
    """The guest tests to boot: those Expect lines name, and a carrier in
    each profile where they name only the boot (kunit, console)."""
    out = []
    for profile, test, _ in expects(path):
        if test.startswith("console:"):
            test = test[len("console:"):]
        elif test == "console" or test.startswith("kunit:"):
            carrier = CARRIERS.get(profile)
            if carrier is None:
                sys.exit(f"{path}: no carrier test for profile '{profile}' (mutant-verdict.py)")
            test = carrier
        if test not in out:
            out.append(test)
    return out


def splat_block(console):
    """The console from its first splat on, 80 lines; None if clean."""
    try:
        with open(console, errors="replace") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    for i, line in enumerate(lines):
        if SPLAT.search(line):
            return "\n".join(lines[i:i + 80])
    return None


def verdict(path, variant, summary, runs):
    fails = []
    with open(summary, errors="replace") as f:
        for line in f:
            m = FAIL.match(line.rstrip("\n"))
            if m and m.group(1) == variant:
                fails.append((m.group(2), m.group(3), m.group(4) or ""))
    expected = expects(path)
    matched, explained = [], set()
    for profile, test, regex in expected:
        if test == "console" or test.startswith("console:"):
            block = splat_block(os.path.join(runs, variant, profile, "console.log"))
            if block is not None and re.search(regex, block, re.S):
                first = next(line for line in block.splitlines() if SPLAT.search(line))
                matched.append(f"{variant}/{profile}: console: {first.strip()[:200]}")
                explained.add(profile)
            continue
        name = test
        if test.startswith("kunit:") and "." not in test:
            name = f"kunit:{KUNIT_SUITE}.{test[6:]}"
        for boot, fname, note in fails:
            if boot == profile and fname == name and re.search(regex, note):
                matched.append(f"{variant}/{boot}: {fname}: {note[:200]}")
                break
    crashes = [f"{variant}/{boot}: {name}: {note[:200]}" for boot, name, note in fails
               if name in CRASH_CHECKS and boot not in explained]
    first = (crashes or [f"{variant}/{b}: {n}: {w[:200]}" for b, n, w in fails] or [""])[0]
    if crashes:
        result = "crashed"
    elif matched:
        result = "killed"
    elif fails:
        result = "wrong test"
    else:
        result = "survived"
    return {
        "verdict": result,
        "expected": [f"{p} {t} {r}" for p, t, r in expected],
        "matched": matched[0] if matched else "",
        "first_failure": first,
        "failures": len(fails),
    }


def main(argv):
    if len(argv) >= 3 and argv[1] == "tests":
        print(",".join(tests(argv[2])))
    elif len(argv) >= 3 and argv[1] == "check":
        check(argv[2])
    elif len(argv) == 6 and argv[1] == "verdict":
        print(json.dumps(verdict(*argv[2:])))
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
