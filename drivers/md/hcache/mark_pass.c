// SPDX-License-Identifier: GPL-2.0
/*
 * mark_pass.c: the mark pass over a cache set (walking the btree and the
 * metadata, accounting every pointer by mark.c's rules) and the
 * consistency check built on it, which debugfs and the tests call.
 */

#include "hcache.h"

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
	why = hc_bset_check(&n->keys);
	if (!why)
		why = hc_node_range_check(n->keys.keys, n->keys.nr,
					  n->min.bdev, n->min.end,
					  n->max.bdev, n->max.end);
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
