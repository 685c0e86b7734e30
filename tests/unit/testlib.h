/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_TESTLIB_H
#define _HCACHE_TESTLIB_H

/*
 * testlib.h: minimal checking for the unit tests: each CHECK prints what
 * failed and counts it; main() returns hc_test_done().
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

/* The @width-byte little-endian number at @p (on-disk fields, by offset). */
static inline uint64_t get_le(const void *p, unsigned int width)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	while (width--)
		v = v << 8 | b[width];
	return v;
}

/* Store @v at @p as a @width-byte little-endian number. */
static inline void put_le(void *p, unsigned int width, uint64_t v)
{
	uint8_t *b = p;
	unsigned int i;

	for (i = 0; i < width; i++, v >>= 8)
		b[i] = v;
}

static inline int hc_test_done(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, hc_test_checks,
	       hc_test_failures);
	return hc_test_failures ? 1 : 0;
}

/*
 * hc_test_rules_covered - every validation rule of a source file is tested.
 * @path: the source, whose rules are the strings after `err = "` or
 *	`return "` (one per line)
 * @min_rules: fewer rules than this means the scan itself is broken
 * @tested: true if some table of the test expects this rule's message
 */
static inline void hc_test_rules_covered(const char *path,
					 unsigned int min_rules,
					 bool (*tested)(const char *rule))
{
	static const char *const needles[] = { "err = \"", "return \"" };
	unsigned int rules = 0;
	char line[512];
	FILE *f;

	printf("every rule in %s has a table entry\n", path);
	f = fopen(path, "r");
	CHECK(f, "cannot open %s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = NULL, *q;
		size_t n;

		for (n = 0; n < 2 && !p; n++) {
			p = strstr(line, needles[n]);
			if (p)
				p += strlen(needles[n]);
		}
		if (!p)
			continue;
		q = strchr(p, '"');
		if (!q)
			continue;
		*q = '\0';
		rules++;
		CHECK(tested(p), "rule \"%s\" has no table entry", p);
	}
	fclose(f);
	CHECK(rules >= min_rules, "found only %u rules in %s", rules, path);
	printf("  %u rules\n", rules);
}

#endif /* _HCACHE_TESTLIB_H */
