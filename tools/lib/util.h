/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_TOOLS_UTIL_H
#define _HCACHE_TOOLS_UTIL_H

/*
 * util.h: helpers shared by the hcache tools: messages, number and size
 * parsing, uuids, reading a superblock and printing JSON strings.
 */

#include <stdio.h>

#include "sb.h"

#ifndef HC_VERSION
#define HC_VERSION "0.1"
#endif

/* Set by each tool's main() to its name, for messages. */
extern const char *hc_prog;

void hc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "PROG VERSION" to stdout. */
void hc_print_version(void);

/*
 * Parse a size in bytes with an optional k, M or G suffix (powers of
 * 1024). Returns 0, or -1 if @s is not such a size or overflows.
 */
int hc_parse_size(const char *s, u64 *out);

/* Parse a plain decimal unsigned number. Returns 0 or -1. */
int hc_parse_u64(const char *s, u64 *out);

/* "1.5 MiB"-style human size into @buf. */
void hc_human_size(u64 bytes, char *buf, size_t len);

/* Lower-case canonical uuid text, 37 bytes with the NUL. */
void hc_uuid_str(const u8 *uuid, char *buf);

/*
 * Read the HC_SB_SIZE bytes at HC_SB_OFFSET of @fd into @d. Returns 0,
 * or -1 with errno set (ENODATA when the device is too short).
 */
int hc_read_sb(int fd, struct hc_sb_disk *d);

/*
 * Write @s as a JSON string literal, quotes included. Well-formed UTF-8
 * goes out as it is; a control character, or a byte that is not part of
 * well-formed UTF-8, as \u00XX (the code point of the byte's value).
 */
void hc_json_str(FILE *f, const char *s);

/* Names of enum values, "unknown" when out of range. */
const char *hc_kind_name(u32 kind);
const char *hc_repl_name(u32 repl);
const char *hc_mode_name(u32 mode);
const char *hc_state_name(u32 state);
const char *hc_csum_name(u32 type);	/* HC_CSUM_* */

#endif /* _HCACHE_TOOLS_UTIL_H */
