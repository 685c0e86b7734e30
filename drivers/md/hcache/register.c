// SPDX-License-Identifier: GPL-2.0
/*
 * register.c: bringing devices into hcache and taking them out:
 * /sys/fs/hcache/{register,register_quiet,register_async,loading,
 * failed_dirty,pendings_cleanup}, the list of
 * registered devices, and the reboot notifier that stops them all.
 */

#include "hcache.h"

#include <linux/module.h>
#include <linux/reboot.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

/* Serialises registration, start and stop; protects hc_backings. */
DEFINE_MUTEX(hc_register_lock);

/* Every registered backing device; hc_register_lock. */
static LIST_HEAD(hc_backings);

/*
 * Set by the reboot notifier: nothing registers after it, and loads in
 * progress stop; written under hc_register_lock, read by loads without it.
 */
bool hc_shutting_down;

/**
 * hc_register_lock_listed() - take hc_register_lock for a sysfs store
 * @entry: the device's node on hc_backings or hc_cache_sets
 *
 * Stores that start, stop or look at a device take hc_register_lock. A
 * stop holds it while removing the device's sysfs directory, which waits
 * for the stores in progress, so those only try the lock and have the
 * write restarted.
 *
 * Return: 0 with the lock held; restart_syscall()'s error if the lock is
 * busy; -ENODEV (lock not held) if the device was unregistered meanwhile.
 */
int hc_register_lock_listed(const struct list_head *entry)
{
	if (!mutex_trylock(&hc_register_lock))
		return restart_syscall();
	if (list_empty(entry)) {
		mutex_unlock(&hc_register_lock);
		return -ENODEV;
	}
	return 0;
}

static bool hc_is_registered(dev_t devt)
{
	struct hc_cache_set *c;
	struct hc_backing *b;

	lockdep_assert_held(&hc_register_lock);
	list_for_each_entry(b, &hc_backings, list)
		if (b->bdev->bd_dev == devt)
			return true;
	list_for_each_entry(c, &hc_cache_sets, list)
		if (c->bdev->bd_dev == devt)
			return true;
	/* A failed load releases its device before leaving the list. */
	list_for_each_entry(c, &hc_cache_sets_loading, list)
		if (c->bdev && c->bdev->bd_dev == devt)
			return true;
	return false;
}

/*
 * Does @b's superblock name a cache set to attach to? Attached devices
 * do, and so do devices formatted with their set (make-hcache -C -B, or
 * --cset-uuid), which attach when it appears.
 */
static bool hc_backing_names_set(struct hc_backing *b)
{
	static const u8 nil[HC_UUID_SIZE];

	return memcmp(b->sb.set_uuid, nil, HC_UUID_SIZE);
}

/*
 * Attach @b to @c and run it (if not running yet). A failure to attach
 * leaves it as it was: pending, or running in passthrough.
 */
static void hc_backing_attach_and_run(struct hc_backing *b,
				      struct hc_cache_set *c)
{
	if (hc_backing_attach(b, c))
		return;
	if (!b->disk && hc_backing_start(b, false))
		pr_err("%pg: attached, but cannot run\n", b->bdev);
}

/**
 * hc_cache_set_attach_pending() - attach the devices waiting for a set
 * @c: a set just registered; hc_register_lock must be held
 *
 * Every registered backing device whose superblock names @c: pending ones
 * (clean or dirty) attach and start; ones running without it because they
 * went stale attach with a new id.
 */
void hc_cache_set_attach_pending(struct hc_cache_set *c)
{
	struct hc_backing *b, *tmp;

	lockdep_assert_held(&hc_register_lock);
	list_for_each_entry_safe(b, tmp, &hc_backings, list)
		if (!b->set && hc_backing_names_set(b) &&
		    !memcmp(b->sb.set_uuid, c->sb.set_uuid, HC_UUID_SIZE))
			hc_backing_attach_and_run(b, c);
}

/*
 * Read, validate and act on the superblock of the device at @path.
 * Every rejection is logged with the device and the reason, and returns
 * its own errno: -ENOENT (no such device), -EBUSY (already registered, or
 * held by someone else), -EIO (unreadable), -EINVAL (not an hcache
 * device), -EBADMSG (bad checksum), -EOPNOTSUPP (unsupported version or
 * feature), -EUCLEAN (corrupt superblock field, or a cache set's
 * metadata inconsistent), -ENOSPC (too small), -EMEDIUMTYPE (zoned);
 * for a cache device also -EEXIST (its set is already registered) and
 * -EROFS (features this version may only read).
 *
 * A cache device's metadata is loaded in the background; with @wait the
 * call returns the load's result, without it once the load has started
 * (it shows in /sys/fs/hcache/loading until the set appears).
 */
static int hc_register(const char *path, bool quiet, bool wait)
{
	struct hc_cache_set *c, *loading = NULL;
	struct hc_backing *b;
	const char *why;
	dev_t devt;
	int ret;

	ret = lookup_bdev(path, &devt);
	if (ret) {
		pr_err("%s: cannot register: no such block device (error %d)\n",
		       path, ret);
		return ret;
	}

	mutex_lock(&hc_register_lock);
	if (hc_shutting_down) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (hc_is_registered(devt)) {
		if (!quiet)
			pr_err("%s: cannot register: already registered\n",
			       path);
		ret = quiet ? 0 : -EBUSY;
		goto out_unlock;
	}

	b = hc_backing_alloc();
	if (!b) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	ret = hc_bdev_open_excl(path, b, &b->handle);
	if (ret) {
		pr_err("%s: cannot register: cannot open it exclusively (error %d%s)\n",
		       path, ret,
		       ret == -EBUSY ? ": mounted or held by another driver" : "");
		goto out_put;
	}
	b->bdev = b->handle.bdev;

	if (bdev_nr_sectors(b->bdev) < HC_SB_END >> SECTOR_SHIFT) {
		pr_err("%pg: cannot register: device too small to hold a superblock (%llu bytes)\n",
		       b->bdev, (unsigned long long)bdev_nr_sectors(b->bdev) << SECTOR_SHIFT);
		ret = -ENOSPC;
		goto out_close;
	}
	ret = hc_sb_read_page(b->bdev, b->sb_buf);
	if (ret) {
		pr_err("%pg: cannot register: cannot read the superblock (error %d)\n",
		       b->bdev, ret);
		goto out_close;
	}
	ret = hc_sb_decode(page_address(b->sb_buf), HC_SB_SIZE, &b->sb, &why);
	if (ret) {
		pr_err("%pg: cannot register: %s%s\n", b->bdev, why,
		       ret == -EINVAL ? " (not an hcache device)" : "");
		goto out_close;
	}
	if (b->sb.kind == HC_KIND_CACHE) {
		/* The set opens the device itself, as its own holder. */
		hc_bdev_close(&b->handle);
		b->bdev = NULL;
		hc_backing_put(b);
		ret = hc_cache_register(path, devt, wait ? &loading : NULL);
		mutex_unlock(&hc_register_lock);
		return loading ? hc_cache_register_wait(loading) : ret;
	}
	hc_backing_tunables_load(b);
	ret = hc_backing_setup(b);
	if (ret)
		goto out_close;

	ret = kobject_add(&b->kobj, bdev_kobj(b->bdev), "hcache");
	if (ret) {
		pr_err("%pg: cannot register: cannot create its sysfs directory (error %d)\n",
		       b->bdev, ret);
		goto out_close;
	}
	ret = hc_stats_init(&b->stats, &b->kobj);
	if (ret) {
		pr_err("%pg: cannot register: cannot create its statistics (error %d)\n",
		       b->bdev, ret);
		kobject_del(&b->kobj);
		goto out_close;
	}
	list_add_tail(&b->list, &hc_backings);
	__module_get(THIS_MODULE);

	c = hc_backing_names_set(b) ? hc_cache_set_find(b->sb.set_uuid) :
				       NULL;
	if (c)
		hc_backing_attach_and_run(b, c);
	if (b->disk)
		goto out_unlock;
	switch (b->sb.backing.state) {
	case HC_STATE_NONE:
	case HC_STATE_STALE:
		ret = hc_backing_start(b, false);
		if (ret)
			hc_backing_stop(b);
		break;
	default:
		pr_info("%pg: registered; %s, waiting for cache set %pU\n",
			b->bdev, hc_backing_state_name(b->sb.backing.state),
			b->sb.set_uuid);
	}
	mutex_unlock(&hc_register_lock);
	return ret;

out_close:
	hc_bdev_close(&b->handle);
	b->bdev = NULL;
out_put:
	hc_backing_put(b);
out_unlock:
	mutex_unlock(&hc_register_lock);
	return ret;
}

static ssize_t hc_register_store_common(const char *buf, size_t len,
					bool quiet, bool wait)
{
	char *path;
	int ret;

	path = kstrndup(buf, len, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	ret = hc_register(strim(path), quiet, wait);
	kfree(path);
	return ret ? ret : len;
}

static ssize_t register_store(struct kobject *k, struct kobj_attribute *attr,
			      const char *buf, size_t len)
{
	return hc_register_store_common(buf, len, false, true);
}

static ssize_t register_quiet_store(struct kobject *k,
				    struct kobj_attribute *attr,
				    const char *buf, size_t len)
{
	return hc_register_store_common(buf, len, true, true);
}

static ssize_t register_async_store(struct kobject *k,
				    struct kobj_attribute *attr,
				    const char *buf, size_t len)
{
	return hc_register_store_common(buf, len, true, false);
}

static ssize_t loading_show(struct kobject *k, struct kobj_attribute *attr,
			    char *buf)
{
	return hc_cache_set_loading_show(buf);
}

static ssize_t failed_dirty_show(struct kobject *k,
				 struct kobj_attribute *attr, char *buf)
{
	return hc_failed_dirty_show(buf);
}

static ssize_t pendings_cleanup_store(struct kobject *k,
				      struct kobj_attribute *attr,
				      const char *buf, size_t len)
{
	struct hc_backing *b, *tmp;

	mutex_lock(&hc_register_lock);
	list_for_each_entry_safe(b, tmp, &hc_backings, list)
		if (!b->disk)
			hc_backing_stop(b);
	mutex_unlock(&hc_register_lock);
	return len;
}

static struct kobj_attribute hc_register_attr = __ATTR_WO(register);
static struct kobj_attribute hc_register_quiet_attr = __ATTR_WO(register_quiet);
static struct kobj_attribute hc_register_async_attr = __ATTR_WO(register_async);
static struct kobj_attribute hc_loading_attr = __ATTR_RO(loading);
static struct kobj_attribute hc_failed_dirty_attr = __ATTR_RO(failed_dirty);
static struct kobj_attribute hc_pendings_cleanup_attr =
	__ATTR_WO(pendings_cleanup);

static struct attribute *hc_root_attrs[] = {
	&hc_register_attr.attr,
	&hc_register_quiet_attr.attr,
	&hc_register_async_attr.attr,
	&hc_loading_attr.attr,
	&hc_failed_dirty_attr.attr,
	&hc_pendings_cleanup_attr.attr,
	NULL
};

static const struct attribute_group hc_root_group = {
	.attrs = hc_root_attrs,
};

/* Stop every device before the machine goes down, so each ends cleanly. */
static int hc_reboot(struct notifier_block *nb, unsigned long code, void *x)
{
	struct hc_cache_set *c, *ctmp;
	struct hc_backing *b, *tmp;

	if (code != SYS_DOWN && code != SYS_HALT && code != SYS_POWER_OFF)
		return NOTIFY_DONE;

	mutex_lock(&hc_register_lock);
	hc_shutting_down = true;
	list_for_each_entry_safe(b, tmp, &hc_backings, list)
		hc_backing_stop(b);
	list_for_each_entry_safe(c, ctmp, &hc_cache_sets, list)
		hc_cache_set_stop(c, false);
	mutex_unlock(&hc_register_lock);
	/* Loads stop at their next step, leaving their sets as on disk. */
	hc_cache_set_loads_flush();
	return NOTIFY_DONE;
}

static struct notifier_block hc_reboot_notifier = {
	.notifier_call	= hc_reboot,
	/* Before the block devices underneath go away. */
	.priority	= INT_MAX,
};

int hc_register_init(void)
{
	int ret;

	ret = hc_cache_set_load_init();
	if (ret)
		return ret;
	ret = sysfs_create_group(hc_root_kobj, &hc_root_group);
	if (ret)
		goto out_load;
	ret = register_reboot_notifier(&hc_reboot_notifier);
	if (ret)
		goto out_group;
	return 0;

out_group:
	sysfs_remove_group(hc_root_kobj, &hc_root_group);
out_load:
	hc_cache_set_load_exit();
	return ret;
}

void hc_register_exit(void)
{
	unregister_reboot_notifier(&hc_reboot_notifier);
	sysfs_remove_group(hc_root_kobj, &hc_root_group);
	/* Drains the last load's work, which may have dropped our module. */
	hc_cache_set_load_exit();
	hc_failed_dirty_exit();
}
