#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the machine code of the C and the Rust per-CPU bio cache.

Usage: codegen.py C_VMLINUX RUST_VMLINUX OUTDIR MARKDOWN

For each path of the cache (alloc fast path, put fast path, splice, prune,
CPU-dead callback, teardown) it disassembles, in each kernel, the functions
the path runs through: the entry point (a bio.c function; for C also the
function a static helper was inlined into), and, transitively, every function
it calls that belongs to the cache (bio.c's cache helpers; for Rust the
kernel::percpu_cache, kernel::percpu, kernel::context and kernel::block::bio
functions, the bio_cache_rust_* entry points and the rust_helper_* wrappers).
Per path and side: instructions, bytes, conditional and unconditional
branches, stack frame (pushes and the rsp adjustment of each function), and
every call with its target; calls that only one side makes are marked, they
are what the other side inlines or does not need. On the four hot paths
(alloc-hit, splice, put-task, put-hard-IRQ) every such call is marked,
whatever its target.

Writes OUTDIR/PATH.c.s, OUTDIR/PATH.rust.s and OUTDIR/PATH.side.txt (the two
listings side by side), prints a summary table and writes it to MARKDOWN.
"""

import json
import os
import re
import subprocess
import sys

# The LLVM tools of the compilers (scripts/lib.sh: LLVM_SUFFIX).
OBJDUMP = "llvm-objdump" + os.environ.get("LLVM_SUFFIX", "")
NM = "llvm-nm" + os.environ.get("LLVM_SUFFIX", "")
CXXFILT = "llvm-cxxfilt" + os.environ.get("LLVM_SUFFIX", "")

# path: (description, C roots, Rust roots). Roots missing from a kernel
# (inlined) are skipped. Both caches inline into bio_alloc_bioset() and
# bio_put() (C: its static functions; Rust: its entry points, whose bitcode
# is linked into bio.o), so the four hot paths are read in the functions
# they run through: alloc-hit and splice in bio_alloc_bioset() (and C's
# out-of-line splice), put-task and put-hard-IRQ in bio_put(). What a
# function calls covers every path through it, so "calls only this side
# makes" of a hot path lists every call it could make that the other side's
# does not.
PATHS = [
    ("alloc-hit", "allocation served from the task list (bio_alloc_bioset, REQ_ALLOC_CACHE)",
     ["bio_alloc_bioset", "bio_alloc_percpu_cache"],
     ["bio_alloc_bioset", "bio_alloc_percpu_cache", "bio_cache_rust_alloc"]),
    ("splice", "allocation that takes the hard-IRQ list first (bio_alloc_bioset)",
     ["bio_alloc_bioset", "bio_alloc_percpu_cache", "bio_alloc_irq_cache_splice"],
     ["bio_alloc_bioset", "bio_alloc_percpu_cache", "bio_cache_rust_alloc",
      "re:percpu_cache.*splice_irq"]),
    ("put-task", "free onto the task list (bio_put in task context)",
     ["bio_put", "bio_put_percpu_cache"],
     ["bio_put", "bio_put_percpu_cache", "bio_cache_rust_put"]),
    ("put-hard-IRQ", "free onto the hard-IRQ list (bio_put in hard-IRQ context)",
     ["bio_put", "bio_put_percpu_cache"],
     ["bio_put", "bio_put_percpu_cache", "bio_cache_rust_put"]),
    ("prune", "prune (free up to N bios of a CPU)",
     ["bio_alloc_cache_prune", "__bio_alloc_cache_prune"],
     ["re:percpu_cache.*5prune", "re:percpu_cache.*10prune_task"]),
    ("cpu_dead", "CPU-hotplug dead callback",
     ["bio_cpu_dead"],
     ["bio_cpu_dead", "bio_cache_rust_drain_cpu"]),
    ("teardown", "teardown (bioset_exit)",
     ["bioset_exit", "bio_alloc_cache_destroy"],
     ["bioset_exit", "bio_alloc_cache_destroy", "bio_cache_rust_free"]),
]

# Callees that are part of the cache, followed transitively.
C_CACHE = re.compile(r"^(bio_alloc_irq_cache_splice|(__)?bio_alloc_cache_prune|"
                     r"bio_alloc_percpu_cache|bio_put_percpu_cache|bio_alloc_cache_destroy|"
                     r"bio_cpu_dead)$")
RUST_CACHE = re.compile(r"(12percpu_cache|6percpu|7context|5block3bio|^bio_cache_rust_|"
                        r"^rust_helper_|^bio_alloc_percpu_cache$|^bio_put_percpu_cache$|"
                        r"^bio_alloc_cache_destroy$)")

# On the cold paths, calls to these are not marked as made by one side only:
# each side has its own form of them (the rust_helper_* wrappers are marked: C
# inlines them). On the hot paths every call one side makes and the other
# does not is marked, whatever its target: the goal there is no call that C
# does not make.
HOT = {"alloc-hit", "splice", "put-task", "put-hard-IRQ"}
C_OWN = C_CACHE
RUST_OWN = re.compile(r"(12percpu_cache|6percpu|7context|5block3bio|^bio_cache_rust_|"
                      r"^bio_alloc_percpu_cache$|^bio_put_percpu_cache$|^bio_alloc_cache_destroy$)")

BRANCH = re.compile(r"^j(?!mp)[a-z]+$")


def symbols(vmlinux):
    """name -> (address, size) of the text symbols."""
    out = subprocess.run([NM, "-S", "--defined-only", vmlinux], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            syms[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return syms


def demangle(names):
    if not names:
        return {}
    out = subprocess.run([CXXFILT], input="\n".join(names), capture_output=True,
                         text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def disassemble(vmlinux, syms, name):
    addr, size = syms[name]
    out = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", "--no-leading-addr",
                          f"--start-address={addr:#x}", f"--stop-address={addr + size:#x}",
                          vmlinux], capture_output=True, text=True, check=True).stdout
    lines = []
    for line in out.splitlines():
        if not line.startswith(("\t", " ")) or not line.strip():
            continue
        lines.append(line.strip())
    return lines


def analyse(lines):
    insns = [l for l in lines if not l.endswith(":")]
    calls, branches, jumps, frame = [], 0, 0, 0
    for i, l in enumerate(insns):
        m = re.match(r"^(\S+)\s*(.*)$", l)
        op, rest = m.group(1), m.group(2)
        target = re.search(r"<([^>+]+)(\+0x[0-9a-f]+)?>", rest)
        if op.startswith("call"):
            calls.append(target.group(1) if target else "indirect: " + rest)
        elif op == "jmp" and target and not target.group(2):
            calls.append(target.group(1) + " (tail)")
        elif op == "jmp":
            jumps += 1
        elif BRANCH.match(op):
            branches += 1
        if i < 12 and op.startswith("push"):
            frame += 8
        if i < 16 and op.startswith("sub") and rest.endswith("%rsp"):
            m = re.match(r"\$0x([0-9a-f]+)", rest)
            if m:
                frame += int(m.group(1), 16)
    return {"insns": len(insns), "branches": branches, "jumps": jumps, "frame": frame,
            "calls": calls}


def resolve(syms, roots):
    found = []
    for r in roots:
        if r.startswith("re:"):
            pat = re.compile(r[3:])
            found += sorted(s for s in syms if pat.search(s))
        elif r in syms:
            found.append(r)
    return found


def walk(vmlinux, syms, roots, member):
    """The functions of a path: roots and, transitively, cache callees."""
    seen, order, todo = set(), [], list(roots)
    info = {}
    while todo:
        name = todo.pop(0)
        if name in seen or name not in syms:
            continue
        seen.add(name)
        order.append(name)
        lines = disassemble(vmlinux, syms, name)
        info[name] = (lines, analyse(lines))
        for c in info[name][1]["calls"]:
            c = c.replace(" (tail)", "")
            if member.search(c) and c not in seen:
                todo.append(c)
    return order, info


def short(name, dem):
    d = dem.get(name, name)
    d = re.sub(r"::h[0-9a-f]{16}$", "", d)
    d = re.sub(r"\[[0-9a-f]+\]", "", d)
    return d if len(d) < 90 else d[:87] + "..."


def main():
    c_vmlinux, rust_vmlinux, outdir, md = sys.argv[1:5]
    os.makedirs(outdir, exist_ok=True)
    sides = {"c": (c_vmlinux, symbols(c_vmlinux), C_CACHE, C_OWN),
             "rust": (rust_vmlinux, symbols(rust_vmlinux), RUST_CACHE, RUST_OWN)}
    all_names = set()
    results = {}
    for key, desc, c_roots, r_roots in PATHS:
        results[key] = {}
        for side, roots in (("c", c_roots), ("rust", r_roots)):
            vmlinux, syms, member, _ = sides[side]
            order, info = walk(vmlinux, syms, resolve(syms, roots), member)
            results[key][side] = (order, info)
            all_names.update(order)
            for o in order:
                all_names.update(c.replace(" (tail)", "") for c in info[o][1]["calls"])
    dem = demangle(sorted(n for n in all_names if n.startswith("_R")))

    summary = []
    for key, desc, _, _ in PATHS:
        tot = {}
        callsets = {}
        for side in ("c", "rust"):
            order, info = results[key][side]
            syms = sides[side][1]
            t = {"functions": len(order), "insns": 0, "bytes": 0, "branches": 0,
                 "jumps": 0, "frame": 0, "calls": []}
            listing = []
            for name in order:
                lines, a = info[name]
                t["insns"] += a["insns"]
                t["bytes"] += syms[name][1]
                t["branches"] += a["branches"]
                t["jumps"] += a["jumps"]
                t["frame"] = max(t["frame"], a["frame"])
                t["calls"] += [(name, c) for c in a["calls"]]
                listing.append(f"{short(name, dem)}:  ({a['insns']} insns, {syms[name][1]} bytes,"
                               f" frame {a['frame']})")
                listing += ["    " + l for l in lines]
                listing.append("")
            with open(os.path.join(outdir, f"{key}.{side}.s"), "w") as f:
                f.write("\n".join(listing) + "\n")
            tot[side] = t
            callsets[side] = {c.replace(" (tail)", "") for _, c in t["calls"]}
        side_by_side = subprocess.run(
            ["pr", "-m", "-t", "-w", "200", os.path.join(outdir, f"{key}.c.s"),
             os.path.join(outdir, f"{key}.rust.s")], capture_output=True, text=True).stdout
        with open(os.path.join(outdir, f"{key}.side.txt"), "w") as f:
            f.write(f"{'C':<100}Rust\n{side_by_side}")
        summary.append((key, desc, tot, callsets))

    out, rows = [], []
    out.append("| path | side | functions | instructions | bytes | cond. branches | jumps | "
               "max frame | calls | calls only this side makes |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    details = []
    for key, desc, tot, callsets in summary:
        details.append(f"\n### {key}: {desc}\n")
        for side in ("c", "rust"):
            t = tot[side]
            other = callsets["rust" if side == "c" else "c"]
            own = sides[side][3] if key not in HOT else re.compile(r"(?!)")
            counts, only = {}, {}
            for caller, c in t["calls"]:
                bare = c.replace(" (tail)", "")
                label = short(bare, dem)
                counts[label] = counts.get(label, 0) + 1
                if not own.search(bare) and bare not in other and not bare.startswith("indirect"):
                    only[label] = only.get(label, 0) + 1
            fmt = lambda d: "; ".join(f"{k}" + (f" ×{n}" if n > 1 else "")
                                      for k, n in d.items()) or "-"
            out.append(f"| {key} | {side} | {t['functions']} | {t['insns']} | {t['bytes']} | "
                       f"{t['branches']} | {t['jumps']} | {t['frame']} | {len(t['calls'])} | "
                       f"{fmt(only)} |")
            rows.append({"path": key, "side": side, "functions": t["functions"],
                         "insns": t["insns"], "bytes": t["bytes"], "branches": t["branches"],
                         "jumps": t["jumps"], "frame": t["frame"], "calls": len(t["calls"]),
                         "only_this_side": fmt(only), "hot": key in HOT})
            details.append(f"- {side}: " + ", ".join(f"`{short(n, dem)}`"
                                                     for n in results[key][side][0]))
            details.append(f"  - calls: {fmt(counts)}")
    text = "\n".join(out)
    with open(os.path.splitext(md)[0] + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    with open(md, "w") as f:
        f.write("# Codegen: C and Rust per-CPU bio cache\n\n")
        f.write("Paths: " + "; ".join(f"`{k}`: {d}" for k, d, _, _ in PATHS) + ".\n\n")
        f.write("Per path, the functions it runs through (entry points and, transitively, the "
                "cache's own callees); calls marked **only c** / **only rust** are made by one "
                "side only: the other inlines them or has no such step. Listings: "
                f"`{outdir}/PATH.{{c,rust}}.s`, side by side in `PATH.side.txt`.\n\n")
        f.write(text + "\n")
        f.write("\n## Functions and calls per path\n" + "\n".join(details) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
