/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_BYPASS_H
#define _HCACHE_BYPASS_H

/*
 * bypass.h: which I/O the cache takes in and which it lets pass by:
 * sequential stream detection, the bypass decision and its reasons, the
 * admission policy for read misses, and the size parser of the tunables
 * that drive them. Pure code (no locks, no allocation, no I/O): the I/O
 * path (request.c) feeds each request here, the unit tests feed workloads.
 *
 * WHAT "BYPASS" MEANS
 *
 * Bypassing an I/O means not putting its data into the cache. It never
 * means ignoring what the cache already holds, which may be dirty and so
 * newer than the backing device:
 *
 *  - a bypassed read still looks the range up in the cache and reads what
 *    is there; only its misses are not promoted;
 *  - a bypassed write goes to the backing device alone, and the I/O path
 *    must still invalidate every cached key over its range, or a later
 *    read would find the old data in the cache.
 *
 * ORDER IN THE I/O PATH
 *
 * For every request with data: hc_seq_note() (under the backing device's
 * sequential lock), then hc_bypass_decide(). For a read miss that was not
 * bypassed, the cache set's admission policy decides whether to promote;
 * a refusal is counted as HC_BYPASS_POLICY.
 */

#include "pure.h"
#include "hcache_ondisk.h"

/*
 * pure.h gives userspace no attribute or access macros: the kernel
 * always has these (compiler_attributes.h, rwonce.h), glibc has its own
 * name for the attribute.
 */
#ifndef __always_unused
#define __always_unused	__attribute_maybe_unused__
#endif
#ifndef READ_ONCE
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#endif

/* ---- Sequential stream detection --------------------------------------- */

/* Streams remembered per backing device. */
#define HC_SEQ_STREAMS		16

/*
 * Default sequential_cutoff (HC_SEQ_CUTOFF_DEFAULT, hcache_ondisk.h): runs
 * of 4 MiB or more bypass the cache.
 */

/* The next sector of a free slot: no I/O ends there. */
#define HC_SEQ_FREE		(~0ULL)

/**
 * struct hc_seq_detect - the recent streams of one backing device
 * @next: per slot, the sector an I/O continuing its stream starts at;
 *	HC_SEQ_FREE for a free slot. No two slots expect the same sector.
 *	Apart from @bytes, so that the scan of every I/O reads one array.
 * @bytes: per slot, the bytes in its stream's run so far
 * @lru: the slot numbers, least recently used first (free slots before
 *	any in use): an I/O that starts a stream takes @lru[0]
 *
 * Not safe for concurrent use: every function taking it must be called
 * with the lock that protects it held (the backing device's sequential
 * lock, a spinlock: nothing here sleeps).
 */
struct hc_seq_detect {
	u64	next[HC_SEQ_STREAMS];
	u64	bytes[HC_SEQ_STREAMS];
	u8	lru[HC_SEQ_STREAMS];
};

/* ---- The bypass decision ----------------------------------------------- */

/*
 * Why an I/O bypassed the cache, for statistics and tracing. NONE means it
 * did not; hc_bypass_decide() returns all the others but POLICY, which the
 * I/O path records when the admission policy refuses a read miss. The
 * statistics count the reasons from SEQUENTIAL on in this order: append.
 */
enum hc_bypass_reason {
	HC_BYPASS_NONE = 0,
	HC_BYPASS_SEQUENTIAL,	/* part of a run >= sequential_cutoff */
	HC_BYPASS_FULL,		/* a write, with the cache nearly full */
	HC_BYPASS_MODE,		/* the cache mode does not cache it */
	HC_BYPASS_POLICY,	/* a read miss the admission policy refused */
	HC_BYPASS_NR,
};

/*
 * A write bypasses when fewer than this share (percent) of the cache's
 * buckets hold neither metadata nor dirty data. See hc_bypass_decide().
 */
#define HC_BYPASS_FULL_PERCENT	5

/**
 * struct hc_bypass_in - what the bypass decision looks at
 * @write: the I/O writes (else it reads)
 * @cache_mode: the backing device's HC_MODE_* (hcache_ondisk.h)
 * @seq_bytes: the run the I/O belongs to, as hc_seq_note() returned it
 * @sequential_cutoff: runs of this many bytes or more bypass; 0 disables
 * @avail_percent: share (percent) of the cache's buckets holding neither
 *	metadata nor dirty data: free, or clean data the allocator may evict
 */
struct hc_bypass_in {
	bool		write;
	unsigned int	cache_mode;
	u64		seq_bytes;
	u64		sequential_cutoff;
	u32		avail_percent;
};

/* ---- Admission policy for read misses ----------------------------------- */

/*
 * second_access promotes every miss while more than this share (percent)
 * of the cache's buckets are free: filling free space evicts nothing, so
 * warming up is as fast as with first_access. Below it, a range is
 * promoted on its second miss only.
 */
#define HC_ADMIT_FILL_PERCENT	20

/* Ghost table slots: one per 4 KiB of cache, a power of two within these. */
#define HC_ADMIT_GHOST_MIN	4096U
#define HC_ADMIT_GHOST_MAX	(1U << 20)

/**
 * struct hc_admit_ghost - the read misses a set remembers having refused
 * @slots: per slot, the fingerprint of the last refused miss that hashed
 *	to it, 0 for none
 * @mask: the number of slots (a power of two, hc_admit_ghost_slots())
 *	minus one
 * @hand: which slot of a full pair a miss takes next, in turn
 *
 * Read and written without a lock, one aligned u32 at a time, from many
 * CPUs: two misses racing for a slot can at worst make one range promoted
 * a miss early or late, which costs a cache write or a miss, never data.
 */
struct hc_admit_ghost {
	u32	*slots;
	u32	mask;
	u32	hand;
};

/**
 * struct hc_admit_in - what an admission policy looks at
 * @ghost: the set's ghost table, for a policy that remembers misses
 * @bdev_id: the backing device of the missed range
 * @sector: the range's first sector on it
 * @sectors: its length
 * @free_percent: share (percent) of the cache's buckets that are free,
 *	holding no data at all, and not yet on a free list
 */
struct hc_admit_in {
	struct hc_admit_ghost	*ghost;
	u32			bdev_id;
	u64			sector;
	u32			sectors;
	u32			free_percent;
};

/**
 * struct hc_admit_policy - decides which read misses are promoted
 * @name: as shown and written in sysfs
 * @admit: called for each read miss that hc_bypass_decide() let through.
 *	Returns true to promote the range into the cache, false to leave it
 *	out (the I/O path counts HC_BYPASS_POLICY). Called in the I/O path
 *	with no hcache lock held, possibly on many CPUs at once, so it must
 *	not sleep; required.
 *
 * A new policy is one more entry in hc_admit_policies[] with its own
 * @admit; the I/O path does not change.
 */
struct hc_admit_policy {
	const char	*name;
	bool		(*admit)(const struct hc_admit_in *in);
};

/*
 * Indices into hc_admit_policies[], in the order sysfs lists them, are
 * HC_ADMIT_* in hcache_ondisk.h: a backing superblock keeps the policy by
 * its index. A new backing device's policy is HC_ADMIT_DEFAULT,
 * second_access: it costs nothing while the cache fills and, once it is
 * full, keeps a cold miss from costing a cache write and an eviction (make
 * bench: cold random reads 0.98x the raw device against 0.92x with
 * first_access).
 */

extern const struct hc_admit_policy hc_admit_policies[HC_ADMIT_NR];

/* bypass.c; each function is documented at its definition. */
void hc_seq_init(struct hc_seq_detect *d);
u64 hc_seq_note(struct hc_seq_detect *d, u64 sector, u32 sectors);
const char *hc_bypass_reason_name(enum hc_bypass_reason r);
enum hc_bypass_reason hc_bypass_decide(const struct hc_bypass_in *in);
int hc_admit_policy_find(const char *name);
u32 hc_admit_ghost_slots(u64 cache_sectors);
int hc_size_parse(const char *s, u64 *bytes);

#endif /* _HCACHE_BYPASS_H */
