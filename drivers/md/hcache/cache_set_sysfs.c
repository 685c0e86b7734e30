// SPDX-License-Identifier: GPL-2.0
/*
 * cache_set_sysfs.c: the sysfs files of a cache set
 * (/sys/fs/hcache/<set-uuid>/ and its internal/) and of its cache device
 * (<cache device>/hcache/). Documentation/ABI/testing/sysfs-fs-hcache and
 * sysfs-block-hcache describe each file.
 */

#include "hcache.h"

#include <linux/sort.h>
#include <linux/sysfs.h>

struct hc_set_attr {
	struct attribute attr;
	ssize_t (*show)(struct hc_cache_set *c, char *buf);
	ssize_t (*store)(struct hc_cache_set *c, const char *buf, size_t len);
};

static ssize_t bucket_size_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%u\n", c->geom.bucket_sectors << SECTOR_SHIFT);
}

static ssize_t block_size_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%u\n", c->block_size);
}

static ssize_t nbuckets_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%llu\n", c->geom.nbuckets);
}

static ssize_t cache_available_percent_show(struct hc_cache_set *c,
					    char *buf)
{
	u32 avail;

	down_read(&c->meta_lock);
	avail = hc_avail_percent(c);
	up_read(&c->meta_lock);
	return sysfs_emit(buf, "%u\n", avail);
}

static ssize_t tree_depth_show(struct hc_cache_set *c, char *buf)
{
	unsigned int depth;

	down_read(&c->meta_lock);
	depth = c->root->level;
	up_read(&c->meta_lock);
	return sysfs_emit(buf, "%u\n", depth);
}

static ssize_t btree_cache_size_show(struct hc_cache_set *c, char *buf)
{
	u64 per_node = sizeof(struct hc_btree_node) +
		       2 * c->node_cap * sizeof(struct hc_key);

	return sysfs_emit(buf, "%llu\n", READ_ONCE(c->nr_nodes) * per_node);
}

static ssize_t average_key_size_show(struct hc_cache_set *c, char *buf)
{
	u64 sectors = 0, keys, i;

	down_read(&c->meta_lock);
	for (i = 0; i < c->geom.nbuckets; i++)
		sectors += c->buckets[i].m.clean + c->buckets[i].m.dirty;
	keys = c->leaf_keys;
	up_read(&c->meta_lock);
	return sysfs_emit(buf, "%llu\n",
			  keys ? div64_u64(sectors << SECTOR_SHIFT, keys) : 0);
}

static ssize_t journal_delay_ms_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(c->journal.delay_ms));
}

static ssize_t journal_delay_ms_store(struct hc_cache_set *c,
				      const char *buf, size_t len)
{
	unsigned int ms;
	int ret = kstrtouint(buf, 10, &ms);

	if (ret)
		return ret;
	if (ms < 1 || ms > 10000)
		return -ERANGE;
	WRITE_ONCE(c->journal.delay_ms, ms);
	return len;
}

/* Persist a cache superblock change made under both locks. */
static int hc_cache_sb_update(struct hc_cache_set *c)
{
	return hc_sb_write(c->bdev, &c->sb, c->sb_buf);
}

/* hc_register_lock if @c is still registered (hc_register_lock_listed()). */
static int hc_cache_lock_registered(struct hc_cache_set *c)
{
	return hc_register_lock_listed(&c->list);
}

/*
 * Keep a setting in the cache superblock (HC_FEAT_COMPAT_TUNABLES), so
 * that it survives a reboot, and apply it: the field of @bit takes @v,
 * the superblock is written (not when it already kept @v), and only then
 * does the set use @v; if the write fails, the fields return to what they
 * were. All under hc_register_lock, so that the value in use is the one on
 * disk whatever the order of concurrent writes.
 */
static int hc_cache_tunable_keep(struct hc_cache_set *c, u32 bit, u32 v)
{
	struct hc_sb_cache *s = &c->sb.cache;
	bool limit = bit == HC_CACHE_TUNE_IO_ERROR_LIMIT;
	struct hc_sb_cache old;
	int ret;

	ret = hc_cache_lock_registered(c);
	if (ret)
		return ret;
	old = *s;
	if (!(old.tunables & bit) ||
	    (limit ? old.io_error_limit : old.io_error_halflife) != v) {
		down_write(&c->meta_lock);
		s->tunables |= bit;
		if (limit)
			s->io_error_limit = v;
		else
			s->io_error_halflife = v;
		up_write(&c->meta_lock);
		ret = hc_cache_sb_update(c);
		if (ret) {
			down_write(&c->meta_lock);
			s->tunables = old.tunables;
			s->io_error_limit = old.io_error_limit;
			s->io_error_halflife = old.io_error_halflife;
			up_write(&c->meta_lock);
		}
	}
	if (!ret && limit)
		WRITE_ONCE(c->io_error_limit, v);
	else if (!ret)
		WRITE_ONCE(c->io_error_halflife, v);
	mutex_unlock(&hc_register_lock);
	return ret;
}

static ssize_t io_error_limit_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(c->io_error_limit));
}

static ssize_t io_error_limit_store(struct hc_cache_set *c, const char *buf,
				    size_t len)
{
	u32 v;
	int ret = kstrtou32(buf, 10, &v);

	if (ret)
		return ret;
	ret = hc_cache_tunable_keep(c, HC_CACHE_TUNE_IO_ERROR_LIMIT, v);
	if (ret)
		return ret;
	/* A limit lowered under the count fails the set now. */
	if (v && hc_cache_set_io_errors(c) >= v)
		hc_cache_set_fail(c, HC_FAIL_ERRORS);
	return len;
}

static ssize_t io_error_halflife_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(c->io_error_halflife));
}

static ssize_t io_error_halflife_store(struct hc_cache_set *c,
				       const char *buf, size_t len)
{
	u32 v;
	int ret = kstrtou32(buf, 10, &v);

	if (ret)
		return ret;
	if (v > HC_IO_ERROR_HALFLIFE_MAX)
		return -ERANGE;
	ret = hc_cache_tunable_keep(c, HC_CACHE_TUNE_IO_ERROR_HALFLIFE, v);
	return ret ? ret : len;
}

static ssize_t io_errors_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%u\n", hc_cache_set_io_errors(c));
}

static int hc_u16_cmp(const void *a, const void *b)
{
	u16 x = *(const u16 *)a, y = *(const u16 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The buckets outside the superblock and journal by what they hold, the
 * data buckets by how full they are (eighths of a bucket) and the
 * quantiles of their lru priorities.
 */
static ssize_t bucket_usage_show(struct hc_cache_set *c, char *buf)
{
	const struct hc_geom *g = &c->geom;
	u64 unused = 0, clean = 0, dirty = 0, meta = 0, fill[8] = {}, i;
	size_t nr = 0, q;
	u16 *prio;
	int len;

	prio = hc_big_array(g->nbuckets, sizeof(*prio), false);
	if (!prio)
		return -ENOMEM;
	down_read(&c->meta_lock);
	for (i = g->first_bucket; i < g->nbuckets; i++) {
		const struct hc_bucket *b = &c->buckets[i];
		u32 live = b->m.clean + b->m.dirty;

		switch (b->m.type) {
		case HC_BUCKET_BTREE:
		case HC_BUCKET_PRIO:
		case HC_BUCKET_TABLE:
			meta++;
			continue;
		case HC_BUCKET_JOURNAL:
		case HC_BUCKET_SB:
		case HC_BUCKET_CSUM:
			continue;
		}
		if (!live) {
			unused++;
			continue;
		}
		if (b->m.dirty)
			dirty++;
		else
			clean++;
		fill[min_t(u64, live * 8 / g->bucket_sectors, 7)]++;
		prio[nr++] = READ_ONCE(b->prio);
	}
	up_read(&c->meta_lock);
	sort(prio, nr, sizeof(*prio), hc_u16_cmp, NULL);
	len = sysfs_emit(buf, "buckets %llu\nunused %llu\nclean %llu\n",
			 unused + clean + dirty + meta, unused, clean);
	len += sysfs_emit_at(buf, len, "dirty %llu\nmetadata %llu\nfill",
			     dirty, meta);
	for (i = 0; i < 8; i++)
		len += sysfs_emit_at(buf, len, " %llu", fill[i]);
	len += sysfs_emit_at(buf, len, "\nprio_quantiles");
	for (q = 1; q < 16; q++)
		len += sysfs_emit_at(buf, len, " %u",
				     nr ? prio[nr * q / 16] : 0);
	len += sysfs_emit_at(buf, len, "\n");
	kvfree(prio);
	return len;
}

static ssize_t errors_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&c->errors));
}

static ssize_t checksum_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%s\n", hc_csum_on(c) ? "crc32c" : "none");
}

static ssize_t csum_errors_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&c->csum.errors));
}

static ssize_t csum_bad_dirty_show(struct hc_cache_set *c, char *buf)
{
	return hc_csum_bad_show(c, buf);
}

static ssize_t stop_store(struct hc_cache_set *c, const char *buf, size_t len)
{
	hc_cache_set_stop_async(c, false);
	return len;
}

static ssize_t clear_stats_store(struct hc_cache_set *c, const char *buf,
				 size_t len)
{
	bool v;

	if (kstrtobool(buf, &v) || !v)
		return -EINVAL;
	hc_stats_clear(&c->io_stats);
	return len;
}

static ssize_t unregister_store(struct hc_cache_set *c, const char *buf,
				size_t len)
{
	hc_cache_set_stop_async(c, true);
	return len;
}

#define HC_SET_ATTR_RO(name) \
	static struct hc_set_attr hc_set_attr_##name = __ATTR_RO(name)
#define HC_SET_ATTR_RW(name) \
	static struct hc_set_attr hc_set_attr_##name = __ATTR_RW(name)
#define HC_SET_ATTR_WO(name) \
	static struct hc_set_attr hc_set_attr_##name = __ATTR_WO(name)

HC_SET_ATTR_RO(bucket_size);
HC_SET_ATTR_RO(block_size);
HC_SET_ATTR_RO(nbuckets);
HC_SET_ATTR_RO(cache_available_percent);
HC_SET_ATTR_RO(tree_depth);
HC_SET_ATTR_RO(btree_cache_size);
HC_SET_ATTR_RO(average_key_size);
HC_SET_ATTR_RW(journal_delay_ms);
HC_SET_ATTR_RW(io_error_limit);
HC_SET_ATTR_RW(io_error_halflife);
HC_SET_ATTR_RO(io_errors);
HC_SET_ATTR_RO(errors);
HC_SET_ATTR_RO(checksum);
HC_SET_ATTR_RO(csum_errors);
HC_SET_ATTR_RO(csum_bad_dirty);
HC_SET_ATTR_RO(bucket_usage);
HC_SET_ATTR_WO(stop);
HC_SET_ATTR_WO(unregister);
HC_SET_ATTR_WO(clear_stats);

static struct attribute *hc_cache_set_attrs[] = {
	&hc_set_attr_bucket_size.attr,
	&hc_set_attr_block_size.attr,
	&hc_set_attr_nbuckets.attr,
	&hc_set_attr_cache_available_percent.attr,
	&hc_set_attr_bucket_usage.attr,
	&hc_set_attr_tree_depth.attr,
	&hc_set_attr_btree_cache_size.attr,
	&hc_set_attr_average_key_size.attr,
	&hc_set_attr_journal_delay_ms.attr,
	&hc_set_attr_errors.attr,
	&hc_set_attr_io_error_limit.attr,
	&hc_set_attr_io_error_halflife.attr,
	&hc_set_attr_io_errors.attr,
	&hc_set_attr_checksum.attr,
	&hc_set_attr_csum_errors.attr,
	&hc_set_attr_csum_bad_dirty.attr,
	&hc_set_attr_stop.attr,
	&hc_set_attr_unregister.attr,
	&hc_set_attr_clear_stats.attr,
	NULL
};
ATTRIBUTE_GROUPS(hc_cache_set);

/* internal/: counters for debugging, one value per file. */
#define HC_INTERNAL(name, expr)						\
static ssize_t name##_show(struct hc_cache_set *c, char *buf)		\
{									\
	u64 v;								\
									\
	down_read(&c->meta_lock);					\
	v = (expr);							\
	up_read(&c->meta_lock);						\
	return sysfs_emit(buf, "%llu\n", v);				\
}									\
HC_SET_ATTR_RO(name)

HC_INTERNAL(journal_seq, READ_ONCE(c->journal.seq));
HC_INTERNAL(journal_last_seq, READ_ONCE(c->journal.last_seq));
HC_INTERNAL(journal_entries_written,
	    READ_ONCE(c->journal.entries_written));
HC_INTERNAL(journal_reclaims, c->journal.reclaims);
HC_INTERNAL(btree_nodes_cached, c->nr_nodes);
HC_INTERNAL(btree_leaf_keys, c->leaf_keys);
HC_INTERNAL(btree_node_writes, c->stats.node_writes);
HC_INTERNAL(btree_node_rewrites, c->stats.node_rewrites);
HC_INTERNAL(btree_node_splits, c->stats.node_splits);
HC_INTERNAL(btree_node_merges, c->stats.node_merges);
HC_INTERNAL(btree_node_reads, c->stats.node_reads);
HC_INTERNAL(btree_node_sets_read_max, c->stats.node_sets_read_max);
HC_INTERNAL(prio_writes, c->stats.prio_writes);
HC_INTERNAL(csum_blocks_written, c->csum.blocks_written);
HC_INTERNAL(buckets_invalidated, c->stats.buckets_invalidated);
HC_INTERNAL(buckets_gen_limited, c->stats.gen_limited);
HC_INTERNAL(buckets_gen_wrapped, c->stats.gen_wrapped);
HC_INTERNAL(free_move, c->free[HC_RESERVE_MOVE].nr);
HC_INTERNAL(gc_runs, c->gc.runs);
HC_INTERNAL(gc_last_duration_ms, c->gc.last_ms);
HC_INTERNAL(gc_nodes_rewritten, c->gc.nodes_rewritten);
HC_INTERNAL(gc_keys_dropped, c->gc.keys_dropped);
HC_INTERNAL(gc_buckets_moved, c->gc.buckets_moved);
HC_INTERNAL(gc_move_rounds, c->gc.move_rounds);
HC_INTERNAL(gc_move_runs, c->gc.move_runs);
HC_INTERNAL(gc_sectors_moved, c->gc.sectors_moved);

/* Run garbage collection now; returns once it has run. */
static ssize_t trigger_gc_store(struct hc_cache_set *c, const char *buf,
				size_t len)
{
	bool v;
	int ret;

	if (kstrtobool(buf, &v) || !v)
		return -EINVAL;
	ret = hc_gc_trigger(c);
	return ret ? ret : len;
}
HC_SET_ATTR_WO(trigger_gc);
HC_INTERNAL(free_prio, c->free[HC_RESERVE_PRIO].nr);
HC_INTERNAL(free_btree, c->free[HC_RESERVE_BTREE].nr);
HC_INTERNAL(free_data, c->free[HC_RESERVE_DATA].nr);
HC_INTERNAL(table_bucket, c->table_bucket);
HC_INTERNAL(prio_bucket, c->prio_chain[0]);
HC_INTERNAL(root_bucket, c->root->bucket);

static struct attribute *hc_cache_set_internal_attrs[] = {
	&hc_set_attr_journal_seq.attr,
	&hc_set_attr_journal_last_seq.attr,
	&hc_set_attr_journal_entries_written.attr,
	&hc_set_attr_journal_reclaims.attr,
	&hc_set_attr_btree_nodes_cached.attr,
	&hc_set_attr_btree_leaf_keys.attr,
	&hc_set_attr_btree_node_writes.attr,
	&hc_set_attr_btree_node_rewrites.attr,
	&hc_set_attr_btree_node_splits.attr,
	&hc_set_attr_btree_node_merges.attr,
	&hc_set_attr_btree_node_reads.attr,
	&hc_set_attr_btree_node_sets_read_max.attr,
	&hc_set_attr_prio_writes.attr,
	&hc_set_attr_csum_blocks_written.attr,
	&hc_set_attr_buckets_invalidated.attr,
	&hc_set_attr_buckets_gen_limited.attr,
	&hc_set_attr_buckets_gen_wrapped.attr,
	&hc_set_attr_free_move.attr,
	&hc_set_attr_gc_runs.attr,
	&hc_set_attr_gc_last_duration_ms.attr,
	&hc_set_attr_gc_nodes_rewritten.attr,
	&hc_set_attr_gc_keys_dropped.attr,
	&hc_set_attr_gc_buckets_moved.attr,
	&hc_set_attr_gc_move_rounds.attr,
	&hc_set_attr_gc_move_runs.attr,
	&hc_set_attr_gc_sectors_moved.attr,
	&hc_set_attr_trigger_gc.attr,
	&hc_set_attr_free_prio.attr,
	&hc_set_attr_free_btree.attr,
	&hc_set_attr_free_data.attr,
	&hc_set_attr_table_bucket.attr,
	&hc_set_attr_prio_bucket.attr,
	&hc_set_attr_root_bucket.attr,
	NULL
};
ATTRIBUTE_GROUPS(hc_cache_set_internal);

/* <cache device>/hcache/ */
static ssize_t cache_replacement_policy_show(struct hc_cache_set *c,
					     char *buf)
{
	return hc_sysfs_choice_show(buf, hc_replacement_names_table,
				    HC_REPL_NR, READ_ONCE(c->replacement));
}

static ssize_t cache_replacement_policy_store(struct hc_cache_set *c,
					      const char *buf, size_t len)
{
	int i = sysfs_match_string(hc_replacement_names_table, buf);
	unsigned int old;
	int ret;

	if (i < 0)
		return -EINVAL;
	ret = hc_cache_lock_registered(c);
	if (ret)
		return ret;
	old = c->replacement;
	down_write(&c->meta_lock);
	c->replacement = i;
	c->sb.cache.replacement = i;
	up_write(&c->meta_lock);
	ret = hc_cache_sb_update(c);
	if (ret) {
		down_write(&c->meta_lock);
		c->replacement = old;
		c->sb.cache.replacement = old;
		up_write(&c->meta_lock);
	}
	mutex_unlock(&hc_register_lock);
	return ret ? ret : len;
}

static ssize_t discard_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(c->discard));
}

static ssize_t discard_store(struct hc_cache_set *c, const char *buf,
			     size_t len)
{
	bool on;
	int ret = kstrtobool(buf, &on);

	if (ret)
		return ret;
	ret = hc_cache_lock_registered(c);
	if (ret)
		return ret;
	down_write(&c->meta_lock);
	c->discard = on;
	c->sb.cache.discard = on;
	up_write(&c->meta_lock);
	ret = hc_cache_sb_update(c);
	if (ret) {
		down_write(&c->meta_lock);
		c->discard = !on;
		c->sb.cache.discard = !on;
		up_write(&c->meta_lock);
	}
	mutex_unlock(&hc_register_lock);
	return ret ? ret : len;
}

static ssize_t set_uuid_show(struct hc_cache_set *c, char *buf)
{
	return sysfs_emit(buf, "%pU\n", c->sb.set_uuid);
}

HC_SET_ATTR_RW(cache_replacement_policy);
HC_SET_ATTR_RW(discard);
HC_SET_ATTR_RO(set_uuid);

static struct attribute *hc_cache_dev_attrs[] = {
	&hc_set_attr_cache_replacement_policy.attr,
	&hc_set_attr_discard.attr,
	&hc_set_attr_set_uuid.attr,
	NULL
};
ATTRIBUTE_GROUPS(hc_cache_dev);

static ssize_t hc_set_attr_show(struct hc_cache_set *c,
				struct attribute *attr, char *buf)
{
	return container_of(attr, struct hc_set_attr, attr)->show(c, buf);
}

static ssize_t hc_set_attr_store(struct hc_cache_set *c,
				 struct attribute *attr, const char *buf,
				 size_t len)
{
	return container_of(attr, struct hc_set_attr, attr)->store(c, buf,
								   len);
}

/* One set of sysfs_ops per kobject: each finds the set its own way. */
#define HC_SET_SYSFS_OPS(prefix, member)				\
static struct hc_cache_set *prefix##_set(struct kobject *kobj)		\
{									\
	return container_of(kobj, struct hc_cache_set, member);		\
}									\
static ssize_t prefix##_show(struct kobject *kobj,			\
			     struct attribute *attr, char *buf)		\
{									\
	return hc_set_attr_show(prefix##_set(kobj), attr, buf);		\
}									\
static ssize_t prefix##_store(struct kobject *kobj,			\
			      struct attribute *attr, const char *buf,	\
			      size_t len)				\
{									\
	return hc_set_attr_store(prefix##_set(kobj), attr, buf, len);	\
}									\
static const struct sysfs_ops prefix##_ops = {				\
	.show	= prefix##_show,					\
	.store	= prefix##_store,					\
}

HC_SET_SYSFS_OPS(hc_set_main, kobj);
HC_SET_SYSFS_OPS(hc_set_internal, internal);
HC_SET_SYSFS_OPS(hc_set_cache_dev, cache_kobj);

static void hc_cache_set_release(struct kobject *kobj)
{
	hc_cache_set_free(container_of(kobj, struct hc_cache_set, kobj));
}

/* The other two kobjects hold a reference on the set's. */
static void hc_cache_set_internal_release(struct kobject *kobj)
{
	kobject_put(&container_of(kobj, struct hc_cache_set, internal)->kobj);
}

static void hc_cache_dev_release(struct kobject *kobj)
{
	kobject_put(&container_of(kobj, struct hc_cache_set,
				  cache_kobj)->kobj);
}

const struct kobj_type hc_cache_set_ktype = {
	.release	= hc_cache_set_release,
	.sysfs_ops	= &hc_set_main_ops,
	.default_groups	= hc_cache_set_groups,
};

const struct kobj_type hc_cache_set_internal_ktype = {
	.release	= hc_cache_set_internal_release,
	.sysfs_ops	= &hc_set_internal_ops,
	.default_groups	= hc_cache_set_internal_groups,
};

const struct kobj_type hc_cache_dev_ktype = {
	.release	= hc_cache_dev_release,
	.sysfs_ops	= &hc_set_cache_dev_ops,
	.default_groups	= hc_cache_dev_groups,
};
