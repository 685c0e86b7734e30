// SPDX-License-Identifier: GPL-2.0
/*
 * crc32c.c: CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) for
 * userspace, with the kernel crc32c() convention: no seeding and no final
 * inversion here, the caller does both (see pure.h).
 *
 * Slicing-by-8 over tables built on first use; fast enough for the tools,
 * which checksum a few 4 KiB blocks.
 */

#include <pthread.h>

#include "pure.h"

#define HC_CRC32C_POLY	0x82f63b78U

static u32 hc_crc32c_table[8][256];
static pthread_once_t hc_crc32c_once = PTHREAD_ONCE_INIT;

static void hc_crc32c_init(void)
{
	u32 i, j, crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (j = 0; j < 8; j++)
			crc = (crc >> 1) ^ (HC_CRC32C_POLY & -(crc & 1));
		hc_crc32c_table[0][i] = crc;
	}
	for (i = 0; i < 256; i++) {
		crc = hc_crc32c_table[0][i];
		for (j = 1; j < 8; j++) {
			crc = (crc >> 8) ^ hc_crc32c_table[0][crc & 0xff];
			hc_crc32c_table[j][i] = crc;
		}
	}
}

u32 hc_crc32c(u32 crc, const void *p, size_t len)
{
	const u8 *b = p;

	pthread_once(&hc_crc32c_once, hc_crc32c_init);

	while (len && ((uintptr_t)b & 7)) {
		crc = (crc >> 8) ^ hc_crc32c_table[0][(crc ^ *b++) & 0xff];
		len--;
	}
	while (len >= 8) {
		u64 v;

		memcpy(&v, b, 8);
		v = le64toh(v) ^ crc;
		crc = hc_crc32c_table[7][v & 0xff] ^
		      hc_crc32c_table[6][(v >> 8) & 0xff] ^
		      hc_crc32c_table[5][(v >> 16) & 0xff] ^
		      hc_crc32c_table[4][(v >> 24) & 0xff] ^
		      hc_crc32c_table[3][(v >> 32) & 0xff] ^
		      hc_crc32c_table[2][(v >> 40) & 0xff] ^
		      hc_crc32c_table[1][(v >> 48) & 0xff] ^
		      hc_crc32c_table[0][v >> 56];
		b += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ hc_crc32c_table[0][(crc ^ *b++) & 0xff];
	return crc;
}
