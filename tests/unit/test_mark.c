// SPDX-License-Identifier: GPL-2.0
/*
 * test_mark: the rules of the mark pass in drivers/md/hcache/mark.c: the
 * fixed bucket types of a geometry, the accounting of leaf keys (live
 * clean and dirty sectors, the data type, stale pointers counting only
 * toward the oldest gen, across the 8-bit wrap-around), every pair of
 * bucket and pointer gens, and one state corrupted on purpose per rule of
 * hc_mark_leaf_key(), hc_mark_meta(), hc_mark_compare() and
 * hc_node_range_check(). It reads mark.c and fails if any error string
 * there is missing from the tables, so a new rule cannot land untested.
 *
 * The randomised accounting check's seed is random and printed; set
 * HC_TEST_SEED to rerun one.
 */

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mark.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The geometry of most cases: 64 buckets of 16 sectors, the superblock in
 * bucket 0, the journal in buckets 1..8, data from bucket 9 on.
 */
#define NB		64
#define BS		16
#define JSTART		1
#define JNR		8
#define DATA0		(JSTART + JNR)

static const struct hc_geom geom = {
	.nbuckets = NB, .bucket_sectors = BS, .first_bucket = 1,
	.journal_start = JSTART, .journal_buckets = JNR,
};

/* Cache sector @o of bucket @b. */
#define SEC(b, o)	((u64)(b) * BS + (o))

/*
 * A leaf key of @size sectors cached at sector @o of bucket @b, with
 * pointer gen @gen; usable in static tables. Backing positions do not
 * matter to the mark pass: every key ends at backing sector 1 MiB.
 */
#define KEY(b, o, sz, g, fl)						\
	((struct hc_key){ .end = 1U << 20, .bdev_id = 1, .size = (sz),	\
			  .ptr = (u64)(g) << HC_PTR_GEN_SHIFT | SEC(b, o),	\
			  .nr_ptrs = 1, .flags = (fl) })
#define WHITEOUT(sz)							\
	((struct hc_key){ .end = 1U << 20, .bdev_id = 1, .size = (sz) })

/* A key of backing device @bd covering sectors [s, e), for node ranges. */
#define RK(bd, s, e)							\
	((struct hc_key){ .end = (e), .bdev_id = (bd), .size = (e) - (s),	\
			  .ptr = SEC(DATA0, 0), .nr_ptrs = 1 })

static void reset(struct hc_bucket_mark *m, struct hc_bucket *buckets,
		  const u8 *gens)
{
	u64 i;

	memset(buckets, 0, NB * sizeof(*buckets));
	for (i = 0; i < NB; i++)
		buckets[i].gen = gens ? gens[i] : 0;
	hc_mark_reset(&geom, m, NB);
}

static const char *str(const char *s)
{
	return s ? s : "(valid)";
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- Geometry and reset ------------------------------------------------- */

static void test_geometry(void)
{
	static const struct hc_geom far = {
		.nbuckets = 40, .bucket_sectors = 8, .first_bucket = 2,
		.journal_start = 20, .journal_buckets = 4,
	};
	struct hc_bucket_mark m[NB];
	unsigned int t;
	u64 i;

	printf("geometry, fixed types and hc_mark_reset\n");
	CHECK_EQ_U64(hc_sector_to_bucket(&geom, 0), 0, "sector 0");
	CHECK_EQ_U64(hc_sector_to_bucket(&geom, 15), 0, "sector 15");
	CHECK_EQ_U64(hc_sector_to_bucket(&geom, 16), 1, "sector 16");
	CHECK_EQ_U64(hc_sector_to_bucket(&geom, SEC(63, 15)), 63, "last");
	CHECK_EQ_U64(hc_bucket_to_sector(&geom, 9), 144, "bucket 9");
	CHECK_EQ_U64(hc_bucket_to_sector(&far, 39), 312, "bucket 39 of 8");

	memset(m, 0xa5, sizeof(m));
	hc_mark_reset(&geom, m, NB);
	for (i = 0; i < NB; i++) {
		u8 want = !i ? HC_BUCKET_SB : i < DATA0 ? HC_BUCKET_JOURNAL :
			  HC_BUCKET_FREE;

		CHECK(m[i].type == want && hc_bucket_fixed_type(&geom, i) == want,
		      "bucket %llu: type %s, fixed %s, want %s", (u64)i,
		      hc_bucket_type_name(m[i].type),
		      hc_bucket_type_name(hc_bucket_fixed_type(&geom, i)),
		      hc_bucket_type_name(want));
		CHECK(!m[i].clean && !m[i].dirty && !m[i].has_ptr &&
		      !m[i].oldest_gen, "bucket %llu not cleared", (u64)i);
	}

	/* Journal not right after the superblock. */
	hc_mark_reset(&far, m, far.nbuckets);
	for (i = 0; i < far.nbuckets; i++) {
		u8 want = i < 2 ? HC_BUCKET_SB :
			  i >= 20 && i < 24 ? HC_BUCKET_JOURNAL : HC_BUCKET_FREE;

		CHECK(m[i].type == want, "far journal, bucket %llu: %s, want %s",
		      (u64)i, hc_bucket_type_name(m[i].type),
		      hc_bucket_type_name(want));
	}
	CHECK(hc_bucket_fixed_type(&far, 1000) == HC_BUCKET_FREE,
	      "past the end is not fixed");

	/* Names, for messages and sysfs. */
	for (t = 0; t < HC_BUCKET_TYPE_NR; t++) {
		const char *n = hc_bucket_type_name(t);
		unsigned int u;

		CHECK(n && *n && strcmp(n, "invalid"), "type %u unnamed", t);
		for (u = 0; u < t; u++)
			CHECK(strcmp(n, hc_bucket_type_name(u)),
			      "types %u and %u both named %s", u, t, n);
	}
	CHECK(!strcmp(hc_bucket_type_name(HC_BUCKET_DATA), "data"), "data");
	CHECK(!strcmp(hc_bucket_type_name(HC_BUCKET_TYPE_NR), "invalid"),
	      "type NR");
	CHECK(!strcmp(hc_bucket_type_name(~0U), "invalid"), "type ~0");
}

/* ---- Accounting ---------------------------------------------------------- */

static void leaf_ok(struct hc_bucket_mark *m, const struct hc_bucket *buckets,
		    struct hc_key k, const char *what)
{
	const char *err = hc_mark_leaf_key(&geom, m, buckets, &k);

	CHECK(!err, "%s: got \"%s\"", what, err);
}

static void expect_mark(const struct hc_bucket_mark *bm, u32 clean, u32 dirty,
			u8 type, bool has_ptr, u8 oldest, const char *what)
{
	CHECK(bm->clean == clean && bm->dirty == dirty && bm->type == type &&
	      bm->has_ptr == has_ptr && (!has_ptr || bm->oldest_gen == oldest),
	      "%s: clean %u dirty %u %s has_ptr %u oldest %u, want clean %u "
	      "dirty %u %s has_ptr %u oldest %u", what, bm->clean, bm->dirty,
	      hc_bucket_type_name(bm->type), bm->has_ptr, bm->oldest_gen,
	      clean, dirty, hc_bucket_type_name(type), has_ptr, oldest);
}

static void test_accounting(void)
{
	struct hc_bucket_mark m[NB], before[NB];
	struct hc_bucket buckets[NB];
	u8 gens[NB] = { [20] = 5, [21] = 5, [22] = 2, [23] = 255, [24] = 0,
			[25] = 7, [26] = 1 };

	printf("accounting of leaf keys\n");
	reset(m, buckets, gens);

	/* Live keys: clean and dirty summed, the bucket becomes data. */
	leaf_ok(m, buckets, KEY(20, 0, 4, 5, 0), "clean 4");
	expect_mark(&m[20], 4, 0, HC_BUCKET_DATA, 1, 5, "one clean key");
	leaf_ok(m, buckets, KEY(20, 4, 3, 5, 0), "clean 3");
	leaf_ok(m, buckets, KEY(20, 7, 6, 5, HC_KEY_DIRTY), "dirty 6");
	leaf_ok(m, buckets, KEY(20, 13, 1, 5, HC_KEY_DIRTY), "dirty 1");
	expect_mark(&m[20], 7, 7, HC_BUCKET_DATA, 1, 5, "clean and dirty");
	leaf_ok(m, buckets, KEY(20, 14, 2, 5, 0), "fills the bucket");
	expect_mark(&m[20], 9, 7, HC_BUCKET_DATA, 1, 5, "full bucket");

	/* A stale pointer counts only toward the oldest gen. */
	leaf_ok(m, buckets, KEY(21, 0, 16, 3, HC_KEY_DIRTY), "stale dirty");
	expect_mark(&m[21], 0, 0, HC_BUCKET_FREE, 1, 3, "stale only");
	leaf_ok(m, buckets, KEY(21, 0, 16, 4, 0), "newer stale");
	expect_mark(&m[21], 0, 0, HC_BUCKET_FREE, 1, 3, "oldest kept");
	leaf_ok(m, buckets, KEY(21, 0, 8, 5, 0), "live after stale");
	expect_mark(&m[21], 8, 0, HC_BUCKET_DATA, 1, 3, "live + stale");
	/* Stale sectors never count toward "more than the bucket holds". */
	leaf_ok(m, buckets, KEY(21, 8, 8, 5, HC_KEY_DIRTY), "live, full");
	leaf_ok(m, buckets, KEY(21, 0, 16, 1, HC_KEY_DIRTY), "stale, full");
	expect_mark(&m[21], 8, 8, HC_BUCKET_DATA, 1, 1, "full + stale");

	/* Bucket gen 2, wrapped: pointers from before the wrap are older. */
	leaf_ok(m, buckets, KEY(22, 0, 1, 255, 0), "gen 255 in gen 2");
	expect_mark(&m[22], 0, 0, HC_BUCKET_FREE, 1, 255, "gen 255");
	leaf_ok(m, buckets, KEY(22, 0, 1, 0, 0), "gen 0 in gen 2");
	expect_mark(&m[22], 0, 0, HC_BUCKET_FREE, 1, 255, "255 older than 0");
	leaf_ok(m, buckets, KEY(22, 0, 1, 250, 0), "gen 250 in gen 2");
	expect_mark(&m[22], 0, 0, HC_BUCKET_FREE, 1, 250, "250 older than 255");
	leaf_ok(m, buckets, KEY(22, 0, 2, 2, HC_KEY_DIRTY), "live gen 2");
	leaf_ok(m, buckets, KEY(22, 2, 3, 1, HC_KEY_DIRTY), "gen 1 in gen 2");
	expect_mark(&m[22], 0, 2, HC_BUCKET_DATA, 1, 250, "live after wrap");
	/* 200 is 58 behind 2 (mod 256): the oldest, though numerically least */
	leaf_ok(m, buckets, KEY(22, 0, 1, 200, 0), "gen 200 in gen 2");
	expect_mark(&m[22], 0, 2, HC_BUCKET_DATA, 1, 200, "200 oldest");
	/* 2 - 96 = 162: exactly at the limit, still fine */
	leaf_ok(m, buckets, KEY(22, 0, 1, 162, 0), "gen 162 in gen 2");
	expect_mark(&m[22], 0, 2, HC_BUCKET_DATA, 1, 162, "at the limit");

	/* Gen 255 live, and gen 0 where 255 is one behind. */
	leaf_ok(m, buckets, KEY(23, 0, 5, 255, 0), "live gen 255");
	expect_mark(&m[23], 5, 0, HC_BUCKET_DATA, 1, 255, "gen 255 live");
	leaf_ok(m, buckets, KEY(24, 0, 5, 255, 0), "gen 255 in gen 0");
	expect_mark(&m[24], 0, 0, HC_BUCKET_FREE, 1, 255, "255 stale in 0");
	leaf_ok(m, buckets, KEY(24, 5, 5, 0, 0), "live gen 0");
	expect_mark(&m[24], 5, 0, HC_BUCKET_DATA, 1, 255, "0 live, 255 old");

	/* Only the first pointer sets the oldest gen unconditionally. */
	leaf_ok(m, buckets, KEY(25, 0, 1, 7, 0), "live first");
	expect_mark(&m[25], 1, 0, HC_BUCKET_DATA, 1, 7, "live first");
	leaf_ok(m, buckets, KEY(25, 0, 1, 6, 0), "then stale");
	expect_mark(&m[25], 1, 0, HC_BUCKET_DATA, 1, 6, "stale second");

	/* Sectors are counted per bucket, neighbours untouched. */
	expect_mark(&m[19], 0, 0, HC_BUCKET_FREE, 0, 0, "bucket 19");
	expect_mark(&m[26], 0, 0, HC_BUCKET_FREE, 0, 0, "bucket 26");
	/* Last sector of the last bucket. */
	leaf_ok(m, buckets, KEY(63, 15, 1, 0, HC_KEY_DIRTY), "last sector");
	expect_mark(&m[63], 0, 1, HC_BUCKET_DATA, 1, 0, "last bucket");

	/* Whiteouts are ignored, even "into" the superblock or the end. */
	memcpy(before, m, sizeof(m));
	leaf_ok(m, buckets, WHITEOUT(1), "whiteout of 1");
	leaf_ok(m, buckets, WHITEOUT(1U << 20), "whiteout of 1 MiB");
	CHECK(!memcmp(before, m, sizeof(m)), "a whiteout changed the marks");

	/* A stale pointer into a bucket that now holds metadata is fine. */
	leaf_ok(m, buckets, KEY(26, 0, 16, 0, HC_KEY_DIRTY), "stale in 26");
	CHECK(!hc_mark_meta(&geom, m, buckets, 26, HC_BUCKET_BTREE,
			    &(u64){ hc_ptr_make(SEC(26, 0), 0, 1) }),
	      "btree node over stale data refused");
	expect_mark(&m[26], 0, 0, HC_BUCKET_BTREE, 1, 0, "btree over stale");
	leaf_ok(m, buckets, KEY(26, 0, 16, 255, 0), "stale after btree");
	expect_mark(&m[26], 0, 0, HC_BUCKET_BTREE, 1, 255, "older stale");

	/* Metadata: the type, and the btree pointer's gen. */
	CHECK(!hc_mark_meta(&geom, m, buckets, DATA0, HC_BUCKET_PRIO, NULL),
	      "prio in the first data bucket");
	expect_mark(&m[DATA0], 0, 0, HC_BUCKET_PRIO, 0, 0, "prio bucket");
	CHECK(!hc_mark_meta(&geom, m, buckets, 62, HC_BUCKET_TABLE, NULL),
	      "table bucket");
	expect_mark(&m[62], 0, 0, HC_BUCKET_TABLE, 0, 0, "table bucket");
}

/*
 * One (bucket gen, pointer gen) pair: a leaf key into bucket 30 and a
 * btree node pointer into bucket 31. Return: how many things went wrong.
 */
static unsigned int one_gen_pair(u8 bg, u8 pg)
{
	static struct hc_bucket_mark m[NB];
	static struct hc_bucket buckets[NB];
	struct hc_key k = KEY(30, 3, 5, pg, HC_KEY_DIRTY);
	u64 ptr = hc_ptr_make(SEC(31, 0), 0, pg);
	u8 d = bg - pg;		/* how far the bucket is ahead */
	const struct hc_bucket_mark *bm;
	const char *want, *got;
	unsigned int bad = 0;

	/* ahead: pg - bg in 1..127 (mod 256), i.e. d in 129..255 */
	want = d > 128 ? "pointer gen ahead of its bucket's gen" :
	       d > HC_GEN_REPLAY_DISTANCE ?
	       "bucket gen too far ahead of a pointer into it" : NULL;
	reset(m, buckets, NULL);
	buckets[30].gen = bg;
	buckets[31].gen = bg;

	got = hc_mark_leaf_key(&geom, m, buckets, &k);
	bm = &m[30];
	if (!same_str(got, want))
		bad++;
	else if (want ? bm->has_ptr || bm->dirty :
		 !bm->has_ptr || bm->oldest_gen != pg ||
		 bm->dirty != (d ? 0 : 5) ||
		 bm->type != (d ? HC_BUCKET_FREE : HC_BUCKET_DATA))
		bad++;
	if (bad)
		printf("    leaf, bucket %u ptr %u: \"%s\", want \"%s\"; "
		       "dirty %u %s has_ptr %u oldest %u\n", bg, pg, str(got),
		       str(want), bm->dirty, hc_bucket_type_name(bm->type),
		       bm->has_ptr, bm->oldest_gen);

	if (!want && d)
		want = "stale pointer to a btree node";
	got = hc_mark_meta(&geom, m, buckets, 31, HC_BUCKET_BTREE, &ptr);
	bm = &m[31];
	if (!same_str(got, want) ||
	    bm->type != (want ? HC_BUCKET_FREE : HC_BUCKET_BTREE)) {
		bad++;
		printf("    btree, bucket %u ptr %u: \"%s\", want \"%s\"; "
		       "%s\n", bg, pg, str(got), str(want),
		       hc_bucket_type_name(bm->type));
	}
	return bad;
}

/* Every (bucket gen, pointer gen) pair, through both kinds of pointer. */
static void test_all_gens(void)
{
	unsigned int bg, pg, bad = 0;

	printf("every pair of bucket and pointer gens\n");
	for (bg = 0; bg < 256; bg++)
		for (pg = 0; pg < 256 && bad < 5; pg++)
			bad += one_gen_pair(bg, pg);
	CHECK(!bad, "gen pairs wrong");
}

/* ---- One corrupt state per rule: leaf keys and metadata ----------------- */

enum { S_END = 0, S_LEAF, S_META };

/*
 * One call of the mark pass. A btree node's bucket is passed with the
 * pointer to it (at the bucket's first sector, with gen @gen), as the
 * parent or the journal holds it; prio and table buckets without one.
 */
struct step {
	u8 op;
	u8 type;		/* S_META: HC_BUCKET_* */
	u8 gen;			/* S_META of a btree node */
	u64 bucket;		/* S_META */
	struct hc_key k;	/* S_LEAF */
	const char *want;	/* NULL: accepted */
};

#define LEAF(key, w)		{ .op = S_LEAF, .k = key, .want = w }
#define META(b, t, g, w)	{ .op = S_META, .bucket = (b), .type = (t), \
				  .gen = (g), .want = w }

#define MAXSTEPS 5

struct mark_case {
	const char *what;
	u8 gens[NB];
	struct step steps[MAXSTEPS];	/* ends at op S_END */
};

#define R_AHEAD		"pointer gen ahead of its bucket's gen"
#define R_TOO_FAR	"bucket gen too far ahead of a pointer into it"
#define R_LIVE_FIXED	"live pointer into a metadata, journal or superblock bucket"
#define R_LIVE_META	"live pointer into a metadata bucket"
#define R_TWO_META	"bucket holds two pieces of metadata"

static const struct mark_case mark_cases[] = {
	/* Pointer gens. */
	{ "gen one ahead", { [20] = 5 },
	  { LEAF(KEY(20, 0, 4, 6, 0), R_AHEAD) } },
	{ "gen 127 ahead", { [20] = 5 },
	  { LEAF(KEY(20, 0, 4, 132, 0), R_AHEAD) } },
	{ "gen ahead across the wrap", { [20] = 254 },
	  { LEAF(KEY(20, 0, 4, 3, 0), R_AHEAD) } },
	{ "gen 0 ahead of 255", { [20] = 255 },
	  { LEAF(KEY(20, 0, 4, 0, HC_KEY_DIRTY), R_AHEAD) } },
	{ "ahead after live keys", { [20] = 9 },
	  { LEAF(KEY(20, 0, 4, 9, 0), NULL),
	    LEAF(KEY(20, 4, 4, 10, 0), R_AHEAD) } },
	{ "bucket 96 ahead: the limit", { [20] = 100 },
	  { LEAF(KEY(20, 0, 4, 4, 0), NULL) } },
	{ "bucket 127 ahead (a replayed key GC had dropped)", { [20] = 130 },
	  { LEAF(KEY(20, 0, 4, 3, 0), NULL) } },
	{ "96 ahead across the wrap", { [20] = 10 },
	  { LEAF(KEY(20, 0, 4, 170, 0), NULL) } },
	{ "127 ahead across the wrap", { [20] = 10 },
	  { LEAF(KEY(20, 0, 4, 139, 0), NULL) } },
	{ "128 ahead across the wrap", { [20] = 10 },
	  { LEAF(KEY(20, 0, 4, 138, 0), R_TOO_FAR) } },
	{ "128 ahead: neither side", { [20] = 128 },
	  { LEAF(KEY(20, 0, 4, 0, 0), R_TOO_FAR) } },
	{ "too far after a stale key", { [20] = 200 },
	  { LEAF(KEY(20, 0, 4, 150, 0), NULL),
	    LEAF(KEY(20, 0, 4, 72, 0), R_TOO_FAR) } },

	/* Where the extent lies. */
	{ "pointer into bucket 64 of 64", { },
	  { LEAF(KEY(NB, 0, 1, 0, 0),
		 "pointer past the end of the cache device") } },
	{ "pointer to the largest offset", { },
	  { LEAF(((struct hc_key){ .end = 10, .bdev_id = 1, .size = 1,
				   .ptr = HC_PTR_OFFSET_MAX, .nr_ptrs = 1 }),
		 "pointer past the end of the cache device") } },
	{ "crosses into the next bucket", { },
	  { LEAF(KEY(20, 12, 8, 0, 0), "extent crosses a bucket boundary") } },
	{ "one sector into the next bucket", { },
	  { LEAF(KEY(20, 0, BS + 1, 0, 0),
		 "extent crosses a bucket boundary") } },
	{ "crosses the end of the device", { },
	  { LEAF(KEY(NB - 1, 8, 9, 0, 0),
		 "extent crosses a bucket boundary") } },
	{ "crosses out of the superblock", { },
	  { LEAF(KEY(0, 15, 2, 0, 0),
		 "extent crosses a bucket boundary") } },
	{ "a whole bucket", { },
	  { LEAF(KEY(20, 0, BS, 0, 0), NULL) } },
	{ "ends at the end of the device", { },
	  { LEAF(KEY(NB - 1, 8, 8, 0, 0), NULL) } },

	/* Live pointers into buckets that are not data. */
	{ "live into the superblock", { },
	  { LEAF(KEY(0, 8, 4, 0, 0), R_LIVE_FIXED) } },
	{ "live into the first journal bucket", { },
	  { LEAF(KEY(JSTART, 0, 4, 0, HC_KEY_DIRTY), R_LIVE_FIXED) } },
	{ "live into the last journal bucket", { },
	  { LEAF(KEY(DATA0 - 1, 0, 4, 0, 0), R_LIVE_FIXED) } },
	{ "live into a prio bucket", { [30] = 4 },
	  { META(30, HC_BUCKET_PRIO, 0, NULL),
	    LEAF(KEY(30, 0, 4, 4, 0), R_LIVE_FIXED) } },
	{ "live into the table bucket", { },
	  { META(30, HC_BUCKET_TABLE, 0, NULL),
	    LEAF(KEY(30, 0, 4, 0, 0), R_LIVE_FIXED) } },
	{ "live into a btree node", { [30] = 2 },
	  { META(30, HC_BUCKET_BTREE, 2, NULL),
	    LEAF(KEY(30, 0, 4, 2, HC_KEY_DIRTY), R_LIVE_FIXED) } },
	{ "stale into a btree node", { [30] = 2 },
	  { META(30, HC_BUCKET_BTREE, 2, NULL),
	    LEAF(KEY(30, 0, 4, 1, HC_KEY_DIRTY), NULL) } },
	{ "stale into the journal", { [JSTART] = 3 },
	  { LEAF(KEY(JSTART, 0, 4, 1, 0), NULL) } },

	/* More than the bucket holds. */
	{ "17 live sectors in 16", { [20] = 1 },
	  { LEAF(KEY(20, 0, 10, 1, 0), NULL),
	    LEAF(KEY(20, 6, 7, 1, HC_KEY_DIRTY),
		 "more live sectors than the bucket holds") } },
	{ "the same key twice", { [20] = 1 },
	  { LEAF(KEY(20, 0, 9, 1, HC_KEY_DIRTY), NULL),
	    LEAF(KEY(20, 0, 9, 1, HC_KEY_DIRTY),
		 "more live sectors than the bucket holds") } },
	{ "16 live and 16 stale", { [20] = 1 },
	  { LEAF(KEY(20, 0, 16, 0, 0), NULL),
	    LEAF(KEY(20, 0, 8, 1, 0), NULL),
	    LEAF(KEY(20, 8, 8, 1, HC_KEY_DIRTY), NULL),
	    LEAF(KEY(20, 0, 16, 255, HC_KEY_DIRTY), NULL) } },

	/* Metadata outside the data area. */
	{ "prio in the superblock", { },
	  { META(0, HC_BUCKET_PRIO, 0,
		 "metadata bucket outside the data area") } },
	{ "table past the end", { },
	  { META(NB, HC_BUCKET_TABLE, 0,
		 "metadata bucket outside the data area") } },
	{ "btree node far past the end", { },
	  { META(1ULL << 40, HC_BUCKET_BTREE, 0,
		 "metadata bucket outside the data area") } },
	{ "prio in the last bucket", { },
	  { META(NB - 1, HC_BUCKET_PRIO, 0, NULL) } },
	{ "btree node in the journal", { },
	  { META(JSTART + 3, HC_BUCKET_BTREE, 0, R_TWO_META) } },

	/* The pointer to a btree node. */
	{ "stale pointer to a btree node", { [30] = 8 },
	  { META(30, HC_BUCKET_BTREE, 7, "stale pointer to a btree node") } },
	{ "btree pointer 127 behind", { [30] = 127 },
	  { META(30, HC_BUCKET_BTREE, 0, "stale pointer to a btree node") } },
	{ "btree pointer 128 behind", { [30] = 128 },
	  { META(30, HC_BUCKET_BTREE, 0, R_TOO_FAR) } },
	{ "btree pointer ahead", { [30] = 255 },
	  { META(30, HC_BUCKET_BTREE, 0, R_AHEAD) } },
	{ "btree pointer live across the wrap", { [30] = 0 },
	  { LEAF(KEY(30, 0, 16, 255, 0), NULL),
	    META(30, HC_BUCKET_BTREE, 0, NULL) } },

	/* Live data marked first, then metadata in its bucket. */
	{ "btree node over live data", { [30] = 6 },
	  { LEAF(KEY(30, 0, 4, 6, 0), NULL),
	    META(30, HC_BUCKET_BTREE, 6, R_LIVE_META) } },
	{ "prio over live dirty data", { },
	  { LEAF(KEY(30, 4, 4, 0, HC_KEY_DIRTY), NULL),
	    META(30, HC_BUCKET_PRIO, 0, R_LIVE_META) } },
	{ "table over live data", { },
	  { LEAF(KEY(30, 4, 4, 0, 0), NULL),
	    META(30, HC_BUCKET_TABLE, 0, R_LIVE_META) } },
	{ "prio over stale data", { [30] = 1 },
	  { LEAF(KEY(30, 4, 4, 0, HC_KEY_DIRTY), NULL),
	    META(30, HC_BUCKET_PRIO, 0, NULL) } },

	/* Two pieces of metadata in one bucket. */
	{ "two prio sets", { },
	  { META(30, HC_BUCKET_PRIO, 0, NULL),
	    META(30, HC_BUCKET_PRIO, 0, R_TWO_META) } },
	{ "prio and table", { },
	  { META(30, HC_BUCKET_PRIO, 0, NULL),
	    META(30, HC_BUCKET_TABLE, 0, R_TWO_META) } },
	{ "table and btree node", { [30] = 3 },
	  { META(30, HC_BUCKET_TABLE, 0, NULL),
	    META(30, HC_BUCKET_BTREE, 3, R_TWO_META) } },
	{ "one node, two parents", { [30] = 3 },
	  { META(30, HC_BUCKET_BTREE, 3, NULL),
	    META(30, HC_BUCKET_BTREE, 3, R_TWO_META) } },
	{ "btree node and prio", { },
	  { META(30, HC_BUCKET_BTREE, 0, NULL),
	    META(30, HC_BUCKET_PRIO, 0, R_TWO_META) } },
	{ "metadata in distinct buckets", { [31] = 9, [32] = 1 },
	  { META(30, HC_BUCKET_PRIO, 0, NULL),
	    META(31, HC_BUCKET_BTREE, 9, NULL),
	    META(32, HC_BUCKET_TABLE, 0, NULL),
	    META(33, HC_BUCKET_PRIO, 0, NULL),
	    LEAF(KEY(34, 0, 16, 0, HC_KEY_DIRTY), NULL) } },
};

static const char *run_step(struct hc_bucket_mark *m,
			    const struct hc_bucket *buckets,
			    const struct step *s)
{
	u64 ptr;

	if (s->op == S_LEAF)
		return hc_mark_leaf_key(&geom, m, buckets, &s->k);
	ptr = hc_ptr_make(SEC(s->bucket, 0), 0, s->gen);
	return hc_mark_meta(&geom, m, buckets, s->bucket, s->type,
			    s->type == HC_BUCKET_BTREE ? &ptr : NULL);
}

static void test_mark_cases(void)
{
	static struct hc_bucket_mark m[NB], before[NB];
	static struct hc_bucket buckets[NB];
	size_t i, j, b;

	printf("%zu corrupt and edge-case mark passes\n", ARRAY_LEN(mark_cases));
	for (i = 0; i < ARRAY_LEN(mark_cases); i++) {
		const struct mark_case *c = &mark_cases[i];
		const char *err = NULL;

		reset(m, buckets, c->gens);
		for (j = 0; j < MAXSTEPS && c->steps[j].op != S_END; j++) {
			const struct step *s = &c->steps[j];

			memcpy(before, m, sizeof(m));
			err = run_step(m, buckets, s);
			CHECK(same_str(err, s->want),
			      "%s, step %zu: got \"%s\", want \"%s\"", c->what,
			      j, str(err), str(s->want));
			/*
			 * A refused pointer counts no sectors and sets no
			 * type, except that sectors past a bucket's size are
			 * counted (and the bucket reported) as the kept state
			 * counts them.
			 */
			if (!err || !strcmp(err, "more live sectors than the "
					    "bucket holds"))
				continue;
			for (b = 0; b < NB; b++)
				CHECK(m[b].clean == before[b].clean &&
				      m[b].dirty == before[b].dirty &&
				      m[b].type == before[b].type,
				      "%s, step %zu: refused, yet bucket %zu "
				      "changed", c->what, j, b);
		}
		printf("  %-36s -> %s\n", c->what, str(err));
	}
}

/* ---- Kept state against a fresh pass -------------------------------------- */

#define MK_MARK(t, c, d)	{ .type = (t), .clean = (c), .dirty = (d) }
#define R_TYPE		"bucket type differs from a fresh mark pass"

struct compare_case {
	const char *what;
	struct hc_bucket_mark fresh, kept;
	const char *want;
};

static const struct compare_case compare_cases[] = {
	{ "same data", MK_MARK(HC_BUCKET_DATA, 3, 4),
	  MK_MARK(HC_BUCKET_DATA, 3, 4), NULL },
	{ "both free", MK_MARK(HC_BUCKET_FREE, 0, 0),
	  MK_MARK(HC_BUCKET_FREE, 0, 0), NULL },
	{ "clean differs", MK_MARK(HC_BUCKET_DATA, 3, 4),
	  MK_MARK(HC_BUCKET_DATA, 2, 4),
	  "clean sector count differs from a fresh mark pass" },
	{ "clean kept on a free bucket", MK_MARK(HC_BUCKET_FREE, 0, 0),
	  MK_MARK(HC_BUCKET_DATA, 1, 0),
	  "clean sector count differs from a fresh mark pass" },
	{ "dirty differs", MK_MARK(HC_BUCKET_DATA, 3, 4),
	  MK_MARK(HC_BUCKET_DATA, 3, 5),
	  "dirty sector count differs from a fresh mark pass" },
	{ "dirty counted as clean", MK_MARK(HC_BUCKET_DATA, 0, 8),
	  MK_MARK(HC_BUCKET_DATA, 8, 0),
	  "clean sector count differs from a fresh mark pass" },
	{ "dirty lost, btree", MK_MARK(HC_BUCKET_BTREE, 0, 1),
	  MK_MARK(HC_BUCKET_BTREE, 0, 0),
	  "dirty sector count differs from a fresh mark pass" },
	{ "a key lost", { .type = HC_BUCKET_DATA, .clean = 4, .ptrs = 2 },
	  { .type = HC_BUCKET_DATA, .clean = 4, .ptrs = 1 },
	  "pointer count differs from a fresh mark pass" },
	{ "a stale key kept on a free bucket",
	  { .type = HC_BUCKET_FREE, .ptrs = 0 },
	  { .type = HC_BUCKET_FREE, .ptrs = 1, .has_ptr = 1 },
	  "pointer count differs from a fresh mark pass" },
	{ "kept data, fresh free", MK_MARK(HC_BUCKET_FREE, 0, 0),
	  MK_MARK(HC_BUCKET_DATA, 0, 0), NULL },
	{ "kept free, fresh data", MK_MARK(HC_BUCKET_DATA, 0, 0),
	  MK_MARK(HC_BUCKET_FREE, 0, 0), R_TYPE },
	{ "kept data, fresh btree", MK_MARK(HC_BUCKET_BTREE, 0, 0),
	  MK_MARK(HC_BUCKET_DATA, 0, 0), R_TYPE },
	{ "kept btree, fresh data", MK_MARK(HC_BUCKET_DATA, 0, 0),
	  MK_MARK(HC_BUCKET_BTREE, 0, 0), R_TYPE },
	{ "kept data, fresh journal", MK_MARK(HC_BUCKET_JOURNAL, 0, 0),
	  MK_MARK(HC_BUCKET_DATA, 0, 0), R_TYPE },
	{ "kept free, fresh btree", MK_MARK(HC_BUCKET_BTREE, 0, 0),
	  MK_MARK(HC_BUCKET_FREE, 0, 0), R_TYPE },
	{ "kept prio, fresh free", MK_MARK(HC_BUCKET_FREE, 0, 0),
	  MK_MARK(HC_BUCKET_PRIO, 0, 0), R_TYPE },
	{ "kept table, fresh prio", MK_MARK(HC_BUCKET_PRIO, 0, 0),
	  MK_MARK(HC_BUCKET_TABLE, 0, 0), R_TYPE },
	{ "kept free, fresh superblock", MK_MARK(HC_BUCKET_SB, 0, 0),
	  MK_MARK(HC_BUCKET_FREE, 0, 0), R_TYPE },
	{ "same journal", MK_MARK(HC_BUCKET_JOURNAL, 0, 0),
	  MK_MARK(HC_BUCKET_JOURNAL, 0, 0), NULL },
	{ "same btree", MK_MARK(HC_BUCKET_BTREE, 0, 0),
	  MK_MARK(HC_BUCKET_BTREE, 0, 0), NULL },
	{ "oldest gen not compared",
	  { .type = HC_BUCKET_DATA, .clean = 1, .has_ptr = 1, .oldest_gen = 3 },
	  { .type = HC_BUCKET_DATA, .clean = 1, .has_ptr = 1, .oldest_gen = 9 },
	  NULL },
	{ "has_ptr not compared",
	  { .type = HC_BUCKET_FREE, .has_ptr = 1, .oldest_gen = 3 },
	  { .type = HC_BUCKET_FREE }, NULL },
};

static void test_compare(void)
{
	size_t i;

	printf("%zu kept states against a fresh pass\n",
	       ARRAY_LEN(compare_cases));
	for (i = 0; i < ARRAY_LEN(compare_cases); i++) {
		const struct compare_case *c = &compare_cases[i];
		const char *err = hc_mark_compare(&c->fresh, &c->kept);

		CHECK(same_str(err, c->want), "%s: got \"%s\", want \"%s\"",
		      c->what, str(err), str(c->want));
		printf("  %-30s -> %s\n", c->what, str(err));
	}
}

/* The kept oldest gen may be older than the pass's, never newer. */
static const struct gen_case {
	const char *what;
	u8 type, has_fresh, fresh_gen, has_kept, kept_gen, bucket_gen;
	const char *want;
} gen_cases[] = {
	{ "equal", HC_BUCKET_DATA, 1, 5, 1, 5, 9, NULL },
	{ "kept older", HC_BUCKET_DATA, 1, 5, 1, 2, 9, NULL },
	{ "kept older across the wrap", HC_BUCKET_FREE, 1, 3, 1, 250, 10,
	  NULL },
	{ "kept newer", HC_BUCKET_DATA, 1, 5, 1, 6, 9,
	  "kept oldest gen newer than a pointer into the bucket" },
	{ "kept newer across the wrap", HC_BUCKET_FREE, 1, 250, 1, 3, 10,
	  "kept oldest gen newer than a pointer into the bucket" },
	{ "kept none", HC_BUCKET_DATA, 1, 5, 0, 0, 9,
	  "kept state misses a pointer into the bucket" },
	{ "pass none", HC_BUCKET_DATA, 0, 0, 1, 7, 9, NULL },
	{ "btree bucket", HC_BUCKET_BTREE, 1, 5, 0, 0, 9, NULL },
};

static void test_compare_gen(void)
{
	const struct gen_case *cases = gen_cases;
	size_t i;

	for (i = 0; i < ARRAY_LEN(gen_cases); i++) {
		struct hc_bucket_mark fresh = {
			.type = cases[i].type, .has_ptr = cases[i].has_fresh,
			.oldest_gen = cases[i].fresh_gen,
		};
		struct hc_bucket_mark kept = {
			.type = cases[i].type, .has_ptr = cases[i].has_kept,
			.oldest_gen = cases[i].kept_gen,
		};
		const char *err = hc_mark_compare_gen(&fresh, &kept,
						      cases[i].bucket_gen);

		CHECK(same_str(err, cases[i].want), "%s: got \"%s\", want \"%s\"",
		      cases[i].what, str(err), str(cases[i].want));
	}
}

/*
 * The pass and the kept state agree on a whole bucket array; then each
 * kind of drift in the kept state is seen.
 */
static void test_compare_pass(void)
{
	static struct hc_bucket_mark fresh[NB];
	static struct hc_bucket buckets[NB];
	u64 ptr = hc_ptr_make(SEC(40, 0), 0, 4);
	u8 gens[NB] = { [40] = 4, [41] = 9, [44] = 1 };
	unsigned int bad = 0;
	u64 i;

	printf("a fresh pass against kept state\n");
	reset(fresh, buckets, gens);
	/* The kept state: what every insert left in the buckets. */
	for (i = 0; i < NB; i++)
		buckets[i].m.type = hc_bucket_fixed_type(&geom, i);
	buckets[40].m.type = HC_BUCKET_BTREE;
	buckets[41].m = (struct hc_bucket_mark){ .type = HC_BUCKET_DATA,
						 .clean = 6, .dirty = 3,
						 .ptrs = 3 };
	buckets[44].m.ptrs = 1;	/* a stale key still in the tree */
	buckets[42].m.type = HC_BUCKET_DATA;	/* open, nothing written */
	buckets[43].m.type = HC_BUCKET_PRIO;

	CHECK(!hc_mark_meta(&geom, fresh, buckets, 43, HC_BUCKET_PRIO, NULL),
	      "prio");
	CHECK(!hc_mark_meta(&geom, fresh, buckets, 40, HC_BUCKET_BTREE, &ptr),
	      "root");
	leaf_ok(fresh, buckets, KEY(41, 0, 6, 9, 0), "clean");
	leaf_ok(fresh, buckets, KEY(41, 6, 3, 9, HC_KEY_DIRTY), "dirty");
	leaf_ok(fresh, buckets, KEY(41, 9, 7, 8, HC_KEY_DIRTY), "stale");
	leaf_ok(fresh, buckets, KEY(44, 0, 16, 0, HC_KEY_DIRTY), "stale 44");
	for (i = 0; i < NB; i++)
		if (hc_mark_compare(&fresh[i], &buckets[i].m) && bad++ < 5)
			printf("    bucket %llu: %s\n", (u64)i,
			       hc_mark_compare(&fresh[i], &buckets[i].m));
	CHECK(!bad, "%u buckets differ from a consistent pass", bad);

	buckets[41].m.dirty--;
	CHECK(same_str(hc_mark_compare(&fresh[41], &buckets[41].m),
		       "dirty sector count differs from a fresh mark pass"),
	      "one dirty sector lost");
	buckets[41].m.dirty++;
	buckets[41].m.type = HC_BUCKET_FREE;
	CHECK(same_str(hc_mark_compare(&fresh[41], &buckets[41].m), R_TYPE),
	      "data bucket kept as free");
	buckets[40].m.type = HC_BUCKET_DATA;
	CHECK(same_str(hc_mark_compare(&fresh[40], &buckets[40].m), R_TYPE),
	      "btree bucket kept as data");
}

/* ---- Node ranges ---------------------------------------------------------- */

#define MAXK 4

struct range_case {
	const char *what;
	struct hc_key keys[MAXK];	/* ends at the first size 0 */
	u32 min_bdev;
	u64 min_end;
	u32 max_bdev;
	u64 max_end;
	const char *want;
};

#define R_BEFORE	"key starts before its node's range"
#define R_AFTER		"key ends after its node's range"

static const struct range_case range_cases[] = {
	{ "empty node", { }, 5, 1000, 1, 0, NULL },
	{ "inside", { RK(1, 100, 200), RK(1, 300, 400) },
	  1, 50, 1, 500, NULL },
	{ "exactly the range", { RK(1, 100, 200), RK(1, 300, 400) },
	  1, 100, 1, 400, NULL },
	{ "one sector before", { RK(1, 99, 200), RK(1, 300, 400) },
	  1, 100, 1, 400, R_BEFORE },
	{ "one sector after", { RK(1, 100, 200), RK(1, 300, 401) },
	  1, 100, 1, 400, R_AFTER },
	{ "both ends out", { RK(1, 0, 200), RK(1, 300, 900) },
	  1, 100, 1, 400, R_BEFORE },
	{ "a key ending at min", { RK(1, 50, 100), RK(1, 300, 400) },
	  1, 100, 1, 400, R_BEFORE },
	{ "a key starting at max", { RK(1, 100, 200), RK(1, 400, 401) },
	  1, 100, 1, 400, R_AFTER },
	{ "one key, both out", { RK(1, 0, 1000) }, 1, 100, 1, 400, R_BEFORE },
	{ "whiteout before", { WHITEOUT(8), RK(2, 0, 8) },
	  1, 1U << 20, 2, 8, R_BEFORE },
	/* Across backing devices: positions compare (bdev_id, sector). */
	{ "later bdevs, lower sectors", { RK(2, 0, 10), RK(3, 0, 10) },
	  1, 500, 4, 0, NULL },
	{ "earlier bdev, higher sectors", { RK(0, 1000, 2000), RK(1, 600, 700) },
	  1, 500, 2, 0, R_BEFORE },
	{ "bdev 0 before bdev 1 at 0", { RK(0, 0, 1) }, 1, 0, 1, 10, R_BEFORE },
	{ "last bdev, end within", { RK(1, 600, 700), RK(2, 0, 100) },
	  1, 500, 2, 100, NULL },
	{ "later bdev, lower sectors", { RK(1, 600, 700), RK(3, 0, 1) },
	  1, 500, 2, 100, R_AFTER },
	{ "earlier bdev, end past max_end", { RK(1, 600, 1U << 30) },
	  1, 500, 2, 100, NULL },
	{ "max_end of an earlier bdev", { RK(2, 0, 50) },
	  1, 0, 1, 1U << 30, R_AFTER },
	{ "min_end of a later bdev", { RK(1, 0, 50) },
	  2, 0, 3, 1, R_BEFORE },
	{ "whole keyspace", { RK(0, 0, 1), RK(~0U, (~0ULL) - 1, ~0ULL) },
	  0, 0, ~0U, ~0ULL, NULL },
};

static void test_ranges(void)
{
	size_t i, nr;

	printf("%zu node ranges\n", ARRAY_LEN(range_cases));
	for (i = 0; i < ARRAY_LEN(range_cases); i++) {
		const struct range_case *c = &range_cases[i];
		const char *err;

		for (nr = 0; nr < MAXK && c->keys[nr].size; nr++)
			;
		err = hc_node_range_check(c->keys, nr, c->min_bdev, c->min_end,
					  c->max_bdev, c->max_end);
		CHECK(same_str(err, c->want), "%s: got \"%s\", want \"%s\"",
		      c->what, str(err), str(c->want));
		printf("  %-32s -> %s\n", c->what, str(err));
	}
	/* nr is what counts: keys past it are not looked at. */
	CHECK(!hc_node_range_check(range_cases[4].keys, 1, 1, 100, 1, 400),
	      "the key past nr was read");
}

/* ---- Every rule has a table entry ------------------------------------------ */

/* Is @rule the expected error of some table entry? */
static bool rule_tested(const char *rule)
{
	size_t i, j;

	for (i = 0; i < ARRAY_LEN(mark_cases); i++)
		for (j = 0; j < MAXSTEPS; j++)
			if (same_str(mark_cases[i].steps[j].want, rule))
				return true;
	for (i = 0; i < ARRAY_LEN(compare_cases); i++)
		if (same_str(compare_cases[i].want, rule))
			return true;
	for (i = 0; i < ARRAY_LEN(range_cases); i++)
		if (same_str(range_cases[i].want, rule))
			return true;
	for (i = 0; i < ARRAY_LEN(gen_cases); i++)
		if (same_str(gen_cases[i].want, rule))
			return true;
	return false;
}

/*
 * hc_test_rules_covered() sees a rule only on a line with `return "`, so
 * a rule returned by a conditional expression (hc_mark_meta()'s last two)
 * would slip past it. Read mark.c's string literals outside comments as
 * well: each must be a bucket type's name or a tested rule.
 */
static void test_all_strings_covered(const char *path, unsigned int min)
{
	unsigned int n = 0, t;
	char lit[256];
	size_t len;
	FILE *f;
	int ch, prev;

	printf("every string in %s is a type name or a tested rule\n", path);
	f = fopen(path, "r");
	CHECK(f, "cannot open %s", path);
	if (!f)
		return;
	while ((ch = getc(f)) != EOF) {
		if (ch == '/') {
			ch = getc(f);
			if (ch == '/') {
				while ((ch = getc(f)) != EOF && ch != '\n')
					;
			} else if (ch == '*') {
				prev = 0;
				while ((ch = getc(f)) != EOF &&
				       !(prev == '*' && ch == '/'))
					prev = ch;
			} else if (ch != EOF) {
				ungetc(ch, f);
			}
			continue;
		}
		if (ch == '\'') {
			while ((ch = getc(f)) != EOF && ch != '\'')
				if (ch == '\\')
					getc(f);
			continue;
		}
		if (ch != '"')
			continue;
		len = 0;
		while ((ch = getc(f)) != EOF && ch != '"') {
			if (ch == '\\')
				ch = getc(f);
			if (len < sizeof(lit) - 1)
				lit[len++] = ch;
		}
		lit[len] = '\0';
		if (!strcmp(lit, "mark.h") || !strcmp(lit, "invalid"))
			continue;
		for (t = 0; t < HC_BUCKET_TYPE_NR; t++)
			if (!strcmp(lit, hc_bucket_type_name(t)))
				break;
		if (t < HC_BUCKET_TYPE_NR)
			continue;
		n++;
		CHECK(rule_tested(lit), "string \"%s\" has no table entry", lit);
	}
	fclose(f);
	CHECK(n >= min, "found only %u rule strings in %s", n, path);
	printf("  %u rule strings\n", n);
}

static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SRC_DIR "/mark.c", 14, rule_tested);
	test_all_strings_covered(HC_SRC_DIR "/mark.c", 16);
}

/* ---- Randomised accounting ------------------------------------------------ */

struct ref_ptr {
	u64 bucket;
	u8 gen;
};

/*
 * Does bucket @b's mark agree with @clean and @dirty live sectors, and with
 * the oldest gen among @keys found the slow way: the furthest behind the
 * bucket's gen, tried first?
 */
static bool bucket_matches(const struct hc_bucket_mark *m,
			   const struct hc_bucket *buckets,
			   const struct hc_key *keys, unsigned int nr, u64 b,
			   u32 clean, u32 dirty)
{
	const struct hc_bucket_mark *bm = &m[b];
	u8 type, oldest = 0;
	bool any = false;
	unsigned int j;
	int dist;

	for (dist = HC_GEN_REPLAY_DISTANCE; dist >= 0 && !any; dist--) {
		for (j = 0; j < nr && !any; j++) {
			const struct hc_key *k = &keys[j];

			if (k->nr_ptrs &&
			    hc_sector_to_bucket(&geom,
						hc_ptr_offset(k->ptr)) == b &&
			    hc_ptr_gen(k->ptr) == (u8)(buckets[b].gen - dist)) {
				any = true;
				oldest = hc_ptr_gen(k->ptr);
			}
		}
	}
	type = hc_bucket_fixed_type(&geom, b);
	if (type == HC_BUCKET_FREE && (clean || dirty))
		type = HC_BUCKET_DATA;
	if (bm->clean == clean && bm->dirty == dirty && bm->type == type &&
	    bm->has_ptr == any && (!any || bm->oldest_gen == oldest))
		return true;
	printf("    bucket %llu: clean %u/%u dirty %u/%u type %s/%s "
	       "has_ptr %u/%u oldest %u/%u\n", (u64)b, bm->clean, clean,
	       bm->dirty, dirty, hc_bucket_type_name(bm->type),
	       hc_bucket_type_name(type), bm->has_ptr, any, bm->oldest_gen,
	       oldest);
	return false;
}

/*
 * Random valid leaf keys into the data buckets, each pointer live or up to
 * HC_GEN_MAX_DISTANCE behind, in two orders; the marks must equal sums
 * and an oldest gen computed the slow way, and not depend on the order.
 */
static void test_random(void)
{
	enum { ROUNDS = 400, MAXKEYS = 300 };
	static struct hc_bucket_mark m[NB], m2[NB];
	static struct hc_bucket buckets[NB];
	static struct hc_key keys[MAXKEYS];
	unsigned int seed, round, bad = 0, keys_total = 0;
	const char *env = getenv("HC_TEST_SEED");
	u32 clean[NB], dirty[NB];

	seed = env ? strtoul(env, NULL, 0) : (unsigned int)time(NULL) ^ getpid();
	printf("randomised accounting, seed %u (HC_TEST_SEED)\n", seed);
	srandom(seed);
	for (round = 0; round < ROUNDS; round++) {
		unsigned int nr = random() % MAXKEYS, i;
		u64 b;

		reset(m, buckets, NULL);
		for (b = 0; b < NB; b++)
			buckets[b].gen = random();
		memset(clean, 0, sizeof(clean));
		memset(dirty, 0, sizeof(dirty));
		for (i = 0; i < nr; i++) {
			u32 size = 1 + random() % BS;
			u32 off = random() % (BS - size + 1);
			u8 d = random() % 3 ? 0 :
			       random() % (HC_GEN_MAX_DISTANCE + 1);
			u8 fl = random() % 2 ? HC_KEY_DIRTY : 0;

			b = DATA0 + random() % (NB - DATA0);
			if (!d && clean[b] + dirty[b] + size > BS)
				d = 1 + random() % HC_GEN_MAX_DISTANCE;
			if (random() % 16 == 0) {
				keys[i] = WHITEOUT(size);
				continue;
			}
			keys[i] = KEY(b, off, size, (u8)(buckets[b].gen - d), fl);
			if (!d)
				*(fl ? &dirty[b] : &clean[b]) += size;
		}
		keys_total += nr;
		for (i = 0; i < nr; i++)
			if (hc_mark_leaf_key(&geom, m, buckets, &keys[i]) &&
			    bad++ < 5)
				printf("    round %u key %u refused\n", round, i);
		/* The same keys in reverse. */
		hc_mark_reset(&geom, m2, NB);
		for (i = nr; i-- > 0; )
			hc_mark_leaf_key(&geom, m2, buckets, &keys[i]);
		if (memcmp(m, m2, sizeof(m)) && bad++ < 5)
			printf("    round %u: order matters\n", round);

		for (b = 0; b < NB && bad < 5; b++)
			if (!bucket_matches(m, buckets, keys, nr, b, clean[b],
					    dirty[b])) {
				printf("    in round %u\n", round);
				bad++;
			}
	}
	printf("  %u rounds, %u keys\n", ROUNDS, keys_total);
	CHECK(!bad, "%u mismatches (seed %u)", bad, seed);
}

int main(void)
{
	test_geometry();
	test_accounting();
	test_all_gens();
	test_mark_cases();
	test_compare();
	test_compare_gen();
	test_compare_pass();
	test_ranges();
	test_rules_covered();
	test_random();
	return hc_test_done("test_mark");
}
