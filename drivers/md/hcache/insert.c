// SPDX-License-Identifier: GPL-2.0
/*
 * insert.c: a key into a cache set's index: journalled, then inserted in
 * the btree, under meta_lock held for writing; and the short wait for
 * memory that an insert or a lookup makes before it gives up.
 *
 * The journal entry comes first, so that the tree never holds a key a
 * replay would not bring back; until a leaf pins the entry, the journal
 * keeps it (journal.insert_seq). An insert that fails for any reason but
 * a short wait for memory latches the set as failed (fail.c): the tree
 * may then disagree with what was written.
 */

#include "hcache.h"

#include <linux/sched/mm.h>

/* How long an insert or lookup that found no memory keeps trying. */
#define HC_NOMEM_WAIT		HZ

/*
 * An insert or lookup found no memory for a node (the reserve drained,
 * allocation failing): wait a little for reclaim and say whether to try
 * again. @deadline starts at 0 and is set at the first failure; past it,
 * HC_NOMEM_WAIT later, the caller gives up, so that no request waits
 * forever (it holds io_ref, which a detach or stop waits for). Timed,
 * not counted: memalloc_retry_wait() sleeps a jiffy, so a count would
 * give a budget that follows HZ (50 tries were 200 ms at HZ=250). May
 * sleep.
 */
bool hc_nomem_retry(unsigned long *deadline)
{
	if (!*deadline)
		*deadline = (jiffies + HC_NOMEM_WAIT) | 1;	/* never 0 */
	else if (time_after(jiffies, *deadline))
		return false;
	memalloc_retry_wait(GFP_NOIO);
	return true;
}

/**
 * hc_insert() - journal a leaf key and insert it in the tree
 * @c: the set; meta_lock held for writing
 * @k: the key
 *
 * Memory pressure does not fail the set: an insert that found no node
 * (its reserve drained, allocation failing) changed nothing, and is tried
 * again after the reserve is topped up, evicting clean leaves, and a
 * short wait for reclaim; the key is journalled once, and inserting it
 * again changes nothing. Any other failure, or memory lasting out the
 * retries, latches the set as failed, as the tree may then disagree with
 * what was written.
 *
 * Return: 0 or -errno.
 */
int hc_insert(struct hc_cache_set *c, const struct hc_key *k)
{
	unsigned long nomem_deadline = 0;
	u64 seq = 0;	/* read below even when journalling failed */
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	ret = hc_journal_add(c, k, &seq);
	/* Until a leaf pins it, entries written meanwhile must keep it. */
	c->journal.insert_seq = seq;
	while (!ret) {
		ret = hc_btree_insert(c, k, seq);
		if (ret != -ENOMEM || !hc_nomem_retry(&nomem_deadline))
			break;
		ret = 0;
	}
	c->journal.insert_seq = 0;
	if (ret)
		hc_cache_set_meta_fail(c);
	return ret;
}

/*
 * hc_insert() for a key the cache may do without (a promotion): no
 * memory means it stays out, and the set goes on. Its journal entry
 * holds it already, so a whiteout over its range follows it there: a
 * replay must not bring back a clean key the tree never had, over which
 * a later write around the cache, finding nothing to drop, journalled
 * nothing. Return: 0, -ENOMEM, or hc_insert()'s error otherwise.
 */
int hc_insert_optional(struct hc_cache_set *c, const struct hc_key *k)
{
	struct hc_key w = {
		.bdev_id = k->bdev_id,
		.end = k->end,
		.size = k->size,
	};
	u64 seq = 0;	/* read below even when journalling failed */
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	ret = hc_journal_add(c, k, &seq);
	c->journal.insert_seq = seq;
	if (!ret)
		ret = hc_btree_insert(c, k, seq);
	c->journal.insert_seq = 0;
	if (ret == -ENOMEM) {
		/* What of it went in is clean data, right: dropping it is too. */
		if (!hc_journal_add(c, &w, &seq))
			return -ENOMEM;
		ret = -EIO;
	}
	if (ret)
		hc_cache_set_meta_fail(c);
	return ret;
}
