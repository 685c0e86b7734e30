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

static int __init hc_module_init(void)
{
	hc_root_kobj = kobject_create_and_add("hcache", fs_kobj);
	if (!hc_root_kobj) {
		pr_err("cannot create /sys/fs/hcache\n");
		return -ENOMEM;
	}
	pr_info("loaded\n");
	return 0;
}

static void __exit hc_module_exit(void)
{
	kobject_put(hc_root_kobj);
	hc_root_kobj = NULL;
	pr_info("unloaded\n");
}

module_init(hc_module_init);
module_exit(hc_module_exit);

MODULE_DESCRIPTION("hcache: a block cache with a fast device in front of a slow one");
MODULE_AUTHOR("The hcache developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(HC_VERSION);
