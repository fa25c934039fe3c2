#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make soak`: the stress test alone, CYCLES CPU hotplug cycles long.
#
#   scripts/soak.sh VARIANT CYCLES
#
# Booted with 6.19's rule (bio_alloc_cache=all), so that ext4's bios go
# through the cache with the other streams'; its run in $BUILD/soak, apart
# from make test's. The test's timeout grows with CYCLES (TIMEOUT_SCALE),
# the time a stream may go without completing an IO does not: it is the
# variant's (30 s, 120 s on the debug variants) however long the soak.
# What the run measured goes to $BUILD/soak/soak-VARIANT.json, with the
# commit and the command (scripts/record.sh soak VARIANT puts it in results/).
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: soak.sh VARIANT CYCLES}
cycles=${2:?usage: soak.sh VARIANT CYCLES}
[[ $cycles =~ ^[1-9][0-9]*$ ]] || die "CYCLES=$cycles: expected a number of cycles"
export RUNS=$BUILD/soak
t0=$SECONDS
rc=0
T=stress GUEST_ARGS="biotest.stress_cycles=$cycles bio_alloc_cache=all" \
	TIMEOUT_SCALE=$((cycles / 200 + 1)) "$TOP/scripts/test.sh" "$variant" || rc=$?
commit=$(provenance)
python3 - "$RUNS/$variant/stress/results.ktap" "$RUNS/soak-$variant.json" "$variant" "$cycles" \
	"$commit" "$((SECONDS - t0))" "$rc" <<'EOF'
import json, re, sys, time
ktap, out, variant, cycles, commit, wall, rc = sys.argv[1:]
lines = [l[2:].strip() for l in open(ktap, errors="replace") if l.startswith("# ")]
text = [re.sub(r"^stress\| ", "", l) for l in lines]
def grab(pattern, conv=int):
    for l in text:
        m = re.search(pattern, l)
        if m:
            return [conv(g) for g in m.groups()]
    return None
rec = {
    "variant": variant, "cycles": int(cycles), "commit": commit,
    "command": f"make soak CYCLES={cycles} VARIANT={variant}",
    "date": time.strftime("%Y-%m-%d", time.gmtime()), "wall_seconds": int(wall),
    "passed": rc == "0",
}
g = grab(r"^(\d+) cycles of CPUs .* in (\d+)s")
if g:
    rec["cycles_done"], rec["cycle_seconds"] = g
g = grab(r"^(\d+) IOs, (\d+) reads verified, (\d+) files written")
if g:
    rec["ios"], rec["verified"], rec["file_writes"] = g
g = grab(r"IRQ puts (\d+), splices (\d+), freed from softirq (\d+), drained by hotplug (\d+)")
if g:
    rec["dio"] = dict(zip(("put_irq", "splices", "freed_softirq", "drained"), g))
rec["balance"] = {}
for l in text:
    m = re.search(r"^(\S+) balance: (\d+) puts = (\d+) taken off \+ (\d+) held", l)
    if m:
        rec["balance"][m.group(1)] = dict(zip(("puts", "taken_off", "held"),
                                              map(int, m.groups()[1:])))
    m = re.search(r"^(\w+): uring-io: .* ios=(\d+) .*verified=(\d+) .*errors=(\d+)", l) or \
        re.search(r"^(\w+): nvme-pt: .* ios=(\d+) .*verified=(\d+) .*errors=(\d+)", l)
    if m:
        rec.setdefault("streams", {})[m.group(1)] = dict(zip(("ios", "verified", "errors"),
                                                             map(int, m.groups()[1:])))
g = grab(r"objects outside the caches \(before: ([^)]*)\) = (.*)$", str)
if g:
    rec["slabs_before"], rec["slabs_after"] = g
json.dump(rec, open(out, "w"), indent=1)
print(f"    soak record: {out}", file=sys.stderr)
EOF
exit "$rc"
