// SPDX-License-Identifier: GPL-2.0
/*
 * test_util: size and number parsing used by the tools' options.
 */

#include "util.h"
#include "testlib.h"

static const struct {
	const char *s;
	int ret;
	u64 v;
} sizes[] = {
	{ "0", 0, 0 },
	{ "4096", 0, 4096 },
	{ "512k", 0, 512 << 10 },
	{ "512K", 0, 512 << 10 },
	{ "8KiB", 0, 8 << 10 },
	{ "1M", 0, 1 << 20 },
	{ "128m", 0, 128 << 20 },
	{ "2G", 0, 2ULL << 30 },
	{ "", -1, 0 },
	{ "k", -1, 0 },
	{ "-1", -1, 0 },
	{ " 1", -1, 0 },
	{ "1.5k", -1, 0 },
	{ "1T", -1, 0 },
	{ "1kx", -1, 0 },
	{ "18446744073709551615", 0, ~0ULL },
	{ "18446744073709551616", -1, 0 },
	{ "18014398509481984k", -1, 0 },
};

int main(void)
{
	size_t i;
	u64 v;

	printf("hc_parse_size\n");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int ret;

		v = 0;
		ret = hc_parse_size(sizes[i].s, &v);
		CHECK(ret == sizes[i].ret, "\"%s\": returned %d", sizes[i].s,
		      ret);
		if (!sizes[i].ret)
			CHECK_EQ_U64(v, sizes[i].v, sizes[i].s);
	}

	printf("hc_parse_u64\n");
	CHECK(!hc_parse_u64("2048", &v) && v == 2048, "2048");
	CHECK(hc_parse_u64("2048s", &v), "2048s rejected");
	CHECK(hc_parse_u64("-16", &v), "-16 rejected");
	CHECK(hc_parse_u64("", &v), "empty rejected");

	return hc_test_done("test_util");
}
