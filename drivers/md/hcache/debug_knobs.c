// SPDX-License-Identifier: GPL-2.0
/*
 * debug_knobs.c: what only a debug build (make HC_DEBUG=1) compiles; see
 * debug.h. The delay and fault points, module-wide under
 * /sys/kernel/debug/hcache/delay/ and fail/, and in each set's debugfs
 * directory the files that can break its promises:
 *
 *   fill   write "ID START COUNT SIZE [STRIDE [dirty|data]]": insert COUNT
 *          keys of SIZE sectors for backing id ID, the i-th at START + i *
 *          STRIDE (default SIZE), each given cache space as a write would
 *          (the data itself is not written, so a dirty one vouches for
 *          bytes never stored; with "data", clean keys whose cache space
 *          is written with zeros, what an unwritten backing device reads)
 *   gen_set  write N (0-255) to a set holding no key: every bucket nothing
 *          points into gets gen N, persisted; tests start gens near the
 *          wrap this way
 *   gen_max_distance  read, or write 1 to HC_GEN_MAX_DISTANCE: how far a
 *          bucket's gen may run ahead of the oldest pointer into it; tests
 *          lower it so that GC must drop stale pointers early
 *   alloc_cursor  write a bucket number: new data goes to the empty
 *          buckets from there on (hc_alloc_cursor_set()); tests place data
 *          past 2 TiB of a big cache device this way
 *
 * Not an interface: Documentation/hcache/testing.rst describes it for the
 * tests that use it.
 */

#include "hcache.h"
#include "debug.h"

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/delay.h>

#define HC_FILL_BATCH		64U

/**
 * struct hc_debug_point - a delay or fault point
 * @name: its directory under delay/ or fail/
 * @ms: how long an armed hit of a delay point sleeps
 * @armed: hits still to delay or fail
 * @hits: hits delayed or failed so far
 */
struct hc_debug_point {
	const char	*name;
	u32		ms;
	atomic_t	armed;
	atomic_t	hits;
};

static struct hc_debug_point hc_delays[HC_DELAY_NR] = {
	[HC_DELAY_WB_CHECKED]		= { .name = "wb_checked" },
	[HC_DELAY_PROMOTE_TRACK]	= { .name = "promote_track" },
	[HC_DELAY_DETACH_DRAINED]	= { .name = "detach_drained" },
	[HC_DELAY_FLUSH_BACKING]	= { .name = "flush_backing" },
	[HC_DELAY_WRITE_FALLBACK]	= { .name = "write_fallback" },
	[HC_DELAY_WRITE_INSERT]		= { .name = "write_insert" },
	[HC_DELAY_JOURNAL_WRITE]	= { .name = "journal_write" },
	[HC_DELAY_MARK_BG]		= { .name = "mark_bg" },
	[HC_DELAY_MOVE_COPIED]		= { .name = "move_copied" },
	[HC_DELAY_READ_TRACK]		= { .name = "read_track" },
};

static struct hc_debug_point hc_faults[HC_FAULT_NR] = {
	[HC_FAULT_DETACH_SB]		= { .name = "detach_sb" },
	[HC_FAULT_CACHE_WRITE]		= { .name = "cache_write" },
	[HC_FAULT_NODE_ALLOC]		= { .name = "node_alloc" },
	[HC_FAULT_CACHE_FLUSH]		= { .name = "cache_flush" },
};

/* Take one armed hit of @pt, if it has any left. */
static bool hc_debug_point_take(struct hc_debug_point *pt)
{
	if (atomic_read(&pt->armed) <= 0 ||
	    atomic_dec_if_positive(&pt->armed) < 0)
		return false;
	atomic_inc(&pt->hits);
	return true;
}

/**
 * hc_debug_delay() - hold the caller at delay point @p, if armed
 * @p: the point
 *
 * Sleeps delay/P/ms for an armed hit; may sleep, so only at points where
 * the caller may.
 */
void hc_debug_delay(enum hc_delay_point p)
{
	struct hc_debug_point *pt = &hc_delays[p];

	might_sleep();
	if (hc_debug_point_take(pt)) {
		pr_info("debug: delay point %s: holding for %u ms\n", pt->name,
			READ_ONCE(pt->ms));
		msleep(READ_ONCE(pt->ms));
	}
}

/**
 * hc_debug_fault() - should fault point @p fail now?
 * @p: the point
 *
 * Any context.
 *
 * Return: true for an armed hit, which the caller then fails.
 */
bool hc_debug_fault(enum hc_fault_point p)
{
	return hc_debug_point_take(&hc_faults[p]);
}

/**
 * hc_debug_knobs_init() - the delay/ and fail/ directories
 * @root: /sys/kernel/debug/hcache/
 */
void hc_debug_knobs_init(struct dentry *root)
{
	struct dentry *delay = debugfs_create_dir("delay", root);
	struct dentry *fail = debugfs_create_dir("fail", root);
	struct dentry *d;
	unsigned int i;

	for (i = 0; i < HC_DELAY_NR; i++) {
		d = debugfs_create_dir(hc_delays[i].name, delay);
		debugfs_create_u32("ms", 0600, d, &hc_delays[i].ms);
		debugfs_create_atomic_t("armed", 0600, d, &hc_delays[i].armed);
		debugfs_create_atomic_t("hits", 0400, d, &hc_delays[i].hits);
	}
	for (i = 0; i < HC_FAULT_NR; i++) {
		d = debugfs_create_dir(hc_faults[i].name, fail);
		debugfs_create_atomic_t("armed", 0600, d, &hc_faults[i].armed);
		debugfs_create_atomic_t("hits", 0400, d, &hc_faults[i].hits);
	}
}

/*
 * Space for a key inserted before meta_lock is let go (the fill), so no
 * refill can come in between and the bucket needs no pin.
 */
static int hc_fill_alloc(struct hc_cache_set *c, u32 sectors, u8 *gen,
			 u64 *offset)
{
	u32 got;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_open_bucket_take(c, sectors, hc_csum_on(c) ?
				  HC_CSUM_CHUNK_SECTORS : 1, true, true, gen,
				  offset, &got);
	if (!ret)
		hc_bucket_unpin(c, *offset);
	return ret;
}

/*
 * The cache space of a fill's keys, written with zeros in runs as long as
 * the keys lie end to end in the cache, at most @max sectors a run.
 */
struct hc_fill_data {
	void	*zeros;
	u32	max;
	u64	start;
	u32	sectors;
};

/* Write the run @d holds, if any. Return: 0 or the device's error. */
static int hc_fill_data_flush(struct hc_cache_set *c, struct hc_fill_data *d)
{
	int ret;

	if (!d->sectors)
		return 0;
	if (hc_csum_on(c))
		hc_csum_set_buf(c, d->start, d->zeros, d->sectors);
	ret = hc_meta_io(c, REQ_OP_WRITE, d->start, d->zeros,
			 (size_t)d->sectors << SECTOR_SHIFT);
	d->sectors = 0;
	/* As a data write: the next metadata write flushes it first. */
	if (!ret)
		atomic64_inc(&c->data_written);
	return ret;
}

/* Add @sectors at @offset to @d's run, writing the run first if need be. */
static int hc_fill_data_add(struct hc_cache_set *c, struct hc_fill_data *d,
			    u64 offset, u32 sectors)
{
	int ret = 0;

	if (d->sectors && (offset != d->start + d->sectors ||
			   d->sectors + sectors > d->max))
		ret = hc_fill_data_flush(c, d);
	if (!d->sectors)
		d->start = offset;
	d->sectors += sectors;
	return ret;
}

/* Insert one key as a write of its size would: cache space, journal, tree. */
static int hc_fill_one(struct hc_cache_set *c, u32 id, u64 start, u32 size,
		       bool dirty, struct hc_fill_data *data)
{
	struct hc_key k = {
		.bdev_id = id,
		.end = start + size,
		.size = size,
		.nr_ptrs = 1,
		.flags = dirty ? HC_KEY_DIRTY : 0,
	};
	/* With data checksums, data takes whole chunks, zeroes after it. */
	u32 padded = round_up(size, hc_csum_on(c) ? HC_CSUM_CHUNK_SECTORS : 1);
	u64 offset, seq;
	u8 gen;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_fill_alloc(c, padded, &gen, &offset);
	if (ret)
		return ret;
	k.ptr = hc_ptr_make(offset, 0, gen);
	if (data) {
		ret = hc_fill_data_add(c, data, offset, padded);
		if (ret)
			return ret;
	}
	ret = hc_journal_add(c, &k, &seq);
	if (ret)
		return ret;
	return hc_btree_insert(c, &k, seq);
}

/* Whitespace-separated words in @s, so trailing junk is refused. */
static int hc_words(const char *s)
{
	int n = 0;

	while (*(s = skip_spaces(s))) {
		n++;
		while (*s && !isspace(*s))
			s++;
	}
	return n;
}

static ssize_t hc_fill_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct hc_cache_set *c = file_inode(file)->i_private;
	struct hc_fill_data data = {}, *with_data = NULL;
	u64 start, count, stride = 0, i;
	char buf[128], mode[8] = "";
	bool dirty;
	u32 id, size;
	int n, ret = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	n = sscanf(buf, "%u %llu %llu %u %llu %7s", &id, &start, &count, &size,
		   &stride, mode);
	if (n < 4 || n != hc_words(buf) || !size ||
	    size > c->geom.bucket_sectors ||
	    (n == 6 && strcmp(mode, "dirty") && strcmp(mode, "data")))
		return -EINVAL;
	if (n < 5)
		stride = size;
	if (count && (start + (count - 1) * stride + size < start ||
		      stride > U64_MAX / count))
		return -ERANGE;
	dirty = n == 6 && !strcmp(mode, "dirty");
	/* Keys over data never written would fail their checksums. */
	if (hc_csum_on(c) && (n < 6 || dirty))
		return -EOPNOTSUPP;
	if (n == 6 && !dirty) {
		data.max = c->geom.bucket_sectors;
		data.zeros = kvzalloc((size_t)data.max << SECTOR_SHIFT,
				      GFP_KERNEL);
		if (!data.zeros)
			return -ENOMEM;
		with_data = &data;
	}
	for (i = 0; i < count && !ret; i += HC_FILL_BATCH) {
		u64 j;

		down_write(&c->meta_lock);
		for (j = i; j < min(count, i + HC_FILL_BATCH) && !ret; j++)
			ret = hc_fill_one(c, id, start + j * stride, size,
					  dirty, with_data);
		/* Before the lock goes: no lookup sees a key before its data. */
		if (!ret && with_data)
			ret = hc_fill_data_flush(c, with_data);
		up_write(&c->meta_lock);
		if (fatal_signal_pending(current))
			ret = -EINTR;
		cond_resched();
	}
	kvfree(data.zeros);
	return ret ? ret : len;
}

/*
 * Give every bucket nothing points into one gen, in a set holding no key
 * (gen_set): lets a test start the gens near the wrap (255 to 0) instead
 * of writing the cache over hundreds of times. The new gens are persisted
 * before the lock is dropped, so no data is written under one that is
 * not. Return: 0, -EBUSY if the tree holds keys, or the prio write's
 * error.
 */
static int hc_gen_set_all(struct hc_cache_set *c, u8 gen)
{
	u64 i;
	int ret;

	down_write(&c->meta_lock);
	if (c->leaf_keys || c->meta_failed || c->mark_bg.running) {
		up_write(&c->meta_lock);
		return -EBUSY;
	}
	for (i = c->geom.first_bucket; i < c->geom.nbuckets; i++) {
		struct hc_bucket *b = &c->buckets[i];

		if (b->m.type != HC_BUCKET_FREE || b->m.ptrs || b->m.has_ptr ||
		    READ_ONCE(b->io_pin) || b->replay_pin || i == c->open_bucket ||
		    i == c->gc.move_bucket)
			continue;
		WRITE_ONCE(b->gen, gen);
	}
	ret = hc_prio_write(c);
	up_write(&c->meta_lock);
	return ret;
}

/* A number written to a debugfs file, whole. */
static int hc_debugfs_u64(const char __user *ubuf, size_t len, u64 *v)
{
	char buf[24];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	return kstrtou64(strim(buf), 0, v);
}

static int hc_debugfs_u32(const char __user *ubuf, size_t len, u32 *v)
{
	u64 v64;
	int ret = hc_debugfs_u64(ubuf, len, &v64);

	if (!ret && v64 > U32_MAX)
		ret = -ERANGE;
	if (!ret)
		*v = v64;
	return ret;
}

static ssize_t hc_gen_set_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct hc_cache_set *c = file_inode(file)->i_private;
	u32 gen;
	int ret;

	ret = hc_debugfs_u32(ubuf, len, &gen);
	if (!ret && gen > U8_MAX)
		ret = -ERANGE;
	if (!ret)
		ret = hc_gen_set_all(c, gen);
	return ret ? ret : len;
}

static ssize_t hc_gen_max_distance_read(struct file *file, char __user *ubuf,
					size_t len, loff_t *ppos)
{
	struct hc_cache_set *c = file_inode(file)->i_private;
	char buf[16];
	int n;

	n = snprintf(buf, sizeof(buf), "%u\n", READ_ONCE(c->gc.max_distance));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t hc_gen_max_distance_write(struct file *file,
					 const char __user *ubuf, size_t len,
					 loff_t *ppos)
{
	struct hc_cache_set *c = file_inode(file)->i_private;
	u32 v;
	int ret;

	ret = hc_debugfs_u32(ubuf, len, &v);
	if (ret)
		return ret;
	if (!v || v > HC_GEN_MAX_DISTANCE)
		return -ERANGE;
	down_write(&c->meta_lock);
	c->gc.max_distance = v;
	up_write(&c->meta_lock);
	return len;
}

static ssize_t hc_alloc_cursor_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct hc_cache_set *c = file_inode(file)->i_private;
	u64 bucket;
	int ret;

	ret = hc_debugfs_u64(ubuf, len, &bucket);
	if (!ret)
		ret = hc_alloc_cursor_set(c, bucket);
	return ret ? ret : len;
}

static const struct file_operations hc_alloc_cursor_fops = {
	.owner	= THIS_MODULE,
	.write	= hc_alloc_cursor_write,
	.llseek	= noop_llseek,
};

static const struct file_operations hc_gen_set_fops = {
	.owner	= THIS_MODULE,
	.write	= hc_gen_set_write,
	.llseek	= noop_llseek,
};

static const struct file_operations hc_gen_max_distance_fops = {
	.owner	= THIS_MODULE,
	.read	= hc_gen_max_distance_read,
	.write	= hc_gen_max_distance_write,
	.llseek	= default_llseek,
};

static const struct file_operations hc_fill_fops = {
	.owner	= THIS_MODULE,
	.write	= hc_fill_write,
	.llseek	= noop_llseek,
};

/**
 * hc_debug_knobs_add_set() - a set's debug-only debugfs files
 * @c: the set
 * @dir: its debugfs directory
 */
void hc_debug_knobs_add_set(struct hc_cache_set *c, struct dentry *dir)
{
	debugfs_create_file("fill", 0200, dir, c, &hc_fill_fops);
	debugfs_create_file("gen_set", 0200, dir, c, &hc_gen_set_fops);
	debugfs_create_file("gen_max_distance", 0600, dir, c,
			    &hc_gen_max_distance_fops);
	debugfs_create_file("alloc_cursor", 0200, dir, c,
			    &hc_alloc_cursor_fops);
}
