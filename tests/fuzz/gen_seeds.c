// SPDX-License-Identifier: GPL-2.0
/*
 * gen_seeds DIR: write valid encoded superblocks (cache and backing, a few
 * shapes each) into DIR as the fuzzer's seed corpus.
 */

#include <stdio.h>
#include <stdlib.h>

#include "sb.h"

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
	return ret ? 1 : 0;
}
