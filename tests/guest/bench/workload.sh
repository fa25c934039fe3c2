# SPDX-License-Identifier: GPL-2.0
# The polled-IO workload of `make`: 512-byte random O_DIRECT reads through
# io_uring with IOPOLL, registered file and fixed buffers, in the shape of the
# seed series' benchmark (t/io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1) and
# at queue depth 1, on null_blk and on the emulated NVMe. Each run prints a
# "RESULT" line for scripts/workload.sh.
# timeout: 300
. /tests/lib.sh

secs=${WORKLOAD_SECONDS:-3}
nullb_create wl queue_mode=2 submit_queues=1 poll_queues=2 size=1024 blocksize=512
for i in $(seq 50); do [ -b /dev/nvme0n1 ] && break; sleep 0.2; done

for dev in wl nvme0n1; do
	for shape in "128 32" "1 1"; do
		set -- $shape
		h0=$(cache_stat $DIO_BIOSET all alloc_hit)
		m0=$(cache_stat $DIO_BIOSET all alloc_miss)
		out=$(uring-io -d /dev/$dev -o read -p -F -X -b 512 -q $1 -c $2 -r 1G -t "$secs") ||
			{ echo "$out"; fail "workload on $dev failed"; }
		echo "$out"
		hits=$(($(cache_stat $DIO_BIOSET all alloc_hit) - h0))
		misses=$(($(cache_stat $DIO_BIOSET all alloc_miss) - m0))
		echo "RESULT dev=$dev qd=$1 batch=$2 ios=$(field ios "$out") ns=$(field ns "$out") iops=$(field iops "$out") hits=$hits misses=$misses"
	done
done
