// SPDX-License-Identifier: GPL-2.0
/*
 * jset.c: journal entries (jset.h): conversion between struct hc_jset_disk
 * and a header in memory plus an array of keys, validating on the way in.
 * Pure code, shared by the module and the tools.
 */

#include "jset.h"

/**
 * hc_jset_csum() - the checksum a journal entry should carry
 * @d: the entry, with hc_jset_bytes(@d->u64s) bytes readable
 *
 * CRC-32C of the header and the keys, the csum field read as zero; the
 * block padding after the keys is not covered.
 *
 * Return: the checksum, in CPU order.
 */
u32 hc_jset_csum(const struct hc_jset_disk *d)
{
	return hc_csum_skip(d, hc_jset_bytes(le32_to_cpu(d->u64s)),
			    offsetof(struct hc_jset_disk, csum));
}

/**
 * hc_jset_encode() - the disk form of a journal entry
 * @info: the header fields
 * @keys: the keys, in the order they were inserted
 * @nr: how many
 * @set_magic: the cache set's magic (hc_set_magic())
 * @buf: receives the entry, 8-byte aligned
 * @len: bytes available at @buf
 * @bytes: if not NULL, receives hc_jset_bytes() of the entry (also on
 *	   -ENOSPC: the room it needs)
 *
 * Neither @info nor @keys is validated: keys come from inserts that
 * checked them (hc_key_invalid()). Nothing past the entry is written: the
 * padding up to the next block is the caller's.
 *
 * Return: 0, or -ENOSPC if the entry does not fit in @len bytes or its
 * keys in a u32 count of u64s; then @buf is untouched.
 */
int hc_jset_encode(const struct hc_jset_info *info, const struct hc_key *keys,
		   size_t nr, u64 set_magic, void *buf, size_t len,
		   size_t *bytes)
{
	struct hc_jset_disk *d = buf;
	size_t i, u64s = 0;
	__le64 *out;

	for (i = 0; i < nr; i++)
		u64s += hc_key_disk_u64s(keys[i].nr_ptrs);
	if (bytes)
		*bytes = hc_jset_bytes(u64s);
	if (u64s > (u32)~0U || len < sizeof(*d) ||
	    u64s > (len - sizeof(*d)) / sizeof(u64))
		return -ENOSPC;

	memset(d, 0, sizeof(*d));
	d->magic = cpu_to_le64(set_magic ^ HC_JSET_MAGIC);
	d->u64s = cpu_to_le32(u64s);
	d->seq = cpu_to_le64(info->seq);
	d->last_seq = cpu_to_le64(info->last_seq);
	d->btree_root.v = cpu_to_le64(info->btree_root);
	d->prio_bucket = cpu_to_le64(info->prio_bucket);
	d->bdev_table_bucket = cpu_to_le64(info->bdev_table_bucket);
	d->btree_level = info->btree_level;
	out = d->keys;
	for (i = 0; i < nr; i++)
		out += hc_key_encode(&keys[i], (struct hc_key_disk *)out);
	d->csum = cpu_to_le32(hc_jset_csum(d));
	return 0;
}

static bool hc_jset_pad_zero(const struct hc_jset_disk *d)
{
	size_t i;

	for (i = 0; i < sizeof(d->pad); i++)
		if (d->pad[i])
			return false;
	return true;
}

/**
 * hc_jset_decode() - validate a journal entry and convert it to memory form
 * @buf: the bytes read, 8-byte aligned; the entry starts at @buf
 * @len: how many; the entry may be shorter (what follows is ignored)
 * @set_magic: the cache set's magic (hc_set_magic())
 * @cache_sectors: size of the cache device, sectors; the btree root and
 *	every key's extent must lie below it
 * @nbuckets: buckets on the cache device; the bucket numbers in the header
 *	must be below it
 * @info: receives the header fields; zeroed on error
 * @keys: receives the keys, in their order on disk
 * @cap: entries in @keys
 * @nr: receives the number of keys; 0 on error
 * @bytes: if not NULL, receives hc_jset_bytes() of the entry; 0 on error
 * @why: if not NULL, receives NULL, or a constant string naming the first
 *	 rule broken
 *
 * Keys are leaf keys in insertion order: each must be valid on its own
 * (hc_key_decode()), whiteouts included, but they are not required to be
 * sorted or disjoint. The keys must fill the entry's u64s exactly; one
 * that runs past them is reported by hc_key_decode().
 *
 * Return: 0 if valid; -EINVAL if not a journal entry of this cache set
 * (too short for a header, bad magic); -EBADMSG on a checksum mismatch;
 * -ENOSPC if it holds more than @cap keys; -EUCLEAN if anything else
 * breaks a rule (the entry runs past @len, last_seq after seq, root level
 * too deep, a bucket number, the root pointer or a key out of range,
 * nonzero padding, an invalid key).
 */
int hc_jset_decode(const void *buf, size_t len, u64 set_magic,
		   u64 cache_sectors, u64 nbuckets, struct hc_jset_info *info,
		   struct hc_key *keys, size_t cap, size_t *nr, size_t *bytes,
		   const char **why)
{
	const struct hc_jset_disk *d = buf;
	size_t left, used, n = 0;
	struct hc_key k;
	const char *err;
	const u8 *p;
	u32 u64s;
	int ret;

	*nr = 0;
	memset(info, 0, sizeof(*info));
	if (bytes)
		*bytes = 0;

	ret = -EINVAL;
	err = "journal entry shorter than its header";
	if (len < sizeof(*d))
		goto err;
	err = "not a journal entry of this cache set";
	if (le64_to_cpu(d->magic) != (set_magic ^ HC_JSET_MAGIC))
		goto err;

	ret = -EUCLEAN;
	u64s = le32_to_cpu(d->u64s);
	err = "journal entry runs past the end of the buffer";
	if (u64s > (len - sizeof(*d)) / sizeof(u64))
		goto err;

	ret = -EBADMSG;
	err = "checksum mismatch";
	if (le32_to_cpu(d->csum) != hc_jset_csum(d))
		goto err;

	ret = -EUCLEAN;
	info->seq = le64_to_cpu(d->seq);
	info->last_seq = le64_to_cpu(d->last_seq);
	info->btree_root = le64_to_cpu(d->btree_root.v);
	info->prio_bucket = le64_to_cpu(d->prio_bucket);
	info->bdev_table_bucket = le64_to_cpu(d->bdev_table_bucket);
	info->btree_level = d->btree_level;
	err = "last_seq after seq";
	if (info->last_seq > info->seq)
		goto err;
	err = "btree root level too deep";
	if (info->btree_level >= HC_BTREE_MAX_DEPTH)
		goto err;
	err = "prio bucket past the last bucket";
	if (info->prio_bucket >= nbuckets)
		goto err;
	err = "backing-device table bucket past the last bucket";
	if (info->bdev_table_bucket >= nbuckets)
		goto err;
	err = "btree root past the end of the cache device";
	if (hc_ptr_offset(info->btree_root) >= cache_sectors)
		goto err;
	err = "journal entry padding not zero";
	if (!hc_jset_pad_zero(d))
		goto err;

	p = (const u8 *)d->keys;
	left = (size_t)u64s * sizeof(u64);
	while (left) {
		ret = hc_key_decode(p, left, cache_sectors, &k, &used, &err);
		if (ret)
			goto err;
		ret = -ENOSPC;
		err = "more keys than the caller can hold";
		if (n == cap)
			goto err;
		keys[n++] = k;
		p += used;
		left -= used;
	}

	*nr = n;
	if (bytes)
		*bytes = hc_jset_bytes(u64s);
	if (why)
		*why = NULL;
	return 0;
err:
	memset(info, 0, sizeof(*info));
	if (why)
		*why = err;
	return ret;
}
