// SPDX-License-Identifier: GPL-2.0
/*
 * test_bdev_table: the backing-device table in
 * drivers/md/hcache/bdev_table.c: attach and detach semantics (ids never
 * reused across detach, re-attach and an inval_gen change; a full table;
 * next_id at the top of its range), byte layout, encode/decode round
 * trips, one corrupt table per validation rule with its errno, and a
 * randomised run of attaches and detaches against a model. It also reads
 * bdev_table.c and fails if any error string there is missing from the
 * table of corrupt tables.
 */

#include <stdlib.h>

#include "bdev_table.h"
#include "sb.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define SET_MAGIC	0x0123456789abcdefULL
#define TABLE_BYTES(n)	(32 + 48 * (n))

/* A distinct, non-nil uuid per number. */
static void mkuuid(u8 *uuid, u32 n)
{
	unsigned int i;

	for (i = 0; i < HC_UUID_SIZE; i++)
		uuid[i] = (u8)(n >> (8 * (i % 4))) ^ (u8)(0x5a + i);
}

static bool entry_equal(const struct hc_bdev_entry *a,
			const struct hc_bdev_entry *b)
{
	return !memcmp(a->uuid, b->uuid, HC_UUID_SIZE) && a->id == b->id &&
	       a->inval_gen == b->inval_gen && a->flags == b->flags &&
	       a->sectors == b->sectors && a->last_attach == b->last_attach;
}

static bool table_equal(const struct hc_bdev_table *a,
			const struct hc_bdev_table *b)
{
	u32 i;

	if (a->seq != b->seq || a->next_id != b->next_id || a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++)
		if (!entry_equal(&a->d[i], &b->d[i]))
			return false;
	return true;
}

static int attach(struct hc_bdev_table *t, u32 n, u32 gen, u64 sectors,
		  u64 now, u32 *id, bool *new_id)
{
	u8 uuid[HC_UUID_SIZE];

	mkuuid(uuid, n);
	return hc_bdev_table_attach(t, uuid, gen, sectors, now, id, new_id);
}

static u32 id_of(struct hc_bdev_table *t, u32 n)
{
	u8 uuid[HC_UUID_SIZE];
	struct hc_bdev_entry *e;

	mkuuid(uuid, n);
	e = hc_bdev_table_find(t, uuid);
	return e ? e->id : 0;
}

/* ---- Attach and detach --------------------------------------------------- */

static void test_attach_detach(void)
{
	static struct hc_bdev_table t, copy;
	u8 uuid[HC_UUID_SIZE], nil[HC_UUID_SIZE] = { 0 };
	struct hc_bdev_entry *e;
	bool new_id;
	u32 id;
	int ret;

	printf("attach and detach: ids are never reused\n");
	memset(&t, 0xa5, sizeof(t));
	hc_bdev_table_init(&t);
	CHECK(!t.nr && t.next_id == 1 && !t.seq, "init: nr %u next_id %u",
	      t.nr, t.next_id);
	CHECK_EQ_U64(hc_bdev_table_bytes(&t), 32, "empty table bytes");

	ret = attach(&t, 1, 5, 1000, 111, &id, &new_id);
	CHECK(!ret && id == 1 && new_id, "first attach: %d id %u new %d", ret,
	      id, new_id);
	CHECK(t.nr == 1 && t.next_id == 2, "after first attach: %u %u", t.nr,
	      t.next_id);
	e = hc_bdev_table_find_id(&t, 1);
	mkuuid(uuid, 1);
	CHECK(e && !memcmp(e->uuid, uuid, HC_UUID_SIZE) && e->inval_gen == 5 &&
	      e->sectors == 1000 && e->last_attach == 111 && !e->flags,
	      "first entry fields");
	CHECK(hc_bdev_table_find(&t, uuid) == e, "find by uuid");

	/* Same inval_gen: same id, size and time updated, DETACHED cleared. */
	e->flags = HC_BDEV_ENTRY_DETACHED;
	ret = attach(&t, 1, 5, 2000, 222, &id, &new_id);
	CHECK(!ret && id == 1 && !new_id, "re-attach: %d id %u new %d", ret,
	      id, new_id);
	CHECK(t.nr == 1 && t.next_id == 2 && e->sectors == 2000 &&
	      e->last_attach == 222 && !e->flags, "re-attach updates the entry");

	ret = attach(&t, 2, 0, 3000, 333, &id, &new_id);
	CHECK(!ret && id == 2 && new_id, "second device: %d id %u", ret, id);

	/* Another inval_gen: a new id in place, the old id gone. */
	ret = attach(&t, 1, 6, 2000, 444, &id, &new_id);
	CHECK(!ret && id == 3 && new_id, "inval_gen changed: %d id %u new %d",
	      ret, id, new_id);
	CHECK(t.nr == 2 && t.next_id == 4 && t.d[0].id == 3 &&
	      t.d[0].inval_gen == 6 && t.d[0].last_attach == 444 &&
	      t.d[1].id == 2, "inval_gen change replaces the entry in place");
	CHECK(!hc_bdev_table_find_id(&t, 1), "old id 1 still in the table");
	/* An inval_gen going back is a change too. */
	ret = attach(&t, 1, 5, 2000, 445, &id, &new_id);
	CHECK(!ret && id == 4 && new_id, "inval_gen back to 5: id %u", id);

	/* Detach and attach again: yet another id. */
	ret = hc_bdev_table_detach(&t, 4);
	CHECK(!ret && t.nr == 1 && t.d[0].id == 2, "detach: %d nr %u", ret,
	      t.nr);
	CHECK(!hc_bdev_table_find(&t, uuid), "detached uuid still found");
	CHECK(hc_bdev_table_detach(&t, 4) == -ENOENT, "detach twice");
	CHECK(hc_bdev_table_detach(&t, 0) == -ENOENT, "detach id 0");
	CHECK(hc_bdev_table_detach(&t, 99) == -ENOENT, "detach unknown id");
	ret = attach(&t, 1, 5, 2000, 555, &id, &new_id);
	CHECK(!ret && id == 5 && new_id && t.next_id == 6,
	      "attach after detach, same inval_gen: %d id %u", ret, id);

	/* Detach from the middle keeps the others in order. */
	attach(&t, 3, 0, 1, 1, &id, &new_id);
	attach(&t, 4, 0, 1, 1, &id, &new_id);
	CHECK(t.nr == 4 && t.d[0].id == 2 && t.d[1].id == 5 &&
	      t.d[2].id == 6 && t.d[3].id == 7, "four entries in order");
	ret = hc_bdev_table_detach(&t, 5);
	CHECK(!ret && t.nr == 3 && t.d[0].id == 2 && t.d[1].id == 6 &&
	      t.d[2].id == 7, "detach from the middle: order kept");
	ret = hc_bdev_table_detach(&t, 7);
	CHECK(!ret && t.nr == 2 && t.d[1].id == 6, "detach the last");
	CHECK(!hc_bdev_table_find_id(&t, 0), "found id 0");
	CHECK_EQ_U64(hc_bdev_table_bytes(&t), TABLE_BYTES(2), "bytes of 2");

	/* A nil uuid is refused. */
	copy = t;
	ret = hc_bdev_table_attach(&t, nil, 0, 1, 1, &id, &new_id);
	CHECK(ret == -EINVAL && !id && !new_id && table_equal(&t, &copy),
	      "nil uuid: %d", ret);
}

static void test_limits(void)
{
	static struct hc_bdev_table t, copy;
	bool new_id;
	u32 i, id;
	int ret;

	printf("a full table, and next_id at the top of its range\n");
	hc_bdev_table_init(&t);
	for (i = 0; i < HC_BDEV_TABLE_MAX; i++) {
		ret = attach(&t, 100 + i, i, i, i, &id, &new_id);
		CHECK(!ret && id == i + 1, "fill %u: %d", i, ret);
	}
	CHECK(t.nr == HC_BDEV_TABLE_MAX, "full: %u", t.nr);
	copy = t;
	ret = attach(&t, 99, 0, 1, 1, &id, &new_id);
	CHECK(ret == -ENOSPC && !id && !new_id && table_equal(&t, &copy),
	      "new device into a full table: %d", ret);
	ret = attach(&t, 100 + 7, 7, 5, 5, &id, &new_id);
	CHECK(!ret && id == 8 && !new_id, "full table, known device: %d", ret);
	ret = attach(&t, 100 + 7, 8, 5, 5, &id, &new_id);
	CHECK(!ret && id == HC_BDEV_TABLE_MAX + 1 && new_id &&
	      t.nr == HC_BDEV_TABLE_MAX,
	      "full table, inval_gen change replaces in place: %d id %u", ret,
	      id);

	hc_bdev_table_init(&t);
	t.next_id = 0xfffffffe;
	ret = attach(&t, 1, 0, 1, 1, &id, &new_id);
	CHECK(!ret && id == 0xfffffffe && new_id && t.next_id == 0xffffffff,
	      "last id: %d %u", ret, id);
	copy = t;
	ret = attach(&t, 2, 0, 1, 1, &id, &new_id);
	CHECK(ret == -EOVERFLOW && !id && table_equal(&t, &copy),
	      "next_id would wrap: %d", ret);
	ret = attach(&t, 1, 1, 1, 1, &id, &new_id);
	CHECK(ret == -EOVERFLOW && table_equal(&t, &copy),
	      "inval_gen change, next_id would wrap: %d", ret);
	ret = attach(&t, 1, 0, 7, 7, &id, &new_id);
	CHECK(!ret && id == 0xfffffffe && !new_id,
	      "known device, next_id at the top: %d", ret);
	t.next_id = 0;
	ret = attach(&t, 2, 0, 1, 1, &id, &new_id);
	CHECK(ret == -EOVERFLOW, "next_id 0: %d", ret);
}

/* ---- Layout and round trips ---------------------------------------------- */

static struct hc_bdev_table base;

/* Three entries, ids 2, 5, 7 of next_id 9; entry 1 detached. */
static void base_table(void)
{
	static const u32 ids[] = { 2, 5, 7 };
	u32 i;

	hc_bdev_table_init(&base);
	base.seq = 42;
	base.next_id = 9;
	base.nr = 3;
	for (i = 0; i < 3; i++) {
		struct hc_bdev_entry *e = &base.d[i];

		mkuuid(e->uuid, 1000 + i);
		e->id = ids[i];
		e->inval_gen = 0x10 + i;
		e->flags = i == 1 ? HC_BDEV_ENTRY_DETACHED : 0;
		e->sectors = (1ULL << 40) + i;
		e->last_attach = 1700000000 + i;
	}
}

#define BUF_BYTES	1024

static void base_encode(u8 *buf)
{
	int ret;

	memset(buf, 0xa5, BUF_BYTES);
	ret = hc_bdev_table_encode(&base, SET_MAGIC, buf, BUF_BYTES);
	CHECK(!ret, "base encode: %d", ret);
}

static void test_layout(void)
{
	static struct hc_bdev_table t;
	static u64 big[(TABLE_BYTES(HC_BDEV_TABLE_MAX) + 8) / 8];
	u64 buf[BUF_BYTES / 8], z[BUF_BYTES / 8];
	const u8 *b = (const u8 *)buf;
	const char *err = "not set";
	bool untouched = true;
	size_t i;
	int ret;

	printf("table byte layout, round trips and -ENOSPC\n");
	base_table();
	base_encode((u8 *)buf);
	CHECK_EQ_U64(hc_bdev_table_bytes(&base), TABLE_BYTES(3), "bytes");
	CHECK_EQ_U64(get_le(b, 8), SET_MAGIC ^ HC_BDEV_TABLE_MAGIC, "magic @0");
	CHECK_EQ_U64(get_le(b + 12, 4), 3, "nr @12");
	CHECK_EQ_U64(get_le(b + 16, 8), 42, "seq @16");
	CHECK_EQ_U64(get_le(b + 24, 4), 9, "next_id @24");
	CHECK_EQ_U64(get_le(b + 28, 4), 0, "padding @28");
	CHECK(!memcmp(b + 32, base.d[0].uuid, HC_UUID_SIZE), "uuid @32");
	CHECK_EQ_U64(get_le(b + 32 + 16, 4), 2, "id @48");
	CHECK_EQ_U64(get_le(b + 32 + 20, 4), 0x10, "inval_gen @52");
	CHECK_EQ_U64(get_le(b + 80 + 24, 4), HC_BDEV_ENTRY_DETACHED,
		     "flags of entry 1 @104");
	CHECK_EQ_U64(get_le(b + 32 + 28, 4), 0, "entry padding @60");
	CHECK_EQ_U64(get_le(b + 32 + 32, 8), 1ULL << 40, "sectors @64");
	CHECK_EQ_U64(get_le(b + 128 + 40, 8), 1700000002,
		     "last_attach of entry 2 @168");
	for (i = TABLE_BYTES(3); i < BUF_BYTES; i++)
		untouched &= b[i] == 0xa5;
	CHECK(untouched, "encode wrote past the table");
	memcpy(z, buf, sizeof(z));
	memset((u8 *)z + 8, 0, 4);
	CHECK_EQ_U64(get_le(b + 8, 4), hc_csum(z, TABLE_BYTES(3)),
		     "csum @8 is CRC-32C of header and entries, csum zeroed");

	ret = hc_bdev_table_decode(buf, BUF_BYTES, SET_MAGIC, &t, &err);
	CHECK(!ret && !err && table_equal(&t, &base), "round trip: %d %s",
	      ret, err);
	ret = hc_bdev_table_decode(buf, TABLE_BYTES(3), SET_MAGIC, &t, NULL);
	CHECK(!ret && table_equal(&t, &base), "exact length: %d", ret);

	memset(z, 0x77, sizeof(z));
	ret = hc_bdev_table_encode(&base, SET_MAGIC, z, TABLE_BYTES(3) - 1);
	CHECK(ret == -ENOSPC && get_le(z, 8) == 0x7777777777777777ULL,
	      "encode into a short buffer: %d", ret);
	t = base;
	t.nr = HC_BDEV_TABLE_MAX + 1;
	ret = hc_bdev_table_encode(&t, SET_MAGIC, big, sizeof(big));
	CHECK(ret == -EINVAL, "encode of more than the maximum: %d", ret);

	/* Empty, and full. */
	hc_bdev_table_init(&t);
	ret = hc_bdev_table_encode(&t, SET_MAGIC, z, 32);
	CHECK(!ret, "empty into 32 bytes: %d", ret);
	ret = hc_bdev_table_decode(z, 32, SET_MAGIC, &base, &err);
	CHECK(!ret && !base.nr && base.next_id == 1, "empty round trip: %d %s",
	      ret, err);
	for (i = 0; i < HC_BDEV_TABLE_MAX; i++) {
		bool new_id;
		u32 id;

		ret = attach(&t, i, ~(u32)i, i << 20, i, &id, &new_id);
		CHECK(!ret, "fill %zu: %d", i, ret);
	}
	t.seq = ~0ULL;
	ret = hc_bdev_table_encode(&t, SET_MAGIC, big, sizeof(big));
	CHECK(!ret, "full table: %d", ret);
	ret = hc_bdev_table_decode(big, sizeof(big), SET_MAGIC, &base, &err);
	CHECK(!ret && table_equal(&t, &base), "full round trip: %d %s", ret,
	      err);
}

/* ---- One corrupt table per rule ------------------------------------------ */

struct corrupt {
	const char *what;
	size_t off;		/* field to overwrite, little-endian */
	unsigned int width;	/* 0: none */
	u64 val;
	void (*mutate)(u8 *buf);
	bool keep_csum;		/* do not fix the checksum afterwards */
	size_t len;		/* bytes passed; 0: BUF_BYTES */
	int ret;
	const char *want;	/* NULL: must be valid */
};

#define E(i)	(32 + 48 * (i))

static void nil_uuid(u8 *buf)
{
	memset(buf + E(1), 0, HC_UUID_SIZE);
}

static void one_uuid_byte(u8 *buf)
{
	memset(buf + E(1), 0, HC_UUID_SIZE);
	buf[E(1) + 15] = 1;
}

static void dup_uuid(u8 *buf)
{
	memcpy(buf + E(2), buf + E(0), HC_UUID_SIZE);
}

static const struct corrupt table[] = {
	{ "valid", .want = NULL },
	{ "31 bytes", .len = 31, .ret = -EINVAL,
	  .want = "backing-device table shorter than its header" },
	{ "magic of another set", 0, 8, SET_MAGIC, .ret = -EINVAL,
	  .want = "not a backing-device table of this cache set" },
	{ "prio set magic", 0, 8, SET_MAGIC ^ HC_PSET_MAGIC, .ret = -EINVAL,
	  .want = "not a backing-device table of this cache set" },
	{ "nr 257", 12, 4, HC_BDEV_TABLE_MAX + 1, .ret = -EUCLEAN,
	  .want = "more than 256 backing devices" },
	{ "nr ~0", 12, 4, 0xffffffff, .ret = -EUCLEAN,
	  .want = "more than 256 backing devices" },
	{ "nr 4 in 3 entries' bytes", 12, 4, 4, .len = TABLE_BYTES(3),
	  .ret = -EUCLEAN, .want = "entries run past the end of the buffer" },
	{ "3 entries in 175 bytes", .len = TABLE_BYTES(3) - 1,
	  .ret = -EUCLEAN, .want = "entries run past the end of the buffer" },
	{ "flipped entry byte", E(2) + 33, 1, 0x40, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum mismatch" },
	{ "flipped seq", 16, 1, 1, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum mismatch" },
	{ "csum zero", 8, 4, 0, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum mismatch" },
	{ "nr 2: csum of 3", 12, 4, 2, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum mismatch" },
	{ "next_id 0", 24, 4, 0, .ret = -EUCLEAN, .want = "next_id 0" },
	{ "header padding", 28, 4, 1, .ret = -EUCLEAN,
	  .want = "backing-device table padding not zero" },
	{ "entry padding", E(2) + 28, 4, 0x80000000, .ret = -EUCLEAN,
	  .want = "backing device entry padding not zero" },
	{ "nil uuid", .mutate = nil_uuid, .ret = -EUCLEAN,
	  .want = "backing device uuid is nil" },
	{ "uuid with one nonzero byte", .mutate = one_uuid_byte,
	  .want = NULL },
	{ "id 0", E(0) + 16, 4, 0, .ret = -EUCLEAN,
	  .want = "backing device id 0" },
	{ "id = next_id", E(1) + 16, 4, 9, .ret = -EUCLEAN,
	  .want = "backing device id not below next_id" },
	{ "next_id = an id", 24, 4, 7, .ret = -EUCLEAN,
	  .want = "backing device id not below next_id" },
	{ "id ~0", E(0) + 16, 4, 0xffffffff, .ret = -EUCLEAN,
	  .want = "backing device id not below next_id" },
	{ "flag bit 1", E(0) + 24, 4, 2, .ret = -EUCLEAN,
	  .want = "unknown backing device flag bits" },
	{ "flag bit 31", E(2) + 24, 4, 1U << 31, .ret = -EUCLEAN,
	  .want = "unknown backing device flag bits" },
	{ "duplicate id", E(2) + 16, 4, 2, .ret = -EUCLEAN,
	  .want = "duplicate backing device id" },
	{ "duplicate uuid", .mutate = dup_uuid, .ret = -EUCLEAN,
	  .want = "duplicate backing device uuid" },
	{ "nr 0", 12, 4, 0, .want = NULL },
	{ "nr 2", 12, 4, 2, .want = NULL },
	{ "next_id 8", 24, 4, 8, .want = NULL },
	{ "next_id ~0", 24, 4, 0xffffffff, .want = NULL },
	{ "garbage after the entries", E(3), 8, ~0ULL, .want = NULL },
};

static void test_table(void)
{
	static struct hc_bdev_table t;
	u64 buf[BUF_BYTES / 8];
	const char *err;
	size_t i;
	int ret;

	printf("%zu corrupt and edge-case tables\n", ARRAY_LEN(table));
	for (i = 0; i < ARRAY_LEN(table); i++) {
		const struct corrupt *c = &table[i];

		base_table();
		base_encode((u8 *)buf);
		if (c->width)
			put_le((u8 *)buf + c->off, c->width, c->val);
		if (c->mutate)
			c->mutate((u8 *)buf);
		if (!c->keep_csum &&
		    get_le((u8 *)buf + 12, 4) <= (BUF_BYTES - 32) / 48)
			put_le((u8 *)buf + 8, 4, hc_bdev_table_csum(
				       (struct hc_bdev_table_disk *)buf));
		err = "not set";
		memset(&t, 0x5a, sizeof(t));
		ret = hc_bdev_table_decode(buf, c->len ? c->len : BUF_BYTES,
					   SET_MAGIC, &t, &err);
		CHECK(ret == c->ret, "%s: returned %d, want %d", c->what, ret,
		      c->ret);
		CHECK(c->want ? err && !strcmp(err, c->want) : !err,
		      "%s: got \"%s\", want \"%s\"", c->what,
		      err ? err : "(valid)", c->want ? c->want : "(valid)");
		CHECK(!ret || (!t.nr && !t.next_id && !t.seq),
		      "%s: table left after an error", c->what);
		CHECK(ret || t.nr == get_le((u8 *)buf + 12, 4),
		      "%s: wrong nr", c->what);
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
	return false;
}

/* Every error string in bdev_table.c must be the want of some entry. */
static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SRC_DIR "/bdev_table.c", 12, rule_tested);
}

/* ---- Randomised attach/detach against a model ---------------------------- */

/*
 * 64 devices, each with an inval_gen that now and then changes; random
 * attaches and detaches. The model says whether each attach keeps the id
 * (attached before, same inval_gen) or gets a new one; every id handed out
 * must be new; after every operation the table must encode, decode to
 * itself and validate.
 */
#define R_DEVS	64
#define R_OPS	20000

static void test_random(void)
{
	static struct hc_bdev_table t, t2;
	static u64 buf[(TABLE_BYTES(HC_BDEV_TABLE_MAX) + 8) / 8];
	u32 model_id[R_DEVS] = { 0 }, model_gen[R_DEVS] = { 0 };
	u32 gen[R_DEVS] = { 0 }, seen_max = 0;
	u64 rng = 0x2545f4914f6cdd1dULL, kept = 0, fresh = 0, detached = 0;
	unsigned int op, failures = hc_test_failures;

	printf("%u random attaches and detaches of %u devices\n", R_OPS,
	       R_DEVS);
	hc_bdev_table_init(&t);
	for (op = 0; op < R_OPS && failures == hc_test_failures; op++) {
		u32 n, id;
		bool new_id;
		int ret;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		n = rng % R_DEVS;
		if ((rng >> 8) % 3 == 0) {
			ret = hc_bdev_table_detach(&t, model_id[n] ?
						   model_id[n] : 0xdead);
			CHECK(model_id[n] ? !ret : ret == -ENOENT,
			      "op %u: detach dev %u: %d", op, n, ret);
			if (!ret)
				detached++;
			model_id[n] = 0;
		} else {
			bool keep;

			if ((rng >> 16) % 5 == 0)
				gen[n]++;
			keep = model_id[n] && model_gen[n] == gen[n];
			ret = attach(&t, n, gen[n], rng >> 32, op, &id,
				     &new_id);
			CHECK(!ret, "op %u: attach dev %u: %d", op, n, ret);
			if (keep) {
				CHECK(!new_id && id == model_id[n],
				      "op %u: id %u changed to %u", op,
				      model_id[n], id);
				kept++;
			} else {
				CHECK(new_id && id > seen_max,
				      "op %u: id %u reused (max %u)", op, id,
				      seen_max);
				seen_max = id;
				fresh++;
			}
			model_id[n] = id;
			model_gen[n] = gen[n];
		}
		CHECK(id_of(&t, n) == model_id[n], "op %u: dev %u has id %u",
		      op, n, id_of(&t, n));
		t.seq++;
		ret = hc_bdev_table_encode(&t, SET_MAGIC, buf, sizeof(buf));
		CHECK(!ret, "op %u: encode: %d", op, ret);
		ret = hc_bdev_table_decode(buf, sizeof(buf), SET_MAGIC, &t2,
					   NULL);
		CHECK(!ret && table_equal(&t, &t2), "op %u: round trip: %d",
		      op, ret);
	}
	printf("  %llu attaches kept their id, %llu got a new one, %llu"
	       " detaches, next_id %u\n", kept, fresh, detached, t.next_id);
	CHECK(kept && fresh && detached, "random run missed a case");
}

int main(void)
{
	test_attach_detach();
	test_limits();
	test_layout();
	test_table();
	test_rules_covered();
	test_random();
	return hc_test_done("test_bdev_table");
}
