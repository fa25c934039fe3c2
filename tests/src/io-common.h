/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What uring-io and nvme-pt share: the data pattern (one program may verify
 * what the other wrote, so there must be one), their clock, their random
 * numbers, their size arguments, the stop flag of SIGINT and SIGTERM, and
 * the -P progress file. PROG names the program in messages; each program
 * defines usage().
 */
#ifndef IO_COMMON_H
#define IO_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef PROG
#error "define PROG, the program's name, before including io-common.h"
#endif

static void usage(void);

/* SIGINT/SIGTERM: finish the current pass, print the summary, exit. */
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* splitmix64: the expected content of the 8 bytes at @pos for @seed. */
static uint64_t pattern(uint64_t seed, uint64_t pos)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull + pos / 8;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The pattern of bytes @off to @off + @len into @p. Buffers may be
 * misaligned on purpose (-a): copy, never dereference.
 */
static void fill(void *p, uint64_t off, unsigned int len, uint64_t seed)
{
	for (unsigned int i = 0; i < len; i += 8) {
		uint64_t v = pattern(seed, off + i);

		memcpy((char *)p + i, &v, sizeof(v));
	}
}

/* @p holds the pattern of bytes @off to @off + @len; if not, say where. */
static bool check(const char *what, const void *p, uint64_t off, unsigned int len,
		  uint64_t seed)
{
	for (unsigned int i = 0; i < len; i += 8) {
		uint64_t v;

		memcpy(&v, (const char *)p + i, sizeof(v));
		if (v != pattern(seed, off + i)) {
			fprintf(stderr, PROG ": %s mismatch at byte %" PRIu64
				": got %016" PRIx64 " want %016" PRIx64 " (seed %" PRIu64 ")\n",
				what, off + i, v, pattern(seed, off + i), seed);
			return false;
		}
	}
	return true;
}

/* xorshift64, for offsets and sizes: the same sequence in every run. */
static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A number with an optional k, m or g suffix (KiB, MiB, GiB). */
static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end || end == s)
		usage();
	return v;
}

/*
 * -P PATH: 8 bytes, mapped shared, in which the program stores the number of
 * IOs it completed, for a script to see its progress while it runs (the
 * guest's workers_alive()). The mapped count, or NULL (the reason printed).
 */
static uint64_t *progress_map(const char *path)
{
	int pfd = open(path, O_RDWR | O_CREAT, 0644);
	uint64_t *p;

	if (pfd < 0 || ftruncate(pfd, sizeof(*p))) {
		fprintf(stderr, PROG ": -P %s: %s\n", path, strerror(errno));
		if (pfd >= 0)
			close(pfd);
		return NULL;
	}
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	close(pfd);
	if (p == MAP_FAILED) {
		fprintf(stderr, PROG ": mmap %s: %s\n", path, strerror(errno));
		return NULL;
	}
	return p;
}

/* Publish COUNT in P, if mapped; a reader may see it late, never torn. */
static inline void progress_set(uint64_t *p, uint64_t count)
{
	if (p)
		__atomic_store_n(p, count, __ATOMIC_RELAXED);
}

#endif
