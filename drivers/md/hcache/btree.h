/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_BTREE_H
#define _HCACHE_BTREE_H

/*
 * btree.h: the btree of extents (btree.c): nodes in memory, the node
 * cache, lookups, inserts, and walking every key.
 */

#include <linux/list.h>

#include "bset.h"

struct hc_cache_set;

/* Keys a leaf holds at most; see hc_level_keys_max() in btree.c. */
#define HC_LEAF_KEYS		4096
/* Keys an interior node holds at most. */
#define HC_INTERIOR_KEYS	8192
/*
 * Sorted sets a node's bucket holds before a write compacts it into one
 * (hc_node_compact()): a read merges each set into those before it, so
 * its cost grows with sets times keys. An interior node of 646 children,
 * appended one set per split, took 0.14 s to read under TCG.
 */
#define HC_NODE_SETS_MAX	16
/* Nodes kept ready per level (leaf, interior) for when memory is short. */
#define HC_NODE_RESERVE		4

/**
 * struct hc_node_reserve - nodes kept for when allocation fails
 * @nodes: free nodes with arrays of their level's size, by their lru
 * @nr: how many
 *
 * A set has one for leaves and one for interior nodes, protected by its
 * node_reserve_lock (btree.c: hc_node_alloc(), hc_btree_reserve_fill()).
 */
struct hc_node_reserve {
	struct list_head	nodes;
	unsigned int		nr;
};

/* A position in the btree: keys sort by (bdev_id, end). */
struct hc_pos {
	u32	bdev;
	u64	end;
};

/**
 * struct hc_btree_node - a btree node in memory
 *
 * A node is one bucket. It covers the positions after @min up to and
 * including @max; every key it holds lies wholly in that range. An
 * interior node's keys are its children, each a key of size 1 at the
 * child's @max, its pointer the child's bucket with that bucket's gen.
 *
 * Protected by the set's meta_lock: read for lookups, written for any
 * change. @lru, and additions to the hash (@hash), also by the set's
 * node_cache_lock.
 *
 * @hash: on the set's node hash, by @bucket: searched under meta_lock
 *	alone, added to under node_cache_lock too (RCU-published), removed
 *	from with both, meta_lock held for writing
 * @lru: on the set's node LRU; leaves only (interior nodes stay cached);
 *	on a node reserve's list while free
 * @used: a lookup found this leaf since an eviction last passed it (set
 *	under meta_lock for reading, without node_cache_lock; an eviction
 *	that passes it moves it to the LRU's tail and clears it)
 * @dirty: on the set's dirty_nodes while @pending holds keys (meta_lock)
 * @parent: the parent node, NULL for the root; interior nodes are never
 *	evicted, so this stays valid while the node is cached
 * @ptr: the pointer the parent (or the journal, for the root) holds
 * @bucket: the bucket it lives in
 * @node_seq: random, per write of a whole node; its sorted sets carry it
 * @level: 0 for a leaf
 * @min: see above
 * @max: see above
 * @keys: every key, resolved: the lookups' view
 * @pending: keys inserted since the node was last written, whiteouts
 *	kept; the next write appends them as one sorted set
 * @written: bytes of the bucket written: header and sorted sets
 * @sets: sorted sets in the bucket; a write past HC_NODE_SETS_MAX
 *	rewrites the node whole instead of appending (hc_node_compact())
 * @journal_pin: the oldest journal entry holding keys in @pending; 0
 *	if @pending is empty
 */
struct hc_btree_node {
	struct hlist_node	hash;
	struct list_head	lru;
	struct list_head	dirty;
	struct hc_btree_node	*parent;
	u64			ptr;
	u64			bucket;
	u64			node_seq;
	u8			level;
	struct hc_pos		min;
	struct hc_pos		max;
	struct hc_bset_mem	keys;
	struct hc_bset_mem	pending;
	u32			written;
	u32			sets;
	u64			journal_pin;
	bool			used;
};

/* btree.c; each function is documented at its definition. */
/* What garbage collection does with a leaf key (hc_btree_gc_leaf()). */
enum hc_gc_verdict {
	HC_GC_KEEP,
	HC_GC_DROP,
	HC_GC_DROP_NOW,
};

/**
 * struct hc_btree_gc_stats - what hc_btree_gc_leaf() did
 * @leaves: leaves visited
 * @nodes_rewritten: leaves rewritten without their stale and dead keys
 * @keys_dropped: keys dropped
 */
struct hc_btree_gc_stats {
	u64	leaves;
	u64	nodes_rewritten;
	u64	keys_dropped;
};

int hc_btree_init(struct hc_cache_set *c);
void hc_btree_reserve_fill(struct hc_cache_set *c);
void hc_btree_exit(struct hc_cache_set *c);
int hc_btree_new_root(struct hc_cache_set *c);
int hc_btree_load_root(struct hc_cache_set *c, u64 ptr, u8 level);
int hc_btree_insert(struct hc_cache_set *c, const struct hc_key *k,
		    u64 journal_seq);
int hc_btree_flush(struct hc_cache_set *c);
u64 hc_btree_oldest_pin(struct hc_cache_set *c);
int hc_btree_lookup(struct hc_cache_set *c, u32 bdev, u64 sector, u64 limit,
		    struct hc_key *out, u64 *gap_end, bool cached_only);
/* hc_btree_visit_range()'s callback: @k covers [@from, @to). */
typedef int (*hc_range_fn)(void *priv, const struct hc_key *k, u64 from,
			   u64 to);
int hc_btree_visit_range(struct hc_cache_set *c, u32 bdev, u64 start,
			 u64 end, hc_range_fn fn, void *priv);
int hc_btree_scan(struct hc_cache_set *c, u32 bdev, u64 *pos,
		  unsigned int max_leaves,
		  int (*key_fn)(void *priv, const struct hc_key *k),
		  void *priv);
int hc_btree_walk(struct hc_cache_set *c,
		  int (*node_fn)(void *priv, struct hc_btree_node *n),
		  int (*key_fn)(void *priv, struct hc_btree_node *n,
				const struct hc_key *k),
		  void *priv);
int hc_btree_walk_interior(struct hc_cache_set *c,
			   int (*node_fn)(void *priv, struct hc_btree_node *n),
			   void *priv);
int hc_btree_leaf_visit(struct hc_cache_set *c, struct hc_pos *pos,
			int (*leaf_fn)(void *priv, struct hc_btree_node *leaf),
			void *priv);
int hc_btree_scan_all(struct hc_cache_set *c, struct hc_pos *pos,
		      unsigned int max_leaves,
		      void (*key_fn)(void *priv, const struct hc_key *k),
		      void *priv);
int hc_btree_gc_leaf(struct hc_cache_set *c, struct hc_pos *pos,
		     int (*key_fn)(void *priv, const struct hc_key *k),
		     void *priv, struct hc_btree_gc_stats *st);
int hc_btree_shrinker_init(struct hc_cache_set *c);
void hc_btree_shrinker_exit(struct hc_cache_set *c);

#endif /* _HCACHE_BTREE_H */
