// SPDX-License-Identifier: GPL-2.0
/*
 * mark_pass.c: the mark pass over a cache set (walking the btree and the
 * metadata, accounting every pointer by mark.c's rules) and the
 * consistency check built on it, which debugfs and the tests call.
 */

#include "hcache.h"
#include "debug.h"

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/vmalloc.h>

#define HC_CHECK_MAX_ERRORS	20U

struct hc_mark_ctx {
	struct hc_cache_set	*c;
	struct hc_bucket_mark	*m;
	struct seq_buf		*errs;
	unsigned int		nerr;
	u64			leaf_keys;
	u64			*dirty;
	bool			before_replay;
};

/* mark.c's rule that a replay may still be about to fix. */
static const char hc_rule_too_far[] =
	"bucket gen too far ahead of a pointer into it";

static __printf(2, 3) void hc_mark_err(struct hc_mark_ctx *x,
				       const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (x->errs && x->nerr < HC_CHECK_MAX_ERRORS) {
		va_start(args, fmt);
		vaf.fmt = fmt;
		vaf.va = &args;
		seq_buf_printf(x->errs, "%pV\n", &vaf);
		va_end(args);
	}
	x->nerr++;
}

/* A node's keys in order, not overlapping, within its range: NULL, or why not. */
static const char *hc_mark_node_check(const struct hc_btree_node *n)
{
	const char *why = hc_bset_check(&n->keys);

	return why ?: hc_node_range_check(n->keys.keys, n->keys.nr,
					  n->min.bdev, n->min.end,
					  n->max.bdev, n->max.end);
}

static int hc_mark_node(void *priv, struct hc_btree_node *n)
{
	struct hc_mark_ctx *x = priv;
	struct hc_cache_set *c = x->c;
	const char *why;
	size_t i;
	int ret;

	ret = hc_load_step(c);
	if (ret)
		return ret;
	why = hc_mark_node_check(n);
	if (why)
		hc_mark_err(x, "btree node in bucket %llu (level %u): %s",
			    n->bucket, n->level, why);
	if (!n->level)
		return 0;
	for (i = 0; i < n->keys.nr; i++) {
		const struct hc_key *k = &n->keys.keys[i];
		u64 b = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr));

		why = hc_mark_meta(&c->geom, x->m, c->buckets, b,
				   HC_BUCKET_BTREE, &k->ptr);
		if (why)
			hc_mark_err(x, "bucket %llu, child %zu of node in bucket %llu: %s",
				    b, i, n->bucket, why);
	}
	return 0;
}

/* Dirty sectors per table entry (x->dirty[i] is c->table->d[i]'s). */
static void hc_mark_dirty(struct hc_mark_ctx *x, const struct hc_key *k)
{
	struct hc_cache_set *c = x->c;
	struct hc_bdev_entry *e;
	u64 b;

	if (!x->dirty || !k->nr_ptrs || !(k->flags & HC_KEY_DIRTY))
		return;
	b = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr));
	if (b >= c->geom.nbuckets ||
	    hc_ptr_stale(c->buckets[b].gen, hc_ptr_gen(k->ptr)))
		return;
	e = hc_bdev_table_find_id(c->table, k->bdev_id);
	if (e)
		x->dirty[e - c->table->d] += k->size;
}

static int hc_mark_key(void *priv, struct hc_btree_node *n,
		       const struct hc_key *k)
{
	struct hc_mark_ctx *x = priv;
	const char *why;

	x->leaf_keys++;
	hc_mark_dirty(x, k);
	why = hc_mark_leaf_key(&x->c->geom, x->m, x->c->buckets, k);
	if (why && x->before_replay && !strcmp(why, hc_rule_too_far)) {
		/*
		 * A key the journal overwrote before its bucket was reused,
		 * and the node on disk does not know yet: stale, counted as
		 * the tree holds it, and gone once the replay is done.
		 */
		u64 b = hc_sector_to_bucket(&x->c->geom,
					    hc_ptr_offset(k->ptr));

		x->m[b].ptrs++;
		hc_mark_note_gen(&x->m[b], x->c->buckets[b].gen,
				 hc_ptr_gen(k->ptr));
		return 0;
	}
	if (why)
		hc_mark_err(x, "key %u:%llu+%u in node in bucket %llu: %s",
			    k->bdev_id, hc_key_start(k), k->size, n->bucket,
			    why);
	return 0;
}

/*
 * hc_mark_pass(), also summing the live dirty sectors of each table entry
 * into @dirty (c->table->nr entries) if not NULL; before the replay, into
 * the table itself.
 */
static int hc_mark_pass_dirty(struct hc_cache_set *c,
			      struct hc_bucket_mark *fresh,
			      struct seq_buf *errs, bool before_replay,
			      u64 *dirty)
{
	struct hc_mark_ctx x = { .c = c, .m = fresh, .errs = errs,
				 .before_replay = before_replay,
				 .dirty = dirty };
	u64 *own = NULL;
	const char *why;
	u64 i;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	if (before_replay && !dirty) {
		own = kcalloc(HC_BDEV_TABLE_MAX, sizeof(*own), GFP_KERNEL);
		if (!own)
			return -ENOMEM;
		x.dirty = own;
	}
	hc_mark_reset(&c->geom, fresh, c->geom.nbuckets);
	for (i = 0; i < c->prio_nr; i++) {
		why = hc_mark_meta(&c->geom, fresh, c->buckets,
				   c->prio_chain[i], HC_BUCKET_PRIO, NULL);
		if (why)
			hc_mark_err(&x, "gen/prio bucket %llu: %s",
				    c->prio_chain[i], why);
	}
	if (c->table_bucket) {
		why = hc_mark_meta(&c->geom, fresh, c->buckets, c->table_bucket,
				   HC_BUCKET_TABLE, NULL);
		if (why)
			hc_mark_err(&x, "table bucket %llu: %s",
				    c->table_bucket, why);
	}
	why = hc_mark_meta(&c->geom, fresh, c->buckets,
			   hc_sector_to_bucket(&c->geom,
					       hc_ptr_offset(c->root->ptr)),
			   HC_BUCKET_BTREE, &c->root->ptr);
	if (why)
		hc_mark_err(&x, "root bucket %llu: %s", c->root->bucket, why);
	ret = hc_btree_walk(c, hc_mark_node, hc_mark_key, &x);
	if (!ret && !before_replay && x.leaf_keys != c->leaf_keys)
		hc_mark_err(&x, "%llu keys in the leaves, %llu counted",
			    x.leaf_keys, c->leaf_keys);
	if (!ret && own) {
		/* meta_lock held for writing */
		c->leaf_keys = x.leaf_keys;
		for (i = 0; i < c->table->nr; i++)
			c->table->d[i].dirty_sectors = own[i];
	}
	kfree(own);
	if (ret)
		return ret;
	return x.nerr ? -EUCLEAN : 0;
}

/**
 * hc_mark_pass() - compute every bucket's state from the metadata
 * @c: the set; meta_lock held, for reading at least
 * @fresh: receives one mark per bucket
 * @errs: receives a line per rule broken (the first few); may be NULL
 * @before_replay: the tree is as on disk, the journal not replayed yet:
 *	keys whose bucket's gen ran too far ahead of theirs are accepted,
 *	as the replay is about to overwrite them (hc_check() afterwards
 *	accepts none)
 *
 * Accounts the gen/prio chain, the backing-device table, every btree node
 * and every leaf key. Reads the nodes not cached. May sleep.
 *
 * Return: 0; -EUCLEAN if any rule was broken; or the error reading a node.
 */
int hc_mark_pass(struct hc_cache_set *c, struct hc_bucket_mark *fresh,
		 struct seq_buf *errs, bool before_replay)
{
	return hc_mark_pass_dirty(c, fresh, errs, before_replay, NULL);
}

/**
 * hc_check() - the consistency check
 * @c: the set; meta_lock held, for reading at least
 * @errs: receives a line per problem found (the first few)
 *
 * A fresh mark pass must succeed (no pointer's gen ahead of its bucket's
 * or too far behind it, no live pointer into a free, journal, prio, table
 * or btree bucket, every node's keys in order, not overlapping and within
 * its range), and every bucket's kept counts and type must match it;
 * a bucket on a free list must hold nothing live. May sleep.
 *
 * Return: 0 if consistent, -EUCLEAN if not, or another -errno.
 */
int hc_check(struct hc_cache_set *c, struct seq_buf *errs)
{
	struct hc_mark_ctx x = { .c = c, .errs = errs };
	struct hc_bucket_mark *fresh;
	u64 *dirty;
	const char *why;
	u64 i;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	fresh = vmalloc(array_size(c->geom.nbuckets, sizeof(*fresh)));
	dirty = kcalloc(HC_BDEV_TABLE_MAX, sizeof(*dirty), GFP_KERNEL);
	if (!fresh || !dirty) {
		ret = -ENOMEM;
		goto out;
	}
	ret = hc_mark_pass_dirty(c, fresh, errs, false, dirty);
	if (ret && ret != -EUCLEAN)
		goto out;
	if (ret)
		x.nerr = HC_CHECK_MAX_ERRORS;	/* already reported */
	for (i = 0; i < c->geom.nbuckets; i++) {
		const struct hc_bucket *b = &c->buckets[i];

		why = hc_mark_compare(&fresh[i], &b->m);
		if (why)
			hc_mark_err(&x, "bucket %llu: %s (pass: %s, clean %u, dirty %u; kept: %s, clean %u, dirty %u)",
				    i, why, hc_bucket_type_name(fresh[i].type),
				    fresh[i].clean, fresh[i].dirty,
				    hc_bucket_type_name(b->m.type), b->m.clean,
				    b->m.dirty);
		why = hc_mark_compare_gen(&fresh[i], &b->m, b->gen);
		if (why)
			hc_mark_err(&x, "bucket %llu: %s (gen %u; pass: oldest %u; kept: %s, oldest %u)",
				    i, why, b->gen, fresh[i].oldest_gen,
				    b->m.has_ptr ? "pointers" : "none",
				    b->m.oldest_gen);
		if (b->on_freelist && fresh[i].type != HC_BUCKET_FREE)
			hc_mark_err(&x, "bucket %llu on a free list holds %s",
				    i, hc_bucket_type_name(fresh[i].type));
	}
	for (i = 0; i < c->table->nr; i++)
		if (dirty[i] != c->table->d[i].dirty_sectors)
			hc_mark_err(&x, "id %u: %llu dirty sectors in the tree, %llu counted",
				    c->table->d[i].id, dirty[i],
				    c->table->d[i].dirty_sectors);
	ret = x.nerr || ret ? -EUCLEAN : 0;
out:
	kfree(dirty);
	vfree(fresh);
	return ret;
}

/* ---- The mark pass behind I/O (struct hc_mark_bg) ------------------------ */

/* Leaves counted per hold of meta_lock. */
#define HC_MARK_BG_LEAVES	1U

/*
 * A btree node's bucket in the set's own counts, as hc_mark_meta() marks
 * it in a fresh pass's: 0, or -EUCLEAN (logged) if it holds anything else.
 */
static int hc_mark_bg_node_bucket(struct hc_cache_set *c, u64 ptr)
{
	u64 i = hc_sector_to_bucket(&c->geom, hc_ptr_offset(ptr));
	struct hc_bucket *b;

	if (i < c->geom.first_bucket || i >= c->geom.nbuckets) {
		hc_cache_set_error(c, "btree node pointer to bucket %llu, outside the data area",
				   i);
		return -EUCLEAN;
	}
	b = &c->buckets[i];
	if (b->m.type != HC_BUCKET_FREE && b->m.type != HC_BUCKET_BTREE) {
		hc_cache_set_error(c, "btree node in bucket %llu, which holds %s",
				   i, hc_bucket_type_name(b->m.type));
		return -EUCLEAN;
	}
	b->m.type = HC_BUCKET_BTREE;
	hc_mark_note_gen(&b->m, b->gen, hc_ptr_gen(ptr));
	return 0;
}

/**
 * hc_mark_bg_begin() - at registration: run the mark pass behind I/O?
 * @c: the set being loaded, meta_lock held for writing: the chain, the
 *	table and the root read, nothing replayed yet
 *
 * Only after a clean stop that marked the empty buckets (hc_prio_set()
 * keeps the marks only then), and only if there are enough of them: the
 * floor kept for the gen/prio chain and btree nodes, twice over, with at
 * least an eighth of them; otherwise the pass runs before the set serves
 * I/O, as after a crash. Sets up the counts that need no walk: the chain,
 * the table and the root. Notes each marked bucket's gen, so that the
 * walk can tell a pointer the marks missed (hc_mark_bg_leaf()).
 *
 * Return: true if the pass is to run behind I/O (hc_mark_bg_run()).
 */
bool hc_mark_bg_begin(struct hc_cache_set *c)
{
	struct hc_mark_bg *bg = &c->mark_bg;
	u64 i, hinted = bg->hinted, base;

	lockdep_assert_held_write(&c->meta_lock);
	base = 4 * (c->prio_nr + c->free[HC_RESERVE_BTREE].target);
	if (hinted && hinted >= 2 * base)
		bg->load_gen = kvmalloc(c->geom.nbuckets, GFP_KERNEL);
	if (!bg->load_gen) {
		if (c->load.marks)
			pr_info("%pg: the last stop found %llu empty buckets (%llu needed, or no memory): counting every bucket before serving I/O\n",
				c->bdev, hinted, 2 * base);
		for (i = 0; i < c->geom.nbuckets; i++)
			c->buckets[i].hinted = HC_HINT_NONE;
		bg->hinted = 0;
		return false;
	}
	if (hc_mark_bg_node_bucket(c, c->root->ptr)) {
		/* The counting before I/O fails on it too, and says so. */
		kvfree(bg->load_gen);
		bg->load_gen = NULL;
		bg->hinted = 0;
		return false;
	}
	for (i = 0; i < c->geom.nbuckets; i++)
		bg->load_gen[i] = c->buckets[i].gen;
	bg->floor = base + hinted / 8;
	bg->marked = hinted;
	bg->pos = (struct hc_pos){ 0, 0 };
	bg->leaves = 0;
	bg->start = jiffies;
	/* hc_alloc_init() and hc_prio_read() typed the fixed and the chain. */
	if (c->table_bucket)
		c->buckets[c->table_bucket].m.type = HC_BUCKET_TABLE;
	for (i = 0; i < c->table->nr; i++)
		c->table->d[i].dirty_sectors = 0;
	c->leaf_keys = 0;
	WRITE_ONCE(bg->running, true);
	return true;
}

/* Count one leaf: its keys' sectors, its keys. */
static int hc_mark_bg_leaf(void *priv, struct hc_btree_node *n)
{
	struct hc_cache_set *c = priv;
	const struct hc_bucket *b;
	const char *why;
	size_t i;
	u64 idx;

	why = hc_mark_node_check(n);
	if (why) {
		hc_cache_set_error(c, "btree leaf in bucket %llu: %s",
				   n->bucket, why);
		return -EUCLEAN;
	}
	for (i = 0; i < n->keys.nr; i++) {
		const struct hc_key *k = &n->keys.keys[i];

		if (!k->nr_ptrs)
			continue;
		why = hc_mark_key_rules(&c->geom, c->buckets, k);
		idx = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr));
		b = why ? NULL : &c->buckets[idx];
		if (b && !hc_ptr_stale(b->gen, hc_ptr_gen(k->ptr)) &&
		    b->m.type != HC_BUCKET_FREE && b->m.type != HC_BUCKET_DATA)
			why = "live pointer into a metadata, journal or superblock bucket";
		/*
		 * The marks must not lie: a pointer from before this
		 * registration into a bucket marked empty means a refill may
		 * have reused it under live data.
		 */
		if (b && b->hinted != HC_HINT_NONE &&
		    !hc_gen_after(hc_ptr_gen(k->ptr), c->mark_bg.load_gen[idx]))
			why = "pointer into a bucket the last stop marked empty";
		if (!why) {
			hc_bucket_key_count(c, k);
			if (b->m.clean + b->m.dirty > c->geom.bucket_sectors)
				why = "more live sectors than the bucket holds";
		}
		if (why) {
			hc_cache_set_error(c, "key %u:%llu+%u in leaf in bucket %llu: %s",
					   k->bdev_id, hc_key_start(k), k->size,
					   n->bucket, why);
			return -EUCLEAN;
		}
	}
	c->leaf_keys += n->keys.nr;
	WRITE_ONCE(c->mark_bg.leaves, c->mark_bg.leaves + 1);
	return 0;
}

/* Mark the buckets of an interior node's children. */
static int hc_mark_bg_children(void *priv, struct hc_btree_node *n)
{
	struct hc_cache_set *c = priv;
	size_t i;
	int ret;

	for (i = 0; i < n->keys.nr; i++) {
		ret = hc_mark_bg_node_bucket(c, n->keys.keys[i].ptr);
		if (ret)
			return ret;
	}
	return 0;
}

/* The end of the pass: the nodes' buckets, then what waited for it. */
static int hc_mark_bg_end(struct hc_cache_set *c)
{
	struct hc_mark_bg *bg = &c->mark_bg;
	u64 i;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_mark_bg_node_bucket(c, c->root->ptr);
	if (!ret)
		ret = hc_btree_walk_interior(c, hc_mark_bg_children, c);
	if (ret)
		return ret;
	for (i = 0; i < c->geom.nbuckets; i++)
		c->buckets[i].hinted = HC_HINT_NONE;
	bg->hinted = 0;
	kvfree(bg->load_gen);
	bg->load_gen = NULL;
	bg->ms = jiffies_to_msecs(jiffies - bg->start);
	WRITE_ONCE(bg->running, false);
	c->refill_futile = false;
	hc_avail_update(c);
	pr_info("%pg: cache set %pU: %llu leaves, %llu keys counted behind I/O in %llu ms\n",
		c->bdev, c->sb.set_uuid, bg->leaves, c->leaf_keys, bg->ms);
	return 0;
}

/**
 * hc_mark_bg_run() - the mark pass behind I/O, from the gc thread
 * @c: the set
 *
 * Counts the leaves in key order, HC_MARK_BG_LEAVES per hold of
 * meta_lock, at nice 19, then marks the btree's buckets and lets the allocator,
 * GC and the consistency check go by the counts. Returns at once if no
 * pass runs; early, with the pass unfinished, if the thread is stopped.
 * Short of memory, it tries again a little later. Anything else that
 * stops it (a broken rule, an unreadable node) fails the set, logged: the
 * allocator could never take more than the marked buckets, nor a device
 * look clean; the next registration counts before serving I/O, and
 * refuses the cache if the metadata is wrong.
 */
void hc_mark_bg_run(struct hc_cache_set *c)
{
	struct hc_mark_bg *bg = &c->mark_bg;
	unsigned int i;
	int ret = 1;

	if (!READ_ONCE(bg->running))
		return;
	/* Behind foreground I/O: the CPU it leaves, then GC's nice again. */
	set_user_nice(current, MAX_NICE);
	while (ret > 0 && READ_ONCE(bg->running) && !kthread_should_stop()) {
		hc_debug_delay(HC_DELAY_MARK_BG);
		hc_meta_lock_write(c);
		for (i = 0; i < HC_MARK_BG_LEAVES && ret > 0; i++)
			ret = c->meta_failed ? -EIO :
			      hc_btree_leaf_visit(c, &bg->pos, hc_mark_bg_leaf,
						  c);
		if (!ret)
			ret = hc_mark_bg_end(c);
		if (ret < 0 && !c->meta_failed && ret != -ENOMEM) {
			hc_cache_set_error(c, "the mark pass behind I/O failed (error %d)",
					   ret);
			hc_cache_set_meta_fail(c);
		}
		up_write(&c->meta_lock);
		if (ret == -ENOMEM) {	/* nothing half done: the leaf again */
			msleep_interruptible(100);
			ret = 1;
		}
		cond_resched();
	}
	set_user_nice(current, 10);
	wake_up_all(&bg->done_wait);
}

/**
 * hc_mark_bg_wait() - wait for the mark pass behind I/O to end
 * @c: the set; no lock held
 *
 * Returns at once if none runs, and when the set fails or stops, as the
 * pass then never ends.
 *
 * Return: 0, or -ERESTARTSYS if a signal came first.
 */
int hc_mark_bg_wait(struct hc_cache_set *c)
{
	return wait_event_interruptible(c->mark_bg.done_wait,
					!READ_ONCE(c->mark_bg.running) ||
					READ_ONCE(c->meta_failed) ||
					READ_ONCE(c->gc.stopping));
}
