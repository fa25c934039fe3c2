/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WINDOW_MARK_H
#define WINDOW_MARK_H

#include <stdlib.h>

/*
 * window_begin(), window_end() - the marks of QEMU's vcpu-insns plugin
 * (tests/bench/vcpu-insns.c), which make bench loads: executed just around
 * a timed loop, they have it report every vCPU's instruction count, so that
 * what the other CPUs executed in the window is known exactly, not sampled
 * by their ticks. Without the plugin they are NOPs. They are executed only
 * with BENCH_WINDOW set in the environment (make bench's workloads), so
 * that the programs' other runs in a bench boot (its smoke test) add no
 * window; window_begin() reads it before its mark, outside the window.
 */
static int window_marks = -1;

static inline int window_on(void)
{
	if (window_marks < 0)
		window_marks = getenv("BENCH_WINDOW") != NULL;
	return window_marks;
}

static inline void window_begin(void)
{
	if (window_on())
		/* nopl 0x1cacb10b(%rax) */
		__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x0b, 0xb1, 0xac, 0x1c" ::: "memory");
}

static inline void window_end(void)
{
	if (window_on())
		/* nopl 0x1cacb10e(%rax) */
		__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x0e, 0xb1, 0xac, 0x1c" ::: "memory");
}

#endif
