// SPDX-License-Identifier: GPL-2.0
/*
 * test_csum_table.c: the checksum table's geometry and its blocks
 * (drivers/md/hcache/csum_table.c): sizes against hand-computed values,
 * the byte layout of a block, round trips, and one corrupt block per rule.
 */

#include <stdio.h>
#include <stdlib.h>

#include "csum_table.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define SET_MAGIC	0x1122334455667788ULL

/* 1000 buckets of 512 KiB, as test_sb.c's base cache: 128000 chunks. */
#define NBUCKETS	1000ULL
#define BUCKET		(512U << 10)
#define CHUNKS		(NBUCKETS * (BUCKET / HC_CSUM_CHUNK))

static u32 *crcs(u64 chunks, u32 seed)
{
	u32 *c = calloc(chunks, sizeof(*c));
	u64 i;

	for (i = 0; c && i < chunks; i++)
		c[i] = (u32)(i * 2654435761U) ^ seed;
	return c;
}

static void test_geometry(void)
{
	printf("table sizes\n");
	CHECK_EQ_U64(hc_csum_table_chunks(NBUCKETS, BUCKET), 128000,
		     "1000 x 512 KiB is 128000 chunks");
	CHECK_EQ_U64(hc_csum_table_blocks(128000), 126, "126 blocks");
	CHECK_EQ_U64(hc_csum_table_blocks(1016), 1, "1016 chunks: 1 block");
	CHECK_EQ_U64(hc_csum_table_blocks(1017), 2, "1017 chunks: 2 blocks");
	CHECK_EQ_U64(hc_csum_table_buckets(NBUCKETS, BUCKET), 2,
		     "126 blocks x 8 KiB in 512 KiB buckets: 2");
	CHECK_EQ_U64(hc_csum_table_buckets(137, 8192), 1,
		     "137 x 8 KiB: 274 chunks, 1 block, one 8 KiB bucket");
	CHECK_EQ_U64(hc_csum_table_buckets(1016 * 2 + 1, 8192), 5,
		     "2033 x 8 KiB: 4066 chunks, 5 blocks, 5 buckets");
	/* 1 TiB of 512 KiB buckets: 2^28 chunks, 264209 blocks. */
	CHECK_EQ_U64(hc_csum_table_blocks(hc_csum_table_chunks(1ULL << 21,
								BUCKET)),
		     264209, "1 TiB: 264209 blocks");
	CHECK_EQ_U64(hc_csum_table_buckets(1ULL << 21, BUCKET), 4129,
		     "1 TiB: 4129 buckets (0.2%)");
	/* The largest device pointers address: no overflow. */
	CHECK_EQ_U64(hc_csum_table_buckets(1ULL << 21, HC_BUCKET_MAX),
		     (((1ULL << 21) * 32768 + 1015) / 1016 * 8192 +
		      HC_BUCKET_MAX - 1) / HC_BUCKET_MAX,
		     "256 TiB in 128 MiB buckets");
	CHECK_EQ_U64(hc_csum_slot_byte(0, 0), 0, "block 0 slot 0");
	CHECK_EQ_U64(hc_csum_slot_byte(0, 1), 4096, "block 0 slot 1");
	CHECK_EQ_U64(hc_csum_slot_byte(5, 0), 40960, "block 5 slot 0");
	CHECK_EQ_U64(hc_csum_slot_byte(5, 3), 45056, "slot is seq & 1");
	CHECK_EQ_U64(sizeof(struct hc_csum_block_disk), 4096, "block 4 KiB");
}

static void test_layout(void)
{
	struct hc_csum_block_disk d;
	u8 chunk[HC_CSUM_CHUNK];
	u32 *c = crcs(CHUNKS, 0);
	u64 seq = 0;
	u32 *out;
	int ret;

	printf("block byte layout and round trips\n");
	memset(chunk, 0, sizeof(chunk));
	CHECK_EQ_U64(hc_chunk_csum(chunk), 0x98f94189,
		     "CRC-32C of 4096 zero bytes");
	hc_csum_block_encode(SET_MAGIC, 3, 41, c, CHUNKS, &d);
	CHECK_EQ_U64(get_le(&d, 8), SET_MAGIC ^ HC_CSUM_MAGIC, "magic @0");
	CHECK_EQ_U64(get_le((u8 *)&d + 12, 4), 1016, "nr @12");
	CHECK_EQ_U64(get_le((u8 *)&d + 16, 8), 41, "seq @16");
	CHECK_EQ_U64(get_le((u8 *)&d + 24, 8), 3, "block @24");
	CHECK_EQ_U64(get_le((u8 *)&d + 32, 4), c[3 * 1016], "first crc @32");
	CHECK_EQ_U64(get_le((u8 *)&d + 4092, 4), c[4 * 1016 - 1],
		     "last crc @4092");
	CHECK_EQ_U64(get_le((u8 *)&d + 8, 4),
		     hc_csum_skip(&d, sizeof(d), 8), "csum @8, itself zero");

	out = calloc(CHUNKS, sizeof(*out));
	ret = hc_csum_block_decode(&d, SET_MAGIC, 3, CHUNKS, &seq, out, NULL);
	CHECK(!ret && seq == 41, "decode: %d, seq %llu", ret,
	      (unsigned long long)seq);
	CHECK(!memcmp(out + 3 * 1016, c + 3 * 1016, 1016 * 4),
	      "decode: the block's checksums");
	CHECK(!out[3 * 1016 - 1] && !out[4 * 1016], "decode: nothing else");

	/* The last block is partial: 128000 = 125 * 1016 + 1000. */
	hc_csum_block_encode(SET_MAGIC, 125, 2, c, CHUNKS, &d);
	CHECK_EQ_U64(get_le((u8 *)&d + 32 + 999 * 4, 4), c[CHUNKS - 1],
		     "last block: last chunk's crc");
	CHECK_EQ_U64(get_le((u8 *)&d + 32 + 1000 * 4, 4), 0,
		     "last block: zero past the device");
	ret = hc_csum_block_decode(&d, SET_MAGIC, 125, CHUNKS, &seq, out,
				   NULL);
	CHECK(!ret && !memcmp(out + 125 * 1016, c + 125 * 1016, 1000 * 4),
	      "last block decodes: %d", ret);
	free(out);
	free(c);
}

struct corrupt {
	const char *what;
	u64 block;		/* to decode as; the copy is of BLOCK */
	size_t off;		/* field to overwrite, little-endian */
	unsigned int width;	/* 0: no field */
	u64 val;
	bool keep_csum;		/* do not fix the checksum afterwards */
	u64 chunks;		/* 0: CHUNKS */
	int ret;
	const char *want;	/* NULL: must be valid */
};

#define BLOCK	125	/* the last, partial block */

static const struct corrupt table[] = {
	{ "valid", BLOCK, .ret = 0 },
	{ "magic of another set", BLOCK, 0, 8, SET_MAGIC, .ret = -ENODATA,
	  .want = "checksum block magic mismatch" },
	{ "never written", BLOCK, 0, 8, 0, .ret = -ENODATA,
	  .want = "checksum block magic mismatch" },
	{ "flipped crc", BLOCK, 32 + 4 * 7, 1, 0x5a, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum block checksum mismatch" },
	{ "flipped last byte", BLOCK, 4095, 1, 0x01, .keep_csum = true,
	  .ret = -EBADMSG, .want = "checksum block checksum mismatch" },
	{ "csum zero", BLOCK, 8, 4, 0, .keep_csum = true, .ret = -EBADMSG,
	  .want = "checksum block checksum mismatch" },
	{ "read as block 124", 124, .ret = -EUCLEAN,
	  .want = "checksum block holds another block's number" },
	{ "nr 1015", BLOCK, 12, 4, 1015, .ret = -EUCLEAN,
	  .want = "checksum block count not 1016" },
	{ "block past the device", BLOCK, .chunks = BLOCK * 1016,
	  .ret = -EUCLEAN, .want = "checksum block of no chunk of the device" },
	{ "crc past the device", BLOCK, 32 + 4 * 1000, 4, 1, .ret = -EUCLEAN,
	  .want = "checksum of a chunk past the device's end not zero" },
	{ "crc at the device's end", BLOCK, 32 + 4 * 999, 4, 0, .ret = 0 },
};

static void test_table(void)
{
	struct hc_csum_block_disk d;
	u32 *c = crcs(CHUNKS, 0xabcd);
	const char *err;
	size_t i;
	u64 seq;
	int ret;

	printf("%zu corrupt and edge-case blocks\n", ARRAY_LEN(table));
	for (i = 0; i < ARRAY_LEN(table); i++) {
		const struct corrupt *t = &table[i];

		hc_csum_block_encode(SET_MAGIC, BLOCK, 8, c, CHUNKS, &d);
		if (t->width)
			put_le((u8 *)&d + t->off, t->width, t->val);
		if (!t->keep_csum)
			d.csum = cpu_to_le32(hc_csum_block_csum(&d));
		err = "not set";
		ret = hc_csum_block_decode(&d, SET_MAGIC, t->block,
					   t->chunks ?: CHUNKS, &seq, NULL,
					   &err);
		CHECK(ret == t->ret, "%s: returned %d, want %d", t->what, ret,
		      t->ret);
		if (t->want)
			CHECK(err && !strcmp(err, t->want),
			      "%s: got \"%s\", want \"%s\"", t->what,
			      err ? err : "(valid)", t->want);
		else
			CHECK(!err, "%s: got \"%s\", want valid", t->what, err);
		printf("  %-28s -> %4d %s\n", t->what, ret, err ? err : "valid");
	}
	free(c);
}

static bool rule_tested(const char *rule)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++)
		if (table[i].want && !strcmp(table[i].want, rule))
			return true;
	return false;
}

int main(void)
{
	test_geometry();
	test_layout();
	test_table();
	hc_test_rules_covered(HC_SRC_DIR "/csum_table.c", 6, rule_tested);
	return hc_test_done("test_csum_table");
}
