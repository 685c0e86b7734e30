// SPDX-License-Identifier: GPL-2.0
/*
 * test_bypass: what the cache takes in, in drivers/md/hcache/bypass.c:
 * sequential stream detection (one stream, interleaved streams, the
 * least-recently-used slot going first, overlapping and backing-up I/O,
 * converging streams, random workloads that must never look sequential),
 * every rule of the bypass decision, the reason names, the admission
 * policies (second_access's ghost table against a hot set and a scan) and
 * the sysfs size parser.
 *
 * The random workloads' seed is random and printed; set HC_TEST_SEED to
 * rerun one.
 */

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bypass.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define KIB		1024ULL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define SECS(bytes)	((u32)((bytes) >> 9))

/*
 * Streams in use, checking that no two expect the same sector, that a
 * free slot holds no run and a used one does, and that the LRU order is
 * a permutation of the slots with every free slot before any in use.
 */
static unsigned int used_streams(const struct hc_seq_detect *d)
{
	unsigned int i, j, used = 0;
	bool seen[HC_SEQ_STREAMS] = { false }, in_use = false;

	for (i = 0; i < HC_SEQ_STREAMS; i++) {
		if (d->next[i] == HC_SEQ_FREE) {
			CHECK(!d->bytes[i], "free slot %u has a run", i);
			continue;
		}
		used++;
		CHECK(d->bytes[i], "stream %u in use with an empty run", i);
		for (j = 0; j < i; j++)
			CHECK(d->next[j] != d->next[i],
			      "streams %u and %u both expect sector %llu", j, i,
			      (unsigned long long)d->next[i]);
	}
	for (i = 0; i < HC_SEQ_STREAMS; i++) {
		unsigned int slot = d->lru[i];

		CHECK(slot < HC_SEQ_STREAMS && !seen[slot],
		      "lru[%u] = %u: not a permutation of the slots", i, slot);
		if (slot >= HC_SEQ_STREAMS)
			continue;
		seen[slot] = true;
		if (d->next[slot] != HC_SEQ_FREE)
			in_use = true;
		else
			CHECK(!in_use, "free slot %u after a used one in the LRU order",
			      slot);
	}
	return used;
}

/* ---- Sequential detection ----------------------------------------------- */

static void test_seq_one_stream(void)
{
	struct hc_seq_detect d, before;
	u64 run;
	int i;

	printf("one stream: runs grow by each I/O that starts where the last ended\n");
	memset(&d, 0xa5, sizeof(d));
	hc_seq_init(&d);
	CHECK_EQ_U64(used_streams(&d), 0, "fresh detector in use");

	/* 512 KiB reads from sector 0: runs of 512 KiB, 1 MiB, ... */
	for (i = 1; i <= 10; i++) {
		run = hc_seq_note(&d, (u64)(i - 1) * SECS(512 * KIB),
				  SECS(512 * KIB));
		CHECK_EQ_U64(run, i * 512 * KIB, "run after each 512 KiB read");
	}
	CHECK_EQ_U64(used_streams(&d), 1, "a single stream");

	/* An I/O of no sectors is not noted. */
	before = d;
	CHECK_EQ_U64(hc_seq_note(&d, 10 * SECS(512 * KIB), 0), 0,
		     "empty I/O");
	CHECK(!memcmp(&before, &d, sizeof(d)), "empty I/O changed the state");

	/* One I/O as large as the cutoff is a run of the cutoff by itself. */
	hc_seq_init(&d);
	CHECK_EQ_U64(hc_seq_note(&d, 12345, SECS(HC_SEQ_CUTOFF_DEFAULT)),
		     HC_SEQ_CUTOFF_DEFAULT, "one 4 MiB I/O");

	/* Odd sizes and sector 0 are nothing special. */
	hc_seq_init(&d);
	CHECK_EQ_U64(hc_seq_note(&d, 0, 1), 512, "first sector");
	CHECK_EQ_U64(hc_seq_note(&d, 1, 7), 4096, "then 7 more");
	CHECK_EQ_U64(hc_seq_note(&d, 8, 3), 4096 + 1536, "then 3 more");
	CHECK_EQ_U64(hc_seq_note(&d, 0, 1), 512, "back to sector 0");
}

static void test_seq_interleaved(void)
{
	struct hc_seq_detect d;
	unsigned int n, i, round;
	bool ok;

	printf("interleaved streams: each keeps its own run, up to %u of them\n",
	       HC_SEQ_STREAMS);
	/* Two readers alternating, one of them writing-sized small I/O. */
	hc_seq_init(&d);
	for (round = 1; round <= 64; round++) {
		CHECK_EQ_U64(hc_seq_note(&d, (round - 1) * 256, 256),
			     round * 128 * KIB, "reader A");
		CHECK_EQ_U64(hc_seq_note(&d, GIB / 512 + (round - 1) * 8, 8),
			     round * 4 * KIB, "reader B");
	}
	CHECK_EQ_U64(used_streams(&d), 2, "two streams");

	/*
	 * n readers round robin, each 64 KiB at a time in its own region:
	 * up to HC_SEQ_STREAMS all grow; with one more, each I/O evicts
	 * the stream due next and nothing ever grows (the documented limit).
	 */
	for (n = 1; n <= HC_SEQ_STREAMS + 1; n++) {
		hc_seq_init(&d);
		ok = true;
		for (round = 1; round <= 8; round++) {
			for (i = 0; i < n; i++) {
				u64 want = n <= HC_SEQ_STREAMS ?
					   round * 64 * KIB : 64 * KIB;
				u64 got = hc_seq_note(&d, (u64)i << 30 |
						      (round - 1) * 128, 128);

				if (got != want) {
					CHECK(got == want,
					      "%u readers, reader %u round %u: run %llu, want %llu",
					      n, i, round,
					      (unsigned long long)got,
					      (unsigned long long)want);
					ok = false;
				}
			}
		}
		used_streams(&d);
		if (ok && (n == 1 || n == HC_SEQ_STREAMS ||
			   n == HC_SEQ_STREAMS + 1))
			printf("  %2u readers round robin: runs %s\n", n,
			       n <= HC_SEQ_STREAMS ? "grow" : "all forgotten");
	}
}

static void test_seq_lru(void)
{
	struct hc_seq_detect d;
	unsigned int i;

	printf("a new stream replaces the least recently used one\n");
	hc_seq_init(&d);
	/* Streams 0..15, one 4 KiB I/O each, stream i at i GiB. */
	for (i = 0; i < HC_SEQ_STREAMS; i++)
		hc_seq_note(&d, (u64)i << 21, 8);
	/* Touch all but stream 5, so stream 5 is the oldest. */
	for (i = 0; i < HC_SEQ_STREAMS; i++)
		if (i != 5)
			CHECK_EQ_U64(hc_seq_note(&d, ((u64)i << 21) + 8, 8),
				     8 * KIB, "second I/O of a stream");
	/* A new stream takes stream 5's slot ... */
	CHECK_EQ_U64(hc_seq_note(&d, 99ULL << 21, 8), 4 * KIB, "new stream");
	CHECK_EQ_U64(used_streams(&d), HC_SEQ_STREAMS, "slots in use");
	/* ... so every other stream goes on, and stream 5 starts over. */
	for (i = 0; i < HC_SEQ_STREAMS; i++)
		if (i != 5)
			CHECK_EQ_U64(hc_seq_note(&d, ((u64)i << 21) + 16, 8),
				     12 * KIB, "surviving stream");
	CHECK_EQ_U64(hc_seq_note(&d, (5ULL << 21) + 8, 8), 4 * KIB,
		     "evicted stream 5");
	/* Its return took the slot of the new stream, by then the oldest. */
	CHECK_EQ_U64(hc_seq_note(&d, (99ULL << 21) + 8, 8), 4 * KIB,
		     "stream 99, evicted in turn");
	used_streams(&d);
}

static void test_seq_overlap(void)
{
	struct hc_seq_detect d;
	unsigned int i;

	printf("overlapping and backing-up I/O is not sequential\n");
	hc_seq_init(&d);
	CHECK_EQ_U64(hc_seq_note(&d, 1000, 8), 4 * KIB, "stream at 1000");
	CHECK_EQ_U64(hc_seq_note(&d, 1008, 8), 8 * KIB, "continued to 1016");

	/* Overlapping the last I/O: a run of its own. */
	CHECK_EQ_U64(hc_seq_note(&d, 1012, 8), 4 * KIB, "overlap 1012..1020");
	/* Re-reading the last block, and stepping back: the same. */
	CHECK_EQ_U64(hc_seq_note(&d, 1008, 8), 4 * KIB, "re-read 1008..1016");
	CHECK_EQ_U64(hc_seq_note(&d, 1000, 16), 8 * KIB, "back to 1000..1016");
	CHECK_EQ_U64(hc_seq_note(&d, 1000, 4), 2 * KIB, "back to 1000..1004");
	/* Whatever overlapped, the stream goes on where it was. */
	CHECK_EQ_U64(hc_seq_note(&d, 1016, 8), 12 * KIB, "continued to 1024");
	used_streams(&d);

	/*
	 * Stepping back to sector 0 continues no stream, not even an unused
	 * slot (which also holds 0): the stream at 8 keeps its run.
	 */
	hc_seq_init(&d);
	CHECK_EQ_U64(hc_seq_note(&d, 4, 4), 2 * KIB, "stream at 4..8");
	CHECK_EQ_U64(hc_seq_note(&d, 0, 8), 4 * KIB, "back to 0..8");
	CHECK_EQ_U64(hc_seq_note(&d, 8, 8), 6 * KIB, "stream on to 16");
	CHECK_EQ_U64(used_streams(&d), 1, "one stream");

	/* A stream re-reading its tail forever pushes no other stream out. */
	hc_seq_init(&d);
	for (i = 0; i < HC_SEQ_STREAMS; i++)
		hc_seq_note(&d, (u64)i << 21, 8);
	for (i = 0; i < 1000; i++)
		CHECK_EQ_U64(hc_seq_note(&d, 0, 8), 4 * KIB, "tail re-read");
	CHECK_EQ_U64(used_streams(&d), HC_SEQ_STREAMS, "slots in use");
	for (i = 0; i < HC_SEQ_STREAMS; i++)
		CHECK_EQ_U64(hc_seq_note(&d, ((u64)i << 21) + 8, 8), 8 * KIB,
			     "every stream survived the re-reads");
}

static void test_seq_converge(void)
{
	struct hc_seq_detect d;

	printf("a stream that catches up with another absorbs it\n");
	hc_seq_init(&d);
	CHECK_EQ_U64(hc_seq_note(&d, 0, 8), 4 * KIB, "X: 0..8");
	CHECK_EQ_U64(hc_seq_note(&d, 12, 4), 2 * KIB, "Y: 12..16");
	CHECK_EQ_U64(used_streams(&d), 2, "X and Y");
	/* X reaches 16, where Y also expects to go on: Y goes. */
	CHECK_EQ_U64(hc_seq_note(&d, 8, 8), 8 * KIB, "X: 8..16");
	CHECK_EQ_U64(used_streams(&d), 1, "only X");
	CHECK_EQ_U64(hc_seq_note(&d, 16, 8), 12 * KIB, "X: 16..24");
}

/* xorshift64*: the same sequence everywhere for a given seed. */
static u64 rnd_state;

static u64 rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static void test_seq_random(u64 seed)
{
	static const struct {
		const char *what;
		u64 dev_bytes;		/* device size */
		u32 max_sectors;	/* I/O of 8 .. this many sectors */
	} loads[] = {
		{ "4-256 KiB over 1 TiB", 1ULL << 40, 512 },
		{ "4-64 KiB over 64 MiB", 64 * MIB, 128 },
		{ "4-8 KiB over 1 MiB", MIB, 16 },
	};
	unsigned int l, i, sequential = 0;

	printf("random workloads never reach the default cutoff (seed %llu)\n",
	       (unsigned long long)seed);
	rnd_state = seed ? seed : 1;
	for (l = 0; l < ARRAY_LEN(loads); l++) {
		u64 blocks = loads[l].dev_bytes / 4096, max_run = 0;
		struct hc_seq_detect d;

		hc_seq_init(&d);
		for (i = 0; i < 200000; i++) {
			/* 4 KiB-aligned, as file systems issue them. */
			u32 sectors = 8 * (1 + rnd() % (loads[l].max_sectors / 8));
			u64 sector = rnd() % (blocks - sectors / 8) * 8;
			u64 run = hc_seq_note(&d, sector, sectors);

			if (run > max_run)
				max_run = run;
			if (run > (u64)sectors << 9)
				sequential++;
			if (!(i % 50000))
				used_streams(&d);
		}
		CHECK(max_run < HC_SEQ_CUTOFF_DEFAULT,
		      "%s: a run of %llu bytes", loads[l].what,
		      (unsigned long long)max_run);
		printf("  %s: longest run %llu KiB\n", loads[l].what,
		       (unsigned long long)(max_run / KIB));
	}
	printf("  %u of %u random I/O happened to continue a stream\n",
	       sequential, (unsigned int)(ARRAY_LEN(loads) * 200000));
}

/* ---- The bypass decision -------------------------------------------------- */

static void test_reason_names(void)
{
	static const char *const want[HC_BYPASS_NR] = {
		"none", "sequential", "full", "mode", "policy",
	};
	unsigned int r, s;

	printf("bypass reason names\n");
	for (r = 0; r < HC_BYPASS_NR; r++) {
		const char *n = hc_bypass_reason_name(r);

		CHECK(n && !strcmp(n, want[r]), "reason %u named %s, want %s",
		      r, n ? n : "(null)", want[r]);
		for (s = 0; s < r; s++)
			CHECK(strcmp(n, hc_bypass_reason_name(s)),
			      "reasons %u and %u both named %s", s, r, n);
	}
	CHECK(!strcmp(hc_bypass_reason_name(HC_BYPASS_NR), "invalid"), "NR");
	CHECK(!strcmp(hc_bypass_reason_name((enum hc_bypass_reason)-1),
		      "invalid"), "-1");
}

static const char *rw(bool write)
{
	return write ? "write" : "read";
}

static const char *mode_name(unsigned int mode)
{
	static const char *const names[] = {
		"writethrough", "writeback", "writearound", "none",
	};

	return mode < ARRAY_LEN(names) ? names[mode] : "unknown";
}

#define WT	HC_MODE_WRITETHROUGH
#define WB	HC_MODE_WRITEBACK
#define WA	HC_MODE_WRITEAROUND
#define NO	HC_MODE_NONE
#define CUT	HC_SEQ_CUTOFF_DEFAULT
#define R	false
#define W	true

static void test_decide_table(void)
{
	static const struct {
		struct hc_bypass_in in;
		enum hc_bypass_reason want;
		const char *why;
	} cases[] = {
		/* Rule 1: mode none, or unknown, bypasses everything. */
		{ { R, NO, 0, CUT, 100 }, HC_BYPASS_MODE, "none: read" },
		{ { W, NO, 0, CUT, 100 }, HC_BYPASS_MODE, "none: write" },
		{ { R, NO, CUT, CUT, 0 }, HC_BYPASS_MODE,
		  "none: mode wins over sequential" },
		{ { W, NO, 0, CUT, 0 }, HC_BYPASS_MODE,
		  "none: mode wins over full" },
		{ { R, HC_MODE_NR, 0, CUT, 100 }, HC_BYPASS_MODE,
		  "unknown mode: read" },
		{ { W, 15, 0, CUT, 100 }, HC_BYPASS_MODE,
		  "unknown mode: write" },
		/* Rule 2: writearound bypasses writes, reads go on. */
		{ { W, WA, 0, CUT, 100 }, HC_BYPASS_MODE, "writearound: write" },
		{ { W, WA, CUT, CUT, 0 }, HC_BYPASS_MODE,
		  "writearound: mode wins for writes" },
		{ { R, WA, 0, CUT, 100 }, HC_BYPASS_NONE, "writearound: read" },
		{ { R, WA, CUT, CUT, 100 }, HC_BYPASS_SEQUENTIAL,
		  "writearound: sequential read" },
		{ { R, WA, 0, CUT, 0 }, HC_BYPASS_NONE,
		  "writearound: read into a full cache" },
		/* Rule 3: the sequential cutoff, for reads and writes. */
		{ { R, WT, CUT - 1, CUT, 100 }, HC_BYPASS_NONE,
		  "read one byte under the cutoff" },
		{ { R, WT, CUT, CUT, 100 }, HC_BYPASS_SEQUENTIAL,
		  "read at the cutoff" },
		{ { R, WB, ~0ULL, CUT, 100 }, HC_BYPASS_SEQUENTIAL,
		  "huge run" },
		{ { W, WB, CUT, CUT, 100 }, HC_BYPASS_SEQUENTIAL,
		  "writeback: write at the cutoff" },
		{ { W, WT, CUT + 1, CUT, 100 }, HC_BYPASS_SEQUENTIAL,
		  "writethrough: write over the cutoff" },
		{ { R, WT, ~0ULL, 0, 100 }, HC_BYPASS_NONE,
		  "cutoff 0 is off" },
		{ { W, WB, ~0ULL, 0, 100 }, HC_BYPASS_NONE,
		  "cutoff 0 is off for writes" },
		{ { R, WT, 4096, 4096, 100 }, HC_BYPASS_SEQUENTIAL,
		  "a 4 KiB cutoff" },
		{ { W, WB, CUT, CUT, 0 }, HC_BYPASS_SEQUENTIAL,
		  "sequential wins over full" },
		/* Rule 4: a nearly full cache takes no more writes. */
		{ { W, WB, 4096, CUT, HC_BYPASS_FULL_PERCENT - 1 },
		  HC_BYPASS_FULL, "writeback: write, 4% available" },
		{ { W, WT, 4096, CUT, 0 }, HC_BYPASS_FULL,
		  "writethrough: write, 0% available" },
		{ { W, WB, 4096, CUT, HC_BYPASS_FULL_PERCENT }, HC_BYPASS_NONE,
		  "writeback: write, 5% available" },
		{ { W, WB, 4096, 0, 0 }, HC_BYPASS_FULL,
		  "full, cutoff off" },
		{ { R, WB, 4096, CUT, 0 }, HC_BYPASS_NONE,
		  "reads still promote into a full cache" },
		{ { R, WT, 4096, CUT, 4 }, HC_BYPASS_NONE,
		  "reads still promote, 4% available" },
		/* Otherwise cache it. */
		{ { W, WB, 4096, CUT, 100 }, HC_BYPASS_NONE, "writeback: write" },
		{ { W, WT, 4096, CUT, 100 }, HC_BYPASS_NONE,
		  "writethrough: write" },
		{ { R, WB, 4096, CUT, 100 }, HC_BYPASS_NONE, "writeback: read" },
		{ { R, WT, 0, CUT, 100 }, HC_BYPASS_NONE, "empty run" },
	};
	unsigned int i;

	printf("hc_bypass_decide, rule by rule (%zu cases)\n", ARRAY_LEN(cases));
	for (i = 0; i < ARRAY_LEN(cases); i++) {
		enum hc_bypass_reason got = hc_bypass_decide(&cases[i].in);

		CHECK(got == cases[i].want, "%s (%s %s): %s, want %s",
		      cases[i].why, rw(cases[i].in.write),
		      mode_name(cases[i].in.cache_mode),
		      hc_bypass_reason_name(got),
		      hc_bypass_reason_name(cases[i].want));
	}
}

/* Properties over a grid of every input that matters. */
static void test_decide_grid(void)
{
	static const u64 runs[] = { 0, 4096, CUT - 1, CUT, CUT + 1, ~0ULL };
	static const u64 cutoffs[] = { 0, 4096, CUT, ~0ULL };
	static const u32 avails[] = { 0, 4, 5, 6, 50, 100 };
	const unsigned int nr = (HC_MODE_NR + 1) * 2 * ARRAY_LEN(runs) *
				ARRAY_LEN(cutoffs) * ARRAY_LEN(avails);
	unsigned int mode, w, r, c, a, i;

	printf("hc_bypass_decide over a grid of inputs\n");
	/* Every mode (and one unknown), read and write, run, cutoff, avail. */
	for (i = 0; i < nr; i++) {
		unsigned int x = i;

		a = x % ARRAY_LEN(avails);
		x /= ARRAY_LEN(avails);
		c = x % ARRAY_LEN(cutoffs);
		x /= ARRAY_LEN(cutoffs);
		r = x % ARRAY_LEN(runs);
		x /= ARRAY_LEN(runs);
		w = x % 2;
		mode = x / 2;
		struct hc_bypass_in in = {
			.write = w, .cache_mode = mode, .seq_bytes = runs[r],
			.sequential_cutoff = cutoffs[c],
			.avail_percent = avails[a],
		};
		enum hc_bypass_reason got = hc_bypass_decide(&in), want;

		if (mode >= HC_MODE_NONE || (w && mode == HC_MODE_WRITEAROUND))
			want = HC_BYPASS_MODE;
		else if (cutoffs[c] && runs[r] >= cutoffs[c])
			want = HC_BYPASS_SEQUENTIAL;
		else if (w && avails[a] < 5)
			want = HC_BYPASS_FULL;
		else
			want = HC_BYPASS_NONE;
		CHECK(got == want,
		      "%s %s run %llu cutoff %llu avail %u%%: %s, want %s",
		      rw(w), mode_name(mode),
		      (unsigned long long)runs[r],
		      (unsigned long long)cutoffs[c], avails[a],
		      hc_bypass_reason_name(got), hc_bypass_reason_name(want));
		CHECK(got != HC_BYPASS_POLICY, "decide returned policy");
	}
	printf("  %u combinations\n", nr);
}

/* The two together, as the I/O path uses them. */
static void test_scan_vs_hot_set(void)
{
	struct hc_seq_detect d;
	unsigned int i, cached = 0, bypassed = 0;

	printf("a scan is cached up to the cutoff, then bypasses\n");
	hc_seq_init(&d);
	for (i = 0; i < 64; i++) {
		struct hc_bypass_in in = {
			.cache_mode = HC_MODE_WRITEBACK,
			.sequential_cutoff = HC_SEQ_CUTOFF_DEFAULT,
			.avail_percent = 50,
		};
		enum hc_bypass_reason r;

		/* A 32 MiB scan in 512 KiB reads ... */
		in.seq_bytes = hc_seq_note(&d, (u64)i * 1024, 1024);
		r = hc_bypass_decide(&in);
		CHECK(r == (i < 7 ? HC_BYPASS_NONE : HC_BYPASS_SEQUENTIAL),
		      "scan read %u: %s", i, hc_bypass_reason_name(r));
		if (r == HC_BYPASS_NONE)
			cached++;
		else
			bypassed++;

		/* ... while a hot 4 KiB block elsewhere is always cached. */
		in.seq_bytes = hc_seq_note(&d, 1ULL << 30, 8);
		r = hc_bypass_decide(&in);
		CHECK(r == HC_BYPASS_NONE, "hot read %u: %s", i,
		      hc_bypass_reason_name(r));
	}
	printf("  scan: %u reads cached (%llu KiB), %u bypassed\n", cached,
	       (unsigned long long)cached * 512, bypassed);
}

/* ---- Admission policies ------------------------------------------------- */

static void test_admit(void)
{
	static const struct {
		const char *name;
		int want;
	} finds[] = {
		{ "first_access", HC_ADMIT_FIRST_ACCESS },
		{ "first_access\n", HC_ADMIT_FIRST_ACCESS },
		{ "first_access\n\n", -EINVAL },
		{ "first_access ", -EINVAL },
		{ " first_access", -EINVAL },
		{ "first_access2", -EINVAL },
		{ "first_acces", -EINVAL },
		{ "FIRST_ACCESS", -EINVAL },
		{ "second_access", HC_ADMIT_SECOND_ACCESS },
		{ "second_access\n", HC_ADMIT_SECOND_ACCESS },
		{ "second", -EINVAL },
		{ "", -EINVAL },
		{ "\n", -EINVAL },
	};
	struct hc_admit_in in = { .free_percent = 0 };
	unsigned int i, j;

	printf("admission policy table and lookup\n");
	for (i = 0; i < HC_ADMIT_NR; i++) {
		const struct hc_admit_policy *p = &hc_admit_policies[i];

		CHECK(p->name && *p->name && p->admit, "policy %u incomplete", i);
		CHECK_EQ_U64(hc_admit_policy_find(p->name), i, p->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(p->name, hc_admit_policies[j].name),
			      "policies %u and %u both named %s", j, i,
			      p->name);
	}
	for (i = 0; i < ARRAY_LEN(finds); i++) {
		int got = hc_admit_policy_find(finds[i].name);

		CHECK(got == finds[i].want, "find \"%s\": %d, want %d",
		      finds[i].name, got, finds[i].want);
	}
	CHECK(!strcmp(hc_admit_policies[HC_ADMIT_FIRST_ACCESS].name,
		      "first_access"), "first_access's name");
	CHECK(!strcmp(hc_admit_policies[HC_ADMIT_DEFAULT].name,
		      "second_access"), "default policy name");
	for (i = 0; i < 100; i++) {
		in.bdev_id = i;
		in.sector = (u64)i << 20;
		in.sectors = 8 + i;
		CHECK(hc_admit_policies[HC_ADMIT_FIRST_ACCESS].admit(&in),
		      "first_access refused a first access");
	}
}

/* One miss through second_access. */
static bool second(struct hc_admit_ghost *g, u32 free_percent, u32 bdev_id,
		   u64 sector)
{
	struct hc_admit_in in = {
		.ghost = g,
		.bdev_id = bdev_id,
		.sector = sector,
		.sectors = 8,
		.free_percent = free_percent,
	};

	return hc_admit_policies[HC_ADMIT_SECOND_ACCESS].admit(&in);
}

static void test_admit_second_access(void)
{
	static u32 slots[HC_ADMIT_GHOST_MIN];
	struct hc_admit_ghost g = { slots, HC_ADMIT_GHOST_MIN - 1, 0 };
	enum { HOT = 500, ROUNDS = 60 };
	static bool hot_in[HOT];
	unsigned int i, r, hot_admitted = 0, scan_admitted = 0;
	u64 scan = 1ULL << 30;

	printf("second_access: ghost table size, warm-up, second miss, hot set against a scan\n");
	CHECK_EQ_U64(hc_admit_ghost_slots(0), HC_ADMIT_GHOST_MIN, "no cache");
	CHECK_EQ_U64(hc_admit_ghost_slots(SECS(128 * MIB)), 32768, "128 MiB");
	CHECK_EQ_U64(hc_admit_ghost_slots(SECS(3 * 32 * MIB)), 16384, "96 MiB");
	CHECK_EQ_U64(hc_admit_ghost_slots(SECS(1024 * GIB)),
		     HC_ADMIT_GHOST_MAX, "1 TiB");

	/* While the cache has free space, everything is promoted. */
	for (i = 0; i < 1000; i++)
		CHECK(second(&g, HC_ADMIT_FILL_PERCENT + 1, 1, i * 8ULL),
		      "refused block %u with free space left", i);
	for (i = 0; i < HC_ADMIT_GHOST_MIN; i++)
		CHECK(!slots[i], "slot %u used while warming up", i);
	/* A table that failed to exist degrades to first_access. */
	CHECK(second(NULL, 0, 1, 0), "refused without a table");

	/* Full: the first miss is remembered, the second promoted, once. */
	CHECK(!second(&g, HC_ADMIT_FILL_PERCENT, 1, 800), "first miss promoted");
	CHECK(!second(&g, 0, 2, 800), "another device's block taken for it");
	CHECK(second(&g, 0, 1, 803), "second miss in the same 4 KiB refused");
	CHECK(!second(&g, 0, 1, 800), "a third miss promoted: slot not cleared");
	CHECK(second(&g, 0, 2, 807), "device 2's second miss refused");

	/*
	 * One pair of slots, full of misses never repeated: two blocks read
	 * in turn still both get in, whichever slots their misses take.
	 */
	{
		u32 pair[2] = { 0, 0 };
		struct hc_admit_ghost one = { pair, 1, 0 };
		bool x_in = false, y_in = false;

		CHECK(!second(&one, 0, 5, 1000 * 8ULL), "stale miss promoted");
		CHECK(!second(&one, 0, 5, 2000 * 8ULL), "stale miss promoted");
		for (r = 0; r < 8 && !(x_in && y_in); r++) {
			x_in = x_in || second(&one, 0, 5, 0);
			y_in = y_in || second(&one, 0, 5, 8);
		}
		CHECK(x_in && y_in, "two blocks sharing a pair: %d %d", x_in,
		      y_in);
	}

	/*
	 * A hot set read over and over between the reads of a scan as
	 * long: every hot block gets in, no scanned block does.
	 */
	memset(slots, 0, sizeof(slots));
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < HOT; i++) {
			u32 h = (i * 7919U + r * 104729U) % HOT;

			if (!hot_in[h] && second(&g, 0, 3, h * 8ULL)) {
				hot_in[h] = true;
				hot_admitted++;
			}
			scan_admitted += second(&g, 0, 3, scan);
			scan += 8;
		}
	}
	printf("  hot set: %u of %u blocks promoted in %u rounds; scan: %u of %u\n",
	       hot_admitted, HOT, ROUNDS, scan_admitted, HOT * ROUNDS);
	CHECK_EQ_U64(hot_admitted, HOT, "hot blocks promoted");
	CHECK_EQ_U64(scan_admitted, 0, "scanned blocks promoted");
}

/* ---- hc_size_parse ---------------------------------------------------------- */

static void test_size_parse(void)
{
	static const struct {
		const char *s;
		int err;
		u64 bytes;
	} cases[] = {
		{ "0", 0, 0 },
		{ "0\n", 0, 0 },
		{ "1", 0, 1 },
		{ "4096", 0, 4096 },
		{ "007", 0, 7 },
		{ "4k", 0, 4 * KIB },
		{ "4K", 0, 4 * KIB },
		{ "4m", 0, 4 * MIB },
		{ "4M\n", 0, 4 * MIB },
		{ "1g", 0, GIB },
		{ "1G\n", 0, GIB },
		{ "0k", 0, 0 },
		{ "18446744073709551615", 0, ~0ULL },
		{ "18446744073709551615\n", 0, ~0ULL },
		{ "18014398509481983k", 0, 18014398509481983ULL << 10 },
		{ "17592186044415m", 0, 17592186044415ULL << 20 },
		{ "17179869183g", 0, 17179869183ULL << 30 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999999", -ERANGE, 0 },
		{ "18014398509481984k", -ERANGE, 0 },
		{ "17592186044416m", -ERANGE, 0 },
		{ "17179869184g", -ERANGE, 0 },
		{ "17179869184g\n", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "\n", -EINVAL, 0 },
		{ "k", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "-0", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1 k", -EINVAL, 0 },
		{ "1\n\n", -EINVAL, 0 },
		{ "1\nk", -EINVAL, 0 },
		{ "1kk", -EINVAL, 0 },
		{ "1kb", -EINVAL, 0 },
		{ "1KiB", -EINVAL, 0 },
		{ "1t", -EINVAL, 0 },
		{ "1.5m", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1e6", -EINVAL, 0 },
		{ "99999999999999999999999999x", -EINVAL, 0 },
	};
	unsigned int i;

	printf("hc_size_parse (%zu strings)\n", ARRAY_LEN(cases));
	for (i = 0; i < ARRAY_LEN(cases); i++) {
		u64 bytes = 0xdeadbeef;
		int err = hc_size_parse(cases[i].s, &bytes);

		CHECK(err == cases[i].err, "\"%s\": %d, want %d", cases[i].s,
		      err, cases[i].err);
		if (cases[i].err)
			CHECK_EQ_U64(bytes, 0xdeadbeef, "untouched on error");
		else
			CHECK_EQ_U64(bytes, cases[i].bytes, cases[i].s);
	}
}

int main(void)
{
	const char *env = getenv("HC_TEST_SEED");
	u64 seed = env ? strtoull(env, NULL, 0) :
		   (u64)time(NULL) ^ (u64)getpid() << 32;

	test_seq_one_stream();
	test_seq_interleaved();
	test_seq_lru();
	test_seq_overlap();
	test_seq_converge();
	test_seq_random(seed);
	test_reason_names();
	test_decide_table();
	test_decide_grid();
	test_scan_vs_hot_set();
	test_admit();
	test_admit_second_access();
	test_size_parse();
	return hc_test_done("test_bypass");
}
