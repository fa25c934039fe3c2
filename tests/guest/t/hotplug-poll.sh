# SPDX-License-Identifier: GPL-2.0
# CPU hotplug under polled IO: every CPU but CPU0 goes offline and online
# several times (biotest.hotplug_cycles, default 5) while verified IOPOLL
# IO runs; IO and data stay correct.
. /tests/lib.sh

cycles=$(karg hotplug_cycles 5)
cpus=$(hotplug_cpus)
[ -n "$cpus" ] || fail "no CPU can go offline (SMP and CPU hotplug needed)"

nullb_create_polled hp
uring-io -d /dev/hp -o verify -p -q 8 -r 4M -t 3600 > /tmp/hp.out 2>&1 &
io=$!
for c in $(seq "$cycles"); do
	# shellcheck disable=SC2086
	cpus_cycle $cpus
	kill -0 $io 2> /dev/null || { cat /tmp/hp.out; fail "IO stopped during cycle $c"; }
done
log "$cycles cycles of CPUs $(echo $cpus) offline/online"
kill -INT $io
wait $io && rc=0 || rc=$?
cat /tmp/hp.out
out=$(tail -n 1 /tmp/hp.out)
[ "$(field errors "$out")" = 0 ] || fail "IO errors under hotplug"
[ "$(field verified "$out")" -gt 0 ] || fail "no data verified under hotplug (exit $rc)"
