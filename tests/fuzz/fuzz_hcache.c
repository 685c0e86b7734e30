// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hcache: libFuzzer target over every on-disk parser shared with the
 * module. Each parser gets the whole input; to add one (journal entries),
 * write a fuzz_*() function with the same shape and list it in
 * fuzz_targets[]. Today: the superblock and the sorted set (bset.c, whose
 * accepted inputs also drive inserts, compare-and-swap inserts and a merge).
 *
 * A parser must not crash, read out of bounds or hit undefined behaviour
 * on any input, and whatever it accepts must survive an encode/decode
 * round trip unchanged. Anything else aborts, which libFuzzer reports.
 */

#include <stdio.h>
#include <stdlib.h>

#include "bset.h"
#include "sb.h"

/*
 * The set magic the sorted-set seeds are written with (gen_seeds.c uses
 * the same): inputs with another magic only reach the magic check.
 */
#define FUZZ_SET_MAGIC		0x5eed5eedf00df00dULL
#define FUZZ_CACHE_SECTORS	(1ULL << 32)
#define FUZZ_MAX_KEYS		(8192 / 24 + 1)

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
	     a->cache.clean != b->cache.clean))
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

static bool keys_equal(const struct hc_bset_mem *a, const struct hc_bset_mem *b)
{
	size_t i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++) {
		const struct hc_key *x = &a->keys[i], *y = &b->keys[i];

		if (x->end != y->end || x->ptr != y->ptr ||
		    x->bdev_id != y->bdev_id || x->size != y->size ||
		    x->data_csum != y->data_csum || x->nr_ptrs != y->nr_ptrs ||
		    x->flags != y->flags)
			return false;
	}
	return true;
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

static void (*const fuzz_targets[])(const u8 *data, size_t size) = {
	fuzz_sb,
	fuzz_bset,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	for (i = 0; i < sizeof(fuzz_targets) / sizeof(fuzz_targets[0]); i++)
		fuzz_targets[i](data, size);
	return 0;
}
