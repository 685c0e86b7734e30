// SPDX-License-Identifier: GPL-2.0
/*
 * test_bset: sorted sets in drivers/md/hcache/bset.c: every geometric case
 * of an insert overlapping existing keys (resulting keys, pointer offsets
 * and the sectors_removed reports), -ENOSPC leaving the set unchanged,
 * compare-and-swap inserts, merges, the consistency check, encode/decode
 * with one corrupt sorted set per rule, and a randomised model check of
 * over a million inserts against a per-sector reference map.
 *
 * The model check's seed is random and printed; set HC_TEST_SEED to rerun
 * one, HC_TEST_OPS to change the number of operations.
 */

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bset.h"
#include "sb.h"
#include "testlib.h"

#define CACHE_SECTORS	(1ULL << 30)
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* A key with a pointer, and a whiteout; usable in static tables. */
#define MK(b, s, e, off, gen, fl)					\
	((struct hc_key){ .end = (e), .bdev_id = (b), .size = (e) - (s),	\
			  .ptr = (u64)(gen) << HC_PTR_GEN_SHIFT | (off),	\
			  .nr_ptrs = 1, .flags = (fl) })
#define WO(b, s, e)							\
	((struct hc_key){ .end = (e), .bdev_id = (b), .size = (e) - (s) })

static u64 hc_min_u64_t(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 hc_max_u64_t(u64 a, u64 b)
{
	return a > b ? a : b;
}

static bool key_equal(const struct hc_key *a, const struct hc_key *b)
{
	return a->end == b->end && a->ptr == b->ptr &&
	       a->bdev_id == b->bdev_id && a->size == b->size &&
	       a->nr_ptrs == b->nr_ptrs &&
	       a->flags == b->flags;
}

static void key_str(const struct hc_key *k, char *buf, size_t len)
{
	if (k->nr_ptrs)
		snprintf(buf, len, "%u:[%llu,%llu)@%llu"
			 "g%u%s", k->bdev_id, hc_key_start(k), (u64)k->end,
			 hc_ptr_offset(k->ptr), hc_ptr_gen(k->ptr),
			 k->flags & HC_KEY_DIRTY ? "d" : "");
	else
		snprintf(buf, len, "%u:[%llu,%llu)-",
			 k->bdev_id, hc_key_start(k), (u64)k->end);
}

static void print_set(const char *what, const struct hc_key *keys, size_t nr)
{
	char buf[96];
	size_t i;

	printf("    %s:", what);
	for (i = 0; i < nr; i++) {
		key_str(&keys[i], buf, sizeof(buf));
		printf(" %s", buf);
	}
	printf("\n");
}

static bool keys_equal(const struct hc_key *a, size_t na,
		       const struct hc_key *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (!key_equal(&a[i], &b[i]))
			return false;
	return true;
}

/* ---- sectors_removed recorder --------------------------------------------- */

struct report {
	u32 bdev;
	u64 key_start, key_end, start, end;
};

struct recorder {
	struct report r[16];
	size_t nr;
};

static void record(void *priv, const struct hc_key *k, u64 start, u64 end)
{
	struct recorder *rec = priv;

	if (rec->nr < ARRAY_LEN(rec->r))
		rec->r[rec->nr] = (struct report){ k->bdev_id, hc_key_start(k),
						   k->end, start, end };
	rec->nr++;
}

static bool reports_equal(const struct recorder *rec, const struct report *want)
{
	size_t n = 0;

	while (want[n].key_end)
		n++;
	if (rec->nr != n)
		return false;
	return !memcmp(rec->r, want, n * sizeof(*want));
}

/* ---- Insert: every geometric case ----------------------------------------- */

#define MAXK 8

struct insert_case {
	const char *what;
	struct hc_key before[MAXK];	/* ends at the first size 0 */
	struct hc_key new;
	bool keep_whiteouts;
	struct hc_key after[MAXK];
	struct report removed[MAXK];	/* ends at key_end 0 */
};

#define A	MK(1, 100, 200, 1000, 3, HC_KEY_DIRTY)

static const struct insert_case insert_cases[] = {
	{ "into an empty set", { }, MK(1, 10, 20, 50, 0, 0),
	  .after = { MK(1, 10, 20, 50, 0, 0) } },
	{ "before", { A }, MK(1, 10, 50, 5000, 1, 0),
	  .after = { MK(1, 10, 50, 5000, 1, 0), A } },
	{ "after", { A }, MK(1, 300, 400, 5000, 1, 0),
	  .after = { A, MK(1, 300, 400, 5000, 1, 0) } },
	{ "touching its start", { A }, MK(1, 50, 100, 5000, 1, 0),
	  .after = { MK(1, 50, 100, 5000, 1, 0), A } },
	{ "touching its end", { A }, MK(1, 200, 250, 5000, 1, 0),
	  .after = { A, MK(1, 200, 250, 5000, 1, 0) } },
	{ "front overlap", { A }, MK(1, 50, 150, 5000, 1, 0),
	  .after = { MK(1, 50, 150, 5000, 1, 0),
		     MK(1, 150, 200, 1050, 3, HC_KEY_DIRTY) },
	  .removed = { { 1, 100, 200, 100, 150 } } },
	{ "back overlap", { A }, MK(1, 150, 250, 5000, 1, 0),
	  .after = { MK(1, 100, 150, 1000, 3, HC_KEY_DIRTY),
		     MK(1, 150, 250, 5000, 1, 0) },
	  .removed = { { 1, 100, 200, 150, 200 } } },
	{ "covering", { A }, MK(1, 50, 250, 5000, 1, 0),
	  .after = { MK(1, 50, 250, 5000, 1, 0) },
	  .removed = { { 1, 100, 200, 100, 200 } } },
	{ "covered: split", { A }, MK(1, 120, 150, 5000, 1, 0),
	  .after = { MK(1, 100, 120, 1000, 3, HC_KEY_DIRTY),
		     MK(1, 120, 150, 5000, 1, 0),
		     MK(1, 150, 200, 1050, 3, HC_KEY_DIRTY) },
	  .removed = { { 1, 100, 200, 120, 150 } } },
	{ "one sector in the middle", { A }, MK(1, 199 - 50, 150, 7, 1, 0),
	  .after = { MK(1, 100, 149, 1000, 3, HC_KEY_DIRTY),
		     MK(1, 149, 150, 7, 1, 0),
		     MK(1, 150, 200, 1050, 3, HC_KEY_DIRTY) },
	  .removed = { { 1, 100, 200, 149, 150 } } },
	{ "same start, shorter", { A }, MK(1, 100, 150, 5000, 1, 0),
	  .after = { MK(1, 100, 150, 5000, 1, 0),
		     MK(1, 150, 200, 1050, 3, HC_KEY_DIRTY) },
	  .removed = { { 1, 100, 200, 100, 150 } } },
	{ "same end, shorter", { A }, MK(1, 150, 200, 5000, 1, 0),
	  .after = { MK(1, 100, 150, 1000, 3, HC_KEY_DIRTY),
		     MK(1, 150, 200, 5000, 1, 0) },
	  .removed = { { 1, 100, 200, 150, 200 } } },
	{ "exact match", { A }, MK(1, 100, 200, 5000, 1, 0),
	  .after = { MK(1, 100, 200, 5000, 1, 0) },
	  .removed = { { 1, 100, 200, 100, 200 } } },
	{ "several keys, ends cut",
	  { A, MK(1, 200, 300, 2000, 0, 0), MK(1, 350, 400, 3000, 0, 0),
	    MK(1, 400, 500, 4000, 0, 0) },
	  MK(1, 150, 450, 9000, 2, HC_KEY_DIRTY),
	  .after = { MK(1, 100, 150, 1000, 3, HC_KEY_DIRTY),
		     MK(1, 150, 450, 9000, 2, HC_KEY_DIRTY),
		     MK(1, 450, 500, 4050, 0, 0) },
	  .removed = { { 1, 100, 200, 150, 200 }, { 1, 200, 300, 200, 300 },
		       { 1, 350, 400, 350, 400 }, { 1, 400, 500, 400, 450 } } },
	{ "several keys, all covered",
	  { MK(1, 10, 20, 1, 0, 0), MK(1, 20, 30, 2, 0, 0),
	    MK(1, 40, 50, 3, 0, 0) },
	  MK(1, 10, 50, 9000, 2, 0),
	  .after = { MK(1, 10, 50, 9000, 2, 0) },
	  .removed = { { 1, 10, 20, 10, 20 }, { 1, 20, 30, 20, 30 },
		       { 1, 40, 50, 40, 50 } } },
	{ "other bdevs untouched",
	  { MK(0, 100, 200, 10, 0, 0), A, MK(2, 100, 200, 7000, 0, 0) },
	  MK(1, 0, 1000, 9000, 2, 0),
	  .after = { MK(0, 100, 200, 10, 0, 0), MK(1, 0, 1000, 9000, 2, 0),
		     MK(2, 100, 200, 7000, 0, 0) },
	  .removed = { { 1, 100, 200, 100, 200 } } },
	{ "other bdev, same sectors",
	  { A }, MK(2, 100, 200, 9000, 2, 0),
	  .after = { A, MK(2, 100, 200, 9000, 2, 0) } },
	{ "bdev 0xffffffff at the top of the range",
	  { A }, MK(0xffffffff, ~0ULL - 10, ~0ULL, 9000, 2, 0),
	  .after = { A, MK(0xffffffff, ~0ULL - 10, ~0ULL, 9000, 2, 0) } },
	{ "invalidate the middle", { A }, WO(1, 120, 150),
	  .after = { MK(1, 100, 120, 1000, 3, HC_KEY_DIRTY),
		     MK(1, 150, 200, 1050, 3, HC_KEY_DIRTY) },
	  .removed = { { 1, 100, 200, 120, 150 } } },
	{ "invalidate everything", { A, MK(1, 300, 310, 5, 0, 0) },
	  WO(1, 0, 1000),
	  .after = { },
	  .removed = { { 1, 100, 200, 100, 200 }, { 1, 300, 310, 300, 310 } } },
	{ "invalidate nothing cached", { A }, WO(1, 200, 300),
	  .after = { A } },
	{ "invalidate, whiteout kept", { A }, WO(1, 150, 250),
	  .keep_whiteouts = true,
	  .after = { MK(1, 100, 150, 1000, 3, HC_KEY_DIRTY), WO(1, 150, 250) },
	  .removed = { { 1, 100, 200, 150, 200 } } },
	{ "key over a kept whiteout", { WO(1, 100, 200) },
	  MK(1, 150, 160, 5, 0, 0), .keep_whiteouts = true,
	  .after = { WO(1, 100, 150), MK(1, 150, 160, 5, 0, 0),
		     WO(1, 160, 200) } },
};

static size_t count_keys(const struct hc_key *k)
{
	size_t n = 0;

	while (n < MAXK && k[n].size)
		n++;
	return n;
}

static void test_insert_cases(void)
{
	struct hc_key keys[MAXK + 2];
	struct hc_bset_mem set;
	struct recorder rec;
	struct hc_bset_ops ops = { record, &rec };
	const char *err;
	size_t i, nb;
	int ret;

	printf("%zu insert cases: keys, pointer offsets, removed sectors\n",
	       ARRAY_LEN(insert_cases));
	for (i = 0; i < ARRAY_LEN(insert_cases); i++) {
		const struct insert_case *c = &insert_cases[i];
		size_t na = count_keys(c->after);

		nb = count_keys(c->before);
		hc_bset_init(&set, keys, ARRAY_LEN(keys));
		set.keep_whiteouts = c->keep_whiteouts;
		memcpy(keys, c->before, nb * sizeof(*keys));
		set.nr = nb;
		err = hc_bset_check(&set);
		CHECK(!err, "%s: bad starting set: %s", c->what, err);
		memset(&rec, 0, sizeof(rec));
		ret = hc_bset_insert(&set, &c->new, &ops);
		CHECK(!ret, "%s: returned %d", c->what, ret);
		CHECK(keys_equal(keys, set.nr, c->after, na),
		      "%s: wrong keys", c->what);
		CHECK(reports_equal(&rec, c->removed),
		      "%s: wrong removed reports (%zu)", c->what, rec.nr);
		err = hc_bset_check(&set);
		CHECK(!err, "%s: result inconsistent: %s", c->what, err);
		printf("  %-36s %zu -> %zu keys, %zu removed\n", c->what, nb,
		       set.nr, rec.nr);
		if (!keys_equal(keys, set.nr, c->after, na)) {
			print_set("got ", keys, set.nr);
			print_set("want", c->after, na);
		}
	}
}

static int ins(struct hc_bset_mem *set, struct hc_key k,
	       const struct hc_bset_ops *ops)
{
	return hc_bset_insert(set, &k, ops);
}

static void test_insert_errors(void)
{
	struct hc_key keys[4], copy[4], bad;
	struct hc_bset_mem set;
	struct recorder rec;
	struct hc_bset_ops ops = { record, &rec };
	int ret;

	printf("-ENOSPC and -EINVAL leave the set unchanged\n");
	memset(keys, 0x5a, sizeof(keys));
	hc_bset_init(&set, keys, 2);
	keys[0] = A;
	set.nr = 1;
	memcpy(copy, keys, sizeof(keys));
	memset(&rec, 0, sizeof(rec));
	/* A split needs two more keys; only one fits. */
	ret = ins(&set, MK(1, 120, 130, 9, 0, 0), &ops);
	CHECK(ret == -ENOSPC, "split into a full set: %d", ret);
	CHECK(set.nr == 1 && !memcmp(keys, copy, sizeof(keys)),
	      "set changed by a failed insert");
	CHECK(!rec.nr, "callback made by a failed insert");
	/* A front overlap needs one more key: fits exactly. */
	ret = ins(&set, MK(1, 50, 130, 9, 0, 0), &ops);
	CHECK(!ret && set.nr == 2 && rec.nr == 1, "exact fit: %d %zu", ret,
	      set.nr);
	/* Full now: an overwrite that does not grow still works. */
	ret = ins(&set, MK(1, 50, 130, 7, 0, 0), NULL);
	CHECK(!ret && set.nr == 2, "full set, same-size overwrite: %d", ret);
	ret = ins(&set, MK(1, 500, 530, 7, 0, 0), NULL);
	CHECK(ret == -ENOSPC && set.nr == 2, "full set, new key: %d", ret);
	/* A whiteout that splits with keep_whiteouts off needs one more. */
	ret = ins(&set, WO(1, 160, 170), NULL);
	CHECK(ret == -ENOSPC && set.nr == 2, "full set, split by whiteout: %d",
	      ret);

	memcpy(copy, keys, sizeof(keys));
	bad = MK(1, 10, 10, 1, 0, 0);
	ret = hc_bset_insert(&set, &bad, NULL);
	CHECK(ret == -EINVAL, "size 0 key: %d", ret);
	bad = MK(1, 10, 20, 1, 0, 0);
	bad.nr_ptrs = 2;
	ret = hc_bset_insert(&set, &bad, NULL);
	CHECK(ret == -EINVAL, "two pointers: %d", ret);
	bad = WO(1, 10, 20);
	bad.flags = HC_KEY_DIRTY;
	ret = hc_bset_insert(&set, &bad, NULL);
	CHECK(ret == -EINVAL, "dirty whiteout: %d", ret);
	CHECK(!memcmp(keys, copy, sizeof(keys)), "set changed by -EINVAL");
}

/* ---- Compare-and-swap inserts ---------------------------------------------- */

struct cmpxchg_case {
	const char *what;
	struct hc_key before[MAXK];
	struct hc_key new;
	struct hc_key expected;
	u64 inserted;
	struct hc_key after[MAXK];
};

#define A_CLEAN		MK(1, 100, 200, 1000, 3, 0)

static const struct cmpxchg_case cmpxchg_cases[] = {
	{ "writeback: key unchanged", { A }, A_CLEAN, A, 100,
	  { A_CLEAN } },
	{ "writeback: overwritten meanwhile",
	  { MK(1, 100, 200, 9000, 3, HC_KEY_DIRTY) }, A_CLEAN, A, 0,
	  { MK(1, 100, 200, 9000, 3, HC_KEY_DIRTY) } },
	{ "writeback: bucket reused (gen 4)",
	  { MK(1, 100, 200, 1000, 4, HC_KEY_DIRTY) }, A_CLEAN, A, 0,
	  { MK(1, 100, 200, 1000, 4, HC_KEY_DIRTY) } },
	{ "writeback: already clean", { A_CLEAN }, A_CLEAN, A, 0,
	  { A_CLEAN } },
	{ "writeback: partly overwritten",
	  { MK(1, 100, 130, 1000, 3, HC_KEY_DIRTY),
	    MK(1, 130, 160, 9000, 1, 0),
	    MK(1, 160, 200, 1060, 3, HC_KEY_DIRTY) },
	  A_CLEAN, A, 70,
	  { MK(1, 100, 130, 1000, 3, 0), MK(1, 130, 160, 9000, 1, 0),
	    MK(1, 160, 200, 1060, 3, 0) } },
	{ "writeback: same data moved elsewhere",
	  { MK(1, 100, 200, 1001, 3, HC_KEY_DIRTY) }, A_CLEAN, A, 0,
	  { MK(1, 100, 200, 1001, 3, HC_KEY_DIRTY) } },
	{ "writeback: a piece of the key",
	  { A }, MK(1, 120, 150, 1020, 3, 0), A, 30,
	  { MK(1, 100, 120, 1000, 3, HC_KEY_DIRTY), MK(1, 120, 150, 1020, 3, 0),
	    MK(1, 150, 200, 1050, 3, HC_KEY_DIRTY) } },
	{ "writeback: expected is a piece",
	  { A }, A_CLEAN, MK(1, 150, 160, 1050, 3, HC_KEY_DIRTY), 10,
	  { MK(1, 100, 150, 1000, 3, HC_KEY_DIRTY), MK(1, 150, 160, 1050, 3, 0),
	    MK(1, 160, 200, 1060, 3, HC_KEY_DIRTY) } },
	{ "writeback: key grew past expected",
	  { MK(1, 50, 250, 950, 3, HC_KEY_DIRTY) }, A_CLEAN, A, 100,
	  { MK(1, 50, 100, 950, 3, HC_KEY_DIRTY), A_CLEAN,
	    MK(1, 200, 250, 1100, 3, HC_KEY_DIRTY) } },
	{ "promotion: nothing cached", { }, MK(1, 0, 300, 5000, 0, 0),
	  WO(1, 0, 300), 300, { MK(1, 0, 300, 5000, 0, 0) } },
	{ "promotion: cached meanwhile in the middle", { A },
	  MK(1, 0, 300, 5000, 0, 0), WO(1, 0, 300), 200,
	  { MK(1, 0, 100, 5000, 0, 0), A, MK(1, 200, 300, 5200, 0, 0) } },
	{ "promotion: all cached meanwhile", { A },
	  MK(1, 100, 200, 5000, 0, 0), WO(1, 100, 200), 0, { A } },
	{ "promotion: only inside expected", { },
	  MK(1, 0, 300, 5000, 0, 0), WO(1, 100, 120), 20,
	  { MK(1, 100, 120, 5100, 0, 0) } },
	{ "invalidate if unchanged", { A }, WO(1, 100, 200), A, 100, { } },
	{ "invalidate, changed meanwhile",
	  { MK(1, 100, 150, 1000, 3, HC_KEY_DIRTY),
	    MK(1, 150, 200, 8000, 3, HC_KEY_DIRTY) },
	  WO(1, 100, 200), A, 50,
	  { MK(1, 150, 200, 8000, 3, HC_KEY_DIRTY) } },
	{ "other bdev", { A }, MK(2, 100, 200, 1000, 3, 0), A, 0, { A } },
	{ "disjoint ranges", { A }, MK(1, 300, 400, 1000, 3, 0), A, 0,
	  { A } },
};

static void test_cmpxchg(void)
{
	struct hc_key keys[MAXK + 2], copy[MAXK + 2], good, bad;
	struct hc_bset_mem set;
	struct recorder rec;
	struct hc_bset_ops ops = { record, &rec };
	const char *err;
	u64 inserted;
	size_t i, nb, na, j;
	int ret;

	printf("%zu compare-and-swap inserts\n", ARRAY_LEN(cmpxchg_cases));
	for (i = 0; i < ARRAY_LEN(cmpxchg_cases); i++) {
		const struct cmpxchg_case *c = &cmpxchg_cases[i];
		u64 removed = 0;

		nb = count_keys(c->before);
		na = count_keys(c->after);
		hc_bset_init(&set, keys, ARRAY_LEN(keys));
		memcpy(keys, c->before, nb * sizeof(*keys));
		set.nr = nb;
		memset(&rec, 0, sizeof(rec));
		ret = hc_bset_insert_cmpxchg(&set, &c->new, &c->expected, &ops,
					     &inserted);
		CHECK(!ret, "%s: returned %d", c->what, ret);
		CHECK_EQ_U64(inserted, c->inserted, c->what);
		CHECK(keys_equal(keys, set.nr, c->after, na),
		      "%s: wrong keys", c->what);
		if (!keys_equal(keys, set.nr, c->after, na)) {
			print_set("got ", keys, set.nr);
			print_set("want", c->after, na);
		}
		/* Every qualifying sector of a key was reported removed. */
		for (j = 0; j < rec.nr && j < ARRAY_LEN(rec.r); j++)
			removed += rec.r[j].end - rec.r[j].start;
		CHECK(removed == (c->expected.nr_ptrs ? c->inserted : 0),
		      "%s: %llu sectors reported removed", c->what,
		      removed);
		err = hc_bset_check(&set);
		CHECK(!err, "%s: result inconsistent: %s", c->what, err);
		printf("  %-44s inserted %3llu, %zu keys\n", c->what,
		       inserted, set.nr);

		/* With one slot less than needed: -ENOSPC, unchanged. */
		if (set.nr > nb) {
			hc_bset_init(&set, keys, set.nr - 1);
			memcpy(keys, c->before, nb * sizeof(*keys));
			set.nr = nb;
			memcpy(copy, keys, sizeof(keys));
			memset(&rec, 0, sizeof(rec));
			ret = hc_bset_insert_cmpxchg(&set, &c->new,
						     &c->expected, &ops,
						     &inserted);
			CHECK(ret == -ENOSPC && set.nr == nb && !rec.nr &&
			      !inserted && !memcmp(keys, copy, sizeof(keys)),
			      "%s: one slot short: %d, set changed?", c->what,
			      ret);
		}
	}

	hc_bset_init(&set, keys, ARRAY_LEN(keys));
	good = A;
	bad = MK(1, 5, 5, 0, 0, 0);
	ret = hc_bset_insert_cmpxchg(&set, &bad, &good, NULL, &inserted);
	CHECK(ret == -EINVAL, "invalid new: %d", ret);
	ret = hc_bset_insert_cmpxchg(&set, &good, &bad, NULL, NULL);
	CHECK(ret == -EINVAL, "invalid expected: %d", ret);
}

/* ---- Merge ----------------------------------------------------------------- */

static void test_merge(void)
{
	struct hc_key ok[MAXK], nk[MAXK], dk[16], sk[16];
	struct hc_bset_mem older, newer, dst, seq;
	static const struct hc_key older_keys[] = {
		MK(1, 0, 100, 0, 0, 0), MK(1, 100, 200, 1000, 3, HC_KEY_DIRTY),
		MK(1, 300, 400, 3000, 0, 0), MK(2, 0, 50, 50, 0, 0),
	};
	static const struct hc_key newer_keys[] = {
		MK(1, 50, 60, 9000, 1, 0), WO(1, 120, 150),
		MK(1, 150, 350, 9100, 1, 0), WO(2, 10, 20),
		MK(3, 0, 10, 9400, 1, 0),
	};
	static const struct hc_key want[] = {
		MK(1, 0, 50, 0, 0, 0), MK(1, 50, 60, 9000, 1, 0),
		MK(1, 60, 100, 60, 0, 0),
		MK(1, 100, 120, 1000, 3, HC_KEY_DIRTY),
		MK(1, 150, 350, 9100, 1, 0), MK(1, 350, 400, 3050, 0, 0),
		MK(2, 0, 10, 50, 0, 0), MK(2, 20, 50, 70, 0, 0),
		MK(3, 0, 10, 9400, 1, 0),
	};
	const char *err;
	size_t i;
	int ret;

	printf("merge: newer wins, whiteouts hide older keys\n");
	hc_bset_init(&older, ok, MAXK);
	hc_bset_init(&newer, nk, MAXK);
	hc_bset_init(&dst, dk, 16);
	newer.keep_whiteouts = true;
	for (i = 0; i < ARRAY_LEN(older_keys); i++)
		CHECK(!hc_bset_insert(&older, &older_keys[i], NULL), "older");
	for (i = 0; i < ARRAY_LEN(newer_keys); i++)
		CHECK(!hc_bset_insert(&newer, &newer_keys[i], NULL), "newer");
	ret = hc_bset_merge(&dst, &older, &newer);
	CHECK(!ret, "merge returned %d", ret);
	CHECK(keys_equal(dk, dst.nr, want, ARRAY_LEN(want)), "merged keys");
	if (!keys_equal(dk, dst.nr, want, ARRAY_LEN(want))) {
		print_set("got ", dk, dst.nr);
		print_set("want", want, ARRAY_LEN(want));
	}
	err = hc_bset_check(&dst);
	CHECK(!err, "merged set inconsistent: %s", err);

	/* Same as inserting newer's keys one by one into older. */
	hc_bset_init(&seq, sk, 16);
	memcpy(sk, ok, older.nr * sizeof(*sk));
	seq.nr = older.nr;
	for (i = 0; i < newer.nr; i++)
		CHECK(!hc_bset_insert(&seq, &nk[i], NULL), "sequential");
	CHECK(keys_equal(dk, dst.nr, sk, seq.nr), "merge == sequential inserts");

	/* Whiteouts kept in dst when asked. */
	dst.keep_whiteouts = true;
	dst.capacity = 10;
	ret = hc_bset_merge(&dst, &older, &newer);
	CHECK(ret == -ENOSPC && dst.nr == 0,
	      "11 keys with whiteouts do not fit in 10: %d, %zu left", ret,
	      dst.nr);
	dst.capacity = 16;
	{
		struct hc_key big[16];
		struct hc_bset_mem d2;

		hc_bset_init(&d2, big, 16);
		d2.keep_whiteouts = true;
		ret = hc_bset_merge(&d2, &older, &newer);
		CHECK(!ret && d2.nr == 11, "with whiteouts: %d, %zu keys", ret,
		      d2.nr);
		CHECK(!hc_bset_check(&d2), "with whiteouts: consistent");
		CHECK(d2.nr == 11 && !d2.keys[4].nr_ptrs &&
		      d2.keys[4].end == 150, "whiteout [120,150) kept");
	}

	/* Empty sides. */
	hc_bset_init(&seq, sk, 16);
	dst.keep_whiteouts = false;
	ret = hc_bset_merge(&dst, &older, &seq);
	CHECK(!ret && keys_equal(dk, dst.nr, ok, older.nr), "newer empty");
	ret = hc_bset_merge(&dst, &seq, &older);
	CHECK(!ret && keys_equal(dk, dst.nr, ok, older.nr), "older empty");
	ret = hc_bset_merge(&dst, &seq, &newer);
	CHECK(!ret && dst.nr == 3, "older empty, whiteouts dropped: %zu",
	      dst.nr);
}

/* ---- Consistency check ------------------------------------------------------ */

struct check_case {
	const char *what;
	struct hc_key keys[MAXK];
	size_t capacity;		/* 0: MAXK */
	const char *want;
};

static const struct check_case check_cases[] = {
	{ "empty", { }, .want = NULL },
	{ "touching keys", { MK(1, 0, 10, 0, 0, 0), MK(1, 10, 20, 0, 0, 0) },
	  .want = NULL },
	{ "bdev order", { MK(1, 50, 60, 0, 0, 0), MK(2, 0, 10, 0, 0, 0) },
	  .want = NULL },
	{ "ends out of order", { MK(1, 20, 30, 0, 0, 0), MK(1, 0, 10, 0, 0, 0) },
	  .want = "keys out of order" },
	{ "bdevs out of order", { MK(2, 0, 10, 0, 0, 0), MK(1, 20, 30, 0, 0, 0) },
	  .want = "keys out of order" },
	{ "same end", { MK(1, 5, 10, 0, 0, 0), MK(1, 0, 10, 0, 0, 0) },
	  .want = "keys out of order" },
	{ "overlap", { MK(1, 0, 10, 0, 0, 0), MK(1, 9, 20, 0, 0, 0) },
	  .want = "keys overlap" },
	{ "nested", { MK(1, 0, 10, 0, 0, 0), MK(1, 0, 20, 0, 0, 0) },
	  .want = "keys overlap" },
	{ "invalid key", { MK(1, 0, 10, 0, 0, 0), MK(1, 10, 10, 0, 0, 0),
			   MK(1, 10, 20, 0, 0, 0) },
	  .want = "key size 0" },
	{ "over capacity", { MK(1, 0, 10, 0, 0, 0), MK(1, 10, 20, 0, 0, 0) },
	  .capacity = 1, .want = "more keys than the set can hold" },
};

static void test_check(void)
{
	struct hc_key keys[MAXK];
	struct hc_bset_mem set;
	const char *err;
	size_t i, n;

	printf("%zu sets against hc_bset_check()\n", ARRAY_LEN(check_cases));
	for (i = 0; i < ARRAY_LEN(check_cases); i++) {
		const struct check_case *c = &check_cases[i];

		memcpy(keys, c->keys, sizeof(keys));
		/* Up to the last key with an end: "invalid key" has size 0. */
		for (n = MAXK; n && !keys[n - 1].end; n--)
			;
		hc_bset_init(&set, keys, c->capacity ?: MAXK);
		set.nr = n;
		err = hc_bset_check(&set);
		CHECK(c->want ? err && !strcmp(err, c->want) : !err,
		      "%s: got \"%s\", want \"%s\"", c->what,
		      err ? err : "(valid)", c->want ? c->want : "(valid)");
		printf("  %-24s -> %s\n", c->what, err ? err : "valid");
	}
}

/* ---- Encode and decode ------------------------------------------------------ */

#define SET_MAGIC	0x0123456789abcdefULL
#define BUF_U64S	64

static const struct hc_key base_keys[] = {
	MK(1, 0, 100, 0, 0, 0), WO(1, 100, 110),
	MK(1, 110, 200, 1000, 3, HC_KEY_DIRTY),
	MK(2, 0, 50, 4000, 255, HC_KEY_DIRTY),
};

/* The base set, encoded: 4 + 3 + 4 + 4 = 15 u64s of keys. */
static size_t base_encode(u64 *buf)
{
	struct hc_key keys[MAXK];
	struct hc_bset_info info = { 0x1111, 0x2222 };
	struct hc_bset_mem set;
	int ret;

	hc_bset_init(&set, keys, MAXK);
	memcpy(keys, base_keys, sizeof(base_keys));
	set.nr = ARRAY_LEN(base_keys);
	memset(buf, 0, BUF_U64S * sizeof(u64));
	ret = hc_bset_encode(&set, SET_MAGIC, &info, buf, BUF_U64S * 8);
	CHECK(!ret, "base encode: %d", ret);
	return hc_bset_bytes(hc_bset_encode_u64s(&set));
}

static void test_encode(void)
{
	u64 buf[BUF_U64S], buf2[BUF_U64S];
	struct hc_key keys[MAXK], z[1];
	struct hc_bset_mem set;
	struct hc_bset_info info;
	const char *err;
	size_t bytes;
	int ret;

	printf("sorted set byte layout and round trip\n");
	bytes = base_encode(buf);
	CHECK_EQ_U64(bytes, 32 + 15 * 8, "encoded size");
	CHECK_EQ_U64(get_le(buf, 8), SET_MAGIC ^ HC_BSET_MAGIC, "magic @0");
	CHECK_EQ_U64(get_le((u8 *)buf + 12, 4), 15, "u64s @12");
	CHECK_EQ_U64(get_le((u8 *)buf + 16, 8), 0x1111, "node_seq @16");
	CHECK_EQ_U64(get_le((u8 *)buf + 24, 8), 0x2222, "journal_seq @24");
	CHECK_EQ_U64(get_le((u8 *)buf + 32 + 32 + 16, 1), 0,
		     "whiteout nr_ptrs @80");
	memcpy(buf2, buf, sizeof(buf));
	memset((u8 *)buf2 + 8, 0, 4);
	CHECK_EQ_U64(get_le((u8 *)buf + 8, 4), hc_csum(buf2, bytes),
		     "csum @8 is CRC-32C of header and keys, csum zeroed");

	hc_bset_init(&set, keys, MAXK);
	ret = hc_bset_decode(buf, sizeof(buf), SET_MAGIC, CACHE_SECTORS, &set,
			     &info, &err);
	CHECK(!ret && !err, "decode: %d %s", ret, err);
	CHECK(keys_equal(keys, set.nr, base_keys, ARRAY_LEN(base_keys)),
	      "round trip keys");
	CHECK(info.node_seq == 0x1111 && info.journal_seq == 0x2222,
	      "round trip seqs");
	ret = hc_bset_decode(buf, bytes, SET_MAGIC, CACHE_SECTORS, &set,
			     &info, &err);
	CHECK(!ret, "decode with exactly its length: %d %s", ret, err);
	ret = hc_bset_encode(&set, SET_MAGIC, &info, buf2, bytes - 1);
	CHECK(ret == -ENOSPC, "encode into a short buffer: %d", ret);
	ret = hc_bset_encode(&set, SET_MAGIC, &info, buf2, bytes);
	CHECK(!ret && !memcmp(buf, buf2, bytes), "re-encode identical");

	/* An empty set, and one that does not fit the caller's array. */
	hc_bset_init(&set, z, 0);
	ret = hc_bset_encode(&set, SET_MAGIC, &info, buf2, 32);
	CHECK(!ret, "encode empty set into 32 bytes: %d", ret);
	ret = hc_bset_decode(buf2, 32, SET_MAGIC, CACHE_SECTORS, &set, &info,
			     &err);
	CHECK(!ret && !set.nr, "empty set round trip: %d %s", ret, err);
	hc_bset_init(&set, keys, 3);
	ret = hc_bset_decode(buf, sizeof(buf), SET_MAGIC, CACHE_SECTORS, &set,
			     &info, &err);
	CHECK(ret == -ENOSPC && !set.nr && err &&
	      !strcmp(err, "more keys than the set can hold"),
	      "4 keys into 3: %d %s", ret, err);
}

struct corrupt {
	const char *what;
	size_t off;		/* byte to overwrite, little-endian */
	unsigned int width;	/* 0: none */
	u64 val;
	bool keep_csum;		/* do not fix the checksum afterwards */
	size_t len;		/* bytes passed; 0: the whole buffer */
	u64 cache_sectors;	/* 0: CACHE_SECTORS */
	int ret;
	const char *want;
};

/* Offsets of the keys of the base set. */
#define K0	32
#define K1	(K0 + 32)
#define K2	(K1 + 24)
#define K3	(K2 + 32)

static const struct corrupt table[] = {
	{ "valid", .want = NULL },
	{ "31 bytes", .len = 31, .ret = -EINVAL,
	  .want = "sorted set shorter than its header" },
	{ "magic of another set", 0, 8, SET_MAGIC, .ret = -EINVAL,
	  .want = "bad magic" },
	{ "superblock magic", 0, 8, HC_SB_MAGIC, .ret = -EINVAL,
	  .want = "bad magic" },
	{ "u64s past the buffer", 12, 4, BUF_U64S - 4 + 1, .ret = -EUCLEAN,
	  .want = "keys run past the end of the buffer" },
	{ "u64s ~0", 12, 4, 0xffffffff, .ret = -EUCLEAN,
	  .want = "keys run past the end of the buffer" },
	{ "u64s past a short length", .len = 32 + 14 * 8, .ret = -EUCLEAN,
	  .want = "keys run past the end of the buffer" },
	{ "flipped key byte", K2 + 3, 1, 0x40, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "flipped node_seq", 16, 1, 0x12, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "csum zero", 8, 4, 0, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum mismatch" },
	{ "u64s 14: last key cut", 12, 4, 14, .ret = -EUCLEAN,
	  .want = "key pointer runs past the end of the keys" },
	{ "u64s 13: header cut", 12, 4, 13, .ret = -EUCLEAN,
	  .want = "key header runs past the end of the keys" },
	{ "u64s 11: ends between keys", 12, 4, 11, .ret = 0, .want = NULL },
	{ "two pointers", K2 + 16, 1, 2, .ret = -EUCLEAN,
	  .want = "key has more than one pointer" },
	{ "key padding", K0 + 18, 2, 0x100, .ret = -EUCLEAN,
	  .want = "key padding not zero" },
	{ "size 0", K1 + 12, 4, 0, .ret = -EUCLEAN, .want = "key size 0" },
	{ "starts before 0", K0 + 12, 4, 101, .ret = -EUCLEAN,
	  .want = "key starts before sector 0" },
	{ "flag bit 3", K3 + 17, 1, 9, .ret = -EUCLEAN,
	  .want = "unknown key flag bits" },
	{ "key pad2", K3 + 20, 4, 1, .ret = -EUCLEAN,
	  .want = "key padding not zero" },
	{ "dirty whiteout", K1 + 17, 1, 1, .ret = -EUCLEAN,
	  .want = "whiteout key with flags" },
	{ "cache dev 1", K3 + 24 + 6, 1, 1, .ret = -EUCLEAN,
	  .want = "pointer to a cache device other than 0" },
	{ "offset 2^48 - 1", K3 + 24, 6, HC_PTR_OFFSET_MAX, .ret = -EUCLEAN,
	  .want = "extent runs past the largest cache offset" },
	{ "past a small cache", .cache_sectors = 4049, .ret = -EUCLEAN,
	  .want = "pointer past the end of the cache device" },
	{ "at the end of a small cache", .cache_sectors = 4050, .ret = 0,
	  .want = NULL },
	{ "ends out of order", K2 + 0, 8, 90, .ret = -EUCLEAN,
	  .want = "keys out of order" },
	{ "same end", K2 + 0, 8, 110, .ret = -EUCLEAN,
	  .want = "keys out of order" },
	{ "bdevs out of order", K3 + 8, 4, 0, .ret = -EUCLEAN,
	  .want = "keys out of order" },
	{ "overlap", K2 + 12, 4, 91, .ret = -EUCLEAN, .want = "keys overlap" },
	{ "whiteout overlaps", K1 + 12, 4, 11, .ret = -EUCLEAN,
	  .want = "keys overlap" },
	{ "keys touching after edit", K1 + 12, 4, 5, .ret = 0, .want = NULL },
};

static void test_decode_table(void)
{
	u64 buf[BUF_U64S];
	struct hc_key keys[MAXK];
	struct hc_bset_mem set;
	struct hc_bset_info info;
	const char *err;
	size_t i;
	int ret;

	printf("%zu corrupt and edge-case sorted sets\n", ARRAY_LEN(table));
	for (i = 0; i < ARRAY_LEN(table); i++) {
		const struct corrupt *c = &table[i];

		base_encode(buf);
		if (c->width)
			put_le((u8 *)buf + c->off, c->width, c->val);
		if (!c->keep_csum && get_le((u8 *)buf + 12, 4) <= BUF_U64S - 4)
			put_le((u8 *)buf + 8, 4,
			       hc_bset_csum((struct hc_bset_disk *)buf));
		hc_bset_init(&set, keys, MAXK);
		err = "not set";
		ret = hc_bset_decode(buf, c->len ? c->len : sizeof(buf),
				     SET_MAGIC, c->cache_sectors ?: CACHE_SECTORS,
				     &set, &info, &err);
		CHECK(ret == c->ret, "%s: returned %d, want %d", c->what, ret,
		      c->ret);
		CHECK(c->want ? err && !strcmp(err, c->want) : !err,
		      "%s: got \"%s\", want \"%s\"", c->what,
		      err ? err : "(valid)", c->want ? c->want : "(valid)");
		CHECK(!ret || !set.nr, "%s: keys left after an error", c->what);
		CHECK(ret || !hc_bset_check(&set), "%s: accepted inconsistent",
		      c->what);
		printf("  %-30s -> %4d %s\n", c->what, ret, err ? err : "valid");
	}
}

/* Is @rule the expected error of some table entry? */
static bool rule_tested(const char *rule)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++)
		if (table[i].want && !strcmp(table[i].want, rule))
			return true;
	for (i = 0; i < ARRAY_LEN(check_cases); i++)
		if (check_cases[i].want && !strcmp(check_cases[i].want, rule))
			return true;
	return false;
}

/* Every error string in bset.c must be the want of some table entry. */
static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SRC_DIR "/bset.c", 7, rule_tested);
}

/* ---- Randomised model check ------------------------------------------------- */

/*
 * A reference map of every sector of three backing devices (one of them at
 * the very top of the sector range) to (cache offset, gen, dirty), updated
 * sector by sector next to the sorted set. Alternating phases of 4096
 * operations: plain inserts and invalidations, checked in batches of 64
 * against a merge of the set as it was before the batch with a set (keeping
 * whiteouts) of just the batch; and a mix with compare-and-swap inserts.
 * Every sectors_removed report is checked against the reference as it was
 * before the operation, and per-bucket live-sector counts kept from the
 * reports must match the reference. Every 1000 operations and at the end,
 * every sector is looked up, the set checked and round-tripped through
 * encode/decode. About one operation in 997 is first tried with no spare
 * capacity: if it fails with -ENOSPC the set must be unchanged.
 */

#define M_BDEVS		3
#define M_SECTORS	2048
#define M_CAP		(M_BDEVS * M_SECTORS + 16)
#define M_OFFSETS	(1U << 20)
#define M_BUCKET_SHIFT	6
#define M_BUCKETS	((M_OFFSETS + 1024) >> M_BUCKET_SHIFT)
#define M_BATCH		64
#define M_PHASE		4096
#define M_CHECKPOINT	1000

static const u32 m_bdev[M_BDEVS] = { 0, 7, 0xffffffff };
static const u64 m_base[M_BDEVS] = { 0, 1ULL << 40, ~0ULL - M_SECTORS };

struct m_sector {
	u64	off;
	u8	mapped, gen, dirty;
};

struct model {
	struct m_sector ref[M_BDEVS][M_SECTORS];
	bool qual[M_SECTORS];
	long live[M_BUCKETS];
	struct hc_key keys[M_CAP], copy[M_CAP], snap[M_CAP], newer[M_CAP],
		      merged[M_CAP];
	u64 buf[4 + 4 * M_CAP];
	struct hc_bset_mem set, newer_set, snap_set, merged_set;
	u64 rng, op_nr;
	/* The operation in progress, for the report checks. */
	int op_b;
	u64 op_start, op_end, reported;
	bool failed;
	/* Statistics. */
	u64 inserts, invals, cmpxchgs, cmpxchg_sectors, enospc, merges;
	u64 checkpoints, max_keys;
};

static struct model *M;

#define MCHECK(cond, ...)						\
	do {								\
		if (!(cond) && !M->failed) {				\
			M->failed = true;				\
			hc_test_failures++;				\
			printf("FAIL %s:%d: op %llu: %s: ",	\
			       __FILE__, __LINE__, M->op_nr, #cond);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

static u64 rnd64(void)
{
	u64 z = (M->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u64 rnd(u64 n)
{
	return rnd64() % n;
}

static size_t m_bucket(u64 off)
{
	return off >> M_BUCKET_SHIFT;
}

/* sectors_removed: every reported sector mapped to that key before. */
static void m_removed(void *priv, const struct hc_key *k, u64 start, u64 end)
{
	u64 base = m_base[M->op_b], x;

	(void)priv;
	MCHECK(k->bdev_id == m_bdev[M->op_b], "report for bdev %u",
	       k->bdev_id);
	MCHECK(start < end && start >= hc_key_start(k) && end <= k->end &&
	       start >= base + M->op_start && end <= base + M->op_end,
	       "report [%llu,%llu) outside key or op", start,
	       end);
	MCHECK(k->nr_ptrs, "report for a whiteout");
	if (M->failed)
		return;
	for (x = start; x < end; x++) {
		const struct m_sector *s = &M->ref[M->op_b][x - base];
		u64 off = hc_ptr_offset(k->ptr) + (x - hc_key_start(k));

		MCHECK(s->mapped && s->off == off &&
		       s->gen == hc_ptr_gen(k->ptr) &&
		       s->dirty == !!(k->flags & HC_KEY_DIRTY),
		       "reported sector %llu was not mapped there", x);
		M->live[m_bucket(off)]--;
	}
	M->reported += end - start;
}

static const struct hc_bset_ops m_ops = { m_removed, NULL };

static void m_set_sector(int b, u64 x, const struct hc_key *k)
{
	struct m_sector *s = &M->ref[b][x];

	if (!k->nr_ptrs) {
		s->mapped = 0;
		return;
	}
	s->mapped = 1;
	s->off = hc_ptr_offset(k->ptr) + (m_base[b] + x - hc_key_start(k));
	s->gen = hc_ptr_gen(k->ptr);
	s->dirty = !!(k->flags & HC_KEY_DIRTY);
	M->live[m_bucket(s->off)]++;
}

/* A random key of bdev b inside the model's domain. */
static struct hc_key m_random_key(int b, u64 start, u64 end, bool whiteout)
{
	struct hc_key k = { .bdev_id = m_bdev[b], .end = m_base[b] + end,
			    .size = end - start };

	if (whiteout)
		return k;
	k.nr_ptrs = 1;
	k.ptr = hc_ptr_make(rnd(M_OFFSETS), 0, rnd(4));
	k.flags = rnd(2) ? HC_KEY_DIRTY : 0;
	return k;
}

/* Run an insert, first with no spare capacity now and then. */
static int m_run(const struct hc_key *new, const struct hc_key *expected,
		 u64 *inserted)
{
	struct hc_bset_mem *set = &M->set;
	size_t nr = set->nr;
	bool probe = !rnd(997);
	int ret;

	if (probe) {
		memcpy(M->copy, M->keys, nr * sizeof(*M->keys));
		set->capacity = nr;
	}
	M->reported = 0;
	if (expected)
		ret = hc_bset_insert_cmpxchg(set, new, expected, &m_ops,
					     inserted);
	else
		ret = hc_bset_insert(set, new, &m_ops);
	set->capacity = M_CAP;
	if (probe && ret == -ENOSPC) {
		M->enospc++;
		MCHECK(set->nr == nr && !M->reported &&
		       !memcmp(M->copy, M->keys, nr * sizeof(*M->keys)),
		       "-ENOSPC changed the set");
		MCHECK(!inserted || !*inserted, "-ENOSPC but inserted");
		if (expected)
			ret = hc_bset_insert_cmpxchg(set, new, expected,
						     &m_ops, inserted);
		else
			ret = hc_bset_insert(set, new, &m_ops);
	} else if (probe) {
		MCHECK(set->nr <= nr, "grew past a full set");
	}
	MCHECK(!ret, "insert returned %d", ret);
	return ret;
}

static void m_insert(bool batch)
{
	int b = rnd(M_BDEVS);
	unsigned int shape = rnd(16);
	u64 size = !shape ? 1 + rnd(512) : shape < 5 ? 1 + rnd(4) : 1 + rnd(64);
	u64 start = rnd(M_SECTORS - size + 1), x, was = 0;
	bool whiteout = !rnd(7);
	struct hc_key k = m_random_key(b, start, start + size, whiteout);

	M->op_b = b;
	M->op_start = start;
	M->op_end = start + size;
	for (x = start; x < start + size; x++)
		was += M->ref[b][x].mapped;
	if (m_run(&k, NULL, NULL))
		return;
	MCHECK(M->reported == was, "reported %llu sectors, %llu"
	       " were mapped", M->reported, was);
	for (x = start; x < start + size; x++)
		m_set_sector(b, x, &k);
	if (whiteout)
		M->invals++;
	else
		M->inserts++;
	if (batch)
		MCHECK(!hc_bset_insert(&M->newer_set, &k, NULL),
		       "insert into the batch set failed");
}

static void m_cmpxchg(void)
{
	int b = rnd(M_BDEVS);
	u64 base = m_base[b], x = rnd(M_SECTORS), es, ee, ns, ne, want = 0;
	const struct hc_key *found = hc_bset_find(&M->set, m_bdev[b], base + x);
	struct hc_key exp, new;
	u64 inserted;
	unsigned int r = rnd(8);

	if (found && r < 5) {
		/* A key of the set, perhaps a piece, perhaps changed. */
		exp = *found;
		es = hc_key_start(&exp) - base + rnd(exp.size);
		ee = es + 1 + rnd(exp.end - base - es);
		hc_key_cut_front(&exp, base + es);
		hc_key_cut_back(&exp, base + ee);
		switch (rnd(8)) {
		case 0:
			exp.flags ^= HC_KEY_DIRTY;
			break;
		case 1:
			exp.ptr = hc_ptr_make(hc_ptr_offset(exp.ptr),
					      0, hc_ptr_gen(exp.ptr) + 1);
			break;
		case 2:
			exp.ptr = hc_ptr_make(hc_ptr_offset(exp.ptr) + 1,
					      0, hc_ptr_gen(exp.ptr));
			break;
		}
	} else {
		es = rnd(M_SECTORS);
		ee = es + 1 + rnd(hc_min_u64_t(M_SECTORS - es, 128));
		exp = m_random_key(b, es, ee, r < 7);
	}

	ns = es > 16 ? es - rnd(16) : es;
	ne = hc_min_u64_t(ee + rnd(16), M_SECTORS);
	r = rnd(10);
	if (r < 5 && exp.nr_ptrs && hc_ptr_offset(exp.ptr) >= es - ns) {
		/* Writeback: the same data, now clean. */
		new = exp;
		new.ptr = hc_ptr_make(hc_ptr_offset(exp.ptr) - (es - ns), 0,
				      hc_ptr_gen(exp.ptr));
		new.end = base + ne;
		new.size = ne - ns;
		new.flags &= ~HC_KEY_DIRTY;
	} else {
		new = m_random_key(b, ns, ne, r >= 8);
	}

	for (x = hc_max_u64_t(ns, es); x < hc_min_u64_t(ne, ee); x++) {
		const struct m_sector *s = &M->ref[b][x];

		if (exp.nr_ptrs)
			M->qual[x] = s->mapped &&
				s->off == hc_ptr_offset(exp.ptr) + (x - es) &&
				s->gen == hc_ptr_gen(exp.ptr) &&
				s->dirty == !!(exp.flags & HC_KEY_DIRTY);
		else
			M->qual[x] = !s->mapped;
		want += M->qual[x];
	}
	M->op_b = b;
	M->op_start = ns;
	M->op_end = ne;
	if (m_run(&new, &exp, &inserted))
		return;
	MCHECK(inserted == want, "cmpxchg inserted %llu, want %llu",
	       inserted, want);
	MCHECK(M->reported == (exp.nr_ptrs ? want : 0),
	       "cmpxchg reported %llu, want %llu", M->reported,
	       exp.nr_ptrs ? want : 0);
	for (x = hc_max_u64_t(ns, es); x < hc_min_u64_t(ne, ee); x++)
		if (M->qual[x])
			m_set_sector(b, x, &new);
	M->cmpxchgs++;
	M->cmpxchg_sectors += inserted;
}

static void m_checkpoint(void)
{
	static long live[M_BUCKETS];
	struct hc_bset_info info = { M->op_nr, ~M->op_nr }, info2;
	const char *err;
	size_t i;
	int b, ret;
	u64 x;

	M->checkpoints++;
	if (M->set.nr > M->max_keys)
		M->max_keys = M->set.nr;
	err = hc_bset_check(&M->set);
	MCHECK(!err, "set inconsistent: %s", err);
	for (i = 0; i < M->set.nr; i++)
		MCHECK(M->keys[i].nr_ptrs, "whiteout in a resolved set");

	memset(live, 0, sizeof(live));
	for (b = 0; b < M_BDEVS && !M->failed; b++) {
		u64 base = m_base[b];

		for (x = 0; x < M_SECTORS; x++) {
			const struct m_sector *s = &M->ref[b][x];
			const struct hc_key *k;

			k = hc_bset_find(&M->set, m_bdev[b], base + x);
			if (!s->mapped) {
				MCHECK(!k, "bdev %u sector %llu"
				       " should not be cached", m_bdev[b], x);
				continue;
			}
			live[m_bucket(s->off)]++;
			MCHECK(k, "bdev %u sector %llu not found",
			       m_bdev[b], x);
			if (!k)
				break;
			MCHECK(hc_ptr_offset(k->ptr) + (base + x -
						       hc_key_start(k)) == s->off &&
			       hc_ptr_gen(k->ptr) == s->gen &&
			       !!(k->flags & HC_KEY_DIRTY) == s->dirty,
			       "bdev %u sector %llu maps elsewhere",
			       m_bdev[b], x);
		}
		if (b != M_BDEVS - 1)
			MCHECK(!hc_bset_find(&M->set, m_bdev[b],
					     base + M_SECTORS),
			       "sector past the domain found");
		MCHECK(!hc_bset_find(&M->set, m_bdev[b] + 1, base + 5) ||
		       b == 0, "unknown bdev found");
	}
	MCHECK(!memcmp(live, M->live, sizeof(live)),
	       "live-sector counts from the reports are wrong");

	ret = hc_bset_encode(&M->set, 0x5555, &info, M->buf, sizeof(M->buf));
	MCHECK(!ret, "encode: %d", ret);
	ret = hc_bset_decode(M->buf, sizeof(M->buf), 0x5555, M_OFFSETS + 1024,
			     &M->merged_set, &info2, &err);
	MCHECK(!ret, "decode: %d %s", ret, err);
	MCHECK(keys_equal(M->keys, M->set.nr, M->merged, M->merged_set.nr) &&
	       info2.node_seq == M->op_nr && info2.journal_seq == ~M->op_nr,
	       "encode/decode round trip differs");
}

static void m_batch_start(void)
{
	memcpy(M->snap, M->keys, M->set.nr * sizeof(*M->keys));
	M->snap_set.nr = M->set.nr;
	M->newer_set.nr = 0;
}

static void m_batch_end(void)
{
	const char *err = hc_bset_check(&M->newer_set);
	int ret;

	MCHECK(!err, "batch set inconsistent: %s", err);
	ret = hc_bset_merge(&M->merged_set, &M->snap_set, &M->newer_set);
	MCHECK(!ret, "merge: %d", ret);
	MCHECK(keys_equal(M->merged, M->merged_set.nr, M->keys, M->set.nr),
	       "merge differs from sequential inserts (%zu vs %zu keys)",
	       M->merged_set.nr, M->set.nr);
	M->merges++;
}

static void test_model(void)
{
	const char *env_seed = getenv("HC_TEST_SEED");
	const char *env_ops = getenv("HC_TEST_OPS");
	u64 seed, ops, i;
	struct timespec t0, t1;
	double secs;

	seed = env_seed ? strtoull(env_seed, NULL, 0) :
			  (u64)time(NULL) * 1000003 ^ (u64)getpid();
	ops = env_ops ? strtoull(env_ops, NULL, 0) : 1000000;
	printf("model check: %llu operations, seed %llu"
	       " (rerun with HC_TEST_SEED=%llu)\n", ops, seed, seed);
	M = calloc(1, sizeof(*M));
	CHECK(M, "out of memory");
	if (!M)
		return;
	M->rng = seed;
	hc_bset_init(&M->set, M->keys, M_CAP);
	hc_bset_init(&M->newer_set, M->newer, M_CAP);
	M->newer_set.keep_whiteouts = true;
	hc_bset_init(&M->snap_set, M->snap, M_CAP);
	hc_bset_init(&M->merged_set, M->merged, M_CAP);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < ops && !M->failed; i++) {
		bool plain = !((i / M_PHASE) & 1);

		M->op_nr = i;
		if (plain && i % M_BATCH == 0)
			m_batch_start();
		if (!plain && !rnd(5))
			m_cmpxchg();
		else
			m_insert(plain);
		if (plain && (i % M_BATCH == M_BATCH - 1 || i == ops - 1))
			m_batch_end();
		if (i % M_CHECKPOINT == M_CHECKPOINT - 1)
			m_checkpoint();
	}
	if (!M->failed)
		m_checkpoint();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	/* Counted as checks: operations, batches and checkpoints passed. */
	hc_test_checks += i + M->merges + M->checkpoints;
	CHECK(M->failed || i == ops, "stopped early");
	CHECK(M->failed || (M->enospc > 0 && M->cmpxchg_sectors > 0),
	      "model never hit -ENOSPC (%llu) or a cmpxchg insert",
	      M->enospc);
	printf("  %llu inserts, %llu invalidations, %llu"
	       " cmpxchg (%llu sectors), %llu -ENOSPC probes"
	       " refused, %llu merges, %llu checkpoints, up to %llu keys, %.1f s%s\n", M->inserts, M->invals, M->cmpxchgs,
	       M->cmpxchg_sectors, M->enospc, M->merges, M->checkpoints,
	       M->max_keys, secs, M->failed ? " (FAILED, seed above)" : "");
	free(M);
}

int main(void)
{
	test_insert_cases();
	test_insert_errors();
	test_cmpxchg();
	test_merge();
	test_check();
	test_encode();
	test_decode_table();
	test_rules_covered();
	test_model();
	return hc_test_done("test_bset");
}
