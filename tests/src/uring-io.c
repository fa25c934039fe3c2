// SPDX-License-Identifier: GPL-2.0
/*
 * uring-io - O_DIRECT block IO through io_uring, polled or not, for the guest.
 *
 *   verify: write a pattern over a region, read it back with other block
 *           sizes and check every byte; repeat with a new seed while time
 *           remains.  The pattern depends on the seed and on the byte offset,
 *           so a stale or misplaced block is caught.
 *   read:   random reads of one block size (the workload of the bench).
 *   edge:   single IOs at and across the end of the device, each of which
 *           must get the answer the block layer defines: short reads and
 *           writes across the end, 0 for a read at or past it, -ENOSPC for a
 *           write at it.
 *   pread:  random reads of one block size with pread(2), one at a time (psync:
 *           no io_uring), for the bench.
 *   fsync:  random writes of one block size with pwrite(2) through the page
 *           cache, each followed by fsync(2): the small-write workload of a
 *           file system (its journal commits), for the bench.
 *
 * DEV may be a regular file (its size is the region's limit): on a file
 * system, every mode but fsync is O_DIRECT.
 *
 * -O OFFSET moves the region to start at OFFSET, so that several instances
 * can verify disjoint parts of one device.
 *
 * Errors: with -e ERRNO every IO must fail with exactly -ERRNO (used for
 * bad input); with -E ERRNO an IO may fail with -ERRNO (used for fault
 * injection; -E twice allows two errnos): a failed read is counted and not verified, a failed write is
 * written again with pwrite() until it succeeds, so that the region stays
 * verifiable.  Any other failed IO is an error, printed with its result and
 * errno ("res=-11 EAGAIN (Resource temporarily unavailable)"), which the
 * guest scripts name in their failures.  The exit code is 0 only
 * if everything was as expected.  The last line printed is a summary of
 * key=value pairs that the guest scripts parse.
 *
 * -P FILE keeps the number of completed IOs, as a native-endian 64-bit
 * integer, in FILE (mapped shared: a store per completion, no system call),
 * so that a test can tell a stalled worker from a live one while it runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "uring-io"

#include "io-common.h"
#include "others-ticks.h"
#include "window-mark.h"

#define MAX_QD		256
#define MAX_SIZES	16

struct opts {
	const char *dev;
	const char *op;
	unsigned int min_bs, max_bs, qd, batch;
	uint64_t start, region, seed, count;
	unsigned int seconds;
	bool poll, fixed_file, fixed_bufs;
	int expect_errno, allow_errno, allow_errno2;
	unsigned int buf_misalign, off_misalign;
	const char *progress;
};

struct slot {
	void *buf;
	uint64_t off;
	unsigned int len;
	bool busy;
};

static struct opts o = {
	.op = "verify", .min_bs = 512, .max_bs = 16384, .qd = 8, .batch = 1,
	.region = 16 << 20, .seed = 1,
};
static struct io_uring ring;
static struct slot slots[MAX_QD];
static int fd;
static uint64_t nr_ios, nr_bytes, nr_verified, nr_errors, nr_expected_errors;
static uint64_t *progress;	/* -P FILE, mapped; NULL without */
static unsigned int sizes[MAX_SIZES], nr_sizes;
static void usage(void)
{
	fprintf(stderr,
		"usage: uring-io -d DEV [-o verify|read|edge|pread|fsync] [-b MINBS] [-B MAXBS] [-q QD]\n"
		"                [-c BATCH] [-O OFFSET] [-r REGION] [-n COUNT] [-t SECONDS]\n"
		"                [-s SEED] [-p] [-F] [-X] [-e ERRNO | -E ERRNO]\n"
		"                [-a BUFMISALIGN] [-A OFFMISALIGN] [-P PROGRESSFILE]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "d:o:b:B:q:c:O:r:n:t:s:pFXe:E:a:A:P:")) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'o': o.op = optarg; break;
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
		case 'e': o.expect_errno = num(optarg); break;
		case 'E':
			if (o.allow_errno)
				o.allow_errno2 = num(optarg);
			else
				o.allow_errno = num(optarg);
			break;
		case 'a': o.buf_misalign = num(optarg); break;
		case 'A': o.off_misalign = num(optarg); break;
		case 'P': o.progress = optarg; break;
		default: usage();
		}
	}
	if (!o.dev || !o.qd || o.qd > MAX_QD || !o.batch || o.batch > o.qd ||
	    o.min_bs < 512 || o.max_bs < o.min_bs || (o.min_bs & (o.min_bs - 1)) ||
	    (o.max_bs & (o.max_bs - 1)) || o.buf_misalign >= 4096 ||
	    (o.expect_errno && o.allow_errno) || o.start % 512)
		usage();
	if (strcmp(o.op, "verify") && strcmp(o.op, "read") && strcmp(o.op, "edge") &&
	    strcmp(o.op, "pread") && strcmp(o.op, "fsync"))
		usage();
	for (unsigned int bs = o.min_bs; bs <= o.max_bs && nr_sizes < MAX_SIZES; bs *= 2)
		sizes[nr_sizes++] = bs;
}

/* Whether @err is an errno that -E allows. */
static bool allowed(int err)
{
	return err == o.allow_errno || (o.allow_errno2 && err == o.allow_errno2);
}

/*
 * Write @s again, synchronously, until it succeeds or fails other than with
 * the allowed errno; the buffer still holds what the failed write carried.
 */
static int rewrite(struct slot *s)
{
	for (;;) {
		ssize_t ret = pwrite(fd, s->buf, s->len, s->off);

		if (ret == s->len)
			return 0;
		if (ret >= 0 || !allowed(errno)) {
			fprintf(stderr, "uring-io: rewrite at %" PRIu64 " len %u: %s\n",
				s->off, s->len, ret < 0 ? strerror(errno) : "short write");
			return -1;
		}
		nr_expected_errors++;
	}
}

/* One IO completed: count it, and publish the count for -P. */
static void count_io(void)
{
	nr_ios++;
	progress_set(progress, nr_ios);
}

/* Account one completion; returns its slot. */
static struct slot *complete(struct io_uring_cqe *cqe, bool is_read, uint64_t seed)
{
	struct slot *s = &slots[cqe->user_data];

	s->busy = false;
	count_io();
	if (cqe->res < 0) {
		if (o.expect_errno && cqe->res == -o.expect_errno) {
			nr_expected_errors++;
		} else if (o.allow_errno && allowed(-cqe->res)) {
			nr_expected_errors++;
			if (!is_read && rewrite(s))
				nr_errors++;
		} else {
			nr_errors++;
			fprintf(stderr, "uring-io: %s at %" PRIu64 " len %u: res=%d %s (%s)\n",
				is_read ? "read" : "write", s->off, s->len, cqe->res,
				strerrorname_np(-cqe->res) ?: "?", strerror(-cqe->res));
		}
	} else if (o.expect_errno) {
		nr_errors++;
		fprintf(stderr, "uring-io: %s at %" PRIu64 " len %u returned %d, expected -%s\n",
			is_read ? "read" : "write", s->off, s->len, cqe->res,
			strerrorname_np(o.expect_errno) ?: "?");
	} else if ((unsigned int)cqe->res != s->len) {
		nr_errors++;
		fprintf(stderr, "uring-io: short %s at %" PRIu64 ": %d of %u\n",
			is_read ? "read" : "write", s->off, cqe->res, s->len);
	} else {
		nr_bytes += s->len;
		if (is_read && !strcmp(o.op, "verify")) {
			if (check("data", s->buf, s->off, s->len, seed))
				nr_verified++;
			else
				nr_errors++;
		}
	}
	return s;
}

/* Reap at least @min completions. */
static int reap(unsigned int min, bool is_read, uint64_t seed)
{
	struct io_uring_cqe *cqe;
	unsigned int got = 0;
	int ret;

	while (got < min) {
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret) {
			fprintf(stderr, "uring-io: wait_cqe: %s\n", strerror(-ret));
			return ret;
		}
		do {
			complete(cqe, is_read, seed);
			io_uring_cqe_seen(&ring, cqe);
			got++;
		} while (!io_uring_peek_cqe(&ring, &cqe));
	}
	return 0;
}

static void prep(struct io_uring_sqe *sqe, unsigned int i, bool is_read)
{
	struct slot *s = &slots[i];
	int f = o.fixed_file ? 0 : fd;
	void *buf = (char *)s->buf + o.buf_misalign;
	uint64_t off = s->off + o.off_misalign;

	if (o.fixed_bufs) {
		if (is_read)
			io_uring_prep_read_fixed(sqe, f, buf, s->len, off, i);
		else
			io_uring_prep_write_fixed(sqe, f, buf, s->len, off, i);
	} else {
		if (is_read)
			io_uring_prep_read(sqe, f, buf, s->len, off);
		else
			io_uring_prep_write(sqe, f, buf, s->len, off);
	}
	if (o.fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = i;
	s->busy = true;
}

static int free_slot(void)
{
	for (unsigned int i = 0; i < o.qd; i++)
		if (!slots[i].busy)
			return i;
	return -1;
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
			if (!is_read)
				fill(slots[i].buf, slots[i].off, len, seed);
			prep(io_uring_get_sqe(&ring), i, is_read);
			off += len;
			inflight++;
			if (++queued == o.batch || off >= o.region) {
				int ret = io_uring_submit(&ring);

				if (ret < 0) {
					fprintf(stderr, "uring-io: submit: %s\n", strerror(-ret));
					return ret;
				}
				queued = 0;
			}
		}
		uint64_t before = nr_ios;

		if (reap(inflight < o.batch ? inflight : o.batch, is_read, seed))
			return -1;
		inflight -= nr_ios - before;
	}
	return 0;
}


/* Random reads of min_bs, QD deep, submitted and reaped in batches. */
static int random_reads(uint64_t deadline)
{
	uint64_t blocks = o.region / o.min_bs, done = 0;
	unsigned int inflight = 0;

	while (true) {
		bool more = !stop && (o.count ? done < o.count : now_ns() < deadline);
		unsigned int n = 0;

		while (more && inflight + n < o.qd && n < o.batch) {
			/* buffers are shared round-robin: the data is not looked at */
			int i = (inflight + n) % o.qd;

			slots[i].off = o.start + (rnd() % blocks) * o.min_bs;
			slots[i].len = o.min_bs;
			prep(io_uring_get_sqe(&ring), i, true);
			n++;
			done++;
			more = o.count ? done < o.count : true;
		}
		if (n) {
			int ret = io_uring_submit(&ring);

			if (ret < 0) {
				fprintf(stderr, "uring-io: submit: %s\n", strerror(-ret));
				return ret;
			}
			inflight += n;
		}
		if (!inflight)
			return 0;
		uint64_t before = nr_ios;

		if (reap(inflight < o.batch ? inflight : o.batch, true, 0))
			return -1;
		inflight -= nr_ios - before;
	}
}

/* -o pread and -o fsync: @o.count synchronous IOs, no io_uring. */
static int sync_ios(bool is_read)
{
	uint64_t blocks = o.region / o.min_bs;

	for (uint64_t i = 0; i < o.count && !stop; i++) {
		uint64_t off = o.start + (rnd() % blocks) * o.min_bs;
		ssize_t ret;

		if (is_read)
			ret = pread(fd, slots[0].buf, o.min_bs, off);
		else
			ret = pwrite(fd, slots[0].buf, o.min_bs, off);
		if (ret != (ssize_t)o.min_bs) {
			fprintf(stderr, "uring-io: %s of %u at %" PRIu64 ": %s\n",
				is_read ? "pread" : "pwrite", o.min_bs, off,
				ret < 0 ? strerror(errno) : "short");
			nr_errors++;
			return -1;
		}
		if (!is_read && fsync(fd)) {
			fprintf(stderr, "uring-io: fsync: %s\n", strerror(errno));
			nr_errors++;
			return -1;
		}
		count_io();
		nr_bytes += o.min_bs;
	}
	return 0;
}

/* One IO of @len at @off, alone in the ring; returns its result. */
static int one(bool is_read, uint64_t off, unsigned int len)
{
	struct io_uring_cqe *cqe;
	int ret;

	slots[0].off = off;
	slots[0].len = len;
	if (!is_read)
		memset(slots[0].buf, 0xa5, len);
	prep(io_uring_get_sqe(&ring), 0, is_read);
	ret = io_uring_submit(&ring);
	if (ret < 0)
		return ret;
	do
		ret = io_uring_wait_cqe(&ring, &cqe);
	while (ret == -EINTR);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	slots[0].busy = false;
	return ret;
}

/* IO at and across the end of the device: see the top of this file. */
static int edge(uint64_t devsize)
{
	const struct {
		bool is_read;
		uint64_t off;
		int want;
	} cases[] = {
		{ true, devsize - o.min_bs, o.min_bs },	/* short read */
		{ true, devsize, 0 },			/* read at the end */
		{ true, devsize + o.max_bs, 0 },	/* read past it */
		{ false, devsize - o.min_bs, o.min_bs },/* short write */
		{ false, devsize, -ENOSPC },		/* write at the end */
	};

	if (o.max_bs <= o.min_bs) {
		fprintf(stderr, "uring-io: edge needs -B above -b\n");
		return -1;
	}
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = one(cases[i].is_read, cases[i].off, o.max_bs);

		count_io();
		if (got != cases[i].want) {
			nr_errors++;
			fprintf(stderr, "uring-io: %s of %u at %" PRIu64 " (device size %" PRIu64
				") returned %d, expected %d\n", cases[i].is_read ? "read" : "write",
				o.max_bs, cases[i].off, devsize, got, cases[i].want);
		} else if (got > 0) {
			nr_bytes += got;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct io_uring_params p = { 0 };
	uint64_t devsize, start, deadline;
	int ret;

	parse(argc, argv);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (o.progress) {
		progress = progress_map(o.progress);
		if (!progress)
			return 1;
	}
	fd = open(o.dev, O_RDWR | (strcmp(o.op, "fsync") ? O_DIRECT : 0));
	if (fd < 0) {
		fprintf(stderr, "uring-io: open %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	struct stat st;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		devsize = st.st_size;
	} else if (ioctl(fd, BLKGETSIZE64, &devsize)) {
		fprintf(stderr, "uring-io: BLKGETSIZE64 %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	if (o.start >= devsize) {
		fprintf(stderr, "uring-io: -O %" PRIu64 " is beyond the end of %s\n", o.start, o.dev);
		return 1;
	}
	if (o.region > devsize - o.start)
		o.region = devsize - o.start;

	if (o.poll)
		p.flags |= IORING_SETUP_IOPOLL;
	ret = io_uring_queue_init_params(o.qd * 2, &ring, &p);
	if (ret) {
		fprintf(stderr, "uring-io: io_uring setup: %s\n", strerror(-ret));
		return 1;
	}

	struct iovec iov[MAX_QD];

	for (unsigned int i = 0; i < o.qd; i++) {
		if (posix_memalign(&slots[i].buf, 4096, o.max_bs + 4096))
			return 1;
		iov[i].iov_base = slots[i].buf;
		iov[i].iov_len = o.max_bs + 4096;
	}
	if (o.fixed_bufs && (ret = io_uring_register_buffers(&ring, iov, o.qd))) {
		fprintf(stderr, "uring-io: register buffers: %s\n", strerror(-ret));
		return 1;
	}
	if (o.fixed_file && (ret = io_uring_register_files(&ring, &fd, 1))) {
		fprintf(stderr, "uring-io: register file: %s\n", strerror(-ret));
		return 1;
	}

	struct ticks t0 = others_ticks();

	window_begin();
	start = now_ns();
	deadline = start + o.seconds * 1000000000ull;
	if (!strcmp(o.op, "edge")) {
		ret = edge(devsize);
	} else if (!strcmp(o.op, "read")) {
		if (!o.count && !o.seconds)
			o.count = 10000;
		ret = random_reads(deadline);
	} else if (!strcmp(o.op, "pread") || !strcmp(o.op, "fsync")) {
		if (!o.count)
			o.count = 10000;
		memset(slots[0].buf, 0x5a, o.min_bs);
		ret = sync_ios(!strcmp(o.op, "pread"));
	} else {
		uint64_t seed = o.seed;

		do {
			ret = pass(false, seed, 0);
			if (!ret)
				ret = pass(true, seed, nr_sizes / 2);
			seed++;
		} while (!ret && !nr_errors && !stop && now_ns() < deadline);
	}
	uint64_t ns = now_ns() - start;
	window_end();
	struct ticks t1 = others_ticks();

	printf("uring-io: dev=%s op=%s poll=%d qd=%u ios=%" PRIu64 " bytes=%" PRIu64
	       " verified=%" PRIu64 " expected_errors=%" PRIu64 " errors=%" PRIu64
	       " ns=%" PRIu64 " iops=%" PRIu64 " obusy=%llu oticks=%llu\n",
	       o.dev, o.op, o.poll, o.qd, nr_ios, nr_bytes, nr_verified,
	       nr_expected_errors, nr_errors, ns, ns ? nr_ios * UINT64_C(1000000000) / ns : 0,
	       t1.busy - t0.busy, t1.all - t0.all);
	if (ret || nr_errors)
		return 1;
	if (o.expect_errno && nr_expected_errors != nr_ios)
		return 1;
	return 0;
}
