# SPDX-License-Identifier: GPL-2.0
# Completions in hard-IRQ context (null_blk irqmode=2: hrtimer) put bios on
# the IRQ list, and allocations splice it into the task list.
. /tests/lib.sh

nullb_create irqb queue_mode=2 submit_queues=1 poll_queues=0 irqmode=2 \
	completion_nsec=20000 size=64
pi0=$(cache_stat $DIO_BIOSET all put_irq)
s0=$(cache_stat $DIO_BIOSET all splices)
h0=$(cache_stat $DIO_BIOSET all alloc_hit)
out=$(uring-io -d /dev/irqb -o read -q 32 -c 8 -n 4000) || fail "reads failed: $out"
cache_check_bound $DIO_BIOSET
pi=$(($(cache_stat $DIO_BIOSET all put_irq) - pi0))
s=$(($(cache_stat $DIO_BIOSET all splices) - s0))
h=$(($(cache_stat $DIO_BIOSET all alloc_hit) - h0))
log "4000 reads with hrtimer completions: $pi IRQ puts, $s splices, $h hits"
[ "$pi" -ge 2000 ] || fail "only $pi of 4000 bios went to the IRQ list"
[ "$s" -gt 0 ] || fail "the IRQ list was never spliced"
[ "$h" -ge 2000 ] || fail "only $h allocations were served from the cache"
