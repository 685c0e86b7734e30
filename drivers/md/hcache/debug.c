// SPDX-License-Identifier: GPL-2.0
/*
 * debug.c: /sys/kernel/debug/hcache/<set-uuid>/, for tests and debugging:
 *
 *   check  read: run the consistency check; "ok", or one line per problem
 *   keys   read: every leaf key, "bdev:start-end @cache-sector gen g c|d"
 *          ("bdev:start-end whiteout" cannot appear: leaves hold none)
 *   fill   write "ID START COUNT SIZE [STRIDE [dirty]]": insert COUNT keys
 *          of SIZE sectors for backing id ID, the i-th at START + i *
 *          STRIDE (default SIZE), each given cache space as a write would
 *          (the data itself is not written); the debug insert path until
 *          the I/O path exists
 *   flush  write "journal": write the open journal entry; "btree": write
 *          every dirty btree node, then a journal entry
 *   gen_set  write N (0-255) to a set holding no key: every bucket nothing
 *          points into gets gen N, persisted; tests start gens near the
 *          wrap this way
 *   gen_max_distance  read, or write 1 to HC_GEN_MAX_DISTANCE: how far a
 *          bucket's gen may run ahead of the oldest pointer into it; tests
 *          lower it so that GC must drop stale pointers early
 *
 * Not an interface: Documentation/hcache/testing.rst describes it for the
 * tests that use it.
 */

#include "hcache.h"

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#define HC_FILL_BATCH		64U

static struct dentry *hc_debugfs_root;

/* A whole text built at open, read back in pieces. */
struct hc_debug_text {
	char	*buf;
	size_t	len;
};

static int hc_debug_text_release(struct inode *inode, struct file *file)
{
	struct hc_debug_text *t = file->private_data;

	kvfree(t->buf);
	kfree(t);
	return 0;
}

static ssize_t hc_debug_text_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct hc_debug_text *t = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, t->buf, t->len);
}

static int hc_debug_text_alloc(struct file *file, size_t size,
			       struct seq_buf *s)
{
	struct hc_debug_text *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	t->buf = kvmalloc(size, GFP_KERNEL);
	if (!t->buf) {
		kfree(t);
		return -ENOMEM;
	}
	seq_buf_init(s, t->buf, size);
	file->private_data = t;
	return 0;
}

static int hc_check_open(struct inode *inode, struct file *file)
{
	struct hc_cache_set *c = inode->i_private;
	struct hc_debug_text *t;
	struct seq_buf s;
	int ret;

	ret = hc_debug_text_alloc(file, PAGE_SIZE * 4, &s);
	if (ret)
		return ret;
	t = file->private_data;
	down_read(&c->meta_lock);
	ret = hc_check(c, &s);
	up_read(&c->meta_lock);
	if (!ret)
		seq_buf_printf(&s, "ok\n");
	else if (ret != -EUCLEAN)
		seq_buf_printf(&s, "check failed: error %d\n", ret);
	else
		pr_err("%pg: cache set %pU: the consistency check failed\n",
		       c->bdev, c->sb.set_uuid);
	t->len = seq_buf_used(&s);
	return 0;
}

static int hc_keys_one(void *priv, struct hc_btree_node *n,
		       const struct hc_key *k)
{
	struct seq_buf *s = priv;

	seq_buf_printf(s, "%u:%llu-%llu", k->bdev_id, hc_key_start(k),
		       k->end);
	if (k->nr_ptrs)
		seq_buf_printf(s, " @%llu gen %u %c\n", hc_ptr_offset(k->ptr),
			       hc_ptr_gen(k->ptr),
			       k->flags & HC_KEY_DIRTY ? 'd' : 'c');
	else
		seq_buf_printf(s, " whiteout\n");
	return seq_buf_has_overflowed(s) ? -EOVERFLOW : 0;
}

static int hc_keys_open(struct inode *inode, struct file *file)
{
	struct hc_cache_set *c = inode->i_private;
	struct hc_debug_text *t;
	struct seq_buf s;
	size_t size;
	int ret;

	down_read(&c->meta_lock);
	size = (c->leaf_keys + 1) * 80;
	ret = hc_debug_text_alloc(file, size, &s);
	if (!ret)
		ret = hc_btree_walk(c, NULL, hc_keys_one, &s);
	up_read(&c->meta_lock);
	if (ret) {
		if (file->private_data)
			hc_debug_text_release(inode, file);
		return ret;
	}
	t = file->private_data;
	t->len = seq_buf_used(&s);
	return 0;
}

static const struct file_operations hc_check_fops = {
	.owner		= THIS_MODULE,
	.open		= hc_check_open,
	.read		= hc_debug_text_read,
	.release	= hc_debug_text_release,
	.llseek		= default_llseek,
};

static const struct file_operations hc_keys_fops = {
	.owner		= THIS_MODULE,
	.open		= hc_keys_open,
	.read		= hc_debug_text_read,
	.release	= hc_debug_text_release,
	.llseek		= default_llseek,
};

/* Insert one key as a write of its size would: cache space, journal, tree. */
static int hc_fill_one(struct hc_cache_set *c, u32 id, u64 start, u32 size,
		       bool dirty)
{
	struct hc_key k = {
		.bdev_id = id,
		.end = start + size,
		.size = size,
		.nr_ptrs = 1,
		.flags = dirty ? HC_KEY_DIRTY : 0,
	};
	u64 offset, seq;
	u8 gen;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	ret = hc_data_alloc(c, size, &gen, &offset);
	if (ret)
		return ret;
	k.ptr = hc_ptr_make(offset, 0, gen);
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
	u64 start, count, stride = 0, i;
	char buf[128], mode[8] = "";
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
	    size > c->geom.bucket_sectors || (n == 6 && strcmp(mode, "dirty")))
		return -EINVAL;
	if (n < 5)
		stride = size;
	if (count && (start + (count - 1) * stride + size < start ||
		      stride > U64_MAX / count))
		return -ERANGE;
	for (i = 0; i < count && !ret; i += HC_FILL_BATCH) {
		u64 j;

		down_write(&c->meta_lock);
		for (j = i; j < min(count, i + HC_FILL_BATCH) && !ret; j++)
			ret = hc_fill_one(c, id, start + j * stride, size,
					  n == 6);
		up_write(&c->meta_lock);
		if (fatal_signal_pending(current))
			ret = -EINTR;
		cond_resched();
	}
	return ret ? ret : len;
}

static ssize_t hc_flush_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct hc_cache_set *c = file_inode(file)->i_private;
	char buf[16];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	down_write(&c->meta_lock);
	if (sysfs_streq(buf, "btree"))
		ret = hc_btree_flush(c);
	else
		ret = sysfs_streq(buf, "journal") ? 0 : -EINVAL;
	if (!ret)
		ret = hc_journal_write(c);
	up_write(&c->meta_lock);
	return ret ? ret : len;
}

/* A number written to a debugfs file, whole. */
static int hc_debugfs_u32(const char __user *ubuf, size_t len, u32 *v)
{
	char buf[16];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	return kstrtou32(strim(buf), 0, v);
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

static const struct file_operations hc_flush_fops = {
	.owner	= THIS_MODULE,
	.write	= hc_flush_write,
	.llseek	= noop_llseek,
};

/**
 * hc_debugfs_add_set() - create the set's debugfs directory
 * @c: the set
 *
 * Failures are ignored, as debugfs is optional.
 */
void hc_debugfs_add_set(struct hc_cache_set *c)
{
	char name[40];

	if (!hc_debugfs_root)
		return;
	snprintf(name, sizeof(name), "%pU", c->sb.set_uuid);
	c->debugfs = debugfs_create_dir(name, hc_debugfs_root);
	debugfs_create_file("check", 0400, c->debugfs, c, &hc_check_fops);
	debugfs_create_file("keys", 0400, c->debugfs, c, &hc_keys_fops);
	debugfs_create_file("fill", 0200, c->debugfs, c, &hc_fill_fops);
	debugfs_create_file("flush", 0200, c->debugfs, c, &hc_flush_fops);
	debugfs_create_file("gen_set", 0200, c->debugfs, c, &hc_gen_set_fops);
	debugfs_create_file("gen_max_distance", 0600, c->debugfs, c,
			    &hc_gen_max_distance_fops);
}

/**
 * hc_debugfs_remove_set() - remove it, waiting for readers and writers
 * @c: the set
 */
void hc_debugfs_remove_set(struct hc_cache_set *c)
{
	debugfs_remove_recursive(c->debugfs);
	c->debugfs = NULL;
}

/* /sys/kernel/debug/hcache/, at module load. */
void hc_debugfs_init(void)
{
	hc_debugfs_root = debugfs_create_dir("hcache", NULL);
	if (IS_ERR(hc_debugfs_root))
		hc_debugfs_root = NULL;
}

/* At module unload, when every set is gone. */
void hc_debugfs_exit(void)
{
	debugfs_remove_recursive(hc_debugfs_root);
	hc_debugfs_root = NULL;
}
