#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run QEMU (TCG, -icount) so that its main loop runs in lockstep with the
# guest: on one host CPU, with the main loop thread at real-time priority.
#
#   scripts/qemu-lockstep.sh qemu-system-x86_64 ARGS...
#
# Why: QEMU completes an emulated NVMe's IO in a bottom half of its main loop
# thread. Left to the host scheduler, that thread runs a host-dependent time
# after the vCPU thread scheduled the bottom half, so a guest that polls for
# the completion executes a host-dependent number of instructions (NVMe
# figures spread 10-400% between repetitions). On the vCPU thread's CPU and
# at a higher priority, the main loop preempts the vCPU thread the moment it
# is woken, which is at a point of the guest's execution that depends on the
# guest alone: the figures repeat to under 1%.
#
# Needs CAP_SYS_NICE (root) for the real-time priority; without it QEMU runs
# unchanged and a warning says so. The exit status is QEMU's.
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: qemu-lockstep.sh QEMU [ARGS...]"
cpu=$(($(nproc) - 1))

taskset -c "$cpu" "$@" &
qemu=$!
trap 'kill "$qemu" 2>/dev/null' TERM INT HUP

# Threads inherit their creator's policy: raise the main thread only once
# the vCPU thread ("ALL CPUs/TCG" or "CPU n/TCG", named with
# -name debug-threads=on) exists, or it would be real-time too.
for _ in $(seq 200); do
	grep -qs '/TCG$' /proc/"$qemu"/task/*/comm && break
	kill -0 "$qemu" 2>/dev/null || break
	sleep 0.05
done
if ! grep -qs '/TCG$' /proc/"$qemu"/task/*/comm; then
	kill -0 "$qemu" 2>/dev/null &&
		warn "qemu-lockstep: no vCPU thread named */TCG in QEMU $qemu (-name debug-threads=on?); main loop left as is"
elif ! chrt -f -p 10 "$qemu" > /dev/null 2>&1; then
	warn "qemu-lockstep: cannot give QEMU's main loop real-time priority (not root?): NVMe figures will depend on the host"
fi

# wait returns early when a trapped signal arrives; wait again for QEMU.
rc=0
wait "$qemu" || rc=$?
while kill -0 "$qemu" 2>/dev/null; do
	rc=0
	wait "$qemu" || rc=$?
done
exit "$rc"
