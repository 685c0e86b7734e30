// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c: the definitions of hcache's trace events (trace.h), and the
 * checks that tie their printed names to the enums they stand for.
 */

#include "hcache.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

static_assert(HC_BYPASS_SEQUENTIAL == 1 && HC_BYPASS_FULL == 2 &&
	      HC_BYPASS_MODE == 3 && HC_BYPASS_POLICY == 4 &&
	      HC_BYPASS_NR == 5, "trace.h's bypass names");
static_assert(HC_FAIL_ERRORS == 0 && HC_FAIL_REMOVED == 1 &&
	      HC_FAIL_METADATA == 2, "trace.h's failure names");
