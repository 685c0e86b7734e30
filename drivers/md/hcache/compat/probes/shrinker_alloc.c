// SPDX-License-Identifier: GPL-2.0
/* v6.7 "mm: shrinker: add infrastructure for dynamically allocating shrinker". */
#include <linux/shrinker.h>

struct shrinker *hc_probe(void);
struct shrinker *hc_probe(void)
{
	struct shrinker *s = shrinker_alloc(0, "hcache-probe");

	if (s)
		shrinker_register(s);
	return s;
}
