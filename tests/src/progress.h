/* SPDX-License-Identifier: GPL-2.0 */
/*
 * progress_map() - the -P FILE of the test programs: FILE, 8 bytes, mapped
 * shared, into which a program stores the number of IOs it completed, so
 * that a script sees its progress (the guest's lib.sh, workers_alive())
 * without a pipe or a signal. progress_set() publishes a new count.
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The mapped count of PATH, or NULL (the reason printed, PROG first). */
static uint64_t *progress_map(const char *prog, const char *path)
{
	int pfd = open(path, O_RDWR | O_CREAT, 0644);
	uint64_t *p;

	if (pfd < 0 || ftruncate(pfd, sizeof(*p))) {
		fprintf(stderr, "%s: -P %s: %s\n", prog, path, strerror(errno));
		if (pfd >= 0)
			close(pfd);
		return NULL;
	}
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	close(pfd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "%s: mmap %s: %s\n", prog, path, strerror(errno));
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
