#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a built variant in QEMU, run guest tests, check the console.
#
#   scripts/run-guest.sh [options] VARIANT
#     -n NAME      name of this boot (results go to $RUNS/VARIANT/NAME)
#     -t TESTS     comma-separated tests from tests/guest/t to run
#     -a ARGS      extra kernel command line
#     -T SECONDS   timeout of the whole boot (default 600)
#     -i           interactive: a shell on the console, no tests
#     -s DIR       with -i: the host folder DIR at /mnt/share in the guest,
#                  copied in and, when the guest powers off, back (below)
#     -q ARGS      extra QEMU arguments
#     -l           run QEMU in lockstep with the guest (scripts/qemu-lockstep.sh:
#                  one host CPU, main loop at real-time priority), for
#                  instruction counts under -icount that do not depend on the host
#
# Environment: ACCEL=tcg|kvm|auto (default tcg), SMP (default 2), MEM
# (default 2G), NVME=file|null (the NVMe's backing store, default a file;
# see below), V=1 to show the whole console.
#
# Results: RUN/console.log (the console, teed), RUN/results.ktap (KTAP from
# the guest's second serial port) and RUN/host.ktap (what the host checked:
# the guest booted, ran every test, powered off, and the console holds no
# splat). Exit status: 0 if everything passed.
. "$(dirname "$0")/lib.sh"

name=default tests="" append="" timeout=600 interactive=0 qemu_extra="" lockstep=0 share=""
while getopts "n:t:a:T:is:q:l" opt; do
	case $opt in
	n) name=$OPTARG ;;
	t) tests=$OPTARG ;;
	a) append=$OPTARG ;;
	T) timeout=$OPTARG ;;
	i) interactive=1 ;;
	s) share=$OPTARG ;;
	q) qemu_extra=$OPTARG ;;
	l) lockstep=1 ;;
	*) die "usage: run-guest.sh [-n NAME] [-t TESTS] [-a ARGS] [-T SECONDS] [-i] [-s DIR] [-q ARGS] [-l] VARIANT" ;;
	esac
done
shift $((OPTIND - 1))
variant=${1:?usage: run-guest.sh [options] VARIANT}

# The results of an earlier boot go first: a boot that cannot start must
# not leave them to be read as its own.
run=$RUNS/$variant/$name
rm -rf "$run"
mkdir -p "$run"

kernel=$(objdir "$variant")/arch/x86/boot/bzImage
initrd=$BUILD/initramfs.cpio
[ -f "$kernel" ] || die "no kernel for variant $variant ($kernel): build it first (make kernel-$variant)"
built=$(cat "$(objdir "$variant")/.variant" 2>/dev/null || echo "an unfinished build")
[ "$built" = "$variant" ] ||
	die "$(objdir "$variant") holds $built, not $variant: build it first (make kernel-$variant)"
[ -f "$initrd" ] || die "no initramfs ($initrd): build it first (make initramfs)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (make deps)"

# TCG unless KVM is asked for: KVM hangs on these machines (see README).
case "${ACCEL:-tcg}" in
tcg) accel=(-accel tcg) ;;
kvm) accel=(-accel kvm -cpu host) ;;
auto) accel=($("$TOP/scripts/kvm-probe.sh" "$variant")) ;;
*) die "ACCEL must be tcg, kvm or auto" ;;
esac

cmdline="console=ttyS0 panic=-1 printk.time=1 rdinit=/init"
cmdline+=" null_blk.nr_devices=0 null_blk.poll_queues=2 nvme.poll_queues=1"
cmdline+=" brd.rd_nr=1 brd.rd_size=16384"
cmdline+=" biotest.variant=$variant"
# Tests of what the kernel was built with (tests/guest/t/btf.sh).
! grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$(objdir "$variant")/.config" || cmdline+=" biotest.btf=1"
# Under KASAN and TCG, ACPICA runs QEMU's PCI routing method (_PRT, a loop
# that builds 128 entries) past its 30-second loop timeout, once for each
# NVMe controller: a minute of every debug boot, and the routing fails
# anyway. The BIOS's PIRQ table routes legacy interrupts instead (the NVMe
# driver uses MSI-X).
! grep -q '^CONFIG_KASAN=y' "$(objdir "$variant")/.config" || cmdline+=" acpi=noirq"
[ "$interactive" = 1 ] && cmdline+=" biotest.shell=1"
[ -n "$tests" ] && cmdline+=" biotest.tests=$tests"
[ -n "$share" ] && cmdline+=" biotest.share=biocacheshare"
[ -n "$append" ] && cmdline+=" $append"

# The emulated NVMe. NVME=file (the default): two controllers, serials
# biocache0 and biocache1, each with one 64 MiB namespace backed by a file of
# this run (runs never share data), for tests that stack device-mapper on
# two NVMe devices; biocachemd, whose 16 MiB namespace has 8 bytes of
# metadata per block in a separate buffer (ms=8, mset=0: the guest gives it
# an integrity profile without checksums); and two controllers, both serial
# biocachemp, of one NVMe subsystem sharing its one 16 MiB namespace, which
# the guest sees through a multipath head (CONFIG_NVME_MULTIPATH). The guest
# probes controllers and scans namespaces asynchronously, so nvme0 may be any
# of them: tests find a namespace by its controller's serial (nvme_find in
# tests/guest/lib.sh).
# NVME=null: the controller the bench measures, serial biocache0, on QEMU's
# null-co backend, which completes every IO at once in the vCPU thread
# (reads return zeroes, writes are dropped): the guest's instruction count
# then no longer depends on the host's IO latency (make bench); and one with
# a 16 MiB namespace in a file, serial biocachesm, which keeps its data, for
# the verified IO of the bench boots' smoke test, idle while the bench
# measures.
nvme=()
if [ "${NVME:-file}" = null ]; then
	truncate -s 16M "$run/nvmesm.img"
	nvme=(-blockdev "driver=null-co,node-name=nvm0,size=$((64 << 20)),read-zeroes=on"
		-device "nvme,serial=biocache0,drive=nvm0"
		-drive "file=$run/nvmesm.img,if=none,id=nvmsm,format=raw"
		-device "nvme,serial=biocachesm,drive=nvmsm")
else
	for i in 0 1; do
		truncate -s 64M "$run/nvme$i.img"
		nvme+=(-drive "file=$run/nvme$i.img,if=none,id=nvm$i,format=raw"
			-device "nvme,serial=biocache$i,drive=nvm$i")
	done
	truncate -s 16M "$run/nvmemd.img" "$run/nvmemp.img"
	nvme+=(-drive "file=$run/nvmemd.img,if=none,id=nvmmd,format=raw"
		-device "nvme,serial=biocachemd,id=nvmemd"
		-device "nvme-ns,drive=nvmmd,bus=nvmemd,nsid=1,ms=8,mset=0"
		-device "nvme-subsys,id=bcmp,nqn=biocachemp"
		-drive "file=$run/nvmemp.img,if=none,id=nvmmp,format=raw"
		-device "nvme,serial=biocachemp,id=nvmemp0,subsys=bcmp"
		-device "nvme,serial=biocachemp,id=nvmemp1,subsys=bcmp"
		-device "nvme-ns,drive=nvmmp,bus=nvmemp0,nsid=1,shared=on")
fi
qemu=(qemu-system-x86_64 "${accel[@]}" -m "${MEM:-2G}" -smp "${SMP:-2}"
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	-display none -no-reboot -monitor none "${nvme[@]}")
# The shared folder, for make shell: an ext4 image of DIR on an NVMe
# controller of its own (serial biocacheshare), which /init mounts at
# /mnt/share, and whose files are copied back into DIR when the guest
# powers off (new and changed ones; a file deleted in the guest stays).
# Not 9p or virtiofs: those need networking and virtio in the test
# kernels, code that nothing here tests, in kernels whose every option is
# there for the cache.
if [ -n "$share" ]; then
	[ "$interactive" = 1 ] || die "-s DIR goes with -i (make shell SHARE=DIR)"
	[ -d "$share" ] || die "SHARE=$share is not a folder"
	share=$(cd "$share" && pwd)
	size=$(($(du -sm "$share" | cut -f1) * 2 + 64))
	rm -f "$run/share.img"
	mke2fs -q -t ext4 -d "$share" -E root_owner=0:0 -F "$run/share.img" "${size}M" \
		> "$run/share.log" 2>&1 || die "mke2fs of $share failed (log: $run/share.log)"
	qemu+=(-drive "file=$run/share.img,if=none,id=share,format=raw"
		-device "nvme,serial=biocacheshare,drive=share")
fi
# shellcheck disable=SC2206
qemu+=($qemu_extra)
if [ "$lockstep" = 1 ]; then
	# The wrapper finds the vCPU thread by the name debug-threads gives it.
	qemu=("$TOP/scripts/qemu-lockstep.sh" "${qemu[@]}" -name biocache,debug-threads=on)
fi

if [ "$interactive" = 1 ]; then
	msg "Booting $variant interactively (console log: $run/console.log)"
	info "kernel command line: $cmdline"
	[ -z "$share" ] || info "$share is /mnt/share in the guest, copied back at power-off"
	"${qemu[@]}" -serial mon:stdio -serial null | tee "$run/console.log"
	if [ -n "$share" ]; then
		rm -rf "$run/share.out"
		mkdir "$run/share.out"
		debugfs -R "rdump / $run/share.out" "$run/share.img" >> "$run/share.log" 2>&1 ||
			die "could not read the guest's /mnt/share back (log: $run/share.log)"
		rmdir "$run/share.out/lost+found" 2>/dev/null || true
		cp -a "$run/share.out/." "$share/"
		info "/mnt/share copied back into $share"
	fi
	exit 0
fi

qemu+=(-serial stdio -serial "file:$run/results.ktap")
printf '%q ' "${qemu[@]}" > "$run/qemu.cmd"
msg "Booting $variant ($name): ${tests:-no tests} (timeout ${timeout}s, console: $run/console.log)"
start=$SECONDS
set +e
timeout -k 10 "$timeout" "${qemu[@]}" < /dev/null 2>&1 | tee "$run/console.log" |
	if [ "${V:-0}" = 1 ]; then cat; else grep --line-buffered '^biotest: \(ok\|not ok\)' | sed -u 's/^biotest:/   /'; fi
rc=${PIPESTATUS[0]}
set -e
secs=$((SECONDS - start))
# The guest's tty turned \n into \r\n.
[ ! -f "$run/results.ktap" ] || sed -i 's/\r$//' "$run/results.ktap"

# Host-side checks, as KTAP too.
console=$run/console.log
checks=()
check() { checks+=("$1|$2"); }

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	check "$variant/$name: guest finished" "timed out after ${timeout}s; console: $console"
# /init writes the KTAP header to the second serial port before any test;
# the console is no witness, as kernel messages may split its lines.
elif ! grep -q '^KTAP version 1' "$run/results.ktap" 2>/dev/null; then
	check "$variant/$name: guest finished" "did not reach userspace (exit $rc); console: $console"
elif ! grep -q 'reboot: Power down' "$console"; then
	check "$variant/$name: guest finished" "did not power off cleanly (exit $rc); console: $console"
else
	check "$variant/$name: guest finished" ""
fi

# Splats: any of these in the console fails the boot.
splat='WARNING:|BUG:|Oops|Call Trace|Kernel panic|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|leak detector disabled|possible recursive locking|possible circular locking|inconsistent lock state|INFO: task .* blocked|general protection fault|stack-protector|Unable to handle'
if grep -nE "$splat" "$console" > "$run/splats.txt"; then
	check "$variant/$name: console clean" "$(head -n 3 "$run/splats.txt" | tr '\n' ' ')(see $console)"
else
	rm -f "$run/splats.txt"
	check "$variant/$name: console clean" ""
fi

if [ -n "$tests" ]; then
	missing="" expect="${tests//,/ } taint"
	# /init scans for leaks on kernels that can.
	grep -q '^CONFIG_DEBUG_KMEMLEAK=y' "$(objdir "$variant")/.config" && expect+=" kmemleak"
	for t in $expect; do
		grep -qE "^(not )?ok [0-9]+ $t( |$)" "$run/results.ktap" 2>/dev/null || missing+=" $t"
	done
	check "$variant/$name: all results reported" "${missing:+no result for:$missing}"
fi

write_ktap "$run/host.ktap" "${checks[@]}"

failed=$(cat "$run/host.ktap" "$run/results.ktap" 2>/dev/null | grep -c '^not ok' || true)
grep '^not ok' "$run/host.ktap" | sed 's/^/    /' >&2 || true
info "$variant/$name: ${secs}s, guest tests and host checks: $( [ "$failed" = 0 ] && echo "all passed" || echo "$failed failed")"
[ "$failed" = 0 ]
