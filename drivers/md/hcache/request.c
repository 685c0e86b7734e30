// SPDX-License-Identifier: GPL-2.0
/*
 * request.c: a bio sent to an attached /dev/hcacheN, from the disk's
 * submit_bio() to its end: the struct hc_request it becomes, its cache
 * mode and bypass decision, its statistics, the fragments (clones) it is
 * cut into, and the lifetime of the I/O path while the device is
 * attached, held by a detach, and detached.
 *
 * A bio sent to /dev/hcacheN becomes a struct hc_request, run in the
 * submitter's context as far as it can go without waiting: a bio-based
 * driver's submit_bio() may not wait for bios it submits itself, as they
 * are dispatched only once it returns. A read goes on in a work item on
 * hc_io_wq from the first btree node it needs that is not cached (they
 * nearly always are). A writethrough or writeback write goes to a work
 * item if it needs a new bucket, the backing superblock marked dirty, or
 * a writeback write over its range to end; flushes, discards and bypassed
 * writes, which wait for their I/O, always do.
 *
 * The I/O path is cut along its concerns, with what they share in
 * request.h: this file; track.c, the I/O in flight per backing device
 * and the promotion race; read.c, reads and their misses; promote.c, a
 * miss's way into the cache; write.c, writes by cache mode, around the
 * cache, and in place; commit.c, the keys of completed writes and
 * flushes. Inserting a key, journalled, is insert.c's.
 *
 * Lifetime. A request holds b->io_ref; detaching (hc_request_detach())
 * unpublishes b->io_cache, waits an RCU grace period so that no new
 * request sees the set, kills the ref (dropping the count it held for
 * being attached), then waits for the last request or promotion to
 * complete io_drained.
 * Requests complete even if the set fails: from then on (meta_failed)
 * they fail with an I/O error, until the failure (fail.c) has marked the
 * device stale or stopped it, and detached it; but a read of a device the
 * set holds no dirty data for reads the backing device.
 */

#include "hcache.h"
#include "request.h"

#include <linux/bio.h>
#include <linux/mempool.h>
#include <linux/rculist.h>

#include "bypass.h"
#include "stats.h"
#include "trace.h"

/* Requests a backing device keeps ready for when memory is short. */
#define HC_REQUEST_RESERVE	64

struct workqueue_struct *hc_io_wq;

/*
 * The last put of a killed io_ref: completes io_drained for
 * hc_request_detach(), which then frees what @b's I/O path owns: nothing
 * of @b may be touched after the last put. A completion (unlike a wait
 * queue) is safe for that: its waiter cannot return before complete()
 * has let go of it, and percpu_ref touches nothing after the release.
 */
static void hc_io_release(struct percpu_ref *ref)
{
	struct hc_backing *b = container_of(ref, struct hc_backing, io_ref);

	complete(&b->io_drained);
}

/* A request or promotion is done with the set. */
void hc_io_put(struct hc_backing *b)
{
	percpu_ref_put(&b->io_ref);
}

static void hc_request_free(struct hc_request *req)
{
	struct hc_backing *b = req->b;

	mempool_free(req, b->req_pool);
	hc_io_put(b);
}

void hc_request_set_error(struct hc_request *req, blk_status_t status)
{
	if (status)
		cmpxchg(&req->status, BLK_STS_OK, status);
}

/* Count @n of @st for the backing device and for its set. */
void hc_count(struct hc_backing *b, struct hc_cache_set *c,
	      enum hc_stat st, u64 n)
{
	hc_stats_count(&b->stats, st, n);
	hc_stats_count(&c->io_stats, st, n);
}

static void hc_request_count(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct hc_cache_set *c = req->c;
	bool write = op_is_write(bio_op(req->bio));
	enum hc_stat st;

	trace_hcache_request(bio_dev(req->bio), req->bio->bi_iter.bi_sector,
			     bio_sectors(req->bio), write,
			     req->reason != HC_BYPASS_NONE ?
			     HC_TRACE_BYPASS + req->reason - 1 :
			     write ? HC_TRACE_CACHED :
			     req->missed ? HC_TRACE_MISS : HC_TRACE_HIT);
	/* Hits and misses count reads; bypasses count both. */
	if (!write) {
		if (req->reason == HC_BYPASS_NONE)
			st = req->missed ? HC_STAT_MISSES : HC_STAT_HITS;
		else
			st = req->missed ? HC_STAT_BYPASS_MISSES :
					   HC_STAT_BYPASS_HITS;
		hc_count(b, c, st, 1);
	}
	if (req->reason == HC_BYPASS_NONE)
		return;
	hc_count(b, c, HC_STAT_BYPASSED, bio_sectors(req->bio));
	st = HC_STAT_BYPASS_SEQUENTIAL + req->reason - HC_BYPASS_SEQUENTIAL;
	hc_count(b, c, st, 1);
}

/* Count the request and end its bio. */
void hc_request_end_bio(struct hc_request *req)
{
	struct bio *bio = req->bio;

	hc_request_count(req);
	bio->bi_status = req->status;
	bio_end_io_acct(bio, req->start_time);
	bio_endio(bio);
}

/* One owner of an acked write is done with it; the last frees it. */
void hc_request_put_acked(struct hc_request *req)
{
	if (atomic_dec_and_test(&req->remaining))
		hc_request_free(req);
}

/*
 * The last fragment is done, or a write's worker is: end the bio. An
 * acked write's bio has ended already; its track goes only now, once its
 * key is in, so that reads overlapping it know to wait for that.
 */
void hc_request_end(struct hc_request *req)
{
	if (hc_track_on(&req->track))
		hc_track_end(req->b, &req->track);
	if (req->acked) {
		hc_request_put_acked(req);
		return;
	}
	hc_request_end_bio(req);
	hc_request_free(req);
}

void hc_request_put(struct hc_request *req)
{
	if (atomic_dec_and_test(&req->remaining))
		hc_request_end(req);
}

/* @bio's fragment, for sectors [@start, @start + @sectors) of @req. */
static struct hc_frag *hc_frag_init(struct bio *bio, struct hc_request *req,
				    u64 start, u32 sectors, bool own_pages)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);

	f->req = req;
	INIT_LIST_HEAD(&f->node);
	f->start = start;
	f->sectors = sectors;
	f->ptr = 0;
	f->dirty = false;
	f->own_pages = own_pages;
	f->csum_bad = false;
	f->promote = NULL;
	f->bounce = NULL;
	bio->bi_private = f;
	return f;
}

/* A clone of the request's bio for sectors [start, start + sectors). */
struct hc_frag *hc_frag_alloc(struct hc_request *req,
			      struct block_device *bdev, u64 start,
			      u32 sectors)
{
	struct bio *clone = bio_alloc_clone(bdev, req->bio, GFP_NOIO,
					    &req->b->clone_set);

	bio_trim(clone, start - req->bio->bi_iter.bi_sector, sectors);
	return hc_frag_init(clone, req, start, sectors, false);
}

/*
 * Pages for @bytes of @bio, which has vectors for them: 0, or -ENOMEM
 * with the pages added so far still in @bio.
 */
static int hc_bio_add_pages(struct bio *bio, u32 bytes, gfp_t gfp)
{
	u32 i, nr = DIV_ROUND_UP(bytes, PAGE_SIZE);

	for (i = 0; i < nr; i++) {
		struct page *page = alloc_page(gfp);

		if (!page)
			return -ENOMEM;
		__bio_add_page(bio, page,
			       min_t(u32, bytes - i * PAGE_SIZE, PAGE_SIZE), 0);
	}
	return 0;
}

/**
 * hc_frag_alloc_copy() - a cache write of a copy of part of a request's data
 * @req: the write request
 * @start: first backing sector of the piece
 * @sectors: its size
 * @padded: sectors to write, @sectors rounded up to whole chunks: zeroes
 *	past the data
 * @gfp: GFP_NOWAIT in submit_bio(), else GFP_NOIO
 *
 * What the cache stores comes from pages it owns: the caller may change
 * its buffer while the write is in flight, and the data's checksums must
 * be of what is written. The caller points the bio at the cache. At most
 * BIO_MAX_VECS pages. No reserve is drawn on: a write without memory for
 * its copy goes around the cache instead.
 *
 * Return: the fragment, @own_pages set, or NULL without memory.
 */
struct hc_frag *hc_frag_alloc_copy(struct hc_request *req, u64 start,
				   u32 sectors, u32 padded, gfp_t gfp)
{
	u32 bytes = padded << SECTOR_SHIFT, len = sectors << SECTOR_SHIFT;
	unsigned short nr = DIV_ROUND_UP(bytes, PAGE_SIZE);
	struct bvec_iter src = req->bio->bi_iter, dst = { .bi_size = len };
	struct bio *bio;

	if (WARN_ON_ONCE(nr > BIO_MAX_VECS))
		return NULL;
	bio = bio_alloc_bioset(req->c->bdev, nr, REQ_OP_WRITE |
			       (req->bio->bi_opf & (REQ_SYNC | REQ_META |
						    REQ_PRIO)),
			       gfp | __GFP_NOWARN, &req->b->clone_set);
	if (!bio)
		return NULL;
	bio->bi_ioprio = req->bio->bi_ioprio;
	if (hc_bio_add_pages(bio, bytes, gfp | __GFP_NOWARN)) {
		bio_free_pages(bio);
		bio_put(bio);
		return NULL;
	}
	bio_clone_blkg_association(bio, req->bio);
	bio_advance_iter(req->bio, &src,
			 (start - req->bio->bi_iter.bi_sector) << SECTOR_SHIFT);
	src.bi_size = len;
	bio_copy_data_iter(bio, &dst, req->bio, &src);
	hc_bio_zero_from(bio, len);
	return hc_frag_init(bio, req, start, sectors, true);
}

/**
 * hc_frag_put() - drop a fragment's bio, and its pages if they are ours
 * @f: the fragment
 */
void hc_frag_put(struct hc_frag *f)
{
	if (f->own_pages)
		bio_free_pages(&f->bio);
	if (f->bounce)
		hc_pages_bio_free(f->bounce);
	bio_put(&f->bio);
}

/**
 * hc_pages_bio() - a bio of pages of our own
 * @bdev: the device
 * @bytes: its size
 * @opf: what for
 * @gfp: how to allocate; with __GFP_NORETRY, may fail
 *
 * Return: the bio, its pages uninitialised, or NULL.
 */
struct bio *hc_pages_bio(struct block_device *bdev, u32 bytes, blk_opf_t opf,
			 gfp_t gfp)
{
	unsigned short nr = DIV_ROUND_UP(bytes, PAGE_SIZE);
	struct bio *bio = bio_kmalloc(nr, gfp);

	if (!bio)
		return NULL;
	bio_init(bio, bdev, bio->bi_inline_vecs, nr, opf);
	if (hc_bio_add_pages(bio, bytes, gfp)) {
		hc_pages_bio_free(bio);
		return NULL;
	}
	return bio;
}

/**
 * hc_bio_zero_from() - zero a bio's pages from a byte on
 * @bio: a bio of our own pages
 * @from: the first byte to zero, counted over all its vectors
 */
void hc_bio_zero_from(struct bio *bio, u32 from)
{
	struct bio_vec *bv;
	struct bvec_iter_all it;
	u32 at = 0;

	bio_for_each_segment_all(bv, bio, it) {
		if (at + bv->bv_len > from)
			memzero_page(bv->bv_page, bv->bv_offset +
				     (from > at ? from - at : 0),
				     bv->bv_len - (from > at ? from - at : 0));
		at += bv->bv_len;
	}
}

/**
 * hc_pages_bio_free() - free a bio of hc_pages_bio() and its pages
 * @bio: the bio
 */
void hc_pages_bio_free(struct bio *bio)
{
	bio_free_pages(bio);
	bio_uninit(bio);
	kfree(bio);
}

/* The mode, the sequential detector and the bypass decision. */
static void hc_request_prepare(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct bio *bio = req->bio;
	struct hc_bypass_in in = {
		.write = op_is_write(bio_op(bio)),
		.sequential_cutoff = READ_ONCE(b->sequential_cutoff),
		.avail_percent = READ_ONCE(req->c->avail_percent),
	};

	req->mode = READ_ONCE(b->sb.backing.cache_mode);
	/* A detach waiting for writeback takes no new dirty data. */
	if (req->mode == HC_MODE_WRITEBACK && READ_ONCE(b->wb.detaching))
		req->mode = HC_MODE_WRITETHROUGH;
	in.cache_mode = req->mode;
	if (bio_sectors(bio) && (bio_op(bio) == REQ_OP_READ ||
				 bio_op(bio) == REQ_OP_WRITE)) {
		spin_lock(&b->seq_lock);
		in.seq_bytes = hc_seq_note(&b->seq, req->track.start,
					   bio_sectors(bio));
		spin_unlock(&b->seq_lock);
		req->reason = hc_bypass_decide(&in);
	}
}

/*
 * Does the set hold no dirty data for the request's device? Not while its
 * superblock says dirty: an acked write whose insert failed left data
 * only in the cache, which no key counts.
 */
static bool hc_request_clean(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	u64 dirty;

	if (READ_ONCE(req->b->sb.backing.state) == HC_STATE_DIRTY)
		return false;
	down_read(&c->meta_lock);
	dirty = hc_dirty_sectors(c, req->id);
	up_read(&c->meta_lock);
	return !dirty;
}

static void hc_request_work(struct work_struct *work)
{
	struct hc_request *req = container_of(work, struct hc_request, work);

	/*
	 * A set that cannot write metadata any more is failing (fail.c):
	 * passing I/O through now would let the backing device move on
	 * while the cache's keys still vouch for older data. Fail it until
	 * the failure has marked the device stale (or stopped it) and
	 * detached it, after which its I/O takes the uncached path. A read
	 * of a device the cache holds no dirty data for is the exception:
	 * the backing device has all of its data, and a read moves nothing
	 * on, so it reads there rather than fail clean data.
	 */
	if (READ_ONCE(req->c->meta_failed)) {
		hc_write_frags_free(req);
		if (!op_is_write(bio_op(req->bio)) && hc_request_clean(req))
			hc_to_backing(req, 0);
		else
			hc_request_set_error(req, BLK_STS_IOERR);
		hc_request_end(req);
		return;
	}
	if (!op_is_write(bio_op(req->bio)))
		hc_read(req, false);
	else if (!hc_write(req))
		hc_request_end(req);
}

/*
 * A bio that finds no cache set while a detach decides whether it can go
 * (hc_request_hold()): park it, in the same RCU read section that found
 * io_cache empty. Passed around the cache now, it would land on the
 * backing device under keys that the cache keeps if the detach gives up:
 * clean ones then stale, dirty ones hiding it. Return: true if parked.
 */
static bool hc_request_park(struct hc_backing *b, struct bio *bio)
{
	unsigned long flags;
	bool held = false;

	/* Pairs with the barrier in hc_request_hold(). */
	smp_rmb();
	if (!READ_ONCE(b->io_hold))
		return false;
	spin_lock_irqsave(&b->hold_lock, flags);
	if (b->io_hold) {
		bio_list_add(&b->io_held, bio);
		held = true;
	}
	spin_unlock_irqrestore(&b->hold_lock, flags);
	return held;
}

/**
 * hc_request_hold() - bios wait while a detach decides
 * @b: an attached backing device; hc_register_lock held
 *
 * Called before hc_request_detach() by a detach that may yet give up:
 * from the moment the cache is unpublished, bios sent to the disk wait
 * until hc_request_release(), which sends them to the cache again if the
 * detach gave up, or around it if the device is detached.
 */
void hc_request_hold(struct hc_backing *b)
{
	lockdep_assert_held(&hc_register_lock);
	spin_lock_irq(&b->hold_lock);
	b->io_hold = true;
	spin_unlock_irq(&b->hold_lock);
	/* io_hold before io_cache empty; pairs with hc_request_park(). */
	smp_wmb();
}

/**
 * hc_request_release() - the detach has decided: send the waiting bios on
 * @b: the backing device; hc_register_lock held
 *
 * If the cache was published again (the detach gave up), an RCU grace
 * period first, so that no bio can still find io_cache empty and pass the
 * cache once io_hold is clear. May sleep.
 */
void hc_request_release(struct hc_backing *b)
{
	struct bio_list held;
	struct bio *bio;

	lockdep_assert_held(&hc_register_lock);
	if (rcu_access_pointer(b->io_cache))
		synchronize_rcu();
	spin_lock_irq(&b->hold_lock);
	b->io_hold = false;
	held = b->io_held;
	bio_list_init(&b->io_held);
	spin_unlock_irq(&b->hold_lock);
	while ((bio = bio_list_pop(&held)))
		submit_bio_noacct(bio);
}

/**
 * hc_request_submit() - take a bio sent to /dev/hcacheN, if attached
 * @b: the backing device
 * @bio: the bio
 *
 * Called from the disk's submit_bio(). May sleep (for a request from the
 * device's reserve, when memory is short).
 *
 * Return: true if the cache set handles @bio, or it waits for a detach to
 * decide (hc_request_hold()); false if @b is not attached and the caller
 * passes it through.
 */
bool hc_request_submit(struct hc_backing *b, struct bio *bio)
{
	struct hc_cache_set *c;
	struct hc_request *req;
	bool held = false;

	rcu_read_lock();
	c = rcu_dereference(b->io_cache);
	/* Alive: a detach kills it only after a grace period (no tryget). */
	if (c)
		percpu_ref_get(&b->io_ref);
	else
		held = hc_request_park(b, bio);
	rcu_read_unlock();
	if (held)
		return true;
	if (!c)
		return false;

	hc_writeback_note_io(b);
	req = mempool_alloc(b->req_pool, GFP_NOIO);
	memset(req, 0, sizeof(*req));
	hc_track_init(&req->track);
	INIT_LIST_HEAD(&req->frags);
	INIT_LIST_HEAD(&req->inserts);
	req->track.start = bio->bi_iter.bi_sector;
	req->track.end = bio_end_sector(bio);
	req->bio = bio;
	req->b = b;
	req->c = c;
	req->id = READ_ONCE(b->id);
	req->start_time = bio_start_io_acct(bio);
	atomic_set(&req->remaining, 1);
	init_completion(&req->done);
	hc_request_prepare(req);
	if (!READ_ONCE(c->meta_failed)) {
		if (bio_op(bio) == REQ_OP_READ) {
			hc_read(req, true);
			return true;
		}
		if (hc_write_try_submit(req))
			return true;
	}
	INIT_WORK(&req->work, hc_request_work);
	queue_work(hc_io_wq, &req->work);
	return true;
}

/**
 * hc_request_attach() - start caching @b's I/O in its cache set
 * @b: a backing device; hc_register_lock held
 *
 * Does nothing unless @b is both attached and running; called when either
 * becomes true.
 */
void hc_request_attach(struct hc_backing *b)
{
	lockdep_assert_held(&hc_register_lock);
	if (b->set && b->disk && !rcu_access_pointer(b->io_cache)) {
		/* Back to one count, for being attached, dropped by the detach. */
		reinit_completion(&b->io_drained);
		percpu_ref_reinit(&b->io_ref);
		rcu_assign_pointer(b->io_cache, b->set);
	}
}

/**
 * hc_request_detach() - stop caching @b's I/O and wait for what is in flight
 * @b: a backing device; hc_register_lock held
 *
 * New bios pass through from when this is called, or wait, if a detach
 * holds them (hc_request_hold()); returns once no request or promotion
 * refers to the cache set any more. May sleep.
 */
void hc_request_detach(struct hc_backing *b)
{
	lockdep_assert_held(&hc_register_lock);
	if (!rcu_access_pointer(b->io_cache))
		return;
	RCU_INIT_POINTER(b->io_cache, NULL);
	synchronize_rcu();
	percpu_ref_kill(&b->io_ref);
	wait_for_completion(&b->io_drained);
}

/**
 * hc_request_init_backing() - what @b's cached I/O path allocates
 * @b: a backing device about to run
 *
 * Return: 0 or -ENOMEM.
 */
int hc_request_init_backing(struct hc_backing *b)
{
	int ret;

	/* Dead, at zero, until hc_request_attach() brings it to life. */
	ret = percpu_ref_init(&b->io_ref, hc_io_release, PERCPU_REF_INIT_DEAD,
			      GFP_KERNEL);
	if (ret)
		return ret;
	ret = bioset_init(&b->clone_set, HC_REQUEST_RESERVE,
			  offsetof(struct hc_frag, bio),
			  BIOSET_NEED_RESCUER | BIOSET_NEED_BVECS);
	if (ret)
		goto fail_ref;
	b->req_pool = mempool_create_kmalloc_pool(HC_REQUEST_RESERVE,
						  sizeof(struct hc_request));
	if (!b->req_pool) {
		ret = -ENOMEM;
		goto fail_set;
	}
	return 0;
fail_set:
	bioset_exit(&b->clone_set);
fail_ref:
	percpu_ref_exit(&b->io_ref);
	return ret;
}

/**
 * hc_request_exit_backing() - free what hc_request_init_backing() made
 * @b: a backing device whose disk is gone and that is detached
 */
void hc_request_exit_backing(struct hc_backing *b)
{
	mempool_destroy(b->req_pool);
	b->req_pool = NULL;
	bioset_exit(&b->clone_set);
	percpu_ref_exit(&b->io_ref);
}

int hc_request_init(void)
{
	hc_io_wq = alloc_workqueue("hcache_io", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				   0);
	return hc_io_wq ? 0 : -ENOMEM;
}

void hc_request_exit(void)
{
	destroy_workqueue(hc_io_wq);
}
