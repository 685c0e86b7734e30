/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_DEBUG_H
#define _HCACHE_DEBUG_H

/*
 * debug.h: what only a debug build has (make HC_DEBUG=1; debug_knobs.c),
 * for the tests: delay points that hold a thread at a race window for as
 * long as a test needs to reach it, fault points that fail one operation
 * on demand, and the debugfs files that can break a set's promises (fill
 * makes dirty keys over space never written, gen_set rewrites the gens).
 * A release build (DKMS, make install, every package) compiles none of it:
 * the calls below are empty inlines there.
 *
 * Under /sys/kernel/debug/hcache/ a debug build adds, for each point P:
 *   delay/P/ms      how long the next armed hits sleep
 *   delay/P/armed   how many hits are still to sleep (each takes one)
 *   delay/P/hits    how many hits slept so far
 *   fail/P/armed    how many hits are still to fail
 *   fail/P/hits     how many hits failed so far
 * Documentation/hcache/testing.rst says where each point is.
 */

struct hc_cache_set;

/* Where a delay point holds a thread. */
enum hc_delay_point {
	/* writeback: a run was found current in the tree, not written yet */
	HC_DELAY_WB_CHECKED,
	/* a read miss is about to track its promotion */
	HC_DELAY_PROMOTE_TRACK,
	/* a detach has drained the requests in flight, not yet decided */
	HC_DELAY_DETACH_DRAINED,
	/* a flush is past the backing device's flush, not yet the journal */
	HC_DELAY_FLUSH_BACKING,
	/* a write whose cache half failed is about to go around the cache */
	HC_DELAY_WRITE_FALLBACK,
	/* write_work is about to insert the keys of completed cached writes */
	HC_DELAY_WRITE_INSERT,
	/* a journal entry is encoded and about to be written */
	HC_DELAY_JOURNAL_WRITE,
	/* the mark pass behind I/O is about to count its next leaves */
	HC_DELAY_MARK_BG,
	/* moving GC has read and written its copies, not yet swapped keys */
	HC_DELAY_MOVE_COPIED,
	/* a read's lookup found its first miss, the read not yet tracked */
	HC_DELAY_READ_TRACK,
	HC_DELAY_NR,
};

/* What a fault point fails. */
enum hc_fault_point {
	/* the superblock write of a detach */
	HC_FAULT_DETACH_SB,
	/* a cached write's data write to the cache device (as if it failed) */
	HC_FAULT_CACHE_WRITE,
	/* a btree node's allocation on the I/O path (as if memory were short) */
	HC_FAULT_NODE_ALLOC,
	/* a flush of the cache device that has no key to journal */
	HC_FAULT_CACHE_FLUSH,
	HC_FAULT_NR,
};

#ifdef HC_DEBUG

void hc_debug_delay(enum hc_delay_point p);
bool hc_debug_fault(enum hc_fault_point p);
void hc_debug_knobs_init(struct dentry *root);
void hc_debug_knobs_add_set(struct hc_cache_set *c, struct dentry *dir);

#else

static inline void hc_debug_delay(enum hc_delay_point p)
{
}

static inline bool hc_debug_fault(enum hc_fault_point p)
{
	return false;
}

static inline void hc_debug_knobs_init(struct dentry *root)
{
}

static inline void hc_debug_knobs_add_set(struct hc_cache_set *c,
					  struct dentry *dir)
{
}

#endif /* HC_DEBUG */

#endif /* _HCACHE_DEBUG_H */
