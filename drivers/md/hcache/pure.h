/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_PURE_H
#define _HCACHE_PURE_H

/*
 * pure.h: what the "pure" files may use, so that they build both in the
 * module and in userspace (tools, unit tests, fuzzers). They are the
 * format's encoders and validators (sb.c, bkey.c, bset.c, jset.c, pset.c,
 * bdev_table.c, csum_table.c) and the decisions that need no kernel state (mark.c,
 * bypass.c, stats.c, wb_rate.c, evict.c); tests/unit/Makefile builds the
 * same list. Kernel builds get the kernel's own helpers; userspace gets
 * equivalents with the same names and semantics.
 *
 * hc_crc32c(crc, p, len) is the raw CRC-32C update: it neither seeds nor
 * inverts, exactly like the kernel's crc32c(). A standard CRC-32C is
 * ~hc_crc32c(~0U, p, len); see hcache_ondisk.h for why CRC-32C.
 */

#ifdef __KERNEL__

#include <linux/compiler.h>
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>

static inline u32 hc_crc32c(u32 crc, const void *p, size_t len)
{
	return crc32c(crc, p, len);
}

#else /* userspace */

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

#ifndef __force
#ifdef __CHECKER__
#define __force __attribute__((force))
#else
#define __force
#endif
#endif

#define cpu_to_le16(x)	((__force __le16)htole16(x))
#define cpu_to_le32(x)	((__force __le32)htole32(x))
#define cpu_to_le64(x)	((__force __le64)htole64(x))
#define le16_to_cpu(x)	((u16)le16toh((__force __u16)(x)))
#define le32_to_cpu(x)	((u32)le32toh((__force __u32)(x)))
#define le64_to_cpu(x)	((u64)le64toh((__force __u64)(x)))

/* tools/lib/crc32c.c */
u32 hc_crc32c(u32 crc, const void *p, size_t len);

#endif /* __KERNEL__ */

/* CRC-32C's polynomial, bit-reflected as the register is: bit 31 is x^0. */
#define HC_CRC32C_POLY	0x82f63b78U

/* @a * @b modulo the CRC-32C polynomial, both bit-reflected. */
static inline u32 hc_crc32c_mulmod(u32 a, u32 b)
{
	u32 m, p = 0;

	for (m = 1U << 31; m; m >>= 1) {
		if (a & m)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ HC_CRC32C_POLY : b >> 1;
	}
	return p;
}

/**
 * hc_crc32c_zeros() - hc_crc32c() over @len zero bytes, without the bytes
 * @crc: the raw register, as hc_crc32c() takes and gives it
 * @len: how many zero bytes follow
 *
 * Feeding a zero byte multiplies the raw register by x^8 modulo the
 * polynomial, so @len of them multiply it by x^(8 * @len), which takes
 * about 2 * log2(@len) products of 32 steps each instead of @len bytes of
 * table lookups: a structure padded with zeroes to a bucket's end is
 * checksummed at the cost of what it holds.
 *
 * Return: hc_crc32c(@crc, zeroes, @len).
 */
static inline u32 hc_crc32c_zeros(u32 crc, u64 len)
{
	u32 power = 1U << (31 - 8);	/* x^8 */

	for (; len; len >>= 1) {
		if (len & 1)
			crc = hc_crc32c_mulmod(crc, power);
		power = hc_crc32c_mulmod(power, power);
	}
	return crc;
}

/**
 * hc_csum() - standard CRC-32C of a buffer
 * @p: the bytes
 * @len: how many
 *
 * Return: the checksum (0xe3069283 for "123456789").
 */
static inline u32 hc_csum(const void *p, size_t len)
{
	return ~hc_crc32c(~0U, p, len);
}

/**
 * hc_csum_skip() - the checksum an on-disk structure should carry
 * @p: the structure
 * @len: its length in bytes, checksum field included
 * @csum_at: offset of its 4-byte checksum field
 *
 * Every hcache structure checksums itself this way: standard CRC-32C of
 * all @len bytes with the checksum field read as zero, whatever it holds.
 *
 * Return: the checksum, in CPU order.
 */
static inline u32 hc_csum_skip(const void *p, size_t len, size_t csum_at)
{
	static const u8 zero[4];
	const u8 *b = p;
	size_t after = csum_at + sizeof(zero);
	u32 crc;

	crc = hc_crc32c(~0U, b, csum_at);
	crc = hc_crc32c(crc, zero, sizeof(zero));
	crc = hc_crc32c(crc, b + after, len - after);
	return ~crc;
}

#endif /* _HCACHE_PURE_H */
