/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_SB_H
#define _HCACHE_SB_H

/*
 * sb.h: the superblock in memory, and its conversion to and from the disk
 * format in hcache_ondisk.h. Pure code: no I/O, no allocation, no locks;
 * built into the module and, unchanged, into the tools and tests.
 */

#include "pure.h"
#include "hcache_ondisk.h"

/* Cache-device fields; meaningful when kind == HC_KIND_CACHE. */
struct hc_sb_cache {
	u64	nbuckets;
	u64	first_bucket;
	u64	journal_start;
	u32	bucket_size;		/* bytes */
	u32	journal_buckets;
	u32	replacement;		/* HC_REPL_* */
	bool	discard;
	bool	clean;			/* shut down cleanly */
	/* HC_CACHE_TUNE_*: which of the settings below were made */
	u32	tunables;
	u32	io_error_limit;
	u32	io_error_halflife;	/* seconds */
	/* HC_FEAT_INCOMPAT_EMPTY_MARKS: where the newest journal entry is */
	u32	clean_journal_bucket;
	u64	clean_journal_seq;
	u32	clean_journal_offset;
	/* HC_FEAT_INCOMPAT_DATA_CSUM: the checksum table, else all 0 */
	u32	csum_type;		/* HC_CSUM_* */
	u64	csum_start;
	u32	csum_buckets;
};

/* Backing-device fields; meaningful when kind == HC_KIND_BACKING. */
struct hc_sb_backing {
	u64	data_offset;		/* sectors */
	u32	inval_gen;
	u32	cache_mode;		/* HC_MODE_* */
	u32	state;			/* HC_STATE_* */
	/* HC_BDEV_TUNE_*: which of the settings below were made */
	u32	tunables;
	u64	sequential_cutoff;	/* bytes */
	u32	writeback_percent;
	u32	admission_policy;	/* HC_ADMIT_* */
	u32	stop_when_failed;	/* HC_STOP_* */
};

struct hc_sb {
	u32	version;
	u64	compat;
	u64	ro_compat;
	u64	incompat;
	u8	dev_uuid[HC_UUID_SIZE];
	u8	set_uuid[HC_UUID_SIZE];
	char	label[HC_LABEL_SIZE];	/* NUL-terminated */
	u64	seq;
	u32	kind;			/* HC_KIND_* */
	u32	block_size;		/* bytes */
	/*
	 * Set by hc_sb_decode() when ro_compat has bits this code does not
	 * know: the device may be read but must not be written.
	 */
	bool	read_only;
	struct hc_sb_cache	cache;
	struct hc_sb_backing	backing;
};

/* sb.c; each function is documented at its definition. */
void hc_sb_encode(const struct hc_sb *sb, struct hc_sb_disk *d);
int hc_sb_decode(const void *buf, size_t len, struct hc_sb *sb,
		 const char **why);
u32 hc_sb_csum(const struct hc_sb_disk *d);
u64 hc_set_magic(const u8 *set_uuid);
u64 hc_cache_first_bucket(u32 bucket_size);
const char *hc_label_check(const char *label, size_t len);
int hc_label_encode(const char *label, char *out, size_t len);

/* Room for any label encoded by hc_label_encode(), NUL included. */
#define HC_LABEL_ENC_SIZE	(4 * (HC_LABEL_SIZE - 1) + 1)
u64 hc_cache_min_buckets(u32 bucket_size);

#endif /* _HCACHE_SB_H */
