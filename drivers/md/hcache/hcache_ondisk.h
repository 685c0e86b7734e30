/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_ONDISK_H
#define _HCACHE_ONDISK_H

/*
 * hcache_ondisk.h: every structure hcache writes to disk.
 *
 * This header is shared byte for byte by the kernel module, the tools in
 * tools/ and the unit tests; it builds with and without __KERNEL__. Every
 * field is little-endian and fixed-width (__le16/__le32/__le64/__u8), every
 * structure has a static_assert on its size and on the offsets that matter.
 * Documentation/hcache/ondisk-format.rst describes the same layout in prose;
 * change both together.
 *
 * UNITS
 *
 * "sector" is always 512 bytes. Offsets on a device are in sectors; block
 * and bucket sizes are in bytes.
 *
 * CHECKSUMS
 *
 * Every structure is protected by CRC-32C (Castagnoli), in the standard
 * convention: seed 0xffffffff, reflected, final inversion, so the check
 * value of "123456789" is 0xe3069283. Why CRC-32C and not crc64: metadata
 * blocks here are small (a 4 KiB superblock, journal and btree blocks of a
 * few KiB), for which 32 bits detect every burst error up to 32 bits and
 * random corruption with probability 1 - 2^-32; CRC-32C has an instruction
 * on x86 (SSE4.2) and arm64, and it is what ext4, xfs and btrfs use for
 * their metadata, so the kernel always has a fast implementation
 * (crc32c() in libcrc32c; note that function neither seeds nor inverts,
 * the caller does both). Each checksum covers its whole structure with the
 * checksum field itself read as zero.
 *
 * MAGIC
 *
 * The superblock has a fixed magic so that probes can find it. Every
 * structure inside a cache device has a magic mixed with its cache set's
 * uuid (set magic = the two halves of the set uuid, read as little-endian
 * u64s, xor-ed together; structure magic = set magic ^ the structure's
 * constant), so a block left over from an earlier format of the same device
 * never passes for current metadata.
 *
 * VERSIONS AND FEATURES
 *
 * A superblock has a version (HC_SB_VERSION) and three feature masks.
 * Unknown compat bits are ignored; unknown ro_compat bits mean the device
 * may be read but not written; unknown incompat bits mean the device must
 * not be used at all.
 */

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <assert.h>
#include <stddef.h>
#include <linux/types.h>
#endif

#define HC_SECTOR_SHIFT		9
#define HC_SECTOR_SIZE		(1U << HC_SECTOR_SHIFT)

/* ---- Superblock ---------------------------------------------------------- */

/* The superblock is the 4 KiB at byte 4096 (sector 8) of both device kinds. */
#define HC_SB_OFFSET		4096U
#define HC_SB_SECTOR		(HC_SB_OFFSET >> HC_SECTOR_SHIFT)
#define HC_SB_SIZE		4096U
/* First byte after the superblock: nothing of ours may start before it. */
#define HC_SB_END		(HC_SB_OFFSET + HC_SB_SIZE)

/* "hcache-S" read as a little-endian u64; bcache's magic is a 16-byte uuid. */
#define HC_SB_MAGIC		0x532d656863616368ULL
#define HC_SB_VERSION		1U

/* Device kinds (hc_sb_disk.kind). */
#define HC_KIND_CACHE		1U
#define HC_KIND_BACKING		2U

/*
 * Feature bits.
 *
 * HC_FEAT_INCOMPAT_RETIRED_DRAFT (incompat bit 0, retired, never reused):
 * development versions of hcache set it on every cache superblock while
 * the cache device's inner structures (buckets, journal, btree,
 * backing-device table) were a draft that could still change. Those
 * structures are now final and nothing sets the bit; a cache carrying it
 * was formatted in the draft layout and is refused (hc_sb_decode() says to
 * reformat it). The bit is not in HC_FEAT_INCOMPAT_SUPP and must never be
 * given another meaning.
 *
 * HC_FEAT_INCOMPAT_EMPTY_MARKS (incompat bit 1): set with clean at a clean
 * stop whose last gen/prio chain marks the buckets it found empty
 * (HC_BUCKET_DISK_EMPTY), and whose superblock names the newest journal
 * entry (hc_sb_cache_disk.clean_journal_*); cleared by the next
 * registration before it writes anything else. Such a registration reads
 * that entry alone, not the whole ring, and hands the marked buckets out
 * while it counts the others in the background. Code that does not know
 * the bit would refuse the marks as nonzero record padding, and take an
 * older entry for the newest; while it is set, that code refuses the
 * device with a clear reason instead.
 *
 * HC_FEAT_INCOMPAT_DATA_CSUM (incompat bit 2): every 4 KiB chunk of the
 * cache device has a CRC-32C in the checksum table (hc_sb_cache_disk's
 * csum_* fields, struct hc_csum_block_disk), kept with each write of cached
 * data and checked on each read of it. Code that does not know it would
 * write data without its checksum, which the next reader with the feature
 * would take for corruption; it must refuse the device.
 *
 * HC_FEAT_RO_COMPAT_RETIRED_CSUM (ro_compat bit 0): reserved for one
 * checksum per key, which no code ever wrote: a 4 KiB hit of a 512 KiB
 * extent would have had to read and hash all of it, and a trimmed key
 * could not be checked at all. Never set; never to be given another
 * meaning.
 *
 * HC_FEAT_COMPAT_TUNABLES: the superblock keeps settings an administrator
 * made through sysfs (the tunables field of its kind's part, and the
 * fields after it), so that they survive a reboot. Each field counts only
 * while its bit in tunables is set; otherwise the kernel's default
 * applies. Set whenever tunables is not 0. Code that does not know the
 * feature ignores the fields, and rewriting the superblock without them
 * (tunables 0) only returns the device to the defaults.
 */
#define HC_FEAT_INCOMPAT_RETIRED_DRAFT	(1ULL << 0)
#define HC_FEAT_INCOMPAT_EMPTY_MARKS	(1ULL << 1)
#define HC_FEAT_INCOMPAT_DATA_CSUM	(1ULL << 2)
#define HC_FEAT_RO_COMPAT_RETIRED_CSUM	(1ULL << 0)
#define HC_FEAT_COMPAT_TUNABLES		(1ULL << 0)

/* What this code understands. */
#define HC_FEAT_COMPAT_SUPP		HC_FEAT_COMPAT_TUNABLES
#define HC_FEAT_RO_COMPAT_SUPP		0ULL
#define HC_FEAT_INCOMPAT_SUPP		(HC_FEAT_INCOMPAT_EMPTY_MARKS | \
					 HC_FEAT_INCOMPAT_DATA_CSUM)

#define HC_UUID_SIZE		16
#define HC_LABEL_SIZE		32	/* NUL-terminated, NUL-padded */

/* Block size: a power of two from 512 to 4096 bytes. */
#define HC_BLOCK_MIN		512U
#define HC_BLOCK_MAX		4096U

/*
 * Bucket size: a power of two from 8 KiB to 128 MiB. The minimum is above
 * the largest block size, so a valid bucket size is always a whole number
 * of blocks.
 */
#define HC_BUCKET_MIN		(8U << 10)
#define HC_BUCKET_MAX		(128U << 20)
#define HC_BUCKET_DEFAULT	(512U << 10)

/*
 * A cache needs at least HC_MIN_BUCKETS buckets outside the journal and at
 * least HC_JOURNAL_MIN journal buckets, plus the buckets before first_bucket
 * that hold the superblock. With the default 512 KiB buckets that is
 * (1 + 8 + 128) * 512 KiB = 68.5 MiB; with 8 KiB buckets,
 * (1 + 8 + 128) * 8 KiB = 1096 KiB.
 */
#define HC_MIN_BUCKETS		128U
#define HC_JOURNAL_MIN		8U
#define HC_JOURNAL_MAX		256U

/* Backing devices: data starts at this sector or later. */
#define HC_DATA_OFFSET_MIN	16U
#define HC_DATA_OFFSET_DEFAULT	2048U	/* 1 MiB */

/*
 * hc_sb_disk.flags on a cache device.
 *  bits 0-3  replacement policy (HC_REPL_*)
 *  bit  4    discard buckets before reuse
 *  bit  5    clean: the cache set was shut down cleanly; cleared while it
 *            is running, set on a clean stop
 */
#define HC_CACHE_REPL_MASK	0xfULL
#define HC_CACHE_DISCARD	(1ULL << 4)
#define HC_CACHE_CLEAN		(1ULL << 5)
#define HC_CACHE_FLAGS_KNOWN	(HC_CACHE_REPL_MASK | HC_CACHE_DISCARD | \
				 HC_CACHE_CLEAN)

#define HC_REPL_LRU		0U
#define HC_REPL_FIFO		1U
#define HC_REPL_RANDOM		2U
#define HC_REPL_NR		3U

/*
 * hc_sb_disk.flags on a backing device.
 *  bits 0-3  cache mode (HC_MODE_*)
 *  bits 4-5  state (HC_STATE_*): none = never attached; clean = the cache
 *            holds no dirty data for it; dirty = the cache holds data newer
 *            than the backing device; stale = the backing device was written
 *            without its cache, so the cache's keys for it are invalid
 */
#define HC_BDEV_MODE_MASK	0xfULL
#define HC_BDEV_STATE_SHIFT	4
#define HC_BDEV_STATE_MASK	(0x3ULL << HC_BDEV_STATE_SHIFT)
#define HC_BDEV_FLAGS_KNOWN	(HC_BDEV_MODE_MASK | HC_BDEV_STATE_MASK)

#define HC_MODE_WRITETHROUGH	0U
#define HC_MODE_WRITEBACK	1U
#define HC_MODE_WRITEAROUND	2U
#define HC_MODE_NONE		3U
#define HC_MODE_NR		4U

#define HC_STATE_NONE		0U
#define HC_STATE_CLEAN		1U
#define HC_STATE_DIRTY		2U
#define HC_STATE_STALE		3U

/*
 * Tunables (HC_FEAT_COMPAT_TUNABLES): which fields of hc_sb_cache_disk and
 * hc_sb_backing_disk hold a setting, their ranges, and the defaults that
 * apply without one (the kernel's, and what `hcache show` compares with).
 * Unknown bits are ignored.
 */
#define HC_CACHE_TUNE_IO_ERROR_LIMIT	(1U << 0)
#define HC_CACHE_TUNE_IO_ERROR_HALFLIFE	(1U << 1)
#define HC_CACHE_TUNE_KNOWN		0x3U

#define HC_BDEV_TUNE_WRITEBACK_PERCENT	(1U << 0)
#define HC_BDEV_TUNE_SEQUENTIAL_CUTOFF	(1U << 1)
#define HC_BDEV_TUNE_ADMISSION_POLICY	(1U << 2)
#define HC_BDEV_TUNE_STOP_WHEN_FAILED	(1U << 3)
#define HC_BDEV_TUNE_KNOWN		0xfU

#define HC_IO_ERROR_LIMIT_DEFAULT	64U	/* 0: never fail the set */
#define HC_IO_ERROR_HALFLIFE_DEFAULT	60U	/* seconds; 0: no decay */
#define HC_IO_ERROR_HALFLIFE_MAX	(30U * 24 * 3600)
#define HC_WRITEBACK_PERCENT_DEFAULT	10U
#define HC_WRITEBACK_PERCENT_MAX	50U
#define HC_SEQ_CUTOFF_DEFAULT		(4ULL << 20)	/* bytes; 0: off */

/* Admission policies (admission_policy), as sysfs lists them. */
#define HC_ADMIT_FIRST_ACCESS		0U
#define HC_ADMIT_SECOND_ACCESS		1U
#define HC_ADMIT_NR			2U
#define HC_ADMIT_DEFAULT		HC_ADMIT_SECOND_ACCESS

/* stop_when_cache_set_failed */
#define HC_STOP_AUTO			0U	/* stop only a dirty device */
#define HC_STOP_ALWAYS			1U	/* stop every attached device */
#define HC_STOP_NR			2U

/* Cache-device part of the superblock (bytes 136-263). */
struct hc_sb_cache_disk {
	__le64	nbuckets;	/* buckets on the device, counted from 0 */
	__le64	first_bucket;	/* first bucket past the superblock */
	__le64	journal_start;	/* first journal bucket */
	__le32	bucket_size;	/* bytes */
	__le32	journal_buckets; /* contiguous from journal_start */
	__le32	tunables;	/* HC_CACHE_TUNE_*: which fields below are set */
	__le32	io_error_limit;
	__le32	io_error_halflife; /* seconds */
	/*
	 * With HC_FEAT_INCOMPAT_EMPTY_MARKS (else 0): the newest journal
	 * entry, as the clean stop wrote it: its ring bucket (0 is
	 * journal_start), sequence number and byte offset in the bucket.
	 */
	__le32	clean_journal_bucket;
	__le64	clean_journal_seq;
	__le32	clean_journal_offset;
	/*
	 * With HC_FEAT_INCOMPAT_DATA_CSUM (else 0): the checksum table,
	 * csum_buckets contiguous buckets from csum_start, exactly
	 * hc_csum_table_buckets() of them, and the checksum (HC_CSUM_*).
	 */
	__le32	csum_buckets;
	__le64	csum_start;
	__le32	csum_type;
	__u8	pad[52];
};

/* Backing-device part of the superblock (bytes 136-263). */
struct hc_sb_backing_disk {
	__le64	data_offset;	/* sectors; where the exported data starts */
	__le32	inval_gen;	/* bumped when written without its cache */
	__le32	tunables;	/* HC_BDEV_TUNE_*: which fields below are set */
	__le64	sequential_cutoff; /* bytes */
	__le32	writeback_percent;
	__u8	admission_policy; /* HC_ADMIT_* */
	__u8	stop_when_failed; /* HC_STOP_* */
	__u8	pad0[2];
	__u8	pad[96];
};

struct hc_sb_disk {
	__le64	magic;		/* HC_SB_MAGIC */
	__le32	csum;		/* CRC-32C of all 4096 bytes, this field as 0 */
	__le32	version;	/* HC_SB_VERSION */
	__le64	compat;
	__le64	ro_compat;
	__le64	incompat;
	__u8	dev_uuid[HC_UUID_SIZE];
	__u8	set_uuid[HC_UUID_SIZE];	/* nil on a detached backing dev */
	__u8	label[HC_LABEL_SIZE];
	__le64	seq;		/* bumped on every superblock write */
	__le64	sb_sector;	/* where this copy lives: HC_SB_SECTOR */
	__le64	flags;		/* HC_CACHE_* or HC_BDEV_* by kind */
	__le32	kind;		/* HC_KIND_* */
	__le32	block_size;	/* bytes */
	union {
		struct hc_sb_cache_disk		cache;
		struct hc_sb_backing_disk	backing;
	};
	__u8	reserved[HC_SB_SIZE - 264];
};

static_assert(sizeof(struct hc_sb_cache_disk) == 128, "cache sb part");
static_assert(sizeof(struct hc_sb_backing_disk) == 128, "backing sb part");
static_assert(sizeof(struct hc_sb_disk) == HC_SB_SIZE, "superblock size");
static_assert(offsetof(struct hc_sb_disk, csum) == 8, "sb csum");
static_assert(offsetof(struct hc_sb_disk, version) == 12, "sb version");
static_assert(offsetof(struct hc_sb_disk, compat) == 16, "sb compat");
static_assert(offsetof(struct hc_sb_disk, incompat) == 32, "sb incompat");
static_assert(offsetof(struct hc_sb_disk, dev_uuid) == 40, "sb dev_uuid");
static_assert(offsetof(struct hc_sb_disk, set_uuid) == 56, "sb set_uuid");
static_assert(offsetof(struct hc_sb_disk, label) == 72, "sb label");
static_assert(offsetof(struct hc_sb_disk, seq) == 104, "sb seq");
static_assert(offsetof(struct hc_sb_disk, sb_sector) == 112, "sb sb_sector");
static_assert(offsetof(struct hc_sb_disk, flags) == 120, "sb flags");
static_assert(offsetof(struct hc_sb_disk, kind) == 128, "sb kind");
static_assert(offsetof(struct hc_sb_disk, block_size) == 132, "sb block");
static_assert(offsetof(struct hc_sb_disk, cache) == 136, "sb kind part");
static_assert(offsetof(struct hc_sb_disk, cache.bucket_size) == 160,
	      "sb bucket_size");
static_assert(offsetof(struct hc_sb_disk, cache.tunables) == 168,
	      "sb cache tunables");
static_assert(offsetof(struct hc_sb_disk, cache.clean_journal_bucket) == 180,
	      "sb clean_journal_bucket");
static_assert(offsetof(struct hc_sb_disk, cache.clean_journal_seq) == 184,
	      "sb clean_journal_seq");
static_assert(offsetof(struct hc_sb_disk, cache.clean_journal_offset) == 192,
	      "sb clean_journal_offset");
static_assert(offsetof(struct hc_sb_disk, cache.csum_buckets) == 196,
	      "sb csum_buckets");
static_assert(offsetof(struct hc_sb_disk, cache.csum_start) == 200,
	      "sb csum_start");
static_assert(offsetof(struct hc_sb_disk, cache.csum_type) == 208,
	      "sb csum_type");
static_assert(offsetof(struct hc_sb_disk, backing.tunables) == 148,
	      "sb backing tunables");
static_assert(offsetof(struct hc_sb_disk, backing.sequential_cutoff) == 152,
	      "sb backing sequential_cutoff");
static_assert(offsetof(struct hc_sb_disk, backing.inval_gen) == 144,
	      "sb inval_gen");
static_assert(offsetof(struct hc_sb_disk, reserved) == 264, "sb reserved");

/*
 * ---- Cache device inner structures -----------------------------------------
 *
 * Final as of the retirement of HC_FEAT_INCOMPAT_RETIRED_DRAFT: a change to
 * anything below needs a new feature bit. Validation rules are in the
 * decoders (bkey.c, bset.c, jset.c, pset.c, bdev_table.c) and in
 * Documentation/hcache/ondisk-format.rst.
 *
 * Layout of a cache device, in buckets of bucket_size bytes counted from
 * sector 0: buckets [0, first_bucket) hold the superblock and nothing else;
 * [journal_start, journal_start + journal_buckets) are the journal ring;
 * with HC_FEAT_INCOMPAT_DATA_CSUM, [csum_start, csum_start + csum_buckets)
 * are the checksum table; every other bucket is allocated on demand for data, btree nodes and the
 * gen/prio and backing-device tables, whose current locations are recorded
 * in the newest journal entry.
 */

/* Structure magics, each xor-ed with the set magic. */
#define HC_JSET_MAGIC		0x245b1c3a9e8d7f01ULL
#define HC_PSET_MAGIC		0x7c19e2d40b6a3f02ULL
#define HC_BSET_MAGIC		0x90f3a2b5c7d1e403ULL
#define HC_BTREE_MAGIC		0x3e6f8a1d2c5b9704ULL
#define HC_BDEV_TABLE_MAGIC	0xa7d2c4e6f8b01305ULL
#define HC_CSUM_MAGIC		0x5d8e1f7a3b9c2606ULL

/*
 * Pointer to cache data: one __le64.
 *  bits  0-47  offset on the cache device, sectors (128 PiB addressable)
 *  bits 48-55  cache device index in the set (0: one cache device per set)
 *  bits 56-63  gen of the bucket when the data was written; the pointer is
 *              valid only while the bucket's gen still equals it
 */
#define HC_PTR_OFFSET_BITS	48
#define HC_PTR_OFFSET_MAX	((1ULL << HC_PTR_OFFSET_BITS) - 1)
#define HC_PTR_DEV_SHIFT	48
#define HC_PTR_GEN_SHIFT	56

struct hc_ptr_disk {
	__le64	v;
};

/*
 * Key: an extent of a backing device, [end - size, end) in its sectors,
 * followed by nr_ptrs pointers to where it is cached. Keys are a whole
 * number of u64s long: 24 + 8 * nr_ptrs bytes.
 */
#define HC_KEY_DIRTY		(1U << 0)	/* newer than the backing dev */
#define HC_KEY_RETIRED_CSUM	(1U << 1)	/* never set; see ro_compat 0 */

struct hc_key_disk {
	__le64	end;		/* backing-device sector after the extent */
	__le32	bdev_id;	/* hc_bdev_entry_disk.id */
	__le32	size;		/* sectors */
	__u8	nr_ptrs;
	__u8	flags;		/* HC_KEY_* */
	__le16	pad;
	__le32	pad2;		/* 0; was a per-extent checksum, never used */
	struct hc_ptr_disk ptrs[];
};

static_assert(sizeof(struct hc_key_disk) == 24, "key size");
static_assert(offsetof(struct hc_key_disk, nr_ptrs) == 16, "key nr_ptrs");
static_assert(offsetof(struct hc_key_disk, pad2) == 20, "key pad2");

/*
 * Gen/prio records, one per bucket, in a chain of prio sets: each prio set
 * fills one bucket, describes buckets [first, first + nr) and names the next
 * bucket of the chain (0 ends it). The newest journal entry names the head.
 */
#define HC_BUCKET_DISK_EMPTY	(1U << 0)	/* see below */
#define HC_BUCKET_DISK_FLAGS	HC_BUCKET_DISK_EMPTY

/*
 * HC_BUCKET_DISK_EMPTY: at the clean stop that wrote the chain, nothing
 * live was in the bucket and no pointer, live or stale, pointed into it.
 * Written only by such a stop, and meaningful only while the superblock
 * has HC_FEAT_INCOMPAT_EMPTY_MARKS; 0 in every other chain.
 */
struct hc_bucket_disk {
	__le16	prio;		/* replacement-policy priority */
	__u8	gen;
	__u8	flags;		/* HC_BUCKET_DISK_*; 0 before EMPTY_MARKS */
};

struct hc_pset_disk {
	__le64	magic;		/* set magic ^ HC_PSET_MAGIC */
	__le32	csum;		/* whole bucket, this field as 0 */
	__le32	nr;
	__le64	seq;		/* journal seq when written */
	__le64	first;		/* bucket number of d[0] */
	__le64	next_bucket;
	__le64	pad;
	struct hc_bucket_disk d[];
};

static_assert(sizeof(struct hc_bucket_disk) == 4, "bucket record");
static_assert(sizeof(struct hc_pset_disk) == 48, "prio set header");
static_assert(offsetof(struct hc_pset_disk, next_bucket) == 32, "pset next");

/*
 * Journal entry: a header, then u64s worth of keys to replay into the btree.
 * Entries are written block-aligned in the journal ring; an entry's roots
 * describe the whole cache as of that entry.
 */
struct hc_jset_disk {
	__le64	magic;		/* set magic ^ HC_JSET_MAGIC */
	__le32	csum;		/* header and keys, this field as 0 */
	__le32	u64s;		/* length of keys[] in u64s */
	__le64	seq;		/* this entry */
	__le64	last_seq;	/* oldest entry still needed for replay */
	struct hc_ptr_disk btree_root;	/* the root node */
	__le64	prio_bucket;	/* head of the gen/prio chain */
	__le64	bdev_table_bucket;
	__u8	btree_level;	/* level of the root node */
	__u8	pad[7];
	__le64	keys[];
};

static_assert(sizeof(struct hc_jset_disk) == 64, "journal entry header");
static_assert(offsetof(struct hc_jset_disk, btree_root) == 32, "jset root");

/*
 * Btree node: a node header in the first block, then sorted sets appended
 * one after another (log-structured), each starting on a block boundary.
 * A sorted set whose node_seq differs from the node's is left over from an
 * earlier use of the bucket and ends the node.
 */
struct hc_btree_node_disk {
	__le64	magic;		/* set magic ^ HC_BTREE_MAGIC */
	__le32	csum;		/* this header, this field as 0 */
	__u8	level;		/* 0: leaf */
	__u8	pad0[3];
	__le64	node_seq;	/* random, per write of the node */
	__le64	min_end;	/* keys in the node: (min_bdev, min_end] ... */
	__le64	max_end;	/* ... up to (max_bdev, max_end] */
	__le32	min_bdev;
	__le32	max_bdev;
	__u8	pad[16];
};

struct hc_bset_disk {
	__le64	magic;		/* set magic ^ HC_BSET_MAGIC */
	__le32	csum;		/* header and keys, this field as 0 */
	__le32	u64s;		/* length of keys[] in u64s */
	__le64	node_seq;	/* the node's */
	__le64	journal_seq;	/* newest journal entry whose keys are here */
	__le64	keys[];
};

static_assert(sizeof(struct hc_btree_node_disk) == 64, "btree node header");
static_assert(sizeof(struct hc_bset_disk) == 32, "sorted set header");
static_assert(offsetof(struct hc_btree_node_disk, node_seq) == 16, "node seq");
static_assert(offsetof(struct hc_btree_node_disk, min_bdev) == 40,
	      "node min_bdev");
static_assert(offsetof(struct hc_bset_disk, journal_seq) == 24, "bset jseq");

/*
 * Backing devices attached to the cache set. Ids are handed out from
 * next_id and never reused. A backing device whose superblock inval_gen
 * differs from its entry's ran without this cache: on attach it gets a new
 * id, so keys under the old id are dead and garbage collected, never
 * returned.
 */
#define HC_BDEV_ENTRY_DETACHED	(1U << 0)

struct hc_bdev_entry_disk {
	__u8	uuid[HC_UUID_SIZE];	/* backing dev_uuid */
	__le32	id;
	__le32	inval_gen;
	__le32	flags;		/* HC_BDEV_ENTRY_* */
	__le32	pad;
	__le64	sectors;	/* backing size when last attached */
	__le64	last_attach;	/* seconds since the epoch */
};

struct hc_bdev_table_disk {
	__le64	magic;		/* set magic ^ HC_BDEV_TABLE_MAGIC */
	__le32	csum;		/* header and entries, this field as 0 */
	__le32	nr;
	__le64	seq;
	__le32	next_id;
	__le32	pad;
	struct hc_bdev_entry_disk d[];
};

static_assert(sizeof(struct hc_bdev_entry_disk) == 48, "bdev entry");
static_assert(offsetof(struct hc_bdev_entry_disk, id) == 16, "bdev entry id");
static_assert(offsetof(struct hc_bdev_entry_disk, sectors) == 32,
	      "bdev entry sectors");
static_assert(sizeof(struct hc_bdev_table_disk) == 32, "bdev table header");
static_assert(offsetof(struct hc_bdev_table_disk, next_id) == 24,
	      "bdev table next_id");

/*
 * Checksum table (HC_FEAT_INCOMPAT_DATA_CSUM): the CRC-32C (standard, as
 * hc_csum()) of every chunk of HC_CSUM_CHUNK bytes of the cache device,
 * chunk n being bytes [n * HC_CSUM_CHUNK, (n + 1) * HC_CSUM_CHUNK), in
 * blocks of HC_CSUM_PER_BLOCK chunks: block b holds chunks from
 * b * HC_CSUM_PER_BLOCK. Each block has two slots on disk, both
 * HC_CSUM_BLOCK_BYTES long, at byte (2b + s) * HC_CSUM_BLOCK_BYTES from
 * csum_start's first byte: a block is rewritten into the slot that does
 * not hold its newest valid copy, so that a write torn by a power cut
 * leaves the older copy whole. The copy with the higher seq is the
 * block; seq is even in slot 0 and odd in slot 1. Data is written in
 * whole chunks, zero-filled past its end, so a chunk's checksum covers
 * one write's bytes. A chunk's entry is meaningful only while a live key
 * points into it; no key may be durable before its data's entries are
 * (entries past the device's last chunk are 0).
 */
#define HC_CSUM_NONE		0U
#define HC_CSUM_CRC32C		1U

#define HC_CSUM_CHUNK		4096U
#define HC_CSUM_CHUNK_SECTORS	(HC_CSUM_CHUNK >> 9)
#define HC_CSUM_BLOCK_BYTES	4096U
#define HC_CSUM_PER_BLOCK	1016U

struct hc_csum_block_disk {
	__le64	magic;		/* set magic ^ HC_CSUM_MAGIC */
	__le32	csum;		/* whole block, this field as 0 */
	__le32	nr;		/* HC_CSUM_PER_BLOCK */
	__le64	seq;		/* copies written of this block, less one */
	__le64	block;		/* its number, b */
	__le32	crc[HC_CSUM_PER_BLOCK];
};

static_assert(sizeof(struct hc_csum_block_disk) == HC_CSUM_BLOCK_BYTES,
	      "checksum block");
static_assert(offsetof(struct hc_csum_block_disk, crc) == 32,
	      "checksum block crc");

#endif /* _HCACHE_ONDISK_H */
