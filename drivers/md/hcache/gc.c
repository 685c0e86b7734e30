// SPDX-License-Identifier: GPL-2.0
/*
 * gc.c: garbage collection of a cache set, run by its hcache_gc thread.
 *
 * Buckets are reused by bumping their gens (alloc.c), which leaves stale
 * pointers in the btree: they cost nothing to lookups, but a bucket's gen
 * may not run more than gen_max_distance ahead of the oldest pointer into
 * it, so stale pointers must go before their buckets can be reused for
 * long. Dirty data, never evicted, can also end up spread thinly over
 * many buckets, none of which can be reused until writeback gets to all
 * of it. A run does two things about that (moving GC first, which is
 * quick and what a cache taking writes needs most):
 *
 * 1. Btree GC walks every leaf in key order, a few leaves per hold of
 *    meta_lock but at most one written, so foreground I/O waits for at
 *    most one leaf rewrite.
 *    Stale keys and dead keys (of a backing-device id no longer in the
 *    table) are dropped by rewriting the leaf when they are worth it (an
 *    eighth of its keys), or at once when a stale key's bucket is near
 *    its gen limit. Small leaves, and small interior parents, are merged
 *    with a sibling. Meanwhile the oldest gen of every pointer kept is
 *    noted per bucket, including the pointers that inserts add or cut
 *    while the walk is under way (hc_gc_note_key()); at the end each
 *    bucket's oldest gen becomes the one noted, which frees the allocator
 *    from the pointers dropped.
 * 2. Moving GC picks the data buckets whose dirty sectors fill at most
 *    half of them, fewest first, as many as the moving reserve can take,
 *    and copies their dirty data into buckets of its own (the moving
 *    reserve, which data writes cannot drain), a batch of pieces read
 *    and then written all in flight at once. Each copy is inserted with
 *    a compare-and-swap: only where the tree still maps the sectors as
 *    read, dirty, to the same live pointer. The emptied buckets keep
 *    their clean data, which the replacement policy may then evict, and
 *    refill the reserve for another round (hc_gc_moving()).
 *
 * A run starts when the allocator finds too few buckets to reclaim or a
 * gen limit in its way, after an eighth of the cache was allocated since
 * the last run, and when trigger_gc is written (which waits for it).
 * Moving alone, without the walk, runs whenever fewer than
 * HC_MOVE_UNTIL_PERCENT of the buckets can take new data (hc_gc_move_due()).
 */

#include "hcache.h"
#include "debug.h"
#include "bypass.h"
#include "trace.h"

#include <linux/kthread.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

/* Leaves looked at per hold of meta_lock, if none is written. */
#define HC_GC_LEAVES_PER_LOCK	4U
/* Pieces copied per moving batch, and their bytes at most. */
#define HC_MOVE_PIECES		256U
#define HC_MOVE_BUF_BYTES	(1U << 20)
/*
 * Moving rounds per GC run at most, and where a run the allocator started
 * stops: twice the share below which writes bypass (HC_BYPASS_FULL_PERCENT).
 */
#define HC_MOVE_ROUNDS		8U
#define HC_MOVE_UNTIL_PERCENT	(2 * HC_BYPASS_FULL_PERCENT)

/**
 * hc_gc_note_ptr() - a pointer into a bucket exists during the mark
 * @c: the set; meta_lock held for writing
 * @k: a leaf key with a pointer
 *
 * Called for every key the walk leaves in a leaf and, while a walk is
 * under way, for every key an insert adds or cuts (alloc.c), so that the
 * oldest gen computed at the end is never newer than a pointer left in
 * the tree.
 */
void hc_gc_note_ptr(struct hc_cache_set *c, const struct hc_key *k)
{
	struct hc_gc *gc = &c->gc;
	u64 b = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr));
	u8 gen = hc_ptr_gen(k->ptr), bgen = c->buckets[b].gen;

	if (!gc->marking || b >= c->geom.nbuckets)
		return;
	if (!__test_and_set_bit(b, gc->seen) ||
	    hc_gen_distance(bgen, gen) > hc_gen_distance(bgen, gc->oldest[b]))
		gc->oldest[b] = gen;
}

/* Btree GC's verdict on a leaf key. */
static int hc_gc_key(void *priv, const struct hc_key *k)
{
	struct hc_cache_set *c = priv;
	const struct hc_bucket *b;
	u8 distance;

	if (!k->nr_ptrs)
		return HC_GC_KEEP;
	/*
	 * Dead: handed out, then left the table. An id never handed out
	 * (the debugfs fill's) is left alone.
	 */
	if (k->bdev_id < c->table->next_id &&
	    !hc_bdev_table_find_id(c->table, k->bdev_id))
		return HC_GC_DROP;
	b = &c->buckets[hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr))];
	distance = hc_gen_distance(b->gen, hc_ptr_gen(k->ptr));
	if (distance)
		return distance >= c->gc.max_distance / 2 ? HC_GC_DROP_NOW :
							    HC_GC_DROP;
	return HC_GC_KEEP;
}

/* Every bucket's oldest gen from what the walk noted. */
static void hc_gc_mark_done(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;
	u64 i;

	lockdep_assert_held_write(&c->meta_lock);
	for (i = c->geom.first_bucket; i < c->geom.nbuckets; i++) {
		struct hc_bucket *b = &c->buckets[i];

		if (!b->m.ptrs)
			continue;
		if (test_bit(i, gc->seen)) {
			b->m.oldest_gen = gc->oldest[i];
			b->m.has_ptr = 1;
		}
	}
	gc->marking = false;
}

static int hc_gc_btree(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;
	struct hc_btree_gc_stats st = {};
	struct hc_pos pos = { 0, 0 };
	unsigned int i;
	int ret = 1;

	hc_meta_lock_write(c);
	bitmap_zero(gc->seen, c->geom.nbuckets);
	gc->marking = true;
	up_write(&c->meta_lock);

	while (ret > 0 && !kthread_should_stop()) {
		hc_meta_lock_write(c);
		/*
		 * Leaves that only need looking at go a few per hold; one
		 * that was written (rewritten or merged) ends the hold, so
		 * that writes, which queue on meta_lock, wait for at most
		 * one node write of GC's.
		 */
		for (i = 0; i < HC_GC_LEAVES_PER_LOCK && ret > 0; i++) {
			u64 writes = st.nodes_rewritten + c->stats.node_merges;

			ret = hc_btree_gc_leaf(c, &pos, hc_gc_key, c, &st);
			if (st.nodes_rewritten + c->stats.node_merges != writes)
				break;
		}
		if (ret <= 0) {
			if (!ret)
				hc_gc_mark_done(c);
			gc->marking = false;
			hc_avail_update(c);
		}
		up_write(&c->meta_lock);
		cond_resched();
	}
	if (ret > 0) {	/* stopped half way: the marks are incomplete */
		hc_meta_lock_write(c);
		gc->marking = false;
		up_write(&c->meta_lock);
	}
	gc->nodes_rewritten += st.nodes_rewritten;
	gc->keys_dropped += st.keys_dropped;
	return ret < 0 ? ret : 0;
}

/* ---- Moving GC ---------------------------------------------------------- */

/**
 * struct hc_move_piece - dirty data to copy
 * @key: the key as found: range, old pointer, flags
 * @ptr: the new pointer, once space was found
 * @buf_off: where its data is in the buffer
 * @head: sectors copied before the key's first: with data checksums, a
 *	piece is copied in whole chunks, which keep their checksums
 * @len: sectors copied, from @head sectors before the key's data
 * @bad: the copy read did not match its checksums: not moved
 */
struct hc_move_piece {
	struct hc_key	key;
	u64		ptr;
	u32		buf_off;
	u32		head;
	u32		len;
	bool		bad;
};

struct hc_move {
	struct hc_cache_set	*c;
	struct hc_move_piece	*p;
	unsigned int		nr;
	u32			bytes;
	bool			full;
};

struct hc_move_cand {
	u32	dirty;
	u64	bucket;
};

static int hc_move_cand_cmp(const void *a, const void *b)
{
	const struct hc_move_cand *x = a, *y = b;

	return x->dirty < y->dirty ? -1 : x->dirty > y->dirty;
}

/* Can @i's dirty data be moved out, and is it worth it? */
static bool hc_move_wanted(struct hc_cache_set *c, u64 i)
{
	const struct hc_bucket *b = &c->buckets[i];

	return b->m.type == HC_BUCKET_DATA && b->m.dirty &&
	       b->m.dirty <= c->geom.bucket_sectors / 2 && !READ_ONCE(b->io_pin) &&
	       !b->on_freelist && !b->replay_pin && i != c->open_bucket &&
	       i != c->gc.move_bucket;
}

/*
 * Choose the buckets to empty of dirty data: fewest dirty sectors first,
 * as many as the moving reserve (and what is left of the bucket being
 * filled) can take. Returns how many, flagged in gc->move until the end
 * of moving. No overwrite in place starts in a flagged bucket, and none
 * is in flight in one (hc_move_wanted() asks for no io_pin): the copy
 * read from it is the data its keys vouch for until they are swapped.
 */
static u64 hc_move_choose(struct hc_cache_set *c)
{
	const struct hc_geom *g = &c->geom;
	struct hc_gc *gc = &c->gc;
	struct hc_move_cand *cand;
	u64 i, nr = 0, n, room;

	lockdep_assert_held_write(&c->meta_lock);
	bitmap_zero(gc->move, g->nbuckets);
	room = (u64)c->free[HC_RESERVE_MOVE].nr * g->bucket_sectors;
	if (gc->move_bucket)
		room += g->bucket_sectors - gc->move_used;
	cand = hc_big_array(g->nbuckets, sizeof(*cand), true);
	if (!cand)
		return 0;
	for (i = g->first_bucket; i < g->nbuckets; i++)
		if (hc_move_wanted(c, i))
			cand[nr++] = (struct hc_move_cand){
				c->buckets[i].m.dirty, i };
	sort(cand, nr, sizeof(*cand), hc_move_cand_cmp, NULL);
	for (n = 0; n < nr && cand[n].dirty <= room; n++) {
		room -= cand[n].dirty;
		__set_bit(cand[n].bucket, gc->move);
	}
	kvfree(cand);
	return n;
}

/* hc_btree_scan_all()'s callback: collect dirty keys in chosen buckets. */
static void hc_move_collect(void *priv, const struct hc_key *k)
{
	struct hc_move *mv = priv;
	struct hc_cache_set *c = mv->c;
	u64 off = hc_ptr_offset(k->ptr);
	u64 b = hc_sector_to_bucket(&c->geom, off);
	struct hc_move_piece *p = &mv->p[mv->nr];
	u32 head = 0, len = k->size;

	if (!(k->flags & HC_KEY_DIRTY) || !test_bit(b, c->gc.move) ||
	    hc_ptr_stale(c->buckets[b].gen, hc_ptr_gen(k->ptr)))
		return;
	if (hc_csum_on(c)) {
		head = off % HC_CSUM_CHUNK_SECTORS;
		len = round_up(off + k->size, HC_CSUM_CHUNK_SECTORS) - off +
		      head;
	}
	if (mv->nr >= HC_MOVE_PIECES ||
	    mv->bytes + (len << SECTOR_SHIFT) > HC_MOVE_BUF_BYTES) {
		mv->full = true;
		return;
	}
	p->key = *k;
	p->buf_off = mv->bytes;
	p->ptr = 0;
	p->head = head;
	p->len = len;
	p->bad = false;
	mv->bytes += len << SECTOR_SHIFT;
	mv->nr++;
}

/* Space for @sectors of moved data, all in one bucket; pinned. */
static int hc_move_alloc(struct hc_cache_set *c, u32 sectors, u64 *ptr)
{
	const struct hc_geom *g = &c->geom;
	struct hc_gc *gc = &c->gc;
	u64 bucket;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (!gc->move_bucket || g->bucket_sectors - gc->move_used < sectors) {
		ret = hc_bucket_alloc(c, HC_RESERVE_MOVE, HC_BUCKET_DATA,
				      &bucket);
		if (ret)
			return ret;
		gc->move_bucket = bucket;
		gc->move_used = 0;
	}
	*ptr = hc_ptr_make(hc_bucket_to_sector(g, gc->move_bucket) +
			   gc->move_used, 0, c->buckets[gc->move_bucket].gen);
	gc->move_used += sectors;
	spin_lock_irq(&c->alloc_lock);
	c->buckets[gc->move_bucket].io_pin++;
	spin_unlock_irq(&c->alloc_lock);
	return 0;
}

struct hc_move_cas {
	struct hc_cache_set		*c;
	const struct hc_move_piece	*p;
	u64				moved;
};

/* hc_btree_visit_range()'s callback for hc_move_insert(). */
static int hc_move_piece_insert(void *priv, const struct hc_key *cur,
				u64 from, u64 to)
{
	struct hc_move_cas *x = priv;
	const struct hc_key *old = &x->p->key;
	struct hc_cache_set *c = x->c;
	u64 b = hc_sector_to_bucket(&c->geom, hc_ptr_offset(cur->ptr));
	struct hc_key k;
	int ret;

	if (!hc_key_same_mapping(cur, old) ||
	    hc_ptr_stale(c->buckets[b].gen, hc_ptr_gen(cur->ptr)))
		return 0;
	k = (struct hc_key){
		.bdev_id = old->bdev_id,
		.end = to,
		.size = to - from,
		.nr_ptrs = 1,
		.flags = cur->flags & HC_KEY_DIRTY,
		.ptr = x->p->ptr + (from - hc_key_start(old)),
	};
	ret = hc_insert(c, &k);
	if (!ret)
		x->moved += k.size;
	return ret;
}

/*
 * Insert the copy of piece @p where the tree still maps its sectors as
 * they were read: dirty, through the same live pointer.
 */
static int hc_move_insert(struct hc_cache_set *c, const struct hc_move_piece *p,
			  u64 *moved)
{
	struct hc_move_cas x = { .c = c, .p = p };
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_btree_visit_range(c, p->key.bdev_id, hc_key_start(&p->key),
				   p->key.end, hc_move_piece_insert, &x);
	*moved += x.moved;
	return ret;
}

/*
 * Read (from the old pointers) or write (to the new ones) the first @got
 * pieces, all in flight at once: one device latency for the batch, not
 * two per piece, and the writes, adjacent in the moving bucket, merge.
 */
static int hc_move_copy(struct hc_cache_set *c, struct hc_move *mv,
			enum req_op op, unsigned int got)
{
	struct hc_io_batch io;
	struct blk_plug plug;
	unsigned int i;
	int ret;

	hc_io_batch_init(&io);
	blk_start_plug(&plug);
	for (i = 0; i < got; i++) {
		const struct hc_move_piece *p = &mv->p[i];

		hc_io_batch_add(c, &io, op,
				hc_ptr_offset(op == REQ_OP_READ ? p->key.ptr :
								  p->ptr) -
				p->head,
				c->gc.move_buf + p->buf_off,
				p->len << SECTOR_SHIFT);
	}
	blk_finish_plug(&plug);
	ret = hc_io_batch_wait(&io);
	if (!ret)
		hc_vmap_after_io(op, c->gc.move_buf, HC_MOVE_BUF_BYTES);
	return ret;
}

/*
 * With data checksums: check the pieces read, and give their copies the
 * same checksums (whole chunks, copied byte for byte). A piece that does
 * not match stays where it is, dirty: reads of it fail, and it is
 * reported (hc_csum_error()), unless its bucket was reused since it was
 * read. Before the copies are written.
 */
static void hc_move_check(struct hc_cache_set *c, struct hc_move *mv,
			  unsigned int got)
{
	unsigned int i;
	u64 bad;

	for (i = 0; i < got; i++) {
		struct hc_move_piece *p = &mv->p[i];
		u64 from = hc_ptr_offset(p->key.ptr) - p->head;

		if (hc_csum_check_buf(c, from, c->gc.move_buf + p->buf_off,
				      p->len, &bad)) {
			u64 b = hc_sector_to_bucket(&c->geom, from);

			p->bad = true;
			/*
			 * A bucket reused since it was read holds another
			 * extent's data and entries: the piece's key is gone
			 * with it, nothing to report.
			 */
			smp_rmb();
			if (hc_ptr_stale(READ_ONCE(c->buckets[b].gen),
					 hc_ptr_gen(p->key.ptr)))
				continue;
			hc_csum_error(c, bad, NULL, p->key.bdev_id,
				      hc_key_start(&p->key) +
				      (bad > from + p->head ?
				       bad - from - p->head : 0), true);
			continue;
		}
		hc_csum_copy(c, hc_ptr_offset(p->ptr) - p->head, from, p->len);
	}
}

/* Copy a batch of pieces, then insert the copies. */
static int hc_move_batch(struct hc_cache_set *c, struct hc_move *mv)
{
	struct hc_gc *gc = &c->gc;
	unsigned int i, got = 0;
	int ret = 0, alloc_ret = 0;
	u64 moved = 0;

	hc_meta_lock_write(c);
	for (i = 0; i < mv->nr && !alloc_ret; i++) {
		alloc_ret = hc_move_alloc(c, mv->p[i].len, &mv->p[i].ptr);
		if (!alloc_ret)
			mv->p[i].ptr += mv->p[i].head;
	}
	up_write(&c->meta_lock);
	got = alloc_ret ? i - 1 : i;

	if (got && hc_move_copy(c, mv, REQ_OP_READ, got)) {
		/* Which piece failed? Read them one by one (logged). */
		for (i = 0; i < got; i++) {
			const struct hc_move_piece *p = &mv->p[i];

			ret = hc_meta_io(c, REQ_OP_READ,
					 hc_ptr_offset(p->key.ptr) - p->head,
					 gc->move_buf + p->buf_off,
					 p->len << SECTOR_SHIFT);
			if (ret) {
				got = i;	/* from i on only unpinned */
				break;
			}
		}
	}
	if (got && hc_csum_on(c))
		hc_move_check(c, mv, got);
	if (got) {
		int r = hc_move_copy(c, mv, REQ_OP_WRITE, got);

		if (r) {
			/* No key moved: the old copies are still the ones. */
			hc_cache_set_error(c, "moving GC: write of %u pieces failed: error %d",
					   got, r);
			ret = r;
			got = 0;
		} else {
			/* Before the keys: metadata flushes the copies first. */
			atomic64_inc(&c->data_written);
		}
	}
	if (got)
		hc_debug_delay(HC_DELAY_MOVE_COPIED);

	hc_meta_lock_write(c);
	for (i = 0; i < mv->nr && mv->p[i].ptr; i++) {
		if (i < got && !c->meta_failed && !mv->p[i].bad) {
			int r = hc_move_insert(c, &mv->p[i], &moved);

			if (r && !ret)
				ret = r;
		}
		hc_bucket_unpin(c, hc_ptr_offset(mv->p[i].ptr));
	}
	gc->sectors_moved += moved;
	up_write(&c->meta_lock);
	return ret ?: alloc_ret;
}

/*
 * Move the dirty data of the buckets hc_move_choose() flagged: a batch of
 * pieces at a time, in key order. Return: 0, or -errno (-ENOSPC when the
 * moving reserve ran dry).
 */
static int hc_move_chosen(struct hc_cache_set *c, struct hc_move *mv)
{
	struct hc_pos pos = { 0, 0 };
	unsigned int again = 0;
	int ret = 1;

	while (ret > 0 && !kthread_should_stop()) {
		struct hc_pos from = pos;

		mv->nr = 0;
		mv->bytes = 0;
		mv->full = false;
		down_read(&c->meta_lock);
		ret = hc_btree_scan_all(c, &pos, 1, hc_move_collect, mv);
		up_read(&c->meta_lock);
		if (ret < 0)
			break;
		if (mv->nr) {
			int r = hc_move_batch(c, mv);

			if (r) {
				ret = r;
				break;
			}
		}
		/* The batch was full: the rest of the leaf comes next. */
		if (mv->full && again++ < 16) {
			pos = from;
			ret = 1;
		} else {
			again = 0;
		}
		cond_resched();
	}
	return min(ret, 0);
}

/*
 * Moving GC: rounds of choosing buckets and moving their dirty data out.
 * One round can empty only what the moving reserve holds, a few buckets'
 * worth, while a cache full of thinly spread dirty data may need tens of
 * buckets freed before writes stop bypassing; the buckets a round emptied
 * of dirty data refill the reserve for the next. A run asked for
 * (@thorough: trigger_gc) goes on while there is anything worth moving; a
 * run the allocator started stops once HC_MOVE_UNTIL_PERCENT of the cache
 * can take new data. At most HC_MOVE_ROUNDS rounds either way, so that
 * the btree walk still comes.
 */
static int hc_gc_moving(struct hc_cache_set *c, bool thorough)
{
	struct hc_gc *gc = &c->gc;
	struct hc_move mv = { .c = c };
	unsigned int round;
	u64 chosen;
	int ret = 0;

	mv.p = kvmalloc_array(HC_MOVE_PIECES, sizeof(*mv.p), GFP_KERNEL);
	if (!mv.p)
		return -ENOMEM;
	for (round = 0; round < HC_MOVE_ROUNDS && !kthread_should_stop();
	     round++) {
		hc_meta_lock_write(c);
		/* What the last round freed: for this test and for writes. */
		if (round)
			hc_avail_update(c);
		if (round && !thorough &&
		    READ_ONCE(c->avail_percent) >= HC_MOVE_UNTIL_PERCENT)
			chosen = 0;
		else
			chosen = hc_move_choose(c);
		up_write(&c->meta_lock);
		if (!chosen)
			break;
		ret = hc_move_chosen(c, &mv);
		gc->buckets_moved += chosen;
		gc->move_rounds++;
		if (ret)
			break;
	}
	/* Overwrites in place may go to the chosen buckets again. */
	hc_meta_lock_write(c);
	bitmap_zero(gc->move, c->geom.nbuckets);
	up_write(&c->meta_lock);
	kvfree(mv.p);
	return ret == -ENOSPC ? 0 : ret;
}

/* ---- The thread --------------------------------------------------------- */

/*
 * Moving alone is due when fewer than HC_MOVE_UNTIL_PERCENT of the buckets
 * can take new data. Random overwrites in writeback mode spread dirty data
 * thinly over the cache faster than whole runs give buckets back (they
 * come at most once a second when short, for the btree walk's cost), and
 * writes that find fewer than HC_BYPASS_FULL_PERCENT go to the backing
 * device. Moving costs in proportion to what it frees: after a moving run
 * that freed nothing the next waits a second, else as long as it ran.
 */
static bool hc_gc_move_due(struct hc_cache_set *c)
{
	/* A failed set writes nothing more: nothing to make room for. */
	return !READ_ONCE(c->meta_failed) &&
	       READ_ONCE(c->avail_percent) < HC_MOVE_UNTIL_PERCENT &&
	       time_after_eq(jiffies, READ_ONCE(c->gc.move_next));
}

/**
 * hc_gc_avail_changed() - the share of buckets that can take data was
 *	recounted: wake GC if moving alone is due
 * @c: the set; meta_lock held for writing
 */
void hc_gc_avail_changed(struct hc_cache_set *c)
{
	if (hc_gc_move_due(c))
		wake_up(&c->gc.wait);
}

static bool hc_gc_wanted(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;

	/*
	 * A cache full of dirty data stays short of buckets until writeback
	 * catches up: a run for that alone comes at most once a second, and
	 * leaves at least ten times its own length to foreground I/O.
	 */
	return READ_ONCE(gc->requested) != READ_ONCE(gc->completed) ||
	       (READ_ONCE(gc->low) &&
		time_after(jiffies, gc->last_end +
			   max_t(unsigned long, HZ, 10 * gc->last_len))) ||
	       atomic64_read(&gc->written) >= gc->written_limit;
}

static void hc_gc_run(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;
	unsigned long start = jiffies, asked = READ_ONCE(gc->requested);
	bool thorough = asked != READ_ONCE(gc->completed);
	u64 moved = gc->buckets_moved;
	int ret;

	WRITE_ONCE(gc->low, false);
	atomic64_set(&gc->written, 0);
	/*
	 * Moving first: buckets thinly spread with dirty data are what a
	 * cache taking writes runs short of, and moving frees them in a few
	 * batches, where the btree walk may rewrite many leaves first.
	 */
	ret = hc_gc_moving(c, thorough);
	if (!ret)
		ret = hc_gc_btree(c);
	if (ret && ret != -EIO)
		pr_warn_ratelimited("%pg: garbage collection stopped: error %d\n",
				    c->bdev, ret);
	hc_meta_lock_write(c);
	gc->runs++;
	gc->last_ms = jiffies_to_msecs(jiffies - start);
	c->refill_futile = false;
	hc_avail_update(c);
	up_write(&c->meta_lock);
	gc->last_end = jiffies;
	gc->last_len = jiffies - start;
	trace_hcache_gc(c->bdev->bd_dev, false, gc->last_ms,
			gc->buckets_moved - moved, ret);
	WRITE_ONCE(gc->completed, asked);
	wake_up_all(&gc->done_wait);
}

/* Moving GC without the btree walk, for writes short of buckets. */
static void hc_gc_move_run(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;
	unsigned long start = jiffies;
	u64 moved = gc->buckets_moved;
	int ret;

	ret = hc_gc_moving(c, false);
	if (ret && ret != -EIO)
		pr_warn_ratelimited("%pg: moving garbage collection stopped: error %d\n",
				    c->bdev, ret);
	hc_meta_lock_write(c);
	hc_avail_update(c);
	up_write(&c->meta_lock);
	gc->move_runs++;
	trace_hcache_gc(c->bdev->bd_dev, true,
			jiffies_to_msecs(jiffies - start),
			gc->buckets_moved - moved, ret);
	WRITE_ONCE(gc->move_next, jiffies + (ret || gc->buckets_moved == moved ?
					     HZ : max(jiffies - start, 1UL)));
}

static int hc_gc_thread(void *arg)
{
	struct hc_cache_set *c = arg;
	struct hc_gc *gc = &c->gc;

	set_user_nice(current, 10);
	/* First, behind I/O, what the registration did not count. */
	hc_mark_bg_run(c);
	while (!kthread_should_stop()) {
		wait_event_interruptible_timeout(gc->wait,
						 kthread_should_stop() ||
						 hc_gc_wanted(c) ||
						 hc_gc_move_due(c), HZ);
		if (kthread_should_stop())
			break;
		/* A pass that failed never ends: nothing to collect by. */
		if (READ_ONCE(c->mark_bg.running))
			continue;
		if (hc_gc_wanted(c))
			hc_gc_run(c);
		else if (hc_gc_move_due(c))
			hc_gc_move_run(c);
	}
	/* Wake trigger_gc writers: no run comes any more. */
	WRITE_ONCE(gc->completed, READ_ONCE(gc->requested));
	wake_up_all(&gc->done_wait);
	return 0;
}

/**
 * hc_gc_wake() - the allocator is short of buckets: run GC soon
 * @c: the set
 */
void hc_gc_wake(struct hc_cache_set *c)
{
	WRITE_ONCE(c->gc.low, true);
	wake_up(&c->gc.wait);
}

/**
 * hc_gc_trigger() - run GC now and wait for it (sysfs trigger_gc)
 * @c: the set
 *
 * Return: 0 once a run that started after the call has finished, or
 * -EINTR if a signal came first.
 */
int hc_gc_trigger(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;
	unsigned long want;

	spin_lock(&gc->lock);
	want = ++gc->requested;
	spin_unlock(&gc->lock);
	wake_up(&gc->wait);
	return wait_event_interruptible(gc->done_wait,
					READ_ONCE(gc->stopping) ||
					(long)(READ_ONCE(gc->completed) -
					       want) >= 0) ?:
	       (READ_ONCE(gc->stopping) ? -ENODEV : 0);
}

/**
 * hc_gc_init() - GC's state for a set whose geometry is known
 * @c: the set
 *
 * Return: 0 or -ENOMEM.
 */
int hc_gc_init(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;
	u64 nb = c->geom.nbuckets;

	init_waitqueue_head(&gc->wait);
	init_waitqueue_head(&gc->done_wait);
	spin_lock_init(&gc->lock);
	atomic64_set(&gc->written, 0);
	gc->max_distance = HC_GEN_MAX_DISTANCE;
	gc->written_limit = max_t(u64, (nb - c->geom.first_bucket) *
				  c->geom.bucket_sectors / 8, 1);
	gc->move_next = jiffies;
	gc->oldest = kvzalloc(nb, GFP_KERNEL);
	gc->seen = kvcalloc(BITS_TO_LONGS(nb), sizeof(long), GFP_KERNEL);
	gc->move = kvcalloc(BITS_TO_LONGS(nb), sizeof(long), GFP_KERNEL);
	gc->move_buf = kvmalloc(HC_MOVE_BUF_BYTES, GFP_KERNEL);
	if (!gc->oldest || !gc->seen || !gc->move || !gc->move_buf)
		return -ENOMEM;
	return 0;
}

/**
 * hc_gc_start() - start the set's hcache_gc thread
 * @c: the set, loaded
 *
 * Return: 0 or -errno.
 */
int hc_gc_start(struct hc_cache_set *c)
{
	struct task_struct *t = kthread_run(hc_gc_thread, c, "hcache_gc");

	if (IS_ERR(t))
		return PTR_ERR(t);
	c->gc.thread = t;
	return 0;
}

/**
 * hc_gc_stop() - stop the thread; a run under way ends at its next step
 * @c: the set
 */
void hc_gc_stop(struct hc_cache_set *c)
{
	WRITE_ONCE(c->gc.stopping, true);
	wake_up_all(&c->gc.done_wait);
	wake_up_all(&c->mark_bg.done_wait);
	if (c->gc.thread)
		kthread_stop(c->gc.thread);
	c->gc.thread = NULL;
}

/**
 * hc_gc_exit() - free what hc_gc_init() allocated
 * @c: the set
 */
void hc_gc_exit(struct hc_cache_set *c)
{
	struct hc_gc *gc = &c->gc;

	kvfree(gc->oldest);
	kvfree(gc->seen);
	kvfree(gc->move);
	kvfree(gc->move_buf);
}
