/* SPDX-License-Identifier: GPL-2.0 */
/*
 * others_ticks() - the busy and elapsed ticks of every CPU but the caller's,
 * from /proc/stat, for the workloads of make bench: under -icount all vCPUs
 * share the instruction clock, so a measured window counts only the
 * measuring CPU's instructions if the others stayed idle in it. Read just
 * around the timed loop, this leaves the program's setup and teardown out.
 */
#ifndef OTHERS_TICKS_H
#define OTHERS_TICKS_H

#include <sched.h>
#include <stdio.h>
#include <string.h>

struct ticks {
	unsigned long long busy, all;
};

static struct ticks others_ticks(void)
{
	struct ticks t = { 0, 0 };
	int self = sched_getcpu();
	char line[512];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return t;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = { 0 };
		int cpu;

		/* cpuN (not the sum, "cpu "): user nice system idle iowait irq softirq steal */
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9' ||
		    sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
		    cpu == self)
			continue;
		t.busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		t.all += v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	}
	fclose(f);
	return t;
}

#endif
