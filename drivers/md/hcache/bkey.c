// SPDX-License-Identifier: GPL-2.0
/*
 * bkey.c: keys in memory (bkey.h): cutting, comparing, validating, and
 * conversion to and from struct hc_key_disk. Pure code, shared by the
 * module and the tools.
 */

#include "bkey.h"

/**
 * hc_key_cut_front() - drop the sectors of a key before a sector
 * @k: the key
 * @new_start: its new first sector, clamped to [start, end]
 *
 * The pointer offset advances by the sectors dropped, so the remaining
 * sectors still map to the same cache sectors. Cutting at or past the end
 * leaves a key of size 0, which must not be stored.
 */
void hc_key_cut_front(struct hc_key *k, u64 new_start)
{
	u64 start = hc_key_start(k);
	u64 cut;

	if (new_start <= start)
		return;
	if (new_start > k->end)
		new_start = k->end;
	cut = new_start - start;
	k->size -= cut;
	if (k->nr_ptrs)
		k->ptr = hc_ptr_make(hc_ptr_offset(k->ptr) + cut,
				     hc_ptr_dev(k->ptr), hc_ptr_gen(k->ptr));
}

/**
 * hc_key_cut_back() - drop the sectors of a key from a sector on
 * @k: the key
 * @new_end: its new end, clamped to [start, end]
 *
 * The pointer offset is unchanged.
 */
void hc_key_cut_back(struct hc_key *k, u64 new_end)
{
	u64 start = hc_key_start(k);

	if (new_end >= k->end)
		return;
	if (new_end < start)
		new_end = start;
	k->size -= k->end - new_end;
	k->end = new_end;
}

/**
 * hc_key_same_mapping() - do two keys map sectors the same way
 * @a: a key
 * @b: another, of the same backing device
 *
 * True if both are whiteouts, or both have a pointer with the same device
 * and gen, the same HC_KEY_DIRTY flag, and any sector either could cover
 * maps to the same cache sector in both (pointer offset minus start is
 * equal). The ranges themselves are not compared: cutting a key changes
 * them, not where its sectors live.
 *
 * Return: true if they map alike.
 */
bool hc_key_same_mapping(const struct hc_key *a, const struct hc_key *b)
{
	if (a->nr_ptrs != b->nr_ptrs)
		return false;
	if ((a->flags ^ b->flags) & HC_KEY_DIRTY)
		return false;
	if (!a->nr_ptrs)
		return true;
	if ((a->ptr ^ b->ptr) & ~HC_PTR_OFFSET_MAX)
		return false;
	/* Offsets are below 2^48 and starts below 2^64: compare mod 2^64. */
	return hc_ptr_offset(a->ptr) - hc_key_start(a) ==
	       hc_ptr_offset(b->ptr) - hc_key_start(b);
}

/**
 * hc_key_invalid() - why a key may not be stored
 * @k: the key
 *
 * The rules every key in memory follows, whatever the size of the cache
 * device (hc_key_decode() also checks that).
 *
 * Return: NULL if valid, else a constant string naming the rule broken.
 */
const char *hc_key_invalid(const struct hc_key *k)
{
	if (k->nr_ptrs > 1)
		return "key has more than one pointer";
	if (!k->size)
		return "key size 0";
	if (k->end < k->size)
		return "key starts before sector 0";
	if (k->flags & ~HC_KEY_FLAGS_KNOWN)
		return "unknown key flag bits";
	if (!k->nr_ptrs) {
		if (k->flags)
			return "whiteout key with flags";
		if (k->ptr)
			return "whiteout key with a pointer";
		return NULL;
	}
	if (hc_ptr_dev(k->ptr))
		return "pointer to a cache device other than 0";
	/* offset < 2^48 and size < 2^32: no overflow. */
	if (hc_ptr_offset(k->ptr) + k->size > HC_PTR_OFFSET_MAX + 1)
		return "extent runs past the largest cache offset";
	return NULL;
}

/**
 * hc_key_encode() - the disk form of a key
 * @k: the key in memory
 * @d: receives hc_key_disk_u64s(@k->nr_ptrs) u64s
 *
 * Does not validate; a whiteout encodes with no pointer.
 *
 * Return: the number of u64s written.
 */
unsigned int hc_key_encode(const struct hc_key *k, struct hc_key_disk *d)
{
	d->end = cpu_to_le64(k->end);
	d->bdev_id = cpu_to_le32(k->bdev_id);
	d->size = cpu_to_le32(k->size);
	d->nr_ptrs = k->nr_ptrs;
	d->flags = k->flags;
	d->pad = 0;
	d->pad2 = 0;
	if (k->nr_ptrs)
		d->ptrs[0].v = cpu_to_le64(k->ptr);
	return hc_key_disk_u64s(k->nr_ptrs);
}

/**
 * hc_key_decode() - validate a key and convert it to memory form
 * @buf: the key's bytes, 8-byte aligned
 * @len: bytes available at @buf; the key may be shorter
 * @cache_sectors: size of the cache device; the cached sectors must lie
 *	below it
 * @k: receives the key; not to be used on error
 * @used: if not NULL, receives the key's length in bytes
 * @why: if not NULL, receives NULL, or a constant string naming the first
 *	 rule broken
 *
 * Return: 0 if valid, -EUCLEAN if not.
 */
int hc_key_decode(const void *buf, size_t len, u64 cache_sectors,
		  struct hc_key *k, size_t *used, const char **why)
{
	const struct hc_key_disk *d = buf;
	const char *err;
	size_t bytes;

	memset(k, 0, sizeof(*k));
	err = "key header runs past the end of the keys";
	if (len < sizeof(*d))
		goto err;
	err = "key has more than one pointer";
	if (d->nr_ptrs > 1)
		goto err;
	bytes = hc_key_disk_u64s(d->nr_ptrs) * sizeof(u64);
	err = "key pointer runs past the end of the keys";
	if (len < bytes)
		goto err;
	err = "key padding not zero";
	if (d->pad || d->pad2)
		goto err;

	k->end = le64_to_cpu(d->end);
	k->bdev_id = le32_to_cpu(d->bdev_id);
	k->size = le32_to_cpu(d->size);
	k->nr_ptrs = d->nr_ptrs;
	k->flags = d->flags;
	if (k->nr_ptrs)
		k->ptr = le64_to_cpu(d->ptrs[0].v);

	err = hc_key_invalid(k);
	if (err)
		goto err;
	/* Offset and size are bounded now: no overflow. */
	err = "pointer past the end of the cache device";
	if (k->nr_ptrs && hc_ptr_offset(k->ptr) + k->size > cache_sectors)
		goto err;

	if (used)
		*used = bytes;
	if (why)
		*why = NULL;
	return 0;
err:
	if (why)
		*why = err;
	return -EUCLEAN;
}
