// SPDX-License-Identifier: GPL-2.0
/*
 * btree.c: the btree of extents: nodes on disk and in memory, the node
 * cache and its shrinker, descent, inserts that split full nodes on the
 * way down, node writes (appending a sorted set, or rewriting the node
 * into a new bucket when it is full or holds HC_NODE_SETS_MAX sets),
 * lookups and walks.
 *
 * Writes and crash consistency (design.rst): a leaf's new keys are in the
 * journal before the leaf is written, so a leaf is written lazily, when
 * the journal needs its space or the node needs room. An interior node is
 * written as soon as it changes, and a child is written before its parent
 * points at it, so every node a parent names is on disk. A node rewritten
 * into a new bucket leaves its old bucket free but unused until the next
 * refill, and a refill writes a journal entry naming the current root
 * before handing any bucket out: whatever root the newest journal entry
 * names, the nodes under it are intact.
 */

#include "hcache.h"
#include "debug.h"

#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#define HC_NODE_HASH_BITS	10
/* Positions: the whole key space, for the root. */
#define HC_POS_MIN		((struct hc_pos){ 0, 0 })
#define HC_POS_MAX		((struct hc_pos){ U32_MAX, U64_MAX })

static u32 hc_bucket_bytes(struct hc_cache_set *c)
{
	return c->geom.bucket_sectors << SECTOR_SHIFT;
}

static u32 hc_node_hdr_bytes(struct hc_cache_set *c)
{
	return round_up(sizeof(struct hc_btree_node_disk), c->block_size);
}

/*
 * How many keys a node holds at most, by level. A leaf takes an insert at
 * a random place in one sorted array, a memmove of half of it, with
 * meta_lock held for writing: a bucket's worth of keys (16k for 512 KiB)
 * made that the biggest cost of a read miss. Leaves are held to
 * HC_LEAF_KEYS, interior nodes to HC_INTERIOR_KEYS (a fan-out of
 * thousands: three levels hold billions of keys), or to what their bucket
 * holds if less. Their arrays are sized to that, not to the bucket.
 */
static size_t hc_level_keys_max(struct hc_cache_set *c, u8 level)
{
	return min_t(size_t, c->node_cap,
		     level ? HC_INTERIOR_KEYS : HC_LEAF_KEYS);
}

static size_t hc_node_keys_max(struct hc_cache_set *c,
			       const struct hc_btree_node *n)
{
	return hc_level_keys_max(c, n->level);
}

/* A node splits before an insert could leave it more than 3/4 full. */
static bool hc_node_needs_split(struct hc_cache_set *c,
				struct hc_btree_node *n)
{
	return n->keys.nr + 3 > hc_node_keys_max(c, n) * 3 / 4;
}

static struct hc_pos hc_key_pos(const struct hc_key *k)
{
	return (struct hc_pos){ k->bdev_id, k->end };
}

/* Which reserve a node of @level comes from: 0 for leaves, 1 interior. */
static unsigned int hc_reserve_pool(u8 level)
{
	return level ? 1 : 0;
}

/*
 * A node with arrays of @cap keys, or NULL. On the I/O path (GFP_NOIO)
 * the debug build can fail it as memory pressure would.
 */
static struct hc_btree_node *hc_node_new(size_t cap, gfp_t gfp)
{
	struct hc_btree_node *n;
	struct hc_key *keys, *pending;

	if (!(gfp & __GFP_IO) && hc_debug_fault(HC_FAULT_NODE_ALLOC))
		return NULL;
	n = kzalloc(sizeof(*n), gfp);
	if (!n)
		return NULL;
	keys = kvmalloc_array(cap, sizeof(*keys), gfp);
	pending = kvmalloc_array(cap, sizeof(*pending), gfp);
	if (!keys || !pending) {
		kvfree(keys);
		kvfree(pending);
		kfree(n);
		return NULL;
	}
	n->keys.keys = keys;
	n->keys.capacity = cap;
	n->pending.keys = pending;
	n->pending.capacity = cap;
	return n;
}

static void hc_node_release(struct hc_btree_node *n)
{
	kvfree(n->keys.keys);
	kvfree(n->pending.keys);
	kfree(n);
}

/* Empty @n for (re)use at @level. */
static void hc_node_reset(struct hc_btree_node *n, u8 level)
{
	struct hc_key *keys = n->keys.keys, *pending = n->pending.keys;
	size_t cap = n->keys.capacity;

	memset(n, 0, sizeof(*n));
	hc_bset_init(&n->keys, keys, cap);
	hc_bset_init(&n->pending, pending, cap);
	n->pending.keep_whiteouts = true;
	n->level = level;
	INIT_HLIST_NODE(&n->hash);
	INIT_LIST_HEAD(&n->lru);
	INIT_LIST_HEAD(&n->dirty);
}

/*
 * A node for @level: allocated if memory allows at once, else taken from
 * the set's reserve (struct hc_cache_set.node_reserve), which inserts
 * keep filled (hc_btree_reserve_fill()): memory pressure must not fail an
 * update half way, nor a lookup. Any context that may sleep; NULL only
 * when the reserve is empty too.
 */
static struct hc_btree_node *hc_node_alloc(struct hc_cache_set *c, u8 level)
{
	const gfp_t gfp = GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN;
	struct hc_node_reserve *r = &c->node_reserve[hc_reserve_pool(level)];
	struct hc_btree_node *n = hc_node_new(hc_level_keys_max(c, level), gfp);

	if (!n) {
		spin_lock(&c->node_reserve_lock);
		n = list_first_entry_or_null(&r->nodes, struct hc_btree_node,
					     lru);
		if (n) {
			list_del(&n->lru);
			r->nr--;
		}
		spin_unlock(&c->node_reserve_lock);
		if (!n)
			return NULL;
	}
	hc_node_reset(n, level);
	return n;
}

/*
 * Done with @n (off every list): back to the reserve of its level if that
 * is short and @n is of its size, else freed. Any context that may sleep.
 */
static void hc_node_free(struct hc_cache_set *c, struct hc_btree_node *n)
{
	struct hc_node_reserve *r = &c->node_reserve[hc_reserve_pool(n->level)];

	if (n->keys.capacity == hc_level_keys_max(c, n->level)) {
		spin_lock(&c->node_reserve_lock);
		if (r->nr < HC_NODE_RESERVE) {
			list_add(&n->lru, &r->nodes);
			r->nr++;
			n = NULL;
		}
		spin_unlock(&c->node_reserve_lock);
	}
	if (n)
		hc_node_release(n);
}

/*
 * Grow @n's arrays to @cap keys, keeping what they hold: for a node read
 * from disk that holds more than its level now allows (written with
 * larger limits); it splits at its next insert. Return: 0 or -ENOMEM.
 */
static int hc_node_grow(struct hc_btree_node *n, size_t cap)
{
	struct hc_key *keys, *pending;

	keys = kvmalloc_array(cap, sizeof(*keys), GFP_NOIO);
	pending = kvmalloc_array(cap, sizeof(*pending), GFP_NOIO);
	if (!keys || !pending) {
		kvfree(keys);
		kvfree(pending);
		return -ENOMEM;
	}
	memcpy(keys, n->keys.keys, n->keys.nr * sizeof(*keys));
	memcpy(pending, n->pending.keys, n->pending.nr * sizeof(*pending));
	kvfree(n->keys.keys);
	kvfree(n->pending.keys);
	n->keys.keys = keys;
	n->keys.capacity = cap;
	n->pending.keys = pending;
	n->pending.capacity = cap;
	return 0;
}

/*
 * Note that @n has keys not on disk: hc_btree_flush() and the journal's
 * reclaim find it on the set's list of dirty nodes. meta_lock held for
 * writing.
 */
static void hc_node_dirtied(struct hc_cache_set *c, struct hc_btree_node *n)
{
	lockdep_assert_held_write(&c->meta_lock);
	if (list_empty(&n->dirty))
		list_add_tail(&n->dirty, &c->dirty_nodes);
}

/* @n's pending keys are on disk. meta_lock held for writing. */
static void hc_node_cleaned(struct hc_btree_node *n)
{
	n->pending.nr = 0;
	n->journal_pin = 0;
	list_del_init(&n->dirty);
}

static struct hlist_head *hc_node_bucket_head(struct hc_cache_set *c,
					      u64 bucket)
{
	return &c->node_hash[hash_64(bucket, c->node_hash_bits)];
}

/*
 * The node hash is searched without node_cache_lock, under meta_lock held
 * for reading (hc_node_cache_find()), while another reader may add a node
 * it has just read: adds publish the node whole (hlist_add_head_rcu()).
 * Nodes leave the hash, and are freed, only with meta_lock held for
 * writing, when no search runs: no grace period is needed.
 */
static void hc_node_cache_add(struct hc_cache_set *c, struct hc_btree_node *n)
{
	lockdep_assert_held(&c->node_cache_lock);
	hlist_add_head_rcu(&n->hash, hc_node_bucket_head(c, n->bucket));
	if (!n->level)
		list_add_tail(&n->lru, &c->node_lru);
	c->nr_nodes++;
}

/* Off the hash and every list of the node cache. */
static void __hc_node_cache_del(struct hc_cache_set *c,
				struct hc_btree_node *n)
{
	hlist_del_init_rcu(&n->hash);
	list_del_init(&n->lru);
	list_del_init(&n->dirty);
	c->nr_nodes--;
}

static void hc_node_cache_del(struct hc_cache_set *c, struct hc_btree_node *n)
{
	lockdep_assert_held(&c->node_cache_lock);
	lockdep_assert_held_write(&c->meta_lock);
	__hc_node_cache_del(c, n);
}

/* The cached node in @bucket, or NULL. meta_lock held (either way). */
static struct hc_btree_node *hc_node_cache_find(struct hc_cache_set *c,
						u64 bucket)
{
	struct hc_btree_node *n;

	hlist_for_each_entry_rcu(n, hc_node_bucket_head(c, bucket), hash,
				 lockdep_is_held(&c->meta_lock))
		if (n->bucket == bucket)
			return n;
	return NULL;
}

/*
 * Take up to @nr clean leaves out of the node cache, least recently used
 * first, onto @out (by their lru). Return: how many. node_cache_lock
 * held, and meta_lock for writing, so that no lookup holds a leaf.
 *
 * A clock: a leaf marked used (lookups mark it without node_cache_lock)
 * moves to the tail, unmarked, and is reached again only after every
 * other. One pass; each leaf is passed at most twice.
 */
static unsigned long hc_node_evict(struct hc_cache_set *c, unsigned long nr,
				   struct list_head *out)
{
	struct hc_btree_node *n, *tmp;
	unsigned long taken = 0;

	lockdep_assert_held(&c->node_cache_lock);
	lockdep_assert_held_write(&c->meta_lock);
	list_for_each_entry_safe(n, tmp, &c->node_lru, lru) {
		if (taken >= nr)
			break;
		if (n->used) {
			n->used = false;
			list_move_tail(&n->lru, &c->node_lru);
			continue;
		}
		if (n == c->root || n->pending.nr)
			continue;
		hc_node_cache_del(c, n);
		list_add_tail(&n->lru, out);
		taken++;
	}
	return taken;
}

/* One clean leaf out of the node cache, for the reserve; NULL if none. */
static struct hc_btree_node *hc_node_evict_one(struct hc_cache_set *c)
{
	struct hc_btree_node *n;
	LIST_HEAD(out);

	if (!hc_node_evict(c, 1, &out))
		return NULL;
	n = list_first_entry(&out, struct hc_btree_node, lru);
	list_del_init(&n->lru);
	return n;
}

/**
 * hc_btree_init() - the node cache of a new set
 * @c: the set, its geometry known
 *
 * Return: 0 or -ENOMEM.
 */
int hc_btree_init(struct hc_cache_set *c)
{
	u32 bytes = hc_bucket_bytes(c);
	unsigned int i;

	mutex_init(&c->node_cache_lock);
	INIT_LIST_HEAD(&c->node_lru);
	INIT_LIST_HEAD(&c->dirty_nodes);
	spin_lock_init(&c->node_reserve_lock);
	for (i = 0; i < ARRAY_SIZE(c->node_reserve); i++)
		INIT_LIST_HEAD(&c->node_reserve[i].nodes);
	c->node_cap = (bytes - hc_node_hdr_bytes(c) -
		       sizeof(struct hc_bset_disk)) /
		      (hc_key_disk_u64s(1) * sizeof(u64));
	c->node_hash_bits = HC_NODE_HASH_BITS;
	c->node_hash = kvcalloc(1U << c->node_hash_bits,
				sizeof(*c->node_hash), GFP_KERNEL);
	c->node_buf = kvmalloc(bytes, GFP_KERNEL);
	c->read_buf = kvmalloc(bytes, GFP_KERNEL);
	for (i = 0; i < ARRAY_SIZE(c->scratch); i++)
		c->scratch[i] = kvmalloc_array(c->node_cap,
					       sizeof(struct hc_key),
					       GFP_KERNEL);
	if (!c->node_hash || !c->node_buf || !c->read_buf || !c->scratch[0] ||
	    !c->scratch[1])
		return -ENOMEM;
	for (i = 0; i < 1U << c->node_hash_bits; i++)
		INIT_HLIST_HEAD(&c->node_hash[i]);
	for (i = 0; i < ARRAY_SIZE(c->node_reserve); i++) {
		struct hc_node_reserve *r = &c->node_reserve[i];

		while (r->nr < HC_NODE_RESERVE) {
			struct hc_btree_node *n;

			n = hc_node_new(hc_level_keys_max(c, i), GFP_KERNEL);
			if (!n)
				return -ENOMEM;
			list_add(&n->lru, &r->nodes);
			r->nr++;
		}
	}
	return 0;
}

/**
 * hc_btree_reserve_fill() - top up the reserve of nodes
 * @c: the set; meta_lock held for writing
 *
 * Called before an insert, so that the splits and reads it may need find
 * nodes even when memory is short (hc_node_alloc()). What allocation
 * cannot give, quickly, comes from the node cache: clean leaves, least
 * recently used first, evicted into the leaf reserve. Nothing holds a
 * node across an insert, so any clean leaf may go. May sleep.
 */
void hc_btree_reserve_fill(struct hc_cache_set *c)
{
	const gfp_t gfp = GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN;
	unsigned int i;

	lockdep_assert_held_write(&c->meta_lock);
	for (i = 0; i < ARRAY_SIZE(c->node_reserve); i++) {
		struct hc_node_reserve *r = &c->node_reserve[i];
		struct hc_btree_node *n;

		while (READ_ONCE(r->nr) < HC_NODE_RESERVE) {
			n = hc_node_new(hc_level_keys_max(c, i), gfp);
			if (!n && !i) {
				mutex_lock(&c->node_cache_lock);
				n = hc_node_evict_one(c);
				mutex_unlock(&c->node_cache_lock);
			}
			if (!n)
				break;
			hc_node_reset(n, i);
			hc_node_free(c, n);
		}
	}
}

/**
 * hc_btree_exit() - free every cached node and the cache itself
 * @c: the set, no longer in use
 */
void hc_btree_exit(struct hc_cache_set *c)
{
	struct hc_btree_node *n;
	struct hlist_node *tmp;
	unsigned int i;

	if (c->node_hash) {
		/* No lookup runs any more: no meta_lock needed. */
		mutex_lock(&c->node_cache_lock);
		for (i = 0; i < 1U << c->node_hash_bits; i++)
			hlist_for_each_entry_safe(n, tmp, &c->node_hash[i],
						  hash) {
				__hc_node_cache_del(c, n);
				hc_node_release(n);
			}
		mutex_unlock(&c->node_cache_lock);
	}
	/*
	 * A registration refused before hc_btree_init() (a duplicate set, a
	 * bad geometry) leaves the reserve lists zeroed, not empty; the
	 * reserves are only filled once node_hash is allocated.
	 */
	for (i = 0; c->node_hash && i < ARRAY_SIZE(c->node_reserve); i++) {
		struct hc_node_reserve *r = &c->node_reserve[i];

		while (!list_empty(&r->nodes)) {
			n = list_first_entry(&r->nodes, struct hc_btree_node,
					     lru);
			list_del(&n->lru);
			r->nr--;
			hc_node_release(n);
		}
	}
	c->root = NULL;
	for (i = 0; i < ARRAY_SIZE(c->scratch); i++)
		kvfree(c->scratch[i]);
	kvfree(c->read_buf);
	kvfree(c->node_buf);
	kvfree(c->node_hash);
}

/* The key a parent holds for @n: size 1 at @n's max, pointing at it. */
static struct hc_key hc_node_child_key(const struct hc_btree_node *n)
{
	return (struct hc_key){
		.bdev_id = n->max.bdev,
		.end = n->max.end,
		.size = 1,
		.nr_ptrs = 1,
		.ptr = n->ptr,
	};
}

/*
 * Write all of @n (header and its keys as one sorted set) into @bucket,
 * freshly allocated, with a new node_seq; @n then lives there.
 */
static int hc_node_write_whole(struct hc_cache_set *c,
			       struct hc_btree_node *n, u64 bucket)
{
	struct hc_btree_node_disk *hdr = c->node_buf;
	u32 hdr_bytes = hc_node_hdr_bytes(c);
	struct hc_bset_info info;
	size_t set_bytes;
	u64 sector = hc_bucket_to_sector(&c->geom, bucket);
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	set_bytes = round_up(hc_bset_bytes(hc_bset_encode_u64s(&n->keys)),
			     c->block_size);
	if (WARN_ON_ONCE(hdr_bytes + set_bytes > hc_bucket_bytes(c)))
		return -EOVERFLOW;
	memset(c->node_buf, 0, hdr_bytes + set_bytes);
	n->node_seq = get_random_u64();
	hdr->magic = cpu_to_le64(c->set_magic ^ HC_BTREE_MAGIC);
	hdr->level = n->level;
	hdr->node_seq = cpu_to_le64(n->node_seq);
	hdr->min_bdev = cpu_to_le32(n->min.bdev);
	hdr->min_end = cpu_to_le64(n->min.end);
	hdr->max_bdev = cpu_to_le32(n->max.bdev);
	hdr->max_end = cpu_to_le64(n->max.end);
	hdr->csum = cpu_to_le32(hc_csum_skip(hdr, sizeof(*hdr),
					     offsetof(struct hc_btree_node_disk,
						      csum)));
	info.node_seq = n->node_seq;
	info.journal_seq = c->journal.seq;
	ret = hc_bset_encode(&n->keys, c->set_magic, &info,
			     c->node_buf + hdr_bytes, set_bytes);
	if (WARN_ON_ONCE(ret))
		return ret;
	ret = hc_meta_write(c, REQ_OP_WRITE | REQ_META | REQ_FUA, sector,
			    c->node_buf, hdr_bytes + set_bytes);
	if (ret)
		return ret;
	n->bucket = bucket;
	n->ptr = hc_ptr_make(sector, 0, c->buckets[bucket].gen);
	n->written = hdr_bytes + set_bytes;
	n->sets = 1;
	hc_node_cleaned(n);
	c->stats.node_writes++;
	return 0;
}

/*
 * A bucket for a btree node; none is an error of the set, logged with
 * @why (what the bucket was for).
 */
static int hc_node_bucket_alloc(struct hc_cache_set *c, const char *why,
				u64 *bucket)
{
	int ret;

	ret = hc_bucket_alloc(c, HC_RESERVE_BTREE, HC_BUCKET_BTREE, bucket);
	if (ret)
		hc_cache_set_error(c, "no bucket %s (error %d)", why, ret);
	return ret;
}

/* A new node: allocate its bucket and write it whole. */
static int hc_node_write_new(struct hc_cache_set *c, struct hc_btree_node *n)
{
	u64 bucket;
	int ret;

	ret = hc_node_bucket_alloc(c, "for a btree node", &bucket);
	if (ret)
		return ret;
	ret = hc_node_write_whole(c, n, bucket);
	if (ret)
		hc_bucket_free_meta(c, bucket);
	return ret;
}

static int hc_node_write(struct hc_cache_set *c, struct hc_btree_node *n);

/* Store @child's key in @parent and write @parent out. */
static int hc_node_set_child(struct hc_cache_set *c,
			     struct hc_btree_node *parent,
			     const struct hc_btree_node *child)
{
	struct hc_key k = hc_node_child_key(child);
	int ret;

	ret = hc_bset_insert(&parent->keys, &k, NULL);
	if (!ret)
		ret = hc_bset_insert(&parent->pending, &k, NULL);
	if (!ret)
		hc_node_dirtied(c, parent);
	if (ret) {
		hc_cache_set_error(c, "interior node in bucket %llu full (error %d)",
				   parent->bucket, ret);
		hc_cache_set_meta_fail(c);
		return ret;
	}
	ret = hc_node_write(c, parent);
	if (ret)
		hc_cache_set_meta_fail(c);
	return ret;
}

/*
 * Rewrite @n into @bucket, just allocated, compacting its sorted sets into
 * one, then point its parent at the new place. The old bucket is freed.
 */
static int hc_node_rewrite_to(struct hc_cache_set *c,
			      struct hc_btree_node *n, u64 bucket)
{
	u64 old_bucket = n->bucket, pin = n->journal_pin;
	int ret;

	ret = hc_node_write_whole(c, n, bucket);
	if (ret) {
		hc_bucket_free_meta(c, bucket);
		return ret;
	}
	/*
	 * Until the parent names the new bucket on disk, the tree there
	 * still reaches the old one, without @n's new keys: the parent
	 * holds the journal pin meanwhile (a root needs none: the next
	 * journal entry names it, with the last_seq that drops the pin).
	 */
	if (n->parent && pin &&
	    (!n->parent->journal_pin || pin < n->parent->journal_pin))
		n->parent->journal_pin = pin;
	mutex_lock(&c->node_cache_lock);
	hlist_del_rcu(&n->hash);
	hlist_add_head_rcu(&n->hash, hc_node_bucket_head(c, n->bucket));
	mutex_unlock(&c->node_cache_lock);
	c->stats.node_rewrites++;
	if (n->parent) {
		ret = hc_node_set_child(c, n->parent, n);
		if (ret)
			return ret;
	}
	/* The root: the next journal entry names it, before any reuse. */
	hc_bucket_free_meta(c, old_bucket);
	return 0;
}

/* hc_node_rewrite_to() a new bucket; none is an error of the set. */
static int hc_node_rewrite(struct hc_cache_set *c, struct hc_btree_node *n)
{
	u64 bucket;
	int ret;

	ret = hc_node_bucket_alloc(c, "to rewrite a btree node", &bucket);
	return ret ? ret : hc_node_rewrite_to(c, n, bucket);
}

/*
 * @n holds HC_NODE_SETS_MAX sorted sets: hc_node_rewrite_to() a new
 * bucket if one can be had. Return: 0, 1 if none could (the caller
 * appends, as correct and only slower to read), or -errno.
 *
 * Not while the mark pass runs behind I/O: refills then take only the
 * buckets the last stop marked empty, and the node's old bucket, unless
 * the pass handed it out, is not marked again when freed (struct
 * hc_mark_bg), so compactions would use up the floor kept for metadata.
 */
static int hc_node_compact(struct hc_cache_set *c, struct hc_btree_node *n)
{
	u64 bucket;
	int ret;

	if (READ_ONCE(c->mark_bg.running))
		return 1;
	ret = hc_bucket_alloc(c, HC_RESERVE_BTREE, HC_BUCKET_BTREE, &bucket);
	if (ret == -ENOSPC)
		return 1;
	if (ret)
		return ret;
	return hc_node_rewrite_to(c, n, bucket);
}

/*
 * Write what @n holds that is not on disk yet: append @n->pending as a
 * sorted set, or rewrite the node when the bucket has no room for it, or
 * compact it when it holds HC_NODE_SETS_MAX sets.
 */
static int hc_node_write(struct hc_cache_set *c, struct hc_btree_node *n)
{
	struct hc_bset_info info;
	size_t bytes;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (!n->pending.nr)
		return 0;
	if (c->meta_failed)
		return -EIO;
	bytes = round_up(hc_bset_bytes(hc_bset_encode_u64s(&n->pending)),
			 c->block_size);
	if (n->written + bytes > hc_bucket_bytes(c))
		return hc_node_rewrite(c, n);
	if (n->sets >= HC_NODE_SETS_MAX) {
		ret = hc_node_compact(c, n);
		if (ret <= 0)
			return ret;
	}

	memset(c->node_buf, 0, bytes);
	info.node_seq = n->node_seq;
	info.journal_seq = c->journal.seq;
	ret = hc_bset_encode(&n->pending, c->set_magic, &info, c->node_buf,
			     bytes);
	if (WARN_ON_ONCE(ret))
		return ret;
	ret = hc_meta_write(c, REQ_OP_WRITE | REQ_META | REQ_FUA,
			    hc_bucket_to_sector(&c->geom, n->bucket) +
			    (n->written >> SECTOR_SHIFT), c->node_buf, bytes);
	if (ret)
		return ret;
	n->written += bytes;
	n->sets++;
	hc_node_cleaned(n);
	c->stats.node_writes++;
	return 0;
}

/* Validate a node header against what its parent says it must be. */
static const char *hc_node_hdr_check(struct hc_cache_set *c,
				     const struct hc_btree_node_disk *hdr,
				     u8 level, struct hc_pos min,
				     struct hc_pos max)
{
	if (le64_to_cpu(hdr->magic) != (c->set_magic ^ HC_BTREE_MAGIC))
		return "bad btree node magic";
	if (le32_to_cpu(hdr->csum) !=
	    hc_csum_skip(hdr, sizeof(*hdr),
			 offsetof(struct hc_btree_node_disk, csum)))
		return "btree node header checksum mismatch";
	if (hdr->level != level)
		return "btree node at the wrong level";
	if (le32_to_cpu(hdr->min_bdev) != min.bdev ||
	    le64_to_cpu(hdr->min_end) != min.end ||
	    le32_to_cpu(hdr->max_bdev) != max.bdev ||
	    le64_to_cpu(hdr->max_end) != max.end)
		return "btree node range differs from its parent's";
	if (memchr_inv(hdr->pad0, 0, sizeof(hdr->pad0)) ||
	    memchr_inv(hdr->pad, 0, sizeof(hdr->pad)))
		return "btree node header padding not zero";
	return NULL;
}

/* Keys of an interior node: one per child, size 1, with a pointer. */
static const char *hc_node_interior_check(const struct hc_btree_node *n)
{
	size_t i;

	if (!n->keys.nr)
		return "interior node without children";
	for (i = 0; i < n->keys.nr; i++)
		if (n->keys.keys[i].size != 1 || n->keys.keys[i].nr_ptrs != 1)
			return "interior node key is not a child pointer";
	if (n->keys.keys[n->keys.nr - 1].bdev_id != n->max.bdev ||
	    n->keys.keys[n->keys.nr - 1].end != n->max.end)
		return "interior node's last child does not end at its max";
	return NULL;
}

/*
 * A sorted set of node @n at @off in c->read_buf fails its checksum. It is
 * what a crash in the middle of appending it leaves when the set is read
 * at registration, before the replay, the journal entries from its
 * journal_seq on are still to be replayed (a node write pins them) and
 * nothing of the node was written after it; the replay then dirties the
 * node, whose next append overwrites the torn one. Return NULL for that,
 * else why it is damage. Read at any other time it is damage: nothing
 * would bring its keys back.
 */
static const char *hc_node_bad_set(struct hc_cache_set *c,
				   const struct hc_btree_node *n,
				   const struct hc_bset_disk *d, u32 off,
				   u32 bytes)
{
	if (!READ_ONCE(c->load.phase))
		return "a sorted set fails its checksum";
	if (le64_to_cpu(d->journal_seq) < c->journal.last_seq)
		return "a sorted set fails its checksum, and the journal no longer holds its keys";
	for (off += c->block_size; off + sizeof(*d) <= bytes;
	     off += c->block_size) {
		const struct hc_bset_disk *next = c->read_buf + off;

		if (le64_to_cpu(next->magic) ==
		    (c->set_magic ^ HC_BSET_MAGIC) &&
		    le64_to_cpu(next->node_seq) == n->node_seq)
			return "a sorted set fails its checksum, and later ones follow it";
	}
	return NULL;
}

/*
 * Read the node @ptr points at, expected at @level covering (@min, @max]:
 * the header, then each sorted set of this node_seq, merged oldest first.
 * The node cache lock is held: it guards read_buf and the scratch arrays.
 */
static int hc_node_read(struct hc_cache_set *c, u64 ptr, u8 level,
			struct hc_pos min, struct hc_pos max,
			struct hc_btree_node **out)
{
	u32 bytes = hc_bucket_bytes(c);
	u64 bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(ptr));
	const struct hc_btree_node_disk *hdr = c->read_buf;
	struct hc_btree_node *n;
	const char *why = NULL;
	u32 off;
	int ret;

	lockdep_assert_held(&c->node_cache_lock);
	if (bucket < c->geom.first_bucket || bucket >= c->geom.nbuckets ||
	    hc_ptr_offset(ptr) != hc_bucket_to_sector(&c->geom, bucket)) {
		hc_cache_set_error(c, "btree pointer %llx is not a bucket",
				   ptr);
		return -EUCLEAN;
	}
	if (hc_ptr_stale(c->buckets[bucket].gen, hc_ptr_gen(ptr))) {
		hc_cache_set_error(c, "node in bucket %llu: stale pointer (gen %u, bucket %u)",
				   bucket, hc_ptr_gen(ptr),
				   c->buckets[bucket].gen);
		return -EUCLEAN;
	}
	ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
			 hc_bucket_to_sector(&c->geom, bucket), c->read_buf,
			 bytes);
	if (ret)
		return ret;
	c->stats.node_reads++;
	why = hc_node_hdr_check(c, hdr, level, min, max);
	if (why)
		goto corrupt;
	n = hc_node_alloc(c, level);
	if (!n)
		return -ENOMEM;
	n->bucket = bucket;
	n->ptr = ptr;
	n->min = min;
	n->max = max;
	n->node_seq = le64_to_cpu(hdr->node_seq);

	for (off = hc_node_hdr_bytes(c);
	     off + sizeof(struct hc_bset_disk) <= bytes;) {
		const struct hc_bset_disk *d = c->read_buf + off;
		struct hc_bset_mem set, merged;
		struct hc_bset_info info;

		hc_bset_init(&set, c->scratch[0], c->node_cap);
		set.keep_whiteouts = true;
		ret = hc_bset_decode(d, bytes - off, c->set_magic,
				     c->cache_sectors, &set, &info, &why);
		/*
		 * A set of this node failing its checksum is a torn last
		 * append only if the journal still holds its keys and no
		 * set of this node follows; else it is damage.
		 */
		if (ret == -EBADMSG &&
		    le64_to_cpu(d->node_seq) == n->node_seq) {
			why = hc_node_bad_set(c, n, d, off, bytes);
			if (why)
				goto corrupt_free;
		}
		/* Never written, torn, or left from an earlier node: the end. */
		if (ret == -EINVAL || ret == -EBADMSG ||
		    (!ret && info.node_seq != n->node_seq))
			break;
		if (ret)
			goto corrupt_free;
		hc_bset_init(&merged, c->scratch[1], c->node_cap);
		ret = hc_bset_merge(&merged, &n->keys, &set);
		if (ret) {
			why = "btree node holds more keys than fit";
			goto corrupt_free;
		}
		if (merged.nr > n->keys.capacity) {
			ret = hc_node_grow(n, c->node_cap);
			if (ret) {
				hc_node_free(c, n);
				return ret;
			}
		}
		memcpy(n->keys.keys, merged.keys, merged.nr * sizeof(*merged.keys));
		n->keys.nr = merged.nr;
		off += round_up(hc_bset_bytes(le32_to_cpu(d->u64s)),
				c->block_size);
		n->sets++;
	}
	n->written = off;
	if (n->sets > c->stats.node_sets_read_max)
		c->stats.node_sets_read_max = n->sets;
	why = hc_bset_check(&n->keys);
	if (!why)
		why = hc_node_range_check(n->keys.keys, n->keys.nr, min.bdev,
					  min.end, max.bdev, max.end);
	if (!why && level)
		why = hc_node_interior_check(n);
	if (why)
		goto corrupt_free;
	*out = n;
	return 0;

corrupt_free:
	hc_node_free(c, n);
corrupt:
	hc_cache_set_error(c, "btree node in bucket %llu: %s", bucket, why);
	return -EUCLEAN;
}

/* A cached child found for @k of @parent: is it that child? Marks it used. */
static int hc_node_cached_check(struct hc_cache_set *c,
				struct hc_btree_node *parent,
				const struct hc_key *k, struct hc_btree_node *n)
{
	if (n->ptr != k->ptr || n->parent != parent) {
		hc_cache_set_error(c, "cached node in bucket %llu is not its parent's",
				   n->bucket);
		return -EUCLEAN;
	}
	if (!n->level && !READ_ONCE(n->used))
		WRITE_ONCE(n->used, true);
	return 0;
}

/*
 * The child at @idx of interior node @parent, from the cache or read from
 * disk. Callers hold meta_lock, for reading at least. A cached child is
 * found without node_cache_lock, which only a read from disk takes.
 */
static int __hc_node_get(struct hc_cache_set *c, struct hc_btree_node *parent,
			 size_t idx, bool cached_only,
			 struct hc_btree_node **out)
{
	const struct hc_key *k = &parent->keys.keys[idx];
	u64 bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k->ptr));
	struct hc_pos min, max = hc_key_pos(k);
	struct hc_btree_node *n;
	int ret = 0;

	lockdep_assert_held(&c->meta_lock);
	*out = NULL;
	n = hc_node_cache_find(c, bucket);
	if (n) {
		ret = hc_node_cached_check(c, parent, k, n);
		if (!ret)
			*out = n;
		return ret;
	}
	if (cached_only)
		return -EAGAIN;
	min = idx ? hc_key_pos(&parent->keys.keys[idx - 1]) : parent->min;
	mutex_lock(&c->node_cache_lock);
	/* Another reader may have read it meanwhile. */
	n = hc_node_cache_find(c, bucket);
	if (n) {
		ret = hc_node_cached_check(c, parent, k, n);
		goto out;
	}
	ret = hc_node_read(c, k->ptr, parent->level - 1, min, max, &n);
	if (ret)
		goto out;
	n->parent = parent;
	hc_node_cache_add(c, n);
out:
	mutex_unlock(&c->node_cache_lock);
	if (!ret)
		*out = n;
	return ret;
}

static int hc_node_get(struct hc_cache_set *c, struct hc_btree_node *parent,
		       size_t idx, struct hc_btree_node **out)
{
	return __hc_node_get(c, parent, idx, false, out);
}

/**
 * hc_btree_new_root() - an empty tree, for a freshly formatted cache
 * @c: the set; meta_lock held for writing
 *
 * Return: 0 or -errno.
 */
int hc_btree_new_root(struct hc_cache_set *c)
{
	struct hc_btree_node *n = hc_node_alloc(c, 0);
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (!n)
		return -ENOMEM;
	n->min = HC_POS_MIN;
	n->max = HC_POS_MAX;
	ret = hc_node_write_new(c, n);
	if (ret) {
		hc_node_free(c, n);
		return ret;
	}
	mutex_lock(&c->node_cache_lock);
	hc_node_cache_add(c, n);
	mutex_unlock(&c->node_cache_lock);
	c->root = n;
	return 0;
}

/**
 * hc_btree_load_root() - read the root the newest journal entry names
 * @c: the set; meta_lock held for writing
 * @ptr: the root's pointer
 * @level: its level
 *
 * Return: 0, an I/O error, or -EUCLEAN (logged).
 */
int hc_btree_load_root(struct hc_cache_set *c, u64 ptr, u8 level)
{
	struct hc_btree_node *n;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	mutex_lock(&c->node_cache_lock);
	ret = hc_node_read(c, ptr, level, HC_POS_MIN, HC_POS_MAX, &n);
	if (!ret)
		hc_node_cache_add(c, n);
	mutex_unlock(&c->node_cache_lock);
	if (!ret)
		c->root = n;
	return ret;
}

/* Point the cached children of @n (interior) at @n as their parent. */
static void hc_node_adopt_children(struct hc_cache_set *c,
				   struct hc_btree_node *n)
{
	struct hc_btree_node *child;
	size_t i;

	lockdep_assert_held(&c->node_cache_lock);
	if (!n->level)
		return;
	for (i = 0; i < n->keys.nr; i++) {
		u64 offset = hc_ptr_offset(n->keys.keys[i].ptr);

		child = hc_node_cache_find(c, hc_sector_to_bucket(&c->geom,
								  offset));
		if (child)
			child->parent = n;
	}
}

/*
 * Split @n in two at its middle key; its parent (which has room: descents
 * split full nodes top-down) gets both halves, or a new root is made.
 */
static int hc_node_split(struct hc_cache_set *c, struct hc_btree_node *n)
{
	struct hc_btree_node *left, *right, *root = NULL;
	struct hc_btree_node *parent = n->parent;
	size_t nr = n->keys.nr, mid = nr / 2;
	struct hc_pos split;
	int ret = -ENOMEM;

	lockdep_assert_held_write(&c->meta_lock);
	if (WARN_ON_ONCE(nr < 2))
		return -EINVAL;
	split = hc_key_pos(&n->keys.keys[mid - 1]);
	left = hc_node_alloc(c, n->level);
	right = hc_node_alloc(c, n->level);
	if (!parent)
		root = hc_node_alloc(c, n->level + 1);
	if (!left || !right || (!parent && !root))
		goto out_free;
	/* A node read holding more than its level allows splits in halves. */
	if ((mid > left->keys.capacity && hc_node_grow(left, c->node_cap)) ||
	    (nr - mid > right->keys.capacity &&
	     hc_node_grow(right, c->node_cap)))
		goto out_free;
	left->min = n->min;
	left->max = split;
	right->min = split;
	right->max = n->max;
	memcpy(left->keys.keys, n->keys.keys, mid * sizeof(struct hc_key));
	left->keys.nr = mid;
	memcpy(right->keys.keys, n->keys.keys + mid,
	       (nr - mid) * sizeof(struct hc_key));
	right->keys.nr = nr - mid;

	ret = hc_node_write_new(c, left);
	if (ret)
		goto out_free;
	ret = hc_node_write_new(c, right);
	if (ret)
		goto out_free_left;

	if (!parent) {
		struct hc_key k;

		root->min = HC_POS_MIN;
		root->max = HC_POS_MAX;
		k = hc_node_child_key(left);
		hc_bset_insert(&root->keys, &k, NULL);
		k = hc_node_child_key(right);
		hc_bset_insert(&root->keys, &k, NULL);
		ret = hc_node_write_new(c, root);
		if (ret)
			goto out_free_right;
		parent = root;
	}
	left->parent = parent;
	right->parent = parent;
	if (!root) {
		/* Left's key is new; right's replaces @n's, at the same max. */
		struct hc_key k = hc_node_child_key(left);

		ret = hc_bset_insert(&parent->keys, &k, NULL);
		if (!ret)
			ret = hc_bset_insert(&parent->pending, &k, NULL);
		if (!ret) {
			hc_node_dirtied(c, parent);
			ret = hc_node_set_child(c, parent, right);
		}
		if (ret) {
			/* The parent may name left already: keep its bucket. */
			hc_cache_set_meta_fail(c);
			return ret;
		}
	}

	mutex_lock(&c->node_cache_lock);
	hc_node_cache_del(c, n);
	hc_node_cache_add(c, left);
	hc_node_cache_add(c, right);
	hc_node_adopt_children(c, left);
	hc_node_adopt_children(c, right);
	if (root) {
		hc_node_cache_add(c, root);
		c->root = root;
	}
	mutex_unlock(&c->node_cache_lock);
	hc_bucket_free_meta(c, n->bucket);
	hc_node_free(c, n);
	c->stats.node_splits++;
	return 0;

out_free_right:
	hc_bucket_free_meta(c, right->bucket);
out_free_left:
	hc_bucket_free_meta(c, left->bucket);
out_free:
	if (left)
		hc_node_free(c, left);
	if (right)
		hc_node_free(c, right);
	if (root)
		hc_node_free(c, root);
	return ret;
}

/* Is @n small enough that merging it with a sibling is worth a write? */
static bool hc_node_wants_merge(struct hc_cache_set *c,
				struct hc_btree_node *n)
{
	return n->parent && n->keys.nr < hc_node_keys_max(c, n) / 8;
}

/* Where @n's key sits in its parent. */
static size_t hc_node_index(struct hc_btree_node *n)
{
	return hc_bset_lookup(&n->parent->keys, n->max.bdev, n->max.end - 1);
}

/*
 * Merge @n with its right sibling (or its left one, for the last child)
 * into one node in a new bucket, when the two fit in half a node: the
 * parent loses the left one's key and points the right one's at the new
 * node. A root left with one child gives way to that child. Optional: on
 * failure nothing changes.
 */
static int hc_node_merge(struct hc_cache_set *c, struct hc_btree_node *n)
{
	struct hc_btree_node *parent = n->parent, *left, *right, *sib, *m;
	struct hc_key gone;
	size_t idx = hc_node_index(n);
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (idx >= parent->keys.nr || parent->keys.nr < 2)
		return 0;
	ret = hc_node_get(c, parent, idx + 1 < parent->keys.nr ? idx + 1 :
			  idx - 1, &sib);
	if (ret)
		return ret;
	left = idx + 1 < parent->keys.nr ? n : sib;
	right = left == n ? sib : n;
	if (left->keys.nr + right->keys.nr >= hc_node_keys_max(c, n) / 2)
		return 0;
	m = hc_node_alloc(c, n->level);
	if (!m)
		return -ENOMEM;
	m->min = left->min;
	m->max = right->max;
	memcpy(m->keys.keys, left->keys.keys,
	       left->keys.nr * sizeof(struct hc_key));
	memcpy(m->keys.keys + left->keys.nr, right->keys.keys,
	       right->keys.nr * sizeof(struct hc_key));
	m->keys.nr = left->keys.nr + right->keys.nr;
	ret = hc_node_write_new(c, m);
	if (ret) {
		hc_node_free(c, m);
		return ret;
	}
	m->parent = parent;

	/* The left one's key goes: a whiteout, kept in the parent's log. */
	gone = hc_node_child_key(left);
	gone.nr_ptrs = 0;
	gone.ptr = 0;
	ret = hc_bset_insert(&parent->keys, &gone, NULL);
	if (!ret)
		ret = hc_bset_insert(&parent->pending, &gone, NULL);
	if (!ret) {
		hc_node_dirtied(c, parent);
		ret = hc_node_set_child(c, parent, m);
	}
	if (ret) {
		hc_cache_set_error(c, "merging nodes under bucket %llu failed (error %d)",
				   parent->bucket, ret);
		hc_cache_set_meta_fail(c);
		return ret;
	}

	mutex_lock(&c->node_cache_lock);
	hc_node_cache_del(c, left);
	hc_node_cache_del(c, right);
	hc_node_cache_add(c, m);
	hc_node_adopt_children(c, m);
	mutex_unlock(&c->node_cache_lock);
	hc_bucket_free_meta(c, left->bucket);
	hc_bucket_free_meta(c, right->bucket);
	hc_node_free(c, left);
	hc_node_free(c, right);
	c->stats.node_merges++;

	/* A root with one child: the child is the root. */
	if (parent == c->root && parent->keys.nr == 1) {
		mutex_lock(&c->node_cache_lock);
		hc_node_cache_del(c, parent);
		m->parent = NULL;
		c->root = m;
		mutex_unlock(&c->node_cache_lock);
		hc_bucket_free_meta(c, parent->bucket);
		hc_node_free(c, parent);
	}
	return 0;
}

/*
 * Descend to the leaf holding position (@bdev, @start + 1), splitting
 * every full node met on the way (then starting again from the root).
 */
static int hc_btree_leaf_for(struct hc_cache_set *c, u32 bdev, u64 start,
			     struct hc_btree_node **leaf)
{
	struct hc_btree_node *n, *child;
	size_t idx;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
restart:
	n = c->root;
	if (hc_node_needs_split(c, n)) {
		ret = hc_node_split(c, n);
		if (ret)
			return ret;
		goto restart;
	}
	while (n->level) {
		idx = hc_bset_lookup(&n->keys, bdev, start);
		if (idx >= n->keys.nr) {
			hc_cache_set_error(c, "btree node in bucket %llu has no child for %u:%llu",
					   n->bucket, bdev, start);
			return -EUCLEAN;
		}
		ret = hc_node_get(c, n, idx, &child);
		if (ret)
			return ret;
		if (hc_node_needs_split(c, child)) {
			ret = hc_node_split(c, child);
			if (ret)
				return ret;
			goto restart;
		}
		n = child;
	}
	*leaf = n;
	return 0;
}

/*
 * Make sure @leaf's pending keys plus one insert (at most three keys:
 * a split middle and the new one) can still be appended to its bucket.
 */
static int hc_leaf_make_room(struct hc_cache_set *c, struct hc_btree_node *n)
{
	size_t room = hc_bucket_bytes(c) - n->written, need;

	if (n->pending.nr + 3 > n->pending.capacity)
		return hc_node_write(c, n);
	/*
	 * Every key has at most one pointer: that bound, which costs nothing,
	 * nearly always fits. Summing the keys' exact sizes walks all of
	 * @pending, which on every insert was a tenth of a write's CPU time.
	 */
	need = hc_bset_bytes((n->pending.nr + 3) * hc_key_disk_u64s(1));
	if (round_up(need, c->block_size) <= room)
		return 0;
	need = hc_bset_bytes(hc_bset_encode_u64s(&n->pending) +
			     3 * hc_key_disk_u64s(1));
	if (round_up(need, c->block_size) <= room)
		return 0;
	return hc_node_write(c, n);
}

/**
 * hc_btree_insert() - insert a leaf key, overwriting what it overlaps
 * @c: the set; meta_lock held for writing
 * @k: the key; a key without a pointer invalidates its range
 * @journal_seq: the journal entry holding @k; the leaves it lands in stay
 *	pinned to it until they are written
 *
 * A key spanning leaves is cut at their boundaries, each part inserted in
 * its leaf. Bucket sector counts follow (alloc.c). Idempotent: inserting
 * a key already in the tree changes nothing, which is what makes the
 * journal replay safe. May sleep.
 *
 * Return: 0, or -errno from a node split or write. -ENOMEM (no node to
 * split into or to read into, reserve and all) only where nothing changed
 * in the part of @k being inserted: a retry (hc_insert()) is safe.
 */
int hc_btree_insert(struct hc_cache_set *c, const struct hc_key *k,
		    u64 journal_seq)
{
	struct hc_bset_ops ops = {
		.sectors_removed = hc_bucket_sectors_removed,
		.priv = c,
	};
	struct hc_key cur = *k, piece;
	struct hc_btree_node *leaf;
	size_t before;
	bool done;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	hc_btree_reserve_fill(c);
	for (;;) {
		ret = hc_btree_leaf_for(c, cur.bdev_id, hc_key_start(&cur),
					&leaf);
		if (ret)
			return ret;
		ret = hc_leaf_make_room(c, leaf);
		if (ret)
			return ret;
		piece = cur;
		if (leaf->max.bdev == cur.bdev_id && cur.end > leaf->max.end)
			hc_key_cut_back(&piece, leaf->max.end);
		before = leaf->keys.nr;
		ret = hc_bset_insert(&leaf->keys, &piece, &ops);
		if (ret)
			return ret;
		ret = hc_bset_insert(&leaf->pending, &piece, NULL);
		if (WARN_ON_ONCE(ret))
			return ret;
		hc_node_dirtied(c, leaf);
		hc_bucket_key_added(c, &piece);
		if (hc_mark_bg_counts(c, leaf->max.bdev, leaf->max.end)) {
			c->leaf_keys += leaf->keys.nr;
			c->leaf_keys -= before;
		}
		if (!leaf->journal_pin)
			leaf->journal_pin = journal_seq;
		done = piece.end == cur.end;
		if (!done)
			hc_key_cut_front(&cur, piece.end);
		/*
		 * Optional: a merge that failed before it changed anything
		 * (no memory, a sibling unreadable) leaves the tree as it was.
		 * None while the background mark pass runs: a leaf it has
		 * counted would join one it has not.
		 */
		if (!c->mark_bg.running && hc_node_wants_merge(c, leaf) &&
		    hc_node_merge(c, leaf) && c->meta_failed)
			return -EIO;
		if (done)
			return 0;
	}
}

/**
 * hc_btree_flush() - write every node with keys not yet on disk
 * @c: the set; meta_lock held for writing
 *
 * Afterwards no node pins the journal. May sleep.
 *
 * Return: 0 or the first error.
 */
int hc_btree_flush(struct hc_cache_set *c)
{
	struct hc_btree_node *n;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	/* A write takes the node off the list, and may rewrite its parent. */
	while ((n = list_first_entry_or_null(&c->dirty_nodes,
					     struct hc_btree_node, dirty))) {
		if (!n->pending.nr) {
			list_del_init(&n->dirty);
			continue;
		}
		ret = hc_node_write(c, n);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * hc_btree_oldest_pin() - the oldest journal entry a node still needs
 * @c: the set; meta_lock held for writing
 *
 * Return: the smallest journal_pin of any node, 0 if none is pinned.
 */
u64 hc_btree_oldest_pin(struct hc_cache_set *c)
{
	struct hc_btree_node *n;
	u64 oldest = 0;

	lockdep_assert_held_write(&c->meta_lock);
	/* A pin is only ever set on a node with pending keys: a dirty one. */
	list_for_each_entry(n, &c->dirty_nodes, dirty)
		if (n->journal_pin && (!oldest || n->journal_pin < oldest))
			oldest = n->journal_pin;
	return oldest;
}

/**
 * hc_btree_lookup() - what the cache holds at a sector, or how far it does not
 * @c: the set; meta_lock held, for reading at least
 * @bdev: backing device id
 * @sector: backing sector
 * @limit: the caller looks no further than this sector
 * @out: receives the key covering @sector, if one does
 * @gap_end: if none does, receives where the uncached run starting at
 *	@sector ends: the start of the next key, the leaf's end (the next
 *	leaf is not looked at), or @limit, whichever comes first
 * @cached_only: fail with -EAGAIN rather than read a node, for callers
 *	that may not wait for their own I/O (a disk's submit_bio())
 *
 * Return: 0 if a key covers @sector; -ENOENT if none does; -EAGAIN (see
 * @cached_only); or the error reading a node.
 */
int hc_btree_lookup(struct hc_cache_set *c, u32 bdev, u64 sector, u64 limit,
		    struct hc_key *out, u64 *gap_end, bool cached_only)
{
	struct hc_btree_node *n = c->root;
	const struct hc_key *k;
	size_t idx;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	while (n->level) {
		idx = hc_bset_lookup(&n->keys, bdev, sector);
		if (idx >= n->keys.nr)
			return -EUCLEAN;
		ret = __hc_node_get(c, n, idx, cached_only, &n);
		if (ret)
			return ret;
	}
	idx = hc_bset_lookup(&n->keys, bdev, sector);
	k = idx < n->keys.nr ? &n->keys.keys[idx] : NULL;
	if (k && k->bdev_id == bdev && hc_key_start(k) <= sector) {
		*out = *k;
		return 0;
	}
	if (k && k->bdev_id == bdev)
		limit = min(limit, hc_key_start(k));
	if (n->max.bdev == bdev)
		limit = min(limit, n->max.end);
	*gap_end = limit;
	return -ENOENT;
}

/**
 * hc_btree_visit_range() - visit what the tree holds of a range
 * @c: the set; meta_lock held, for writing if @fn inserts
 * @bdev: backing device id
 * @start: first sector
 * @end: sector after the last
 * @fn: called for each key covering part of the range, with that part,
 *	[@from, @to); it may insert over it, as the walk looks up again
 *	from @to; non-zero stops the walk
 * @priv: passed to @fn
 *
 * The compare-and-swap updates (writeback marking clean, moving GC, a
 * write dropping clean keys) go over a range this way. May sleep.
 *
 * Return: 0, @fn's non-zero return, or the error of a lookup.
 */
int hc_btree_visit_range(struct hc_cache_set *c, u32 bdev, u64 start,
			 u64 end, hc_range_fn fn, void *priv)
{
	u64 pos = start, gap_end, to;
	struct hc_key k;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	while (pos < end) {
		ret = hc_btree_lookup(c, bdev, pos, end, &k, &gap_end, false);
		if (ret == -ENOENT) {
			pos = gap_end;
			continue;
		}
		if (ret)
			return ret;
		to = min(k.end, end);
		ret = fn(priv, &k, pos, to);
		if (ret)
			return ret;
		pos = to;
	}
	return 0;
}

/**
 * hc_btree_scan() - visit a backing device's leaf keys in order, from a sector
 * @c: the set; meta_lock held, for reading at least
 * @bdev: backing device id
 * @pos: in: visit the keys ending after this sector; out: where a later
 *	scan goes on
 * @max_leaves: leaves to visit at most, so that a caller can drop
 *	meta_lock now and then
 * @key_fn: called for each key; non-zero stops the scan before it: *@pos
 *	is left where a later scan visits that key again
 * @priv: passed to @key_fn
 *
 * Nodes not cached are read. May sleep.
 *
 * Return: 1 if stopped (by @key_fn or @max_leaves) with keys possibly
 * left from *@pos on; 0 once the device's last key was visited; or the
 * error reading a node.
 */
int hc_btree_scan(struct hc_cache_set *c, u32 bdev, u64 *pos,
		  unsigned int max_leaves,
		  int (*key_fn)(void *priv, const struct hc_key *k),
		  void *priv)
{
	struct hc_btree_node *n;
	size_t idx;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	while (max_leaves--) {
		n = c->root;
		while (n->level) {
			idx = hc_bset_lookup(&n->keys, bdev, *pos);
			if (idx >= n->keys.nr)
				return 0;
			ret = hc_node_get(c, n, idx, &n);
			if (ret)
				return ret;
		}
		for (idx = hc_bset_lookup(&n->keys, bdev, *pos);
		     idx < n->keys.nr; idx++) {
			const struct hc_key *k = &n->keys.keys[idx];

			if (k->bdev_id != bdev)
				return 0;
			if (key_fn(priv, k))
				return 1;
			*pos = k->end;
		}
		if (n->max.bdev != bdev || n->max.end == U64_MAX)
			return 0;
		*pos = n->max.end;
	}
	return 1;
}

/* Descend, reading nodes as needed, to the leaf after position @pos. */
static int hc_btree_leaf_after(struct hc_cache_set *c, const struct hc_pos *pos,
			       struct hc_btree_node **leaf)
{
	struct hc_btree_node *n = c->root;
	size_t idx;
	int ret;

	while (n->level) {
		idx = hc_bset_lookup(&n->keys, pos->bdev, pos->end);
		if (idx >= n->keys.nr) {
			hc_cache_set_error(c, "btree node %llu: no child after %u:%llu",
					   n->bucket, pos->bdev, pos->end);
			return -EUCLEAN;
		}
		ret = hc_node_get(c, n, idx, &n);
		if (ret)
			return ret;
	}
	*leaf = n;
	return 0;
}

/* Is @pos the last position of the tree? */
static bool hc_pos_is_max(const struct hc_pos *pos)
{
	return pos->bdev == U32_MAX && pos->end == U64_MAX;
}

/**
 * hc_btree_scan_all() - visit every leaf key in order, from a position
 * @c: the set; meta_lock held, for reading at least
 * @pos: in: visit the keys after this position; out: where a later scan
 *	goes on (the max of the last leaf visited)
 * @max_leaves: leaves to visit at most
 * @key_fn: called for each key with a pointer, whatever its device
 * @priv: passed to @key_fn
 *
 * Like hc_btree_scan() across every backing device, a leaf at a time:
 * for walks that drop meta_lock between calls (moving GC). May sleep.
 *
 * Return: 1 if leaves are left from *@pos on, 0 once the last leaf was
 * visited, or the error reading a node.
 */
int hc_btree_scan_all(struct hc_cache_set *c, struct hc_pos *pos,
		      unsigned int max_leaves,
		      void (*key_fn)(void *priv, const struct hc_key *k),
		      void *priv)
{
	struct hc_btree_node *n;
	size_t idx;
	int ret;

	lockdep_assert_held(&c->meta_lock);
	while (max_leaves--) {
		if (hc_pos_is_max(pos))
			return 0;
		ret = hc_btree_leaf_after(c, pos, &n);
		if (ret)
			return ret;
		for (idx = 0; idx < n->keys.nr; idx++)
			if (n->keys.keys[idx].nr_ptrs)
				key_fn(priv, &n->keys.keys[idx]);
		*pos = n->max;
	}
	return !hc_pos_is_max(pos);
}

/**
 * hc_btree_leaf_visit() - visit the leaf after a position
 * @c: the set; meta_lock held for writing
 * @pos: in: the leaf after this position; out: that leaf's max, where
 *	the next call goes on
 * @leaf_fn: called with the leaf; a non-zero return ends the visit
 * @priv: passed to @leaf_fn
 *
 * For walks that drop meta_lock between leaves and must see each leaf
 * whole (the background mark pass). May sleep.
 *
 * Return: 1 if leaves are left after *@pos, 0 after the last one, or
 * -errno (reading the leaf, or @leaf_fn's).
 */
int hc_btree_leaf_visit(struct hc_cache_set *c, struct hc_pos *pos,
			int (*leaf_fn)(void *priv, struct hc_btree_node *leaf),
			void *priv)
{
	struct hc_btree_node *n;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (hc_pos_is_max(pos))
		return 0;
	ret = hc_btree_leaf_after(c, pos, &n);
	if (!ret)
		ret = leaf_fn(priv, n);
	if (ret)
		return ret;
	*pos = n->max;
	return !hc_pos_is_max(pos);
}

/* Drop the keys of @n that @key_fn says to drop, accounting their sectors. */
static size_t hc_node_drop_keys(struct hc_cache_set *c,
				struct hc_btree_node *n,
				int (*key_fn)(void *priv,
					      const struct hc_key *k),
				void *priv)
{
	size_t i, kept = 0, nr = n->keys.nr;

	for (i = 0; i < nr; i++) {
		const struct hc_key *k = &n->keys.keys[i];

		if (key_fn(priv, k) != HC_GC_KEEP) {
			hc_bucket_sectors_removed(c, k, hc_key_start(k),
						  k->end);
			continue;
		}
		n->keys.keys[kept++] = *k;
	}
	n->keys.nr = kept;
	c->leaf_keys -= nr - kept;
	return nr - kept;
}

/**
 * hc_btree_gc_leaf() - garbage-collect the leaf after a position
 * @c: the set; meta_lock held for writing
 * @pos: in: the leaf after this position; out: that leaf's max, where
 *	the next call goes on
 * @key_fn: judges each key: HC_GC_KEEP, HC_GC_DROP (a stale or dead key,
 *	dropped if the leaf holds enough of them to be worth a rewrite) or
 *	HC_GC_DROP_NOW (dropped whatever it costs: its bucket's gen is near
 *	the limit it puts on reuse); called twice per key when the leaf is
 *	rewritten, so it must judge alike both times
 * @priv: passed to @key_fn
 * @st: counts what was done
 *
 * A leaf rewritten without its dropped keys goes to a new bucket, its
 * parent updated as for any rewrite. Every pointer left in the leaf is
 * noted for its bucket's oldest gen (hc_gc_note_ptr()); the dropped ones
 * stop holding back their buckets' gens. Then a leaf much smaller than a node
 * is merged with a sibling, or, failing that, a small interior parent is.
 * May sleep.
 *
 * Return: 1 if leaves are left after *@pos, 0 after the last one, or
 * -errno (a failed rewrite latches meta_failed).
 */
int hc_btree_gc_leaf(struct hc_cache_set *c, struct hc_pos *pos,
		     int (*key_fn)(void *priv, const struct hc_key *k),
		     void *priv, struct hc_btree_gc_stats *st)
{
	struct hc_btree_node *n, *parent;
	size_t i, drop = 0;
	bool now = false;
	int ret, v;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	if (hc_pos_is_max(pos))
		return 0;
	ret = hc_btree_leaf_after(c, pos, &n);
	if (ret)
		return ret;
	*pos = n->max;
	st->leaves++;
	for (i = 0; i < n->keys.nr; i++) {
		v = key_fn(priv, &n->keys.keys[i]);
		if (v != HC_GC_KEEP)
			drop++;
		if (v == HC_GC_DROP_NOW)
			now = true;
	}
	if (drop && (now || drop * 8 >= n->keys.nr)) {
		st->keys_dropped += hc_node_drop_keys(c, n, key_fn, priv);
		ret = hc_node_rewrite(c, n);
		if (ret) {
			hc_cache_set_error(c, "GC cannot rewrite leaf %llu (error %d)",
					   n->bucket, ret);
			hc_cache_set_meta_fail(c);
			return ret;
		}
		st->nodes_rewritten++;
	}
	/* Every pointer left, stale ones too, bounds its bucket's gen. */
	for (i = 0; i < n->keys.nr; i++)
		if (n->keys.keys[i].nr_ptrs)
			hc_gc_note_ptr(c, &n->keys.keys[i]);
	parent = n->parent;
	/* Merges are optional: one that could not start changed nothing. */
	if (hc_node_wants_merge(c, n)) {
		u64 merges = c->stats.node_merges;

		if (hc_node_merge(c, n) && c->meta_failed)
			return -EIO;
		if (c->stats.node_merges != merges)
			return !hc_pos_is_max(pos);
	}
	if (parent && parent != c->root && hc_node_wants_merge(c, parent) &&
	    hc_node_merge(c, parent) && c->meta_failed)
		return -EIO;
	return !hc_pos_is_max(pos);
}

typedef int (*hc_walk_node_fn)(void *priv, struct hc_btree_node *n);
typedef int (*hc_walk_key_fn)(void *priv, struct hc_btree_node *n,
			      const struct hc_key *k);

static int hc_btree_walk_node(struct hc_cache_set *c, struct hc_btree_node *n,
			      hc_walk_node_fn node_fn, hc_walk_key_fn key_fn,
			      void *priv)
{
	struct hc_btree_node *child;
	size_t i;
	int ret;

	if (node_fn) {
		ret = node_fn(priv, n);
		if (ret)
			return ret;
	}
	for (i = 0; i < n->keys.nr; i++) {
		if (!n->level) {
			ret = key_fn ? key_fn(priv, n, &n->keys.keys[i]) : 0;
		} else {
			ret = hc_node_get(c, n, i, &child);
			if (!ret)
				ret = hc_btree_walk_node(c, child, node_fn,
							 key_fn, priv);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int hc_btree_walk_interior_node(struct hc_cache_set *c,
				       struct hc_btree_node *n,
				       hc_walk_node_fn node_fn, void *priv)
{
	struct hc_btree_node *child;
	size_t i;
	int ret;

	ret = node_fn(priv, n);
	for (i = 0; !ret && n->level > 1 && i < n->keys.nr; i++) {
		ret = hc_node_get(c, n, i, &child);
		if (!ret)
			ret = hc_btree_walk_interior_node(c, child, node_fn,
							  priv);
	}
	return ret;
}

/**
 * hc_btree_walk_interior() - visit every interior node, parents first
 * @c: the set; meta_lock held, for reading at least
 * @node_fn: called for each node with children; a non-zero return ends
 *	the walk
 * @priv: passed to @node_fn
 *
 * Leaves are not read.
 *
 * Return: 0, @node_fn's return value, or the error reading a node.
 */
int hc_btree_walk_interior(struct hc_cache_set *c,
			   int (*node_fn)(void *priv, struct hc_btree_node *n),
			   void *priv)
{
	lockdep_assert_held(&c->meta_lock);
	if (!c->root->level)
		return 0;
	return hc_btree_walk_interior_node(c, c->root, node_fn, priv);
}

/**
 * hc_btree_walk() - visit every node and every leaf key, in key order
 * @c: the set; meta_lock held, for reading at least
 * @node_fn: called for each node before its keys or children; optional
 * @key_fn: called for each leaf key; optional
 * @priv: passed to both
 *
 * Nodes not cached are read (so a walk checks the whole tree on disk).
 * A callback returning non-zero ends the walk.
 *
 * Return: 0, a callback's return value, or the error reading a node.
 */
int hc_btree_walk(struct hc_cache_set *c,
		  int (*node_fn)(void *priv, struct hc_btree_node *n),
		  int (*key_fn)(void *priv, struct hc_btree_node *n,
				const struct hc_key *k),
		  void *priv)
{
	lockdep_assert_held(&c->meta_lock);
	return hc_btree_walk_node(c, c->root, node_fn, key_fn, priv);
}

static unsigned long hc_btree_shrink_count(struct shrinker *s,
					   struct shrink_control *sc)
{
	struct hc_cache_set *c = hc_shrinker_priv(s);

	return READ_ONCE(c->nr_nodes);
}

/*
 * Evict clean leaves, least recently used first. Interior nodes and the
 * root stay. Needs meta_lock for writing, so no descent holds a leaf.
 */
static unsigned long hc_btree_shrink_scan(struct shrinker *s,
					  struct shrink_control *sc)
{
	struct hc_cache_set *c = hc_shrinker_priv(s);
	struct hc_btree_node *n, *tmp;
	unsigned long freed;
	LIST_HEAD(out);

	if (!down_write_trylock(&c->meta_lock))
		return SHRINK_STOP;
	/* Another set may be reading a node, allocating, into reclaim. */
	if (!mutex_trylock(&c->node_cache_lock)) {
		up_write(&c->meta_lock);
		return SHRINK_STOP;
	}
	freed = hc_node_evict(c, sc->nr_to_scan, &out);
	list_for_each_entry_safe(n, tmp, &out, lru) {
		list_del_init(&n->lru);
		hc_node_free(c, n);
	}
	mutex_unlock(&c->node_cache_lock);
	up_write(&c->meta_lock);
	return freed;
}

/**
 * hc_btree_shrinker_init() - let memory pressure evict clean leaves
 * @c: the set
 *
 * Return: 0 or -errno.
 */
int hc_btree_shrinker_init(struct hc_cache_set *c)
{
	return hc_shrinker_register(&c->shrinker, hc_btree_shrink_count,
				    hc_btree_shrink_scan, c, "hcache-btree");
}

/**
 * hc_btree_shrinker_exit() - undo hc_btree_shrinker_init()
 * @c: the set
 */
void hc_btree_shrinker_exit(struct hc_cache_set *c)
{
	hc_shrinker_unregister(&c->shrinker);
}
