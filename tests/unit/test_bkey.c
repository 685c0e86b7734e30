// SPDX-License-Identifier: GPL-2.0
/*
 * test_bkey: keys in drivers/md/hcache/bkey.c: the pointer bit layout, gen
 * arithmetic across the 8-bit wrap-around, cutting, same-mapping, the
 * validity rules, and key encode/decode with one corrupt key per rule. It
 * reads bkey.c and fails if any error string there is missing from the
 * tables, so a new rule cannot land untested.
 */

#include <stdlib.h>

#include "bkey.h"
#include "testlib.h"

#define CACHE_SECTORS	(1ULL << 30)

static struct hc_key mk(u32 bdev, u64 start, u64 end, u64 off, u8 gen,
			u8 flags)
{
	struct hc_key k = {
		.end = end, .bdev_id = bdev, .size = end - start,
		.ptr = hc_ptr_make(off, 0, gen), .nr_ptrs = 1, .flags = flags,
	};
	return k;
}

static bool key_equal(const struct hc_key *a, const struct hc_key *b)
{
	return a->end == b->end && a->ptr == b->ptr &&
	       a->bdev_id == b->bdev_id && a->size == b->size &&
	       a->nr_ptrs == b->nr_ptrs &&
	       a->flags == b->flags;
}

static void test_ptr(void)
{
	u64 p;

	printf("pointer bit layout: offset 0-47, dev 48-55, gen 56-63\n");
	p = hc_ptr_make(0x123456789abcULL, 0x5a, 0xc3);
	CHECK_EQ_U64(p, 0xc35a123456789abcULL, "packed pointer");
	CHECK_EQ_U64(hc_ptr_offset(p), 0x123456789abcULL, "offset");
	CHECK_EQ_U64(hc_ptr_dev(p), 0x5a, "dev");
	CHECK_EQ_U64(hc_ptr_gen(p), 0xc3, "gen");
	p = hc_ptr_make(HC_PTR_OFFSET_MAX + 2, 0, 0);
	CHECK_EQ_U64(p, 1, "offset bits above 47 dropped");
	p = hc_ptr_make(HC_PTR_OFFSET_MAX, 0xff, 0xff);
	CHECK_EQ_U64(p, ~0ULL, "all ones");
}

static void test_gen(void)
{
	unsigned int a, b, bad = 0;

	printf("gens across the wrap-around\n");
	CHECK(hc_gen_after(3, 250), "3 is after 250");
	CHECK(!hc_gen_after(250, 3), "250 is not after 3");
	CHECK(hc_gen_after(0, 255), "0 is after 255");
	CHECK(!hc_gen_after(7, 7), "7 is not after 7");
	CHECK(hc_gen_after(127, 0), "127 is after 0");
	CHECK(!hc_gen_after(128, 0), "128 is not after 0 (ambiguous)");
	CHECK_EQ_U64(hc_gen_distance(3, 250), 9, "distance 250 -> 3");
	CHECK_EQ_U64(hc_gen_distance(250, 3), 247, "distance 3 -> 250");
	CHECK_EQ_U64(hc_gen_distance(9, 9), 0, "distance to itself");
	CHECK(hc_ptr_stale(3, 250), "ptr gen 250 in bucket gen 3 is stale");
	CHECK(!hc_ptr_stale(250, 250), "equal gens are not stale");
	CHECK(HC_GEN_MAX_DISTANCE < 128, "max distance below 128: %u",
	      HC_GEN_MAX_DISTANCE);

	/* The rule of bkey.h: within the distance, order is unambiguous. */
	for (a = 0; a < 256; a++) {
		for (b = 0; b < 256; b++) {
			u8 d = hc_gen_distance(a, b);
			bool after = ((a - b) & 0xff) >= 1 &&
				     ((a - b) & 0xff) <= 127;

			if (hc_gen_after(a, b) != after)
				bad++;
			if (d != ((a - b) & 0xff))
				bad++;
			if (d >= 1 && d <= HC_GEN_MAX_DISTANCE &&
			    (!hc_gen_after(a, b) || hc_gen_after(b, a) ||
			     !hc_ptr_stale(a, b)))
				bad++;
			if (!d && (hc_ptr_stale(a, b) || hc_gen_after(a, b)))
				bad++;
		}
	}
	CHECK(!bad, "all 65536 gen pairs: %u wrong", bad);
}

static void test_cut(void)
{
	struct hc_key k, w;

	printf("cutting keys: offsets follow\n");
	k = mk(1, 100, 200, 5000, 9, HC_KEY_DIRTY);
	hc_key_cut_front(&k, 130);
	CHECK_EQ_U64(hc_key_start(&k), 130, "cut front: start");
	CHECK_EQ_U64(k.end, 200, "cut front: end");
	CHECK_EQ_U64(k.size, 70, "cut front: size");
	CHECK_EQ_U64(hc_ptr_offset(k.ptr), 5030, "cut front: offset +30");
	CHECK_EQ_U64(hc_ptr_gen(k.ptr), 9, "cut front: gen kept");
	CHECK_EQ_U64(k.flags, HC_KEY_DIRTY, "cut front: flags kept");
	hc_key_cut_back(&k, 150);
	CHECK_EQ_U64(hc_key_start(&k), 130, "cut back: start");
	CHECK_EQ_U64(k.size, 20, "cut back: size");
	CHECK_EQ_U64(hc_ptr_offset(k.ptr), 5030, "cut back: offset kept");

	k = mk(1, 100, 200, 5000, 9, HC_KEY_DIRTY);
	w = k;
	hc_key_cut_front(&k, 50);
	hc_key_cut_back(&k, 300);
	CHECK(key_equal(&k, &w), "cuts outside the key change nothing");
	hc_key_cut_front(&k, 100);
	hc_key_cut_back(&k, 200);
	CHECK(key_equal(&k, &w), "cuts at the key's ends change nothing");
	hc_key_cut_front(&k, 500);
	CHECK(k.size == 0 && k.end == 200 &&
	      hc_ptr_offset(k.ptr) == 5100, "cut front past end: empty at end");
	k = w;
	hc_key_cut_back(&k, 10);
	CHECK(k.size == 0 && k.end == 100 && hc_ptr_offset(k.ptr) == 5000,
	      "cut back before start: empty at start");

	memset(&w, 0, sizeof(w));
	w.end = 50;
	w.size = 50;
	hc_key_cut_front(&w, 10);
	CHECK(w.ptr == 0 && w.size == 40, "whiteout cut keeps ptr 0");
}

static void test_same_mapping(void)
{
	struct hc_key a = mk(1, 100, 200, 5000, 9, HC_KEY_DIRTY), b;
	struct hc_key w1 = { .end = 10, .size = 5 }, w2 = { .end = 99,
							      .size = 1 };

	printf("same mapping\n");
	b = a;
	hc_key_cut_front(&b, 150);
	CHECK(hc_key_same_mapping(&a, &b), "a piece maps like the whole");
	b = mk(1, 300, 400, 5200, 9, HC_KEY_DIRTY);
	CHECK(hc_key_same_mapping(&a, &b), "a disjoint continuation too");
	b = mk(1, 100, 200, 5001, 9, HC_KEY_DIRTY);
	CHECK(!hc_key_same_mapping(&a, &b), "offset differs");
	b = mk(1, 100, 200, 5000, 10, HC_KEY_DIRTY);
	CHECK(!hc_key_same_mapping(&a, &b), "gen differs");
	b = mk(1, 100, 200, 5000, 9, 0);
	CHECK(!hc_key_same_mapping(&a, &b), "dirty flag differs");
	CHECK(hc_key_same_mapping(&w1, &w2), "whiteouts map alike");
	CHECK(!hc_key_same_mapping(&a, &w1), "key vs whiteout");
}

/* ---- Validity rules, in memory and on disk -------------------------------- */

struct bad_key {
	const char *what;
	struct hc_key k;
	const char *want;
};

static const struct bad_key bad_keys[] = {
	{ "valid", { .end = 10, .size = 10, .nr_ptrs = 1 }, NULL },
	{ "valid whiteout", { .end = 10, .size = 1 }, NULL },
	{ "valid, last cache sector", { .end = 10, .size = 1, .nr_ptrs = 1,
	  .ptr = HC_PTR_OFFSET_MAX }, NULL },
	{ "two pointers", { .end = 10, .size = 10, .nr_ptrs = 2 },
	  "key has more than one pointer" },
	{ "size 0", { .end = 10, .nr_ptrs = 1 }, "key size 0" },
	{ "end below size", { .end = 9, .size = 10, .nr_ptrs = 1 },
	  "key starts before sector 0" },
	{ "flag bit 2", { .end = 10, .size = 10, .nr_ptrs = 1, .flags = 4 },
	  "unknown key flag bits" },
	{ "flag bit 7", { .end = 10, .size = 10, .nr_ptrs = 1, .flags = 128 },
	  "unknown key flag bits" },
	{ "retired csum flag", { .end = 10, .size = 10, .nr_ptrs = 1,
	  .flags = HC_KEY_RETIRED_CSUM }, "unknown key flag bits" },
	{ "dirty whiteout", { .end = 10, .size = 10, .flags = HC_KEY_DIRTY },
	  "whiteout key with flags" },
	{ "whiteout with ptr", { .end = 10, .size = 10, .ptr = 1 },
	  "whiteout key with a pointer" },
	{ "cache dev 1", { .end = 10, .size = 10, .nr_ptrs = 1,
	  .ptr = 1ULL << HC_PTR_DEV_SHIFT },
	  "pointer to a cache device other than 0" },
	{ "past 2^48", { .end = 10, .size = 2, .nr_ptrs = 1,
	  .ptr = HC_PTR_OFFSET_MAX }, "extent runs past the largest cache offset" },
};

static void test_invalid(void)
{
	size_t i;

	printf("%zu keys against hc_key_invalid()\n",
	       sizeof(bad_keys) / sizeof(bad_keys[0]));
	for (i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++) {
		const struct bad_key *b = &bad_keys[i];
		const char *err = hc_key_invalid(&b->k);

		CHECK(b->want ? err && !strcmp(err, b->want) : !err,
		      "%s: got \"%s\", want \"%s\"", b->what,
		      err ? err : "(valid)", b->want ? b->want : "(valid)");
		printf("  %-28s -> %s\n", b->what, err ? err : "valid");
	}
}

static void test_encode(void)
{
	u64 buf[4];
	struct hc_key k = mk(0xfeedf00d, 0x100000000ULL, 0x100000010ULL,
			     0xabcdef, 0x77, HC_KEY_DIRTY);
	struct hc_key out;
	const char *err;
	size_t used;
	int ret;

	printf("key byte layout and round trips\n");
	memset(buf, 0xa5, sizeof(buf));
	CHECK_EQ_U64(hc_key_encode(&k, (struct hc_key_disk *)buf), 4,
		     "key with a pointer is 4 u64s");
	CHECK_EQ_U64(get_le(buf, 8), 0x100000010ULL, "end @0");
	CHECK_EQ_U64(get_le((u8 *)buf + 8, 4), 0xfeedf00d, "bdev @8");
	CHECK_EQ_U64(get_le((u8 *)buf + 12, 4), 16, "size @12");
	CHECK_EQ_U64(get_le((u8 *)buf + 16, 1), 1, "nr_ptrs @16");
	CHECK_EQ_U64(get_le((u8 *)buf + 17, 1), 1, "flags @17");
	CHECK_EQ_U64(get_le((u8 *)buf + 18, 2), 0, "pad @18");
	CHECK_EQ_U64(get_le((u8 *)buf + 20, 4), 0, "pad2 @20");
	CHECK_EQ_U64(get_le((u8 *)buf + 24, 8), 0x7700000000abcdefULL,
		     "pointer @24");
	ret = hc_key_decode(buf, sizeof(buf), CACHE_SECTORS, &out, &used, &err);
	CHECK(!ret && !err, "decode: %d %s", ret, err);
	CHECK_EQ_U64(used, 32, "decode used 32 bytes");
	CHECK(key_equal(&k, &out), "round trip equal");

	memset(&k, 0, sizeof(k));
	k.end = 77;
	k.size = 7;
	k.bdev_id = 3;
	CHECK_EQ_U64(hc_key_encode(&k, (struct hc_key_disk *)buf), 3,
		     "whiteout is 3 u64s");
	ret = hc_key_decode(buf, 24, CACHE_SECTORS, &out, &used, &err);
	CHECK(!ret && used == 24 && key_equal(&k, &out),
	      "whiteout round trip: %d %s", ret, err);
}

/* One corrupt key per decode rule: a valid key, then one change. */
struct corrupt {
	const char *what;
	size_t off;		/* byte to overwrite, little-endian */
	unsigned int width;	/* 0: none */
	u64 val;
	size_t len;		/* bytes passed; 0: 32 */
	u64 cache_sectors;	/* 0: CACHE_SECTORS */
	const char *want;
};

static const struct corrupt table[] = {
	{ "valid", .want = NULL },
	{ "23 bytes", .len = 23,
	  .want = "key header runs past the end of the keys" },
	{ "nr_ptrs 2", 16, 1, 2, .want = "key has more than one pointer" },
	{ "nr_ptrs 255", 16, 1, 255, .want = "key has more than one pointer" },
	{ "pointer cut off", .len = 31,
	  .want = "key pointer runs past the end of the keys" },
	{ "pad 1", 18, 2, 1, .want = "key padding not zero" },
	{ "size 0", 12, 4, 0, .want = "key size 0" },
	{ "end 5 size 16", 0, 8, 5, .want = "key starts before sector 0" },
	{ "flag bit 2", 17, 1, 5, .want = "unknown key flag bits" },
	{ "retired csum flag", 17, 1, 3, .want = "unknown key flag bits" },
	{ "pad2 1", 20, 4, 1, .want = "key padding not zero" },
	{ "whiteout with flags", 16, 1, 0, .want = "whiteout key with flags" },
	{ "cache dev 2", 30, 1, 2,
	  .want = "pointer to a cache device other than 0" },
	{ "offset 2^48 - 1", 24, 6, HC_PTR_OFFSET_MAX,
	  .want = "extent runs past the largest cache offset" },
	{ "past the cache", .cache_sectors = 1000 + 15,
	  .want = "pointer past the end of the cache device" },
	{ "exactly at the cache end", .cache_sectors = 1000 + 16,
	  .want = NULL },
};

static void test_decode_table(void)
{
	struct hc_key k, out;
	u64 buf[4];
	const char *err;
	size_t i, len;
	int ret;

	printf("%zu corrupt and edge-case keys\n",
	       sizeof(table) / sizeof(table[0]));
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct corrupt *c = &table[i];
		u8 *b = (u8 *)buf;
		unsigned int w;

		k = mk(4, 84, 100, 1000, 5, HC_KEY_DIRTY);
		hc_key_encode(&k, (struct hc_key_disk *)buf);
		for (w = 0; w < c->width; w++)
			b[c->off + w] = c->val >> (8 * w);
		len = c->len ? c->len : sizeof(buf);
		err = "not set";
		ret = hc_key_decode(buf, len, c->cache_sectors ?: CACHE_SECTORS,
				    &out, NULL, &err);
		CHECK(ret == (c->want ? -EUCLEAN : 0), "%s: returned %d",
		      c->what, ret);
		CHECK(c->want ? err && !strcmp(err, c->want) : !err,
		      "%s: got \"%s\", want \"%s\"", c->what,
		      err ? err : "(valid)", c->want ? c->want : "(valid)");
		printf("  %-28s -> %4d %s\n", c->what, ret, err ? err : "valid");
	}
	ret = hc_key_decode(buf, 0, CACHE_SECTORS, &out, NULL, &err);
	CHECK(ret == -EUCLEAN, "0 bytes rejected: %d %s", ret, err);
}

/* Is @rule the expected error of some table entry? */
static bool rule_tested(const char *rule)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].want && !strcmp(table[i].want, rule))
			return true;
	for (i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++)
		if (bad_keys[i].want && !strcmp(bad_keys[i].want, rule))
			return true;
	return false;
}

/* Every error string in bkey.c must be the want of some table entry. */
static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SRC_DIR "/bkey.c", 13, rule_tested);
}

int main(void)
{
	test_ptr();
	test_gen();
	test_cut();
	test_same_mapping();
	test_invalid();
	test_encode();
	test_decode_table();
	test_rules_covered();
	return hc_test_done("test_bkey");
}
