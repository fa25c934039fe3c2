// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-pt - NVMe I/O commands through io_uring passthrough
 * (IORING_OP_URING_CMD with NVME_URING_CMD_IO on /dev/ngXnY), polled
 * (IORING_SETUP_IOPOLL) or not, for the guest.
 *
 *   verify: write a pattern over a region with NVMe Write commands, read it
 *           back with NVMe Read commands of other sizes and check every byte;
 *           repeat with a new seed while time remains.  The pattern depends
 *           on the seed and on the byte offset, as in uring-io.
 *   read:   random NVMe Reads of one size (the workload; exact counts).
 *   write:  random NVMe Writes of one size.
 *   cmd:    commands of opcode -C, each with a buffer of -b bytes and the
 *           matching number of blocks, at random LBAs of the region (bad
 *           input: an opcode the device does not know).
 *
 * The namespace ID comes from NVME_IOCTL_ID, the LBA size from -L (the
 * character device has no BLKSSZGET).  Buffers are page aligned, -a moves
 * them off that; -U points every command at an address with nothing mapped.
 *
 * -V N sends vectored commands (NVME_URING_CMD_IO_VEC): each buffer is N
 * iovecs of equal length, -g GAP bytes apart (0: one contiguous buffer).
 * -M MS gives every command a metadata buffer of MS bytes per LBA, for a
 * namespace formatted with separate metadata: written with a pattern of its
 * own (by LBA and seed), read back and checked as the data is; -m moves
 * those buffers off their page alignment.
 *
 * -P FILE publishes the count of completed commands in FILE (8 bytes,
 * mapped shared), for a script that checks a background run's progress.
 *
 * A command's result (cqe->res) is a negative errno when the kernel refused
 * or failed it, or the positive NVMe status when the device did: the status
 * field of the completion without its phase bit, Status Code in bits 0-7,
 * Status Code Type in bits 8-10, More in bit 13, Do Not Retry in bit 14.
 * Every result other than success is printed once, decoded.  With -e RES
 * every command must complete with exactly RES; otherwise with success.
 * The exit code is 0 only if everything was as expected.  The last line
 * printed is a summary of key=value pairs that the guest scripts parse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PROG "nvme-pt"

#include "io-common.h"
#include "others-ticks.h"
#include "window-mark.h"

#define MAX_QD		128
#define MAX_SIZES	16
#define MAX_RESULTS	16
#define MAX_SEGS	16
/* The metadata pattern's seed differs from the data's. */
#define MD_SALT		0x6d65746164617461ull

#define NVME_CMD_WRITE	0x01
#define NVME_CMD_READ	0x02

struct opts {
	const char *dev;
	const char *op;
	unsigned int lba_size, min_bs, max_bs, qd, batch;
	uint64_t start, region, seed, count;
	unsigned int seconds;
	bool poll, fixed_file, fixed_bufs, unmapped, no_big_sqe;
	unsigned int buf_misalign, opcode, cmd_flags;
	bool set_nsid, expect;
	uint32_t nsid;
	int expect_res;
	unsigned int nr_segs, seg_gap, md_size, md_misalign;
	const char *progress;
};

struct slot {
	void *buf;
	void *md;
	struct iovec iov[MAX_SEGS];
	uint64_t off;
	unsigned int len;
	unsigned int opcode;
	bool busy;
};

static struct opts o = {
	.op = "verify", .lba_size = 512, .min_bs = 4096, .max_bs = 4096,
	.qd = 8, .batch = 1, .region = 16 << 20, .seed = 1,
	.opcode = NVME_CMD_READ, .nr_segs = 1,
};
static struct io_uring ring;
static struct slot slots[MAX_QD];
static int fd;
static uint32_t nsid;
static void *unmapped_area;
static uint64_t nr_ios, nr_bytes, nr_verified, nr_errors, nr_expected;
static uint64_t *progress;	/* -P FILE, mapped; NULL without */
static unsigned int sizes[MAX_SIZES], nr_sizes;
static int results[MAX_RESULTS];
static unsigned int nr_results;
/* The data of a command: o.nr_segs pieces of equal length, o.seg_gap apart. */
static char *seg_addr(const struct slot *s, unsigned int len, unsigned int i)
{
	return (char *)s->buf + o.buf_misalign + i * (len / o.nr_segs + o.seg_gap);
}

static void fill_data(struct slot *s, uint64_t seed)
{
	unsigned int seg = s->len / o.nr_segs;

	for (unsigned int i = 0; i < o.nr_segs; i++)
		fill(seg_addr(s, s->len, i), s->off + i * seg, seg, seed);
	/* metadata: MS bytes per LBA, at the LBA's index times MS */
	if (o.md_size)
		fill((char *)s->md + o.md_misalign, s->off / o.lba_size * o.md_size,
		     s->len / o.lba_size * o.md_size, seed ^ MD_SALT);
}

static bool check_data(const struct slot *s, uint64_t seed)
{
	unsigned int seg = s->len / o.nr_segs;

	for (unsigned int i = 0; i < o.nr_segs; i++)
		if (!check("data", seg_addr(s, s->len, i), s->off + i * seg, seg, seed))
			return false;
	return !o.md_size ||
	       check("metadata", (char *)s->md + o.md_misalign, s->off / o.lba_size * o.md_size,
		     s->len / o.lba_size * o.md_size, seed ^ MD_SALT);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nvme-pt -d /dev/ngXnY [-o verify|read|write|cmd] [-L LBASIZE]\n"
		"               [-b MINBS] [-B MAXBS] [-q QD] [-c BATCH] [-O OFFSET]\n"
		"               [-r REGION] [-n COUNT] [-t SECONDS] [-s SEED] [-p] [-F] [-X]\n"
		"               [-a BUFMISALIGN] [-U] [-C OPCODE] [-f FLAGS] [-N NSID] [-W]\n"
		"               [-e RESULT] [-V NSEGS] [-g GAP] [-M MS] [-m MDMISALIGN]\n"
		"               [-P PROGRESSFILE]\n");
	exit(2);
}

static int snum(const char *s)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || end == s)
		usage();
	return v;
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "d:o:L:b:B:q:c:O:r:n:t:s:pFXa:UC:f:N:We:V:g:M:m:P:")) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'o': o.op = optarg; break;
		case 'L': o.lba_size = num(optarg); break;
		case 'b': o.min_bs = num(optarg); break;
		case 'B': o.max_bs = num(optarg); break;
		case 'q': o.qd = num(optarg); break;
		case 'c': o.batch = num(optarg); break;
		case 'O': o.start = num(optarg); break;
		case 'r': o.region = num(optarg); break;
		case 'n': o.count = num(optarg); break;
		case 't': o.seconds = num(optarg); break;
		case 's': o.seed = num(optarg); break;
		case 'p': o.poll = true; break;
		case 'F': o.fixed_file = true; break;
		case 'X': o.fixed_bufs = true; break;
		case 'a': o.buf_misalign = num(optarg); break;
		case 'U': o.unmapped = true; break;
		case 'C': o.opcode = num(optarg); break;
		case 'f': o.cmd_flags = num(optarg); break;
		case 'N': o.set_nsid = true; o.nsid = num(optarg); break;
		case 'W': o.no_big_sqe = true; break;
		case 'e': o.expect = true; o.expect_res = snum(optarg); break;
		case 'V': o.nr_segs = num(optarg); break;
		case 'g': o.seg_gap = num(optarg); break;
		case 'M': o.md_size = num(optarg); break;
		case 'm': o.md_misalign = num(optarg); break;
		case 'P': o.progress = optarg; break;
		default: usage();
		}
	}
	if (o.max_bs < o.min_bs)
		o.max_bs = o.min_bs;
	if (!o.dev || !o.qd || o.qd > MAX_QD || !o.batch || o.batch > o.qd ||
	    o.lba_size < 512 || (o.lba_size & (o.lba_size - 1)) ||
	    o.min_bs < o.lba_size || (o.min_bs & (o.min_bs - 1)) ||
	    (o.max_bs & (o.max_bs - 1)) || o.buf_misalign >= 4096 ||
	    o.start % o.lba_size || o.region < o.max_bs || o.opcode > 0xff ||
	    o.cmd_flags > 0xff || (o.unmapped && o.fixed_bufs) ||
	    !o.nr_segs || o.nr_segs > MAX_SEGS || o.min_bs % (8 * o.nr_segs) ||
	    (o.nr_segs > 1 && (o.fixed_bufs || o.unmapped)) || o.md_size % 8 ||
	    o.md_misalign >= 4096 || (o.md_size && o.unmapped))
		usage();
	if (strcmp(o.op, "verify") && strcmp(o.op, "read") && strcmp(o.op, "write") &&
	    strcmp(o.op, "cmd"))
		usage();
	for (unsigned int bs = o.min_bs; bs <= o.max_bs && nr_sizes < MAX_SIZES; bs *= 2)
		sizes[nr_sizes++] = bs;
}

/* The user address of @s's data: its buffer, moved by -a, or unmapped. */
static uint64_t slot_addr(const struct slot *s)
{
	if (o.unmapped)
		return (uintptr_t)unmapped_area + o.buf_misalign;
	return (uintptr_t)s->buf + o.buf_misalign;
}

static void prep(unsigned int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct slot *s = &slots[i];
	struct nvme_uring_cmd cmd = {
		.opcode = s->opcode,
		.flags = o.cmd_flags,
		.nsid = o.set_nsid ? o.nsid : nsid,
		.addr = slot_addr(s),
		.data_len = s->len,
		.cdw10 = (uint32_t)(s->off / o.lba_size),
		.cdw11 = (uint32_t)(s->off / o.lba_size >> 32),
		.cdw12 = s->len / o.lba_size - 1,	/* NLB, 0's based */
	};

	if (o.nr_segs > 1) {
		/* the iovec array is read when the command is issued */
		for (unsigned int k = 0; k < o.nr_segs; k++) {
			s->iov[k].iov_base = seg_addr(s, s->len, k);
			s->iov[k].iov_len = s->len / o.nr_segs;
		}
		cmd.addr = (uintptr_t)s->iov;
		cmd.data_len = o.nr_segs;
	}
	if (o.md_size) {
		cmd.metadata = (uintptr_t)s->md + o.md_misalign;
		cmd.metadata_len = s->len / o.lba_size * o.md_size;
	}

	memset(sqe, 0, o.no_big_sqe ? 64 : 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = o.fixed_file ? 0 : fd;
	if (o.fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	sqe->cmd_op = o.nr_segs > 1 ? NVME_URING_CMD_IO_VEC : NVME_URING_CMD_IO;
	if (o.fixed_bufs) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = i;
	}
	sqe->user_data = i;
	/*
	 * The command takes 72 of the 80 bytes a 128-byte SQE has after its
	 * header; a 64-byte SQE has 16 (-W: the kernel refuses the ring before
	 * it reads the command).
	 */
	if (!o.no_big_sqe)
		memcpy(sqe->cmd, &cmd, sizeof(cmd));
	s->busy = true;
}

/* A result in words: an errno, or an NVMe status decoded. */
static void describe(int res, char *buf, size_t len)
{
	if (res < 0) {
		const char *name = strerrorname_np(-res);

		snprintf(buf, len, "%d (-%s: %s)", res, name ? name : "?", strerror(-res));
	} else {
		snprintf(buf, len, "%d (NVMe status 0x%04x: SCT 0x%x SC 0x%02x%s%s)", res,
			 res, (res >> 8) & 0x7, res & 0xff, res & 0x2000 ? " MORE" : "",
			 res & 0x4000 ? " DNR" : "");
	}
}

/* Print the first command of each distinct non-zero result. */
static void note_result(int res, const struct slot *s)
{
	char what[128];

	for (unsigned int i = 0; i < nr_results; i++)
		if (results[i] == res)
			return;
	if (nr_results < MAX_RESULTS)
		results[nr_results++] = res;
	describe(res, what, sizeof(what));
	printf("nvme-pt: opcode 0x%02x, %u bytes at LBA %" PRIu64 ": result %s\n",
	       s->opcode, s->len, s->off / o.lba_size, what);
}

/* Account one completion. */
static void complete(struct io_uring_cqe *cqe, uint64_t seed)
{
	struct slot *s = &slots[cqe->user_data];
	bool is_read = s->opcode == NVME_CMD_READ;

	s->busy = false;
	nr_ios++;
	progress_set(progress, nr_ios);
	if (cqe->res)
		note_result(cqe->res, s);
	if (o.expect) {
		if (cqe->res == o.expect_res)
			nr_expected++;
		else
			nr_errors++;
	} else if (cqe->res) {
		nr_errors++;
	} else {
		nr_bytes += s->len;
		if (is_read && !strcmp(o.op, "verify")) {
			if (check_data(s, seed))
				nr_verified++;
			else
				nr_errors++;
		}
	}
}

/* Reap at least @min completions. */
static int reap(unsigned int min, uint64_t seed)
{
	struct io_uring_cqe *cqe;
	unsigned int got = 0;
	int ret;

	while (got < min) {
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret) {
			fprintf(stderr, "nvme-pt: wait_cqe: %s\n", strerror(-ret));
			return ret;
		}
		do {
			complete(cqe, seed);
			io_uring_cqe_seen(&ring, cqe);
			got++;
		} while (!io_uring_peek_cqe(&ring, &cqe));
	}
	return 0;
}

static int free_slot(void)
{
	for (unsigned int i = 0; i < o.qd; i++)
		if (!slots[i].busy)
			return i;
	return -1;
}

static int submit(void)
{
	int ret = io_uring_submit(&ring);

	if (ret < 0)
		fprintf(stderr, "nvme-pt: submit: %s\n", strerror(-ret));
	return ret < 0 ? ret : 0;
}

/*
 * One sequential pass over the region, in blocks whose size cycles through
 * sizes[] starting at @first: writes of the pattern for @seed, or reads
 * checked against it.
 */
static int pass(bool is_read, uint64_t seed, unsigned int first)
{
	uint64_t off = 0;
	unsigned int k = first, inflight = 0, queued = 0;

	while (off < o.region || inflight) {
		while (off < o.region && inflight < o.qd) {
			unsigned int len = sizes[k++ % nr_sizes];
			int i = free_slot();

			if (off + len > o.region)
				len = o.region - off;
			slots[i].off = o.start + off;
			slots[i].len = len;
			slots[i].opcode = is_read ? NVME_CMD_READ : NVME_CMD_WRITE;
			if (!is_read)
				fill_data(&slots[i], seed);
			prep(i);
			off += len;
			inflight++;
			if (++queued == o.batch || off >= o.region) {
				if (submit())
					return -1;
				queued = 0;
			}
		}
		uint64_t before = nr_ios;

		if (reap(inflight < o.batch ? inflight : o.batch, seed))
			return -1;
		inflight -= nr_ios - before;
	}
	return 0;
}


/* Random commands of min_bs, QD deep, submitted and reaped in batches. */
static int random_cmds(unsigned int opcode, uint64_t deadline)
{
	uint64_t blocks = o.region / o.min_bs, done = 0;
	unsigned int inflight = 0;

	while (true) {
		bool more = !stop && (o.count ? done < o.count : now_ns() < deadline);
		unsigned int n = 0;

		while (more && inflight + n < o.qd && n < o.batch) {
			int i = free_slot();

			slots[i].off = o.start + (rnd() % blocks) * o.min_bs;
			slots[i].len = o.min_bs;
			slots[i].opcode = opcode;
			if (opcode & 1)		/* host to controller */
				fill_data(&slots[i], o.seed);
			prep(i);
			n++;
			done++;
			more = o.count ? done < o.count : true;
		}
		if (n) {
			if (submit())
				return -1;
			inflight += n;
		}
		if (!inflight)
			return 0;
		uint64_t before = nr_ios;

		if (reap(inflight < o.batch ? inflight : o.batch, 0))
			return -1;
		inflight -= nr_ios - before;
	}
}

int main(int argc, char **argv)
{
	struct io_uring_params p = { 0 };
	struct iovec iov[MAX_QD];
	uint64_t start, deadline, ns;
	size_t buflen, mdlen;
	int ret;

	parse(argc, argv);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (o.progress) {
		progress = progress_map(o.progress);
		if (!progress)
			return 1;
	}
	fd = open(o.dev, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "nvme-pt: open %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	ret = ioctl(fd, NVME_IOCTL_ID);
	if (ret <= 0) {
		fprintf(stderr, "nvme-pt: NVME_IOCTL_ID on %s: %s\n", o.dev,
			ret < 0 ? strerror(errno) : "no namespace");
		return 1;
	}
	nsid = ret;

	if (!o.no_big_sqe)
		p.flags |= IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	if (o.poll)
		p.flags |= IORING_SETUP_IOPOLL;
	ret = io_uring_queue_init_params(o.qd * 2, &ring, &p);
	if (ret) {
		fprintf(stderr, "nvme-pt: io_uring setup: %s\n", strerror(-ret));
		return 1;
	}

	buflen = o.max_bs + o.nr_segs * o.seg_gap + 4096;
	mdlen = o.max_bs / o.lba_size * o.md_size + 4096;
	for (unsigned int i = 0; i < o.qd; i++) {
		if (posix_memalign(&slots[i].buf, 4096, buflen) ||
		    (o.md_size && posix_memalign(&slots[i].md, 4096, mdlen))) {
			fprintf(stderr, "nvme-pt: out of memory\n");
			return 1;
		}
		memset(slots[i].buf, 0, buflen);
		if (o.md_size)
			memset(slots[i].md, 0, mdlen);
		iov[i].iov_base = slots[i].buf;
		iov[i].iov_len = buflen;
	}
	if (o.unmapped) {
		/* An address range that was mapped and is no longer. */
		unmapped_area = mmap(NULL, buflen, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (unmapped_area == MAP_FAILED || munmap(unmapped_area, buflen)) {
			fprintf(stderr, "nvme-pt: mmap/munmap: %s\n", strerror(errno));
			return 1;
		}
	}
	if (o.fixed_bufs && (ret = io_uring_register_buffers(&ring, iov, o.qd))) {
		fprintf(stderr, "nvme-pt: register buffers: %s\n", strerror(-ret));
		return 1;
	}
	if (o.fixed_file && (ret = io_uring_register_files(&ring, &fd, 1))) {
		fprintf(stderr, "nvme-pt: register file: %s\n", strerror(-ret));
		return 1;
	}

	struct ticks t0 = others_ticks();

	window_begin();
	start = now_ns();
	deadline = start + o.seconds * 1000000000ull;
	if (!strcmp(o.op, "verify")) {
		uint64_t seed = o.seed;

		do {
			ret = pass(false, seed, 0);
			if (!ret)
				ret = pass(true, seed, nr_sizes / 2);
			seed++;
		} while (!ret && !nr_errors && !stop && now_ns() < deadline);
	} else {
		unsigned int opcode = !strcmp(o.op, "read") ? NVME_CMD_READ :
				      !strcmp(o.op, "write") ? NVME_CMD_WRITE : o.opcode;

		if (!o.count && !o.seconds)
			o.count = 1000;
		ret = random_cmds(opcode, deadline);
	}
	ns = now_ns() - start;
	window_end();
	struct ticks t1 = others_ticks();

	printf("nvme-pt: dev=%s nsid=%u op=%s poll=%d qd=%u ios=%" PRIu64 " bytes=%" PRIu64
	       " verified=%" PRIu64 " expected_results=%" PRIu64 " errors=%" PRIu64
	       " ns=%" PRIu64 " iops=%" PRIu64 " obusy=%llu oticks=%llu\n",
	       o.dev, nsid, o.op, o.poll, o.qd, nr_ios, nr_bytes, nr_verified,
	       nr_expected, nr_errors, ns, ns ? nr_ios * UINT64_C(1000000000) / ns : 0,
	       t1.busy - t0.busy, t1.all - t0.all);
	if (ret || nr_errors || !nr_ios)
		return 1;
	if (o.expect && nr_expected != nr_ios)
		return 1;
	return 0;
}
