// SPDX-License-Identifier: GPL-2.0
/*
 * gen_seeds DIR: write valid encoded superblocks (cache and backing, a few
 * shapes each) and sorted sets into DIR as the fuzzer's seed corpus.
 */

#include <stdio.h>
#include <stdlib.h>

#include "bset.h"
#include "sb.h"

/* As in fuzz_hcache.c. */
#define FUZZ_SET_MAGIC		0x5eed5eedf00df00dULL
#define FUZZ_CACHE_SECTORS	(1ULL << 32)

static int write_seed(const char *dir, const char *name,
		      const struct hc_sb *sb)
{
	struct hc_sb_disk d;
	struct hc_sb check;
	char path[4096];
	const char *err;
	FILE *f;

	hc_sb_encode(sb, &d);
	hc_sb_decode(&d, sizeof(d), &check, &err);
	if (err) {
		fprintf(stderr, "gen_seeds: %s: invalid seed: %s\n", name, err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&d, sizeof(d), 1, f) != 1 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int write_bset_seed(const char *dir, const char *name,
			   const struct hc_key *keys, size_t nr)
{
	struct hc_bset_info info = { 0x1234, 77 };
	struct hc_key in[16], out[16];
	struct hc_bset_mem set, check;
	u64 buf[128];
	char path[4096];
	const char *err;
	size_t bytes;
	FILE *f;

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
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, bytes, 1, f) != 1 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int write_bset_seeds(const char *dir)
{
	static const struct hc_key keys[] = {
		{ .end = 100, .bdev_id = 1, .size = 100, .nr_ptrs = 1,
		  .ptr = 5000 },
		{ .end = 120, .bdev_id = 1, .size = 20 },
		{ .end = 200, .bdev_id = 1, .size = 70, .nr_ptrs = 1,
		  .ptr = (3ULL << HC_PTR_GEN_SHIFT) | 9000,
		  .flags = HC_KEY_DIRTY | HC_KEY_DATA_CSUM,
		  .data_csum = 0xabcd },
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
	sb.incompat = HC_FEAT_INCOMPAT_DRAFT_CSET;
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

	memset(&sb.cache, 0, sizeof(sb.cache));
	sb.kind = HC_KIND_BACKING;
	sb.incompat = 0;
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
	return ret ? 1 : 0;
}
