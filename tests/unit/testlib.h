/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_TESTLIB_H
#define _HCACHE_TESTLIB_H

/*
 * testlib.h: minimal checking for the unit tests: each CHECK prints what
 * failed and counts it; main() returns hc_test_done().
 */

#include <inttypes.h>
#include <stdio.h>

static unsigned int hc_test_checks, hc_test_failures;

#define CHECK(cond, ...)						\
	do {								\
		hc_test_checks++;					\
		if (!(cond)) {						\
			hc_test_failures++;				\
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

#define CHECK_EQ_U64(a, b, what)					\
	CHECK((uint64_t)(a) == (uint64_t)(b), "%s: got %" PRIu64	\
	      " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")",	\
	      what, (uint64_t)(a), (uint64_t)(a), (uint64_t)(b),	\
	      (uint64_t)(b))

static inline int hc_test_done(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, hc_test_checks,
	       hc_test_failures);
	return hc_test_failures ? 1 : 0;
}

#endif /* _HCACHE_TESTLIB_H */
