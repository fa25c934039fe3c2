// SPDX-License-Identifier: GPL-2.0
/*
 * A microbenchmark of the per-CPU bio cache: the cost of one
 * bio_alloc_bioset() + bio_put() pair, on either implementation.
 *
 * Writing "MODE LOOPS" to /sys/kernel/debug/block/bio_alloc_cache_bench runs
 * LOOPS pairs on a private bio_set in the writing task, pinned to its CPU;
 * reading the file returns the last result as "mode=MODE loops=N ns=T", N
 * being the pairs run.
 * Under QEMU's -icount shift=0,sleep=off the guest clock advances by one
 * nanosecond per instruction, so T is an instruction count.
 *
 * Modes:
 *   hit     allocations served from the task list (the polled IO path);
 *   splice  bios put in hard-IRQ context (a hard irq_work), allocations
 *           served by splicing the IRQ list, in rounds of
 *           ALLOC_CACHE_THRESHOLD: the time of the puts and of the
 *           allocations is counted, not the irq_work around them;
 *   off     a bio_set without the cache: the mempool and slab path.
 */
#include <linux/bio.h>
#include <linux/debugfs.h>
#include <linux/irq_work.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>

#include "blk.h"

#define BENCH_SPLICE_ROUND	16	/* ALLOC_CACHE_THRESHOLD of block/bio.c */

struct bio_cache_bench {
	struct bio_set bs;
	struct bio *bios[BENCH_SPLICE_ROUND];
	struct irq_work irq_work;
	u64 put_ns;
};

static DEFINE_MUTEX(bio_cache_bench_lock);
static char bio_cache_bench_result[96] = "no run yet\n";

static struct bio *bio_cache_bench_alloc(struct bio_cache_bench *b)
{
	return bio_alloc_bioset(NULL, 1, REQ_OP_READ | REQ_ALLOC_CACHE,
				GFP_KERNEL, &b->bs);
}

static int bio_cache_bench_pairs(struct bio_cache_bench *b, unsigned long loops,
				 u64 *ns)
{
	struct bio *bio;
	unsigned long i;
	u64 start;

	/* One pair first, so that the loop starts from a warm cache. */
	bio = bio_cache_bench_alloc(b);
	if (!bio)
		return -ENOMEM;
	bio_put(bio);

	start = ktime_get_ns();
	for (i = 0; i < loops; i++) {
		bio = bio_cache_bench_alloc(b);
		if (unlikely(!bio))
			return -ENOMEM;
		bio_put(bio);
	}
	*ns = ktime_get_ns() - start;
	return 0;
}

static void bio_cache_bench_irq_put(struct irq_work *work)
{
	struct bio_cache_bench *b = container_of(work, struct bio_cache_bench, irq_work);
	unsigned int i;
	u64 start;

	start = ktime_get_ns();
	for (i = 0; i < BENCH_SPLICE_ROUND; i++)
		bio_put(b->bios[i]);
	b->put_ns += ktime_get_ns() - start;
}

static int bio_cache_bench_alloc_round(struct bio_cache_bench *b)
{
	unsigned int i;

	for (i = 0; i < BENCH_SPLICE_ROUND; i++) {
		b->bios[i] = bio_cache_bench_alloc(b);
		if (!b->bios[i])
			return -ENOMEM;
	}
	return 0;
}

static void bio_cache_bench_put_round(struct bio_cache_bench *b)
{
	irq_work_queue(&b->irq_work);
	irq_work_sync(&b->irq_work);
}

static int bio_cache_bench_splice(struct bio_cache_bench *b, unsigned long *loops,
				  u64 *ns)
{
	unsigned long rounds = max(*loops / BENCH_SPLICE_ROUND, 1UL), r;
	u64 alloc_ns = 0, start;
	int ret;

	b->irq_work = IRQ_WORK_INIT_HARD(bio_cache_bench_irq_put);
	/* Fill the IRQ list once. */
	ret = bio_cache_bench_alloc_round(b);
	if (ret)
		return ret;
	bio_cache_bench_put_round(b);
	b->put_ns = 0;

	for (r = 0; r < rounds; r++) {
		start = ktime_get_ns();
		ret = bio_cache_bench_alloc_round(b);
		alloc_ns += ktime_get_ns() - start;
		if (ret)
			return ret;
		bio_cache_bench_put_round(b);
	}
	*ns = alloc_ns + b->put_ns;
	*loops = rounds * BENCH_SPLICE_ROUND;
	return 0;
}

/* Runs *loops pairs (rounded to what the mode can do) and times them. */
static int bio_cache_bench_run(const char *mode, unsigned long *loops, u64 *ns)
{
	bool cache = strcmp(mode, "off");
	struct bio_cache_bench *b;
	int ret;

	if (strcmp(mode, "hit") && strcmp(mode, "splice") && cache)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	ret = bioset_init(&b->bs, BIO_POOL_SIZE, 0,
			  BIOSET_NEED_BVECS | (cache ? BIOSET_PERCPU_CACHE : 0));
	if (ret)
		goto out_free;
	if (cache && !b->bs.cache) {
		ret = -EOPNOTSUPP;	/* bio_alloc_cache=off */
		goto out_exit;
	}

	/* Stay on this CPU: its cache is the one being measured. */
	migrate_disable();
	if (!strcmp(mode, "splice"))
		ret = bio_cache_bench_splice(b, loops, ns);
	else
		ret = bio_cache_bench_pairs(b, *loops, ns);
	migrate_enable();
out_exit:
	bioset_exit(&b->bs);
out_free:
	kfree(b);
	return ret;
}

static ssize_t bio_cache_bench_write(struct file *file, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	char buf[32], mode[8];
	unsigned long loops;
	u64 ns;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%7s %lu", mode, &loops) != 2 || !loops)
		return -EINVAL;

	mutex_lock(&bio_cache_bench_lock);
	ret = bio_cache_bench_run(mode, &loops, &ns);
	if (!ret)
		snprintf(bio_cache_bench_result, sizeof(bio_cache_bench_result),
			 "mode=%s loops=%lu ns=%llu\n", mode, loops, ns);
	mutex_unlock(&bio_cache_bench_lock);
	return ret ? ret : count;
}

static ssize_t bio_cache_bench_read(struct file *file, char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&bio_cache_bench_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, bio_cache_bench_result,
				      strlen(bio_cache_bench_result));
	mutex_unlock(&bio_cache_bench_lock);
	return ret;
}

static const struct file_operations bio_cache_bench_fops = {
	.owner = THIS_MODULE,
	.read = bio_cache_bench_read,
	.write = bio_cache_bench_write,
	.llseek = default_llseek,
};

static int __init bio_cache_bench_init(void)
{
	debugfs_create_file("bio_alloc_cache_bench", 0600, blk_debugfs_root,
			    NULL, &bio_cache_bench_fops);
	return 0;
}
late_initcall(bio_cache_bench_init);
