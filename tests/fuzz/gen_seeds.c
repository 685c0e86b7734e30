// SPDX-License-Identifier: GPL-2.0
/*
 * gen_seeds DIR: write valid encoded superblocks (cache and backing, a few
 * shapes each), sorted sets, journal entries, gen/prio sets,
 * backing-device tables and checksum table blocks into DIR as the
 * fuzzer's seed corpus. Each seed is checked by its decoder first.
 */

#include <stdio.h>
#include <stdlib.h>

#include "bdev_table.h"
#include "bset.h"
#include "csum_table.h"
#include "jset.h"
#include "pset.h"
#include "sb.h"

/* As in fuzz_hcache.c. */
#define FUZZ_SET_MAGIC		0x5eed5eedf00df00dULL
#define FUZZ_CACHE_SECTORS	(1ULL << 32)
#define FUZZ_NBUCKETS		(1ULL << 20)
#define FUZZ_CSUM_CHUNKS	(5ULL * HC_CSUM_PER_BLOCK + 500)
#define FUZZ_CSUM_BLOCKS	6U

static int write_file(const char *dir, const char *name, const void *buf,
		      size_t bytes)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, bytes, 1, f) != 1 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int write_seed(const char *dir, const char *name,
		      const struct hc_sb *sb)
{
	struct hc_sb_disk d;
	struct hc_sb check;
	const char *err;

	hc_sb_encode(sb, &d);
	hc_sb_decode(&d, sizeof(d), &check, &err);
	if (err) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	return write_file(dir, name, &d, sizeof(d));
}

static int write_bset_seed(const char *dir, const char *name,
			   const struct hc_key *keys, size_t nr)
{
	struct hc_bset_info info = { 0x1234, 77 };
	struct hc_key in[16], out[16];
	struct hc_bset_mem set, check;
	u64 buf[128];
	const char *err;
	size_t bytes;

	hc_bset_init(&set, in, 16);
	set.keep_whiteouts = true;
	memcpy(in, keys, nr * sizeof(*keys));
	set.nr = nr;
	hc_bset_init(&check, out, 16);
	bytes = hc_bset_bytes(hc_bset_encode_u64s(&set));
	if (hc_bset_encode(&set, FUZZ_SET_MAGIC, &info, buf, sizeof(buf)) ||
	    hc_bset_decode(buf, bytes, FUZZ_SET_MAGIC, FUZZ_CACHE_SECTORS,
			   &check, &info, &err)) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	return write_file(dir, name, buf, bytes);
}

static int write_bset_seeds(const char *dir)
{
	static const struct hc_key keys[] = {
		{ .end = 100, .bdev_id = 1, .size = 100, .nr_ptrs = 1,
		  .ptr = 5000 },
		{ .end = 120, .bdev_id = 1, .size = 20 },
		{ .end = 200, .bdev_id = 1, .size = 70, .nr_ptrs = 1,
		  .ptr = (3ULL << HC_PTR_GEN_SHIFT) | 9000,
		  .flags = HC_KEY_DIRTY },
		{ .end = 64, .bdev_id = 2, .size = 8, .nr_ptrs = 1,
		  .ptr = (255ULL << HC_PTR_GEN_SHIFT) | 128,
		  .flags = HC_KEY_DIRTY },
	};
	int ret = 0;

	ret |= write_bset_seed(dir, "bset-empty", keys, 0);
	ret |= write_bset_seed(dir, "bset-one", keys, 1);
	ret |= write_bset_seed(dir, "bset-four", keys, 4);
	return ret;
}

/* ---- Journal entries ------------------------------------------------------ */

static int write_jset_seed(const char *dir, const char *name,
			   const struct hc_jset_info *info,
			   const struct hc_key *keys, size_t nr)
{
	struct hc_jset_info check;
	struct hc_key out[16];
	const char *err = NULL;
	size_t bytes, n;
	u64 buf[128];

	if (hc_jset_encode(info, keys, nr, FUZZ_SET_MAGIC, buf, sizeof(buf),
			   &bytes) ||
	    hc_jset_decode(buf, bytes, FUZZ_SET_MAGIC, FUZZ_CACHE_SECTORS,
			   FUZZ_NBUCKETS, &check, out, 16, &n, NULL, &err)) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	return write_file(dir, name, buf, bytes);
}

static int write_jset_seeds(const char *dir)
{
	/* Insertion order: unsorted, overlapping, with a whiteout. */
	static const struct hc_key keys[] = {
		{ .end = 64, .bdev_id = 2, .size = 8, .nr_ptrs = 1,
		  .ptr = (9ULL << HC_PTR_GEN_SHIFT) | 4096,
		  .flags = HC_KEY_DIRTY },
		{ .end = 100, .bdev_id = 1, .size = 100, .nr_ptrs = 1,
		  .ptr = 5000 },
		{ .end = 120, .bdev_id = 1, .size = 70 },
		{ .end = 200, .bdev_id = 1, .size = 150, .nr_ptrs = 1,
		  .ptr = (3ULL << HC_PTR_GEN_SHIFT) | 9000,
		  .flags = HC_KEY_DIRTY },
	};
	struct hc_jset_info info = {
		.seq = 1000, .last_seq = 990,
		.btree_root = (5ULL << HC_PTR_GEN_SHIFT) | 1024,
		.prio_bucket = 3, .bdev_table_bucket = 4, .btree_level = 1,
	};
	int ret = 0;

	ret |= write_jset_seed(dir, "jset-four", &info, keys, 4);
	info.last_seq = info.seq;
	info.btree_level = HC_BTREE_MAX_DEPTH - 1;
	ret |= write_jset_seed(dir, "jset-empty", &info, keys, 0);
	return ret;
}

/* ---- Gen/prio sets -------------------------------------------------------- */

static void seed_get(void *priv, u64 bucket, u8 *gen, u16 *prio, u8 *flags)
{
	(void)priv;
	*gen = bucket * 37;
	*prio = bucket * 1009;
	*flags = bucket % 5 ? 0 : HC_BUCKET_DISK_EMPTY;
}

static int write_pset_seed(const char *dir, const char *name, u32 bytes,
			   const struct hc_pset_info *info)
{
	static u64 buf[8192 / 8];
	struct hc_pset_info check;
	const char *err = NULL;
	u32 zero_from = bytes;	/* the last seed's bytes may be there */

	if (hc_pset_encode(info, FUZZ_SET_MAGIC, seed_get, NULL, buf, bytes,
			   &zero_from) ||
	    hc_pset_decode(buf, bytes, FUZZ_SET_MAGIC, FUZZ_NBUCKETS,
			   info->first, NULL, NULL, &check, &err)) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	return write_file(dir, name, buf, bytes);
}

static int write_pset_seeds(const char *dir)
{
	struct hc_pset_info info = { .seq = 77, .first = 3, .nr = 4,
				     .next_bucket = 9 };
	int ret = 0;

	/* The fuzzer reads a bucket as big as its input: 64 bytes, 4 KiB. */
	ret |= write_pset_seed(dir, "pset-64", 64, &info);
	info.first = 1000;
	info.nr = 1000;
	info.next_bucket = 0;
	ret |= write_pset_seed(dir, "pset-4k", 4096, &info);
	return ret;
}

/* ---- Backing-device table ------------------------------------------------- */

static int write_bdev_table_seed(const char *dir, const char *name,
				 const struct hc_bdev_table *t)
{
	static struct hc_bdev_table check;
	static u64 buf[1024];
	const char *err = NULL;

	if (hc_bdev_table_encode(t, FUZZ_SET_MAGIC, buf, sizeof(buf)) ||
	    hc_bdev_table_decode(buf, hc_bdev_table_bytes(t), FUZZ_SET_MAGIC,
				 &check, &err)) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	return write_file(dir, name, buf, hc_bdev_table_bytes(t));
}

static int write_bdev_table_seeds(const char *dir)
{
	static struct hc_bdev_table t;
	u8 uuid[HC_UUID_SIZE];
	bool new_id;
	int ret = 0;
	u32 i, id;

	hc_bdev_table_init(&t);
	ret |= write_bdev_table_seed(dir, "bdev-table-empty", &t);
	for (i = 0; i < 4; i++) {
		memset(uuid, 0x30 + i, sizeof(uuid));
		hc_bdev_table_attach(&t, uuid, i, 1ULL << (20 + i),
				     1700000000 + i, &id, &new_id);
	}
	/* A new id for the second device, the third gone: ids 1, 5, 4. */
	memset(uuid, 0x31, sizeof(uuid));
	hc_bdev_table_attach(&t, uuid, 7, 1ULL << 21, 1700000100, &id,
			     &new_id);
	hc_bdev_table_detach(&t, 3);
	t.d[0].flags = HC_BDEV_ENTRY_DETACHED;
	t.seq = 12;
	ret |= write_bdev_table_seed(dir, "bdev-table-three", &t);
	return ret;
}

/* ---- Checksum table blocks ----------------------------------------------- */

static int write_csum_block_seed(const char *dir, const char *name, u64 block,
				 u64 seq, const u32 *crc)
{
	static struct hc_csum_block_disk d;
	const char *err = NULL;
	u64 check;

	hc_csum_block_encode(FUZZ_SET_MAGIC, block, seq, crc, FUZZ_CSUM_CHUNKS,
			     &d);
	if (hc_csum_block_decode(&d, FUZZ_SET_MAGIC, block, FUZZ_CSUM_CHUNKS,
				 &check, NULL, &err) || check != seq) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	return write_file(dir, name, &d, sizeof(d));
}

static int write_csum_block_seeds(const char *dir)
{
	static u32 crc[FUZZ_CSUM_BLOCKS * HC_CSUM_PER_BLOCK];
	int ret = 0;
	u32 i;

	for (i = 0; i < FUZZ_CSUM_CHUNKS; i++)
		crc[i] = i * 0x9e3779b9U;
	/* A full block in slot 0, and the device's last, partial, in 1. */
	ret |= write_csum_block_seed(dir, "csum-block-full", 1, 4, crc);
	ret |= write_csum_block_seed(dir, "csum-block-last",
				     FUZZ_CSUM_BLOCKS - 1, 7, crc);
	return ret;
}

int main(int argc, char **argv)
{
	struct hc_sb sb;
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 1;
	}

	memset(&sb, 0, sizeof(sb));
	sb.version = HC_SB_VERSION;
	memset(sb.dev_uuid, 0x11, HC_UUID_SIZE);
	memset(sb.set_uuid, 0x22, HC_UUID_SIZE);
	strcpy(sb.label, "seed");
	sb.seq = 1;
	sb.block_size = 512;

	sb.kind = HC_KIND_CACHE;
	sb.cache.bucket_size = HC_BUCKET_DEFAULT;
	sb.cache.nbuckets = 200;
	sb.cache.first_bucket = 1;
	sb.cache.journal_start = 1;
	sb.cache.journal_buckets = 8;
	sb.cache.clean = true;
	ret |= write_seed(argv[1], "cache-512k", &sb);
	sb.block_size = 4096;
	sb.cache.bucket_size = HC_BUCKET_MIN;
	sb.cache.nbuckets = 137;
	sb.cache.replacement = HC_REPL_RANDOM;
	sb.cache.discard = true;
	ret |= write_seed(argv[1], "cache-min", &sb);
	/* With a checksum table, right after the journal. */
	sb.incompat = HC_FEAT_INCOMPAT_DATA_CSUM;
	sb.cache.bucket_size = HC_BUCKET_DEFAULT;
	sb.cache.nbuckets = 200;
	sb.cache.csum_type = HC_CSUM_CRC32C;
	sb.cache.csum_start = 9;
	sb.cache.csum_buckets = hc_csum_table_buckets(200, HC_BUCKET_DEFAULT);
	ret |= write_seed(argv[1], "cache-csum", &sb);
	sb.incompat = 0;

	memset(&sb.cache, 0, sizeof(sb.cache));
	sb.kind = HC_KIND_BACKING;
	sb.block_size = 512;
	sb.backing.data_offset = HC_DATA_OFFSET_DEFAULT;
	sb.backing.cache_mode = HC_MODE_WRITEBACK;
	sb.backing.state = HC_STATE_DIRTY;
	ret |= write_seed(argv[1], "backing-dirty", &sb);
	memset(sb.set_uuid, 0, HC_UUID_SIZE);
	sb.label[0] = '\0';
	sb.backing.data_offset = HC_DATA_OFFSET_MIN;
	sb.backing.state = HC_STATE_NONE;
	ret |= write_seed(argv[1], "backing-detached", &sb);
	ret |= write_bset_seeds(argv[1]);
	ret |= write_jset_seeds(argv[1]);
	ret |= write_pset_seeds(argv[1]);
	ret |= write_bdev_table_seeds(argv[1]);
	ret |= write_csum_block_seeds(argv[1]);
	return ret ? 1 : 0;
}
