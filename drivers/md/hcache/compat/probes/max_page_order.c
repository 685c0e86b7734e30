// SPDX-License-Identifier: GPL-2.0
/* v6.8 "mm, treewide: rename MAX_ORDER to MAX_PAGE_ORDER" (and make it
 * inclusive: the largest order is MAX_PAGE_ORDER, where it was MAX_ORDER - 1).
 */
#include <linux/mmzone.h>

int hc_probe(void);
int hc_probe(void)
{
	return MAX_PAGE_ORDER;
}
