// SPDX-License-Identifier: GPL-2.0
/*
 * test_sb: the superblock in drivers/md/hcache/sb.c: byte layout, checksum
 * convention, encode/decode round trips, and one corrupt superblock per
 * validation rule with the exact error expected, and the label rule
 * (hc_label_check()) shared by make-hcache and the module. It also reads
 * sb.c and fails if any error string there is missing from the tables, so
 * a new rule cannot land untested.
 */

#include <stdlib.h>

#include "sb.h"
#include "csum_table.h"
#include "testlib.h"

enum base { CACHE, BACKING };

static const u8 set_uuid[HC_UUID_SIZE] = {
	0x5e, 0x7a, 0x11, 0x2b, 0x90, 0x43, 0x4c, 0x1d,
	0x8e, 0x0f, 0x6a, 0x33, 0xd2, 0x71, 0xa4, 0x09 };
static const u8 dev_uuid[HC_UUID_SIZE] = {
	0xd3, 0x01, 0x9c, 0x4e, 0x27, 0x8b, 0x46, 0xf0,
	0xa1, 0x5d, 0x3c, 0x62, 0x0e, 0x94, 0xb7, 0x18 };

static void base_sb(enum base base, struct hc_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version = HC_SB_VERSION;
	memcpy(sb->dev_uuid, dev_uuid, HC_UUID_SIZE);
	memcpy(sb->set_uuid, set_uuid, HC_UUID_SIZE);
	strcpy(sb->label, "test");
	sb->seq = 7;
	sb->block_size = 512;
	if (base == CACHE) {
		sb->kind = HC_KIND_CACHE;
		sb->cache.nbuckets = 1000;
		sb->cache.bucket_size = 512 << 10;
		sb->cache.first_bucket = 1;
		sb->cache.journal_start = 1;
		sb->cache.journal_buckets = 8;
		sb->cache.replacement = HC_REPL_FIFO;
		sb->cache.discard = true;
		sb->cache.clean = true;
	} else {
		sb->kind = HC_KIND_BACKING;
		sb->backing.data_offset = 2048;
		sb->backing.inval_gen = 3;
		sb->backing.cache_mode = HC_MODE_WRITEBACK;
		sb->backing.state = HC_STATE_CLEAN;
	}
}

static bool sb_equal(const struct hc_sb *a, const struct hc_sb *b)
{
	return a->version == b->version && a->compat == b->compat &&
	       a->ro_compat == b->ro_compat && a->incompat == b->incompat &&
	       !memcmp(a->dev_uuid, b->dev_uuid, HC_UUID_SIZE) &&
	       !memcmp(a->set_uuid, b->set_uuid, HC_UUID_SIZE) &&
	       !strcmp(a->label, b->label) && a->seq == b->seq &&
	       a->kind == b->kind && a->block_size == b->block_size &&
	       (a->kind != HC_KIND_CACHE ||
		(a->cache.nbuckets == b->cache.nbuckets &&
		 a->cache.first_bucket == b->cache.first_bucket &&
		 a->cache.journal_start == b->cache.journal_start &&
		 a->cache.bucket_size == b->cache.bucket_size &&
		 a->cache.journal_buckets == b->cache.journal_buckets &&
		 a->cache.replacement == b->cache.replacement &&
		 a->cache.discard == b->cache.discard &&
		 a->cache.clean == b->cache.clean &&
		 a->cache.tunables == b->cache.tunables &&
		 a->cache.io_error_limit == b->cache.io_error_limit &&
		 a->cache.io_error_halflife == b->cache.io_error_halflife &&
		 a->cache.clean_journal_bucket ==
			b->cache.clean_journal_bucket &&
		 a->cache.clean_journal_seq == b->cache.clean_journal_seq &&
		 a->cache.clean_journal_offset ==
			b->cache.clean_journal_offset &&
		 a->cache.csum_type == b->cache.csum_type &&
		 a->cache.csum_start == b->cache.csum_start &&
		 a->cache.csum_buckets == b->cache.csum_buckets)) &&
	       (a->kind != HC_KIND_BACKING ||
		(a->backing.data_offset == b->backing.data_offset &&
		 a->backing.inval_gen == b->backing.inval_gen &&
		 a->backing.cache_mode == b->backing.cache_mode &&
		 a->backing.state == b->backing.state &&
		 a->backing.tunables == b->backing.tunables &&
		 a->backing.sequential_cutoff == b->backing.sequential_cutoff &&
		 a->backing.writeback_percent == b->backing.writeback_percent &&
		 a->backing.admission_policy == b->backing.admission_policy &&
		 a->backing.stop_when_failed == b->backing.stop_when_failed));
}

static void test_layout(void)
{
	struct hc_sb_disk d, z;
	struct hc_sb sb;

	printf("byte layout and checksum convention\n");
	base_sb(CACHE, &sb);
	hc_sb_encode(&sb, &d);
	CHECK(!memcmp(&d, "hcache-S", 8), "magic bytes are \"hcache-S\"");
	CHECK_EQ_U64(get_le((u8 *)&d + 12, 4), HC_SB_VERSION, "version @12");
	CHECK_EQ_U64(get_le((u8 *)&d + 32, 8), 0, "no incompat bits @32");
	CHECK(!memcmp((u8 *)&d + 40, dev_uuid, 16), "dev uuid @40");
	CHECK(!memcmp((u8 *)&d + 56, set_uuid, 16), "set uuid @56");
	CHECK(!memcmp((u8 *)&d + 72, "test\0\0\0\0", 8), "label @72");
	CHECK_EQ_U64(get_le((u8 *)&d + 104, 8), 7, "seq @104");
	CHECK_EQ_U64(get_le((u8 *)&d + 112, 8), 8, "sb sector @112");
	CHECK_EQ_U64(get_le((u8 *)&d + 120, 8),
		     HC_REPL_FIFO | HC_CACHE_DISCARD | HC_CACHE_CLEAN,
		     "cache flags @120");
	CHECK_EQ_U64(get_le((u8 *)&d + 128, 4), HC_KIND_CACHE, "kind @128");
	CHECK_EQ_U64(get_le((u8 *)&d + 132, 4), 512, "block size @132");
	CHECK_EQ_U64(get_le((u8 *)&d + 136, 8), 1000, "nbuckets @136");
	CHECK_EQ_U64(get_le((u8 *)&d + 144, 8), 1, "first bucket @144");
	CHECK_EQ_U64(get_le((u8 *)&d + 152, 8), 1, "journal start @152");
	CHECK_EQ_U64(get_le((u8 *)&d + 160, 4), 512 << 10, "bucket size @160");
	CHECK_EQ_U64(get_le((u8 *)&d + 164, 4), 8, "journal buckets @164");

	/* Checksum: standard CRC-32C of the 4 KiB with the field as zero. */
	z = d;
	memset(&z.csum, 0, sizeof(z.csum));
	CHECK_EQ_U64(get_le((u8 *)&d + 8, 4), hc_csum(&z, sizeof(z)),
		     "csum @8 is CRC-32C of the block with csum zeroed");
	CHECK_EQ_U64(hc_sb_csum(&d), hc_csum(&z, sizeof(z)),
		     "hc_sb_csum matches");

	base_sb(BACKING, &sb);
	hc_sb_encode(&sb, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 120, 8),
		     HC_MODE_WRITEBACK | (HC_STATE_CLEAN << HC_BDEV_STATE_SHIFT),
		     "backing flags @120");
	CHECK_EQ_U64(get_le((u8 *)&d + 128, 4), HC_KIND_BACKING, "kind @128");
	CHECK_EQ_U64(get_le((u8 *)&d + 136, 8), 2048, "data offset @136");
	CHECK_EQ_U64(get_le((u8 *)&d + 144, 4), 3, "inval gen @144");
	CHECK_EQ_U64(get_le((u8 *)&d + 16, 8), 0,
		     "no setting kept: compat 0, as before tunables existed");

	printf("tunables: where they live, and the compat bit\n");
	base_sb(BACKING, &sb);
	sb.backing.tunables = HC_BDEV_TUNE_KNOWN;
	sb.backing.sequential_cutoff = 0x1122334455ULL;
	sb.backing.writeback_percent = 40;
	sb.backing.admission_policy = HC_ADMIT_FIRST_ACCESS;
	sb.backing.stop_when_failed = HC_STOP_ALWAYS;
	hc_sb_encode(&sb, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 16, 8), HC_FEAT_COMPAT_TUNABLES,
		     "compat @16 says tunables");
	CHECK_EQ_U64(get_le((u8 *)&d + 148, 4), 0xf, "backing tunables @148");
	CHECK_EQ_U64(get_le((u8 *)&d + 152, 8), 0x1122334455ULL,
		     "sequential_cutoff @152");
	CHECK_EQ_U64(get_le((u8 *)&d + 160, 4), 40, "writeback_percent @160");
	CHECK_EQ_U64(get_le((u8 *)&d + 164, 1), HC_ADMIT_FIRST_ACCESS,
		     "admission_policy @164");
	CHECK_EQ_U64(get_le((u8 *)&d + 165, 1), HC_STOP_ALWAYS,
		     "stop_when_failed @165");
	base_sb(CACHE, &sb);
	sb.cache.tunables = HC_CACHE_TUNE_KNOWN;
	sb.cache.io_error_limit = 7;
	sb.cache.io_error_halflife = 3600;
	hc_sb_encode(&sb, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 16, 8), HC_FEAT_COMPAT_TUNABLES,
		     "cache compat @16 says tunables");
	CHECK_EQ_U64(get_le((u8 *)&d + 168, 4), 3, "cache tunables @168");
	CHECK_EQ_U64(get_le((u8 *)&d + 172, 4), 7, "io_error_limit @172");
	CHECK_EQ_U64(get_le((u8 *)&d + 176, 4), 3600, "io_error_halflife @176");
	/* A field without its bit is not written, and not read. */
	sb.cache.tunables = HC_CACHE_TUNE_IO_ERROR_LIMIT;
	hc_sb_encode(&sb, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 176, 4), 0, "halflife without its bit");
	put_le((u8 *)&d + 176, 4, 99);
	d.csum = cpu_to_le32(hc_sb_csum(&d));
	CHECK(!hc_sb_decode(&d, sizeof(d), &sb, NULL) &&
	      sb.cache.io_error_halflife == 0 && sb.cache.io_error_limit == 7,
	      "halflife read without its bit");
	/* Without the compat bit, code that knows it reads no setting. */
	put_le((u8 *)&d + 16, 8, 0);
	d.csum = cpu_to_le32(hc_sb_csum(&d));
	CHECK(!hc_sb_decode(&d, sizeof(d), &sb, NULL) && !sb.cache.tunables &&
	      !sb.cache.io_error_limit, "tunables read without the compat bit");

	printf("the newest journal entry, named with EMPTY_MARKS only\n");
	base_sb(CACHE, &sb);
	sb.cache.clean_journal_bucket = 17;
	sb.cache.clean_journal_seq = 0x123456789aULL;
	sb.cache.clean_journal_offset = 4096 * 3;
	hc_sb_encode(&sb, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 180, 8) | get_le((u8 *)&d + 188, 8), 0,
		     "no entry named without the bit");
	CHECK(!hc_sb_decode(&d, sizeof(d), &sb, NULL) &&
	      !sb.cache.clean_journal_bucket && !sb.cache.clean_journal_seq &&
	      !sb.cache.clean_journal_offset, "entry read without the bit");
	sb.incompat = HC_FEAT_INCOMPAT_EMPTY_MARKS;
	sb.cache.clean_journal_bucket = 17;
	sb.cache.clean_journal_seq = 0x123456789aULL;
	sb.cache.clean_journal_offset = 4096 * 3;
	hc_sb_encode(&sb, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 32, 8), HC_FEAT_INCOMPAT_EMPTY_MARKS,
		     "incompat @32");
	CHECK_EQ_U64(get_le((u8 *)&d + 180, 4), 17, "clean_journal_bucket @180");
	CHECK_EQ_U64(get_le((u8 *)&d + 184, 8), 0x123456789aULL,
		     "clean_journal_seq @184");
	CHECK_EQ_U64(get_le((u8 *)&d + 192, 4), 4096 * 3,
		     "clean_journal_offset @192");
	memset(&sb, 0, sizeof(sb));
	CHECK(!hc_sb_decode(&d, sizeof(d), &sb, NULL) &&
	      sb.cache.clean_journal_bucket == 17 &&
	      sb.cache.clean_journal_seq == 0x123456789aULL &&
	      sb.cache.clean_journal_offset == 4096 * 3,
	      "entry not read back with the bit");

	printf("incompat bit 0 is the retired draft bit, not supported\n");
	CHECK_EQ_U64(HC_FEAT_INCOMPAT_RETIRED_DRAFT, 1, "retired draft bit");
	CHECK(!(HC_FEAT_INCOMPAT_SUPP & HC_FEAT_INCOMPAT_RETIRED_DRAFT),
	      "retired draft bit still supported");

	printf("set magic and minimum cache size\n");
	CHECK_EQ_U64(hc_set_magic(set_uuid),
		     get_le(set_uuid, 8) ^ get_le(set_uuid + 8, 8),
		     "set magic is the xor of the uuid halves");
	CHECK_EQ_U64(hc_cache_first_bucket(512 << 10), 1, "first bucket 512k");
	CHECK_EQ_U64(hc_cache_first_bucket(8 << 10), 1, "first bucket 8k");
	CHECK_EQ_U64(hc_cache_min_buckets(512 << 10), 137, "min buckets 512k");
}

static void test_round_trip(void)
{
	static const u32 repl[] = { HC_REPL_LRU, HC_REPL_FIFO, HC_REPL_RANDOM };
	struct hc_sb_disk d, d2;
	struct hc_sb in, out;
	const char *err;
	unsigned int i;

	printf("round trips: encode, decode, compare, re-encode\n");
	for (i = 0; i < 3 * HC_MODE_NR * 4; i++) {
		base_sb(i & 1 ? BACKING : CACHE, &in);
		in.seq = 0x0123456789abcdefULL + i;
		in.compat = 1ULL << (i % 64) & ~HC_FEAT_COMPAT_TUNABLES;
		in.block_size = 512U << (i % 4);
		if (in.kind == HC_KIND_CACHE) {
			in.cache.replacement = repl[i % 3];
			in.cache.discard = i & 2;
			in.cache.clean = i & 4;
			in.cache.bucket_size = (8U << 10) << (i % 15);
			in.cache.nbuckets = 137 + i * 1000003ULL;
			in.cache.journal_buckets = 8 + i % 249;
			in.cache.nbuckets += in.cache.journal_buckets;
			in.cache.tunables = i % 4;
			if (i & 1)
				in.cache.io_error_limit = i * 7;
			if (i & 2)
				in.cache.io_error_halflife = i * 1000;
			if (in.cache.tunables)
				in.compat |= HC_FEAT_COMPAT_TUNABLES;
			if (i % 3 == 0) {
				in.incompat |= HC_FEAT_INCOMPAT_DATA_CSUM;
				in.cache.csum_type = HC_CSUM_CRC32C;
				in.cache.csum_start = in.cache.journal_start +
						      in.cache.journal_buckets;
				in.cache.csum_buckets = hc_csum_table_buckets(
					in.cache.nbuckets,
					in.cache.bucket_size);
				in.cache.nbuckets += in.cache.csum_buckets;
				/* The table covers the buckets it adds too. */
				in.cache.csum_buckets = hc_csum_table_buckets(
					in.cache.nbuckets,
					in.cache.bucket_size);
			}
		} else {
			in.backing.cache_mode = i % HC_MODE_NR;
			in.backing.state = (i / 2) % 4;
			in.backing.data_offset = 16 * (i + 1) * 8;
			in.backing.inval_gen = ~i;
			in.backing.tunables = (i / 2) % 16;
			if (in.backing.tunables & HC_BDEV_TUNE_SEQUENTIAL_CUTOFF)
				in.backing.sequential_cutoff = (u64)i << 33;
			if (in.backing.tunables & HC_BDEV_TUNE_WRITEBACK_PERCENT)
				in.backing.writeback_percent = i % 51;
			if (in.backing.tunables & HC_BDEV_TUNE_ADMISSION_POLICY)
				in.backing.admission_policy = (i / 4) % 2;
			if (in.backing.tunables & HC_BDEV_TUNE_STOP_WHEN_FAILED)
				in.backing.stop_when_failed = (i / 8) % 2;
			if (in.backing.tunables)
				in.compat |= HC_FEAT_COMPAT_TUNABLES;
		}
		snprintf(in.label, sizeof(in.label), "label %u", i);
		hc_sb_encode(&in, &d);
		hc_sb_decode(&d, sizeof(d), &out, &err);
		CHECK(!err, "round trip %u: %s", i, err);
		CHECK(sb_equal(&in, &out), "round trip %u: fields differ", i);
		hc_sb_encode(&out, &d2);
		CHECK(!memcmp(&d, &d2, sizeof(d)), "re-encode %u differs", i);
	}

	/* A 31-byte label survives; encode truncates a longer one. */
	base_sb(CACHE, &in);
	memset(in.label, 'x', HC_LABEL_SIZE - 1);
	hc_sb_encode(&in, &d);
	hc_sb_decode(&d, sizeof(d), &out, &err);
	CHECK(!err && strlen(out.label) == 31, "31-byte label: %s", err);
}

/* ---- One corrupt superblock per rule -------------------------------------- */

struct corrupt {
	const char *what;
	enum base base;
	size_t off;		/* field to overwrite, little-endian */
	unsigned int width;	/* 0: no field */
	u64 val;
	void (*mutate)(struct hc_sb_disk *d);
	bool keep_csum;		/* do not fix the checksum afterwards */
	size_t len;		/* bytes passed to decode; 0: HC_SB_SIZE */
	const char *want;	/* NULL: must be valid */
};

/*
 * Incompat bit 0, set by development versions; sb.c keeps this message in
 * a #define (too long for an `err = "..."` line), so the rule scanner does
 * not see it: these table entries are its test.
 */
#define RETIRED_DRAFT	"formatted by a development version of hcache " \
			"(draft cache-set format); reformat it with make-hcache"

#define F(field)	offsetof(struct hc_sb_disk, field), \
			sizeof(((struct hc_sb_disk *)0)->field)

static void nil_dev_uuid(struct hc_sb_disk *d)
{
	memset(d->dev_uuid, 0, HC_UUID_SIZE);
}

static void nil_set_uuid(struct hc_sb_disk *d)
{
	memset(d->set_uuid, 0, HC_UUID_SIZE);
}

static void label_full(struct hc_sb_disk *d)
{
	memset(d->label, 'a', HC_LABEL_SIZE);
}

static void label_garbage(struct hc_sb_disk *d)
{
	memcpy(d->label, "ab\0c", 4);
}

static void label_last_byte(struct hc_sb_disk *d)
{
	d->label[HC_LABEL_SIZE - 1] = 'z';
}

static void label_empty(struct hc_sb_disk *d)
{
	memset(d->label, 0, HC_LABEL_SIZE);
}

static void label_31(struct hc_sb_disk *d)
{
	memset(d->label, 'a', HC_LABEL_SIZE - 1);
}

static void dirty_without_set(struct hc_sb_disk *d)
{
	nil_set_uuid(d);
	d->flags = cpu_to_le64((u64)HC_STATE_DIRTY << HC_BDEV_STATE_SHIFT);
}

static void stale_without_set(struct hc_sb_disk *d)
{
	nil_set_uuid(d);
	d->flags = cpu_to_le64((u64)HC_STATE_STALE << HC_BDEV_STATE_SHIFT);
}

static void block4k_offset20(struct hc_sb_disk *d)
{
	d->block_size = cpu_to_le32(4096);
	d->backing.data_offset = cpu_to_le64(20);
}

static void block4k_offset16(struct hc_sb_disk *d)
{
	d->block_size = cpu_to_le32(4096);
	d->backing.data_offset = cpu_to_le64(16);
}

static void bucket8k_first0(struct hc_sb_disk *d)
{
	d->cache.bucket_size = cpu_to_le32(8192);
	d->cache.first_bucket = cpu_to_le64(0);
	d->cache.journal_start = cpu_to_le64(0);
}

static void bucket8k_first1(struct hc_sb_disk *d)
{
	d->cache.bucket_size = cpu_to_le32(8192);
}

static void bucket_max_addressable(struct hc_sb_disk *d)
{
	/* 128 MiB buckets: 2^48 sectors are exactly 2^30 buckets. */
	d->cache.bucket_size = cpu_to_le32(HC_BUCKET_MAX);
	d->cache.nbuckets = cpu_to_le64(1ULL << 30);
}

static void bucket_max_plus_one(struct hc_sb_disk *d)
{
	d->cache.bucket_size = cpu_to_le32(HC_BUCKET_MAX);
	d->cache.nbuckets = cpu_to_le64((1ULL << 30) + 1);
}

static void journal_at_end(struct hc_sb_disk *d)
{
	d->cache.journal_start = cpu_to_le64(1000 - 8);
}

static void journal_wraps(struct hc_sb_disk *d)
{
	d->cache.journal_start = cpu_to_le64(~0ULL - 3);
}

/*
 * A checksum table after the base cache's journal: 1000 buckets of 512 KiB
 * are 128000 chunks, 126 blocks, 2 buckets of two slots each.
 */
static void csum_on(struct hc_sb_disk *d)
{
	d->incompat = cpu_to_le64(HC_FEAT_INCOMPAT_DATA_CSUM);
	d->cache.csum_type = cpu_to_le32(HC_CSUM_CRC32C);
	d->cache.csum_start = cpu_to_le64(9);
	d->cache.csum_buckets = cpu_to_le32(2);
}

static void csum_type_2(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_type = cpu_to_le32(2);
}

static void csum_type_0(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_type = 0;
}

static void csum_3_buckets(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_buckets = cpu_to_le32(3);
}

static void csum_at_0(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_start = 0;
}

static void csum_at_end(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_start = cpu_to_le64(999);
}

static void csum_last_2(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_start = cpu_to_le64(998);
}

static void csum_wraps(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_start = cpu_to_le64(~0ULL - 1);
}

static void csum_in_journal(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_start = cpu_to_le64(8);
}

static void csum_before_journal(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.csum_start = cpu_to_le64(1);
	d->cache.journal_start = cpu_to_le64(3);
}

/* 137 buckets: 128 outside the journal, one of them the table's. */
static void csum_137(struct hc_sb_disk *d)
{
	csum_on(d);
	d->cache.nbuckets = cpu_to_le64(137);
	d->cache.csum_buckets = cpu_to_le32(1);
}

static void csum_138(struct hc_sb_disk *d)
{
	csum_137(d);
	d->cache.nbuckets = cpu_to_le64(138);
}

/* Settings kept (HC_FEAT_COMPAT_TUNABLES) with one of them set to @v. */
static void cache_tune(struct hc_sb_disk *d, u32 bit, u32 v)
{
	d->compat = cpu_to_le64(HC_FEAT_COMPAT_TUNABLES);
	d->cache.tunables = cpu_to_le32(bit);
	d->cache.io_error_halflife = cpu_to_le32(v);
}

static void halflife_over(struct hc_sb_disk *d)
{
	cache_tune(d, HC_CACHE_TUNE_IO_ERROR_HALFLIFE,
		   HC_IO_ERROR_HALFLIFE_MAX + 1);
}

static void halflife_max(struct hc_sb_disk *d)
{
	cache_tune(d, HC_CACHE_TUNE_IO_ERROR_HALFLIFE, HC_IO_ERROR_HALFLIFE_MAX);
}

static void halflife_over_no_bit(struct hc_sb_disk *d)
{
	cache_tune(d, HC_CACHE_TUNE_IO_ERROR_LIMIT,
		   HC_IO_ERROR_HALFLIFE_MAX + 1);
}

static void halflife_over_no_compat(struct hc_sb_disk *d)
{
	halflife_over(d);
	d->compat = 0;
}

static void backing_tune(struct hc_sb_disk *d, u32 bits)
{
	d->compat = cpu_to_le64(HC_FEAT_COMPAT_TUNABLES);
	d->backing.tunables = cpu_to_le32(bits);
}

static void percent_51(struct hc_sb_disk *d)
{
	backing_tune(d, HC_BDEV_TUNE_WRITEBACK_PERCENT);
	d->backing.writeback_percent = cpu_to_le32(51);
}

static void percent_50(struct hc_sb_disk *d)
{
	backing_tune(d, HC_BDEV_TUNE_WRITEBACK_PERCENT);
	d->backing.writeback_percent = cpu_to_le32(50);
}

static void admission_2(struct hc_sb_disk *d)
{
	backing_tune(d, HC_BDEV_TUNE_ADMISSION_POLICY);
	d->backing.admission_policy = HC_ADMIT_NR;
}

static void stop_2(struct hc_sb_disk *d)
{
	backing_tune(d, HC_BDEV_TUNE_STOP_WHEN_FAILED);
	d->backing.stop_when_failed = HC_STOP_NR;
}

static void unknown_tunables(struct hc_sb_disk *d)
{
	/* Bits from a newer version, their fields unknown: ignored. */
	backing_tune(d, ~HC_BDEV_TUNE_KNOWN);
	d->backing.writeback_percent = cpu_to_le32(99);
}

static const struct corrupt table[] = {
	/* Common rules, in the order sb.c checks them. */
	{ "4095 bytes", CACHE, .len = HC_SB_SIZE - 1,
	  .want = "superblock shorter than 4096 bytes" },
	{ "zero magic", CACHE, F(magic), 0, .want = "bad magic" },
	{ "bcache-like magic", BACKING, F(magic), 0xca451a4ef67385c6ULL,
	  .want = "bad magic" },
	{ "flipped reserved byte", CACHE, offsetof(struct hc_sb_disk,
	  reserved) + 100, 1, 1, .keep_csum = true,
	  .want = "checksum mismatch" },
	{ "flipped last byte", BACKING, HC_SB_SIZE - 1, 1, 0x80,
	  .keep_csum = true, .want = "checksum mismatch" },
	{ "csum field zero", CACHE, F(csum), 0, .keep_csum = true,
	  .want = "checksum mismatch" },
	{ "version 0", CACHE, F(version), 0, .want = "version 0 is invalid" },
	{ "version 2", BACKING, F(version), 2,
	  .want = "version newer than this code supports" },
	{ "sb sector 0", CACHE, F(sb_sector), 0,
	  .want = "superblock sector field is not 8" },
	{ "sb sector 16", BACKING, F(sb_sector), 16,
	  .want = "superblock sector field is not 8" },
	{ "retired draft bit, cache", CACHE, F(incompat),
	  HC_FEAT_INCOMPAT_RETIRED_DRAFT, .want = RETIRED_DRAFT },
	{ "retired draft bit, backing", BACKING, F(incompat),
	  HC_FEAT_INCOMPAT_RETIRED_DRAFT, .want = RETIRED_DRAFT },
	{ "retired draft bit and bit 63", CACHE, F(incompat),
	  HC_FEAT_INCOMPAT_RETIRED_DRAFT | 1ULL << 63, .want = RETIRED_DRAFT },
	{ "retired draft bit, corrupt field", CACHE, F(incompat),
	  HC_FEAT_INCOMPAT_RETIRED_DRAFT, .mutate = nil_dev_uuid,
	  .want = RETIRED_DRAFT },
	{ "incompat bit 1: empty marks", CACHE, F(incompat),
	  HC_FEAT_INCOMPAT_EMPTY_MARKS, .want = NULL },
	{ "incompat bit 3", CACHE, F(incompat), 8,
	  .want = "unknown incompat feature bits" },
	{ "incompat bit 63", BACKING, F(incompat), 1ULL << 63,
	  .want = "unknown incompat feature bits" },
	{ "nil dev uuid", CACHE, .mutate = nil_dev_uuid,
	  .want = "device uuid is nil" },
	{ "32-byte label", CACHE, .mutate = label_full,
	  .want = "label not NUL-terminated" },
	{ "label byte after NUL", BACKING, .mutate = label_garbage,
	  .want = "label not NUL-padded" },
	{ "label last byte set", CACHE, .mutate = label_last_byte,
	  .want = "label not NUL-padded" },
	{ "block size 0", CACHE, F(block_size), 0,
	  .want = "block size not a power of two" },
	{ "block size 1536", BACKING, F(block_size), 1536,
	  .want = "block size not a power of two" },
	{ "block size 256", CACHE, F(block_size), 256,
	  .want = "block size below 512 bytes" },
	{ "block size 8192", BACKING, F(block_size), 8192,
	  .want = "block size above 4096 bytes" },
	{ "kind 0", CACHE, F(kind), 0, .want = "unknown device kind" },
	{ "kind 3", BACKING, F(kind), 3, .want = "unknown device kind" },

	/* Cache device rules. */
	{ "cache flag bit 6", CACHE, F(flags), 1 << 6,
	  .want = "unknown cache flag bits" },
	{ "cache flag bit 63", CACHE, F(flags), 1ULL << 63,
	  .want = "unknown cache flag bits" },
	{ "replacement 3", CACHE, F(flags), 3,
	  .want = "unknown replacement policy" },
	{ "replacement 15", CACHE, F(flags), 15 | HC_CACHE_CLEAN,
	  .want = "unknown replacement policy" },
	{ "cache without set", CACHE, .mutate = nil_set_uuid,
	  .want = "cache set uuid is nil" },
	{ "bucket size 0", CACHE, F(cache.bucket_size), 0,
	  .want = "bucket size not a power of two" },
	{ "bucket size 192k", CACHE, F(cache.bucket_size), 192 << 10,
	  .want = "bucket size not a power of two" },
	{ "bucket size 4k", CACHE, F(cache.bucket_size), 4096,
	  .want = "bucket size below 8 KiB" },
	{ "bucket size 256M", CACHE, F(cache.bucket_size), 256 << 20,
	  .want = "bucket size above 128 MiB" },
	{ "nbuckets 2^38 + 1 of 512k", CACHE, F(cache.nbuckets),
	  (1ULL << 38) + 1, .want = "cache larger than pointers can address" },
	{ "nbuckets ~0", CACHE, F(cache.nbuckets), ~0ULL,
	  .want = "cache larger than pointers can address" },
	{ "2^30 + 1 buckets of 128M", CACHE, .mutate = bucket_max_plus_one,
	  .want = "cache larger than pointers can address" },
	{ "first bucket = nbuckets", CACHE, F(cache.first_bucket), 1000,
	  .want = "first bucket past the last bucket" },
	{ "first bucket ~0", CACHE, F(cache.first_bucket), ~0ULL,
	  .want = "first bucket past the last bucket" },
	{ "first bucket 0", CACHE, F(cache.first_bucket), 0,
	  .want = "first bucket overlaps the superblock" },
	{ "8k buckets, first bucket 0", CACHE, .mutate = bucket8k_first0,
	  .want = "first bucket overlaps the superblock" },
	{ "7 journal buckets", CACHE, F(cache.journal_buckets), 7,
	  .want = "fewer than 8 journal buckets" },
	{ "0 journal buckets", CACHE, F(cache.journal_buckets), 0,
	  .want = "fewer than 8 journal buckets" },
	{ "257 journal buckets", CACHE, F(cache.journal_buckets), 257,
	  .want = "more than 256 journal buckets" },
	{ "journal at bucket 0", CACHE, F(cache.journal_start), 0,
	  .want = "journal overlaps the superblock" },
	{ "journal one past the end", CACHE, F(cache.journal_start), 993,
	  .want = "journal past the last bucket" },
	{ "journal start at nbuckets", CACHE, F(cache.journal_start), 1000,
	  .want = "journal past the last bucket" },
	{ "journal start near 2^64", CACHE, .mutate = journal_wraps,
	  .want = "journal past the last bucket" },
	{ "136 buckets", CACHE, F(cache.nbuckets), 136,
	  .want = "fewer than 128 buckets outside the journal" },

	/* The checksum table (incompat bit 2). */
	{ "checksum table", CACHE, .mutate = csum_on, .want = NULL },
	{ "checksum table in the last 2", CACHE, .mutate = csum_last_2,
	  .want = NULL },
	{ "checksum table before journal", CACHE,
	  .mutate = csum_before_journal, .want = NULL },
	{ "checksum start, no bit", CACHE, F(cache.csum_start), 9,
	  .want = "checksum table without its feature bit" },
	{ "checksum type, no bit", CACHE, F(cache.csum_type), 1,
	  .want = "checksum table without its feature bit" },
	{ "checksum buckets, no bit", CACHE, F(cache.csum_buckets), 2,
	  .want = "checksum table without its feature bit" },
	{ "checksum type 2", CACHE, .mutate = csum_type_2,
	  .want = "unknown data checksum type" },
	{ "checksum type 0 with the bit", CACHE, .mutate = csum_type_0,
	  .want = "unknown data checksum type" },
	{ "checksum table of 3 buckets", CACHE, .mutate = csum_3_buckets,
	  .want = "checksum table size does not match the device" },
	{ "checksum table at bucket 0", CACHE, .mutate = csum_at_0,
	  .want = "checksum table overlaps the superblock" },
	{ "checksum table at 999 of 1000", CACHE, .mutate = csum_at_end,
	  .want = "checksum table past the last bucket" },
	{ "checksum start near 2^64", CACHE, .mutate = csum_wraps,
	  .want = "checksum table past the last bucket" },
	{ "checksum table in the journal", CACHE, .mutate = csum_in_journal,
	  .want = "checksum table overlaps the journal" },
	{ "137 buckets with a table", CACHE, .mutate = csum_137,
	  .want = "fewer than 128 buckets outside the journal and checksum table" },
	{ "138 buckets with a table", CACHE, .mutate = csum_138, .want = NULL },

	/* Backing device rules. */
	{ "backing flag bit 6", BACKING, F(flags), 1 << 6,
	  .want = "unknown backing flag bits" },
	{ "cache mode 4", BACKING, F(flags), 4,
	  .want = "unknown cache mode" },
	{ "cache mode 15", BACKING, F(flags), 15 | (1 << 4),
	  .want = "unknown cache mode" },
	{ "dirty without a set", BACKING, .mutate = dirty_without_set,
	  .want = "dirty backing device without a cache set" },
	{ "data offset 15", BACKING, F(backing.data_offset), 15,
	  .want = "data offset below 16 sectors" },
	{ "data offset 0", BACKING, F(backing.data_offset), 0,
	  .want = "data offset below 16 sectors" },
	{ "4k blocks, data offset 20", BACKING, .mutate = block4k_offset20,
	  .want = "data offset not a multiple of the block size" },

	/* Valid edge cases. */
	{ "base cache", CACHE, .want = NULL },
	{ "base backing", BACKING, .want = NULL },
	{ "unknown compat bits", CACHE, F(compat), ~0ULL, .want = NULL },
	{ "ro_compat retired csum", BACKING, F(ro_compat),
	  HC_FEAT_RO_COMPAT_RETIRED_CSUM, .want = NULL },
	{ "no incompat bits on a cache", CACHE, F(incompat), 0, .want = NULL },
	{ "31-byte label", CACHE, .mutate = label_31, .want = NULL },
	{ "empty label", BACKING, .mutate = label_empty, .want = NULL },
	{ "block size 4096", CACHE, F(block_size), 4096, .want = NULL },
	{ "137 buckets", CACHE, F(cache.nbuckets), 137, .want = NULL },
	{ "8k buckets, first bucket 1", CACHE,
	  .mutate = bucket8k_first1, .want = NULL },
	{ "2^30 buckets of 128M", CACHE,
	  .mutate = bucket_max_addressable, .want = NULL },
	{ "256 journal buckets", CACHE, F(cache.journal_buckets), 256,
	  .want = NULL },
	{ "journal at the end", CACHE,
	  .mutate = journal_at_end, .want = NULL },
	{ "data offset 16", BACKING, F(backing.data_offset), 16, .want = NULL },
	{ "io_error_halflife 30 days", CACHE, .mutate = halflife_max,
	  .want = NULL },
	{ "halflife over, its bit clear", CACHE,
	  .mutate = halflife_over_no_bit, .want = NULL },
	{ "halflife over, compat bit clear", CACHE,
	  .mutate = halflife_over_no_compat, .want = NULL },
	{ "writeback_percent 50", BACKING, .mutate = percent_50, .want = NULL },
	{ "unknown tunables bits", BACKING, .mutate = unknown_tunables,
	  .want = NULL },
	{ "4k blocks, data offset 16", BACKING,
	  .mutate = block4k_offset16, .want = NULL },
	{ "stale without a set", BACKING,
	  .mutate = stale_without_set, .want = NULL },
	{ "backing without set", BACKING, .mutate = nil_set_uuid, .want = NULL },
};

/*
 * The errno each rule must come with: callers (the module's register path)
 * tell "not hcache" from "damaged" from "too new" by it.
 */
static int want_errno(const char *want)
{
	if (!want)
		return 0;
	if (!strcmp(want, "superblock shorter than 4096 bytes") ||
	    !strcmp(want, "bad magic"))
		return -EINVAL;
	if (!strcmp(want, "checksum mismatch"))
		return -EBADMSG;
	if (!strcmp(want, "version newer than this code supports") ||
	    !strcmp(want, RETIRED_DRAFT) ||
	    !strcmp(want, "unknown incompat feature bits"))
		return -EOPNOTSUPP;
	return -EUCLEAN;
}

static void test_table(void)
{
	struct hc_sb_disk d;
	struct hc_sb sb;
	const char *err;
	size_t i;
	int ret;

	printf("%zu corrupt and edge-case superblocks\n",
	       sizeof(table) / sizeof(table[0]));
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct corrupt *c = &table[i];

		base_sb(c->base, &sb);
		hc_sb_encode(&sb, &d);
		if (c->width)
			put_le((u8 *)&d + c->off, c->width, c->val);
		if (c->mutate)
			c->mutate(&d);
		if (!c->keep_csum)
			d.csum = cpu_to_le32(hc_sb_csum(&d));
		err = "not set";
		ret = hc_sb_decode(&d, c->len ? c->len : sizeof(d), &sb, &err);
		CHECK(ret == want_errno(c->want), "%s: returned %d, want %d",
		      c->what, ret, want_errno(c->want));
		if (c->want)
			CHECK(err && !strcmp(err, c->want),
			      "%s: got \"%s\", want \"%s\"", c->what,
			      err ? err : "(valid)", c->want);
		else
			CHECK(!err, "%s: got \"%s\", want valid", c->what, err);
		printf("  %-32s -> %4d %s\n", c->what, ret, err ? err : "valid");
	}

	printf("kept settings out of range are dropped, not refused\n");
	{
		static void (*const bad[])(struct hc_sb_disk *) = {
			halflife_over, percent_51, admission_2, stop_2,
		};

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			base_sb(i ? BACKING : CACHE, &sb);
			hc_sb_encode(&sb, &d);
			bad[i](&d);
			d.csum = cpu_to_le32(hc_sb_csum(&d));
			ret = hc_sb_decode(&d, sizeof(d), &sb, &err);
			CHECK(!ret && !err && !sb.cache.tunables &&
			      !sb.backing.tunables && !sb.cache.io_error_halflife &&
			      !sb.backing.writeback_percent &&
			      !sb.backing.admission_policy &&
			      !sb.backing.stop_when_failed,
			      "bad setting %zu: ret %d, err %s", i, ret,
			      err ? err : "none");
		}
	}

	printf("read_only follows unknown ro_compat bits\n");
	base_sb(CACHE, &sb);
	sb.ro_compat = 1ULL << 40;
	hc_sb_encode(&sb, &d);
	hc_sb_decode(&d, sizeof(d), &sb, &err);
	CHECK(!err && sb.read_only, "unknown ro_compat: err %s ro %d", err,
	      sb.read_only);
	base_sb(CACHE, &sb);
	sb.compat = 1ULL << 40;
	hc_sb_encode(&sb, &d);
	hc_sb_decode(&d, sizeof(d), &sb, &err);
	CHECK(!err && !sb.read_only, "unknown compat: err %s ro %d", err,
	      sb.read_only);
}

/* hc_label_check(): NULL where the label may be set. */
static const struct {
	const char *label;
	const char *why;
} labels[] = {
	{ "", NULL },
	{ "data disk 1", NULL },
	{ "donn\xc3\xa9" "es", NULL },
	{ "0123456789abcdef0123456789abcde", NULL },	/* 31 bytes */
	{ "0123456789abcdef0123456789abcdef", "label longer than 31 bytes" },
	{ "two\nlines", "label holds a control character" },
	{ "tab\there", "label holds a control character" },
	{ "del\x7f", "label holds a control character" },
	{ "a/b", "label holds a '/'" },
	{ "/", "label holds a '/'" },
};

static void test_labels(void)
{
	size_t i;

	printf("hc_label_check\n");
	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		const char *why = hc_label_check(labels[i].label,
						 strlen(labels[i].label));

		CHECK(why == labels[i].why ||
		      (why && labels[i].why && !strcmp(why, labels[i].why)),
		      "label %zu: got \"%s\", want \"%s\"", i,
		      why ? why : "(valid)",
		      labels[i].why ? labels[i].why : "(valid)");
	}
	/* A NUL inside the given length is a control character too. */
	CHECK(hc_label_check("a\0b", 3) != NULL, "NUL inside the label");
}

/* hc_label_encode(): the name under /dev/hcache/by-label/. */
static const struct {
	const char *label;
	const char *enc;
} encoded[] = {
	{ "", "" },
	{ "db-disk_1", "db-disk_1" },
	{ "#+-.:=@_", "#+-.:=@_" },
	{ "second label", "second\\x20label" },
	{ "back\\slash", "back\\x5cslash" },
	{ "a*b$c'd\"e", "a\\x2ab\\x24c\\x27d\\x22e" },
	{ "donn\xc3\xa9" "es", "donn\xc3\xa9" "es" },		/* é stays */
	{ "\xe2\x82\xac", "\xe2\x82\xac" },			/* € */
	{ "\xf0\x9f\x92\xbe", "\xf0\x9f\x92\xbe" },		/* U+1F4BE */
	{ "\xc3", "\\xc3" },					/* cut short */
	{ "\xc0\xaf", "\\xc0\\xaf" },			/* overlong '/' */
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },		/* overlong */
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },		/* surrogate */
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },	/* > U+10FFFF */
	{ "\xff", "\\xff" },
};

static void test_label_encode(void)
{
	char out[HC_LABEL_ENC_SIZE], label[HC_LABEL_SIZE];
	size_t i;
	int n;

	printf("hc_label_encode\n");
	for (i = 0; i < sizeof(encoded) / sizeof(encoded[0]); i++) {
		n = hc_label_encode(encoded[i].label, out, sizeof(out));
		CHECK(n == (int)strlen(encoded[i].enc) &&
		      !strcmp(out, encoded[i].enc),
		      "label %zu: got \"%s\" (%d), want \"%s\"", i, out, n,
		      encoded[i].enc);
	}
	/* The longest encoding fits HC_LABEL_ENC_SIZE, not a byte less. */
	memset(label, ' ', HC_LABEL_SIZE - 1);
	label[HC_LABEL_SIZE - 1] = 0;
	n = hc_label_encode(label, out, sizeof(out));
	CHECK(n == HC_LABEL_ENC_SIZE - 1, "31 spaces: %d", n);
	n = hc_label_encode(label, out, sizeof(out) - 1);
	CHECK(n == -1 && !out[0], "31 spaces, one byte short: %d \"%s\"", n,
	      out);
}

/* Is @rule the expected error of some table entry? */
static bool rule_tested(const char *rule)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].want && !strcmp(table[i].want, rule))
			return true;
	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (labels[i].why && !strcmp(labels[i].why, rule))
			return true;
	return false;
}

/* Every rule in sb.c must be the want of some table entry. */
static void test_rules_covered(void)
{
	hc_test_rules_covered(HC_SB_C_PATH, 30, rule_tested);
}

int main(void)
{
	test_layout();
	test_round_trip();
	test_table();
	test_labels();
	test_label_encode();
	test_rules_covered();
	return hc_test_done("test_sb");
}
