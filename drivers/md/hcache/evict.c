// SPDX-License-Identifier: GPL-2.0
/*
 * evict.c: choosing the lowest priorities for an lru refill (evict.h).
 *
 * A refill wants a few dozen buckets out of all of a cache's, which on a
 * real cache are millions. Sorting every candidate, as refills did before,
 * cost O(n log n) comparisons through a callback and an n-sized
 * allocation under meta_lock held for writing: about 5 ms of a refill's
 * 9 on a 2048-bucket cache under TCG (make bench-profile WORKLOAD=c,
 * 2026-12-02). A max-heap of the @max lowest seen keeps each offer to one
 * comparison when the candidate is no better than the worst kept, which
 * for most of a scan it is not.
 */

#include "evict.h"

static void hc_evict_swap(struct hc_evict_cand *a, struct hc_evict_cand *b)
{
	struct hc_evict_cand t = *a;

	*a = *b;
	*b = t;
}

/* Restore the heap order upwards from @i, after an append. */
static void hc_evict_sift_up(struct hc_evict_heap *h, size_t i)
{
	while (i) {
		size_t parent = (i - 1) / 2;

		if (h->cand[parent].prio >= h->cand[i].prio)
			break;
		hc_evict_swap(&h->cand[parent], &h->cand[i]);
		i = parent;
	}
}

/* Restore the heap order downwards from the root, after a replacement. */
static void hc_evict_sift_down(struct hc_evict_heap *h)
{
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, top = i;

		if (l < h->nr && h->cand[l].prio > h->cand[top].prio)
			top = l;
		if (r < h->nr && h->cand[r].prio > h->cand[top].prio)
			top = r;
		if (top == i)
			break;
		hc_evict_swap(&h->cand[top], &h->cand[i]);
		i = top;
	}
}

/**
 * hc_evict_init() - an empty choice of up to @max buckets
 * @h: the heap
 * @buf: room for @max candidates
 * @max: how many buckets to choose
 */
void hc_evict_init(struct hc_evict_heap *h, struct hc_evict_cand *buf,
		   size_t max)
{
	h->cand = buf;
	h->nr = 0;
	h->max = max;
}

/**
 * hc_evict_offer() - offer a bucket for eviction
 * @h: the heap
 * @bucket: the bucket
 * @prio: its priority
 *
 * Kept if fewer than @max are kept, or if its priority is lower than the
 * highest kept, which it then replaces; one of the same priority as the
 * highest kept does not replace it.
 */
void hc_evict_offer(struct hc_evict_heap *h, u64 bucket, u16 prio)
{
	if (h->nr < h->max) {
		h->cand[h->nr] = (struct hc_evict_cand){ bucket, prio };
		hc_evict_sift_up(h, h->nr++);
	} else if (h->max && prio < h->cand[0].prio) {
		h->cand[0] = (struct hc_evict_cand){ bucket, prio };
		hc_evict_sift_down(h);
	}
}
