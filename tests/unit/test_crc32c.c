// SPDX-License-Identifier: GPL-2.0
/*
 * test_crc32c: the userspace CRC-32C against published check values, its
 * raw (kernel crc32c()) convention, and a bit-at-a-time reference over
 * every length and alignment the slicing code treats differently.
 */

#include <stdlib.h>

#include "sb.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static u32 ref_crc32c(u32 crc, const u8 *p, size_t len)
{
	unsigned int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78U : crc >> 1;
	}
	return crc;
}

int main(void)
{
	static const char check[] = "123456789";
	u8 buf[32], big[300];
	size_t i, off, len;
	u32 crc;

	/* The CRC-32C check value. */
	printf("check value of \"123456789\"\n");
	CHECK_EQ_U64(hc_csum(check, 9), 0xe3069283U, "hc_csum(\"123456789\")");
	/* Raw convention: no seed, no inversion, like the kernel's crc32c(). */
	CHECK_EQ_U64(~hc_crc32c(~0U, check, 9), 0xe3069283U,
		     "~hc_crc32c(~0, \"123456789\")");
	CHECK_EQ_U64(hc_crc32c(0, "", 0), 0, "raw crc of nothing, seed 0");
	CHECK_EQ_U64(hc_crc32c(0x12345678, "", 0), 0x12345678,
		     "raw crc of nothing keeps its seed");

	/* RFC 3720 (iSCSI) B.4 test vectors. */
	printf("RFC 3720 B.4 vectors\n");
	memset(buf, 0, sizeof(buf));
	CHECK_EQ_U64(hc_csum(buf, 32), 0x8a9136aaU, "32 bytes of 0x00");
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ_U64(hc_csum(buf, 32), 0x62a8ab43U, "32 bytes of 0xff");
	for (i = 0; i < 32; i++)
		buf[i] = i;
	CHECK_EQ_U64(hc_csum(buf, 32), 0x46dd794eU, "bytes 0..31");
	for (i = 0; i < 32; i++)
		buf[i] = 31 - i;
	CHECK_EQ_U64(hc_csum(buf, 32), 0x113fdb5cU, "bytes 31..0");

	/* Incremental updates equal one pass. */
	printf("incremental updates\n");
	crc = hc_crc32c(~0U, check, 4);
	crc = hc_crc32c(crc, check + 4, 5);
	CHECK_EQ_U64(~crc, 0xe3069283U, "\"1234\" then \"56789\"");

	/* Every alignment and length against the reference. */
	printf("all alignments and lengths up to 280 against a reference\n");
	srand(1);
	for (i = 0; i < sizeof(big); i++)
		big[i] = rand();
	for (off = 0; off < 8; off++)
		for (len = 0; len + off <= 280; len++)
			CHECK(hc_crc32c(~0U, big + off, len) ==
			      ref_crc32c(~0U, big + off, len),
			      "offset %zu length %zu", off, len);

	/*
	 * Zero extension against zeroes fed through: every length up to
	 * 2 KiB, then powers of two and their neighbours up to 1 MiB, from
	 * seeds that have every bit of the register in play.
	 */
	printf("hc_crc32c_zeros against zero bytes fed through\n");
	{
		static u8 zeros[1 << 20];
		static const u32 seeds[] = { ~0U, 0, 1, 0x80000000U,
					     0xe3069283U, 0x12345678U };
		size_t s, n;

		for (s = 0; s < ARRAY_LEN(seeds); s++) {
			for (n = 0; n <= 2048; n++)
				CHECK(hc_crc32c_zeros(seeds[s], n) ==
				      hc_crc32c(seeds[s], zeros, n),
				      "seed %#x, %zu zeroes", seeds[s], n);
			for (n = 4096; n <= sizeof(zeros); n <<= 1) {
				CHECK(hc_crc32c_zeros(seeds[s], n - 1) ==
				      hc_crc32c(seeds[s], zeros, n - 1),
				      "seed %#x, %zu zeroes", seeds[s], n - 1);
				CHECK(hc_crc32c_zeros(seeds[s], n) ==
				      hc_crc32c(seeds[s], zeros, n),
				      "seed %#x, %zu zeroes", seeds[s], n);
			}
		}
		/* After data, as a padded structure uses it. */
		crc = hc_crc32c(~0U, big, 100);
		CHECK(hc_crc32c_zeros(crc, 65436) ==
		      hc_crc32c(crc, zeros, 65436), "100 bytes, then zeroes");
	}

	return hc_test_done("test_crc32c");
}
