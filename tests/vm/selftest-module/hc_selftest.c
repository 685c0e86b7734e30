// SPDX-License-Identifier: GPL-2.0
/*
 * hc_selftest.c: a throwaway module for the VM harness's own tests. Loaded
 * with warn=1 it makes the kernel print a WARNING, so a test can prove that
 * the log scanner fails a test when the kernel warns. Never shipped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/module.h>

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "print a kernel WARNING at load (harness self-test)");

static int __init hc_selftest_init(void)
{
	WARN(warn, "hc_selftest: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit hc_selftest_exit(void)
{
}

module_init(hc_selftest_init);
module_exit(hc_selftest_exit);

MODULE_DESCRIPTION("hcache VM harness self-test module");
MODULE_LICENSE("GPL");
