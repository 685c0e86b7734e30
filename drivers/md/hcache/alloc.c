// SPDX-License-Identifier: GPL-2.0
/*
 * alloc.c: the buckets of a cache set and their allocation: gens and prios
 * in memory and in the gen/prio chain on disk, the free lists with their
 * reserves, the replacement policies that choose what to evict, and the
 * space handed to cached data.
 *
 * A bucket is reused only after its gen was bumped and the new gen
 * persisted in a prio write (design.rst, crash consistency rule 2): the
 * refill invalidates a batch, writes the chain, then hands the batch out.
 * The one exception is a freshly formatted cache, whose buckets nothing
 * has ever pointed into.
 */

#include "hcache.h"
#include "evict.h"
#include "pset.h"
#include "trace.h"

#include <linux/random.h>
#include <linux/vmalloc.h>

#define HC_PRIO_MAX		0xffffU
#define HC_BTREE_RESERVE	16U
#define HC_DATA_BATCH		64U
#define HC_MOVE_RESERVE		8U

const char * const hc_replacement_names_table[HC_REPL_NR] = {
	[HC_REPL_LRU]		= "lru",
	[HC_REPL_FIFO]		= "fifo",
	[HC_REPL_RANDOM]	= "random",
};

/**
 * hc_alloc_init() - the buckets and free lists of a new set in memory
 * @c: the set, its geometry known
 * @fresh: the cache was just formatted: every bucket is usable as is
 *
 * Without @fresh the gens come from hc_prio_read() and the free lists
 * stay empty until the first refill, after the journal replay and the
 * mark pass have said which buckets are live. May sleep.
 *
 * Return: 0 or -ENOMEM.
 */
int hc_alloc_init(struct hc_cache_set *c, bool fresh)
{
	const struct hc_geom *g = &c->geom;
	u32 per = hc_pset_per_bucket(g->bucket_sectors << SECTOR_SHIFT);
	u64 data_buckets = hc_geom_usable_buckets(g);
	u64 i, next;
	int r;

	c->buckets = vzalloc(array_size(g->nbuckets, sizeof(*c->buckets)));
	c->prio_nr = DIV_ROUND_UP(g->nbuckets, per);
	c->prio_chain = kvcalloc(c->prio_nr, sizeof(u64), GFP_KERNEL);
	if (!c->buckets || !c->prio_chain)
		return -ENOMEM;
	c->free[HC_RESERVE_PRIO].target = c->prio_nr;
	c->free[HC_RESERVE_BTREE].target = HC_BTREE_RESERVE;
	c->free[HC_RESERVE_MOVE].target = clamp_t(u64, data_buckets / 16, 1,
						  HC_MOVE_RESERVE);
	c->free[HC_RESERVE_DATA].target = min_t(u64, HC_DATA_BATCH,
						data_buckets / 4);
	c->refill_max = c->prio_nr;
	for (r = 0; r < HC_RESERVE_NR; r++) {
		c->free[r].b = kvcalloc(c->free[r].target, sizeof(u64),
					GFP_KERNEL);
		if (!c->free[r].b)
			return -ENOMEM;
		c->refill_max += c->free[r].target;
	}
	/* A refill's work areas, so that it never fails for memory. */
	c->refill_cand = kvcalloc(c->refill_max, sizeof(u64), GFP_KERNEL);
	c->evict_cand = kvcalloc(c->refill_max, sizeof(*c->evict_cand),
				 GFP_KERNEL);
	c->prio_old = kvcalloc(c->prio_nr, sizeof(u64), GFP_KERNEL);
	c->prio_buf = kvzalloc(g->bucket_sectors << SECTOR_SHIFT, GFP_KERNEL);
	c->prio_buf_zero_from = 0;
	if (!c->refill_cand || !c->evict_cand || !c->prio_old || !c->prio_buf)
		return -ENOMEM;
	for (i = 0; i < g->nbuckets; i++) {
		c->buckets[i].m.type = hc_bucket_fixed_type(g, i);
		c->buckets[i].prio = HC_PRIO_MAX;
	}
	if (!fresh)
		return 0;

	/* Nothing has ever pointed into a fresh cache: fill the lists as is. */
	next = g->first_bucket;
	for (r = 0; r < HC_RESERVE_NR; r++) {
		struct hc_freelist *f = &c->free[r];

		while (f->nr < f->target && next < g->nbuckets) {
			if (c->buckets[next].m.type == HC_BUCKET_FREE) {
				c->buckets[next].on_freelist = 1;
				f->b[f->nr++] = next;
			}
			next++;
		}
	}
	c->fifo_cursor = next;
	return 0;
}

/**
 * hc_alloc_cursor_set() - send the next data buckets to @bucket on
 * @c: the set
 * @bucket: a bucket of the data area
 *
 * For tests (the debug build's alloc_cursor): the buckets on the data
 * free list become empty again (their gens were persisted bumped, so they
 * may be reused later as any empty bucket), and the next refill looks for
 * empty buckets from @bucket on. The open bucket is left to fill up.
 * Lets a test place data far into a big cache, past 2 TiB, without
 * writing everything before it.
 *
 * Return: 0, or -ERANGE if @bucket is outside the data area.
 */
int hc_alloc_cursor_set(struct hc_cache_set *c, u64 bucket)
{
	struct hc_freelist *f = &c->free[HC_RESERVE_DATA];

	if (bucket < c->geom.first_bucket || bucket >= c->geom.nbuckets)
		return -ERANGE;
	down_write(&c->meta_lock);
	while (f->nr)
		c->buckets[f->b[--f->nr]].on_freelist = 0;
	c->fifo_cursor = bucket;
	c->refill_futile = false;
	hc_avail_update(c);
	up_write(&c->meta_lock);
	return 0;
}

/**
 * hc_alloc_exit() - free what hc_alloc_init() allocated
 * @c: the set
 */
void hc_alloc_exit(struct hc_cache_set *c)
{
	int r;

	for (r = 0; r < HC_RESERVE_NR; r++)
		kvfree(c->free[r].b);
	kvfree(c->refill_cand);
	kvfree(c->evict_cand);
	kvfree(c->prio_old);
	kvfree(c->prio_buf);
	kvfree(c->prio_chain);
	vfree(c->buckets);
}

/*
 * The rotating cursor over the data area, [first_bucket, nbuckets): each
 * call gives the next bucket; nbuckets - first_bucket calls see each once.
 */
static u64 hc_cursor_next(struct hc_cache_set *c)
{
	u64 i = c->fifo_cursor;

	if (i < c->geom.first_bucket || i >= c->geom.nbuckets)
		i = c->geom.first_bucket;
	c->fifo_cursor = i + 1;
	return i;
}

/*
 * May @b's gen be bumped without passing the oldest pointer's limit
 * (HC_GEN_MAX_DISTANCE, or lower for tests)? If not, GC must drop the
 * stale pointers first.
 */
static bool hc_gen_may_bump(struct hc_cache_set *c, const struct hc_bucket *b)
{
	return !b->m.has_ptr ||
	       hc_gen_distance(b->gen + 1, b->m.oldest_gen) <=
	       c->gc.max_distance;
}

static bool hc_bucket_empty(struct hc_cache_set *c, u64 i)
{
	const struct hc_bucket *b = &c->buckets[i];

	return b->m.type == HC_BUCKET_FREE && !b->on_freelist &&
	       !b->replay_pin && !READ_ONCE(b->io_pin) && !b->m.clean &&
	       !b->m.dirty &&
	       i != c->open_bucket && i != c->gc.move_bucket;
}

static bool hc_bucket_evictable(struct hc_cache_set *c, u64 i)
{
	const struct hc_bucket *b = &c->buckets[i];

	return b->m.type == HC_BUCKET_DATA && !b->m.dirty && !b->on_freelist &&
	       !b->replay_pin && !READ_ONCE(b->io_pin) && i != c->open_bucket &&
	       i != c->gc.move_bucket;
}

/*
 * Choose up to @want buckets of clean data to evict, by the replacement
 * policy, into @out. Returns how many.
 */
static size_t hc_choose_evict(struct hc_cache_set *c, u64 *out, size_t want)
{
	const struct hc_geom *g = &c->geom;
	struct hc_evict_cand *cand;
	struct hc_evict_heap heap;
	size_t n = 0;
	u64 i, tries;
	u16 age;

	switch (c->replacement) {
	case HC_REPL_FIFO:
		for (tries = g->first_bucket; tries < g->nbuckets && n < want;
		     tries++) {
			i = hc_cursor_next(c);
			if (hc_bucket_evictable(c, i) &&
			    hc_gen_may_bump(c, &c->buckets[i]))
				out[n++] = i;
		}
		return n;
	case HC_REPL_RANDOM:
		for (tries = 0; tries < want * 16 && n < want; tries++) {
			i = get_random_u64() % g->nbuckets;
			if (hc_bucket_evictable(c, i) &&
			    hc_gen_may_bump(c, &c->buckets[i])) {
				c->buckets[i].on_freelist = 1; /* no repeats */
				out[n++] = i;
			}
		}
		for (i = 0; i < n; i++)
			c->buckets[out[i]].on_freelist = 0;
		return n;
	default:
		break;
	}

	/*
	 * lru: the lowest priorities go (evict.c); the others age by the
	 * highest of those, so that what stays untouched goes next.
	 */
	cand = c->evict_cand;
	hc_evict_init(&heap, cand, want);
	for (i = g->first_bucket; i < g->nbuckets; i++)
		if (hc_bucket_evictable(c, i) &&
		    hc_gen_may_bump(c, &c->buckets[i]))
			hc_evict_offer(&heap, i, c->buckets[i].prio);
	n = heap.nr;
	age = hc_evict_age(&heap);
	for (i = 0; i < n; i++) {
		out[i] = cand[i].bucket;
		c->buckets[out[i]].on_freelist = 1;	/* not aged */
	}
	if (n) {
		for (i = g->first_bucket; i < g->nbuckets; i++) {
			struct hc_bucket *b = &c->buckets[i];

			if (hc_bucket_evictable(c, i) && hc_gen_may_bump(c, b))
				b->prio -= min(b->prio, age);
		}
	}
	for (i = 0; i < n; i++)
		c->buckets[out[i]].on_freelist = 0;
	return n;
}

static void hc_bucket_discard(struct hc_cache_set *c, u64 bucket)
{
	const struct hc_geom *g = &c->geom;
	int ret;

	ret = blkdev_issue_discard(c->bdev, hc_bucket_to_sector(g, bucket),
				   g->bucket_sectors, GFP_NOIO);
	if (ret && ret != -EOPNOTSUPP)
		pr_warn_ratelimited("%pg: discard of bucket %llu failed: error %d\n",
				    c->bdev, bucket, ret);
}

/*
 * Write the gens and prios of every bucket into a new chain at @chain
 * (c->prio_nr buckets), name it in a journal entry, then free the old
 * chain. @chain's buckets either came from the prio reserve (their gens
 * persisted by an earlier write) or held no live pointer when their gens
 * were bumped for this write, so this write persists them.
 */
static int hc_prio_write_to(struct hc_cache_set *c, const u64 *chain)
{
	const struct hc_geom *g = &c->geom;
	u32 bytes = g->bucket_sectors << SECTOR_SHIFT;
	u32 per = hc_pset_per_bucket(bytes);
	u64 *old;
	u64 i;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	old = c->prio_old;
	for (i = 0; i < c->prio_nr; i++) {
		struct hc_bucket *b = &c->buckets[chain[i]];

		if (WARN_ON_ONCE(b->m.clean || b->m.dirty ||
				 chain[i] == c->open_bucket))
			hc_cache_set_error(c, "gen/prio chain bucket %llu is in use",
					   chain[i]);
		c->buckets[chain[i]].m.type = HC_BUCKET_PRIO;
		c->buckets[chain[i]].on_freelist = 0;
	}
	for (i = 0; i < c->prio_nr; i++) {
		struct hc_pset_info info = {
			.seq = c->journal.seq,
			.first = i * per,
			.nr = min_t(u64, per, g->nbuckets - i * per),
			.next_bucket = i + 1 < c->prio_nr ? chain[i + 1] : 0,
		};

		ret = hc_pset_encode(&info, c->set_magic, hc_prio_get, c,
				     c->prio_buf, bytes,
				     &c->prio_buf_zero_from);
		if (WARN_ON_ONCE(ret))
			goto out_undo;
		ret = hc_meta_io(c, REQ_OP_WRITE | REQ_META | REQ_FUA,
				 hc_bucket_to_sector(g, chain[i]),
				 c->prio_buf, bytes);
		if (ret)
			goto out_undo;
	}
	memcpy(old, c->prio_chain, c->prio_nr * sizeof(u64));
	memcpy(c->prio_chain, chain, c->prio_nr * sizeof(u64));
	ret = hc_journal_write(c);
	if (ret) {
		memcpy(c->prio_chain, old, c->prio_nr * sizeof(u64));
		goto out_undo;
	}
	for (i = 0; i < c->prio_nr; i++)
		if (old[i])
			hc_bucket_free_meta(c, old[i]);
	c->stats.prio_writes++;
	return 0;

out_undo:
	for (i = 0; i < c->prio_nr; i++)
		hc_bucket_free_meta(c, chain[i]);
	return ret;
}

/*
 * Nothing live in @i and no pointer, live or stale, into it: a clean stop
 * may mark it empty for the next registration (HC_BUCKET_DISK_EMPTY).
 */
static bool hc_bucket_unreferenced(struct hc_cache_set *c, u64 i)
{
	const struct hc_bucket *b = &c->buckets[i];

	return b->m.type == HC_BUCKET_FREE && !b->m.clean && !b->m.dirty &&
	       !b->m.ptrs && !b->m.has_ptr && !b->replay_pin &&
	       !READ_ONCE(b->io_pin) &&
	       i != c->open_bucket && i != c->gc.move_bucket;
}

/* pset.c's view of the buckets. */
void hc_prio_get(void *priv, u64 bucket, u8 *gen, u16 *prio, u8 *flags)
{
	struct hc_cache_set *c = priv;

	*gen = c->buckets[bucket].gen;
	*prio = c->buckets[bucket].prio;
	*flags = c->empty_marks && hc_bucket_unreferenced(c, bucket) ?
		 HC_BUCKET_DISK_EMPTY : 0;
}

static void hc_prio_set(void *priv, u64 bucket, u8 gen, u16 prio, u8 flags)
{
	struct hc_cache_set *c = priv;
	struct hc_bucket *b = &c->buckets[bucket];

	b->gen = gen;
	b->prio = prio;
	/* Marks count only as written by the clean stop before this load. */
	b->hinted = (flags & HC_BUCKET_DISK_EMPTY) && c->load.marks ?
		    HC_HINT_EMPTY : HC_HINT_NONE;
	c->mark_bg.hinted += b->hinted == HC_HINT_EMPTY;
}

/* Hinted buckets above the floor kept for metadata (struct hc_mark_bg). */
static u64 hc_mark_bg_room(const struct hc_cache_set *c)
{
	const struct hc_mark_bg *bg = &c->mark_bg;

	return bg->hinted > bg->floor ? bg->hinted - bg->floor : 0;
}

/*
 * What a refill may take while the background mark pass runs: whatever
 * the gen/prio chain and the btree need, and for data what is left of
 * the hinted buckets above the floor once they have it. Moving GC waits
 * for the pass: its list gets nothing.
 */
static size_t hc_mark_bg_want(struct hc_cache_set *c)
{
	u64 room = hc_mark_bg_room(c), meta = c->free[HC_RESERVE_PRIO].target -
		   c->free[HC_RESERVE_PRIO].nr +
		   c->free[HC_RESERVE_BTREE].target -
		   c->free[HC_RESERVE_BTREE].nr;
	u64 spare;

	if (c->free[HC_RESERVE_PRIO].nr < c->prio_nr)
		meta += c->prio_nr;
	spare = room > meta ? room - meta : 0;
	return meta + min_t(u64, c->free[HC_RESERVE_DATA].target -
			    c->free[HC_RESERVE_DATA].nr, spare);
}

/*
 * Refill the free lists: invalidate a batch of buckets (bump their gens),
 * persist the gens in a prio write, and only then hand them out, prio
 * reserve first, then btree, then data.
 */
static int hc_alloc_refill(struct hc_cache_set *c)
{
	const struct hc_geom *g = &c->geom;
	size_t want = 0, n = 0, nempty, used = 0, k;
	u64 limited = c->stats.gen_limited;
	u64 *cand, *chain;
	u64 i, tries;
	int r, ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->in_refill)
		return -EAGAIN;
	if (c->meta_failed)
		return -EIO;
	for (r = 0; r < HC_RESERVE_NR; r++)
		want += c->free[r].target - c->free[r].nr;
	if (c->free[HC_RESERVE_PRIO].nr < c->prio_nr)
		want += c->prio_nr;	/* this write's chain */
	if (c->mark_bg.running)
		want = min(want, hc_mark_bg_want(c));
	if (!want)
		return 0;
	if (WARN_ON_ONCE(want > c->refill_max))
		want = c->refill_max;
	cand = c->refill_cand;
	c->in_refill = true;

	/* Empty buckets first, from a rotating cursor to spread the wear. */
	for (tries = g->first_bucket; tries < g->nbuckets && n < want; tries++) {
		i = hc_cursor_next(c);
		/* Before the mark pass has counted them, only the marked. */
		if (c->mark_bg.running && c->buckets[i].hinted != HC_HINT_EMPTY)
			continue;
		if (hc_bucket_empty(c, i)) {
			if (hc_gen_may_bump(c, &c->buckets[i]))
				cand[n++] = i;
			else
				c->stats.gen_limited++;
		}
	}
	nempty = n;
	if (n < want && !c->mark_bg.running)
		n += hc_choose_evict(c, cand + n, want - n);
	/* Short of buckets, or held back by stale pointers: collect. */
	if (n < want || c->stats.gen_limited != limited)
		hc_gc_wake(c);
	if (!n) {
		ret = -ENOSPC;
		goto out;
	}
	for (k = 0; k < n; k++) {
		struct hc_bucket *b = &c->buckets[cand[k]];

		if (b->hinted == HC_HINT_EMPTY) {
			b->hinted = HC_HINT_TAKEN;
			c->mark_bg.hinted--;
		}
		/* Reads in flight from it check the gen when they complete. */
		WRITE_ONCE(b->gen, b->gen + 1);
		if (!b->gen)
			c->stats.gen_wrapped++;
		b->m.clean = 0;
		b->m.type = HC_BUCKET_FREE;
		b->on_freelist = 1;	/* not chosen again meanwhile */
	}
	c->stats.buckets_invalidated += n;

	if (c->free[HC_RESERVE_PRIO].nr >= c->prio_nr) {
		struct hc_freelist *f = &c->free[HC_RESERVE_PRIO];

		f->nr -= c->prio_nr;
		chain = &f->b[f->nr];
	} else if (nempty >= c->prio_nr) {
		/*
		 * Empty buckets may be nodes freed since the last journal
		 * entry, which still names a root that reaches them: name
		 * the current root first, then write over them.
		 */
		ret = hc_journal_write(c);
		if (ret) {
			for (k = 0; k < n; k++)
				c->buckets[cand[k]].on_freelist = 0;
			goto out;
		}
		chain = cand;
		used = c->prio_nr;
	} else {
		pr_err("%pg: no bucket free for the gen/prio chain\n", c->bdev);
		for (k = 0; k < n; k++)
			c->buckets[cand[k]].on_freelist = 0;
		ret = -ENOSPC;
		goto out;
	}
	ret = hc_prio_write_to(c, chain);
	if (ret) {
		for (k = used; k < n; k++)
			c->buckets[cand[k]].on_freelist = 0;
		goto out;
	}

	for (k = used; k < n; k++) {
		for (r = 0; r < HC_RESERVE_NR; r++)
			if (c->free[r].nr < c->free[r].target &&
			    !(r == HC_RESERVE_MOVE && c->mark_bg.running))
				break;
		if (r == HC_RESERVE_NR) {
			c->buckets[cand[k]].on_freelist = 0;
			continue;
		}
		if (c->discard)
			hc_bucket_discard(c, cand[k]);
		c->free[r].b[c->free[r].nr++] = cand[k];
	}
out:
	trace_hcache_refill(c->bdev->bd_dev, want, n, ret);
	c->in_refill = false;
	hc_avail_update(c);
	return ret;
}

/* A free list run down to half: the next allocation from it refills. */
static bool hc_freelist_low(struct hc_cache_set *c,
			    const struct hc_freelist *f)
{
	return f->nr <= f->target / 2 && !c->in_refill;
}

/**
 * hc_data_open_needs_io() - would opening a data bucket now write metadata?
 * @c: the set; meta_lock held for writing
 *
 * A submit_bio() context may open a bucket, but not wait for I/O: what it
 * submits is queued until it returns (current->bio_list).
 *
 * Return: true if hc_bucket_alloc() would refill the data list first
 * (writing the gen/prio chain and a journal entry).
 */
bool hc_data_open_needs_io(struct hc_cache_set *c)
{
	lockdep_assert_held_write(&c->meta_lock);
	return hc_freelist_low(c, &c->free[HC_RESERVE_DATA]);
}

/**
 * hc_bucket_alloc() - take a bucket from a free list
 * @c: the set; meta_lock held for writing
 * @r: the reserve to take from
 * @type: what the bucket will hold (enum hc_bucket_type)
 * @bucket: receives the bucket number
 *
 * Refills the lists first when they run low (which writes the gen/prio
 * chain and a journal entry). Btree allocations fall back on the data
 * list. May sleep.
 *
 * Return: 0, -ENOSPC if nothing can be freed, or an I/O error.
 */
int hc_bucket_alloc(struct hc_cache_set *c, enum hc_reserve r, u8 type,
		    u64 *bucket)
{
	struct hc_freelist *f = &c->free[r];
	struct hc_bucket *b;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (hc_freelist_low(c, f)) {
		/*
		 * Each refill writes a journal entry, which a cache full of
		 * dirty data can repeat with no insert in between to keep
		 * the journal's window short: keep it short here.
		 */
		if (r == HC_RESERVE_DATA) {
			/* Nothing became reclaimable since the last try. */
			if (c->refill_futile && !f->nr)
				return -ENOSPC;
			ret = hc_journal_make_room(c);
			if (ret)
				return ret;
		}
		ret = hc_alloc_refill(c);
		if (r == HC_RESERVE_DATA)
			c->refill_futile = !f->nr;
		if (ret && !f->nr)
			return ret;
	}
	if (!f->nr && r == HC_RESERVE_BTREE && c->free[HC_RESERVE_DATA].nr)
		f = &c->free[HC_RESERVE_DATA];
	if (!f->nr)
		return -ENOSPC;
	*bucket = f->b[--f->nr];
	b = &c->buckets[*bucket];
	if (WARN_ON_ONCE(b->m.clean || b->m.dirty || !b->on_freelist))
		hc_cache_set_error(c, "bucket %llu on a free list is in use",
				   *bucket);
	b->on_freelist = 0;
	b->m.type = type;
	b->prio = HC_PRIO_MAX;
	return 0;
}

/**
 * hc_bucket_free_meta() - a metadata bucket is no longer referenced
 * @c: the set; meta_lock held for writing
 * @bucket: the bucket
 *
 * The bucket becomes free; it is reused only after a refill bumps its gen.
 */
void hc_bucket_free_meta(struct hc_cache_set *c, u64 bucket)
{
	struct hc_bucket *b = &c->buckets[bucket];

	lockdep_assert_held_write(&c->meta_lock);
	if (WARN_ON_ONCE(b->m.clean || b->m.dirty))
		hc_cache_set_error(c, "freeing %s bucket %llu, which holds live data",
				   hc_bucket_type_name(b->m.type), bucket);
	b->m.type = HC_BUCKET_FREE;
	b->m.clean = 0;
	b->m.dirty = 0;
	b->on_freelist = 0;
	/* A node's pointer is gone with it; data keys would still count. */
	if (!b->m.ptrs)
		b->m.has_ptr = 0;
	/*
	 * Handed out empty during the pass behind I/O, and metadata since:
	 * no data key can point into it, so a refill may take it again
	 * (struct hc_mark_bg). Any other bucket waits for the pass, as
	 * pointers it has not counted yet may point into it.
	 */
	if (c->mark_bg.running && b->hinted == HC_HINT_TAKEN) {
		b->hinted = HC_HINT_EMPTY;
		c->mark_bg.hinted++;
	}
}

/* Space from the open bucket, @c->alloc_lock held; -EAGAIN if too little. */
static int hc_open_carve(struct hc_cache_set *c, u32 want, u32 align,
			 bool whole, u8 *gen, u64 *offset, u32 *got)
{
	const struct hc_geom *g = &c->geom;
	u32 room = c->open_bucket ? g->bucket_sectors - c->open_used : 0;

	lockdep_assert_held(&c->alloc_lock);
	if (room < align || (whole && room < want))
		return -EAGAIN;
	/*
	 * io_pin is 16 bits: a bucket with that many writes in flight into it
	 * (512-byte writes into a bucket of 32 MiB or more) is left for a new
	 * one rather than let the count wrap and the bucket look reusable.
	 */
	if (c->buckets[c->open_bucket].io_pin == U16_MAX)
		return -EAGAIN;
	*got = min(want, room - room % align);
	*gen = c->buckets[c->open_bucket].gen;
	*offset = hc_bucket_to_sector(g, c->open_bucket) + c->open_used;
	c->open_used += *got;
	c->buckets[c->open_bucket].io_pin++;
	return 0;
}

/**
 * hc_open_bucket_take() - space on the cache device for a write in flight
 * @c: the set; meta_lock held, for writing if @may_open
 * @want: sectors wanted, a multiple of @align
 * @align: sectors of the smallest piece worth having (the block size)
 * @whole: all of @want or nothing: a bucket's worth at most
 * @may_open: meta_lock is held for writing, so a new bucket may be opened
 * @gen: receives the gen the key's pointer must carry
 * @offset: receives the cache sector
 * @got: receives how many sectors were handed out, at most @want
 *
 * Hands out what is left of the open bucket rather than waste it, so @got
 * may be less than @want (unless @whole); the caller splits its I/O there.
 * Carving the open bucket needs meta_lock for reading only (and
 * alloc_lock, taken here), so that I/O does not queue behind metadata
 * writes; opening a new bucket, a free-list operation, needs it for
 * writing. The bucket is pinned (hc_bucket_unpin()) so that no refill
 * takes it while the data is written and before its key is in the tree.
 * May sleep if @may_open.
 *
 * Return: 0; -EAGAIN if a new bucket is needed and not @may_open; or
 * hc_bucket_alloc()'s error.
 */
int hc_open_bucket_take(struct hc_cache_set *c, u32 want, u32 align,
			bool whole, bool may_open, u8 *gen, u64 *offset,
			u32 *got)
{
	u64 bucket;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	if (!want || !align || want % align ||
	    (whole && want > c->geom.bucket_sectors))
		return -EINVAL;
	spin_lock_irq(&c->alloc_lock);
	ret = hc_open_carve(c, want, align, whole, gen, offset, got);
	spin_unlock_irq(&c->alloc_lock);
	if (ret != -EAGAIN || !may_open)
		return ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_bucket_alloc(c, HC_RESERVE_DATA, HC_BUCKET_DATA, &bucket);
	if (ret)
		return ret;
	if (atomic64_add_return(c->geom.bucket_sectors, &c->gc.written) >=
	    c->gc.written_limit)
		wake_up(&c->gc.wait);
	spin_lock_irq(&c->alloc_lock);
	c->open_bucket = bucket;
	c->open_used = 0;
	ret = hc_open_carve(c, want, align, whole, gen, offset, got);
	spin_unlock_irq(&c->alloc_lock);
	return ret;
}

/* Drop an io_pin, and an inplace_pin with @in_place; any context. */
static void hc_bucket_drop_pins(struct hc_cache_set *c, u64 offset,
				bool in_place)
{
	struct hc_bucket *b = &c->buckets[hc_sector_to_bucket(&c->geom,
							       offset)];
	unsigned long flags;

	spin_lock_irqsave(&c->alloc_lock, flags);
	if (!WARN_ON_ONCE(!b->io_pin))
		b->io_pin--;
	if (in_place && !WARN_ON_ONCE(!b->inplace_pin))
		b->inplace_pin--;
	spin_unlock_irqrestore(&c->alloc_lock, flags);
}

/**
 * hc_bucket_unpin() - a write into a bucket is done
 *	(hc_open_bucket_take())
 * @c: the set; meta_lock held for writing
 * @offset: the cache sector hc_open_bucket_take() handed out
 */
void hc_bucket_unpin(struct hc_cache_set *c, u64 offset)
{
	lockdep_assert_held_write(&c->meta_lock);
	hc_bucket_drop_pins(c, offset, false);
}

/**
 * hc_bucket_unpin_in_place() - an overwrite in place into a bucket is done
 * @c: the set
 * @offset: the cache sector it wrote
 *
 * The pins of hc_write_in_place() (write.c), let go of when its I/O
 * completes, in any context: under alloc_lock alone, like every change of
 * io_pin. Whoever reads io_pin under meta_lock held for writing (a refill,
 * moving GC's choice) may see it drop meanwhile, which only ever happens
 * once the data has landed: the value read is never too low.
 */
void hc_bucket_unpin_in_place(struct hc_cache_set *c, u64 offset)
{
	hc_bucket_drop_pins(c, offset, true);
}

/**
 * hc_bucket_touch() - a read hit a bucket: the lru policy keeps it longer
 * @c: the set; meta_lock held, for reading at least
 * @offset: a cache sector in the bucket
 *
 * Racing refills may age the priority at the same time; either value is
 * fine for a replacement heuristic.
 */
void hc_bucket_touch(struct hc_cache_set *c, u64 offset)
{
	struct hc_bucket *b = &c->buckets[hc_sector_to_bucket(&c->geom,
							       offset)];

	if (READ_ONCE(b->prio) != HC_PRIO_MAX)
		WRITE_ONCE(b->prio, HC_PRIO_MAX);
}

/**
 * hc_prio_write() - persist every bucket's gen and prio now
 * @c: the set; meta_lock held for writing
 *
 * Takes the new chain from the prio reserve (refilling it first if need
 * be). Used at a clean stop, so that lru priorities survive it; gens are
 * persisted by every refill anyway. May sleep.
 *
 * Return: 0 or -errno.
 */
int hc_prio_write(struct hc_cache_set *c)
{
	struct hc_freelist *f = &c->free[HC_RESERVE_PRIO];
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (f->nr < c->prio_nr) {
		ret = hc_alloc_refill(c);
		if (ret)
			return ret;
	}
	if (f->nr < c->prio_nr)
		return -ENOSPC;
	f->nr -= c->prio_nr;
	/* On failure the chain's buckets are free, off the list. */
	return hc_prio_write_to(c, &f->b[f->nr]);
}

/**
 * hc_prio_read() - read the gen/prio chain into the buckets
 * @c: the set, hc_alloc_init() done without fresh
 * @head: the chain's first bucket, from the newest journal entry
 *
 * May sleep.
 *
 * Return: 0, an I/O error, or -EUCLEAN for a chain that does not validate
 * (logged with the reason).
 */
int hc_prio_read(struct hc_cache_set *c, u64 head)
{
	const struct hc_geom *g = &c->geom;
	u32 bytes = g->bucket_sectors << SECTOR_SHIFT;
	u32 per = hc_pset_per_bucket(bytes);
	struct hc_pset_info info;
	const char *why;
	u64 bucket = head, i;
	int ret;

	for (i = 0; i < c->prio_nr; i++) {
		if (bucket < g->first_bucket || bucket >= g->nbuckets) {
			hc_cache_set_error(c, "gen/prio chain: bucket %llu out of range",
					   bucket);
			return -EUCLEAN;
		}
		ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
				 hc_bucket_to_sector(g, bucket), c->node_buf,
				 bytes);
		if (ret)
			return ret;
		ret = hc_pset_decode(c->node_buf, bytes, c->set_magic,
				     g->nbuckets, i * per, hc_prio_set, c,
				     &info, &why);
		if (ret) {
			hc_cache_set_error(c, "gen/prio set in bucket %llu: %s",
					   bucket, why);
			return -EUCLEAN;
		}
		c->prio_chain[i] = bucket;
		c->buckets[bucket].m.type = HC_BUCKET_PRIO;
		bucket = info.next_bucket;
	}
	return 0;
}

/*
 * Live dirty sectors per backing device, for writeback (dirty_data, the
 * rate controller, the move to clean). Keys of an id no longer in the
 * table are dead and not counted.
 */
static void hc_dirty_note(struct hc_cache_set *c, u32 id, u64 sectors,
			  bool add)
{
	struct hc_bdev_entry *e = hc_bdev_table_find_id(c->table, id);

	if (!e)
		return;
	if (add) {
		e->dirty_sectors += sectors;
	} else if (WARN_ON_ONCE(e->dirty_sectors < sectors)) {
		hc_cache_set_error(c, "id %u has %llu dirty sectors, loses %llu",
				   id, e->dirty_sectors, sectors);
		e->dirty_sectors = 0;
	} else {
		e->dirty_sectors -= sectors;
	}
}

/**
 * hc_dirty_sectors() - live dirty sectors of a backing device
 * @c: the set; meta_lock held
 * @id: the device's id
 *
 * Return: the count, 0 for an id not in the table.
 */
u64 hc_dirty_sectors(struct hc_cache_set *c, u32 id)
{
	struct hc_bdev_entry *e = hc_bdev_table_find_id(c->table, id);

	lockdep_assert_held(&c->meta_lock);
	if (!e)
		return 0;
	/* Not counted to the end yet: never clean (struct hc_mark_bg). */
	return e->dirty_sectors + c->mark_bg.running;
}

/**
 * hc_bucket_key_added() - a key was stored in a leaf: count its sectors
 * @c: the set; meta_lock held for writing
 * @k: the key as stored
 */
void hc_bucket_key_added(struct hc_cache_set *c, const struct hc_key *k)
{
	if (hc_mark_bg_counts(c, k->bdev_id, k->end))
		hc_bucket_key_count(c, k);
}

/**
 * hc_bucket_key_count() - count a leaf key's sectors in its bucket
 * @c: the set; meta_lock held for writing
 * @k: the key
 *
 * hc_bucket_key_added() for keys the background mark pass may count, and
 * that pass's own counting of every key it walks.
 */
void hc_bucket_key_count(struct hc_cache_set *c, const struct hc_key *k)
{
	struct hc_bucket *b;
	u8 ptr_gen;

	if (!k->nr_ptrs)
		return;
	b = &c->buckets[hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr))];
	ptr_gen = hc_ptr_gen(k->ptr);
	b->m.ptrs++;
	hc_mark_note_gen(&b->m, b->gen, ptr_gen);
	hc_gc_note_ptr(c, k);
	if (hc_ptr_stale(b->gen, ptr_gen))
		return;
	if (WARN_ON_ONCE(b->m.type != HC_BUCKET_DATA &&
			 b->m.type != HC_BUCKET_FREE))
		hc_cache_set_error(c, "key %u:%llu points into %s bucket %lld",
				   k->bdev_id, hc_key_start(k),
				   hc_bucket_type_name(b->m.type),
				   (long long)(b - c->buckets));
	b->m.type = HC_BUCKET_DATA;
	if (k->flags & HC_KEY_DIRTY) {
		b->m.dirty += k->size;
		hc_dirty_note(c, k->bdev_id, k->size, true);
	} else {
		b->m.clean += k->size;
	}
}

/**
 * hc_bucket_sectors_removed() - bset.c's callback: sectors overwritten
 * @priv: the set; meta_lock held for writing
 * @k: the key as it was
 * @start: first sector overwritten
 * @end: sector after the last
 *
 * Counts the keys pointing into the bucket, stale or not: a key wholly
 * overwritten is gone, one split in two is one more. When none is left
 * the bucket's oldest gen no longer limits its reuse. Only a live
 * pointer's sectors were counted, so only they are taken off.
 */
void hc_bucket_sectors_removed(void *priv, const struct hc_key *k, u64 start,
			       u64 end)
{
	struct hc_cache_set *c = priv;
	struct hc_bucket *b;
	u32 *count;

	if (!k->nr_ptrs || !hc_mark_bg_counts(c, k->bdev_id, k->end))
		return;
	b = &c->buckets[hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr))];
	if (start == hc_key_start(k) && end == k->end) {
		/* An error, so that no clean stop marks it empty from this. */
		if (WARN_ON_ONCE(!b->m.ptrs))
			hc_cache_set_error(c, "bucket %lld: a key goes, none was counted",
					   (long long)(b - c->buckets));
		else if (!--b->m.ptrs)
			b->m.has_ptr = 0;
	} else {
		if (start > hc_key_start(k) && end < k->end)
			b->m.ptrs++;
		/* What is left of it may sit where GC's walk has been. */
		hc_gc_note_ptr(c, k);
	}
	if (hc_ptr_stale(b->gen, hc_ptr_gen(k->ptr)))
		return;
	/* Live data went: a refill may find a bucket to reclaim now. */
	c->refill_futile = false;
	count = k->flags & HC_KEY_DIRTY ? &b->m.dirty : &b->m.clean;
	if (*count < end - start) {
		hc_cache_set_error(c, "bucket %lld (%s) has %u sectors, key %u:%llu loses %llu",
				   (long long)(b - c->buckets),
				   hc_bucket_type_name(b->m.type), *count,
				   k->bdev_id, hc_key_start(k), end - start);
		WARN_ON_ONCE(1);
		*count = 0;
	} else {
		*count -= end - start;
	}
	if (k->flags & HC_KEY_DIRTY)
		hc_dirty_note(c, k->bdev_id, end - start, false);
}

/* @n buckets as a percentage of those outside the superblock and journal. */
static u32 hc_usable_percent(struct hc_cache_set *c, u64 n)
{
	u64 usable = hc_geom_usable_buckets(&c->geom);

	return usable ? div64_u64(n * 100, usable) : 0;
}

/**
 * hc_avail_update() - recount what the bypass and admission decisions
 *	look at
 * @c: the set; meta_lock held for writing
 *
 * Called after each refill and at registration, so that the I/O path
 * reads a word instead of counting buckets per I/O.
 */
void hc_avail_update(struct hc_cache_set *c)
{
	u64 free, avail = hc_buckets_available(c, &free);

	WRITE_ONCE(c->avail_percent, hc_usable_percent(c, avail));
	WRITE_ONCE(c->free_percent, hc_usable_percent(c, free));
	hc_gc_avail_changed(c);
}

/**
 * hc_avail_percent() - share of the data buckets that could take new data
 * @c: the set; meta_lock held
 *
 * Return: hc_buckets_available() as a percentage of the buckets outside
 * the superblock and journal.
 */
u32 hc_avail_percent(struct hc_cache_set *c)
{
	return hc_usable_percent(c, hc_buckets_available(c, NULL));
}

/**
 * hc_buckets_available() - buckets that could take new data
 * @c: the set; meta_lock held
 * @free: if not NULL, set to how many of them hold no data at all and are
 *	not on a free list: the lists keep up to about a hundred buckets
 *	ready, which would make a small cache with big buckets never look
 *	full to the admission policy
 *
 * Return: buckets outside the superblock and journal that hold neither
 * metadata nor dirty data; while the background mark pass runs, only the
 * hinted buckets data may still get (struct hc_mark_bg).
 */
u64 hc_buckets_available(struct hc_cache_set *c, u64 *free)
{
	u64 i, n = 0, nfree = 0;

	if (c->mark_bg.running) {
		n = hc_mark_bg_room(c);
		if (free)
			*free = n;
		return n;
	}

	for (i = 0; i < c->geom.nbuckets; i++) {
		const struct hc_bucket *b = &c->buckets[i];

		if ((b->m.type == HC_BUCKET_FREE ||
		     b->m.type == HC_BUCKET_DATA) && !b->m.dirty)
			n++;
		if (hc_bucket_empty(c, i))
			nfree++;
	}
	if (free)
		*free = nfree;
	return n;
}

/*
 * Cache space for @want sectors, a multiple of hc_data_align(): carved
 * from the open bucket under meta_lock held for reading, which is what
 * nearly every call needs; opening a new bucket takes it for writing, and
 * may wait for a refill's I/O: -EAGAIN then, with HC_OPEN_NOIO.
 */
int hc_cache_space(struct hc_cache_set *c, u32 want, bool whole,
		   enum hc_open open, u8 *gen, u64 *offset, u32 *got)
{
	u32 align = hc_data_align(c);
	int ret;

	down_read(&c->meta_lock);
	ret = c->meta_failed ? -EIO :
	      hc_open_bucket_take(c, want, align, whole, false, gen, offset,
				  got);
	up_read(&c->meta_lock);
	if (ret != -EAGAIN)
		return ret;
	hc_meta_lock_write(c);
	if (c->meta_failed)
		ret = -EIO;
	else if (open == HC_OPEN_NOIO && hc_data_open_needs_io(c))
		ret = -EAGAIN;
	else
		ret = hc_open_bucket_take(c, want, align, whole, true, gen,
					  offset, got);
	up_write(&c->meta_lock);
	return ret;
}
