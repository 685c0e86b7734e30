// SPDX-License-Identifier: GPL-2.0
/*
 * test_util: size and number parsing used by the tools' options, and
 * their JSON strings.
 */

#include <stdlib.h>

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

/* hc_json_str(): what goes in, what must come out. */
static const struct {
	const char *in;
	const char *out;
} json[] = {
	{ "plain", "\"plain\"" },
	{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
	{ "tab\there\n", "\"tab\\u0009here\\u000a\"" },
	{ "del\x7f", "\"del\\u007f\"" },
	/* UTF-8 as it is: 2, 3 and 4 bytes. */
	{ "donn\xc3\xa9" "es", "\"donn\xc3\xa9" "es\"" },
	{ "\xe2\x82\xac", "\"\xe2\x82\xac\"" },
	{ "\xf0\x9f\x92\xbe", "\"\xf0\x9f\x92\xbe\"" },
	/* Not UTF-8: each byte escaped on its own. */
	{ "x\xe9y", "\"x\\u00e9y\"" },			/* Latin-1 */
	{ "\xc3", "\"\\u00c3\"" },				/* cut short by the end */
	{ "\xc0\xaf", "\"\\u00c0\\u00af\"" },		/* overlong '/' */
	{ "\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"" },	/* a surrogate */
	{ "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"" }, /* > U+10FFFF */
	{ "\x80", "\"\\u0080\"" },				/* a lone continuation */
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

	printf("hc_json_str\n");
	for (i = 0; i < sizeof(json) / sizeof(json[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		CHECK(f, "open_memstream");
		if (!f)
			break;
		hc_json_str(f, json[i].in);
		fclose(f);
		CHECK(!strcmp(buf, json[i].out), "json %zu: got %s, want %s",
		      i, buf, json[i].out);
		free(buf);
	}

	return hc_test_done("test_util");
}
