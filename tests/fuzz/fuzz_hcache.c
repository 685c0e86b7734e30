// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hcache: libFuzzer target over every on-disk parser shared with the
 * module. Each parser gets the whole input; to add one (journal entries,
 * sorted sets), write a fuzz_*() function with the same shape and list it
 * in fuzz_targets[].
 *
 * A parser must not crash, read out of bounds or hit undefined behaviour
 * on any input, and whatever it accepts must survive an encode/decode
 * round trip unchanged. Anything else aborts, which libFuzzer reports.
 */

#include <stdio.h>
#include <stdlib.h>

#include "sb.h"

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

static void (*const fuzz_targets[])(const u8 *data, size_t size) = {
	fuzz_sb,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	for (i = 0; i < sizeof(fuzz_targets) / sizeof(fuzz_targets[0]); i++)
		fuzz_targets[i](data, size);
	return 0;
}
