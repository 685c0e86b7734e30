// SPDX-License-Identifier: GPL-2.0
/*
 * debug.c: /sys/kernel/debug/hcache/<set-uuid>/, for tests and debugging:
 *
 *   check  read: run the consistency check; "ok", or one line per problem
 *   keys   read: every leaf key, "bdev:start-end @cache-sector gen g c|d"
 *          ("bdev:start-end whiteout" cannot appear: leaves hold none)
 *   flush  write "journal": write the open journal entry; "btree": write
 *          every dirty btree node, then a journal entry; either inserts
 *          the keys of the cached writes done so far first
 *
 * A debug build (debug.h) adds the files that may break the set's
 * promises, and its delay and fault points (debug_knobs.c).
 *
 * Not an interface: Documentation/hcache/testing.rst describes it for the
 * tests that use it.
 */

#include "hcache.h"
#include "debug.h"

#include <linux/debugfs.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

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

	/* The counts are complete only once the pass behind I/O ended. */
	ret = hc_mark_bg_wait(c);
	if (ret)
		return ret;
	ret = hc_debug_text_alloc(file, PAGE_SIZE * 4, &s);
	if (ret)
		return ret;
	t = file->private_data;
	down_read(&c->meta_lock);
	ret = c->mark_bg.running ? -EBUSY : hc_check(c, &s);
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
	/* The keys of writes done but not yet inserted are written too. */
	hc_write_drain(c);
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
	debugfs_create_file("flush", 0200, c->debugfs, c, &hc_flush_fops);
	hc_debug_knobs_add_set(c, c->debugfs);
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
	else
		hc_debug_knobs_init(hc_debugfs_root);
}

/* At module unload, when every set is gone. */
void hc_debugfs_exit(void)
{
	debugfs_remove_recursive(hc_debugfs_root);
	hc_debugfs_root = NULL;
}
