// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the gfp mask with which bio_alloc_bioset() asks the bio
 * slab for a bio on its fast path. A caller that may block gets a mask that
 * neither blocks nor dips into the reserves, since the bio_set's mempool is
 * its fallback; a caller that may not block keeps its own mask, since it
 * has no fallback that can wait (upstream b5129bda5bbc, after the split of
 * b520c4eef83d restricted both, and non-blocking allocations failed).
 *
 * The mask is read where the slab gets it: a kprobe on
 * kmem_cache_alloc_noprof() records the gfp of the calls this task makes
 * for the test's bio slab, and nothing else.
 */
#include <kunit/test.h>
#include <linux/bio.h>
#include <linux/gfp.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>

#define BIO_POOL_SIZE	2

/* What the fast path adds to and takes from the mask of a caller that may block. */
#define TRY_ALLOC_ADDS	(__GFP_NOMEMALLOC | __GFP_NORETRY | __GFP_NOWARN)
#define TRY_ALLOC_TAKES	(__GFP_DIRECT_RECLAIM | __GFP_IO)

struct bio_gfp_test {
	struct kprobe kp;
	struct bio_set bs;
	bool bs_ready, probing;
	/* Set while the probe records: the task and the slab it watches. */
	struct task_struct *task;
	struct kmem_cache *slab;
	unsigned int calls;
	gfp_t gfp;
};

static int bio_gfp_test_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct bio_gfp_test *t = container_of(kp, struct bio_gfp_test, kp);

	if (READ_ONCE(t->task) != current ||
	    (struct kmem_cache *)regs_get_kernel_argument(regs, 0) != t->slab)
		return 0;
	t->calls++;
	t->gfp = (gfp_t)regs_get_kernel_argument(regs, 1);
	return 0;
}

/*
 * Allocates a bio without bvecs from the test's bio_set, which has no
 * per-CPU cache, with @gfp, and returns the mask the bio slab got for it.
 */
static gfp_t bio_gfp_test_alloc(struct kunit *test, gfp_t gfp)
{
	struct bio_gfp_test *t = test->priv;
	struct bio *bio;

	t->calls = 0;
	t->slab = t->bs.bio_slab;
	WRITE_ONCE(t->task, current);
	bio = bio_alloc_bioset(NULL, 0, REQ_OP_READ, gfp, &t->bs);
	WRITE_ONCE(t->task, NULL);

	KUNIT_ASSERT_NOT_NULL_MSG(test, bio, "gfp %pGg", &gfp);
	bio_put(bio);
	KUNIT_ASSERT_EQ_MSG(test, t->calls, 1,
			    "bio slab allocations for one bio, gfp %pGg", &gfp);
	return t->gfp;
}

static void bio_gfp_test_nonblocking(struct kunit *test)
{
	static const gfp_t masks[] = { GFP_NOWAIT, GFP_ATOMIC, GFP_NOWAIT | __GFP_NOWARN };
	int i;

	for (i = 0; i < ARRAY_SIZE(masks); i++) {
		gfp_t got = bio_gfp_test_alloc(test, masks[i]);

		KUNIT_EXPECT_EQ_MSG(test, got, masks[i],
				    "caller's %pGg reached the slab as %pGg",
				    &masks[i], &got);
	}
}

static void bio_gfp_test_blocking(struct kunit *test)
{
	static const gfp_t masks[] = { GFP_KERNEL, GFP_NOIO, GFP_NOFS };
	int i;

	for (i = 0; i < ARRAY_SIZE(masks); i++) {
		gfp_t got = bio_gfp_test_alloc(test, masks[i]);
		gfp_t want = (masks[i] & ~TRY_ALLOC_TAKES) | TRY_ALLOC_ADDS;

		KUNIT_EXPECT_EQ_MSG(test, got, want,
				    "caller's %pGg reached the slab as %pGg",
				    &masks[i], &got);
	}
}

static int bio_gfp_test_init(struct kunit *test)
{
	struct bio_gfp_test *t;
	int ret;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	test->priv = t;
	ret = bioset_init(&t->bs, BIO_POOL_SIZE, 0, 0);
	if (ret)
		return ret;
	t->bs_ready = true;
	t->kp.symbol_name = "kmem_cache_alloc_noprof";
	t->kp.pre_handler = bio_gfp_test_pre;
	ret = register_kprobe(&t->kp);
	if (ret) {
		kunit_err(test, "cannot probe kmem_cache_alloc_noprof(): %d\n", ret);
		return ret;
	}
	t->probing = true;
	return 0;
}

/* Also after a failed init, which KUnit follows with the exit too. */
static void bio_gfp_test_exit(struct kunit *test)
{
	struct bio_gfp_test *t = test->priv;

	if (!t)
		return;
	if (t->probing)
		unregister_kprobe(&t->kp);
	if (t->bs_ready)
		bioset_exit(&t->bs);
}

static struct kunit_case bio_gfp_test_cases[] = {
	KUNIT_CASE(bio_gfp_test_nonblocking),
	KUNIT_CASE(bio_gfp_test_blocking),
	{}
};

static struct kunit_suite bio_gfp_test_suite = {
	.name = "bio_alloc_gfp",
	.init = bio_gfp_test_init,
	.exit = bio_gfp_test_exit,
	.test_cases = bio_gfp_test_cases,
};

kunit_test_suite(bio_gfp_test_suite);

MODULE_DESCRIPTION("KUnit tests of the gfp mask of bio allocations");
MODULE_LICENSE("GPL");
