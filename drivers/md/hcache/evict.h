/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_EVICT_H
#define _HCACHE_EVICT_H

/*
 * evict.h: the choice of the buckets an lru refill evicts: the @max
 * lowest priorities among all the candidates offered, kept in a max-heap
 * of @max entries, so that a refill costs O(n log max) comparisons and
 * @max entries of memory for n buckets, not a sort of all of them. Pure
 * code (no locks, no allocation, no I/O): alloc.c offers every evictable
 * bucket, the unit tests check the choice against a sort.
 */

#include "pure.h"

/* A bucket offered for eviction, and its priority. */
struct hc_evict_cand {
	u64	bucket;
	u16	prio;
};

/*
 * The lowest priorities seen so far: a max-heap on prio in @cand[0..nr),
 * @cand[0] the highest priority among those kept.
 */
struct hc_evict_heap {
	struct hc_evict_cand	*cand;
	size_t			nr;
	size_t			max;
};

void hc_evict_init(struct hc_evict_heap *h, struct hc_evict_cand *buf,
		   size_t max);
void hc_evict_offer(struct hc_evict_heap *h, u64 bucket, u16 prio);

/*
 * The highest priority among the candidates kept: by how much the
 * buckets that stay age, so that those evicted next time are the ones
 * not touched since. 0 if none is kept.
 */
static inline u16 hc_evict_age(const struct hc_evict_heap *h)
{
	return h->nr ? h->cand[0].prio : 0;
}

#endif /* _HCACHE_EVICT_H */
