// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hcache: libFuzzer target over every on-disk parser shared with the
 * module. Each parser gets the whole input; to add one, write a fuzz_*()
 * function with the same shape and list it in fuzz_targets[]. Today: the
 * superblock, the sorted set (bset.c, whose accepted inputs also drive
 * inserts, compare-and-swap inserts and a merge), the journal entry
 * (jset.c), the gen/prio set (pset.c; the bucket is the input rounded down
 * to 8 bytes, at least 64), the backing-device table (bdev_table.c,
 * whose accepted tables also drive attaches and detaches) and the
 * checksum table's block (csum_table.c; the input's first 4 KiB, zero
 * past its end).
 *
 * A parser must not crash, read out of bounds or hit undefined behaviour
 * on any input, and whatever it accepts must survive an encode/decode
 * round trip unchanged. Anything else aborts, which libFuzzer reports.
 */

#include <stdio.h>
#include <stdlib.h>

#include "bdev_table.h"
#include "bset.h"
#include "csum_table.h"
#include "jset.h"
#include "pset.h"
#include "sb.h"

/*
 * The set magic the sorted-set seeds are written with (gen_seeds.c uses
 * the same): inputs with another magic only reach the magic check.
 */
#define FUZZ_SET_MAGIC		0x5eed5eedf00df00dULL
#define FUZZ_CACHE_SECTORS	(1ULL << 32)
#define FUZZ_MAX_KEYS		(8192 / 24 + 1)
#define FUZZ_NBUCKETS		(1ULL << 20)
/*
 * Chunks of the device the checksum blocks are decoded for: blocks 0-4
 * full, block 5 holding 500 chunks, blocks from 6 on none.
 */
#define FUZZ_CSUM_CHUNKS	(5ULL * HC_CSUM_PER_BLOCK + 500)
#define FUZZ_CSUM_BLOCKS	6U

static void fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_hcache: invariant broken: %s\n", what);
	abort();
}

static void sb_check_equal(const struct hc_sb *a, const struct hc_sb *b)
{
	if (a->version != b->version || a->compat != b->compat ||
	    a->ro_compat != b->ro_compat || a->incompat != b->incompat ||
	    a->read_only != b->read_only ||
	    memcmp(a->dev_uuid, b->dev_uuid, HC_UUID_SIZE) ||
	    memcmp(a->set_uuid, b->set_uuid, HC_UUID_SIZE) ||
	    strcmp(a->label, b->label) || a->seq != b->seq ||
	    a->kind != b->kind || a->block_size != b->block_size)
		fuzz_fail("superblock common fields changed in a round trip");
	if (a->kind == HC_KIND_CACHE &&
	    (a->cache.nbuckets != b->cache.nbuckets ||
	     a->cache.first_bucket != b->cache.first_bucket ||
	     a->cache.journal_start != b->cache.journal_start ||
	     a->cache.bucket_size != b->cache.bucket_size ||
	     a->cache.journal_buckets != b->cache.journal_buckets ||
	     a->cache.replacement != b->cache.replacement ||
	     a->cache.discard != b->cache.discard ||
	     a->cache.clean != b->cache.clean ||
	     a->cache.csum_type != b->cache.csum_type ||
	     a->cache.csum_start != b->cache.csum_start ||
	     a->cache.csum_buckets != b->cache.csum_buckets))
		fuzz_fail("cache fields changed in a round trip");
	if (a->kind == HC_KIND_BACKING &&
	    (a->backing.data_offset != b->backing.data_offset ||
	     a->backing.inval_gen != b->backing.inval_gen ||
	     a->backing.cache_mode != b->backing.cache_mode ||
	     a->backing.state != b->backing.state))
		fuzz_fail("backing fields changed in a round trip");
}

/* Decode, and check the result and the error string agree. */
static const char *sb_decode(const void *buf, size_t len, struct hc_sb *sb)
{
	const char *err = "not set";
	int ret;

	ret = hc_sb_decode(buf, len, sb, &err);
	if (ret != 0 && ret != -EINVAL && ret != -EBADMSG &&
	    ret != -EOPNOTSUPP && ret != -EUCLEAN)
		fuzz_fail("unexpected errno");
	if (!ret != !err)
		fuzz_fail("return value and error string disagree");
	if (err && !*err)
		fuzz_fail("empty error string");
	return err;
}

static void fuzz_sb(const u8 *data, size_t size)
{
	struct hc_sb_disk d, d2;
	struct hc_sb sb, sb2;
	const char *err;

	/* As read from disk: almost always a checksum mismatch. */
	err = sb_decode(data, size, &sb);
	if (size < HC_SB_SIZE) {
		if (!err)
			fuzz_fail("short superblock accepted");
		return;
	}

	/* With the checksum fixed, so the rules behind it are reached. */
	memcpy(&d, data, sizeof(d));
	d.csum = cpu_to_le32(hc_sb_csum(&d));
	err = sb_decode(&d, sizeof(d), &sb);
	if (err)
		return;

	hc_sb_encode(&sb, &d2);
	err = sb_decode(&d2, sizeof(d2), &sb2);
	if (err)
		fuzz_fail("re-encoded superblock rejected");
	sb_check_equal(&sb, &sb2);
}

/* ---- Sorted sets ---------------------------------------------------------- */

static bool key_arrays_equal(const struct hc_key *a, const struct hc_key *b,
			     size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct hc_key *x = &a[i], *y = &b[i];

		if (x->end != y->end || x->ptr != y->ptr ||
		    x->bdev_id != y->bdev_id || x->size != y->size ||
		    x->nr_ptrs != y->nr_ptrs ||
		    x->flags != y->flags)
			return false;
	}
	return true;
}

static bool keys_equal(const struct hc_bset_mem *a, const struct hc_bset_mem *b)
{
	return a->nr == b->nr && key_arrays_equal(a->keys, b->keys, a->nr);
}

static int bset_decode(const void *buf, size_t len, struct hc_bset_mem *set,
		       struct hc_bset_info *info)
{
	const char *err = "not set";
	int ret;

	ret = hc_bset_decode(buf, len, FUZZ_SET_MAGIC, FUZZ_CACHE_SECTORS, set,
			     info, &err);
	if (ret != 0 && ret != -EINVAL && ret != -EBADMSG && ret != -EUCLEAN &&
	    ret != -ENOSPC)
		fuzz_fail("sorted set: unexpected errno");
	if (!ret != !err)
		fuzz_fail("sorted set: return value and error string disagree");
	if (err && !*err)
		fuzz_fail("sorted set: empty error string");
	if (ret && set->nr)
		fuzz_fail("sorted set: keys left after an error");
	if (!ret && hc_bset_check(set))
		fuzz_fail("sorted set: decoded set fails hc_bset_check");
	return ret;
}

/*
 * Use an accepted set's keys as operations: insert shifted copies of them
 * into a set with little room (so -ENOSPC happens), checking it after
 * each; then merging the accepted set over it must give the same keys as
 * inserting its keys one by one.
 */
static void bset_ops(const struct hc_bset_mem *in)
{
	static struct hc_key base_k[32], seq_k[32], dst_k[64];
	struct hc_bset_mem base, seq, dst;
	struct hc_key k, copy[32];
	size_t i, nr;
	u64 inserted;
	int ret;

	hc_bset_init(&base, base_k, 32);
	for (i = 0; i < in->nr; i++) {
		k = in->keys[i];
		if (k.end <= ~0ULL - k.size / 2)
			k.end += k.size / 2;
		nr = base.nr;
		memcpy(copy, base_k, nr * sizeof(*copy));
		ret = hc_bset_insert(&base, &k, NULL);
		if (ret == -ENOSPC &&
		    (base.nr != nr || memcmp(copy, base_k, nr * sizeof(*copy))))
			fuzz_fail("sorted set: -ENOSPC changed the set");
		if (ret && ret != -ENOSPC)
			fuzz_fail("sorted set: insert of a valid key failed");
		if (hc_bset_check(&base))
			fuzz_fail("sorted set: insert broke the set");
		ret = hc_bset_insert_cmpxchg(&base, &in->keys[i], &k, NULL,
					     &inserted);
		if ((ret && ret != -ENOSPC) || hc_bset_check(&base) ||
		    inserted > k.size)
			fuzz_fail("sorted set: cmpxchg insert broke the set");
	}

	hc_bset_init(&seq, seq_k, 32);
	memcpy(seq_k, base_k, base.nr * sizeof(*seq_k));
	seq.nr = base.nr;
	for (i = 0; i < in->nr; i++)
		if (hc_bset_insert(&seq, &in->keys[i], NULL))
			return;		/* too many for 32: no comparison */
	hc_bset_init(&dst, dst_k, 64);
	ret = hc_bset_merge(&dst, &base, in);
	if (ret || !keys_equal(&dst, &seq))
		fuzz_fail("sorted set: merge differs from sequential inserts");
}

static void fuzz_bset(const u8 *data, size_t size)
{
	static struct hc_key keys[FUZZ_MAX_KEYS], keys2[FUZZ_MAX_KEYS];
	struct hc_bset_mem set, set2;
	struct hc_bset_info info, info2;
	struct hc_bset_disk *d;
	u64 *buf, *buf2;
	size_t bytes;

	/* 8-byte aligned copies, as a read into a block buffer would be. */
	buf = calloc(1, size + 8);
	buf2 = calloc(1, size + 8);
	if (!buf || !buf2)
		fuzz_fail("out of memory");
	memcpy(buf, data, size);
	hc_bset_init(&set, keys, FUZZ_MAX_KEYS);
	hc_bset_init(&set2, keys2, FUZZ_MAX_KEYS);

	/* As read from disk, then with magic and checksum fixed. */
	bset_decode(buf, size, &set, &info);
	if (size < sizeof(*d))
		goto out;
	d = (struct hc_bset_disk *)buf;
	d->magic = cpu_to_le64(FUZZ_SET_MAGIC ^ HC_BSET_MAGIC);
	if (le32_to_cpu(d->u64s) <= (size - sizeof(*d)) / sizeof(u64))
		d->csum = cpu_to_le32(hc_bset_csum(d));
	if (bset_decode(buf, size, &set, &info))
		goto out;

	/* Accepted: it re-encodes to the same bytes and decodes the same. */
	bytes = hc_bset_bytes(le32_to_cpu(d->u64s));
	if (hc_bset_encode_u64s(&set) != le32_to_cpu(d->u64s))
		fuzz_fail("sorted set: u64s changed in a round trip");
	if (hc_bset_encode(&set, FUZZ_SET_MAGIC, &info, buf2, size))
		fuzz_fail("sorted set: re-encode failed");
	if (memcmp(buf, buf2, bytes))
		fuzz_fail("sorted set: re-encoded bytes differ");
	if (bset_decode(buf2, bytes, &set2, &info2) ||
	    !keys_equal(&set, &set2) || info.node_seq != info2.node_seq ||
	    info.journal_seq != info2.journal_seq)
		fuzz_fail("sorted set: round trip differs");
	bset_ops(&set);
out:
	free(buf);
	free(buf2);
}

/* ---- Journal entries ------------------------------------------------------ */

static bool jset_info_equal(const struct hc_jset_info *a,
			    const struct hc_jset_info *b)
{
	return a->seq == b->seq && a->last_seq == b->last_seq &&
	       a->btree_root == b->btree_root &&
	       a->prio_bucket == b->prio_bucket &&
	       a->bdev_table_bucket == b->bdev_table_bucket &&
	       a->btree_level == b->btree_level;
}

static int jset_decode(const void *buf, size_t len, struct hc_key *keys,
		       size_t cap, struct hc_jset_info *info, size_t *nr,
		       size_t *bytes)
{
	static const struct hc_jset_info zero;
	const char *err = "not set";
	size_t i;
	int ret;

	*nr = 99;
	*bytes = 99;
	ret = hc_jset_decode(buf, len, FUZZ_SET_MAGIC, FUZZ_CACHE_SECTORS,
			     FUZZ_NBUCKETS, info, keys, cap, nr, bytes, &err);
	if (ret != 0 && ret != -EINVAL && ret != -EBADMSG && ret != -EUCLEAN &&
	    ret != -ENOSPC)
		fuzz_fail("journal entry: unexpected errno");
	if (!ret != !err)
		fuzz_fail("journal entry: return value and error string disagree");
	if (err && !*err)
		fuzz_fail("journal entry: empty error string");
	if (ret && (*nr || *bytes || !jset_info_equal(info, &zero)))
		fuzz_fail("journal entry: results left after an error");
	if (ret)
		return ret;
	if (*bytes > len || info->last_seq > info->seq ||
	    info->btree_level >= HC_BTREE_MAX_DEPTH ||
	    info->prio_bucket >= FUZZ_NBUCKETS ||
	    info->bdev_table_bucket >= FUZZ_NBUCKETS)
		fuzz_fail("journal entry: accepted a header that breaks a rule");
	for (i = 0; i < *nr; i++)
		if (hc_key_invalid(&keys[i]))
			fuzz_fail("journal entry: accepted an invalid key");
	return 0;
}

static void fuzz_jset(const u8 *data, size_t size)
{
	static struct hc_key keys[FUZZ_MAX_KEYS], keys2[FUZZ_MAX_KEYS];
	struct hc_jset_info info, info2;
	struct hc_jset_disk *d;
	size_t nr, nr2, bytes, bytes2;
	u64 *buf, *buf2;

	buf = calloc(1, size + 8);
	buf2 = calloc(1, size + 8);
	if (!buf || !buf2)
		fuzz_fail("out of memory");
	memcpy(buf, data, size);

	/* As read from disk, then with magic and checksum fixed. */
	jset_decode(buf, size, keys, FUZZ_MAX_KEYS, &info, &nr, &bytes);
	if (size < sizeof(*d))
		goto out;
	d = (struct hc_jset_disk *)buf;
	d->magic = cpu_to_le64(FUZZ_SET_MAGIC ^ HC_JSET_MAGIC);
	if (le32_to_cpu(d->u64s) <= (size - sizeof(*d)) / sizeof(u64))
		d->csum = cpu_to_le32(hc_jset_csum(d));
	if (jset_decode(buf, size, keys, FUZZ_MAX_KEYS, &info, &nr, &bytes))
		goto out;

	/* Accepted: it re-encodes to the same bytes and decodes the same. */
	if (bytes != hc_jset_bytes(le32_to_cpu(d->u64s)))
		fuzz_fail("journal entry: wrong *bytes");
	if (hc_jset_encode(&info, keys, nr, FUZZ_SET_MAGIC, buf2, size,
			   &bytes2) || bytes2 != bytes)
		fuzz_fail("journal entry: re-encode failed");
	if (memcmp(buf, buf2, bytes))
		fuzz_fail("journal entry: re-encoded bytes differ");
	if (jset_decode(buf2, bytes, keys2, FUZZ_MAX_KEYS, &info2, &nr2,
			&bytes2) || nr2 != nr || bytes2 != bytes ||
	    !jset_info_equal(&info, &info2) ||
	    !key_arrays_equal(keys, keys2, nr))
		fuzz_fail("journal entry: round trip differs");
	if (hc_jset_encode(&info, keys, nr, FUZZ_SET_MAGIC, buf2, bytes - 1,
			   &bytes2) != -ENOSPC)
		fuzz_fail("journal entry: encode into too little room");
	if (nr && jset_decode(buf, size, keys2, nr - 1, &info2, &nr2,
			      &bytes2) != -ENOSPC)
		fuzz_fail("journal entry: more keys than room accepted");
out:
	free(buf);
	free(buf2);
}

/* ---- Gen/prio sets -------------------------------------------------------- */

/* Records handed out by hc_pset_decode(), relative to the set's first. */
struct pset_recs {
	u64 first;
	u32 calls;
	u8 gen[8192 / 4];
	u16 prio[8192 / 4];
	u8 flags[8192 / 4];
};

static void pset_set(void *priv, u64 bucket, u8 gen, u16 prio, u8 flags)
{
	struct pset_recs *r = priv;

	if (bucket != r->first + r->calls || bucket >= FUZZ_NBUCKETS ||
	    r->calls >= sizeof(r->gen))
		fuzz_fail("prio set: set() called out of order or range");
	r->gen[r->calls] = gen;
	r->prio[r->calls] = prio;
	r->flags[r->calls] = flags;
	r->calls++;
}

static void pset_get(void *priv, u64 bucket, u8 *gen, u16 *prio, u8 *flags)
{
	struct pset_recs *r = priv;
	u64 i = bucket - r->first;

	if (i >= r->calls)
		fuzz_fail("prio set: get() out of range");
	*gen = r->gen[i];
	*prio = r->prio[i];
	*flags = r->flags[i];
}

static int pset_decode(const void *buf, u32 bucket_bytes, u64 expect_first,
		       struct pset_recs *r, struct hc_pset_info *info)
{
	const char *err = "not set";
	int ret;

	r->first = expect_first;
	r->calls = 0;
	ret = hc_pset_decode(buf, bucket_bytes, FUZZ_SET_MAGIC, FUZZ_NBUCKETS,
			     expect_first, pset_set, r, info, &err);
	if (ret != 0 && ret != -EINVAL && ret != -EBADMSG && ret != -EUCLEAN)
		fuzz_fail("prio set: unexpected errno");
	if (!ret != !err)
		fuzz_fail("prio set: return value and error string disagree");
	if (err && !*err)
		fuzz_fail("prio set: empty error string");
	if (ret && (r->calls || info->nr || info->first || info->seq ||
		    info->next_bucket))
		fuzz_fail("prio set: results left after an error");
	if (!ret && (r->calls != info->nr || !info->nr ||
		     info->nr > hc_pset_per_bucket(bucket_bytes) ||
		     info->first != expect_first ||
		     info->first + info->nr > FUZZ_NBUCKETS ||
		     info->next_bucket >= FUZZ_NBUCKETS))
		fuzz_fail("prio set: accepted a set that breaks a rule");
	return ret;
}

static void fuzz_pset(const u8 *data, size_t size)
{
	static struct pset_recs r, r2;
	struct hc_pset_info info, info2;
	struct hc_pset_disk *d;
	/* At most 8192 (-max_len): pset_recs holds a bucket's records. */
	u32 bytes = size > 8192 ? 8192 : size & ~(size_t)7;
	u64 *buf, *buf2;
	size_t head;
	u32 zero_from;

	if (bytes < 64)
		bytes = 64;
	buf = calloc(1, bytes);
	buf2 = calloc(1, bytes);
	if (!buf || !buf2)
		fuzz_fail("out of memory");
	memcpy(buf, data, size < bytes ? size : bytes);
	d = (struct hc_pset_disk *)buf;

	/* As read from disk, then with magic, checksum and first fixed. */
	pset_decode(buf, bytes, 0, &r, &info);
	d->magic = cpu_to_le64(FUZZ_SET_MAGIC ^ HC_PSET_MAGIC);
	d->csum = cpu_to_le32(hc_pset_csum(d, bytes));
	if (pset_decode(buf, bytes, le64_to_cpu(d->first), &r, &info))
		goto out;

	/*
	 * Accepted: header and records re-encode the same, decode the same.
	 * buf2 is calloc()ed: encode may take its tail as zero, and works
	 * out that part of the checksum, which decode then checks.
	 */
	zero_from = 0;
	if (hc_pset_encode(&info, FUZZ_SET_MAGIC, pset_get, &r, buf2, bytes,
			   &zero_from))
		fuzz_fail("prio set: re-encode failed");
	head = sizeof(*d) + (size_t)info.nr * sizeof(d->d[0]);
	if (memcmp(buf, buf2, 8) ||
	    memcmp((u8 *)buf + 12, (u8 *)buf2 + 12, head - 12))
		fuzz_fail("prio set: re-encoded bytes differ");
	if (pset_decode(buf2, bytes, info.first, &r2, &info2) ||
	    info2.seq != info.seq || info2.first != info.first ||
	    info2.nr != info.nr || info2.next_bucket != info.next_bucket ||
	    memcmp(r.gen, r2.gen, info.nr) ||
	    memcmp(r.prio, r2.prio, info.nr * sizeof(r.prio[0])))
		fuzz_fail("prio set: round trip differs");
out:
	free(buf);
	free(buf2);
}

/* ---- Backing-device table ------------------------------------------------- */

static bool bdev_table_equal(const struct hc_bdev_table *a,
			     const struct hc_bdev_table *b)
{
	u32 i;

	if (a->seq != b->seq || a->next_id != b->next_id || a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++) {
		const struct hc_bdev_entry *x = &a->d[i], *y = &b->d[i];

		if (memcmp(x->uuid, y->uuid, HC_UUID_SIZE) || x->id != y->id ||
		    x->inval_gen != y->inval_gen || x->flags != y->flags ||
		    x->sectors != y->sectors ||
		    x->last_attach != y->last_attach)
			return false;
	}
	return true;
}

static int bdev_table_decode(const void *buf, size_t len,
			     struct hc_bdev_table *t)
{
	const char *err = "not set";
	int ret;

	ret = hc_bdev_table_decode(buf, len, FUZZ_SET_MAGIC, t, &err);
	if (ret != 0 && ret != -EINVAL && ret != -EBADMSG && ret != -EUCLEAN)
		fuzz_fail("bdev table: unexpected errno");
	if (!ret != !err)
		fuzz_fail("bdev table: return value and error string disagree");
	if (err && !*err)
		fuzz_fail("bdev table: empty error string");
	if (ret && (t->nr || t->next_id || t->seq))
		fuzz_fail("bdev table: results left after an error");
	return ret;
}

/*
 * Attach every device again, half of them with another inval_gen, attach
 * a device not in the table and detach one: ids must behave, and the
 * table must stay valid.
 */
static void bdev_table_ops(struct hc_bdev_table *t, u64 *buf, size_t len)
{
	static struct hc_bdev_table t2;
	u8 uuid[HC_UUID_SIZE];
	u32 i, nr = t->nr, id, next;
	bool new_id;
	int ret;

	for (i = 0; i < nr; i++) {
		struct hc_bdev_entry e = t->d[i];

		next = t->next_id;
		ret = hc_bdev_table_attach(t, e.uuid, e.inval_gen + (i & 1),
					   e.sectors + 1, i, &id, &new_id);
		if (ret == -EOVERFLOW && (i & 1) && next == (u32)~0U)
			continue;
		if (ret || t->nr != nr || id != ((i & 1) ? next : e.id) ||
		    new_id != (i & 1) || hc_bdev_table_find_id(t, id) != &t->d[i])
			fuzz_fail("bdev table: re-attach misbehaved");
	}
	memset(uuid, 0xee, sizeof(uuid));
	if (!hc_bdev_table_find(t, uuid)) {
		next = t->next_id;
		ret = hc_bdev_table_attach(t, uuid, 0, 1, 1, &id, &new_id);
		if (ret == -ENOSPC ? nr != HC_BDEV_TABLE_MAX :
		    ret == -EOVERFLOW ? next != (u32)~0U :
		    ret || !new_id || id != next || t->nr != nr + 1)
			fuzz_fail("bdev table: attach of a new device");
	}
	if (t->nr) {
		id = t->d[t->nr / 2].id;
		nr = t->nr;
		if (hc_bdev_table_detach(t, id) || t->nr != nr - 1 ||
		    hc_bdev_table_find_id(t, id) ||
		    hc_bdev_table_detach(t, id) != -ENOENT)
			fuzz_fail("bdev table: detach");
	}
	if (hc_bdev_table_encode(t, FUZZ_SET_MAGIC, buf, len) ||
	    bdev_table_decode(buf, len, &t2) || !bdev_table_equal(t, &t2))
		fuzz_fail("bdev table: attach/detach broke the table");
}

static void fuzz_bdev_table(const u8 *data, size_t size)
{
	static struct hc_bdev_table t, t2;
	struct hc_bdev_table_disk *d;
	size_t bytes, room;
	u64 *buf, *buf2;

	/* Room for one more entry, for bdev_table_ops(). */
	room = size + sizeof(struct hc_bdev_entry_disk);
	buf = calloc(1, room + 8);
	buf2 = calloc(1, room + 8);
	if (!buf || !buf2)
		fuzz_fail("out of memory");
	memcpy(buf, data, size);

	/* As read from disk, then with magic and checksum fixed. */
	bdev_table_decode(buf, size, &t);
	if (size < sizeof(*d))
		goto out;
	d = (struct hc_bdev_table_disk *)buf;
	d->magic = cpu_to_le64(FUZZ_SET_MAGIC ^ HC_BDEV_TABLE_MAGIC);
	if (le32_to_cpu(d->nr) <= (size - sizeof(*d)) / sizeof(d->d[0]))
		d->csum = cpu_to_le32(hc_bdev_table_csum(d));
	if (bdev_table_decode(buf, size, &t))
		goto out;

	/* Accepted: it re-encodes to the same bytes and decodes the same. */
	bytes = hc_bdev_table_bytes(&t);
	if (bytes > size || t.nr != le32_to_cpu(d->nr))
		fuzz_fail("bdev table: wrong size");
	if (hc_bdev_table_encode(&t, FUZZ_SET_MAGIC, buf2, bytes))
		fuzz_fail("bdev table: re-encode failed");
	if (memcmp(buf, buf2, bytes))
		fuzz_fail("bdev table: re-encoded bytes differ");
	if (bdev_table_decode(buf2, bytes, &t2) || !bdev_table_equal(&t, &t2))
		fuzz_fail("bdev table: round trip differs");
	if (hc_bdev_table_encode(&t, FUZZ_SET_MAGIC, buf2, bytes - 1) !=
	    -ENOSPC)
		fuzz_fail("bdev table: encode into too little room");
	bdev_table_ops(&t, buf2, room);
out:
	free(buf);
	free(buf2);
}

/* ---- Checksum table blocks ----------------------------------------------- */

#define FUZZ_CSUM_FILL		0xa5a5a5a5U
#define FUZZ_CSUM_ENTRIES	(FUZZ_CSUM_BLOCKS * HC_CSUM_PER_BLOCK)

/*
 * Decode @d as block @block, into @crc (FUZZ_CSUM_ENTRIES of them, filled
 * with FUZZ_CSUM_FILL first): the errno and the error string agree; an
 * error leaves @crc and @seq alone; an accepted block is one of the
 * device's, and changes @crc where its chunks are, to its values.
 */
static int csum_block_decode(const struct hc_csum_block_disk *d, u64 block,
			     u32 *crc, u64 *seq)
{
	const char *err = "not set";
	u32 i, lo, nr, want;
	int ret;

	for (i = 0; i < FUZZ_CSUM_ENTRIES; i++)
		crc[i] = FUZZ_CSUM_FILL;
	*seq = ~0ULL;
	ret = hc_csum_block_decode(d, FUZZ_SET_MAGIC, block, FUZZ_CSUM_CHUNKS,
				   seq, crc, &err);
	if (ret != 0 && ret != -ENODATA && ret != -EBADMSG && ret != -EUCLEAN)
		fuzz_fail("checksum block: unexpected errno");
	if (!ret != !err)
		fuzz_fail("checksum block: return value and error string disagree");
	if (err && !*err)
		fuzz_fail("checksum block: empty error string");
	if (ret) {
		for (i = 0; i < FUZZ_CSUM_ENTRIES; i++)
			if (crc[i] != FUZZ_CSUM_FILL)
				fuzz_fail("checksum block: checksums handed out after an error");
		if (*seq != ~0ULL)
			fuzz_fail("checksum block: seq set after an error");
		return ret;
	}
	if (block >= FUZZ_CSUM_BLOCKS || *seq != le64_to_cpu(d->seq) ||
	    le64_to_cpu(d->block) != block ||
	    le32_to_cpu(d->nr) != HC_CSUM_PER_BLOCK)
		fuzz_fail("checksum block: accepted a block that breaks a rule");
	lo = block * HC_CSUM_PER_BLOCK;
	nr = block == FUZZ_CSUM_BLOCKS - 1 ?
	     FUZZ_CSUM_CHUNKS % HC_CSUM_PER_BLOCK : HC_CSUM_PER_BLOCK;
	for (i = 0; i < FUZZ_CSUM_ENTRIES; i++) {
		want = i >= lo && i < lo + nr ? le32_to_cpu(d->crc[i - lo]) :
						FUZZ_CSUM_FILL;
		if (crc[i] != want)
			fuzz_fail("checksum block: wrong checksums handed out");
	}
	for (i = nr; i < HC_CSUM_PER_BLOCK; i++)
		if (d->crc[i])
			fuzz_fail("checksum block: accepted a checksum past the device's end");
	return 0;
}

static void fuzz_csum_block(const u8 *data, size_t size)
{
	static struct hc_csum_block_disk d, d2;
	static u32 crc[FUZZ_CSUM_BLOCKS * HC_CSUM_PER_BLOCK];
	u64 block, seq;

	memset(&d, 0, sizeof(d));
	memcpy(&d, data, size < sizeof(d) ? size : sizeof(d));

	/* As read from disk, as block 0. */
	csum_block_decode(&d, 0, crc, &seq);

	/*
	 * With magic and checksum fixed, as the block it names, so the
	 * rules behind them are reached: mostly a block of the table or one
	 * past it, and a wild number when the name's top bit is set (a
	 * number that wrapped around when multiplied by HC_CSUM_PER_BLOCK
	 * was once taken for a small one).
	 */
	block = le64_to_cpu(d.block);
	if (!(block >> 63))
		block %= FUZZ_CSUM_BLOCKS + 1;
	d.block = cpu_to_le64(block);
	d.magic = cpu_to_le64(FUZZ_SET_MAGIC ^ HC_CSUM_MAGIC);
	d.csum = cpu_to_le32(hc_csum_block_csum(&d));
	if (csum_block_decode(&d, block, crc, &seq))
		return;
	if (csum_block_decode(&d, block + 1, crc, &seq) != -EUCLEAN)
		fuzz_fail("checksum block: accepted as another block");

	/* Accepted: every byte is its fields', so it encodes the same. */
	csum_block_decode(&d, block, crc, &seq);
	hc_csum_block_encode(FUZZ_SET_MAGIC, block, seq, crc,
			     FUZZ_CSUM_CHUNKS, &d2);
	if (memcmp(&d, &d2, sizeof(d)))
		fuzz_fail("checksum block: re-encoded bytes differ");
}

static void (*const fuzz_targets[])(const u8 *data, size_t size) = {
	fuzz_sb,
	fuzz_bset,
	fuzz_jset,
	fuzz_pset,
	fuzz_bdev_table,
	fuzz_csum_block,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	for (i = 0; i < sizeof(fuzz_targets) / sizeof(fuzz_targets[0]); i++)
		fuzz_targets[i](data, size);
	return 0;
}
