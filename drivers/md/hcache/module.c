// SPDX-License-Identifier: GPL-2.0
/*
 * module.c: module load and unload, and the /sys/fs/hcache directory that
 * every other hcache object hangs off.
 */

#include "hcache.h"

#include <linux/module.h>
#include <linux/sysfs.h>

/* /sys/fs/hcache; set at load, cleared at unload. */
struct kobject *hc_root_kobj;

/* Deferred work of every device (stops asked for through sysfs). */
struct workqueue_struct *hc_wq;

static int __init hc_module_init(void)
{
	int ret;

	hc_wq = alloc_workqueue("hcache", WQ_MEM_RECLAIM, 0);
	if (!hc_wq)
		return -ENOMEM;
	ret = hc_request_init();
	if (ret)
		goto out_wq;
	ret = hc_backing_major_init();
	if (ret)
		goto out_io;
	hc_root_kobj = kobject_create_and_add("hcache", fs_kobj);
	if (!hc_root_kobj) {
		ret = -ENOMEM;
		goto out_major;
	}
	hc_debugfs_init();
	ret = hc_register_init();
	if (ret)
		goto out_debugfs;
	pr_info("loaded\n");
	return 0;

out_debugfs:
	hc_debugfs_exit();
	kobject_put(hc_root_kobj);
out_major:
	hc_backing_major_exit();
out_io:
	hc_request_exit();
out_wq:
	destroy_workqueue(hc_wq);
	pr_err("cannot load: error %d\n", ret);
	return ret;
}

/* Only once every device is stopped: each holds a module reference. */
static void __exit hc_module_exit(void)
{
	hc_register_exit();
	hc_debugfs_exit();
	kobject_put(hc_root_kobj);
	hc_root_kobj = NULL;
	/* Lets stop works that dropped their module reference finish. */
	destroy_workqueue(hc_wq);
	hc_request_exit();
	hc_backing_major_exit();
	pr_info("unloaded\n");
}

module_init(hc_module_init);
module_exit(hc_module_exit);

MODULE_DESCRIPTION("hcache: a block cache with a fast device in front of a slow one");
MODULE_AUTHOR("The hcache developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(HC_VERSION);
