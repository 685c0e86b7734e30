// SPDX-License-Identifier: GPL-2.0
/*
 * pset.c: gen/prio sets (pset.h): conversion between struct hc_pset_disk,
 * one bucket of the gen/prio chain, and the caller's per-bucket gens and
 * priorities, validating on the way in. Pure code, shared by the module
 * and the tools.
 */

#include "pset.h"

/**
 * hc_pset_csum() - the checksum a gen/prio set should carry
 * @d: the set, @bucket_bytes readable
 * @bucket_bytes: bucket size in bytes, at least the header's
 *
 * CRC-32C of the whole bucket, the csum field read as zero.
 *
 * Return: the checksum, in CPU order.
 */
u32 hc_pset_csum(const struct hc_pset_disk *d, u32 bucket_bytes)
{
	return hc_csum_skip(d, bucket_bytes,
			    offsetof(struct hc_pset_disk, csum));
}

/**
 * hc_pset_encode() - the disk form of a gen/prio set
 * @info: the header fields; @info->nr records from bucket @info->first
 * @set_magic: the cache set's magic (hc_set_magic())
 * @get: called as get(@priv, @info->first + i, &gen, &prio, &flags) for
 *	 each i < @info->nr, in order, to read bucket i's gen, priority and
 *	 HC_BUCKET_DISK_* flags;
 *	 whether it may sleep is the caller's business, as encode holds
 *	 nothing
 * @priv: passed to @get
 * @buf: receives the whole bucket, 8-byte aligned
 * @bucket_bytes: bucket size in bytes
 * @zero_from: in: @buf holds only zeroes from this offset to
 *	 @bucket_bytes (@bucket_bytes when nothing is known of it); out:
 *	 where they start now, the end of the records
 *
 * Writes the header, the records and zeroes up to @bucket_bytes, then the
 * checksum of it all. A caller that keeps one buffer for its sets passes
 * the offset the last encode gave back: the zeroes are then written, and
 * checksummed byte by byte, only where records were before, and the rest
 * of the checksum is worked out (hc_crc32c_zeros()). A set of 2048 buckets
 * holds 8 KiB of a 1 MiB bucket. @info->first and @info->next_bucket are
 * not checked against the device.
 *
 * Return: 0, or -EINVAL if @info->nr is 0 (a set nothing would read back)
 * or more than hc_pset_per_bucket(@bucket_bytes); then @buf and
 * @zero_from are untouched and @get was not called.
 */
int hc_pset_encode(const struct hc_pset_info *info, u64 set_magic,
		   hc_pset_get_fn get, void *priv, void *buf, u32 bucket_bytes, u32 *zero_from)
{
	static const u8 zero[4];
	struct hc_pset_disk *d = buf;
	const size_t csum_at = offsetof(struct hc_pset_disk, csum);
	const size_t after = csum_at + sizeof(zero);
	u32 i, end, dirty_to, crc;

	if (!info->nr || info->nr > hc_pset_per_bucket(bucket_bytes))
		return -EINVAL;

	end = sizeof(*d) + info->nr * sizeof(d->d[0]);
	dirty_to = *zero_from < bucket_bytes ? *zero_from : bucket_bytes;
	if (dirty_to > end)
		memset((u8 *)buf + end, 0, dirty_to - end);
	*zero_from = end;
	memset(d, 0, sizeof(*d));
	d->magic = cpu_to_le64(set_magic ^ HC_PSET_MAGIC);
	d->nr = cpu_to_le32(info->nr);
	d->seq = cpu_to_le64(info->seq);
	d->first = cpu_to_le64(info->first);
	d->next_bucket = cpu_to_le64(info->next_bucket);
	for (i = 0; i < info->nr; i++) {
		u16 prio = 0;
		u8 gen = 0, flags = 0;

		get(priv, info->first + i, &gen, &prio, &flags);
		d->d[i].prio = cpu_to_le16(prio);
		d->d[i].gen = gen;
		d->d[i].flags = flags;
	}
	/* hc_pset_csum(d, bucket_bytes), the zeroes past @end not read. */
	crc = hc_crc32c(~0U, d, csum_at);
	crc = hc_crc32c(crc, zero, sizeof(zero));
	crc = hc_crc32c(crc, (const u8 *)buf + after, end - after);
	crc = hc_crc32c_zeros(crc, bucket_bytes - end);
	d->csum = cpu_to_le32(~crc);
	return 0;
}

/**
 * hc_pset_decode() - validate a gen/prio set and hand out its records
 * @buf: the bucket read, 8-byte aligned
 * @bucket_bytes: bucket size in bytes; the checksum covers all of them
 * @set_magic: the cache set's magic (hc_set_magic())
 * @nbuckets: buckets on the cache device
 * @expect_first: the bucket number this set must start at: where the
 *	previous set of the chain ended, or the first bucket for the head
 * @set: if not NULL, called as set(@priv, first + i, gen, prio, flags) for each
 *	 record i, in order, only once the whole set is valid
 * @priv: passed to @set
 * @info: receives the header fields; zeroed on error
 * @why: if not NULL, receives NULL, or a constant string naming the first
 *	 rule broken
 *
 * Bytes after the records are covered by the checksum but not otherwise
 * checked.
 *
 * Return: 0 if valid; -EINVAL if not a gen/prio set of this cache set
 * (bucket too small for a header, bad magic); -EBADMSG on a checksum
 * mismatch; -EUCLEAN if a field breaks a rule (nr 0 or more than a bucket
 * holds, records past the last bucket, an unexpected first bucket, next
 * bucket out of range, nonzero header padding, a record flag this code
 * does not know). On error @set was not called.
 */
int hc_pset_decode(const void *buf, u32 bucket_bytes, u64 set_magic,
		   u64 nbuckets, u64 expect_first,
		   hc_pset_set_fn set, void *priv, struct hc_pset_info *info,
		   const char **why)
{
	const struct hc_pset_disk *d = buf;
	const char *err;
	u32 i;
	int ret;

	memset(info, 0, sizeof(*info));

	ret = -EINVAL;
	err = "prio set bucket smaller than its header";
	if (bucket_bytes < sizeof(*d))
		goto err;
	err = "not a prio set of this cache set";
	if (le64_to_cpu(d->magic) != (set_magic ^ HC_PSET_MAGIC))
		goto err;

	ret = -EBADMSG;
	err = "checksum mismatch";
	if (le32_to_cpu(d->csum) != hc_pset_csum(d, bucket_bytes))
		goto err;

	ret = -EUCLEAN;
	info->seq = le64_to_cpu(d->seq);
	info->first = le64_to_cpu(d->first);
	info->nr = le32_to_cpu(d->nr);
	info->next_bucket = le64_to_cpu(d->next_bucket);
	err = "prio set is empty";
	if (!info->nr)
		goto err;
	err = "more records than fit in a bucket";
	if (info->nr > hc_pset_per_bucket(bucket_bytes))
		goto err;
	err = "records past the last bucket";
	if (info->first > nbuckets || info->nr > nbuckets - info->first)
		goto err;
	err = "prio set does not start where expected";
	if (info->first != expect_first)
		goto err;
	err = "next prio bucket past the last bucket";
	if (info->next_bucket >= nbuckets)
		goto err;
	err = "prio set padding not zero";
	if (d->pad)
		goto err;
	err = "unknown bucket record flags";
	for (i = 0; i < info->nr; i++)
		if (d->d[i].flags & ~HC_BUCKET_DISK_FLAGS)
			goto err;

	for (i = 0; set && i < info->nr; i++)
		set(priv, info->first + i, d->d[i].gen,
		    le16_to_cpu(d->d[i].prio), d->d[i].flags);
	if (why)
		*why = NULL;
	return 0;
err:
	memset(info, 0, sizeof(*info));
	if (why)
		*why = err;
	return ret;
}
