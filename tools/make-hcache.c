// SPDX-License-Identifier: GPL-2.0
/*
 * make-hcache: format cache and backing devices for hcache.
 *
 * Two passes: first every device is opened exclusively and checked (size,
 * zoned, existing signatures, topology) and every superblock is built and
 * validated; only when all of them pass is anything written. So a refusal
 * on one device leaves all of them untouched.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <blkid/blkid.h>
#include <uuid/uuid.h>

#include "csum_table.h"
#include "dev.h"
#include "util.h"

/* Exit codes; keep man/make-hcache.8 in step. */
enum {
	EX_OK		= 0,
	EX_USAGE	= 1,	/* bad option or option value */
	EX_IO		= 2,	/* cannot open, read or write a device */
	EX_SIGNATURE	= 3,	/* existing signature, not overridden */
	EX_BUSY		= 4,	/* device mounted, registered or in use */
	EX_TOO_SMALL	= 5,
	EX_UNSUPPORTED	= 6,	/* zoned, or not a block device or file */
	EX_DONE		= -1,	/* internal: --help or --version shown */
};

#define HC_MAX_DEVS	64

/*
 * What a cache device gets without --checksum: HC_CSUM_NONE until the
 * module keeps the checksum table (issue #32), then HC_CSUM_CRC32C.
 */
#define HC_CSUM_DEFAULT	HC_CSUM_NONE

/* Checksum table blocks per write: both slots of each, 1 MiB in all. */
#define HC_CSUM_WRITE_BLOCKS	128U

struct hc_opts {
	u32	bucket_size;
	u32	block_size;		/* 0: largest logical block size */
	u64	data_offset;		/* sectors; 0: default */
	bool	writeback;
	bool	discard;
	u32	replacement;
	u32	csum_type;		/* HC_CSUM_* */
	bool	csum_given;
	const char *label;
	u8	set_uuid[HC_UUID_SIZE];
	bool	set_uuid_given;
	bool	wipe_hcache;
	bool	discard_dirty;
	bool	force;
};

struct hc_target {
	const char	*path;
	u32		kind;		/* HC_KIND_* */
	int		fd;
	struct hc_dev_info info;
	struct hc_sb	sb;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [options] -C DEV | -B DEV... | -C DEV -B DEV...\n"
"Format a cache device and/or backing devices for hcache. Devices formatted\n"
"in one call share a cache set uuid and attach by themselves once registered.\n"
"\n"
"  -C, --cache DEV          format DEV as the cache device (one per cache set)\n"
"  -B, --bdev DEV...        format DEV (and following arguments) as backing\n"
"  -b, --bucket SIZE        bucket size, power of two, 8k..128M (default 512k)\n"
"  -w, --block SIZE         block size, 512..4096 (default: the largest\n"
"                           logical block size of the devices)\n"
"  -o, --data-offset SECT   backing data offset in 512-byte sectors, at least\n"
"                           16 (default 1 MiB, rounded to the optimal I/O size)\n"
"      --writeback          backing devices start in writeback mode\n"
"      --discard            discard cache buckets before reuse\n"
"      --cache-replacement-policy lru|fifo|random   (default lru)\n"
"      --checksum TYPE      crc32c or none: a checksum of every 4 KiB of the\n"
"                           cache device, kept in a table on it (default %s)\n"
"  -L, --label LABEL        label of up to 31 bytes\n"
"  -u, --cset-uuid UUID     cache set uuid (default: random)\n"
"      --wipe-hcache        overwrite an existing hcache or bcache superblock\n"
"  -f, --force              overwrite any existing signature\n"
"      --discard-dirty-data with --wipe-hcache or --force: overwrite a\n"
"                           backing device whose superblock says dirty,\n"
"                           losing the data its cache holds for it\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"Exit status: 0 ok, 1 usage, 2 I/O error, 3 existing signature refused,\n"
"4 device busy, 5 device too small, 6 unsupported device.\n",
		hc_prog, hc_csum_name(HC_CSUM_DEFAULT));
}

static int parse_pow2_size(const char *arg, const char *what, u64 min, u64 max,
			   u32 *out)
{
	u64 v;

	if (hc_parse_size(arg, &v)) {
		hc_warn("bad %s '%s': expected a number with optional k/M/G suffix",
			what, arg);
		return -1;
	}
	if (!v || (v & (v - 1))) {
		hc_warn("bad %s '%s': not a power of two", what, arg);
		return -1;
	}
	if (v < min || v > max) {
		hc_warn("bad %s '%s': must be between %llu and %llu bytes", what,
			arg, (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * Open @t exclusively: O_EXCL makes the kernel refuse a block device that is
 * mounted or held by a driver; flock() keeps two make-hcache runs apart on
 * image files, where O_EXCL means nothing.
 */
static int open_target(struct hc_target *t)
{
	int err;

	t->fd = open(t->path, O_RDWR | O_EXCL | O_CLOEXEC);
	if (t->fd < 0) {
		if (errno == EBUSY) {
			hc_warn("%s: device is busy (mounted, registered or in use)",
				t->path);
			return EX_BUSY;
		}
		if (errno == EISDIR) {
			hc_warn("%s: not a block device or regular file (a directory)",
				t->path);
			return EX_UNSUPPORTED;
		}
		hc_warn("%s: cannot open: %s", t->path, strerror(errno));
		return EX_IO;
	}
	if (flock(t->fd, LOCK_EX | LOCK_NB)) {
		hc_warn("%s: device is busy (locked by another process, or given twice)",
			t->path);
		return EX_BUSY;
	}
	err = hc_dev_info(t->fd, t->path, &t->info);
	if (err == -ENOTBLK) {
		hc_warn("%s: not a block device or regular file", t->path);
		return EX_UNSUPPORTED;
	}
	if (err) {
		hc_warn("%s: cannot get device size: %s", t->path,
			strerror(-err));
		return EX_IO;
	}
	if (t->info.zoned) {
		hc_warn("%s: zoned block devices are not supported", t->path);
		return EX_UNSUPPORTED;
	}
	return EX_OK;
}

/*
 * A backing device whose superblock says dirty has data in its cache
 * newer than what it holds itself: overwriting the superblock loses that
 * data, so it takes --discard-dirty-data as well.
 */
static int hc_dirty_refuse(const char *path, const struct hc_sb_disk *d,
			   bool discard_dirty)
{
	const char *err;
	char uuid[37];
	struct hc_sb sb;

	hc_sb_decode(d, sizeof(*d), &sb, &err);
	if (err || sb.kind != HC_KIND_BACKING ||
	    sb.backing.state != HC_STATE_DIRTY)
		return EX_OK;
	hc_uuid_str(sb.set_uuid, uuid);
	if (discard_dirty) {
		hc_warn("%s: discarding the dirty data cache set %s holds for it",
			path, uuid);
		return EX_OK;
	}
	hc_warn("%s: its superblock says dirty: cache set %s holds data newer than the device; write it back first (hcache flush --wait), or add --discard-dirty-data to lose it",
		path, uuid);
	return EX_SIGNATURE;
}

/*
 * Look for anything we would destroy: our own superblock, then whatever
 * libblkid knows (filesystems, RAID members, partition tables, bcache).
 * Also records the optimal I/O size from libblkid's topology.
 */
static int check_signatures(struct hc_target *t, const struct hc_opts *o)
{
	const char *type = NULL, *usage = NULL, *what;
	struct hc_sb_disk d;
	blkid_topology topo;
	blkid_probe pr;
	int ret = EX_OK, rc;

	if (!hc_read_sb(t->fd, &d) && le64_to_cpu(d.magic) == HC_SB_MAGIC) {
		if (!o->wipe_hcache && !o->force) {
			hc_warn("%s: already holds an hcache superblock; use --wipe-hcache to overwrite it",
				t->path);
			return EX_SIGNATURE;
		}
		ret = hc_dirty_refuse(t->path, &d, o->discard_dirty);
		if (ret)
			return ret;
	}

	pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, t->fd, 0, 0)) {
		hc_warn("%s: cannot probe with libblkid", t->path);
		ret = EX_IO;
		goto out;
	}
	topo = blkid_probe_get_topology(pr);
	if (topo)
		t->info.optimal_io = blkid_topology_get_optimal_io_size(topo);

	blkid_probe_enable_superblocks(pr, 1);
	/* A signature with a bad checksum is still somebody's data. */
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					  BLKID_SUBLKS_USAGE |
					  BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 1)
		goto out;
	if (rc == -2) {
		if (!o->force) {
			hc_warn("%s: holds several conflicting signatures; use --force to overwrite them",
				t->path);
			ret = EX_SIGNATURE;
		}
		goto out;
	}
	if (rc < 0) {
		hc_warn("%s: libblkid probe failed", t->path);
		ret = EX_IO;
		goto out;
	}

	if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
		blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
		if (usage && !strcmp(usage, "raid"))
			what = "RAID member";
		else if (usage && !strcmp(usage, "crypto"))
			what = "encrypted volume";
		else if (usage && !strcmp(usage, "filesystem"))
			what = "filesystem";
		else
			what = "signature";
	} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
		what = "partition table";
	} else {
		goto out;
	}

	if (!strcmp(type, "bcache")) {
		if (!o->wipe_hcache && !o->force) {
			hc_warn("%s: already holds a bcache superblock; use --wipe-hcache to overwrite it",
				t->path);
			ret = EX_SIGNATURE;
		}
	} else if (!o->force) {
		hc_warn("%s: contains an existing %s %s; use --force to overwrite it",
			t->path, type, what);
		ret = EX_SIGNATURE;
	}
out:
	if (pr)
		blkid_free_probe(pr);
	return ret;
}

static void fill_common(struct hc_target *t, const struct hc_opts *o,
			const u8 *set_uuid, u32 block_size)
{
	struct hc_sb *sb = &t->sb;

	memset(sb, 0, sizeof(*sb));
	sb->version = HC_SB_VERSION;
	uuid_generate(sb->dev_uuid);
	memcpy(sb->set_uuid, set_uuid, HC_UUID_SIZE);
	if (o->label)
		strncpy(sb->label, o->label, HC_LABEL_SIZE - 1);
	sb->seq = 1;
	sb->kind = t->kind;
	sb->block_size = block_size;
}

/*
 * The smallest valid cache: hc_cache_min_buckets(), and with a checksum
 * table the smallest n that still leaves HC_MIN_BUCKETS for data beside
 * the superblock, the smallest journal and hc_csum_table_buckets(n). The
 * table grows by about 0.2% of n, so a few steps at most.
 */
static u64 cache_min_buckets(u32 bucket_size, bool csum)
{
	u64 n = hc_cache_min_buckets(bucket_size);
	u64 fixed = hc_cache_first_bucket(bucket_size) + HC_JOURNAL_MIN;

	while (csum && n - fixed < HC_MIN_BUCKETS +
				   hc_csum_table_buckets(n, bucket_size))
		n++;
	return n;
}

static int build_cache(struct hc_target *t, const struct hc_opts *o)
{
	struct hc_sb_cache *c = &t->sb.cache;
	bool csum = o->csum_type != HC_CSUM_NONE;
	u64 nbuckets, min, max, journal;
	char have[32], need[32], bucket[32], table[64] = "";

	nbuckets = t->info.size / o->bucket_size;
	min = cache_min_buckets(o->bucket_size, csum);
	if (nbuckets < min) {
		hc_human_size(t->info.size, have, sizeof(have));
		hc_human_size(min * o->bucket_size, need, sizeof(need));
		hc_human_size(o->bucket_size, bucket, sizeof(bucket));
		if (csum)
			snprintf(table, sizeof(table),
				 ", %llu for the checksum table",
				 (unsigned long long)
				 hc_csum_table_buckets(min, o->bucket_size));
		hc_warn("%s: too small for a cache device: %llu bytes (%s); the minimum size with %s buckets is %llu bytes (%s): %llu buckets, %llu for the superblock, %u for the journal%s and %u for data",
			t->path, (unsigned long long)t->info.size, have,
			bucket, (unsigned long long)(min * o->bucket_size),
			need, (unsigned long long)min,
			(unsigned long long)hc_cache_first_bucket(o->bucket_size),
			HC_JOURNAL_MIN, table, HC_MIN_BUCKETS);
		return EX_TOO_SMALL;
	}
	/* Pointers address 2^48 sectors; ignore any space past that. */
	max = (HC_PTR_OFFSET_MAX + 1) / (o->bucket_size >> HC_SECTOR_SHIFT);
	if (nbuckets > max)
		nbuckets = max;

	/* About 1/128 of the cache for the journal, within bounds. */
	journal = nbuckets / 128;
	if (journal < HC_JOURNAL_MIN)
		journal = HC_JOURNAL_MIN;
	if (journal > HC_JOURNAL_MAX)
		journal = HC_JOURNAL_MAX;

	c->nbuckets = nbuckets;
	c->bucket_size = o->bucket_size;
	c->first_bucket = hc_cache_first_bucket(o->bucket_size);
	c->journal_start = c->first_bucket;
	c->journal_buckets = journal;
	c->replacement = o->replacement;
	c->discard = o->discard;
	/* Nothing to replay on a fresh cache. */
	c->clean = true;
	/*
	 * The checksum table right after the journal. A table too large
	 * for csum_buckets (from about 16 PiB of 8 KiB buckets) is caught by
	 * hc_sb_decode() as a size mismatch.
	 */
	if (csum) {
		/* write_csum_table() maps a checksum per chunk. */
		if (hc_csum_table_chunks(nbuckets, o->bucket_size) >
		    SIZE_MAX / sizeof(u32)) {
			hc_warn("%s: too large for a checksum table on this system (%zu-bit)",
				t->path, sizeof(size_t) * 8);
			return EX_UNSUPPORTED;
		}
		t->sb.incompat |= HC_FEAT_INCOMPAT_DATA_CSUM;
		c->csum_type = o->csum_type;
		c->csum_start = c->journal_start + c->journal_buckets;
		c->csum_buckets = hc_csum_table_buckets(nbuckets,
							o->bucket_size);
	}
	return EX_OK;
}

static int build_backing(struct hc_target *t, const struct hc_opts *o,
			 u32 block_size)
{
	struct hc_sb_backing *b = &t->sb.backing;
	u64 offset = o->data_offset;
	u64 opt = t->info.optimal_io;

	if (!offset) {
		/* 1 MiB, or the next multiple of the optimal I/O size. */
		u64 bytes = (u64)HC_DATA_OFFSET_DEFAULT << HC_SECTOR_SHIFT;

		if (opt && !(opt % block_size))
			bytes = (bytes + opt - 1) / opt * opt;
		offset = bytes >> HC_SECTOR_SHIFT;
	}
	if (offset % (block_size >> HC_SECTOR_SHIFT)) {
		hc_warn("%s: data offset %llu sectors is not a multiple of the block size (%u bytes)",
			t->path, (unsigned long long)offset, block_size);
		return EX_USAGE;
	}
	/* Compared in sectors: in bytes, a large offset would wrap around. */
	if (t->info.size < block_size ||
	    offset > (t->info.size - block_size) >> HC_SECTOR_SHIFT) {
		if (offset > (UINT64_MAX - block_size) >> HC_SECTOR_SHIFT)
			hc_warn("%s: data offset %llu sectors lies past the end of any device",
				t->path, (unsigned long long)offset);
		else
			hc_warn("%s: too small for a backing device: %llu bytes; the minimum is %llu bytes (data offset of %llu sectors and one block)",
				t->path, (unsigned long long)t->info.size,
				(unsigned long long)((offset << HC_SECTOR_SHIFT) +
						     block_size),
				(unsigned long long)offset);
		return EX_TOO_SMALL;
	}
	b->data_offset = offset;
	b->cache_mode = o->writeback ? HC_MODE_WRITEBACK : HC_MODE_WRITETHROUGH;
	b->state = HC_STATE_NONE;
	return EX_OK;
}

static int write_zeroes(int fd, u64 offset, u64 len)
{
	static const char zero[1 << 16];

	while (len) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);
		ssize_t w = pwrite(fd, zero, n, offset);

		if (w <= 0)
			return -1;
		offset += w;
		len -= w;
	}
	return 0;
}

/*
 * Zero a possibly large range (the journal can be gigabytes with big
 * buckets): let the device or filesystem do it when it can, write zeroes
 * when it cannot.
 */
static int zero_range(const struct hc_target *t, u64 offset, u64 len)
{
	if (t->info.is_blockdev) {
		u64 range[2] = { offset, len };

		if (!ioctl(t->fd, BLKZEROOUT, range))
			return 0;
	} else if (!fallocate(t->fd, FALLOC_FL_PUNCH_HOLE |
			      FALLOC_FL_KEEP_SIZE, offset, len)) {
		return 0;
	}
	return write_zeroes(t->fd, offset, len);
}

/* pwrite() all of @len bytes; 0, or -1 with errno set. */
static int write_all(int fd, const void *buf, size_t len, u64 offset)
{
	const char *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, offset);

		if (w < 0)
			return -1;
		if (!w) {
			errno = EIO;
			return -1;
		}
		p += w;
		offset += w;
		len -= w;
	}
	return 0;
}

/*
 * The checksum table of a fresh cache: slot 0 of every block holds a
 * valid copy of seq 0 whose checksums are all 0 (no chunk holds data
 * yet); slot 1 of every block and the rest of the table's last bucket are
 * zero, which reads as never written. Both slots of HC_CSUM_WRITE_BLOCKS
 * blocks go in one write: one pwrite() per 4 KiB slot takes a 1 TiB cache
 * 264,000 system calls and as many scattered 4 KiB I/Os.
 */
static int write_csum_table(const struct hc_target *t)
{
	const struct hc_sb_cache *c = &t->sb.cache;
	u64 chunks = hc_csum_table_chunks(c->nbuckets, c->bucket_size);
	u64 blocks = hc_csum_table_blocks(chunks);
	u64 start = c->csum_start * c->bucket_size;
	u64 set_magic = hc_set_magic(t->sb.set_uuid);
	size_t zero_len = chunks * sizeof(u32);
	size_t batch = 2 * HC_CSUM_WRITE_BLOCKS * HC_CSUM_BLOCK_BYTES;
	size_t page = sysconf(_SC_PAGESIZE);
	struct hc_csum_block_disk *d;
	const u32 *zero;
	u8 *buf;
	u64 b, i, n, lo, hi, end;
	int ret = -1;

	/*
	 * hc_csum_block_encode() takes the checksums of every chunk of the
	 * device, here all 0: a read-only anonymous mapping, whose pages
	 * each batch drops again once read (not every kernel maps the
	 * shared zero page there), so that memory stays at a batch's
	 * worth, not 1 MiB per GiB of cache.
	 */
	zero = mmap(NULL, zero_len, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (zero == MAP_FAILED)
		return -1;
	/* Slot 1 of each block stays as calloc() left it: zero. */
	buf = calloc(1, batch);
	if (!buf)
		goto out_unmap;
	for (b = 0; b < blocks; b += n) {
		n = blocks - b < HC_CSUM_WRITE_BLOCKS ? blocks - b :
							HC_CSUM_WRITE_BLOCKS;
		for (i = 0; i < n; i++) {
			d = (struct hc_csum_block_disk *)
			    (buf + hc_csum_slot_byte(i, 0));
			hc_csum_block_encode(set_magic, b + i, 0, zero, chunks,
					     d);
		}
		lo = b * HC_CSUM_PER_BLOCK * sizeof(u32) / page * page;
		hi = (b + n) * HC_CSUM_PER_BLOCK * sizeof(u32);
		madvise((char *)zero + lo, (hi < zero_len ? hi : zero_len) - lo,
			MADV_DONTNEED);
		if (write_all(t->fd, buf, hc_csum_slot_byte(n, 0),
			      start + hc_csum_slot_byte(b, 0)))
			goto out_free;
	}
	end = (u64)c->csum_buckets * c->bucket_size;
	if (end > hc_csum_slot_byte(blocks, 0) &&
	    zero_range(t, start + hc_csum_slot_byte(blocks, 0),
		       end - hc_csum_slot_byte(blocks, 0)))
		goto out_free;
	ret = 0;
out_free:
	free(buf);
out_unmap:
	munmap((void *)zero, zero_len);
	return ret;
}

/* Erase every signature libblkid finds, e.g. a GPT backup at the end. */
static int wipe_signatures(struct hc_target *t)
{
	blkid_probe pr = blkid_new_probe();
	int ret = 0;

	if (!pr || blkid_probe_set_device(pr, t->fd, 0, 0)) {
		ret = -1;
		goto out;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC |
					  BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	while (blkid_do_probe(pr) == 0) {
		if (blkid_do_wipe(pr, 0)) {
			ret = -1;
			break;
		}
	}
out:
	if (pr)
		blkid_free_probe(pr);
	return ret;
}

static int write_target(struct hc_target *t)
{
	struct hc_sb_disk d;
	const struct hc_sb_cache *c = &t->sb.cache;

	if (wipe_signatures(t)) {
		hc_warn("%s: cannot wipe old signatures", t->path);
		return EX_IO;
	}
	/* Everything before the end of the superblock, then the journal. */
	if (write_zeroes(t->fd, 0, HC_SB_END))
		goto io_err;
	/*
	 * Stale journal entries of an earlier format with the same set uuid
	 * (--cset-uuid) would otherwise pass for current ones.
	 */
	if (t->kind == HC_KIND_CACHE &&
	    zero_range(t, c->journal_start * c->bucket_size,
		       (u64)c->journal_buckets * c->bucket_size))
		goto io_err;
	if (t->kind == HC_KIND_CACHE &&
	    (t->sb.incompat & HC_FEAT_INCOMPAT_DATA_CSUM) &&
	    write_csum_table(t))
		goto io_err;
	/*
	 * What the superblock points at is on the device before the
	 * superblock is: a power cut in between leaves no superblock, not
	 * one that names a stale journal or a half-written table.
	 */
	if (fsync(t->fd))
		goto io_err;

	hc_sb_encode(&t->sb, &d);
	if (pwrite(t->fd, &d, sizeof(d), HC_SB_OFFSET) != (ssize_t)sizeof(d))
		goto io_err;
	if (fsync(t->fd))
		goto io_err;
	return EX_OK;
io_err:
	hc_warn("%s: write failed: %s", t->path, strerror(errno));
	return EX_IO;
}

static void print_target(const struct hc_target *t)
{
	const struct hc_sb *sb = &t->sb;
	char dev[37], set[37];

	hc_uuid_str(sb->dev_uuid, dev);
	hc_uuid_str(sb->set_uuid, set);
	printf("%s: %s device\n", t->path, hc_kind_name(sb->kind));
	printf("  device uuid:     %s\n", dev);
	printf("  cache set uuid:  %s\n", set);
	printf("  block size:      %u\n", sb->block_size);
	if (sb->kind == HC_KIND_CACHE) {
		printf("  bucket size:     %u\n", sb->cache.bucket_size);
		printf("  buckets:         %llu\n",
		       (unsigned long long)sb->cache.nbuckets);
		printf("  journal buckets: %u\n", sb->cache.journal_buckets);
		if (sb->incompat & HC_FEAT_INCOMPAT_DATA_CSUM)
			printf("  checksum:        %s, %u-bucket table at bucket %llu\n",
			       hc_csum_name(sb->cache.csum_type),
			       sb->cache.csum_buckets,
			       (unsigned long long)sb->cache.csum_start);
		else
			printf("  checksum:        none\n");
	} else {
		printf("  data offset:     %llu sectors\n",
		       (unsigned long long)sb->backing.data_offset);
		printf("  cache mode:      %s\n",
		       hc_mode_name(sb->backing.cache_mode));
	}
}

enum {
	OPT_WRITEBACK = 256,
	OPT_DISCARD,
	OPT_REPL,
	OPT_WIPE_HCACHE,
	OPT_DISCARD_DIRTY,
	OPT_CSUM,
};

static const struct option long_opts[] = {
	{ "cache",			required_argument, NULL, 'C' },
	{ "bdev",			required_argument, NULL, 'B' },
	{ "bucket",			required_argument, NULL, 'b' },
	{ "block",			required_argument, NULL, 'w' },
	{ "data-offset",		required_argument, NULL, 'o' },
	{ "writeback",			no_argument,	   NULL, OPT_WRITEBACK },
	{ "discard",			no_argument,	   NULL, OPT_DISCARD },
	{ "cache-replacement-policy",	required_argument, NULL, OPT_REPL },
	{ "checksum",			required_argument, NULL, OPT_CSUM },
	{ "label",			required_argument, NULL, 'L' },
	{ "cset-uuid",			required_argument, NULL, 'u' },
	{ "wipe-hcache",		no_argument,	   NULL, OPT_WIPE_HCACHE },
	{ "discard-dirty-data",		no_argument,	   NULL, OPT_DISCARD_DIRTY },
	{ "force",			no_argument,	   NULL, 'f' },
	{ "help",			no_argument,	   NULL, 'h' },
	{ "version",			no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/*
 * Parse the command line into @o and @targets. Returns EX_OK to go on,
 * EX_DONE after --help or --version, or the exit code of an error.
 */
static int parse_args(int argc, char **argv, struct hc_opts *o,
		      struct hc_target *targets, unsigned int *nr,
		      unsigned int *ncache)
{
	u32 last_kind = 0;
	int c;

	while ((c = getopt_long(argc, argv, "-C:B:b:w:o:L:u:fhV", long_opts,
				NULL)) != -1) {
		const char *dev = NULL;
		u32 kind = 0;

		switch (c) {
		case 'C':
			dev = optarg;
			kind = HC_KIND_CACHE;
			break;
		case 'B':
			dev = optarg;
			kind = HC_KIND_BACKING;
			break;
		case 1:
			/* A bare argument continues the last -C or -B. */
			if (!last_kind) {
				hc_warn("%s: say -C or -B before a device", optarg);
				return EX_USAGE;
			}
			dev = optarg;
			kind = last_kind;
			break;
		case 'b':
			if (parse_pow2_size(optarg, "bucket size", HC_BUCKET_MIN,
					    HC_BUCKET_MAX, &o->bucket_size))
				return EX_USAGE;
			break;
		case 'w':
			if (parse_pow2_size(optarg, "block size", HC_BLOCK_MIN,
					    HC_BLOCK_MAX, &o->block_size))
				return EX_USAGE;
			break;
		case 'o':
			if (hc_parse_u64(optarg, &o->data_offset)) {
				hc_warn("bad data offset '%s': expected a number of 512-byte sectors",
					optarg);
				return EX_USAGE;
			}
			if (o->data_offset < HC_DATA_OFFSET_MIN) {
				hc_warn("bad data offset '%s': must be at least %u sectors",
					optarg, HC_DATA_OFFSET_MIN);
				return EX_USAGE;
			}
			break;
		case OPT_WRITEBACK:
			o->writeback = true;
			break;
		case OPT_DISCARD:
			o->discard = true;
			break;
		case OPT_REPL:
			if (!strcmp(optarg, "lru")) {
				o->replacement = HC_REPL_LRU;
			} else if (!strcmp(optarg, "fifo")) {
				o->replacement = HC_REPL_FIFO;
			} else if (!strcmp(optarg, "random")) {
				o->replacement = HC_REPL_RANDOM;
			} else {
				hc_warn("bad replacement policy '%s': expected lru, fifo or random",
					optarg);
				return EX_USAGE;
			}
			break;
		case OPT_CSUM:
			if (!strcmp(optarg, "crc32c")) {
				o->csum_type = HC_CSUM_CRC32C;
			} else if (!strcmp(optarg, "none")) {
				o->csum_type = HC_CSUM_NONE;
			} else {
				hc_warn("bad checksum '%s': expected crc32c or none",
					optarg);
				return EX_USAGE;
			}
			o->csum_given = true;
			break;
		case 'L': {
			const char *why = hc_label_check(optarg,
							 strlen(optarg));

			if (why) {
				hc_warn("bad label '%s': %s", optarg, why);
				return EX_USAGE;
			}
			o->label = optarg;
			break;
		}
		case 'u':
			if (uuid_parse(optarg, o->set_uuid) ||
			    uuid_is_null(o->set_uuid)) {
				hc_warn("bad cache set uuid '%s'", optarg);
				return EX_USAGE;
			}
			o->set_uuid_given = true;
			break;
		case OPT_WIPE_HCACHE:
			o->wipe_hcache = true;
			break;
		case OPT_DISCARD_DIRTY:
			o->discard_dirty = true;
			break;
		case 'f':
			o->force = true;
			break;
		case 'h':
			usage(stdout);
			return EX_DONE;
		case 'V':
			hc_print_version();
			return EX_DONE;
		default:
			usage(stderr);
			return EX_USAGE;
		}
		if (!dev)
			continue;
		if (kind == HC_KIND_CACHE && (*ncache)++) {
			hc_warn("only one cache device per cache set");
			return EX_USAGE;
		}
		if (*nr == HC_MAX_DEVS) {
			hc_warn("too many devices (at most %u)", HC_MAX_DEVS);
			return EX_USAGE;
		}
		targets[*nr].path = dev;
		targets[*nr].kind = kind;
		targets[*nr].fd = -1;
		(*nr)++;
		last_kind = kind;
	}
	return EX_OK;
}

int main(int argc, char **argv)
{
	static struct hc_target targets[HC_MAX_DEVS];
	struct hc_opts o = {
		.bucket_size = HC_BUCKET_DEFAULT,
		.replacement = HC_REPL_LRU,
		.csum_type = HC_CSUM_DEFAULT,
	};
	unsigned int nr = 0, i, ncache = 0;
	u8 set_uuid[HC_UUID_SIZE];
	u32 block_size;
	int ret;

	hc_prog = "make-hcache";
	ret = parse_args(argc, argv, &o, targets, &nr, &ncache);
	if (ret == EX_DONE)
		return EX_OK;
	if (ret)
		return ret;
	if (!nr) {
		hc_warn("no device given");
		usage(stderr);
		return EX_USAGE;
	}
	/* The table is the cache device's; backing devices have none. */
	if (o.csum_given && !ncache) {
		hc_warn("--checksum applies to a cache device (-C); backing devices have no checksum table");
		return EX_USAGE;
	}

	/* Pass 1: check everything, write nothing. */
	for (i = 0; i < nr; i++) {
		ret = open_target(&targets[i]);
		if (ret)
			return ret;
		ret = check_signatures(&targets[i], &o);
		if (ret)
			return ret;
	}

	block_size = o.block_size;
	if (!block_size) {
		block_size = HC_BLOCK_MIN;
		for (i = 0; i < nr; i++)
			if (targets[i].info.logical_block > block_size)
				block_size = targets[i].info.logical_block;
		if (block_size > HC_BLOCK_MAX) {
			hc_warn("logical block size %u is above the %u bytes hcache supports",
				block_size, HC_BLOCK_MAX);
			return EX_UNSUPPORTED;
		}
	}
	for (i = 0; i < nr; i++) {
		if (targets[i].info.logical_block > block_size) {
			hc_warn("%s: block size %u is below the device's logical block size %u",
				targets[i].path, block_size,
				targets[i].info.logical_block);
			return EX_USAGE;
		}
	}

	/*
	 * With a cache device, everything shares a new (or given) set uuid;
	 * backing devices formatted alone stay detached (nil set uuid)
	 * unless --cset-uuid names the set to join.
	 */
	if (o.set_uuid_given)
		memcpy(set_uuid, o.set_uuid, HC_UUID_SIZE);
	else if (ncache)
		uuid_generate(set_uuid);
	else
		memset(set_uuid, 0, HC_UUID_SIZE);

	for (i = 0; i < nr; i++) {
		struct hc_target *t = &targets[i];
		struct hc_sb check;
		struct hc_sb_disk d;
		const char *err;

		fill_common(t, &o, set_uuid, block_size);
		if (t->kind == HC_KIND_CACHE)
			ret = build_cache(t, &o);
		else
			ret = build_backing(t, &o, block_size);
		if (ret)
			return ret;
		hc_sb_encode(&t->sb, &d);
		hc_sb_decode(&d, sizeof(d), &check, &err);
		if (err) {
			hc_warn("%s: refusing to write an invalid superblock: %s",
				t->path, err);
			return EX_USAGE;
		}
	}

	/* Pass 2: write. */
	for (i = 0; i < nr; i++) {
		ret = write_target(&targets[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < nr; i++) {
		print_target(&targets[i]);
		close(targets[i].fd);
	}
	sync();
	return EX_OK;
}
