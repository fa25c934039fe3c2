// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the per-CPU bio cache through the public bio_set API:
 * bioset_init(BIOSET_PERCPU_CACHE), bio_alloc_bioset(REQ_ALLOC_CACHE),
 * bio_put(), bioset_exit(), and the statistics of
 * CONFIG_BIO_ALLOC_CACHE_STATS. They run unchanged on both implementations
 * (CONFIG_BIO_ALLOC_CACHE_C and CONFIG_BIO_ALLOC_CACHE_RUST), which must
 * behave the same.
 *
 * Each test has a private bio_set. Cache operations run on a chosen CPU in
 * task context through smp_call_on_cpu(); puts in hard-IRQ context through
 * a hard irq_work or a pinned hard hrtimer, in softirq context through a
 * pinned timer, in NMI context through a self-NMI (x86).
 *
 * A case skips only where its premise cannot hold on the kernel it runs on
 * (no NMI on this architecture, a single CPU, the cache turned off at boot);
 * a skip is never a pass (scripts/ktap-summary.py fails any skip whose
 * reason the boot did not allow).
 */
#include <kunit/test.h>
#include <linux/bio.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/delay.h>
#include <linux/device/driver.h>
#include <linux/hash.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/mempool.h>
#include <linux/nmi.h>
#include <linux/smp.h>
#include <linux/timer.h>
#include <asm/irq_regs.h>

/*
 * The NMI case sends an NMI to its own CPU through the local APIC, and
 * handles it with register_nmi_handler(), which <linux/nmi.h> declares (by
 * <asm/nmi.h>) on x86 with ACPI.
 */
#if defined(CONFIG_X86_LOCAL_APIC) && defined(CONFIG_HAVE_ACPI_APEI_NMI)
#define BIO_CACHE_TEST_HAVE_NMI
#include <asm/apic.h>
#endif

#include "blk.h"		/* BIO_INLINE_VECS, bio_alloc_cache_all, _enabled */
#ifdef CONFIG_BIO_ALLOC_CACHE_RUST
#include <linux/bio_cache_rust.h>	/* bio_cache_rust_release() */
#endif

/* The bounds of block/bio.c, which both implementations share. */
#define CACHE_MAX		256	/* ALLOC_CACHE_MAX */
#define CACHE_THRESHOLD		16	/* ALLOC_CACHE_THRESHOLD */
#define MAX_BIOS		(CACHE_MAX + 64)

struct bio_cache_test {
	struct kunit *test;
	struct bio_set bs;
	struct bio *bios[MAX_BIOS];
	unsigned int nr_bios;
	unsigned short nr_vecs;
	blk_opf_t opf;
	gfp_t gfp;
	bool slow;		/* fail the fast path's slab allocation */
	bool in_hardirq, in_softirq, in_nmi;
	void *nmi_freed[8];
	unsigned int nr_nmi_freed;
	struct irq_work irq_work;
	struct timer_list timer;
	struct completion timer_done;
};

/*
 * With t->slow, the first slab allocation bio_alloc_bioset() makes fails
 * (current->fail_nth, CONFIG_FAILSLAB): on a cache miss that is the fast
 * path's, of the bio, so the bio comes from the slow path, the mempool.
 * The count is cleared after the call, so that a cache hit, which makes no
 * slab allocation, does not fail a later one elsewhere.
 */
static struct bio *bio_cache_test_alloc(struct bio_cache_test *t)
{
	struct bio *bio;

	if (t->slow)
		WRITE_ONCE(current->fail_nth, 1);
	bio = bio_alloc_bioset(NULL, t->nr_vecs, REQ_OP_READ | t->opf, t->gfp,
			       &t->bs);
	WRITE_ONCE(current->fail_nth, 0);
	return bio;
}

static struct bio_alloc_cache_stats
bio_cache_test_stats(struct bio_cache_test *t, unsigned int cpu)
{
	struct bio_alloc_cache_stats st = { };

	KUNIT_EXPECT_TRUE(t->test, bio_alloc_cache_stats(&t->bs, cpu, &st));
	return st;
}

/* smp_call_on_cpu() callbacks: task context on the chosen CPU. */

/* Allocates t->nr_bios bios into t->bios. */
static int bio_cache_test_alloc_all(void *arg)
{
	struct bio_cache_test *t = arg;
	unsigned int i;

	for (i = 0; i < t->nr_bios; i++) {
		t->bios[i] = bio_cache_test_alloc(t);
		if (!t->bios[i])
			return -ENOMEM;
	}
	return 0;
}

/* Puts t->bios in order, from task context. */
static int bio_cache_test_put_all(void *arg)
{
	struct bio_cache_test *t = arg;
	unsigned int i;

	for (i = 0; i < t->nr_bios; i++)
		bio_put(t->bios[i]);
	return 0;
}

static void bio_cache_test_irq_put(struct irq_work *work)
{
	struct bio_cache_test *t = container_of(work, struct bio_cache_test, irq_work);

	t->in_hardirq = in_hardirq();
	bio_cache_test_put_all(t);
}

/* Puts t->bios from hard-IRQ context on this CPU. */
static int bio_cache_test_put_all_hardirq(void *arg)
{
	struct bio_cache_test *t = arg;

	t->irq_work = IRQ_WORK_INIT_HARD(bio_cache_test_irq_put);
	irq_work_queue(&t->irq_work);
	irq_work_sync(&t->irq_work);
	return 0;
}

static void bio_cache_test_timer_put(struct timer_list *timer)
{
	struct bio_cache_test *t = container_of(timer, struct bio_cache_test, timer);

	t->in_softirq = in_serving_softirq();
	bio_cache_test_put_all(t);
	complete(&t->timer_done);
}

/* Puts t->bios from softirq context on this CPU. */
static int bio_cache_test_put_all_softirq(void *arg)
{
	struct bio_cache_test *t = arg;

	init_completion(&t->timer_done);
	timer_setup(&t->timer, bio_cache_test_timer_put, TIMER_PINNED);
	t->timer.expires = jiffies;
	add_timer_on(&t->timer, raw_smp_processor_id());
	wait_for_completion(&t->timer_done);
	timer_delete_sync(&t->timer);
	return 0;
}

#ifdef BIO_CACHE_TEST_HAVE_NMI
#define BIO_CACHE_TEST_NMI	"bio_cache_test"

/* The test whose bios the next NMI on its CPU puts. */
static struct bio_cache_test *bio_cache_test_nmi_target;
static unsigned int bio_cache_test_nmi_cpu;

static int bio_cache_test_nmi(unsigned int type, struct pt_regs *regs)
{
	struct bio_cache_test *t = READ_ONCE(bio_cache_test_nmi_target);

	if (!t || raw_smp_processor_id() != READ_ONCE(bio_cache_test_nmi_cpu))
		return NMI_DONE;
	t->in_nmi = in_nmi();
	bio_cache_test_put_all(t);
	WRITE_ONCE(bio_cache_test_nmi_target, NULL);
	return NMI_HANDLED;
}

/*
 * The bio_set's mempool free function while an NMI puts bios. A bio freed
 * from an NMI ends in the slab allocator, which is not NMI-safe (lockdep and
 * KASAN say so): this one keeps the bios, to be freed once the NMI is over.
 * The mempool is full, so mempool_free() calls it without taking its lock.
 */
static void bio_cache_test_nmi_free(void *element, void *pool_data)
{
	struct bio_cache_test *t = READ_ONCE(bio_cache_test_nmi_target);

	if (t && in_nmi() && t->nr_nmi_freed < ARRAY_SIZE(t->nmi_freed))
		t->nmi_freed[t->nr_nmi_freed++] = element;
	else
		mempool_free_slab(element, pool_data);
}

/* Puts t->bios from an NMI on this CPU, which sends it to itself. */
static int bio_cache_test_put_all_nmi(void *arg)
{
	unsigned long timeout = jiffies + 10 * HZ;

	WRITE_ONCE(bio_cache_test_nmi_cpu, raw_smp_processor_id());
	WRITE_ONCE(bio_cache_test_nmi_target, arg);
	__apic_send_IPI_self(NMI_VECTOR);
	while (READ_ONCE(bio_cache_test_nmi_target)) {
		if (time_after(jiffies, timeout))
			return -ETIMEDOUT;
		cpu_relax();
	}
	return 0;
}
#endif

/* Allocates and puts back t->nr_bios bios: leaves them cached on this CPU. */
static int bio_cache_test_fill(void *arg)
{
	int ret = bio_cache_test_alloc_all(arg);

	if (!ret)
		bio_cache_test_put_all(arg);
	return ret;
}

static void bio_cache_test_on(struct bio_cache_test *t, unsigned int cpu,
			      int (*fn)(void *), unsigned int nr_bios)
{
	t->nr_bios = nr_bios;
	KUNIT_ASSERT_EQ(t->test, smp_call_on_cpu(cpu, fn, t, false), 0);
}

/* LIFO: the bio put last comes back first, set up again by bio_init(). */
static void bio_cache_test_lifo(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st0, st;
	struct bio *a, *b;

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 2);
	a = t->bios[0];
	b = t->bios[1];
	/* Leave traces that bio_init() must clear. */
	a->bi_iter.bi_sector = 1234;
	a->bi_iter.bi_size = 4096;
	a->bi_status = BLK_STS_IOERR;
	a->bi_ioprio = 3;
	a->bi_private = t;
	/* A device pointer, never dereferenced: the put must clear it. */
	a->bi_bdev = (struct block_device *)t;
	st0 = bio_cache_test_stats(t, 0);

	t->bios[0] = b;
	t->bios[1] = a;
	bio_cache_test_on(t, 0, bio_cache_test_put_all, 2);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.put_task - st0.put_task, 2);
	KUNIT_EXPECT_EQ(test, st.nr, st0.nr + 2);
	/*
	 * Parked, the bio points at no device, so that polling a bio that was
	 * already completed and recycled cannot reach one (11eb695feb63).
	 */
	KUNIT_EXPECT_NULL(test, a->bi_bdev);

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 2);
	KUNIT_EXPECT_PTR_EQ(test, t->bios[0], a);
	KUNIT_EXPECT_PTR_EQ(test, t->bios[1], b);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_hit - st0.alloc_hit, 2);
	KUNIT_EXPECT_EQ(test, st.nr, st0.nr);

	KUNIT_EXPECT_NULL(test, a->bi_next);
	KUNIT_EXPECT_NULL(test, a->bi_bdev);
	KUNIT_EXPECT_EQ(test, a->bi_opf, REQ_OP_READ | REQ_ALLOC_CACHE);
	KUNIT_EXPECT_EQ(test, a->bi_iter.bi_sector, 0);
	KUNIT_EXPECT_EQ(test, a->bi_iter.bi_size, 0);
	KUNIT_EXPECT_EQ(test, a->bi_status, BLK_STS_OK);
	KUNIT_EXPECT_EQ(test, a->bi_ioprio, 0);
	KUNIT_EXPECT_NULL(test, a->bi_private);
	KUNIT_EXPECT_NULL(test, a->bi_end_io);
	KUNIT_EXPECT_EQ(test, a->bi_vcnt, 0);
	KUNIT_EXPECT_EQ(test, a->bi_max_vecs, t->nr_vecs);
	KUNIT_EXPECT_PTR_EQ(test, a->bi_io_vec, &a->bi_inline_vecs[0]);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->__bi_cnt), 1);
	KUNIT_EXPECT_PTR_EQ(test, a->bi_pool, &t->bs);

	bio_cache_test_on(t, 0, bio_cache_test_put_all, 2);
}

/* Puts beyond the bound free the bio; the lists never exceed it. */
static void bio_cache_test_bound(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, MAX_BIOS);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, MAX_BIOS);
	st = bio_cache_test_stats(t, 0);
	/* A put is refused once the lists hold more than CACHE_MAX bios. */
	KUNIT_EXPECT_EQ(test, st.nr + st.nr_irq, CACHE_MAX + 1);
	KUNIT_EXPECT_EQ(test, st.put_task, CACHE_MAX + 1);
	KUNIT_EXPECT_EQ(test, st.free_full, MAX_BIOS - (CACHE_MAX + 1));
}

/*
 * The bound is checked before a bio is pushed, whatever the list: with
 * CACHE_MAX bios on the task list, one more put in hard-IRQ context goes on
 * the IRQ list (CACHE_MAX + 1 in all), and the next ones from either context
 * are freed. A hard-IRQ put that interrupts a task put between its check and
 * its push can add one more, so the lists hold at most CACHE_MAX + 2.
 */
static void bio_cache_test_bound_irq(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;
	unsigned int i;

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, CACHE_MAX + 4);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, CACHE_MAX);
	st = bio_cache_test_stats(t, 0);
	KUNIT_ASSERT_EQ(test, st.nr, CACHE_MAX);
	KUNIT_ASSERT_EQ(test, st.nr_irq, 0);

	for (i = 0; i < 4; i++)
		t->bios[i] = t->bios[CACHE_MAX + i];
	bio_cache_test_on(t, 0, bio_cache_test_put_all_hardirq, 3);
	KUNIT_EXPECT_TRUE(test, t->in_hardirq);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.nr_irq, 1);
	KUNIT_EXPECT_EQ(test, st.nr + st.nr_irq, CACHE_MAX + 1);
	KUNIT_EXPECT_EQ(test, st.put_irq, 1);
	KUNIT_EXPECT_EQ(test, st.free_full, 2);

	t->bios[0] = t->bios[3];
	bio_cache_test_on(t, 0, bio_cache_test_put_all, 1);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.nr + st.nr_irq, CACHE_MAX + 1);
	KUNIT_EXPECT_EQ(test, st.put_task, CACHE_MAX);
	KUNIT_EXPECT_EQ(test, st.free_full, 3);
}

/* Hard-IRQ puts go on the IRQ list, softirq puts free the bio. */
static void bio_cache_test_contexts(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 8);
	bio_cache_test_on(t, 0, bio_cache_test_put_all_hardirq, 8);
	KUNIT_EXPECT_TRUE(test, t->in_hardirq);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.put_irq, 8);
	KUNIT_EXPECT_EQ(test, st.nr_irq, 8);
	KUNIT_EXPECT_EQ(test, st.nr, 0);

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 5);
	bio_cache_test_on(t, 0, bio_cache_test_put_all_softirq, 5);
	KUNIT_EXPECT_TRUE(test, t->in_softirq);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.free_other, 5);
	KUNIT_EXPECT_EQ(test, st.put_irq, 8);
	KUNIT_EXPECT_EQ(test, st.put_task, 0);
	KUNIT_EXPECT_EQ(test, st.nr, 0);
}

/*
 * A bio put in an NMI goes on no list: an NMI can interrupt an allocation
 * that is taking the IRQ list with interrupts disabled. The C cache frees it;
 * the Rust cache, whose generic put() may not free from an NMI what it cannot
 * know to be NMI-safe, leaks it (and warns once), and the test frees it.
 */
static void bio_cache_test_nmi_put(struct kunit *test)
{
#ifdef BIO_CACHE_TEST_HAVE_NMI
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st0, st;
	unsigned int i;
	int ret;

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 2);
	bio_cache_test_on(t, 0, bio_cache_test_put_all_hardirq, 2);
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 3);
	st0 = bio_cache_test_stats(t, 0);
	KUNIT_ASSERT_EQ(test, st0.nr_irq, 2);

	ret = register_nmi_handler(NMI_LOCAL, bio_cache_test_nmi, 0,
				   BIO_CACHE_TEST_NMI);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, t->bs.bio_pool.curr_nr, t->bs.bio_pool.min_nr);
	t->bs.bio_pool.free = bio_cache_test_nmi_free;
	t->nr_bios = 3;
	ret = smp_call_on_cpu(0, bio_cache_test_put_all_nmi, t, false);
	WRITE_ONCE(bio_cache_test_nmi_target, NULL);
	unregister_nmi_handler(NMI_LOCAL, BIO_CACHE_TEST_NMI);
	t->bs.bio_pool.free = mempool_free_slab;
	for (i = 0; i < t->nr_nmi_freed; i++)
		mempool_free_slab(t->nmi_freed[i], t->bs.bio_pool.pool_data);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, t->in_nmi);
#ifdef CONFIG_BIO_ALLOC_CACHE_RUST
	/* Leaked, so the test's to free: unless put() freed them after all. */
	KUNIT_EXPECT_EQ(test, t->nr_nmi_freed, 0);
	for (i = 0; !t->nr_nmi_freed && i < t->nr_bios; i++)
		bio_cache_rust_release(t->bios[i]);
#else
	KUNIT_EXPECT_EQ(test, t->nr_nmi_freed, 3);
#endif

	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.free_other - st0.free_other, 3);
	KUNIT_EXPECT_EQ(test, st.put_irq, st0.put_irq);
	KUNIT_EXPECT_EQ(test, st.nr_irq, st0.nr_irq);
	KUNIT_EXPECT_EQ(test, st.put_task, st0.put_task);
	KUNIT_EXPECT_EQ(test, st.nr, st0.nr);
#else
	kunit_skip(test, "needs x86's local APIC and NMI handlers");
#endif
}

/*
 * An allocation that finds the task list empty takes the IRQ list once it
 * holds CACHE_THRESHOLD bios. Below that it must fall back to the mempool
 * (the C cache once dereferenced an empty list there, in 2022).
 */
static void bio_cache_test_splice(struct kunit *test, unsigned int nr_irq)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;
	struct bio *last;
	bool spliced = nr_irq >= CACHE_THRESHOLD;

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, nr_irq);
	last = t->bios[nr_irq - 1];
	bio_cache_test_on(t, 0, bio_cache_test_put_all_hardirq, nr_irq);
	st = bio_cache_test_stats(t, 0);
	KUNIT_ASSERT_EQ(test, st.nr, 0);
	KUNIT_ASSERT_EQ(test, st.nr_irq, nr_irq);

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 1);
	KUNIT_ASSERT_NOT_NULL(test, t->bios[0]);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.splices, spliced ? 1 : 0);
	KUNIT_EXPECT_EQ(test, st.alloc_hit, spliced ? 1 : 0);
	KUNIT_EXPECT_EQ(test, st.nr_irq, spliced ? 0 : nr_irq);
	KUNIT_EXPECT_EQ(test, st.nr, spliced ? nr_irq - 1 : 0);
	if (spliced)
		KUNIT_EXPECT_PTR_EQ(test, t->bios[0], last);
	else
		KUNIT_EXPECT_PTR_NE(test, t->bios[0], last);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, 1);
}

static void bio_cache_test_splice_below(struct kunit *test)
{
	bio_cache_test_splice(test, CACHE_THRESHOLD - 1);
}

static void bio_cache_test_splice_at(struct kunit *test)
{
	bio_cache_test_splice(test, CACHE_THRESHOLD);
}

static void bio_cache_test_splice_above(struct kunit *test)
{
	bio_cache_test_splice(test, CACHE_THRESHOLD + 4);
}

/*
 * Allocate @nr_bios bios on CPU 0, with the CPU's cache empty and the fast
 * path's slab allocation failed, and put them: a bio taken from the
 * mempool, when memory is tight, must not be kept from it by the cache, so
 * none is marked for the cache and each goes back to the mempool
 * (759aa12f1915, "bio: don't rob starving biosets of bios"; since
 * b520c4eef83d, "block: split bio_alloc_bioset more clearly into a fast and
 * slowpath", the rule of the slow path).
 */
static void bio_cache_test_starving(struct kunit *test, unsigned int nr_bios)
{
	struct bio_cache_test *t = test->priv;
	bool asked = (t->opf & REQ_ALLOC_CACHE) ||
		     static_branch_unlikely(&bio_alloc_cache_all);
	unsigned int i;
	u64 refused;

	refused = bio_alloc_cache_reserve_refused();
	t->slow = true;
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, nr_bios);
	t->slow = false;
	for (i = 0; i < nr_bios; i++)
		KUNIT_EXPECT_FALSE(test, t->bios[i]->bi_opf & REQ_ALLOC_CACHE);
	/* each counted as refused to the cache if the cache was asked for */
	KUNIT_EXPECT_EQ(test, bio_alloc_cache_reserve_refused() - refused,
			asked ? nr_bios : 0);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, nr_bios);
}

/* Bios with more vecs than fit inline, and a mempool in use, bypass it. */
static void bio_cache_test_bypass(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;

	t->nr_vecs = BIO_INLINE_VECS + 1;
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 4);
	KUNIT_EXPECT_FALSE(test, t->bios[0]->bi_opf & REQ_ALLOC_CACHE);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, 4);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_hit + st.alloc_miss, 0);
	KUNIT_EXPECT_EQ(test, st.put_task + st.free_full + st.free_other, 0);

	t->nr_vecs = 1;
	bio_cache_test_starving(test, 4);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_miss, 4);
	KUNIT_EXPECT_EQ(test, st.put_task, 0);
	KUNIT_EXPECT_EQ(test, st.nr, 0);
}

/*
 * A miss is served from the bio slab, with the mask of a caller that may
 * not sleep too, and the bio keeps REQ_ALLOC_CACHE, so that its put fills
 * the cache (447cfed6d700, "block: try slab allocation in
 * bio_alloc_bioset() before mempool"). Without that, a miss took the slow
 * path, which gives up on a caller that may not sleep, and keeps from the
 * cache what it allocates for one that may.
 */
static void bio_cache_test_miss(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;
	unsigned int i;

	t->gfp = GFP_NOWAIT;
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_TRUE(test, t->bios[i]->bi_opf & REQ_ALLOC_CACHE);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, 4);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_miss, 4);
	KUNIT_EXPECT_EQ(test, st.put_task, 4);
	KUNIT_EXPECT_EQ(test, st.nr, 4);
}

/*
 * A bio asked for without REQ_ALLOC_CACHE is cached under
 * bio_alloc_cache=all (upstream's rule since 6.19), not under the default
 * (6.12's). Under either, a bio_set whose mempool is below its reserve is
 * not robbed of the bio: it is not marked, and goes back to the mempool.
 */
static void bio_cache_test_rule(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	bool all = static_branch_unlikely(&bio_alloc_cache_all);
	struct bio_alloc_cache_stats st;

	kunit_info(test, "rule: %s\n", all ? "all" : "flagged");
	t->opf = 0;
	bio_cache_test_starving(test, 4);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_miss, all ? 4 : 0);
	KUNIT_EXPECT_EQ(test, st.put_task, 0);
	KUNIT_EXPECT_EQ(test, st.nr, 0);

	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, 4);
	KUNIT_EXPECT_EQ(test, !!(t->bios[0]->bi_opf & REQ_ALLOC_CACHE), all);
	KUNIT_EXPECT_EQ(test, !!(t->bios[3]->bi_opf & REQ_ALLOC_CACHE), all);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, 4);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_miss, all ? 8 : 0);
	KUNIT_EXPECT_EQ(test, st.put_task, all ? 4 : 0);
	KUNIT_EXPECT_EQ(test, st.nr, all ? 4 : 0);
}

/* Teardown frees the bios cached on every CPU; a second one is harmless. */
static void bio_cache_test_teardown(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st;
	unsigned long cached = 0;
	u64 drained;
	unsigned int cpu, n = 0;

	for_each_online_cpu(cpu)
		bio_cache_test_on(t, cpu, bio_cache_test_fill, 3 + 2 * n++);
	for_each_possible_cpu(cpu) {
		st = bio_cache_test_stats(t, cpu);
		cached += st.nr + st.nr_irq;
	}
	KUNIT_EXPECT_GT(test, cached, 0);

	drained = bio_alloc_cache_teardown_drained();
	bioset_exit(&t->bs);
	KUNIT_EXPECT_EQ(test, bio_alloc_cache_teardown_drained() - drained, cached);
	KUNIT_EXPECT_NULL(test, t->bs.cache);
	bioset_exit(&t->bs);
	KUNIT_EXPECT_EQ(test, bio_alloc_cache_teardown_drained() - drained, cached);
}

/* A bio at the end of a larger structure, as device-mapper's clones are. */
struct bio_cache_test_padded {
	u64 cookie[3];
	struct bio bio;
};

#define BIO_CACHE_TEST_COOKIE	0x62696f636163686eULL

static struct bio_cache_test_padded *bio_cache_test_padded(struct bio *bio)
{
	return container_of(bio, struct bio_cache_test_padded, bio);
}

/*
 * A bio_set with a front_pad, as dm's: the cache hands out and takes back
 * the bio, leaves the structure around it alone, and frees the whole of it,
 * from the task and the hard-IRQ lists of every CPU, at teardown (which a
 * wrong offset would turn into a slab or KASAN report on the debug kernel).
 */
static void bio_cache_test_front_pad(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_cache_test_padded *p[4];
	struct bio_alloc_cache_stats st0, st;
	unsigned long cached = 0;
	unsigned int cpu, i, n = 0;
	u64 drained;

	bioset_exit(&t->bs);
	KUNIT_ASSERT_EQ(test, bioset_init(&t->bs, BIO_POOL_SIZE,
					  offsetof(struct bio_cache_test_padded, bio),
					  BIOSET_NEED_BVECS | BIOSET_PERCPU_CACHE), 0);
	KUNIT_ASSERT_NOT_NULL(test, t->bs.cache);

	bio_cache_test_on(t, 0, bio_cache_test_fill, ARRAY_SIZE(p));
	st0 = bio_cache_test_stats(t, 0);
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, ARRAY_SIZE(p));
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = bio_cache_test_padded(t->bios[i]);
		p[i]->cookie[0] = BIO_CACHE_TEST_COOKIE + i;
		p[i]->cookie[2] = ~(BIO_CACHE_TEST_COOKIE + i);
	}
	bio_cache_test_on(t, 0, bio_cache_test_put_all, ARRAY_SIZE(p));
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, ARRAY_SIZE(p));
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.alloc_hit - st0.alloc_hit, 2 * ARRAY_SIZE(p));
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		struct bio_cache_test_padded *q = bio_cache_test_padded(t->bios[i]);
		unsigned int j = ARRAY_SIZE(p) - 1 - i;

		/* LIFO: put in order, the last one put comes back first. */
		KUNIT_EXPECT_PTR_EQ(test, q, p[j]);
		KUNIT_EXPECT_EQ(test, q->cookie[0], BIO_CACHE_TEST_COOKIE + j);
		KUNIT_EXPECT_EQ(test, q->cookie[2], ~(BIO_CACHE_TEST_COOKIE + j));
		KUNIT_EXPECT_PTR_EQ(test, q->bio.bi_pool, &t->bs);
	}
	bio_cache_test_on(t, 0, bio_cache_test_put_all, ARRAY_SIZE(p));

	/* Task and hard-IRQ lists filled on every CPU, then torn down. */
	for_each_online_cpu(cpu) {
		bio_cache_test_on(t, cpu, bio_cache_test_fill, 2 + n++);
		bio_cache_test_on(t, cpu, bio_cache_test_alloc_all, 2);
		bio_cache_test_on(t, cpu, bio_cache_test_put_all_hardirq, 2);
	}
	for_each_possible_cpu(cpu) {
		st = bio_cache_test_stats(t, cpu);
		cached += st.nr + st.nr_irq;
		if (cpu_online(cpu))
			KUNIT_EXPECT_GT(test, st.nr_irq, 0);
	}
	drained = bio_alloc_cache_teardown_drained();
	bioset_exit(&t->bs);
	KUNIT_EXPECT_EQ(test, bio_alloc_cache_teardown_drained() - drained, cached);
}

/*
 * remove_cpu() or add_cpu(), once the devices probed at boot are done:
 * pci_call_probe() disables CPU hotplug while a PCI driver probes, and an
 * asynchronous probe (NVMe) may still run when KUnit does, for long on a
 * slow (debug, emulated) kernel. Then retried while CPU hotplug is
 * disabled for a moment (-EBUSY).
 */
static int bio_cache_test_hotplug(int (*fn)(unsigned int cpu), unsigned int cpu)
{
	int tries, ret;

	wait_for_device_probe();
	for (tries = 0; tries < 100; tries++) {
		ret = fn(cpu);
		if (ret != -EBUSY)
			break;
		msleep(20);
	}
	return ret;
}

/* The CPU-dead callback drains the dead CPU's lists, and only them. */
static void bio_cache_test_cpu_dead(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st0, st1, st;
	unsigned int cpu = 1;

	if (num_online_cpus() < 2 || !cpu_online(cpu))
		kunit_skip(test, "needs CPUs 0 and 1 online");

	bio_cache_test_on(t, 0, bio_cache_test_fill, 5);
	bio_cache_test_on(t, cpu, bio_cache_test_fill, 7);
	bio_cache_test_on(t, cpu, bio_cache_test_alloc_all, 3);
	bio_cache_test_on(t, cpu, bio_cache_test_put_all_hardirq, 3);
	st0 = bio_cache_test_stats(t, 0);
	st1 = bio_cache_test_stats(t, cpu);
	KUNIT_ASSERT_EQ(test, st1.nr + st1.nr_irq, 7);
	KUNIT_ASSERT_GT(test, st1.nr_irq, 0);

	KUNIT_ASSERT_EQ(test, bio_cache_test_hotplug(remove_cpu, cpu), 0);
	st = bio_cache_test_stats(t, cpu);
	KUNIT_EXPECT_EQ(test, st.nr, 0);
	KUNIT_EXPECT_EQ(test, st.nr_irq, 0);
	KUNIT_EXPECT_EQ(test, st.drain_hotplug - st1.drain_hotplug, 7);
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.nr, st0.nr);
	KUNIT_EXPECT_EQ(test, st.drain_hotplug, st0.drain_hotplug);
	KUNIT_ASSERT_EQ(test, bio_cache_test_hotplug(add_cpu, cpu), 0);
}

/*
 * A bio allocated on one CPU and put on another goes on the putting CPU's
 * lists and is counted there, in task and in hard-IRQ context; the CPU that
 * allocated it keeps its own lists and counters. The putting CPU hands it
 * out again, and its CPU-dead drain frees it, and only its own bios.
 */
static void bio_cache_test_cross_cpu(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats a0, a1, b0, b1, st;
	struct bio *bios[6];
	unsigned int cpu = 1;

	if (num_online_cpus() < 2 || !cpu_online(cpu))
		kunit_skip(test, "needs CPUs 0 and 1 online");

	/* Six bios cached on CPU 0, then allocated there: six hits. */
	bio_cache_test_on(t, 0, bio_cache_test_fill, ARRAY_SIZE(bios));
	a0 = bio_cache_test_stats(t, 0);
	a1 = bio_cache_test_stats(t, cpu);
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, ARRAY_SIZE(bios));
	memcpy(bios, t->bios, sizeof(bios));

	/* Four put on CPU 1 in task context, two in hard-IRQ context. */
	bio_cache_test_on(t, cpu, bio_cache_test_put_all, 4);
	t->bios[0] = bios[4];
	t->bios[1] = bios[5];
	bio_cache_test_on(t, cpu, bio_cache_test_put_all_hardirq, 2);
	KUNIT_EXPECT_TRUE(test, t->in_hardirq);

	b0 = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, b0.alloc_hit - a0.alloc_hit, ARRAY_SIZE(bios));
	KUNIT_EXPECT_EQ(test, b0.nr, a0.nr - ARRAY_SIZE(bios));
	KUNIT_EXPECT_EQ(test, b0.nr_irq, a0.nr_irq);
	KUNIT_EXPECT_EQ(test, b0.put_task, a0.put_task);
	KUNIT_EXPECT_EQ(test, b0.put_irq, a0.put_irq);
	KUNIT_EXPECT_EQ(test, b0.free_full + b0.free_other, a0.free_full + a0.free_other);

	b1 = bio_cache_test_stats(t, cpu);
	KUNIT_EXPECT_EQ(test, b1.put_task - a1.put_task, 4);
	KUNIT_EXPECT_EQ(test, b1.put_irq - a1.put_irq, 2);
	KUNIT_EXPECT_EQ(test, b1.nr, a1.nr + 4);
	KUNIT_EXPECT_EQ(test, b1.nr_irq, a1.nr_irq + 2);
	KUNIT_EXPECT_EQ(test, b1.alloc_hit, a1.alloc_hit);
	KUNIT_EXPECT_EQ(test, b1.free_full + b1.free_other, a1.free_full + a1.free_other);

	/* CPU 1 hands out the bio put there last, and takes it back. */
	bio_cache_test_on(t, cpu, bio_cache_test_alloc_all, 1);
	KUNIT_EXPECT_PTR_EQ(test, t->bios[0], bios[3]);
	st = bio_cache_test_stats(t, cpu);
	KUNIT_EXPECT_EQ(test, st.alloc_hit - b1.alloc_hit, 1);
	KUNIT_EXPECT_EQ(test, st.nr, b1.nr - 1);
	bio_cache_test_on(t, cpu, bio_cache_test_put_all, 1);

	/* CPU 1's death frees the six, CPU 0's lists stay as they are. */
	KUNIT_ASSERT_EQ(test, bio_cache_test_hotplug(remove_cpu, cpu), 0);
	st = bio_cache_test_stats(t, cpu);
	KUNIT_EXPECT_EQ(test, st.nr + st.nr_irq, 0);
	KUNIT_EXPECT_EQ(test, st.drain_hotplug - b1.drain_hotplug, ARRAY_SIZE(bios));
	st = bio_cache_test_stats(t, 0);
	KUNIT_EXPECT_EQ(test, st.nr, b0.nr);
	KUNIT_EXPECT_EQ(test, st.drain_hotplug, b0.drain_hotplug);
	KUNIT_ASSERT_EQ(test, bio_cache_test_hotplug(add_cpu, cpu), 0);
}

/*
 * bioset_exit() frees what the lists of every possible CPU hold, those of
 * offline CPUs too: it takes the bio_set's CPU-dead callback out before it
 * drains, so a CPU that goes down in between keeps its bios until the
 * teardown frees them. The test makes that interleaving happen: it takes the
 * callback out itself, takes CPU 1 down with bios on both of its lists, puts
 * the callback back without calling it, and tears the bio_set down. With
 * @hot_removed, CPU 1 is also marked not present for the teardown, as an
 * ACPI hot-remove leaves it: possible, not present, its bios still parked.
 */
static void bio_cache_test_teardown_down(struct kunit *test, bool hot_removed)
{
	struct bio_cache_test *t = test->priv;
	struct bio_alloc_cache_stats st, st1;
	unsigned long parked = 0, teardown_freed;
	unsigned int cpu = 1, c, absent = 0;
	u64 drained;
	int ret;

	if (num_online_cpus() < 2 || !cpu_online(cpu))
		kunit_skip(test, "needs CPUs 0 and 1 online");
	for_each_possible_cpu(c)
		absent += !cpu_present(c);
	kunit_info(test, "%u possible CPUs, %u of them not present since boot\n",
		   num_possible_cpus(), absent);

	bio_cache_test_on(t, 0, bio_cache_test_fill, 3);
	bio_cache_test_on(t, cpu, bio_cache_test_fill, 5);
	bio_cache_test_on(t, cpu, bio_cache_test_alloc_all, 3);
	bio_cache_test_on(t, cpu, bio_cache_test_put_all_hardirq, 3);
	st1 = bio_cache_test_stats(t, cpu);
	KUNIT_ASSERT_EQ(test, st1.nr + st1.nr_irq, 5);
	KUNIT_ASSERT_GT(test, st1.nr_irq, 0);

	KUNIT_ASSERT_EQ(test, cpuhp_state_remove_instance_nocalls(CPUHP_BIO_DEAD,
								  &t->bs.cpuhp_dead), 0);
	ret = bio_cache_test_hotplug(remove_cpu, cpu);
	KUNIT_ASSERT_EQ(test, cpuhp_state_add_instance_nocalls(CPUHP_BIO_DEAD,
							       &t->bs.cpuhp_dead), 0);
	KUNIT_ASSERT_EQ(test, ret, 0);
	st = bio_cache_test_stats(t, cpu);
	KUNIT_EXPECT_EQ(test, st.nr + st.nr_irq, 5);
	KUNIT_EXPECT_EQ(test, st.drain_hotplug, st1.drain_hotplug);
	for_each_possible_cpu(c) {
		st = bio_cache_test_stats(t, c);
		parked += st.nr + st.nr_irq;
	}

	if (hot_removed) {
		cpu_hotplug_disable();
		set_cpu_present(cpu, false);
	}
	drained = bio_alloc_cache_teardown_drained();
	bioset_exit(&t->bs);
	teardown_freed = bio_alloc_cache_teardown_drained() - drained;
	if (hot_removed) {
		set_cpu_present(cpu, true);
		cpu_hotplug_enable();
	}
	KUNIT_EXPECT_EQ(test, teardown_freed, parked);
	KUNIT_ASSERT_EQ(test, bio_cache_test_hotplug(add_cpu, cpu), 0);
}

static void bio_cache_test_teardown_offline(struct kunit *test)
{
	bio_cache_test_teardown_down(test, false);
}

static void bio_cache_test_teardown_hot_removed(struct kunit *test)
{
	bio_cache_test_teardown_down(test, true);
}

/*
 * Hard-IRQ puts racing the splice of the IRQ list, on one CPU: an allocation
 * takes the IRQ list with interrupts disabled, because a put in hard-IRQ
 * context may otherwise land between its reading the list and its emptying
 * it (that bio is lost) or between its adding the count and clearing it (the
 * count is off). Task context allocates bios and hands them to a pinned hard
 * hrtimer, which puts them onto the IRQ list every RACE_PERIOD_NS; task
 * context finds its own list empty again and again and splices. The timer's
 * period varies at random around RACE_PERIOD_NS, so that its expiries do
 * not fall into step with the task's loop and land at the same few
 * instructions of it every time. Where interrupts are taken between any two
 * instructions (QEMU with -icount, the "icount" boot of the guest tests;
 * hardware), an unprotected splice loses bios within the run. Every bio is
 * tracked: none may be handed out while the test holds it, the counters
 * must agree with the bios put, and the teardown must free exactly the bios
 * the test put.
 */
#define RACE_RING		128	/* a power of two */
#define RACE_HELD		96	/* bios the task holds at most */
#define RACE_PER_IRQ		64	/* bios one timer expiry puts at most */
#define RACE_PERIOD_NS		10000	/* on average: half to one and a half */
#define RACE_ALLOCS		1000000
#define RACE_MIN_ALLOCS		1000
#define RACE_SECONDS		2
#define RACE_SAMPLES		1024
#define RACE_TABLE_BITS		10

struct bio_cache_test_race {
	struct hrtimer timer;
	struct bio *ring[RACE_RING];
	unsigned int head;		/* advanced by the task */
	unsigned int tail;		/* advanced by the timer */
	bool stop;
	u32 rnd;			/* xorshift state of the timer's period */
	unsigned long irqs, irq_puts, allocs, handed_twice, lost_track;
	unsigned long ips[RACE_SAMPLES];
	unsigned int nr_ips;
	/* every bio seen, and whether the test holds it */
	struct {
		struct bio *bio;
		bool held;
	} seen[1 << RACE_TABLE_BITS];
	unsigned int nr_seen;
	struct bio_cache_test *t;
};

/*
 * Starts @fn as a pinned hard hrtimer on this CPU. It re-arms itself with
 * bio_cache_test_race_rearm(), which draws each period from @rnd.
 */
static void bio_cache_test_race_start(struct hrtimer *timer, u32 *rnd,
				      enum hrtimer_restart (*fn)(struct hrtimer *))
{
	*rnd = 0x9e3779b9;
	hrtimer_init(timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	timer->function = fn;
	hrtimer_start(timer, ns_to_ktime(RACE_PERIOD_NS), HRTIMER_MODE_REL_PINNED_HARD);
}

/* The next expiry, half to one and a half RACE_PERIOD_NS away (xorshift32). */
static enum hrtimer_restart bio_cache_test_race_rearm(struct hrtimer *timer,
						      u32 *rnd)
{
	*rnd ^= *rnd << 13;
	*rnd ^= *rnd >> 17;
	*rnd ^= *rnd << 5;
	hrtimer_forward_now(timer, ns_to_ktime(RACE_PERIOD_NS / 2 + *rnd % RACE_PERIOD_NS));
	return HRTIMER_RESTART;
}

/* The table entry of @bio; a new one if @insert. Interrupts disabled. */
static unsigned int bio_cache_test_race_slot(struct bio_cache_test_race *r,
					     struct bio *bio, bool insert)
{
	unsigned int i = hash_ptr(bio, RACE_TABLE_BITS), n;

	for (n = 0; n < ARRAY_SIZE(r->seen); n++, i = (i + 1) % ARRAY_SIZE(r->seen)) {
		if (r->seen[i].bio == bio)
			return i;
		if (!r->seen[i].bio) {
			if (!insert)
				break;
			r->seen[i].bio = bio;
			r->nr_seen++;
			return i;
		}
	}
	r->lost_track++;
	return UINT_MAX;
}

static enum hrtimer_restart bio_cache_test_race_timer(struct hrtimer *timer)
{
	struct bio_cache_test_race *r =
		container_of(timer, struct bio_cache_test_race, timer);
	struct pt_regs *regs = get_irq_regs();
	unsigned int n, i;

	r->irqs++;
	if (regs && !user_mode(regs) && r->nr_ips < RACE_SAMPLES)
		r->ips[r->nr_ips++] = instruction_pointer(regs);
	for (n = 0; n < RACE_PER_IRQ && r->tail != READ_ONCE(r->head); n++) {
		struct bio *bio = r->ring[r->tail % RACE_RING];

		i = bio_cache_test_race_slot(r, bio, false);
		if (i != UINT_MAX)
			r->seen[i].held = false;
		WRITE_ONCE(r->tail, r->tail + 1);
		bio_put(bio);
		r->irq_puts++;
	}
	if (READ_ONCE(r->stop))
		return HRTIMER_NORESTART;
	return bio_cache_test_race_rearm(timer, &r->rnd);
}

/* On CPU 0, in task context: allocate, hand over to the timer, repeat. */
static int bio_cache_test_race_run(void *arg)
{
	struct bio_cache_test_race *r = arg;
	unsigned long end = jiffies + RACE_SECONDS * HZ, flags;
	struct bio *bio;
	unsigned int i;

	bio_cache_test_race_start(&r->timer, &r->rnd, bio_cache_test_race_timer);
	while (r->allocs < RACE_ALLOCS && time_before(jiffies, end)) {
		if (READ_ONCE(r->head) - READ_ONCE(r->tail) >= RACE_HELD) {
			cpu_relax();
			continue;
		}
		bio = bio_cache_test_alloc(r->t);
		if (!bio)
			break;
		local_irq_save(flags);
		i = bio_cache_test_race_slot(r, bio, true);
		if (i != UINT_MAX) {
			r->handed_twice += r->seen[i].held;
			r->seen[i].held = true;
		}
		local_irq_restore(flags);
		r->ring[r->head % RACE_RING] = bio;
		/* the timer, on this CPU, must see the bio before the index */
		barrier();
		WRITE_ONCE(r->head, r->head + 1);
		r->allocs++;
	}
	WRITE_ONCE(r->stop, true);
	hrtimer_cancel(&r->timer);
	/* What the timer did not put goes back from task context. */
	while (r->tail != r->head) {
		bio = r->ring[r->tail++ % RACE_RING];
		i = bio_cache_test_race_slot(r, bio, false);
		if (i != UINT_MAX)
			r->seen[i].held = false;
		bio_put(bio);
	}
	return 0;
}

static void bio_cache_test_irq_race(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_cache_test_race *r;
	struct bio_alloc_cache_stats st0, st;
	unsigned long bios_put, held_counted, teardown_freed, in_alloc = 0;
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i;
	u64 drained;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->t = t;
	st0 = bio_cache_test_stats(t, 0);
	KUNIT_ASSERT_EQ(test, smp_call_on_cpu(0, bio_cache_test_race_run, r, false), 0);
	st = bio_cache_test_stats(t, 0);
	held_counted = st.nr + st.nr_irq;
	drained = bio_alloc_cache_teardown_drained();
	bioset_exit(&t->bs);
	teardown_freed = bio_alloc_cache_teardown_drained() - drained;
	bios_put = r->nr_seen;

	/* where the timer found CPU 0: inside allocations, some of the time */
	for (i = 0; i < r->nr_ips; i++) {
		snprintf(sym, sizeof(sym), "%ps", (void *)r->ips[i]);
		in_alloc += !strcmp(sym, "bio_alloc_bioset");
	}
	kunit_info(test, "%lu allocations, %lu timer expiries putting %lu bios, %llu splices, %lu distinct bios; %lu of %u expiries sampled in bio_alloc_bioset()\n",
		   r->allocs, r->irqs, r->irq_puts, st.splices - st0.splices, bios_put,
		   in_alloc, r->nr_ips);

	/*
	 * What the lists held at the end is what the counters say they held:
	 * a bio lost in a splice is counted but on no list, a count cleared
	 * under a put leaves a bio on a list uncounted.
	 */
	KUNIT_EXPECT_EQ(test, teardown_freed, held_counted);
	/* every bio the test put is back in the cache, once, and nothing else */
	KUNIT_EXPECT_EQ(test, teardown_freed, bios_put);
	KUNIT_EXPECT_EQ(test, r->handed_twice, 0);
	KUNIT_EXPECT_EQ(test, st.put_task + st.put_irq - st.alloc_hit, held_counted);
	KUNIT_EXPECT_EQ(test, st.free_full + st.free_other, st0.free_full + st0.free_other);
	KUNIT_EXPECT_EQ(test, r->lost_track, 0);
	/*
	 * And the run was the race it is meant to be: splices with the timer
	 * running. (How often an expiry landed inside an allocation is only
	 * reported: without -icount, TCG takes interrupts between blocks of
	 * translated code, and a loaded host leaves few such blocks to the
	 * task.)
	 */
	KUNIT_EXPECT_GE(test, r->allocs, RACE_MIN_ALLOCS);
	KUNIT_EXPECT_GT(test, st.splices - st0.splices, 0);
}

/*
 * Puts that free, because the lists are full, from task context and from a
 * pinned hard hrtimer at once: free_full is the one counter both contexts
 * write, and each free must be counted, exactly. A load and a store that an
 * expiry splits in task context lose the expiry's count; the icount boot,
 * which takes interrupts between any two instructions, splits some within
 * the run. The bios have more vecs than fit inline, so that no allocation
 * takes one from the cache (under either rule), and are marked for the
 * cache by hand, as if it had handed them out.
 */
struct bio_cache_test_frees {
	struct hrtimer timer;
	struct bio *ring[RACE_RING];
	unsigned int head;		/* advanced by the task */
	unsigned int tail;		/* advanced by the timer */
	bool stop;
	u32 rnd;
	unsigned long allocs, task_puts, irq_puts, irqs;
	struct bio_cache_test *t;
};

static enum hrtimer_restart bio_cache_test_frees_timer(struct hrtimer *timer)
{
	struct bio_cache_test_frees *r =
		container_of(timer, struct bio_cache_test_frees, timer);
	unsigned int n;

	r->irqs++;
	for (n = 0; n < RACE_PER_IRQ && r->tail != READ_ONCE(r->head); n++) {
		bio_put(r->ring[r->tail % RACE_RING]);
		WRITE_ONCE(r->tail, r->tail + 1);
		r->irq_puts++;
	}
	if (READ_ONCE(r->stop))
		return HRTIMER_NORESTART;
	return bio_cache_test_race_rearm(timer, &r->rnd);
}

/* On CPU 0, in task context: allocate; put one bio, hand the next over. */
static int bio_cache_test_frees_run(void *arg)
{
	struct bio_cache_test_frees *r = arg;
	unsigned long end = jiffies + RACE_SECONDS * HZ;
	struct bio *bio;

	bio_cache_test_race_start(&r->timer, &r->rnd, bio_cache_test_frees_timer);
	while (r->allocs < RACE_ALLOCS && time_before(jiffies, end)) {
		bio = bio_cache_test_alloc(r->t);
		if (!bio)
			break;
		bio->bi_opf |= REQ_ALLOC_CACHE;
		r->allocs++;
		if ((r->allocs & 1) && r->head - READ_ONCE(r->tail) < RACE_RING) {
			r->ring[r->head % RACE_RING] = bio;
			/* the timer, on this CPU, must see the bio before the index */
			barrier();
			WRITE_ONCE(r->head, r->head + 1);
		} else {
			bio_put(bio);
			r->task_puts++;
		}
	}
	WRITE_ONCE(r->stop, true);
	hrtimer_cancel(&r->timer);
	while (r->tail != r->head) {
		bio_put(r->ring[r->tail++ % RACE_RING]);
		r->task_puts++;
	}
	return 0;
}

static void bio_cache_test_free_count(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;
	struct bio_cache_test_frees *r;
	struct bio_alloc_cache_stats st0, st;

	/* the lists full: CACHE_MAX + 1 bios kept, every later put frees */
	bio_cache_test_on(t, 0, bio_cache_test_alloc_all, CACHE_MAX + 1);
	bio_cache_test_on(t, 0, bio_cache_test_put_all, CACHE_MAX + 1);
	st0 = bio_cache_test_stats(t, 0);
	KUNIT_ASSERT_EQ(test, st0.nr + st0.nr_irq, CACHE_MAX + 1);

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->t = t;
	t->nr_vecs = BIO_INLINE_VECS + 1;
	KUNIT_ASSERT_EQ(test, smp_call_on_cpu(0, bio_cache_test_frees_run, r, false), 0);
	st = bio_cache_test_stats(t, 0);
	kunit_info(test, "%lu allocations, %lu freed from task context, %lu by %lu timer expiries\n",
		   r->allocs, r->task_puts, r->irq_puts, r->irqs);

	KUNIT_EXPECT_EQ(test, st.free_full - st0.free_full, r->task_puts + r->irq_puts);
	KUNIT_EXPECT_EQ(test, r->task_puts + r->irq_puts, r->allocs);
	KUNIT_EXPECT_EQ(test, st.put_task, st0.put_task);
	KUNIT_EXPECT_EQ(test, st.put_irq, st0.put_irq);
	KUNIT_EXPECT_EQ(test, st.nr + st.nr_irq, CACHE_MAX + 1);
	/*
	 * And both contexts freed: the race the test is meant to be. (How
	 * many bios is only reported: on the debug variant the timer's
	 * expiries leave the task a few hundred in the run.)
	 */
	KUNIT_EXPECT_GT(test, r->task_puts, 0);
	KUNIT_EXPECT_GT(test, r->irq_puts, 0);
}

static int bio_cache_test_init(struct kunit *test)
{
	struct bio_cache_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->test = test;
	t->nr_vecs = 1;
	t->opf = REQ_ALLOC_CACHE;
	t->gfp = GFP_KERNEL;
	KUNIT_ASSERT_EQ(test, bioset_init(&t->bs, BIO_POOL_SIZE, 0,
					  BIOSET_NEED_BVECS | BIOSET_PERCPU_CACHE), 0);
	test->priv = t;
	/* Only the boot option may leave such a bio_set without its cache. */
	if (!t->bs.cache && !bio_alloc_cache_enabled)
		kunit_skip(test, "the per-CPU bio cache is off (bio_alloc_cache=off)");
	KUNIT_ASSERT_NOT_NULL_MSG(test, t->bs.cache,
				  "bioset_init(BIOSET_PERCPU_CACHE) made no cache");
	return 0;
}

static void bio_cache_test_exit(struct kunit *test)
{
	struct bio_cache_test *t = test->priv;

	if (t)
		bioset_exit(&t->bs);
}

static struct kunit_case bio_cache_test_cases[] = {
	KUNIT_CASE(bio_cache_test_lifo),
	KUNIT_CASE(bio_cache_test_bound),
	KUNIT_CASE(bio_cache_test_bound_irq),
	KUNIT_CASE(bio_cache_test_contexts),
	KUNIT_CASE(bio_cache_test_nmi_put),
	KUNIT_CASE(bio_cache_test_splice_below),
	KUNIT_CASE(bio_cache_test_splice_at),
	KUNIT_CASE(bio_cache_test_splice_above),
	KUNIT_CASE(bio_cache_test_bypass),
	KUNIT_CASE(bio_cache_test_miss),
	KUNIT_CASE(bio_cache_test_rule),
	KUNIT_CASE(bio_cache_test_teardown),
	KUNIT_CASE(bio_cache_test_front_pad),
	KUNIT_CASE(bio_cache_test_cpu_dead),
	KUNIT_CASE(bio_cache_test_cross_cpu),
	KUNIT_CASE(bio_cache_test_teardown_offline),
	KUNIT_CASE(bio_cache_test_teardown_hot_removed),
	KUNIT_CASE_SLOW(bio_cache_test_irq_race),
	KUNIT_CASE_SLOW(bio_cache_test_free_count),
	{}
};

static struct kunit_suite bio_cache_test_suite = {
	.name = "bio_alloc_cache",
	.init = bio_cache_test_init,
	.exit = bio_cache_test_exit,
	.test_cases = bio_cache_test_cases,
};

kunit_test_suite(bio_cache_test_suite);

MODULE_DESCRIPTION("KUnit tests of the per-CPU bio cache");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
