#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the QEMU accelerator arguments to use: KVM only if a short probe boot
# under KVM reaches the guest's userspace, else TCG. The answer is cached in
# $BUILD/accel (remove it to probe again).
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: kvm-probe.sh VARIANT}
cache=$BUILD/accel
if [ ! -f "$cache" ]; then
	if [ -w /dev/kvm ] && ACCEL=kvm "$TOP/scripts/run-guest.sh" -n kvm-probe -T 30 \
		"$variant" > "$LOGS/kvm-probe.log" 2>&1; then
		echo "-accel kvm -cpu host" > "$cache"
	else
		echo "-accel tcg" > "$cache"
	fi
	info "KVM probe: using $(cat "$cache") (log: $LOGS/kvm-probe.log)"
fi
cat "$cache"
