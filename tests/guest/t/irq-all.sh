# SPDX-License-Identifier: GPL-2.0
# Interrupt-driven direct IO under bio_alloc_cache=all: libaio's bios,
# which do not ask for the cache, now come from the direct-IO bio_set's
# cache, and are put back from the completion's context. Counted exactly:
#  - null_blk with hrtimer completions (irqmode=2): every one of the N bios
#    is put in hard-IRQ context, onto the IRQ list, which allocations
#    splice; N allocations asked the cache;
#  - null_blk with softirq completions (irqmode=1, one hardware queue):
#    every bio is put from softirq context (one hardware queue: no poll
#    queue), which the cache does not take:
#    N frees, no put onto a list;
#  - NVMe: every bio put once, from its interrupt handler on whichever CPU
#    it runs (on the list of that CPU).
# Then the direct-IO bio_set balances, its lists within the bound, and the
# bio slabs hold what they held before.
# Under the default rule the same IO does not touch the cache (cache-irq
# covers io_uring's bios, which ask for it).
# boot: all
# timeout: 180
. /tests/lib.sh

expect_eq "rule" "$(cache_rule)" all
# Every device first: each queue's bio_set for splits keeps a reserve of bios.
nullb_create hr queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 completion_nsec=20000 size=64
nullb_create sq queue_mode=2 submit_queues=1 poll_queues=0 irqmode=1 size=64
nvme_find biocache0 1
nv=$NVME_BLK
before=$(bios_outside_cache)

# fio_raw DEV: fio's libaio O_DIRECT 4 KiB random reads of /dev/DEV; sets
# FIO_IOS, and D_<field> to what the direct-IO bio_set's counters did
# meanwhile (cache_delta).
fio_raw() {
	local dev=$1 out s0
	s0=$(cache_snap $DIO_BIOSET)
	out=$(fio --name=irq --filename="/dev/$dev" --ioengine=libaio --direct=1 \
		--rw=randread --bs=4k --iodepth=32 --size=8M --disk_util=0 2>&1) ||
		{ echo "$out"; fail "fio on $dev failed"; }
	fio_report "fio on $dev" "$out"
	FIO_IOS=$FIO_READS
	log "fio libaio on $dev: $FIO_IOS reads"
	cache_delta $DIO_BIOSET "$s0"
}

fio_raw hr
expect_eq "hr: allocations from the cache" "$D_allocs" "$FIO_IOS"
expect_eq "hr: hard-IRQ puts" "$D_put_irq" "$FIO_IOS"
expect_eq "hr: other puts" $((D_put_task + D_free_full + D_free_other)) 0
[ "$D_splices" -gt 0 ] || fail "hr: the IRQ list was never spliced"
[ "$D_alloc_hit" -gt $((FIO_IOS / 2)) ] || fail "hr: only $D_alloc_hit hits for $FIO_IOS reads"
cache_check_bound $DIO_BIOSET

fio_raw sq
expect_eq "sq: allocations from the cache" "$D_allocs" "$FIO_IOS"
expect_eq "sq: puts from softirq, freed" "$D_free_other" "$FIO_IOS"
expect_eq "sq: puts onto a list" $((D_put_task + D_put_irq + D_free_full)) 0

fio_raw "$nv"
expect_eq "$nv: allocations from the cache" "$D_allocs" "$FIO_IOS"
expect_eq "$nv: puts" "$D_puts" "$FIO_IOS"
[ "$D_put_irq" -gt 0 ] || fail "$nv: no bio was put in hard-IRQ context"
cache_check_bound $DIO_BIOSET
cache_check_balance $DIO_BIOSET
expect_bios_outside_cache "bio and biovec objects outside the caches" "$before"
