// SPDX-License-Identifier: GPL-2.0
/*
 * vcpu-insns - a QEMU TCG plugin that counts the instructions each vCPU
 * executes, and reports the counts of all of them whenever a guest executes
 * a mark: what make bench needs to know that a measured window was the
 * measured CPU's alone.
 *
 * Under -icount shift=0 the guest clock advances by one nanosecond per
 * instruction, but QEMU runs the vCPUs in turn on one clock: a window timed
 * on one CPU also counts whatever the others executed in it. The guest's own
 * accounting cannot tell (its ticks sample where a CPU is, and a CPU whose
 * turn ended in a softirq is sampled there for as long as another CPU's
 * turn lasts); QEMU can, so this plugin counts.
 *
 * The marks are two 7-byte NOPs that no compiler emits, which a program
 * executes just around its timed loop (tests/src/others-ticks.h):
 *   nopl 0x1cacb10b(%rax)   begin of a window,  0f 1f 80 0b b1 ac 1c
 *   nopl 0x1cacb10e(%rax)   end of a window,    0f 1f 80 0e b1 ac 1c
 * Without the plugin they do nothing. With it, each prints a line to QEMU's
 * log (-d plugin -D FILE):
 *   vcpu-insns: begin vcpu=1 insns=1234,5678
 * the vCPU that executed the mark and every vCPU's count so far, for
 * scripts/bench-report.py to take the differences.
 *
 * A translation block's instructions are counted when it starts: a mark
 * counts the rest of its block as already executed, and a block that faults
 * half-way counts whole. Both are a few instructions in millions.
 *
 * Debian 12 ships QEMU 7.2 with its plugin loader but not the plugin API's
 * header (qemu-plugin.h, in the source package), so the few calls used are
 * declared here, as version 1 of that API declares them.
 *
 * Build: gcc -shared -fPIC -O2 -o vcpu-insns.so vcpu-insns.c
 * Use:   qemu-system-x86_64 -icount shift=0 -plugin vcpu-insns.so \
 *            -d plugin -D insns.log ...
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* QEMU's plugin API, version 1 (QEMU 7.2, include/qemu/qemu-plugin.h). */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
int qemu_plugin_n_max_vcpus(void);
void qemu_plugin_outs(const char *string);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* End of QEMU's API. */

#define MAX_VCPUS	8
#define MARK_LEN	7

static const uint8_t mark_begin[MARK_LEN] = { 0x0f, 0x1f, 0x80, 0x0b, 0xb1, 0xac, 0x1c };
static const uint8_t mark_end[MARK_LEN] = { 0x0f, 0x1f, 0x80, 0x0e, 0xb1, 0xac, 0x1c };

/*
 * Instructions per vCPU. Under -icount QEMU runs every vCPU on one thread
 * (round-robin TCG), so the callbacks never run concurrently.
 */
static uint64_t insns[MAX_VCPUS];
static int nr_vcpus;

static void count_tb(unsigned int vcpu, void *n)
{
	if (vcpu < MAX_VCPUS)
		insns[vcpu] += (uintptr_t)n;
}

static void report_mark(unsigned int vcpu, void *what)
{
	char line[64 + MAX_VCPUS * 21];
	int len, i;

	len = snprintf(line, sizeof(line), "vcpu-insns: %s vcpu=%u insns=",
		       (const char *)what, vcpu);
	for (i = 0; i < nr_vcpus; i++)
		len += snprintf(line + len, sizeof(line) - len, "%s%" PRIu64,
				i ? "," : "", insns[i]);
	snprintf(line + len, sizeof(line) - len, "\n");
	qemu_plugin_outs(line);
}

/* A block is translated: count it when it runs, and watch for marks in it. */
static void translate_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, count_tb, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const void *data = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) != MARK_LEN)
			continue;
		if (!memcmp(data, mark_begin, MARK_LEN))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, report_mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)"begin");
		else if (!memcmp(data, mark_end, MARK_LEN))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, report_mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)"end");
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	(void)argc;
	(void)argv;
	nr_vcpus = qemu_plugin_n_max_vcpus();
	if (nr_vcpus < 1 || nr_vcpus > MAX_VCPUS) {
		fprintf(stderr, "vcpu-insns: %d vCPUs: at most %d\n", nr_vcpus, MAX_VCPUS);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate_tb);
	return 0;
}
