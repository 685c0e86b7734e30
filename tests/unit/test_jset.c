// SPDX-License-Identifier: GPL-2.0
/*
 * test_jset: journal entries in drivers/md/hcache/jset.c: byte layout, the
 * checksum's extent (header and keys, not the block padding), encode and
 * decode round trips with keys kept in insertion order (unsorted,
 * overlapping, whiteouts), -ENOSPC on both sides, and one corrupt entry
 * per validation rule with its errno. It also reads jset.c and fails if
 * any error string there is missing from the table.
 */

#include "jset.h"
#include "sb.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define SET_MAGIC	0x0123456789abcdefULL
#define CACHE_SECTORS	(1ULL << 30)
#define NBUCKETS	1000ULL
#define BUF_U64S	64
#define MAXK		8

#define MK(b, s, e, off, gen, fl)					\
	((struct hc_key){ .end = (e), .bdev_id = (b), .size = (e) - (s),	\
			  .ptr = (u64)(gen) << HC_PTR_GEN_SHIFT | (off),	\
			  .nr_ptrs = 1, .flags = (fl) })
#define WO(b, s, e)							\
	((struct hc_key){ .end = (e), .bdev_id = (b), .size = (e) - (s) })

/*
 * Insertion order, as the journal keeps it: not sorted (bdev 2 first, then
 * bdev 1), overlapping (the last key overwrites part of the one before),
 * with a whiteout. 4 + 3 + 4 + 4 = 15 u64s.
 */
static const struct hc_key base_keys[] = {
	MK(2, 0, 50, 4000, 255, HC_KEY_DIRTY),
	WO(1, 100, 110),
	MK(1, 0, 100, 0, 0, 0),
	{ .end = 150, .bdev_id = 1, .size = 100, .nr_ptrs = 1,
	  .ptr = 3ULL << HC_PTR_GEN_SHIFT | 1000,
	  .flags = HC_KEY_DIRTY },
};

/* Offsets of the keys of the base entry. */
#define K0	64
#define K1	(K0 + 32)
#define K2	(K1 + 24)
#define K3	(K2 + 32)
#define BASE_BYTES	(K3 + 32)

static const struct hc_jset_info base_info = {
	.seq = 100,
	.last_seq = 90,
	.btree_root = 7ULL << HC_PTR_GEN_SHIFT | 2048,
	.prio_bucket = 20,
	.bdev_table_bucket = 21,
	.btree_level = 2,
};

static bool key_equal(const struct hc_key *a, const struct hc_key *b)
{
	return a->end == b->end && a->ptr == b->ptr &&
	       a->bdev_id == b->bdev_id && a->size == b->size &&
	       a->nr_ptrs == b->nr_ptrs &&
	       a->flags == b->flags;
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

static bool info_equal(const struct hc_jset_info *a,
		       const struct hc_jset_info *b)
{
	return a->seq == b->seq && a->last_seq == b->last_seq &&
	       a->btree_root == b->btree_root &&
	       a->prio_bucket == b->prio_bucket &&
	       a->bdev_table_bucket == b->bdev_table_bucket &&
	       a->btree_level == b->btree_level;
}

/* The base entry, encoded into a buffer first filled with 0xa5. */
static size_t base_encode(u64 *buf)
{
	size_t bytes = 0;
	int ret;

	memset(buf, 0xa5, BUF_U64S * sizeof(u64));
	ret = hc_jset_encode(&base_info, base_keys, ARRAY_LEN(base_keys),
			     SET_MAGIC, buf, BUF_U64S * sizeof(u64), &bytes);
	CHECK(!ret, "base encode: %d", ret);
	return bytes;
}

static void test_layout(void)
{
	u64 buf[BUF_U64S], z[BUF_U64S];
	const u8 *b = (const u8 *)buf;
	size_t bytes, i;
	bool untouched = true;

	printf("journal entry byte layout and checksum extent\n");
	bytes = base_encode(buf);
	CHECK_EQ_U64(bytes, BASE_BYTES, "encoded size");
	CHECK_EQ_U64(hc_jset_bytes(15), BASE_BYTES, "hc_jset_bytes(15)");
	CHECK_EQ_U64(hc_jset_bytes(0), 64, "hc_jset_bytes(0)");
	CHECK_EQ_U64(get_le(b, 8), SET_MAGIC ^ HC_JSET_MAGIC, "magic @0");
	CHECK_EQ_U64(get_le(b + 12, 4), 15, "u64s @12");
	CHECK_EQ_U64(get_le(b + 16, 8), 100, "seq @16");
	CHECK_EQ_U64(get_le(b + 24, 8), 90, "last_seq @24");
	CHECK_EQ_U64(get_le(b + 32, 8), base_info.btree_root, "root @32");
	CHECK_EQ_U64(get_le(b + 40, 8), 20, "prio bucket @40");
	CHECK_EQ_U64(get_le(b + 48, 8), 21, "bdev table bucket @48");
	CHECK_EQ_U64(get_le(b + 56, 1), 2, "btree level @56");
	CHECK_EQ_U64(get_le(b + 57, 7), 0, "padding @57 zero");
	CHECK_EQ_U64(get_le(b + K0 + 8, 4), 2, "first key is bdev 2 @64");
	CHECK_EQ_U64(get_le(b + K1 + 16, 1), 0, "whiteout nr_ptrs @112");
	CHECK_EQ_U64(get_le(b + K3 + 20, 4), 0, "key pad2 @172");
	for (i = bytes; i < sizeof(buf); i++)
		untouched &= b[i] == 0xa5;
	CHECK(untouched, "encode wrote past the entry");

	memcpy(z, buf, sizeof(z));
	memset((u8 *)z + 8, 0, 4);
	CHECK_EQ_U64(get_le(b + 8, 4), hc_csum(z, bytes),
		     "csum @8 is CRC-32C of header and keys, csum zeroed");
	CHECK_EQ_U64(hc_jset_csum((struct hc_jset_disk *)buf), hc_csum(z, bytes),
		     "hc_jset_csum matches");
}

static void test_round_trip(void)
{
	u64 buf[BUF_U64S], buf2[BUF_U64S];
	struct hc_key keys[MAXK];
	struct hc_jset_info info;
	const char *err = "not set";
	size_t nr, bytes, bytes2;
	int ret;

	printf("round trips, -ENOSPC, optional arguments\n");
	bytes = base_encode(buf);
	ret = hc_jset_decode(buf, sizeof(buf), SET_MAGIC, CACHE_SECTORS,
			     NBUCKETS, &info, keys, MAXK, &nr, &bytes2, &err);
	CHECK(!ret && !err, "decode: %d %s", ret, err);
	CHECK(keys_equal(keys, nr, base_keys, ARRAY_LEN(base_keys)),
	      "keys come back in insertion order, whiteout included");
	CHECK(info_equal(&info, &base_info), "header fields round trip");
	CHECK_EQ_U64(bytes2, bytes, "decoded *bytes");

	/* The block padding after the entry is not covered. */
	memset((u8 *)buf + bytes, 0x3c, sizeof(buf) - bytes);
	ret = hc_jset_decode(buf, sizeof(buf), SET_MAGIC, CACHE_SECTORS,
			     NBUCKETS, &info, keys, MAXK, &nr, NULL, NULL);
	CHECK(!ret && nr == 4, "garbage after the entry: %d", ret);
	ret = hc_jset_decode(buf, bytes, SET_MAGIC, CACHE_SECTORS, NBUCKETS,
			     &info, keys, MAXK, &nr, NULL, NULL);
	CHECK(!ret, "decode with exactly its length: %d", ret);

	/* Re-encoding gives the same bytes. */
	ret = hc_jset_encode(&info, keys, nr, SET_MAGIC, buf2, bytes, &bytes2);
	CHECK(!ret && bytes2 == bytes && !memcmp(buf, buf2, bytes),
	      "re-encode identical: %d", ret);

	/* -ENOSPC: nothing written, the room needed reported. */
	memset(buf2, 0x77, sizeof(buf2));
	bytes2 = 0;
	ret = hc_jset_encode(&base_info, base_keys, ARRAY_LEN(base_keys),
			     SET_MAGIC, buf2, bytes - 1, &bytes2);
	CHECK(ret == -ENOSPC, "encode into bytes - 1: %d", ret);
	CHECK_EQ_U64(bytes2, bytes, "-ENOSPC reports the room needed");
	CHECK(get_le(buf2, 8) == 0x7777777777777777ULL &&
	      get_le((u8 *)buf2 + bytes - 8, 8) == 0x7777777777777777ULL,
	      "-ENOSPC wrote into the buffer");
	ret = hc_jset_encode(&base_info, NULL, 0, SET_MAGIC, buf2, 63, NULL);
	CHECK(ret == -ENOSPC, "empty entry into 63 bytes: %d", ret);

	/* An empty entry: header only. */
	ret = hc_jset_encode(&base_info, NULL, 0, SET_MAGIC, buf2, 64, &bytes2);
	CHECK(!ret && bytes2 == 64, "empty entry: %d %zu", ret, bytes2);
	ret = hc_jset_decode(buf2, 64, SET_MAGIC, CACHE_SECTORS, NBUCKETS,
			     &info, NULL, 0, &nr, &bytes2, &err);
	CHECK(!ret && !nr && bytes2 == 64 && info_equal(&info, &base_info),
	      "empty entry round trip: %d %s", ret, err);

	/* More keys than the caller's array. */
	nr = 99;
	bytes2 = 99;
	ret = hc_jset_decode(buf, sizeof(buf), SET_MAGIC, CACHE_SECTORS,
			     NBUCKETS, &info, keys, 3, &nr, &bytes2, &err);
	CHECK(ret == -ENOSPC && !nr && !bytes2 && err &&
	      !strcmp(err, "more keys than the caller can hold"),
	      "4 keys into 3: %d %s", ret, err);
	CHECK(!info.seq && !info.btree_root, "info not zeroed on error");
	ret = hc_jset_decode(buf, sizeof(buf), SET_MAGIC, CACHE_SECTORS,
			     NBUCKETS, &info, keys, 4, &nr, NULL, NULL);
	CHECK(!ret && nr == 4, "4 keys into 4: %d", ret);
}

/* ---- One corrupt entry per rule ------------------------------------------ */

struct corrupt {
	const char *what;
	size_t off;		/* field to overwrite, little-endian */
	unsigned int width;	/* 0: none */
	u64 val;
	bool keep_csum;		/* do not fix the checksum afterwards */
	size_t len;		/* bytes passed; 0: the whole buffer */
	u64 cache_sectors;	/* 0: CACHE_SECTORS */
	u64 nbuckets;		/* 0: NBUCKETS */
	int ret;
	const char *want;	/* NULL: must be valid */
};

static const struct corrupt table[] = {
	{ "valid", .want = NULL },
	{ "63 bytes", .len = 63, .ret = -EINVAL,
	  .want = "journal entry shorter than its header" },
	{ "magic of another set", 0, 8, SET_MAGIC, .ret = -EINVAL,
	  .want = "not a journal entry of this cache set" },
	{ "sorted set magic", 0, 8, SET_MAGIC ^ HC_BSET_MAGIC, .ret = -EINVAL,
	  .want = "not a journal entry of this cache set" },
	{ "u64s past the buffer", 12, 4, BUF_U64S - 8 + 1, .ret = -EUCLEAN,
	  .want = "journal entry runs past the end of the buffer" },
	{ "u64s ~0", 12, 4, 0xffffffff, .ret = -EUCLEAN,
	  .want = "journal entry runs past the end of the buffer" },
	{ "u64s past a short length", .len = BASE_BYTES - 8, .ret = -EUCLEAN,
	  .want = "journal entry runs past the end of the buffer" },
	{ "flipped key byte", K2 + 3, 1, 0x40, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "flipped padding byte", 60, 1, 1, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "csum zero", 8, 4, 0, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum mismatch" },
	{ "last_seq after seq", 24, 8, 101, .ret = -EUCLEAN,
	  .want = "last_seq after seq" },
	{ "last_seq ~0", 24, 8, ~0ULL, .ret = -EUCLEAN,
	  .want = "last_seq after seq" },
	{ "last_seq = seq", 24, 8, 100, .want = NULL },
	{ "last_seq 0", 24, 8, 0, .want = NULL },
	{ "level 8", 56, 1, HC_BTREE_MAX_DEPTH, .ret = -EUCLEAN,
	  .want = "btree root level too deep" },
	{ "level 255", 56, 1, 255, .ret = -EUCLEAN,
	  .want = "btree root level too deep" },
	{ "level 7", 56, 1, HC_BTREE_MAX_DEPTH - 1, .want = NULL },
	{ "level 0", 56, 1, 0, .want = NULL },
	{ "prio bucket = nbuckets", 40, 8, NBUCKETS, .ret = -EUCLEAN,
	  .want = "prio bucket past the last bucket" },
	{ "prio bucket ~0", 40, 8, ~0ULL, .ret = -EUCLEAN,
	  .want = "prio bucket past the last bucket" },
	{ "prio bucket last", 40, 8, NBUCKETS - 1, .want = NULL },
	{ "bdev table bucket = nbuckets", 48, 8, NBUCKETS, .ret = -EUCLEAN,
	  .want = "backing-device table bucket past the last bucket" },
	{ "small device", .nbuckets = 21, .ret = -EUCLEAN,
	  .want = "backing-device table bucket past the last bucket" },
	{ "bdev table bucket last", 48, 8, NBUCKETS - 1, .want = NULL },
	{ "root at the end", .cache_sectors = 2048, .ret = -EUCLEAN,
	  .want = "btree root past the end of the cache device" },
	{ "root offset 2^48 - 1", 32, 6, HC_PTR_OFFSET_MAX, .ret = -EUCLEAN,
	  .want = "btree root past the end of the cache device" },
	{ "root at the last sector", 32, 6, CACHE_SECTORS - 1, .want = NULL },
	{ "root pointer 0", 32, 8, 0, .want = NULL },
	{ "padding byte 57", 57, 1, 1, .ret = -EUCLEAN,
	  .want = "journal entry padding not zero" },
	{ "padding byte 63", 63, 1, 0x80, .ret = -EUCLEAN,
	  .want = "journal entry padding not zero" },
	{ "u64s 14: last key cut", 12, 4, 14, .ret = -EUCLEAN,
	  .want = "key pointer runs past the end of the keys" },
	{ "u64s 13: key header cut", 12, 4, 13, .ret = -EUCLEAN,
	  .want = "key header runs past the end of the keys" },
	{ "u64s 11: ends between keys", 12, 4, 11, .want = NULL },
	{ "u64s 0", 12, 4, 0, .want = NULL },
	{ "two pointers", K3 + 16, 1, 2, .ret = -EUCLEAN,
	  .want = "key has more than one pointer" },
	{ "key padding", K0 + 18, 2, 1, .ret = -EUCLEAN,
	  .want = "key padding not zero" },
	{ "size 0", K1 + 12, 4, 0, .ret = -EUCLEAN, .want = "key size 0" },
	{ "dirty whiteout", K1 + 17, 1, HC_KEY_DIRTY, .ret = -EUCLEAN,
	  .want = "whiteout key with flags" },
	{ "key past a small cache", .cache_sectors = 4049, .ret = -EUCLEAN,
	  .want = "pointer past the end of the cache device" },
	{ "key at the end of a small cache", .cache_sectors = 4050,
	  .want = NULL },
};

static void test_table(void)
{
	u64 buf[BUF_U64S];
	struct hc_key keys[MAXK];
	struct hc_jset_info info;
	const char *err;
	size_t i, nr, bytes;
	int ret;

	printf("%zu corrupt and edge-case journal entries\n", ARRAY_LEN(table));
	for (i = 0; i < ARRAY_LEN(table); i++) {
		const struct corrupt *c = &table[i];

		base_encode(buf);
		if (c->width)
			put_le((u8 *)buf + c->off, c->width, c->val);
		if (!c->keep_csum && get_le((u8 *)buf + 12, 4) <= BUF_U64S - 8)
			put_le((u8 *)buf + 8, 4,
			       hc_jset_csum((struct hc_jset_disk *)buf));
		err = "not set";
		nr = 99;
		ret = hc_jset_decode(buf, c->len ? c->len : sizeof(buf),
				     SET_MAGIC,
				     c->cache_sectors ?: CACHE_SECTORS,
				     c->nbuckets ?: NBUCKETS, &info, keys, MAXK,
				     &nr, &bytes, &err);
		CHECK(ret == c->ret, "%s: returned %d, want %d", c->what, ret,
		      c->ret);
		CHECK(c->want ? err && !strcmp(err, c->want) : !err,
		      "%s: got \"%s\", want \"%s\"", c->what,
		      err ? err : "(valid)", c->want ? c->want : "(valid)");
		CHECK(!ret || (!nr && !bytes), "%s: keys left after an error",
		      c->what);
		CHECK(ret || bytes == hc_jset_bytes(get_le((u8 *)buf + 12, 4)),
		      "%s: wrong *bytes", c->what);
		printf("  %-32s -> %4d %s\n", c->what, ret, err ? err : "valid");
	}
}

/* Is @rule the expected error of some table entry? */
static bool rule_tested(const char *rule)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++)
		if (table[i].want && !strcmp(table[i].want, rule))
			return true;
	return !strcmp(rule, "more keys than the caller can hold");
}

/* Every error string in jset.c must be the want of some table entry. */
static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SRC_DIR "/jset.c", 10, rule_tested);
}

int main(void)
{
	test_layout();
	test_round_trip();
	test_table();
	test_rules_covered();
	return hc_test_done("test_jset");
}
