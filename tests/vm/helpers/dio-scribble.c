// SPDX-License-Identifier: GPL-2.0
/*
 * dio-scribble: a process that changes its O_DIRECT buffers while its
 * reads are in flight, for vm/io-buffer-scribble; and a byte count of
 * where two images differ. Built on the host (tests/vm/helpers/Makefile),
 * run in the guest.
 *
 *   dio-scribble read DEV OFFSET LENGTH [options]
 *	Reads [OFFSET, OFFSET + LENGTH) of DEV in blocks of --bs bytes, each
 *	block once per pass in a random order, with --readers threads, each
 *	reading into its own page-aligned buffer with O_DIRECT, while
 *	--scribblers threads fill every reader's buffer with --pattern, over
 *	and over, until the last read returns. What the reads return is not
 *	looked at: the point is what a block device keeps of the caller's
 *	pages. Prints one line of counts (see read_report()).
 *
 *   dio-scribble compare A B [--pattern BYTE] [--bs BYTES]
 *	Compares files (or devices) A and B, which must be as long: prints
 *	the bytes compared, how many differ, how many of those hold the
 *	pattern in A, and how many --bs blocks differ, with the first
 *	differing offset. Exit 0 when they are the same, 1 when they differ.
 *
 * Exit status: 0 done (compare: the same), 1 compare found differences,
 * 2 usage, 3 an I/O or system error (message on stderr).
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum {
	EX_OK		= 0,
	EX_DIFFER	= 1,
	EX_USAGE	= 2,
	EX_ERROR	= 3,
};

#define MAX_THREADS	64

static const char *prog = "dio-scribble";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s read DEV OFFSET LENGTH [options]\n"
"       %s compare A B [--pattern BYTE] [--bs BYTES]\n"
"\n"
"read: O_DIRECT reads of DEV while other threads overwrite the buffers.\n"
"  -b, --bs BYTES         block (read) size, a multiple of 4096 (65536)\n"
"  -r, --readers N        reader threads, one buffer each (4)\n"
"  -s, --scribblers N     threads overwriting every buffer (4)\n"
"  -p, --passes N         reads of each block, a pass at a time (1)\n"
"  -P, --pattern BYTE     what the scribblers write (0xa5)\n"
"      --seed N           the order of the reads (1)\n"
"compare: count the bytes where A and B differ (A's pattern bytes too).\n"
"  -h, --help             show this help and exit\n"
"\n"
"Exit status: 0 done (compare: the same), 1 compare found differences,\n"
"2 usage, 3 I/O or system error.\n",
		prog, prog);
}

static const struct option long_opts[] = {
	{ "bs",		required_argument, NULL, 'b' },
	{ "readers",	required_argument, NULL, 'r' },
	{ "scribblers",	required_argument, NULL, 's' },
	{ "passes",	required_argument, NULL, 'p' },
	{ "pattern",	required_argument, NULL, 'P' },
	{ "seed",	required_argument, NULL, 'S' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct opts {
	uint64_t	bs;
	unsigned int	readers;
	unsigned int	scribblers;
	unsigned int	passes;
	unsigned char	pattern;
	uint64_t	seed;
};

/* A number, decimal or 0x hex; exits with EX_USAGE if it is not one. */
static uint64_t parse_num(const char *what, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "%s: %s: not a number: '%s'\n", prog, what, s);
		exit(EX_USAGE);
	}
	return v;
}

static void die(const char *what, const char *name)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, name, strerror(errno));
	exit(EX_ERROR);
}

/* ---- read ----------------------------------------------------------- */

/*
 * One reader's buffer. @begun counts the scribblers' fills of it that
 * started, @ended those that finished: a read that started when @begun
 * was B and returned when @ended was E saw at least E - B fills begin and
 * end while it was in flight (at most B of the fills ended by then began
 * before it).
 */
struct buf {
	unsigned char	*p;
	uint64_t	begun;
	uint64_t	ended;
};

static struct {
	const char	*dev;
	int		fd;
	uint64_t	offset;
	uint64_t	nblocks;
	uint64_t	*order;		/* passes * nblocks block indexes */
	uint64_t	next;		/* next index into order */
	uint64_t	total;
	struct buf	bufs[MAX_THREADS];
	struct opts	o;
	bool		stop;
	uint64_t	overwritten;	/* reads with a whole fill in flight */
	uint64_t	fills;
	int		error;
} g;

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: enough to shuffle blocks. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void *reader(void *arg)
{
	struct buf *b = arg;
	uint64_t i, blk, b0, e1, mine = 0;
	ssize_t n;

	while ((i = __atomic_fetch_add(&g.next, 1, __ATOMIC_RELAXED)) < g.total) {
		blk = g.order[i];
		b0 = __atomic_load_n(&b->begun, __ATOMIC_ACQUIRE);
		n = pread(g.fd, b->p, g.o.bs, g.offset + blk * g.o.bs);
		e1 = __atomic_load_n(&b->ended, __ATOMIC_ACQUIRE);
		if (n != (ssize_t)g.o.bs) {
			fprintf(stderr, "%s: read of %s at %" PRIu64 ": %s\n",
				prog, g.dev, g.offset + blk * g.o.bs,
				n < 0 ? strerror(errno) : "short read");
			__atomic_store_n(&g.error, 1, __ATOMIC_RELAXED);
			break;
		}
		if (e1 > b0)
			mine++;
	}
	__atomic_fetch_add(&g.overwritten, mine, __ATOMIC_RELAXED);
	return NULL;
}

static void *scribbler(void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg % g.o.readers;
	uint64_t fills = 0;

	while (!__atomic_load_n(&g.stop, __ATOMIC_ACQUIRE)) {
		struct buf *b = &g.bufs[i];

		__atomic_fetch_add(&b->begun, 1, __ATOMIC_ACQ_REL);
		memset(b->p, g.o.pattern, g.o.bs);
		/* The stores land before the fill counts as ended. */
		__atomic_fetch_add(&b->ended, 1, __ATOMIC_ACQ_REL);
		fills++;
		i = (i + 1) % g.o.readers;
	}
	__atomic_fetch_add(&g.fills, fills, __ATOMIC_RELAXED);
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Prints: reads R blocks B bs S readers N scribblers W seconds T
 * overwritten_in_flight O fills F. O counts the reads during which some
 * scribbler filled the whole buffer, start to end.
 */
static void read_report(double secs)
{
	printf("reads %" PRIu64 " blocks %" PRIu64 " bs %" PRIu64
	       " readers %u scribblers %u seconds %.2f"
	       " overwritten_in_flight %" PRIu64 " fills %" PRIu64 "\n",
	       g.total, g.nblocks, g.o.bs, g.o.readers, g.o.scribblers, secs,
	       g.overwritten, g.fills);
}

static int cmd_read(int argc, char **argv, struct opts *o)
{
	pthread_t rt[MAX_THREADS], st[MAX_THREADS];
	uint64_t length, i, j, k, seed;
	unsigned int t;
	double t0;

	if (argc != 3) {
		usage(stderr);
		return EX_USAGE;
	}
	g.dev = argv[0];
	g.offset = parse_num("OFFSET", argv[1]);
	length = parse_num("LENGTH", argv[2]);
	g.o = *o;
	if (!o->bs || o->bs % 4096 || g.offset % 4096 || length % o->bs ||
	    !length) {
		fprintf(stderr, "%s: OFFSET must be 4096-aligned, LENGTH a non-zero multiple of --bs, --bs of 4096\n",
			prog);
		return EX_USAGE;
	}
	if (!o->readers || o->readers > MAX_THREADS || !o->scribblers ||
	    o->scribblers > MAX_THREADS || !o->passes) {
		fprintf(stderr, "%s: --readers and --scribblers 1 to %d, --passes at least 1\n",
			prog, MAX_THREADS);
		return EX_USAGE;
	}
	g.nblocks = length / o->bs;
	g.total = g.nblocks * o->passes;
	g.order = calloc(g.total, sizeof(*g.order));
	if (!g.order)
		die("allocating the order of", g.dev);
	seed = o->seed ? o->seed : 1;
	for (k = 0; k < o->passes; k++) {
		uint64_t *pass = g.order + k * g.nblocks;

		for (i = 0; i < g.nblocks; i++)
			pass[i] = i;
		for (i = g.nblocks - 1; i > 0; i--) {
			uint64_t tmp;

			j = rng_next(&seed) % (i + 1);
			tmp = pass[i];
			pass[i] = pass[j];
			pass[j] = tmp;
		}
	}
	for (t = 0; t < o->readers; t++) {
		g.bufs[t].p = mmap(NULL, o->bs, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				   -1, 0);
		if (g.bufs[t].p == MAP_FAILED)
			die("mapping a buffer for", g.dev);
	}
	g.fd = open(g.dev, O_RDONLY | O_DIRECT);
	if (g.fd < 0)
		die("opening", g.dev);

	for (t = 0; t < o->scribblers; t++) {
		errno = pthread_create(&st[t], NULL, scribbler,
				       (void *)(uintptr_t)t);
		if (errno)
			die("starting a scribbler for", g.dev);
	}
	t0 = now();
	for (t = 0; t < o->readers; t++) {
		errno = pthread_create(&rt[t], NULL, reader, &g.bufs[t]);
		if (errno)
			die("starting a reader of", g.dev);
	}
	for (t = 0; t < o->readers; t++)
		pthread_join(rt[t], NULL);
	__atomic_store_n(&g.stop, true, __ATOMIC_RELEASE);
	for (t = 0; t < o->scribblers; t++)
		pthread_join(st[t], NULL);
	read_report(now() - t0);
	close(g.fd);
	return g.error ? EX_ERROR : EX_OK;
}

/* ---- compare -------------------------------------------------------- */

static int cmd_compare(int argc, char **argv, struct opts *o)
{
	uint64_t pos = 0, differ = 0, pattern = 0, blocks = 0, bad_blocks = 0;
	uint64_t first = UINT64_MAX;
	size_t chunk, n, i;
	unsigned char *a, *b;
	int fa, fb;

	if (argc != 2) {
		usage(stderr);
		return EX_USAGE;
	}
	if (!o->bs || (1 << 20) % o->bs) {
		fprintf(stderr, "%s: compare: --bs must divide 1 MiB\n", prog);
		return EX_USAGE;
	}
	chunk = 1 << 20;
	a = malloc(chunk);
	b = malloc(chunk);
	if (!a || !b)
		die("allocating buffers for", argv[0]);
	fa = open(argv[0], O_RDONLY);
	if (fa < 0)
		die("opening", argv[0]);
	fb = open(argv[1], O_RDONLY);
	if (fb < 0)
		die("opening", argv[1]);
	for (;;) {
		ssize_t ra = pread(fa, a, chunk, pos);
		ssize_t rb = pread(fb, b, chunk, pos);

		if (ra < 0)
			die("reading", argv[0]);
		if (rb < 0)
			die("reading", argv[1]);
		if (ra != rb) {
			fprintf(stderr, "%s: %s and %s differ in length\n",
				prog, argv[0], argv[1]);
			return EX_ERROR;
		}
		if (!ra)
			break;
		n = ra;
		for (i = 0; i < n; i += o->bs) {
			size_t len = n - i < o->bs ? n - i : o->bs, x;
			bool bad = false;

			for (x = i; x < i + len; x++) {
				if (a[x] == b[x])
					continue;
				differ++;
				bad = true;
				if (a[x] == o->pattern)
					pattern++;
				if (first == UINT64_MAX)
					first = pos + x;
			}
			blocks++;
			bad_blocks += bad;
		}
		pos += n;
	}
	printf("bytes %" PRIu64 " differ %" PRIu64 " pattern %" PRIu64
	       " blocks %" PRIu64 " blocks_differ %" PRIu64 " first %" PRId64 "\n",
	       pos, differ, pattern, blocks, bad_blocks,
	       first == UINT64_MAX ? (int64_t)-1 : (int64_t)first);
	close(fa);
	close(fb);
	return differ ? EX_DIFFER : EX_OK;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.bs = 65536, .readers = 4, .scribblers = 4, .passes = 1,
		.pattern = 0xa5, .seed = 1,
	};
	const char *cmd;
	int c;

	if (argc < 2) {
		usage(stderr);
		return EX_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return EX_OK;
	}
	/* Options anywhere after the command (getopt_long permutes). */
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "b:r:s:p:P:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o.bs = parse_num("--bs", optarg);
			break;
		case 'r':
			o.readers = parse_num("--readers", optarg);
			break;
		case 's':
			o.scribblers = parse_num("--scribblers", optarg);
			break;
		case 'p':
			o.passes = parse_num("--passes", optarg);
			break;
		case 'P':
			if (parse_num("--pattern", optarg) > 255) {
				fprintf(stderr, "%s: --pattern is a byte: '%s'\n",
					prog, optarg);
				return EX_USAGE;
			}
			o.pattern = parse_num("--pattern", optarg);
			break;
		case 'S':
			o.seed = parse_num("--seed", optarg);
			break;
		case 'h':
			usage(stdout);
			return EX_OK;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (!strcmp(cmd, "read"))
		return cmd_read(argc - optind, argv + optind, &o);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - optind, argv + optind, &o);
	usage(stderr);
	return EX_USAGE;
}
