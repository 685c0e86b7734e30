// SPDX-License-Identifier: GPL-2.0
/*
 * util.c: helpers shared by the hcache tools.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include "util.h"

const char *hc_prog = "hcache";

void hc_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", hc_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void hc_print_version(void)
{
	printf("%s (hcache) %s\n", hc_prog, HC_VERSION);
}

int hc_parse_u64(const char *s, u64 *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int hc_parse_size(const char *s, u64 *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
		return -1;
	if (shift && v > (~0ULL >> shift))
		return -1;
	*out = (u64)v << shift;
	return 0;
}

void hc_human_size(u64 bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };
	unsigned int u = 0;
	double v = bytes;

	while (v >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

void hc_uuid_str(const u8 *uuid, char *buf)
{
	uuid_unparse_lower(uuid, buf);
}

int hc_read_sb(int fd, struct hc_sb_disk *d)
{
	ssize_t n = pread(fd, d, sizeof(*d), HC_SB_OFFSET);

	if (n < 0)
		return -1;
	if (n != (ssize_t)sizeof(*d)) {
		errno = ENODATA;
		return -1;
	}
	return 0;
}

/*
 * The length of the well-formed UTF-8 sequence at @p (1 to 4 bytes), or 0
 * where none starts: a stray continuation byte, a sequence cut short (by
 * the NUL too), an overlong form, a surrogate or a code point past
 * U+10FFFF.
 */
static size_t utf8_seq_len(const unsigned char *p)
{
	size_t n, i;
	u32 cp;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0) {
		n = 2;
		cp = *p & 0x1f;
	} else if ((*p & 0xf0) == 0xe0) {
		n = 3;
		cp = *p & 0x0f;
	} else if ((*p & 0xf8) == 0xf0) {
		n = 4;
		cp = *p & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void hc_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n = utf8_seq_len(p);

		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
			p++;
		} else if (!n || *p < 0x20 || *p == 0x7f) {
			/* Not text: the byte, as the code point of its value. */
			fprintf(f, "\\u%04x", *p);
			p++;
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

const char *hc_kind_name(u32 kind)
{
	switch (kind) {
	case HC_KIND_CACHE:
		return "cache";
	case HC_KIND_BACKING:
		return "backing";
	}
	return "unknown";
}

const char *hc_repl_name(u32 repl)
{
	static const char *const names[HC_REPL_NR] = {
		[HC_REPL_LRU] = "lru",
		[HC_REPL_FIFO] = "fifo",
		[HC_REPL_RANDOM] = "random",
	};

	return repl < HC_REPL_NR ? names[repl] : "unknown";
}

const char *hc_mode_name(u32 mode)
{
	static const char *const names[HC_MODE_NR] = {
		[HC_MODE_WRITETHROUGH] = "writethrough",
		[HC_MODE_WRITEBACK] = "writeback",
		[HC_MODE_WRITEAROUND] = "writearound",
		[HC_MODE_NONE] = "none",
	};

	return mode < HC_MODE_NR ? names[mode] : "unknown";
}

const char *hc_csum_name(u32 type)
{
	switch (type) {
	case HC_CSUM_NONE:
		return "none";
	case HC_CSUM_CRC32C:
		return "crc32c";
	}
	return "unknown";
}

const char *hc_state_name(u32 state)
{
	static const char *const names[] = {
		[HC_STATE_NONE] = "none",
		[HC_STATE_CLEAN] = "clean",
		[HC_STATE_DIRTY] = "dirty",
		[HC_STATE_STALE] = "stale",
	};

	return state < 4 ? names[state] : "unknown";
}
