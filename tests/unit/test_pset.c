// SPDX-License-Identifier: GPL-2.0
/*
 * test_pset: gen/prio sets in drivers/md/hcache/pset.c: byte layout, the
 * checksum over the whole bucket, a chain of sets covering every bucket of
 * a device written and read back through the get/set callbacks, encode's
 * -EINVAL, and one corrupt set per validation rule with its errno (the
 * set callback never called on error). It also reads pset.c and fails if
 * any error string there is missing from the table.
 */

#include <stdlib.h>

#include "pset.h"
#include "sb.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define SET_MAGIC	0x0123456789abcdefULL

/* A device's gens and prios, as the cache set keeps them in memory. */
struct buckets {
	u64 nbuckets;
	u8 *gen;
	u16 *prio;
	u8 *flags;
	u64 calls;		/* callbacks made */
	u64 next;		/* the bucket the next callback must name */
	bool out_of_order;
};

static void bk_get(void *priv, u64 bucket, u8 *gen, u16 *prio, u8 *flags)
{
	struct buckets *b = priv;

	b->calls++;
	b->out_of_order |= bucket != b->next || bucket >= b->nbuckets;
	b->next = bucket + 1;
	if (bucket < b->nbuckets) {
		*gen = b->gen[bucket];
		*prio = b->prio[bucket];
		*flags = b->flags[bucket];
	}
}

static void bk_set(void *priv, u64 bucket, u8 gen, u16 prio, u8 flags)
{
	struct buckets *b = priv;

	b->calls++;
	b->out_of_order |= bucket != b->next || bucket >= b->nbuckets;
	b->next = bucket + 1;
	if (bucket < b->nbuckets) {
		b->gen[bucket] = gen;
		b->prio[bucket] = prio;
		b->flags[bucket] = flags;
	}
}

static void bk_alloc(struct buckets *b, u64 nbuckets)
{
	memset(b, 0, sizeof(*b));
	b->nbuckets = nbuckets;
	b->gen = calloc(nbuckets, 1);
	b->prio = calloc(nbuckets, sizeof(*b->prio));
	b->flags = calloc(nbuckets, 1);
	CHECK(b->gen && b->prio && b->flags, "out of memory");
	if (!b->gen || !b->prio || !b->flags)
		exit(1);
}

static void bk_free(struct buckets *b)
{
	free(b->gen);
	free(b->prio);
	free(b->flags);
}

static void test_per_bucket(void)
{
	printf("records per bucket\n");
	CHECK_EQ_U64(hc_pset_per_bucket(0), 0, "0 bytes");
	CHECK_EQ_U64(hc_pset_per_bucket(47), 0, "47 bytes");
	CHECK_EQ_U64(hc_pset_per_bucket(48), 0, "48 bytes");
	CHECK_EQ_U64(hc_pset_per_bucket(51), 0, "51 bytes");
	CHECK_EQ_U64(hc_pset_per_bucket(52), 1, "52 bytes");
	CHECK_EQ_U64(hc_pset_per_bucket(HC_BUCKET_MIN), 2036, "8 KiB");
	CHECK_EQ_U64(hc_pset_per_bucket(HC_BUCKET_MAX), (HC_BUCKET_MAX - 48) / 4,
		     "128 MiB");
}

/* ---- Layout -------------------------------------------------------------- */

#define SMALL		256	/* bucket_bytes of the small sets: 52 records */
#define BASE_NR		40
#define BASE_FIRST	100
#define BASE_NEXT	7
#define NBUCKETS	1000

static struct buckets base_b;

static void base_encode(u8 *buf)
{
	static const struct hc_pset_info info = {
		.seq = 9, .first = BASE_FIRST, .nr = BASE_NR,
		.next_bucket = BASE_NEXT,
	};
	int ret;

	u32 zero_from = SMALL;

	base_b.next = BASE_FIRST;
	memset(buf, 0xa5, SMALL);
	ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b, buf, SMALL,
			     &zero_from);
	CHECK(!ret, "base encode: %d", ret);
}

static void test_layout(void)
{
	u64 buf[SMALL / 8], z[SMALL / 8];
	const u8 *b = (const u8 *)buf;
	bool zero = true;
	unsigned int i;

	printf("prio set byte layout and checksum extent\n");
	base_encode((u8 *)buf);
	CHECK(!base_b.out_of_order && base_b.calls == BASE_NR,
	      "get called %llu times, out of order %d", base_b.calls,
	      base_b.out_of_order);
	CHECK_EQ_U64(get_le(b, 8), SET_MAGIC ^ HC_PSET_MAGIC, "magic @0");
	CHECK_EQ_U64(get_le(b + 12, 4), BASE_NR, "nr @12");
	CHECK_EQ_U64(get_le(b + 16, 8), 9, "seq @16");
	CHECK_EQ_U64(get_le(b + 24, 8), BASE_FIRST, "first @24");
	CHECK_EQ_U64(get_le(b + 32, 8), BASE_NEXT, "next_bucket @32");
	CHECK_EQ_U64(get_le(b + 40, 8), 0, "padding @40");
	CHECK_EQ_U64(get_le(b + 48, 2), base_b.prio[BASE_FIRST], "prio @48");
	CHECK_EQ_U64(get_le(b + 50, 1), base_b.gen[BASE_FIRST], "gen @50");
	CHECK_EQ_U64(get_le(b + 51, 1), base_b.flags[BASE_FIRST], "flags @51");
	CHECK_EQ_U64(get_le(b + 48 + 4 * 39 + 3, 1),
		     base_b.flags[BASE_FIRST + 39], "last flags @207");
	CHECK_EQ_U64(get_le(b + 48 + 4 * 39, 2), base_b.prio[BASE_FIRST + 39],
		     "last prio @204");
	CHECK_EQ_U64(get_le(b + 48 + 4 * 39 + 2, 1),
		     base_b.gen[BASE_FIRST + 39], "last gen @206");
	for (i = 48 + 4 * BASE_NR; i < SMALL; i++)
		zero &= !b[i];
	CHECK(zero, "bucket not zeroed after the records");
	memcpy(z, buf, sizeof(z));
	memset((u8 *)z + 8, 0, 4);
	CHECK_EQ_U64(get_le(b + 8, 4), hc_csum(z, SMALL),
		     "csum @8 is CRC-32C of the whole bucket, csum zeroed");
	CHECK_EQ_U64(hc_pset_csum((struct hc_pset_disk *)buf, SMALL),
		     hc_csum(z, SMALL), "hc_pset_csum matches");
}

/* ---- A chain over a whole device ----------------------------------------- */

static void test_chain(void)
{
	static const u32 sizes[] = { 52, 60, 4096, HC_BUCKET_MIN, 65536 };
	const u64 nbuckets = 5000;
	struct buckets in, out;
	struct hc_pset_info info;
	const char *err;
	size_t s;
	u64 i;

	printf("chains of prio sets over %llu buckets\n", nbuckets);
	bk_alloc(&in, nbuckets);
	bk_alloc(&out, nbuckets);
	for (i = 0; i < nbuckets; i++) {
		in.gen[i] = i * 7 + 3;
		in.prio[i] = i * 40503 + 1;
		in.flags[i] = i % 3 ? 0 : HC_BUCKET_DISK_EMPTY;
	}
	for (s = 0; s < ARRAY_LEN(sizes); s++) {
		u32 bytes = sizes[s], per = hc_pset_per_bucket(bytes);
		u64 first = 0, sets = 0, seq = 1000 + s;
		u64 *buf = malloc(bytes + 8);
		u32 zero_from = bytes;	/* malloc's bytes: unknown */
		bool ok = true;
		int ret;

		CHECK(buf, "out of memory");
		if (!buf)
			break;
		memset(out.gen, 0, nbuckets);
		memset(out.prio, 0, nbuckets * sizeof(*out.prio));
		in.next = 0;
		out.next = 0;
		in.calls = 0;
		out.calls = 0;
		/* Write a set and read it back at once; "next" is a fake. */
		while (first < nbuckets && ok) {
			u64 left = nbuckets - first;
			struct hc_pset_info w = {
				.seq = seq, .first = first,
				.nr = left < per ? left : per,
				.next_bucket = left <= per ? 0 : 1 + sets % (nbuckets - 1),
			};

			ret = hc_pset_encode(&w, SET_MAGIC, bk_get, &in, buf,
					     bytes, &zero_from);
			ok &= !ret;
			ret = hc_pset_decode(buf, bytes, SET_MAGIC, nbuckets,
					     first, bk_set, &out, &info, &err);
			ok &= !ret && info.seq == seq && info.first == first &&
			      info.nr == w.nr &&
			      info.next_bucket == w.next_bucket;
			CHECK(ok, "bucket_bytes %u, set at %llu: %d %s", bytes,
			      first, ret, err);
			first += w.nr;
			sets++;
		}
		CHECK(!in.out_of_order && !out.out_of_order &&
		      in.calls == nbuckets && out.calls == nbuckets,
		      "bucket_bytes %u: callbacks %llu/%llu", bytes,
		      in.calls, out.calls);
		CHECK(!memcmp(in.gen, out.gen, nbuckets) &&
		      !memcmp(in.prio, out.prio, nbuckets * sizeof(*in.prio)) &&
		      !memcmp(in.flags, out.flags, nbuckets),
		      "bucket_bytes %u: gens, prios or flags differ", bytes);
		printf("  bucket %6u bytes: %5u per set, %4llu sets\n",
		       bytes, per, sets);
		free(buf);
	}
	bk_free(&in);
	bk_free(&out);
}

/*
 * One buffer reused with the offset encode gives back, as the module keeps
 * it, against a fresh buffer full of garbage each time: byte for byte the
 * same, through sets that grow, shrink and grow again.
 */
static void test_reuse(void)
{
	static const u32 nrs[] = { 52, 1, 30, 52, 7, 7, 0x10, 2 };
	u64 reused[SMALL / 8], fresh[SMALL / 8];
	u32 zero_from = 0, zf;
	size_t i;
	int ret;

	printf("a reused buffer encodes as a fresh one\n");
	memset(reused, 0, sizeof(reused));	/* zeroed: zero_from 0 */
	for (i = 0; i < ARRAY_LEN(nrs); i++) {
		struct hc_pset_info info = {
			.seq = 40 + i, .first = 3 * i, .nr = nrs[i],
			.next_bucket = i,
		};

		base_b.next = info.first;
		ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b,
				     reused, SMALL, &zero_from);
		CHECK(!ret, "reused, set %zu: %d", i, ret);
		CHECK(zero_from == sizeof(struct hc_pset_disk) +
				   nrs[i] * sizeof(struct hc_bucket_disk),
		      "zero_from %u after set %zu", zero_from, i);
		memset(fresh, 0xa5, sizeof(fresh));
		zf = SMALL;
		base_b.next = info.first;
		ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b,
				     fresh, SMALL, &zf);
		CHECK(!ret, "fresh, set %zu: %d", i, ret);
		CHECK(!memcmp(reused, fresh, SMALL),
		      "set %zu of %u records: reused buffer differs", i,
		      nrs[i]);
		CHECK(le32toh(((struct hc_pset_disk *)reused)->csum) ==
		      hc_pset_csum((void *)reused, SMALL),
		      "set %zu: not the checksum of the whole bucket", i);
	}
}

static void test_encode_errors(void)
{
	struct hc_pset_info info = { .seq = 1, .first = 0, .nr = 52 };
	u8 buf[SMALL];
	u8 copy[SMALL];
	const char *err;
	u32 zf = SMALL;
	int ret;

	printf("encode -EINVAL leaves the bucket untouched\n");
	memset(buf, 0x5a, sizeof(buf));
	memcpy(copy, buf, sizeof(buf));
	base_b.calls = 0;
	base_b.next = 0;
	info.nr = 53;
	ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b, buf, SMALL,
			     &zf);
	CHECK(ret == -EINVAL, "53 records in 256 bytes: %d", ret);
	info.nr = 0;
	ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b, buf, SMALL,
			     &zf);
	CHECK(ret == -EINVAL, "0 records: %d", ret);
	info.nr = 1;
	ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b, buf, 51,
			     &zf);
	CHECK(ret == -EINVAL, "1 record in 51 bytes: %d", ret);
	ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b, buf, 47,
			     &zf);
	CHECK(ret == -EINVAL, "a bucket smaller than the header: %d", ret);
	CHECK(!memcmp(buf, copy, sizeof(buf)) && !base_b.calls && zf == SMALL,
	      "-EINVAL wrote the bucket, called get or moved zero_from");

	info.nr = 52;
	ret = hc_pset_encode(&info, SET_MAGIC, bk_get, &base_b, buf, SMALL,
			     &zf);
	CHECK(!ret, "52 records in 256 bytes: %d", ret);
	ret = hc_pset_decode(buf, SMALL, SET_MAGIC, NBUCKETS, 0, NULL, NULL,
			     &info, &err);
	CHECK(!ret && info.nr == 52, "decode without a callback: %d %s", ret,
	      err);
}

/* ---- One corrupt set per rule -------------------------------------------- */

struct corrupt {
	const char *what;
	size_t off;		/* field to overwrite, little-endian */
	unsigned int width;	/* 0: none */
	u64 val;
	bool keep_csum;		/* do not fix the checksum afterwards */
	u32 bytes;		/* bucket_bytes passed; 0: SMALL */
	u64 nbuckets;		/* 0: NBUCKETS */
	u64 expect_first;	/* 0: BASE_FIRST */
	int ret;
	const char *want;	/* NULL: must be valid */
};

#define REC(i)	(48 + 4 * (i))

static const struct corrupt table[] = {
	{ "valid", .want = NULL },
	{ "47-byte bucket", .bytes = 47, .ret = -EINVAL,
	  .want = "prio set bucket smaller than its header" },
	{ "magic of another set", 0, 8, SET_MAGIC, .ret = -EINVAL,
	  .want = "not a prio set of this cache set" },
	{ "journal entry magic", 0, 8, SET_MAGIC ^ HC_JSET_MAGIC,
	  .ret = -EINVAL, .want = "not a prio set of this cache set" },
	{ "flipped record", REC(3), 1, 0x99, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "flipped last byte of the bucket", SMALL - 1, 1, 1,
	  .keep_csum = true, .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "csum zero", 8, 4, 0, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum mismatch" },
	{ "shorter bucket_bytes", .bytes = SMALL - 4, .ret = -EBADMSG,
	  .keep_csum = true, .want = "checksum mismatch" },
	{ "nr 0", 12, 4, 0, .ret = -EUCLEAN, .want = "prio set is empty" },
	{ "nr 53", 12, 4, 53, .ret = -EUCLEAN,
	  .want = "more records than fit in a bucket" },
	{ "nr ~0", 12, 4, 0xffffffff, .ret = -EUCLEAN,
	  .want = "more records than fit in a bucket" },
	{ "nr 52", 12, 4, 52, .want = NULL },
	{ "nr 1", 12, 4, 1, .want = NULL },
	{ "one record past the device", .nbuckets = BASE_FIRST + BASE_NR - 1,
	  .ret = -EUCLEAN, .want = "records past the last bucket" },
	{ "first ~0", 24, 8, ~0ULL, .expect_first = ~0ULL, .ret = -EUCLEAN,
	  .want = "records past the last bucket" },
	{ "first 2^64 - 20", 24, 8, -20ULL, .expect_first = -20ULL,
	  .ret = -EUCLEAN, .want = "records past the last bucket" },
	{ "first = nbuckets", 24, 8, NBUCKETS, .expect_first = NBUCKETS,
	  .ret = -EUCLEAN, .want = "records past the last bucket" },
	{ "ending at the last bucket", 32, 8, 0,
	  .nbuckets = BASE_FIRST + BASE_NR, .want = NULL },
	{ "first 101", 24, 8, BASE_FIRST + 1, .ret = -EUCLEAN,
	  .want = "prio set does not start where expected" },
	{ "expected elsewhere", .expect_first = ~0ULL - 1, .ret = -EUCLEAN,
	  .want = "prio set does not start where expected" },
	{ "next = nbuckets", 32, 8, NBUCKETS, .ret = -EUCLEAN,
	  .want = "next prio bucket past the last bucket" },
	{ "next ~0", 32, 8, ~0ULL, .ret = -EUCLEAN,
	  .want = "next prio bucket past the last bucket" },
	{ "next the last bucket", 32, 8, NBUCKETS - 1, .want = NULL },
	{ "next 0: end of the chain", 32, 8, 0, .want = NULL },
	{ "header padding", 40, 8, 1ULL << 63, .ret = -EUCLEAN,
	  .want = "prio set padding not zero" },
	{ "first record: flag EMPTY", REC(0) + 3, 1, HC_BUCKET_DISK_EMPTY,
	  .want = NULL },
	{ "first record: unknown flag", REC(0) + 3, 1, 2, .ret = -EUCLEAN,
	  .want = "unknown bucket record flags" },
	{ "last record: unknown flag", REC(BASE_NR - 1) + 3, 1, 0x80,
	  .ret = -EUCLEAN, .want = "unknown bucket record flags" },
	{ "flags of a record past nr", REC(BASE_NR) + 3, 1, 0xff,
	  .want = NULL },
	{ "garbage after the records", SMALL - 8, 8, ~0ULL, .want = NULL },
};

static void test_table(void)
{
	u64 buf[SMALL / 8];
	struct hc_pset_info info;
	struct buckets out;
	const char *err;
	size_t i;
	int ret;

	bk_alloc(&out, NBUCKETS);
	printf("%zu corrupt and edge-case prio sets\n", ARRAY_LEN(table));
	for (i = 0; i < ARRAY_LEN(table); i++) {
		const struct corrupt *c = &table[i];
		u32 bytes = c->bytes ? c->bytes : SMALL;

		base_encode((u8 *)buf);
		if (c->width)
			put_le((u8 *)buf + c->off, c->width, c->val);
		if (!c->keep_csum)
			put_le((u8 *)buf + 8, 4,
			       hc_pset_csum((struct hc_pset_disk *)buf,
					    bytes));
		err = "not set";
		out.calls = 0;
		out.out_of_order = false;
		out.next = get_le((u8 *)buf + 24, 8);
		ret = hc_pset_decode(buf, bytes, SET_MAGIC,
				     c->nbuckets ?: NBUCKETS,
				     c->expect_first ?: BASE_FIRST, bk_set,
				     &out, &info, &err);
		CHECK(ret == c->ret, "%s: returned %d, want %d", c->what, ret,
		      c->ret);
		CHECK(c->want ? err && !strcmp(err, c->want) : !err,
		      "%s: got \"%s\", want \"%s\"", c->what,
		      err ? err : "(valid)", c->want ? c->want : "(valid)");
		if (ret) {
			CHECK(!out.calls, "%s: set called on error", c->what);
			CHECK(!info.nr && !info.first && !info.seq &&
			      !info.next_bucket, "%s: info left", c->what);
		} else {
			CHECK(out.calls == info.nr && !out.out_of_order,
			      "%s: set called %llu times", c->what, out.calls);
		}
		printf("  %-34s -> %4d %s\n", c->what, ret, err ? err : "valid");
	}

	/* The records come back as the base set wrote them. */
	base_encode((u8 *)buf);
	memset(out.gen, 0, NBUCKETS);
	memset(out.prio, 0, NBUCKETS * sizeof(*out.prio));
	memset(out.flags, 0, NBUCKETS);
	out.next = BASE_FIRST;
	ret = hc_pset_decode(buf, SMALL, SET_MAGIC, NBUCKETS, BASE_FIRST,
			     bk_set, &out, &info, NULL);
	CHECK(!ret && !memcmp(out.gen + BASE_FIRST, base_b.gen + BASE_FIRST,
			      BASE_NR) &&
	      !memcmp(out.prio + BASE_FIRST, base_b.prio + BASE_FIRST,
		      BASE_NR * sizeof(*out.prio)) &&
	      !memcmp(out.flags + BASE_FIRST, base_b.flags + BASE_FIRST,
		      BASE_NR),
	      "base set records differ: %d", ret);
	bk_free(&out);
}

/* Is @rule the expected error of some table entry? */
static bool rule_tested(const char *rule)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++)
		if (table[i].want && !strcmp(table[i].want, rule))
			return true;
	return false;
}

/* Every error string in pset.c must be the want of some table entry. */
static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SRC_DIR "/pset.c", 9, rule_tested);
}

int main(void)
{
	u64 i;

	bk_alloc(&base_b, NBUCKETS);
	for (i = 0; i < NBUCKETS; i++) {
		base_b.gen[i] = 0xff - i;
		base_b.prio[i] = 0x8000 + i * 3;
		base_b.flags[i] = i & 1 ? HC_BUCKET_DISK_EMPTY : 0;
	}
	test_per_bucket();
	test_layout();
	test_chain();
	test_reuse();
	test_encode_errors();
	test_table();
	test_rules_covered();
	bk_free(&base_b);
	return hc_test_done("test_pset");
}
