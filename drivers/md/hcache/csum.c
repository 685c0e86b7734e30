// SPDX-License-Identifier: GPL-2.0
/*
 * csum.c: a cache set's data checksums (csum.h): the per-chunk table in
 * memory, its load at registration, the writes of its changed blocks
 * before any metadata write that can make keys durable, and the setting
 * and checking of chunks' checksums over bios and buffers.
 */

#include "hcache.h"
#include "csum_table.h"

#include <linux/bio.h>
#include <linux/highmem.h>

/* Table blocks read or written per I/O batch: 256 KiB, both slots. */
#define HC_CSUM_IO_BLOCKS	HC_CSUM_LOAD_BLOCKS

/**
 * hc_data_align() - the smallest piece of cache space worth handing out
 * @c: the set
 *
 * Return: sectors: a chunk with data checksums (data is written in whole
 * chunks), else a block.
 */
u32 hc_data_align(const struct hc_cache_set *c)
{
	return hc_csum_on(c) ? HC_CSUM_CHUNK_SECTORS :
			       c->block_size >> SECTOR_SHIFT;
}

/**
 * hc_csum_init() - the checksum table of a new set, in memory
 * @c: the set, its geometry known
 *
 * Nothing without HC_FEAT_INCOMPAT_DATA_CSUM. 4 bytes per 4 KiB of the
 * cache device: 1 GiB of memory per TiB.
 *
 * Return: 0 or -ENOMEM.
 */
int hc_csum_init(struct hc_cache_set *c)
{
	struct hc_csum *cs = &c->csum;

	atomic64_set(&cs->errors, 0);
	xa_init_flags(&cs->bad, XA_FLAGS_LOCK_IRQ);
	atomic_set(&cs->nr_bad, 0);
	if (!(c->sb.incompat & HC_FEAT_INCOMPAT_DATA_CSUM))
		return 0;
	cs->chunks = hc_csum_table_chunks(c->geom.nbuckets,
					  c->geom.bucket_sectors << SECTOR_SHIFT);
	cs->blocks = hc_csum_table_blocks(cs->chunks);
	cs->start = hc_bucket_to_sector(&c->geom, c->sb.cache.csum_start);
	cs->seq = kvcalloc(cs->blocks, sizeof(*cs->seq), GFP_KERNEL);
	cs->dirty = kvcalloc(BITS_TO_LONGS(cs->blocks), sizeof(long),
			     GFP_KERNEL);
	cs->buf = kvmalloc(HC_CSUM_IO_BLOCKS * 2 * HC_CSUM_BLOCK_BYTES,
			   GFP_KERNEL);
	/* Last: hc_csum_on() is true from here. */
	cs->crc = kvcalloc(cs->chunks, sizeof(*cs->crc), GFP_KERNEL);
	if (!cs->seq || !cs->dirty || !cs->buf || !cs->crc)
		return -ENOMEM;
	return 0;
}

/**
 * hc_csum_exit() - free what hc_csum_init() allocated
 * @c: the set
 */
void hc_csum_exit(struct hc_cache_set *c)
{
	struct hc_csum *cs = &c->csum;
	struct hc_csum_bad *bad;
	unsigned long i;

	xa_for_each(&cs->bad, i, bad)
		kfree(bad);
	xa_destroy(&cs->bad);
	kvfree(cs->crc);
	kvfree(cs->seq);
	kvfree(cs->dirty);
	kvfree(cs->buf);
	cs->crc = NULL;
}

/* The newer valid copy of block @b, of the two at @slots; 0 or -EUCLEAN. */
static int hc_csum_load_block(struct hc_cache_set *c, u64 b,
			      const struct hc_csum_block_disk *slots)
{
	struct hc_csum *cs = &c->csum;
	const char *why[2] = { NULL, NULL };
	u64 seq[2];
	int ret[2], s, best = -1;

	for (s = 0; s < 2; s++) {
		ret[s] = hc_csum_block_decode(&slots[s], c->set_magic, b,
					      cs->chunks, &seq[s], NULL,
					      &why[s]);
		if (!ret[s] && (seq[s] & 1) != s) {
			ret[s] = -EUCLEAN;
			why[s] = "checksum block seq does not match its slot";
		}
		if (!ret[s] && (best < 0 || seq[s] > seq[best]))
			best = s;
	}
	if (best < 0) {
		hc_cache_set_error(c,
				   "checksum table block %llu has no valid copy: slot 0: %s; slot 1: %s",
				   b, why[0], why[1]);
		return -EUCLEAN;
	}
	hc_csum_block_decode(&slots[best], c->set_magic, b, cs->chunks,
			     &cs->seq[b], cs->crc, NULL);
	return 0;
}

/*
 * The batch of @n blocks from @b could not be read whole: read it slot by
 * slot, an unreadable slot (logged) zeroed, so it counts as a copy never
 * written and the block's other copy may still serve.
 */
static void hc_csum_load_slots(struct hc_cache_set *c, u64 b, u64 n)
{
	struct hc_csum *cs = &c->csum;
	u64 i;

	for (i = 0; i < 2 * n; i++) {
		void *slot = cs->buf + i * HC_CSUM_BLOCK_BYTES;

		if (hc_meta_io(c, REQ_OP_READ | REQ_META,
			       cs->start + (hc_csum_slot_byte(b, 0) +
					    i * HC_CSUM_BLOCK_BYTES) /
					   SECTOR_SIZE,
			       slot, HC_CSUM_BLOCK_BYTES))
			memset(slot, 0, HC_CSUM_BLOCK_BYTES);
	}
}

/**
 * hc_csum_load() - read the checksum table at registration
 * @c: the set, nothing cached yet
 *
 * Takes each block's newer valid copy; a slot that cannot be read counts
 * as an invalid copy. A block with neither is refused: the data it
 * vouches for could not be told from corruption. May sleep.
 *
 * Return: 0, -EUCLEAN, or an I/O error.
 */
int hc_csum_load(struct hc_cache_set *c)
{
	struct hc_csum *cs = &c->csum;
	u64 b, i, n;
	int ret;

	if (!hc_csum_on(c))
		return 0;
	for (b = 0; b < cs->blocks; b += n) {
		n = min_t(u64, cs->blocks - b, HC_CSUM_IO_BLOCKS);
		ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
				 cs->start + (hc_csum_slot_byte(b, 0) >>
					      SECTOR_SHIFT),
				 cs->buf, n * 2 * HC_CSUM_BLOCK_BYTES);
		if (ret)
			hc_csum_load_slots(c, b, n);
		for (i = 0; i < n; i++) {
			const struct hc_csum_block_disk *slots = cs->buf;

			ret = hc_csum_load_block(c, b + i, slots + 2 * i);
			if (ret)
				return ret;
		}
		/* Progress in "loading", and a machine going down stops it. */
		ret = hc_load_step(c);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/**
 * hc_csum_flush() - write the table blocks changed since they were written
 * @c: the set; meta_lock held for writing, or held for reading by the
 *	journal writer that downgraded it (hc_meta_write_ordered())
 *
 * Each goes to the slot that does not hold its newest copy. Called before
 * every metadata write that can make keys durable; counts as a data write
 * (@c->data_written), so that write flushes the cache device first. May
 * sleep.
 *
 * Return: 0 or an I/O error; a failed write fails the set, and every
 * later call fails too.
 */
int hc_csum_flush(struct hc_cache_set *c)
{
	struct hc_csum *cs = &c->csum;
	struct hc_csum_block_disk *d = cs->buf;
	struct hc_io_batch io;
	u64 b = 0, nr = 0, picked[HC_CSUM_IO_BLOCKS];
	struct blk_plug plug;
	u64 i;
	int ret = 0;

	if (!hc_csum_on(c))
		return 0;
	if (cs->failed)
		return -EIO;
	for (;;) {
		b = find_next_bit(cs->dirty, cs->blocks, b);
		if (b < cs->blocks && test_and_clear_bit(b, cs->dirty)) {
			/* Encoded after the bit is clear: see struct hc_csum. */
			hc_csum_block_encode(c->set_magic, b, cs->seq[b] + 1,
					     cs->crc, cs->chunks, &d[nr]);
			picked[nr++] = b;
		}
		if (nr < HC_CSUM_IO_BLOCKS && b++ < cs->blocks)
			continue;
		if (!nr)
			break;
		hc_io_batch_init(&io);
		blk_start_plug(&plug);
		for (i = 0; i < nr; i++)
			hc_io_batch_add(c, &io, REQ_OP_WRITE | REQ_META,
					cs->start + (hc_csum_slot_byte(picked[i],
						cs->seq[picked[i]] + 1) >>
						SECTOR_SHIFT),
					&d[i], HC_CSUM_BLOCK_BYTES);
		blk_finish_plug(&plug);
		ret = hc_io_batch_wait(&io);
		if (ret) {
			/*
			 * Still to be written; and nothing after this may
			 * make keys durable: the set fails.
			 */
			for (i = 0; i < nr; i++)
				set_bit(picked[i], cs->dirty);
			cs->failed = true;
			hc_cache_set_error(c, "checksum table write failed: error %d",
					   ret);
			hc_cache_set_fail(c, HC_FAIL_METADATA);
			break;
		}
		for (i = 0; i < nr; i++)
			cs->seq[picked[i]]++;
		WRITE_ONCE(cs->blocks_written, cs->blocks_written + nr);
		atomic64_inc(&c->data_written);
		nr = 0;
		if (b >= cs->blocks)
			break;
	}
	return ret;
}

/* A walk over consecutive chunks' bytes, setting or checking each. */
struct hc_csum_walk {
	struct hc_cache_set	*c;
	u64			chunk;
	u32			crc;
	u32			len;
	bool			check;
	int			ret;
	u64			bad;
};

static void hc_csum_walk_init(struct hc_csum_walk *w, struct hc_cache_set *c,
			      u64 sector, bool check)
{
	*w = (struct hc_csum_walk){
		.c = c,
		.chunk = sector / HC_CSUM_CHUNK_SECTORS,
		.crc = ~0U,
		.check = check,
	};
	WARN_ON_ONCE(sector % HC_CSUM_CHUNK_SECTORS);
}

/* Chunk @chunk takes new data: it is no longer a bad dirty chunk. */
static void hc_csum_forget(struct hc_csum *cs, u64 chunk)
{
	struct hc_csum_bad *bad;

	if (likely(!atomic_read(&cs->nr_bad)))
		return;
	bad = xa_erase_irq(&cs->bad, chunk);
	if (bad) {
		atomic_dec(&cs->nr_bad);
		kfree(bad);
	}
}

static void hc_csum_walk_chunk_done(struct hc_csum_walk *w)
{
	struct hc_csum *cs = &w->c->csum;
	u32 crc = ~w->crc;

	if (WARN_ON_ONCE(w->chunk >= cs->chunks)) {
		w->ret = -EINVAL;
	} else if (!w->check) {
		hc_csum_forget(cs, w->chunk);
		WRITE_ONCE(cs->crc[w->chunk], crc);
		/* The entry before the mark: hc_csum_flush() clears, then reads. */
		smp_mb__before_atomic();
		set_bit(w->chunk / HC_CSUM_PER_BLOCK, cs->dirty);
	} else if (crc != READ_ONCE(cs->crc[w->chunk]) && !w->ret) {
		w->ret = -EBADMSG;
		w->bad = w->chunk * HC_CSUM_CHUNK_SECTORS;
	}
	w->chunk++;
	w->crc = ~0U;
	w->len = 0;
}

static void hc_csum_walk_bytes(struct hc_csum_walk *w, const u8 *p, u32 len)
{
	while (len) {
		u32 n = min(len, HC_CSUM_CHUNK - w->len);

		w->crc = crc32c(w->crc, p, n);
		w->len += n;
		p += n;
		len -= n;
		if (w->len == HC_CSUM_CHUNK)
			hc_csum_walk_chunk_done(w);
	}
}

static void hc_csum_walk_bio(struct hc_csum_walk *w, struct bio *bio,
			     struct bvec_iter iter)
{
	struct bvec_iter it;
	struct bio_vec bv;

	__bio_for_each_segment(bv, bio, it, iter) {
		void *p = bvec_kmap_local(&bv);

		hc_csum_walk_bytes(w, p, bv.bv_len);
		kunmap_local(p);
	}
}

/* A walk must end on a chunk boundary: data goes in whole chunks. */
static int hc_csum_walk_end(struct hc_csum_walk *w)
{
	if (WARN_ON_ONCE(w->len))
		return -EINVAL;
	return w->ret;
}

/**
 * hc_csum_set_bio() - the checksums of data about to be written
 * @c: the set, with data checksums
 * @sector: the cache sector it goes to, on a chunk boundary
 * @bio: the data, whole chunks, in pages the cache owns, not submitted yet
 *
 * Any context.
 */
void hc_csum_set_bio(struct hc_cache_set *c, u64 sector, struct bio *bio)
{
	struct hc_csum_walk w;

	hc_csum_walk_init(&w, c, sector, false);
	hc_csum_walk_bio(&w, bio, bio->bi_iter);
	hc_csum_walk_end(&w);
}

/**
 * hc_csum_set_buf() - hc_csum_set_bio() for data in a buffer
 * @c: the set, with data checksums
 * @sector: the cache sector it goes to, on a chunk boundary
 * @buf: the data, mapped (kmalloc or vmalloc)
 * @sectors: its length, whole chunks
 */
void hc_csum_set_buf(struct hc_cache_set *c, u64 sector, const void *buf,
		     u32 sectors)
{
	struct hc_csum_walk w;

	hc_csum_walk_init(&w, c, sector, false);
	hc_csum_walk_bytes(&w, buf, sectors << SECTOR_SHIFT);
	hc_csum_walk_end(&w);
}

/**
 * hc_csum_copy() - chunks copied byte for byte take their checksums along
 * @c: the set, with data checksums
 * @to: the cache sector they were copied to, on a chunk boundary
 * @from: where they were, on a chunk boundary, checked when read
 * @sectors: whole chunks
 */
void hc_csum_copy(struct hc_cache_set *c, u64 to, u64 from, u32 sectors)
{
	struct hc_csum *cs = &c->csum;
	u64 t = to / HC_CSUM_CHUNK_SECTORS, f = from / HC_CSUM_CHUNK_SECTORS;
	u32 i, n = sectors / HC_CSUM_CHUNK_SECTORS;

	if (WARN_ON_ONCE(to % HC_CSUM_CHUNK_SECTORS ||
			 from % HC_CSUM_CHUNK_SECTORS ||
			 sectors % HC_CSUM_CHUNK_SECTORS ||
			 t + n > cs->chunks || f + n > cs->chunks))
		return;
	for (i = 0; i < n; i++) {
		hc_csum_forget(cs, t + i);
		WRITE_ONCE(cs->crc[t + i], READ_ONCE(cs->crc[f + i]));
		/* The entry before the mark, as in hc_csum_walk_chunk_done(). */
		smp_mb__before_atomic();
		set_bit((t + i) / HC_CSUM_PER_BLOCK, cs->dirty);
	}
}

/**
 * hc_csum_check_bio() - check data read from the cache against the table
 * @c: the set, with data checksums
 * @sector: the cache sector it was read from, on a chunk boundary
 * @bio: the bio it was read into
 * @iter: where in @bio, whole chunks
 * @bad: receives the cache sector of the first chunk that does not match
 *
 * The caller then checks the bucket's gen: if the bucket was reused
 * meanwhile, what was read and its entry may both be another extent's.
 * Any context.
 *
 * Return: 0 if every chunk matches, -EBADMSG if one does not.
 */
int hc_csum_check_bio(struct hc_cache_set *c, u64 sector, struct bio *bio,
		      struct bvec_iter iter, u64 *bad)
{
	struct hc_csum_walk w;
	int ret;

	hc_csum_walk_init(&w, c, sector, true);
	hc_csum_walk_bio(&w, bio, iter);
	ret = hc_csum_walk_end(&w);
	*bad = w.bad;
	return ret;
}

/**
 * hc_csum_check_buf() - hc_csum_check_bio() for data in a buffer
 * @c: the set, with data checksums
 * @sector: the cache sector it was read from, on a chunk boundary
 * @buf: the data, mapped
 * @sectors: whole chunks
 * @bad: receives the cache sector of the first chunk that does not match
 *
 * Return: 0 or -EBADMSG.
 */
int hc_csum_check_buf(struct hc_cache_set *c, u64 sector, const void *buf,
		      u32 sectors, u64 *bad)
{
	struct hc_csum_walk w;
	int ret;

	hc_csum_walk_init(&w, c, sector, true);
	hc_csum_walk_bytes(&w, buf, sectors << SECTOR_SHIFT);
	ret = hc_csum_walk_end(&w);
	*bad = w.bad;
	return ret;
}

/**
 * hc_csum_check_pages() - hc_csum_check_bio() for data in an array of pages
 * @c: the set, with data checksums
 * @sector: the cache sector it was read from, on a chunk boundary
 * @pages: the pages, each PAGE_SIZE
 * @off: where the data starts, in bytes from the first page's start
 * @bytes: its length, whole chunks
 * @bad: receives the cache sector of the first chunk that does not match
 *
 * Return: 0 or -EBADMSG.
 */
int hc_csum_check_pages(struct hc_cache_set *c, u64 sector,
			struct page **pages, u32 off, u32 bytes, u64 *bad)
{
	struct hc_csum_walk w;
	int ret;

	hc_csum_walk_init(&w, c, sector, true);
	while (bytes) {
		u32 len = min_t(u32, bytes, PAGE_SIZE - off % PAGE_SIZE);
		void *p = kmap_local_page(pages[off / PAGE_SIZE]);

		hc_csum_walk_bytes(&w, p + off % PAGE_SIZE, len);
		kunmap_local(p);
		off += len;
		bytes -= len;
	}
	ret = hc_csum_walk_end(&w);
	*bad = w.bad;
	return ret;
}

/*
 * Is chunk @chunk a bad dirty chunk seen before? If not, remember it (if
 * memory allows). Any context. Return: true if seen before.
 */
static bool hc_csum_bad_seen(struct hc_csum *cs, u64 chunk, u32 bdev_id,
			     u64 bdev_sector)
{
	struct hc_csum_bad *bad;
	unsigned long flags;
	bool seen;

	xa_lock_irqsave(&cs->bad, flags);
	seen = !!xa_load(&cs->bad, chunk);
	if (!seen) {
		bad = kmalloc(sizeof(*bad), GFP_ATOMIC | __GFP_NOWARN);
		if (bad) {
			*bad = (struct hc_csum_bad){
				.bdev_id = bdev_id,
				.bdev_sector = bdev_sector,
			};
			if (xa_err(__xa_store(&cs->bad, chunk, bad,
					      GFP_ATOMIC | __GFP_NOWARN)))
				kfree(bad);
			else
				atomic_inc(&cs->nr_bad);
		}
	}
	xa_unlock_irqrestore(&cs->bad, flags);
	return seen;
}

/**
 * hc_csum_error() - cached data did not match its checksum
 * @c: the set
 * @sector: the chunk's cache sector
 * @b: the backing device whose data it is, to name it; NULL if not known
 * @bdev_id: its id
 * @bdev_sector: the first sector there of what was read from the chunk
 * @dirty: the only copy: readers get an error, never these bytes, and
 *	writeback and moving GC leave it where it is
 *
 * Counts it in csum_errors, logs it (rate-limited), and counts it
 * against io_error_limit like any error of the cache device. A dirty
 * chunk is remembered (sysfs csum_bad_dirty) and counted the first time
 * only, as it stays bad until written again: reads, writeback and moving
 * GC meeting it again must not fail the set. Any context.
 */
void hc_csum_error(struct hc_cache_set *c, u64 sector,
		   const struct hc_backing *b, u32 bdev_id, u64 bdev_sector,
		   bool dirty)
{
	struct hc_csum *cs = &c->csum;

	sector = round_down(sector, HC_CSUM_CHUNK_SECTORS);
	if (dirty && hc_csum_bad_seen(cs, sector / HC_CSUM_CHUNK_SECTORS,
				      bdev_id, bdev_sector))
		return;
	atomic64_inc(&cs->errors);
	if (b)
		hc_cache_set_error(c,
				   "data checksum mismatch at cache sector %llu: %s data of %pg sector %llu%s",
				   sector, dirty ? "dirty" : "clean", b->bdev,
				   bdev_sector,
				   dirty ? ", the only copy: reads of it fail" :
				   ", read from the backing device instead");
	else
		hc_cache_set_error(c,
				   "data checksum mismatch at cache sector %llu: %s data of backing device %u sector %llu",
				   sector, dirty ? "dirty" : "clean", bdev_id,
				   bdev_sector);
}

/**
 * hc_csum_bad_show() - sysfs csum_bad_dirty
 * @c: the set
 * @buf: a page
 *
 * One line per bad dirty chunk known, in cache order, as many as a page
 * holds: its cache sector, the backing device's id and sector.
 *
 * Return: bytes written.
 */
ssize_t hc_csum_bad_show(struct hc_cache_set *c, char *buf)
{
	struct hc_csum *cs = &c->csum;
	struct hc_csum_bad *bad;
	unsigned long chunk;
	ssize_t n = 0;

	xa_lock_irq(&cs->bad);
	xa_for_each(&cs->bad, chunk, bad) {
		if (n > PAGE_SIZE - 64)
			break;
		n += sysfs_emit_at(buf, n, "%llu %u %llu\n",
				   (u64)chunk * HC_CSUM_CHUNK_SECTORS,
				   bad->bdev_id, bad->bdev_sector);
	}
	xa_unlock_irq(&cs->bad);
	return n;
}
