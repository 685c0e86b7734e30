// SPDX-License-Identifier: GPL-2.0
/*
 * sb.c: the superblock, converted between its disk form (hcache_ondisk.h)
 * and its in-memory form (sb.h), and validated on the way in. Pure code,
 * shared by the module and the tools.
 */

#include "sb.h"
#include "csum_table.h"

/*
 * A cache formatted while its inner structures were a draft. The one rule
 * whose message is too long to assign on one line, so the unit test's
 * rule scanner does not see it; test_sb.c has table entries for it.
 */
#define HC_SB_WHY_RETIRED_DRAFT "formatted by a development version of hcache (draft cache-set format); reformat it with make-hcache"

static bool hc_is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

static bool hc_uuid_is_nil(const u8 *uuid)
{
	unsigned int i;

	for (i = 0; i < HC_UUID_SIZE; i++)
		if (uuid[i])
			return false;
	return true;
}

/**
 * hc_sb_csum() - the checksum a superblock should carry
 * @d: the superblock, HC_SB_SIZE bytes
 *
 * CRC-32C of all HC_SB_SIZE bytes with the csum field read as zero,
 * whatever it holds.
 *
 * Return: the checksum, in CPU order.
 */
u32 hc_sb_csum(const struct hc_sb_disk *d)
{
	return hc_csum_skip(d, HC_SB_SIZE, offsetof(struct hc_sb_disk, csum));
}

/**
 * hc_set_magic() - the magic of a cache set
 * @set_uuid: its HC_UUID_SIZE-byte uuid
 *
 * The uuid's two halves, read as little-endian u64s, xor-ed; each structure
 * inside the cache xors it with its own constant (HC_JSET_MAGIC...).
 *
 * Return: the set magic.
 */
u64 hc_set_magic(const u8 *set_uuid)
{
	__le64 lo, hi;

	memcpy(&lo, set_uuid, sizeof(lo));
	memcpy(&hi, set_uuid + sizeof(lo), sizeof(hi));
	return le64_to_cpu(lo) ^ le64_to_cpu(hi);
}

/**
 * hc_label_check() - may this be a device's label
 * @label: its bytes, not NUL-terminated
 * @len: how many
 *
 * The one rule for make-hcache and the label file in sysfs: at most
 * HC_LABEL_SIZE - 1 bytes, no control character (a newline would end the
 * sysfs value, and NUL the label) and no '/' (udev links the device as
 * /dev/hcache/by-label/LABEL, which a '/' would nest). Any other byte,
 * UTF-8 included, passes. Labels already on disk are not held to it.
 *
 * Return: NULL, or why the label is refused.
 */
const char *hc_label_check(const char *label, size_t len)
{
	size_t i;

	static_assert(HC_LABEL_SIZE - 1 == 31, "the message names 31 bytes");
	if (len >= HC_LABEL_SIZE)
		return "label longer than 31 bytes";
	for (i = 0; i < len; i++) {
		unsigned char ch = label[i];

		if (ch < 0x20 || ch == 0x7f)
			return "label holds a control character";
		if (ch == '/')
			return "label holds a '/'";
	}
	return NULL;
}

/* Bytes of a valid UTF-8 sequence starting at @s (at most @n), or 0. */
static size_t hc_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* no overlong form */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* no UTF-16 surrogate */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* nothing past U+10FFFF */
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

/**
 * hc_label_encode() - a label as one name in /dev/hcache/by-label/
 * @label: NUL-terminated
 * @out: receives it encoded, NUL-terminated
 * @len: the size of @out; HC_LABEL_ENC_SIZE holds any label
 *
 * The convention of udev's and blkid's *_ENC values (/dev/disk/by-label/):
 * letters, digits, the bytes of "#+-.:=@_" and valid multi-byte UTF-8
 * sequences stay as they are; every other byte becomes \xNN (a space
 * \x20, a backslash \x5c), so that the result is one path component that
 * no two labels share, and udev need not replace anything in it.
 *
 * Return: the length of @out, or -1 if @len is too small (@out is then "").
 */
int hc_label_encode(const char *label, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)label;
	size_t n = strnlen(label, HC_LABEL_SIZE - 1), i = 0, o = 0, u;

	while (i < n) {
		unsigned char ch = s[i];

		u = ch >= 0x80 ? hc_utf8_len(s + i, n - i) : 0;
		if (u) {
			if (o + u >= len)
				goto short_buf;
			memcpy(out + o, s + i, u);
			o += u;
			i += u;
			continue;
		}
		if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= 'A' && ch <= 'Z') || (ch && strchr("#+-.:=@_", ch))) {
			if (o + 1 >= len)
				goto short_buf;
			out[o++] = ch;
		} else {
			if (o + 4 >= len)
				goto short_buf;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
		i++;
	}
	if (o >= len)
		goto short_buf;
	out[o] = 0;
	return o;
short_buf:
	if (len)
		out[0] = 0;
	return -1;
}

/**
 * hc_cache_first_bucket() - first bucket past the superblock
 * @bucket_size: bytes
 *
 * Return: the number of the first bucket that starts at or after HC_SB_END.
 */
u64 hc_cache_first_bucket(u32 bucket_size)
{
	return (HC_SB_END + bucket_size - 1) / bucket_size;
}

/**
 * hc_cache_min_buckets() - smallest valid number of buckets on a cache
 * @bucket_size: bytes
 *
 * The buckets up to the end of the superblock, the smallest journal and
 * HC_MIN_BUCKETS more.
 *
 * Return: the minimum nbuckets.
 */
u64 hc_cache_min_buckets(u32 bucket_size)
{
	return hc_cache_first_bucket(bucket_size) + HC_JOURNAL_MIN +
	       HC_MIN_BUCKETS;
}

/**
 * hc_sb_encode() - the disk form of a superblock
 * @sb: the superblock in memory
 * @d: receives HC_SB_SIZE bytes, checksum included
 *
 * Does not validate: callers that build @sb from user input run
 * hc_sb_decode() on the result. A label is cut at HC_LABEL_SIZE - 1 bytes.
 * HC_FEAT_COMPAT_TUNABLES is set whenever a setting is kept (and kept if
 * @sb has it, so that a decoded superblock encodes to the same bits), and
 * the tunable fields without their bit are written as 0.
 */
void hc_sb_encode(const struct hc_sb *sb, struct hc_sb_disk *d)
{
	u64 compat = sb->compat;
	u32 tunables = 0;
	size_t label_len;
	u64 flags = 0;

	memset(d, 0, sizeof(*d));
	d->magic = cpu_to_le64(HC_SB_MAGIC);
	d->version = cpu_to_le32(sb->version);
	d->ro_compat = cpu_to_le64(sb->ro_compat);
	d->incompat = cpu_to_le64(sb->incompat);
	memcpy(d->dev_uuid, sb->dev_uuid, HC_UUID_SIZE);
	memcpy(d->set_uuid, sb->set_uuid, HC_UUID_SIZE);
	label_len = strnlen(sb->label, HC_LABEL_SIZE - 1);
	memcpy(d->label, sb->label, label_len);
	d->seq = cpu_to_le64(sb->seq);
	d->sb_sector = cpu_to_le64(HC_SB_SECTOR);
	d->kind = cpu_to_le32(sb->kind);
	d->block_size = cpu_to_le32(sb->block_size);

	if (sb->kind == HC_KIND_CACHE) {
		const struct hc_sb_cache *c = &sb->cache;

		d->cache.nbuckets = cpu_to_le64(c->nbuckets);
		d->cache.first_bucket = cpu_to_le64(c->first_bucket);
		d->cache.journal_start = cpu_to_le64(c->journal_start);
		d->cache.bucket_size = cpu_to_le32(c->bucket_size);
		d->cache.journal_buckets = cpu_to_le32(c->journal_buckets);
		flags |= c->replacement & HC_CACHE_REPL_MASK;
		if (c->discard)
			flags |= HC_CACHE_DISCARD;
		if (c->clean)
			flags |= HC_CACHE_CLEAN;
		/* Only the settings made; the other fields stay 0. */
		tunables = c->tunables & HC_CACHE_TUNE_KNOWN;
		d->cache.tunables = cpu_to_le32(tunables);
		if (tunables & HC_CACHE_TUNE_IO_ERROR_LIMIT)
			d->cache.io_error_limit = cpu_to_le32(c->io_error_limit);
		if (tunables & HC_CACHE_TUNE_IO_ERROR_HALFLIFE)
			d->cache.io_error_halflife =
				cpu_to_le32(c->io_error_halflife);
		if (sb->incompat & HC_FEAT_INCOMPAT_EMPTY_MARKS) {
			d->cache.clean_journal_bucket =
				cpu_to_le32(c->clean_journal_bucket);
			d->cache.clean_journal_seq =
				cpu_to_le64(c->clean_journal_seq);
			d->cache.clean_journal_offset =
				cpu_to_le32(c->clean_journal_offset);
		}
		if (sb->incompat & HC_FEAT_INCOMPAT_DATA_CSUM) {
			d->cache.csum_type = cpu_to_le32(c->csum_type);
			d->cache.csum_start = cpu_to_le64(c->csum_start);
			d->cache.csum_buckets = cpu_to_le32(c->csum_buckets);
		}
	} else if (sb->kind == HC_KIND_BACKING) {
		const struct hc_sb_backing *b = &sb->backing;

		d->backing.data_offset = cpu_to_le64(b->data_offset);
		d->backing.inval_gen = cpu_to_le32(b->inval_gen);
		flags |= b->cache_mode & HC_BDEV_MODE_MASK;
		flags |= ((u64)b->state << HC_BDEV_STATE_SHIFT) &
			 HC_BDEV_STATE_MASK;
		tunables = b->tunables & HC_BDEV_TUNE_KNOWN;
		d->backing.tunables = cpu_to_le32(tunables);
		if (tunables & HC_BDEV_TUNE_SEQUENTIAL_CUTOFF)
			d->backing.sequential_cutoff =
				cpu_to_le64(b->sequential_cutoff);
		if (tunables & HC_BDEV_TUNE_WRITEBACK_PERCENT)
			d->backing.writeback_percent =
				cpu_to_le32(b->writeback_percent);
		if (tunables & HC_BDEV_TUNE_ADMISSION_POLICY)
			d->backing.admission_policy = b->admission_policy;
		if (tunables & HC_BDEV_TUNE_STOP_WHEN_FAILED)
			d->backing.stop_when_failed = b->stop_when_failed;
	}
	if (tunables)
		compat |= HC_FEAT_COMPAT_TUNABLES;
	d->compat = cpu_to_le64(compat);
	d->flags = cpu_to_le64(flags);
	d->csum = cpu_to_le32(hc_sb_csum(d));
}

/*
 * The settings kept (HC_FEAT_COMPAT_TUNABLES); the rest stay 0. A compat
 * feature must never make a device unusable: a value this code does not
 * accept (a later version's wider range or new choice) is dropped, its
 * bit cleared, and the default applies.
 */
static void hc_sb_decode_cache_tunables(const struct hc_sb_disk *d,
					struct hc_sb_cache *c)
{
	c->tunables = le32_to_cpu(d->cache.tunables) & HC_CACHE_TUNE_KNOWN;
	if (c->tunables & HC_CACHE_TUNE_IO_ERROR_LIMIT)
		c->io_error_limit = le32_to_cpu(d->cache.io_error_limit);
	if (c->tunables & HC_CACHE_TUNE_IO_ERROR_HALFLIFE) {
		c->io_error_halflife = le32_to_cpu(d->cache.io_error_halflife);
		if (c->io_error_halflife > HC_IO_ERROR_HALFLIFE_MAX) {
			c->io_error_halflife = 0;
			c->tunables &= ~HC_CACHE_TUNE_IO_ERROR_HALFLIFE;
		}
	}
}

static void hc_sb_decode_backing_tunables(const struct hc_sb_disk *d,
					  struct hc_sb_backing *b)
{
	u32 keep = le32_to_cpu(d->backing.tunables) & HC_BDEV_TUNE_KNOWN;

	if (keep & HC_BDEV_TUNE_SEQUENTIAL_CUTOFF)
		b->sequential_cutoff = le64_to_cpu(d->backing.sequential_cutoff);
	if ((keep & HC_BDEV_TUNE_WRITEBACK_PERCENT) &&
	    le32_to_cpu(d->backing.writeback_percent) <= HC_WRITEBACK_PERCENT_MAX)
		b->writeback_percent = le32_to_cpu(d->backing.writeback_percent);
	else
		keep &= ~HC_BDEV_TUNE_WRITEBACK_PERCENT;
	if ((keep & HC_BDEV_TUNE_ADMISSION_POLICY) &&
	    d->backing.admission_policy < HC_ADMIT_NR)
		b->admission_policy = d->backing.admission_policy;
	else
		keep &= ~HC_BDEV_TUNE_ADMISSION_POLICY;
	if ((keep & HC_BDEV_TUNE_STOP_WHEN_FAILED) &&
	    d->backing.stop_when_failed < HC_STOP_NR)
		b->stop_when_failed = d->backing.stop_when_failed;
	else
		keep &= ~HC_BDEV_TUNE_STOP_WHEN_FAILED;
	b->tunables = keep;
}

/*
 * The checksum table's fields, once the geometry and the journal are
 * known to be valid: with HC_FEAT_INCOMPAT_DATA_CSUM, a table of exactly
 * the size the device needs, in buckets of its own; without it, zeroes.
 */
static const char *hc_sb_check_csum(const struct hc_sb *sb)
{
	const struct hc_sb_cache *c = &sb->cache;
	u64 journal_end = c->journal_start + c->journal_buckets;

	if (!(sb->incompat & HC_FEAT_INCOMPAT_DATA_CSUM)) {
		if (c->csum_type || c->csum_start || c->csum_buckets)
			return "checksum table without its feature bit";
		return NULL;
	}
	if (c->csum_type != HC_CSUM_CRC32C)
		return "unknown data checksum type";
	if (c->csum_buckets != hc_csum_table_buckets(c->nbuckets,
						     c->bucket_size))
		return "checksum table size does not match the device";
	if (c->csum_start < c->first_bucket)
		return "checksum table overlaps the superblock";
	if (c->csum_start >= c->nbuckets ||
	    c->csum_buckets > c->nbuckets - c->csum_start)
		return "checksum table past the last bucket";
	if (c->csum_start < journal_end &&
	    c->journal_start < c->csum_start + c->csum_buckets)
		return "checksum table overlaps the journal";
	return NULL;
}

static const char *hc_sb_decode_cache(const struct hc_sb_disk *d,
				      struct hc_sb *sb, u64 flags)
{
	struct hc_sb_cache *c = &sb->cache;
	u64 bucket_sectors, usable;
	const char *err;

	c->nbuckets = le64_to_cpu(d->cache.nbuckets);
	c->first_bucket = le64_to_cpu(d->cache.first_bucket);
	c->journal_start = le64_to_cpu(d->cache.journal_start);
	c->bucket_size = le32_to_cpu(d->cache.bucket_size);
	c->journal_buckets = le32_to_cpu(d->cache.journal_buckets);
	c->replacement = flags & HC_CACHE_REPL_MASK;
	c->discard = flags & HC_CACHE_DISCARD;
	/* Checked against the ring when used (hc_journal_read()). */
	if (sb->incompat & HC_FEAT_INCOMPAT_EMPTY_MARKS) {
		c->clean_journal_bucket =
			le32_to_cpu(d->cache.clean_journal_bucket);
		c->clean_journal_seq = le64_to_cpu(d->cache.clean_journal_seq);
		c->clean_journal_offset =
			le32_to_cpu(d->cache.clean_journal_offset);
	}
	c->clean = flags & HC_CACHE_CLEAN;
	c->csum_type = le32_to_cpu(d->cache.csum_type);
	c->csum_start = le64_to_cpu(d->cache.csum_start);
	c->csum_buckets = le32_to_cpu(d->cache.csum_buckets);

	err = "unknown cache flag bits";
	if (flags & ~HC_CACHE_FLAGS_KNOWN)
		goto err;
	err = "unknown replacement policy";
	if (c->replacement >= HC_REPL_NR)
		goto err;
	if (sb->compat & HC_FEAT_COMPAT_TUNABLES)
		hc_sb_decode_cache_tunables(d, c);
	err = "cache set uuid is nil";
	if (hc_uuid_is_nil(sb->set_uuid))
		goto err;

	/* HC_BUCKET_MIN >= HC_BLOCK_MAX: a valid bucket is whole blocks. */
	err = "bucket size not a power of two";
	if (!hc_is_pow2(c->bucket_size))
		goto err;
	err = "bucket size below 8 KiB";
	if (c->bucket_size < HC_BUCKET_MIN)
		goto err;
	err = "bucket size above 128 MiB";
	if (c->bucket_size > HC_BUCKET_MAX)
		goto err;

	bucket_sectors = c->bucket_size >> HC_SECTOR_SHIFT;
	err = "cache larger than pointers can address";
	if (c->nbuckets > (HC_PTR_OFFSET_MAX + 1) / bucket_sectors)
		goto err;
	err = "first bucket past the last bucket";
	if (c->first_bucket >= c->nbuckets)
		goto err;
	/* Both factors are now bounded: no overflow. */
	err = "first bucket overlaps the superblock";
	if (c->first_bucket * c->bucket_size < HC_SB_END)
		goto err;

	err = "fewer than 8 journal buckets";
	if (c->journal_buckets < HC_JOURNAL_MIN)
		goto err;
	err = "more than 256 journal buckets";
	if (c->journal_buckets > HC_JOURNAL_MAX)
		goto err;
	err = "journal overlaps the superblock";
	if (c->journal_start < c->first_bucket)
		goto err;
	err = "journal past the last bucket";
	if (c->journal_start >= c->nbuckets ||
	    c->journal_buckets > c->nbuckets - c->journal_start)
		goto err;

	/* first_bucket <= journal_start <= nbuckets - journal_buckets */
	usable = c->nbuckets - c->first_bucket - c->journal_buckets;
	err = hc_sb_check_csum(sb);
	if (err)
		goto err;
	err = c->csum_buckets ?
	      "fewer than 128 buckets outside the journal and checksum table" :
	      "fewer than 128 buckets outside the journal";
	if (usable < HC_MIN_BUCKETS || usable - HC_MIN_BUCKETS < c->csum_buckets)
		goto err;
	return NULL;
err:
	return err;
}

static const char *hc_sb_decode_backing(const struct hc_sb_disk *d,
					struct hc_sb *sb, u64 flags)
{
	struct hc_sb_backing *b = &sb->backing;
	const char *err;

	b->data_offset = le64_to_cpu(d->backing.data_offset);
	b->inval_gen = le32_to_cpu(d->backing.inval_gen);
	b->cache_mode = flags & HC_BDEV_MODE_MASK;
	b->state = (flags & HC_BDEV_STATE_MASK) >> HC_BDEV_STATE_SHIFT;

	err = "unknown backing flag bits";
	if (flags & ~HC_BDEV_FLAGS_KNOWN)
		goto err;
	err = "unknown cache mode";
	if (b->cache_mode >= HC_MODE_NR)
		goto err;
	if (sb->compat & HC_FEAT_COMPAT_TUNABLES)
		hc_sb_decode_backing_tunables(d, b);
	err = "dirty backing device without a cache set";
	if (b->state == HC_STATE_DIRTY && hc_uuid_is_nil(sb->set_uuid))
		goto err;
	err = "data offset below 16 sectors";
	if (b->data_offset < HC_DATA_OFFSET_MIN)
		goto err;
	err = "data offset not a multiple of the block size";
	if (b->data_offset % (sb->block_size >> HC_SECTOR_SHIFT))
		goto err;
	return NULL;
err:
	return err;
}

/**
 * hc_sb_decode() - validate a superblock and convert it to memory form
 * @buf: the bytes read from HC_SB_OFFSET
 * @len: how many; fewer than HC_SB_SIZE is an error
 * @sb: receives the superblock; partly filled and not to be used on error
 * @why: if not NULL, receives NULL, or a constant string naming the first
 *	 rule broken
 *
 * Unknown ro_compat bits are not an error: they set @sb->read_only.
 *
 * Return: 0 if valid; -EINVAL if not an hcache superblock (too short, bad
 * magic); -EBADMSG on a checksum mismatch; -EOPNOTSUPP for a newer version,
 * incompat features this code lacks, or the retired draft bit
 * (HC_FEAT_INCOMPAT_RETIRED_DRAFT, checked first so its message says what
 * to do); -EUCLEAN if a field breaks a rule.
 */
int hc_sb_decode(const void *buf, size_t len, struct hc_sb *sb,
		 const char **why)
{
	const struct hc_sb_disk *d = buf;
	const char *err;
	const u8 *nul;
	u64 flags;
	size_t i;
	int ret;

	memset(sb, 0, sizeof(*sb));

	/* Not an hcache superblock at all. */
	ret = -EINVAL;
	err = "superblock shorter than 4096 bytes";
	if (len < HC_SB_SIZE)
		goto err;
	err = "bad magic";
	if (le64_to_cpu(d->magic) != HC_SB_MAGIC)
		goto err;

	ret = -EBADMSG;
	err = "checksum mismatch";
	if (le32_to_cpu(d->csum) != hc_sb_csum(d))
		goto err;

	ret = -EUCLEAN;
	sb->version = le32_to_cpu(d->version);
	err = "version 0 is invalid";
	if (!sb->version)
		goto err;
	ret = -EOPNOTSUPP;
	err = "version newer than this code supports";
	if (sb->version > HC_SB_VERSION)
		goto err;
	ret = -EUCLEAN;
	err = "superblock sector field is not 8";
	if (le64_to_cpu(d->sb_sector) != HC_SB_SECTOR)
		goto err;

	sb->compat = le64_to_cpu(d->compat);
	sb->ro_compat = le64_to_cpu(d->ro_compat);
	sb->incompat = le64_to_cpu(d->incompat);
	ret = -EOPNOTSUPP;
	/* Before the unknown-bit rule, which would also match it. */
	err = HC_SB_WHY_RETIRED_DRAFT;
	if (sb->incompat & HC_FEAT_INCOMPAT_RETIRED_DRAFT)
		goto err;
	err = "unknown incompat feature bits";
	if (sb->incompat & ~HC_FEAT_INCOMPAT_SUPP)
		goto err;
	/* Unknown compat bits are ignored; unknown ro_compat: read only. */
	sb->read_only = sb->ro_compat & ~HC_FEAT_RO_COMPAT_SUPP;

	/* From here on, every broken rule is a corrupt field. */
	ret = -EUCLEAN;
	memcpy(sb->dev_uuid, d->dev_uuid, HC_UUID_SIZE);
	memcpy(sb->set_uuid, d->set_uuid, HC_UUID_SIZE);
	err = "device uuid is nil";
	if (hc_uuid_is_nil(sb->dev_uuid))
		goto err;

	nul = memchr(d->label, 0, HC_LABEL_SIZE);
	err = "label not NUL-terminated";
	if (!nul)
		goto err;
	err = "label not NUL-padded";
	for (i = nul - d->label; i < HC_LABEL_SIZE; i++)
		if (d->label[i])
			goto err;
	memcpy(sb->label, d->label, HC_LABEL_SIZE);

	sb->seq = le64_to_cpu(d->seq);
	sb->block_size = le32_to_cpu(d->block_size);
	err = "block size not a power of two";
	if (!hc_is_pow2(sb->block_size))
		goto err;
	err = "block size below 512 bytes";
	if (sb->block_size < HC_BLOCK_MIN)
		goto err;
	err = "block size above 4096 bytes";
	if (sb->block_size > HC_BLOCK_MAX)
		goto err;

	sb->kind = le32_to_cpu(d->kind);
	flags = le64_to_cpu(d->flags);
	switch (sb->kind) {
	case HC_KIND_CACHE:
		err = hc_sb_decode_cache(d, sb, flags);
		break;
	case HC_KIND_BACKING:
		err = hc_sb_decode_backing(d, sb, flags);
		break;
	default:
		err = "unknown device kind";
		break;
	}
	if (err)
		goto err;
	if (why)
		*why = NULL;
	return 0;
err:
	if (why)
		*why = err;
	return ret;
}
