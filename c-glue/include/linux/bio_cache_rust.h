/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU bio cache implemented in Rust (rust/kernel/block/bio.rs,
 * instantiated by block/bio_cache.rs), as block/bio.c calls it with
 * CONFIG_BIO_ALLOC_CACHE_RUST. With CONFIG_RUST_INLINE_HELPERS its bitcode is
 * linked into bio.o, and these calls inline.
 *
 * A cache is a per-CPU allocation that C owns as an opaque pointer (in
 * bio_set::cache: the Rust cache's foreign form). The functions that use a
 * cache without freeing it borrow it for the call: it must be a non-NULL
 * pointer from bio_cache_rust_new(), not freed until they return.
 */
#ifndef _LINUX_BIO_CACHE_RUST_H
#define _LINUX_BIO_CACHE_RUST_H

#include <linux/types.h>

struct bio;
struct bio_alloc_cache;
struct bio_alloc_cache_stats;

/* Allocates an empty cache; NULL if out of memory. */
struct bio_alloc_cache __percpu *bio_cache_rust_new(void);

/*
 * Frees every bio on every possible CPU's lists and the cache itself;
 * returns how many bios it freed, 0 for a NULL @cache. Nothing may use
 * @cache any more, and no CPU-dead callback may run for it.
 */
unsigned long bio_cache_rust_free(struct bio_alloc_cache __percpu *cache);

/*
 * Takes a bio from this CPU's lists, or returns NULL if they are empty.
 * Task context only, as for the C cache: with CONFIG_DEBUG_PREEMPT a call
 * from elsewhere prints a BUG: line once and returns NULL. The bio still
 * has to be initialised with bio_init().
 */
struct bio *bio_cache_rust_alloc(struct bio_alloc_cache __percpu *cache);

/*
 * Takes @bio back, with its last reference: it goes on this CPU's task list
 * from task context, on its hard-IRQ list from hard-IRQ context, and is freed
 * from soft-IRQ context or when the lists are full. From an NMI it is leaked,
 * with a warning the first time: bio_free() is not NMI-safe.
 */
void bio_cache_rust_put(struct bio_alloc_cache __percpu *cache,
			struct bio *bio);

/*
 * Frees every bio on @cpu's lists, for the CPU-hotplug dead callback;
 * returns how many. @cpu must be dead, and the hotplug lock held (no other
 * drain of @cpu, nor bio_cache_rust_free(), may run meanwhile).
 */
unsigned int bio_cache_rust_drain_cpu(struct bio_alloc_cache __percpu *cache,
				      unsigned int cpu);

/* Fills @stats with @cpu's counters (CONFIG_BIO_ALLOC_CACHE_STATS). */
void bio_cache_rust_stats(struct bio_alloc_cache __percpu *cache,
			  unsigned int cpu, struct bio_alloc_cache_stats *stats);

/* Implemented in block/bio.c for the Rust side: frees a bio. */
void bio_cache_rust_release(struct bio *bio);

#endif /* _LINUX_BIO_CACHE_RUST_H */
