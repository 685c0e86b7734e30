// SPDX-License-Identifier: GPL-2.0
/*
 * test_evict: the lru refill's choice in drivers/md/hcache/evict.c. For
 * random priorities (few distinct values, so that ties abound, and many),
 * bucket counts from 0 to 5000 and choices of 0 to 300 buckets, the
 * buckets kept must be distinct, offered, as many as min(offered, max),
 * and their priorities exactly the lowest ones a sort gives; the age must
 * be the highest of them. Also: offers in ascending and descending order.
 */

#include <stdlib.h>

#include "evict.h"
#include "testlib.h"

static int cmp_u16(const void *a, const void *b)
{
	u16 x = *(const u16 *)a, y = *(const u16 *)b;

	return x < y ? -1 : x > y;
}

/* Offer @n buckets with priorities @prio, keep @max; check against a sort. */
static void check_choice(const u16 *prio, size_t n, size_t max, const char *what)
{
	struct hc_evict_cand *buf = calloc(max + 1, sizeof(*buf));
	u16 *sorted = malloc((n + 1) * sizeof(*sorted));
	u16 *kept = malloc((max + 1) * sizeof(*kept));
	unsigned char *seen = calloc(n + 1, 1);
	struct hc_evict_heap h;
	size_t i, want = n < max ? n : max;
	bool ok = true;
	u16 top = 0;

	hc_evict_init(&h, buf, max);
	for (i = 0; i < n; i++)
		hc_evict_offer(&h, i, prio[i]);
	CHECK(h.nr == want, "%s: n=%zu max=%zu: kept %zu", what, n, max, h.nr);
	for (i = 0; i < h.nr; i++) {
		u64 b = h.cand[i].bucket;

		if (b >= n || seen[b] || prio[b] != h.cand[i].prio)
			ok = false;
		else
			seen[b] = 1;
		kept[i] = h.cand[i].prio;
		if (kept[i] > top)
			top = kept[i];
	}
	CHECK(ok, "%s: n=%zu max=%zu: a bucket kept twice, never offered or with another priority",
	      what, n, max);
	memcpy(sorted, prio, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u16);
	qsort(kept, h.nr, sizeof(*kept), cmp_u16);
	CHECK(h.nr == want && !memcmp(kept, sorted, want * sizeof(*kept)),
	      "%s: n=%zu max=%zu: not the lowest priorities", what, n, max);
	CHECK(hc_evict_age(&h) == top, "%s: n=%zu max=%zu: age %u, want %u",
	      what, n, max, hc_evict_age(&h), top);
	free(buf);
	free(sorted);
	free(kept);
	free(seen);
}

int main(void)
{
	static const size_t counts[] = { 0, 1, 2, 7, 64, 100, 2048, 5000 };
	static const size_t maxes[] = { 0, 1, 2, 16, 64, 97, 300 };
	static const unsigned int spreads[] = { 1, 4, 100, 65536 };
	u16 *prio = malloc(5000 * sizeof(*prio));
	size_t a, b, s, i, rep;

	srand(1);
	for (a = 0; a < sizeof(counts) / sizeof(counts[0]); a++)
		for (b = 0; b < sizeof(maxes) / sizeof(maxes[0]); b++)
			for (s = 0; s < sizeof(spreads) / sizeof(spreads[0]); s++)
				for (rep = 0; rep < 3; rep++) {
					for (i = 0; i < counts[a]; i++)
						prio[i] = rand() % spreads[s];
					check_choice(prio, counts[a], maxes[b], "random");
				}
	for (i = 0; i < 5000; i++)
		prio[i] = i;
	check_choice(prio, 5000, 64, "ascending");
	for (i = 0; i < 5000; i++)
		prio[i] = 5000 - i;
	check_choice(prio, 5000, 64, "descending");
	free(prio);
	return hc_test_done("test_evict");
}
