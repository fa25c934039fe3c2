/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WINDOW_MARK_H
#define WINDOW_MARK_H

/*
 * window_begin(), window_end() - the marks of QEMU's vcpu-insns plugin
 * (tests/bench/vcpu-insns.c), which make bench loads: executed just around
 * a timed loop, they have it report every vCPU's instruction count, so that
 * what the other CPUs executed in the window is known exactly, not sampled
 * by their ticks. Without the plugin they are NOPs.
 */
static inline void window_begin(void)
{
	/* nopl 0x1cacb10b(%rax) */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x0b, 0xb1, 0xac, 0x1c" ::: "memory");
}

static inline void window_end(void)
{
	/* nopl 0x1cacb10e(%rax) */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x0e, 0xb1, 0xac, 0x1c" ::: "memory");
}

#endif
