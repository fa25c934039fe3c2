#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job of `make`: boot each built variant, run the polled-IO workload
# (tests/guest/bench/workload.sh) and print one table.
. "$(dirname "$0")/lib.sh"

read -r -a variants <<< "${*:-${VARIANTS:-c rust}}"
rows=()
for v in "${variants[@]}"; do
	"$TOP/scripts/run-guest.sh" -n workload -t workload -T 600 "$v" ||
		die "workload on $v failed (results: $RUNS/$v/workload)"
	while read -r line; do
		rows+=("$v $line")
	done < <(sed -n 's/^# RESULT //p' "$RUNS/$v/workload/results.ktap")
done

echo
echo "Polled 512 B random reads, io_uring IOPOLL + registered file + fixed buffers:"
echo "O_DIRECT on null_blk, on NVMe and through dm-linear over that null_blk (the"
echo "dm clones from dm's bio_set, dm-N), and NVMe passthrough (URING_CMD, ngXnY)"
echo "(IOPS are guest wall clock under TCG emulation: they depend on the host)"
printf '%-8s %-18s %-16s %4s %5s %9s %9s %10s\n' variant device bio_set qd batch IOs IOPS 'cache hit'
for r in "${rows[@]}"; do
	set -- $r
	v=$1; shift
	declare -A f=()
	for kv in "$@"; do f[${kv%%=*}]=${kv#*=}; done
	case ${f[dev]} in
	wl) dev=null_blk ;;
	dm-*) dev="${f[dev]} (dm-linear)" ;;
	ng*) dev="${f[dev]} (passthru)" ;;
	*) dev=${f[dev]} ;;
	esac
	allocs=$((f[hits] + f[misses]))
	rate=$( [ "$allocs" -gt 0 ] && awk -v h="${f[hits]}" -v a="$allocs" 'BEGIN { printf "%.2f%%", 100 * h / a }' || echo -)
	printf '%-8s %-18s %-16s %4s %5s %9s %9s %10s\n' "$v" "$dev" "${f[bioset]:-blkdev_dio_pool}" \
		"${f[qd]}" "${f[batch]}" "${f[ios]}" "${f[iops]}" "$rate"
	unset f
done
echo
echo "The IOPS above are TCG's: they vary by tens of percent from one boot to the"
echo "next with the host's load, so they do not compare the two caches. For that,"
echo "make bench: guest instructions per IO under QEMU -icount, C against Rust"
echo "against no cache (docs/results.md#make-bench)."
