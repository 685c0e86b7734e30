// SPDX-License-Identifier: GPL-2.0
/*
 * request.c: the I/O path of a backing device attached to a cache set:
 * reads that look up the btree and promote misses, writes by cache mode,
 * bypass, flushes, discards, and the tracking of writes in flight that
 * keeps an older miss from being cached over a newer write.
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
 * Reads. Under meta_lock held for reading, the request's range is cut
 * into fragments, each wholly cached (a key) or wholly not (a gap), and
 * each fragment is a clone of the bio, trimmed, sent to the cache or the
 * backing device. A cache fragment checks its bucket's gen when it
 * completes: if the bucket was reused meanwhile, the data read may be
 * another extent's, and the fragment is looked up again. A gap is read
 * from the backing device and, unless bypassed or refused by the
 * admission policy, promoted: read into pages of our own, never the
 * reader's (a reader may change its O_DIRECT buffer while the read is in
 * flight, and what the cache stores must be what was on disk), copied to
 * the reader's pages by a worker, the bio completed, and our copy written
 * to the cache and inserted as a clean key afterwards (struct hc_promote).
 *
 * Writes. writethrough: to both devices, the key inserted clean once both
 * are done; writeback: to the cache only, the key inserted dirty, the
 * backing superblock marked dirty first. Their I/O is not waited for: its
 * last completion queues the request on the set's write_done, and
 * hc_write_insert_work() inserts the keys of all that are queued, a batch
 * per hold of meta_lock, before completing them; except that a writeback
 * write without FUA whose I/O went well is acked first, its key inserted
 * later (hc_write_io_done() says how nothing can tell). A writeback write
 * within one dirty key goes over that key's data in place, with no key of
 * its own, and ends at its completion (hc_write_in_place()). writearound,
 * none and every bypass (a worker waits for their I/O): cached keys over the range are
 * invalidated (a whiteout), then the backing device is written. Discard
 * and write-zeroes invalidate and are passed down. PREFLUSH writes the
 * journal (PREFLUSH + FUA: every key of a completed write, and the data
 * behind it, is durable) and flushes the backing device first; FUA writes
 * the journal before the write completes. A write waits, before it writes
 * the backing device, for writeback writes in flight over its range
 * (writeback.c), whose data is older.
 *
 * The promotion race. A miss reads the backing device while a write to
 * the same range may land: the miss's older data must not then be cached
 * over the write. Each backing device keeps its reads and writes in
 * flight in an interval tree (struct hc_track). A read is put there
 * before its lookup; a write marks every read it overlaps as collided
 * when it starts, and a read that starts while an overlapping write is in
 * flight is collided from the start. A promotion is inserted only if not
 * collided, checked and removed from the tree under meta_lock held for
 * writing: a write that starts later inserts its own key (or looks up the
 * range to invalidate it) after the promotion's insert, so it wins.
 * Writes that completed before the read started are in the tree before
 * its lookup.
 *
 * Lifetime. A request holds b->io_active; detaching (hc_request_detach())
 * unpublishes b->io_cache, waits an RCU grace period so that no new
 * request sees the set, drops the count it held for being attached, then
 * waits for the last request or promotion to complete io_drained.
 * Requests complete even if the set fails: from then on (meta_failed)
 * they fail with an I/O error, until the failure (fail.c) has marked the
 * device stale or stopped it, and detached it; but a read of a device the
 * set holds no dirty data for reads the backing device.
 */

#include "hcache.h"
#include "debug.h"

#include <linux/bio.h>
#include <linux/interval_tree_generic.h>
#include <linux/kthread.h>
#include <linux/mempool.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>

#include "bypass.h"
#include "stats.h"
#include "trace.h"

/* Requests a backing device keeps ready for when memory is short. */
#define HC_REQUEST_RESERVE	64

/* Promotions written or inserted per pass of their work items. */
#define HC_PROMOTE_BATCH	32

/* Cached writes whose keys are inserted under one hold of meta_lock. */
#define HC_WRITE_BATCH		32

static struct workqueue_struct *hc_io_wq;

/* How long an insert or lookup that found no memory keeps trying. */
#define HC_NOMEM_WAIT		HZ

/*
 * An insert or lookup found no memory for a node (the reserve drained,
 * allocation failing): wait a little for reclaim and say whether to try
 * again. @deadline starts at 0 and is set at the first failure; past it,
 * HC_NOMEM_WAIT later, the caller gives up, so that no request waits
 * forever (it holds io_active, which a detach or stop waits for). Timed,
 * not counted: memalloc_retry_wait() sleeps a jiffy, so a count would
 * give a budget that follows HZ (50 tries were 200 ms at HZ=250). May
 * sleep.
 */
static bool hc_nomem_retry(unsigned long *deadline)
{
	if (!*deadline)
		*deadline = (jiffies + HC_NOMEM_WAIT) | 1;	/* never 0 */
	else if (time_after(jiffies, *deadline))
		return false;
	memalloc_retry_wait(GFP_NOIO);
	return true;
}

static int hc_write_drain_locked(struct hc_cache_set *c);
static int hc_insert_optional(struct hc_cache_set *c, const struct hc_key *k);

#define HC_TRACK_START(t)	((t)->start)
#define HC_TRACK_LAST(t)	((t)->end - 1)
INTERVAL_TREE_DEFINE(struct hc_track, node, u64, subtree_last,
		     HC_TRACK_START, HC_TRACK_LAST, static, hc_track_tree);

/*
 * The first track in @b's tree that overlaps @t, and the next after @o:
 * none for a @t of no sectors. track_lock held.
 */
static struct hc_track *hc_track_first(struct hc_backing *b,
				       const struct hc_track *t)
{
	if (t->start >= t->end)
		return NULL;
	return hc_track_tree_iter_first(&b->track_tree, t->start, t->end - 1);
}

static struct hc_track *hc_track_next(struct hc_track *o,
				      const struct hc_track *t)
{
	return hc_track_tree_iter_next(o, t->start, t->end - 1);
}

/**
 * hc_track_init() - a track in no tree yet
 * @t: the track
 */
void hc_track_init(struct hc_track *t)
{
	RB_CLEAR_NODE(&t->node);
}

static bool hc_track_on(const struct hc_track *t)
{
	return !RB_EMPTY_NODE(&t->node);
}

/* Into @b's tree, if it has any sectors; track_lock held. */
static void hc_track_insert(struct hc_backing *b, struct hc_track *t)
{
	lockdep_assert_held(&b->track_lock);
	if (t->start < t->end)
		hc_track_tree_insert(t, &b->track_tree);
}

/*
 * Put @t in the tree of I/O in flight. A write collides every overlapping
 * read in flight; a read is collided if an overlapping write is in flight,
 * or if @from (the request a promotion comes from, or NULL) was collided
 * since it started: read in the same hold of track_lock, so that no write
 * can start and end between the two unseen.
 *
 * Return: for a read, whether an overlapping write was acked already
 * (hc_write_ack()) but its key may not be in yet: the read must call
 * hc_write_drain() before its lookup. False for a write.
 */
static bool hc_track_add(struct hc_backing *b, struct hc_track *t,
			 bool write, const struct hc_track *from)
{
	struct hc_track *o;
	unsigned long flags;
	bool acked = false;

	t->write = write;
	t->acked = false;
	spin_lock_irqsave(&b->track_lock, flags);
	t->collided = from && from->collided;
	for (o = hc_track_first(b, t); o; o = hc_track_next(o, t)) {
		if (o->write == write)
			continue;
		if (write) {
			o->collided = true;
		} else {
			t->collided = true;
			acked |= o->acked;
		}
	}
	hc_track_insert(b, t);
	spin_unlock_irqrestore(&b->track_lock, flags);
	return acked;
}

/* Was a write overlapping read @t acked before its key went in? */
static bool hc_track_acked(struct hc_backing *b, struct hc_track *t)
{
	struct hc_track *o;
	unsigned long flags;
	bool acked = false;

	spin_lock_irqsave(&b->track_lock, flags);
	for (o = hc_track_first(b, t); o; o = hc_track_next(o, t))
		acked |= o->write && o->acked;
	spin_unlock_irqrestore(&b->track_lock, flags);
	return acked;
}

/* Out of the tree; returns whether a write raced it. */
static bool hc_track_end(struct hc_backing *b, struct hc_track *t)
{
	unsigned long flags;
	bool collided;

	spin_lock_irqsave(&b->track_lock, flags);
	if (hc_track_on(t)) {
		hc_track_tree_remove(t, &b->track_tree);
		RB_CLEAR_NODE(&t->node);
	}
	collided = t->collided;
	spin_unlock_irqrestore(&b->track_lock, flags);
	return collided;
}

static bool hc_track_collided(struct hc_backing *b, struct hc_track *t)
{
	unsigned long flags;
	bool collided;

	spin_lock_irqsave(&b->track_lock, flags);
	collided = t->collided;
	spin_unlock_irqrestore(&b->track_lock, flags);
	return collided;
}

/**
 * hc_track_writeback_begin() - put a writeback write in the tree, if it may go
 * @b: the backing device
 * @t: the range about to be written back
 *
 * Writeback writes data older than any foreground write to the same range
 * (the key it writes back was still in the tree when it checked, after
 * reading the data). A foreground write in flight over the range may have
 * replaced that key already, and its data must not be overwritten: then
 * the writeback waits for a later pass. A foreground write that starts
 * later waits for @t before writing the backing device
 * (hc_track_wait_writeback()). Called under the hold of meta_lock that
 * found the key current: every foreground write is in the tree from
 * before it changes the tree until after, so one that could have dropped
 * the key without this seeing it is either in the tree now, or done and
 * its change seen by the check.
 *
 * Return: true if @t is in the tree; false if a foreground write overlaps.
 */
bool hc_track_writeback_begin(struct hc_backing *b, struct hc_track *t)
{
	struct hc_track *o;
	unsigned long flags;
	bool ok = true;

	t->write = true;
	t->writeback = true;
	t->collided = false;
	t->acked = false;
	spin_lock_irqsave(&b->track_lock, flags);
	for (o = hc_track_first(b, t); o; o = hc_track_next(o, t)) {
		if (o->write && !o->writeback) {
			ok = false;
			break;
		}
		if (!o->write)
			o->collided = true;
	}
	if (ok)
		hc_track_insert(b, t);
	spin_unlock_irqrestore(&b->track_lock, flags);
	return ok;
}

/**
 * hc_track_writeback_end() - a writeback write is done
 * @b: the backing device
 * @t: as given to hc_track_writeback_begin()
 */
void hc_track_writeback_end(struct hc_backing *b, struct hc_track *t)
{
	hc_track_end(b, t);
	wake_up_all(&b->wb.track_wait);
}

/*
 * Is a write other than @t in flight over @t's range: a writeback write
 * with @writeback, else a foreground one?
 */
static bool hc_track_write_overlaps(struct hc_backing *b,
				    const struct hc_track *t, bool writeback)
{
	struct hc_track *o;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&b->track_lock, flags);
	for (o = hc_track_first(b, t); o; o = hc_track_next(o, t)) {
		if (o != t && o->write && o->writeback == writeback) {
			found = true;
			break;
		}
	}
	spin_unlock_irqrestore(&b->track_lock, flags);
	return found;
}

/*
 * Before a foreground write goes to the backing device: wait for the
 * writeback writes in flight over its range, which carry older data.
 */
static void hc_track_wait_writeback(struct hc_backing *b,
				    const struct hc_track *t)
{
	wait_event(b->wb.track_wait, !hc_track_write_overlaps(b, t, true));
}

/**
 * struct hc_request - a bio sent to an attached /dev/hcacheN
 * @track: in the backing device's tree of I/O in flight
 * @bio: the bio
 * @b: its backing device
 * @c: the cache set, b->io_cache when the request started
 * @id: the backing device's id in @c
 * @start_time: for the disk's I/O accounting
 * @work: runs the request, and re-runs fragments of a read
 * @remaining: fragments in flight, plus one while fragments are issued
 * @status: the first error
 * @done: a write's worker waits here for its I/O
 * @mode: the cache mode when it started; a switch applies to later ones
 * @reason: why it bypasses the cache, HC_BYPASS_NONE if it does not
 * @missed: some of a read was not cached
 * @cache_failed: a cached write's cache I/O failed
 * @fallback: a cached write that failed in part: its keys stay out, and
 *	hc_write_fallback_work() finishes it around the cache
 * @acked: a writeback write whose bio was ended before its key went in
 *	(hc_write_ack()); @remaining then counts the two owners left
 * @in_place: a write over dirty data where the cache holds it, with no
 *	key of its own (hc_write_in_place()): its one fragment is that
 * @resume: where a read stopped in submit_bio() for a worker to go on
 * @frags: a write's fragments, kept until their keys are inserted
 * @through: a writethrough write's clone for the backing device
 * @inserts: on the set's write_done once a cached write's I/O is done
 * @insert_ret: the insert of its keys (and journal write, for FUA)
 * @dirty: writeback: the device's dirty sectors after its insert
 */
struct hc_request {
	struct hc_track		track;
	struct bio		*bio;
	struct hc_backing	*b;
	struct hc_cache_set	*c;
	u32			id;
	unsigned long		start_time;
	struct work_struct	work;
	atomic_t		remaining;
	blk_status_t		status;
	struct completion	done;
	unsigned int		mode;
	enum hc_bypass_reason	reason;
	bool			missed;
	bool			cache_failed;
	bool			fallback;
	bool			acked;
	bool			in_place;
	u64			resume;
	struct list_head	frags;
	struct hc_frag		*through;
	struct list_head	inserts;
	int			insert_ret;
	u64			dirty;
};

/**
 * struct hc_promote - a read miss on its way into the cache
 * @track: on the backing device's list, so that writes can collide it
 * @b: the backing device
 * @c: the cache set
 * @key: the key to insert: range, pointer once allocated, clean
 * @done: on the set's promote_todo once read, promote_done once written
 * @bio: a bio of our own pages: the miss is read from the backing device
 *	into them, copied from them to the reader, and written from them to
 *	the cache. Never the reader's pages, which the reader may change at
 *	any moment (an O_DIRECT buffer): what the cache stores was on disk.
 */
struct hc_promote {
	struct hc_track		track;
	struct hc_backing	*b;
	struct hc_cache_set	*c;
	struct hc_key		key;
	struct list_head	done;
	struct bio		*bio;
};

/**
 * struct hc_frag - a clone of a request's bio for one piece of it
 * @req: the request
 * @node: on @req->frags (writes)
 * @start: first backing sector of the piece
 * @sectors: its size
 * @ptr: the cache pointer read from or written to, 0 for the backing device
 * @dirty: a read from a dirty key
 * @promote: a read miss's promotion, or NULL; then @bio is not
 *	submitted: the promotion's own bio reads the data, which is copied
 *	into @bio's pages (hc_promote_deliver_work())
 * @iter: the clone's position before it was submitted, to copy to
 * @work: looks the piece up again (a read from a reused bucket), or
 *	delivers a promotion's data
 * @bio: the clone; last, the bio set's front padding ends here
 */
struct hc_frag {
	struct hc_request	*req;
	struct list_head	node;
	u64			start;
	u32			sectors;
	u64			ptr;
	bool			dirty;
	struct hc_promote	*promote;
	struct bvec_iter	iter;
	struct work_struct	work;
	struct bio		bio;
};

/*
 * A request or promotion is done with the set. The last one completes
 * io_drained for hc_request_detach(), which then frees what @b's I/O path
 * owns: nothing of @b may be touched after the decrement. A completion
 * (unlike a wait queue) is safe for that: its waiter cannot return before
 * complete() has let go of it.
 */
static void hc_io_put(struct hc_backing *b)
{
	if (atomic_dec_and_test(&b->io_active))
		complete(&b->io_drained);
}

/*
 * Was the bucket @ptr points into reused since? Read without meta_lock
 * by completing reads; the tree keeps stale keys until overwritten.
 */
static bool hc_ptr_stale_now(struct hc_cache_set *c, u64 ptr)
{
	u64 bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(ptr));

	return hc_ptr_stale(READ_ONCE(c->buckets[bucket].gen),
			    hc_ptr_gen(ptr));
}

static void hc_request_free(struct hc_request *req)
{
	struct hc_backing *b = req->b;

	mempool_free(req, b->req_pool);
	hc_io_put(b);
}

static void hc_request_set_error(struct hc_request *req, blk_status_t status)
{
	if (status)
		cmpxchg(&req->status, BLK_STS_OK, status);
}

/* Count @n of @st for the backing device and for its set. */
static void hc_count(struct hc_backing *b, struct hc_cache_set *c,
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
static void hc_request_end_bio(struct hc_request *req)
{
	struct bio *bio = req->bio;

	hc_request_count(req);
	bio->bi_status = req->status;
	bio_end_io_acct(bio, req->start_time);
	bio_endio(bio);
}

/* One owner of an acked write is done with it; the last frees it. */
static void hc_request_put_acked(struct hc_request *req)
{
	if (atomic_dec_and_test(&req->remaining))
		hc_request_free(req);
}

/*
 * The last fragment is done, or a write's worker is: end the bio. An
 * acked write's bio has ended already; its track goes only now, once its
 * key is in, so that reads overlapping it know to wait for that.
 */
static void hc_request_end(struct hc_request *req)
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

static void hc_request_put(struct hc_request *req)
{
	if (atomic_dec_and_test(&req->remaining))
		hc_request_end(req);
}

/* A clone of the request's bio for sectors [start, start + sectors). */
static struct hc_frag *hc_frag_alloc(struct hc_request *req,
				     struct block_device *bdev, u64 start,
				     u32 sectors)
{
	struct bio *clone = bio_alloc_clone(bdev, req->bio, GFP_NOIO,
					    &req->b->clone_set);
	struct hc_frag *f = container_of(clone, struct hc_frag, bio);

	bio_trim(clone, start - req->bio->bi_iter.bi_sector, sectors);
	f->req = req;
	INIT_LIST_HEAD(&f->node);
	f->start = start;
	f->sectors = sectors;
	f->ptr = 0;
	f->dirty = false;
	f->promote = NULL;
	clone->bi_private = f;
	return f;
}

/* ---- Promotion ---------------------------------------------------------- */

static void hc_promote_free(struct hc_promote *p)
{
	struct hc_backing *b = p->b;

	if (hc_track_on(&p->track))
		hc_track_end(b, &p->track);
	if (p->bio) {
		bio_free_pages(p->bio);
		bio_uninit(p->bio);
		kfree(p->bio);
	}
	kfree(p);
	hc_io_put(b);
}

/*
 * Pages for a miss of @sectors; NULL when memory is short, which only
 * costs the promotion.
 */
static struct hc_promote *hc_promote_alloc(struct hc_request *req, u64 start,
					   u32 sectors)
{
	const gfp_t gfp = GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN;
	unsigned int nr = DIV_ROUND_UP(sectors << SECTOR_SHIFT, PAGE_SIZE);
	unsigned int bytes = sectors << SECTOR_SHIFT, i;
	struct hc_promote *p;
	struct bio *bio;

	p = kzalloc(sizeof(*p), gfp);
	if (!p)
		return NULL;
	bio = bio_kmalloc(nr, gfp);
	if (!bio) {
		kfree(p);
		return NULL;
	}
	bio_init(bio, req->b->bdev, bio->bi_inline_vecs, nr, REQ_OP_READ);
	for (i = 0; i < nr; i++) {
		unsigned int len = min_t(unsigned int, bytes, PAGE_SIZE);
		struct page *page = alloc_page(gfp);

		if (!page || !bio_add_page(bio, page, len, 0)) {
			if (page)
				__free_page(page);
			bio_free_pages(bio);
			bio_uninit(bio);
			kfree(bio);
			kfree(p);
			return NULL;
		}
		bytes -= len;
	}
	p->b = req->b;
	p->c = req->c;
	p->bio = bio;
	p->key = (struct hc_key){
		.bdev_id = req->id,
		.end = start + sectors,
		.size = sectors,
		.nr_ptrs = 1,
	};
	hc_track_init(&p->track);
	p->track.start = start;
	p->track.end = start + sectors;
	atomic_inc(&req->b->io_active);
	hc_debug_delay(HC_DELAY_PROMOTE_TRACK);
	/* Collided already if a write raced the request since it started. */
	hc_track_add(req->b, &p->track, false, &req->track);
	return p;
}

static void hc_promote_collided(struct hc_promote *p)
{
	hc_count(p->b, p->c, HC_STAT_MISS_COLLISIONS, 1);
}

/* What hc_cache_space() may do when the open bucket has not room enough. */
enum hc_open {
	HC_OPEN_NOIO,	/* open the next bucket, unless that needs I/O */
	HC_OPEN_ANY,	/* open the next bucket, refilling if need be */
};

/*
 * Cache space for @want sectors: carved from the open bucket under
 * meta_lock held for reading, which is what nearly every call needs;
 * opening a new bucket takes it for writing, and may wait for a refill's
 * I/O: -EAGAIN then, with HC_OPEN_NOIO.
 */
static int hc_cache_space(struct hc_cache_set *c, u32 want, bool whole,
			  enum hc_open open, u8 *gen, u64 *offset, u32 *got)
{
	u32 align = c->block_size >> SECTOR_SHIFT;
	int ret;

	down_read(&c->meta_lock);
	ret = c->meta_failed ? -EIO :
	      hc_open_bucket_take(c, want, align, whole, false, gen, offset,
				  got);
	up_read(&c->meta_lock);
	if (ret != -EAGAIN)
		return ret;
	hc_meta_lock_write(c);
	if (c->meta_failed)
		ret = -EIO;
	else if (open == HC_OPEN_NOIO && hc_data_open_needs_io(c))
		ret = -EAGAIN;
	else
		ret = hc_open_bucket_take(c, want, align, whole, true, gen,
					  offset, got);
	up_write(&c->meta_lock);
	return ret;
}

/*
 * Insert the keys of promotions written, a few per meta_lock: lookups
 * wait while it is held. A promotion collided by a write is dropped here,
 * under meta_lock, where no write can slip in between the check and the
 * insert.
 */
static void hc_promote_insert_pass(struct hc_cache_set *c)
{
	struct hc_promote *p, *tmp;
	unsigned int n;
	bool inserted;
	LIST_HEAD(done);

	spin_lock_irq(&c->promote_lock);
	list_splice_init(&c->promote_done, &done);
	spin_unlock_irq(&c->promote_lock);

	while (!list_empty(&done)) {
		n = 0;
		hc_meta_lock_write(c);
		list_for_each_entry_safe(p, tmp, &done, done) {
			if (n++ == HC_PROMOTE_BATCH)
				break;
			inserted = false;
			if (hc_track_end(p->b, &p->track))
				hc_promote_collided(p);
			else if (!p->bio->bi_status && !c->meta_failed)
				inserted = !hc_insert_optional(c, &p->key);
			trace_hcache_promote(disk_devt(p->b->disk),
					     hc_key_start(&p->key), p->key.size,
					     inserted);
			hc_bucket_unpin(c, hc_ptr_offset(p->key.ptr));
			list_del(&p->done);
			hc_promote_free(p);
		}
		up_write(&c->meta_lock);
		cond_resched();
	}
}

static void hc_promote_write_endio(struct bio *bio)
{
	struct hc_promote *p = bio->bi_private;
	struct hc_cache_set *c = p->c;
	unsigned long flags;

	if (bio->bi_status)
		hc_cache_set_error(c, "promotion write at cache sector %llu failed: error %d",
				   hc_ptr_offset(p->key.ptr),
				   blk_status_to_errno(bio->bi_status));
	else
		atomic64_inc(&c->data_written);
	spin_lock_irqsave(&c->promote_lock, flags);
	list_add_tail(&p->done, &c->promote_done);
	spin_unlock_irqrestore(&c->promote_lock, flags);
	wake_up(&c->promote_wait);
}

/*
 * Point the promotion's bio, done with, at @bdev for @opf again, over the
 * same pages: bio_reset() keeps the vector table but forgets its length.
 */
static void hc_promote_bio_reset(struct hc_promote *p,
				 struct block_device *bdev, blk_opf_t opf)
{
	struct bio *bio = p->bio;
	unsigned short i, n = bio->bi_vcnt;
	struct bio_vec *bv = bio->bi_io_vec;

	bio_reset(bio, bdev, opf);
	for (i = 0; i < n; i++)
		__bio_add_page(bio, bv[i].bv_page, bv[i].bv_len,
			       bv[i].bv_offset);
}

/* A miss's data is in our pages: find it room in the cache and write it. */
static void hc_promote_write(struct hc_promote *p)
{
	struct hc_cache_set *c = p->c;
	u64 offset;
	u32 got;
	u8 gen;

	if (hc_track_collided(p->b, &p->track)) {
		hc_promote_collided(p);
		hc_promote_free(p);
		return;
	}
	if (hc_cache_space(c, p->key.size, true, HC_OPEN_ANY, &gen, &offset,
			   &got)) {
		hc_promote_free(p);	/* No room: the data stays uncached. */
		return;
	}
	p->key.ptr = hc_ptr_make(offset, 0, gen);
	hc_promote_bio_reset(p, c->bdev, REQ_OP_WRITE);
	p->bio->bi_iter.bi_sector = offset;
	p->bio->bi_private = p;
	p->bio->bi_end_io = hc_promote_write_endio;
	submit_bio_noacct(p->bio);
}

/* Write the misses read so far, under one plug. */
static void hc_promote_write_pass(struct hc_cache_set *c)
{
	struct hc_promote *p, *tmp;
	struct blk_plug plug;
	LIST_HEAD(todo);

	spin_lock_irq(&c->promote_lock);
	list_splice_init(&c->promote_todo, &todo);
	spin_unlock_irq(&c->promote_lock);
	blk_start_plug(&plug);
	list_for_each_entry_safe(p, tmp, &todo, done) {
		list_del(&p->done);
		hc_promote_write(p);
	}
	blk_finish_plug(&plug);
}

static bool hc_promote_pending(struct hc_cache_set *c)
{
	bool pending;

	spin_lock_irq(&c->promote_lock);
	pending = !list_empty(&c->promote_todo) ||
		  !list_empty(&c->promote_done);
	spin_unlock_irq(&c->promote_lock);
	return pending;
}

/**
 * hc_promote_thread() - writes and inserts a cache set's promotions
 * @arg: the cache set
 *
 * Promotions are work nobody waits for: this thread runs them at the
 * lowest priority, in passes over every one that is ready, so that they
 * take the CPU time reads and writes leave over rather than delay them.
 * Stopped (kthread_stop()) once no backing device is attached; it finishes
 * what is queued first.
 *
 * Return: 0.
 */
int hc_promote_thread(void *arg)
{
	struct hc_cache_set *c = arg;

	set_user_nice(current, MAX_NICE);
	for (;;) {
		wait_event_interruptible(c->promote_wait,
					 kthread_should_stop() ||
					 hc_promote_pending(c));
		if (kthread_should_stop() && !hc_promote_pending(c))
			return 0;
		hc_promote_write_pass(c);
		hc_promote_insert_pass(c);
	}
}

/* ---- Reads -------------------------------------------------------------- */

static u64 hc_read_range(struct hc_request *req, u64 start, u64 end,
			 bool backing_only, bool in_submit);

/* A fragment read from a bucket that was reused, or failed: read it again. */
static void hc_frag_retry_work(struct work_struct *work)
{
	struct hc_frag *f = container_of(work, struct hc_frag, work);
	struct hc_request *req = f->req;
	/*
	 * A failed read of clean data comes from the backing device. A read
	 * of a bucket reused since (failed or not) looks the range up
	 * again: moving GC may have copied dirty data elsewhere, and the
	 * backing device does not hold it. Gens only move forward, so what
	 * hc_read_endio() found stale is stale here too.
	 */
	bool failed = f->bio.bi_status != BLK_STS_OK &&
		      !hc_ptr_stale_now(req->c, f->ptr);

	hc_read_range(req, f->start, f->start + f->sectors, failed, false);
	bio_put(&f->bio);
	hc_request_put(req);
}

static void hc_read_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;
	struct hc_cache_set *c = req->c;

	if (f->ptr) {
		bool stale = hc_ptr_stale_now(c, f->ptr);

		if (bio->bi_status && !stale)
			hc_cache_set_error(c, "read at cache sector %llu failed: error %d",
					   hc_ptr_offset(f->ptr),
					   blk_status_to_errno(bio->bi_status));
		if (stale || (bio->bi_status && !f->dirty)) {
			INIT_WORK(&f->work, hc_frag_retry_work);
			queue_work(hc_io_wq, &f->work);
			return;
		}
	}
	hc_request_set_error(req, bio->bi_status);
	bio_put(bio);
	hc_request_put(req);
}

/*
 * A promoted miss was read into our pages: copy it to the reader's, in a
 * worker rather than in bio completion (up to a bucket of it), then let
 * the promotion thread write our copy to the cache.
 */
static void hc_promote_deliver_work(struct work_struct *work)
{
	struct hc_frag *f = container_of(work, struct hc_frag, work);
	struct hc_request *req = f->req;
	struct hc_promote *p = f->promote;
	struct hc_cache_set *c = req->c;
	struct bvec_iter src = { .bi_size = p->key.size << SECTOR_SHIFT };

	bio_copy_data_iter(&f->bio, &f->iter, p->bio, &src);
	spin_lock_irq(&c->promote_lock);
	list_add_tail(&p->done, &c->promote_todo);
	spin_unlock_irq(&c->promote_lock);
	wake_up(&c->promote_wait);
	bio_put(&f->bio);
	hc_request_put(req);
}

static void hc_promote_read_endio(struct bio *bio)
{
	struct hc_frag *f = bio->bi_private;
	struct hc_request *req = f->req;

	if (bio->bi_status) {
		hc_request_set_error(req, bio->bi_status);
		hc_promote_free(f->promote);
		bio_put(&f->bio);
		hc_request_put(req);
		return;
	}
	INIT_WORK(&f->work, hc_promote_deliver_work);
	queue_work(hc_io_wq, &f->work);
}

/*
 * A miss read for promotion: into the promotion's pages, not the reader's
 * (see struct hc_promote), the clone @f kept for where the data goes.
 */
static void hc_promote_read_submit(struct hc_frag *f)
{
	struct hc_promote *p = f->promote;

	atomic_inc(&f->req->remaining);
	f->iter = f->bio.bi_iter;
	/* Charged to the reader's cgroup, not to whoever runs this. */
	bio_clone_blkg_association(p->bio, &f->bio);
	p->bio->bi_iter.bi_sector = f->bio.bi_iter.bi_sector;
	p->bio->bi_opf |= f->bio.bi_opf & (REQ_SYNC | REQ_META | REQ_PRIO);
	p->bio->bi_private = f;
	p->bio->bi_end_io = hc_promote_read_endio;
	submit_bio_noacct(p->bio);
}

static void hc_frag_submit(struct hc_frag *f, bio_end_io_t *endio)
{
	struct hc_request *req = f->req;

	atomic_inc(&req->remaining);
	f->bio.bi_end_io = endio;
	f->iter = f->bio.bi_iter;
	submit_bio_noacct(&f->bio);
}

/* Whether the backing device's admission policy promotes a missed range. */
static bool hc_read_admit(struct hc_request *req,
			  const struct hc_admit_policy *admit,
			  u64 start, u32 n)
{
	struct hc_admit_in in = {
		.ghost = &req->c->admit_ghost,
		.bdev_id = req->id,
		.sector = start,
		.sectors = n,
		.free_percent = READ_ONCE(req->c->free_percent),
	};

	return admit->admit(&in);
}

/*
 * Sectors [start, end) of a read request, fragment by fragment. In the
 * submitter's context (@in_submit), which may not wait for bios it
 * submits, a node that is not cached stops it: the return value is where
 * it stopped, for a worker to go on from. Otherwise it returns @end.
 */
static u64 hc_read_range(struct hc_request *req, u64 start, u64 end,
			 bool backing_only, bool in_submit)
{
	struct hc_backing *b = req->b;
	struct hc_cache_set *c = req->c;
	const struct hc_admit_policy *admit =
		&hc_admit_policies[READ_ONCE(b->admit)];
	unsigned long nomem_deadline = 0;
	bool promote;
	struct hc_frag *f;
	struct hc_key k;
	u64 gap_end;
	u32 n;
	int ret;

	while (start < end) {
		if (backing_only) {
			ret = -ENOENT;
			gap_end = end;
		} else {
			down_read(&c->meta_lock);
			ret = hc_btree_lookup(c, req->id, start, end, &k,
					      &gap_end, in_submit);
			if (!ret && hc_ptr_stale_now(c, k.ptr)) {
				/* Evicted: a miss, which replaces the key. */
				ret = -ENOENT;
				gap_end = min(k.end, end);
			} else if (!ret) {
				hc_bucket_touch(c, hc_ptr_offset(k.ptr));
			}
			up_read(&c->meta_lock);
		}
		if (ret == -EAGAIN && in_submit)
			return start;
		/* No memory for the node to read: not the cache's fault. */
		if (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline))
			continue;
		if (ret == -ENOMEM) {
			hc_request_set_error(req, BLK_STS_RESOURCE);
			return end;
		}
		if (ret && ret != -ENOENT) {
			hc_cache_set_error(c, "lookup of %u:%llu failed: error %d",
					   req->id, start, ret);
			hc_request_set_error(req, BLK_STS_IOERR);
			return end;
		}
		if (!ret) {
			n = min(k.end, end) - start;
			f = hc_frag_alloc(req, c->bdev, start, n);
			f->ptr = k.ptr;
			f->dirty = k.flags & HC_KEY_DIRTY;
			f->bio.bi_iter.bi_sector = hc_ptr_offset(k.ptr) +
						   start - hc_key_start(&k);
			f->bio.bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
		} else {
			n = gap_end - start;
			promote = req->reason == HC_BYPASS_NONE && !backing_only;
			if (promote)
				n = min(n, c->geom.bucket_sectors);
			if (promote && !hc_read_admit(req, admit, start, n)) {
				req->reason = HC_BYPASS_POLICY;
				promote = false;
			}
			req->missed = true;
			f = hc_frag_alloc(req, b->bdev, start, n);
			f->bio.bi_iter.bi_sector = start + b->data_offset;
			if (promote)
				f->promote = hc_promote_alloc(req, start, n);
		}
		if (f->promote)
			hc_promote_read_submit(f);
		else
			hc_frag_submit(f, hc_read_endio);
		start += n;
	}
	return end;
}

/*
 * A read that met a node not cached in submit_bio(), or an acked write
 * whose key may not be in yet: go on from there.
 */
static void hc_read_resume_work(struct work_struct *work)
{
	struct hc_request *req = container_of(work, struct hc_request, work);

	if (hc_track_acked(req->b, &req->track))
		hc_write_drain(req->c);
	hc_read_range(req, req->resume, req->track.end, false, false);
	hc_request_put(req);
}

/*
 * Reads are run in the submitter's context: a lookup needs no I/O when
 * the nodes it visits are cached, as they nearly always are, and the
 * clones it submits are dispatched when submit_bio() returns. That saves
 * a worker's wake-up per read, which is most of what a miss costs us.
 */
static void hc_read(struct hc_request *req, bool in_submit)
{
	struct hc_backing *b = req->b;
	bool acked = hc_track_add(b, &req->track, false, NULL);

	/*
	 * A write over the range was acked before its key went in: insert
	 * it first (a worker, as that waits), or the lookup would miss data
	 * its submitter was told is written.
	 */
	if (acked && !in_submit)
		hc_write_drain(req->c);
	req->resume = req->track.start;
	if (!acked || !in_submit)
		req->resume = hc_read_range(req, req->track.start,
					    req->track.end, false, in_submit);
	if (req->resume < req->track.end) {
		INIT_WORK(&req->work, hc_read_resume_work);
		queue_work(hc_io_wq, &req->work);
		return;
	}
	hc_request_put(req);
}

/* ---- Writes ------------------------------------------------------------- */

/*
 * A write's clone completed: a failed cache write counts against the
 * cache device (the request may still succeed: see hc_write_finish()); a
 * failed backing write fails the request.
 */
static void hc_write_frag_status(struct hc_frag *f)
{
	struct hc_request *req = f->req;
	blk_status_t status = f->bio.bi_status;

	if (!status)
		return;
	if (f->ptr) {
		req->cache_failed = true;
		hc_cache_set_error(req->c, "write at cache sector %llu failed: error %d",
				   hc_ptr_offset(f->ptr),
				   blk_status_to_errno(status));
	} else {
		hc_request_set_error(req, status);
	}
}

/*
 * A write on behalf of a user reached the backing device: a clean key
 * may vouch for its data, so metadata writes flush the backing devices
 * first (backing_written), and the user's next flush flushes this one
 * (fg_written, hc_flush()). Called before the user's bio can end.
 */
static void hc_backing_write_done(struct hc_request *req)
{
	atomic64_inc(&req->c->backing_written);
	atomic64_inc(&req->b->fg_written);
}

static void hc_sync_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;

	if (!f->ptr && !bio->bi_status && op_is_write(bio_op(bio)))
		hc_backing_write_done(req);
	hc_write_frag_status(f);
	if (atomic_dec_and_test(&req->remaining))
		complete(&req->done);
}

/* Submit @f and count it; the worker waits for all in hc_sync_wait(). */
static void hc_sync_submit(struct hc_frag *f)
{
	atomic_inc(&f->req->remaining);
	f->bio.bi_end_io = hc_sync_endio;
	submit_bio_noacct(&f->bio);
}

static void hc_sync_wait(struct hc_request *req)
{
	if (!atomic_dec_and_test(&req->remaining))
		wait_for_completion_io(&req->done);
	reinit_completion(&req->done);
	atomic_set(&req->remaining, 1);
}

/* Send the request's bio, whole, to the backing device, and wait. */
static void hc_to_backing(struct hc_request *req, blk_opf_t strip)
{
	struct hc_frag *f = hc_frag_alloc(req, req->b->bdev,
					  req->track.start,
					  bio_sectors(req->bio));

	f->bio.bi_iter.bi_sector = req->track.start + req->b->data_offset;
	f->bio.bi_opf &= ~strip;
	if (op_is_write(bio_op(req->bio)))
		hc_track_wait_writeback(req->b, &req->track);
	hc_sync_submit(f);
	hc_sync_wait(req);
	bio_put(&f->bio);
}

/**
 * hc_insert() - journal a leaf key and insert it in the tree
 * @c: the set; meta_lock held for writing
 * @k: the key
 *
 * Memory pressure does not fail the set: an insert that found no node
 * (its reserve drained, allocation failing) changed nothing, and is tried
 * again after the reserve is topped up, evicting clean leaves, and a
 * short wait for reclaim; the key is journalled once, and inserting it
 * again changes nothing. Any other failure, or memory lasting out the
 * retries, latches the set as failed, as the tree may then disagree with
 * what was written.
 *
 * Return: 0 or -errno.
 */
int hc_insert(struct hc_cache_set *c, const struct hc_key *k)
{
	unsigned long nomem_deadline = 0;
	u64 seq = 0;	/* read below even when journalling failed */
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	ret = hc_journal_add(c, k, &seq);
	/* Until a leaf pins it, entries written meanwhile must keep it. */
	c->journal.insert_seq = seq;
	while (!ret) {
		ret = hc_btree_insert(c, k, seq);
		if (ret != -ENOMEM || !hc_nomem_retry(&nomem_deadline))
			break;
		ret = 0;
	}
	c->journal.insert_seq = 0;
	if (ret)
		hc_cache_set_meta_fail(c);
	return ret;
}

/*
 * hc_insert() for a key the cache may do without (a promotion): no
 * memory means it stays out, and the set goes on. Its journal entry
 * holds it already, so a whiteout over its range follows it there: a
 * replay must not bring back a clean key the tree never had, over which
 * a later write around the cache, finding nothing to drop, journalled
 * nothing. Return: 0, -ENOMEM, or hc_insert()'s error otherwise.
 */
static int hc_insert_optional(struct hc_cache_set *c, const struct hc_key *k)
{
	struct hc_key w = {
		.bdev_id = k->bdev_id,
		.end = k->end,
		.size = k->size,
	};
	u64 seq = 0;	/* read below even when journalling failed */
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	ret = hc_journal_add(c, k, &seq);
	c->journal.insert_seq = seq;
	if (!ret)
		ret = hc_btree_insert(c, k, seq);
	c->journal.insert_seq = 0;
	if (ret == -ENOMEM) {
		/* What of it went in is clean data, right: dropping it is too. */
		if (!hc_journal_add(c, &w, &seq))
			return -ENOMEM;
		ret = -EIO;
	}
	if (ret)
		hc_cache_set_meta_fail(c);
	return ret;
}

/* A key that drops whatever the cache holds of the request's range. */
static struct hc_key hc_request_whiteout(const struct hc_request *req)
{
	return (struct hc_key){
		.bdev_id = req->id,
		.end = req->track.end,
		.size = req->track.end - req->track.start,
	};
}

/*
 * Does the cache hold anything of the request's range: 1, 0 or -errno. A
 * lookup that found no memory for a node is tried again.
 */
static int hc_range_cached(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	unsigned long nomem_deadline = 0;
	struct hc_key k;
	u64 gap_end;
	int ret;

	do {
		down_read(&c->meta_lock);
		ret = hc_btree_lookup(c, req->id, req->track.start,
				      req->track.end, &k, &gap_end, false);
		up_read(&c->meta_lock);
	} while (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline));
	if (ret == -ENOENT)
		return gap_end < req->track.end;
	return ret ? ret : 1;
}

struct hc_clean_drop {
	struct hc_cache_set	*c;
	bool			dirty;
};

/* hc_btree_visit_range()'s callback for hc_invalidate_clean(). */
static int hc_clean_drop_piece(void *priv, const struct hc_key *k, u64 from,
			       u64 to)
{
	struct hc_clean_drop *x = priv;
	struct hc_key w = {
		.bdev_id = k->bdev_id,
		.end = to,
		.size = to - from,
	};

	if (k->flags & HC_KEY_DIRTY) {
		x->dirty = true;
		return 0;
	}
	return hc_insert(x->c, &w);
}

/*
 * Whiteouts over the clean keys in the request's range, leaving the dirty
 * ones be. Return: 1 if dirty data is left there, 0 if not, or -errno.
 */
static int hc_invalidate_clean(struct hc_request *req)
{
	struct hc_clean_drop x = { .c = req->c };
	unsigned long nomem_deadline = 0;
	int ret;

	/* A lookup that found no memory for a node goes over it again. */
	do {
		hc_meta_lock_write(req->c);
		ret = hc_btree_visit_range(req->c, req->id, req->track.start,
					   req->track.end, hc_clean_drop_piece,
					   &x);
		up_write(&req->c->meta_lock);
	} while (ret == -ENOMEM && hc_nomem_retry(&nomem_deadline));
	return ret ? ret : x.dirty;
}

/*
 * A write, discard or write-zeroes for the backing device alone: what the
 * cache holds of the range must go, but in an order a crash cannot undo.
 * Clean data goes before the backing device is written, so that it never
 * comes back over newer data there. Dirty data goes only once the new
 * data is durable on the backing device (written, then flushed): until
 * then a crash keeps the dirty data, which was acknowledged, rather than
 * exposing the older data below it. If the backing write fails, the
 * dirty data stays and is written back later, over whatever part of the
 * failed write landed. With @fua, the cache's part is durable before the
 * request completes. The keys of acked writes go in first, as the
 * invalidation must come after them. @written: the backing device has
 * the data already (a writethrough write whose cache half failed, see
 * hc_write_fallback_work()), its status in the request's.
 */
static void hc_write_around(struct hc_request *req, bool fua, bool written)
{
	struct hc_cache_set *c = req->c;
	struct hc_key w;
	int ret;

	hc_write_drain(c);
	ret = hc_range_cached(req);
	if (ret > 0)
		ret = hc_invalidate_clean(req);
	if (ret == 1) {
		if (!written)
			hc_to_backing(req, REQ_PREFLUSH);
		if (req->status)
			return;
		ret = blkdev_issue_flush(req->b->bdev);
		if (ret) {
			hc_request_set_error(req, errno_to_blk_status(ret));
			return;
		}
		w = hc_request_whiteout(req);
		hc_meta_lock_write(c);
		ret = hc_insert(c, &w);
		if (!ret && fua)
			ret = hc_journal_write_unlock(c);
		else
			up_write(&c->meta_lock);
		/* The cache may still vouch for older data: an error. */
		if (ret)
			hc_request_set_error(req, BLK_STS_IOERR);
		return;
	}
	if (!ret && fua) {
		/*
		 * A set that failed writes no journal: the whiteouts just
		 * made would not be durable, and the FUA write must not
		 * complete over clean keys that may come back.
		 */
		hc_meta_lock_write(c);
		if (c->meta_failed) {
			ret = -EIO;
			up_write(&c->meta_lock);
		} else if (c->journal.nr) {
			ret = hc_journal_write_unlock(c);
		} else {
			up_write(&c->meta_lock);
		}
	}
	if (ret) {
		hc_request_set_error(req, BLK_STS_IOERR);
		return;
	}
	if (!written)
		hc_to_backing(req, REQ_PREFLUSH);
}

/*
 * No key to journal, but data written to the cache since its last flush:
 * overwrites in place (hc_write_in_place()), which change no key. Flush
 * the cache device for them, with meta_lock let go: lookups and inserts
 * go on meanwhile. Return: 0 or the flush's error.
 */
static int hc_flush_cache_data(struct hc_cache_set *c)
{
	u64 seen = atomic64_read(&c->data_written);
	int ret;

	if (seen == READ_ONCE(c->data_flushed))
		return 0;
	ret = blkdev_issue_flush(c->bdev);
	if (ret) {
		hc_cache_set_error(c, "flush of the cache device failed: error %d",
				   ret);
		/*
		 * What it held may be gone, while a later flush could go well
		 * and make keys durable over it: as for a metadata write.
		 */
		hc_cache_set_fail(c, HC_FAIL_METADATA);
		return ret;
	}
	hc_meta_lock_write(c);
	/* Only forward: a journal write may have flushed more meanwhile. */
	if ((s64)(seen - c->data_flushed) > 0)
		c->data_flushed = seen;
	up_write(&c->meta_lock);
	return 0;
}

/*
 * A PREFLUSH: make every write completed so far durable. Their keys and
 * invalidations are in the journal's open entry (the acked writes' put
 * there now), or already written; the journal write's PREFLUSH flushes
 * the cache device's data under them. The backing device is flushed
 * first, so that a clean key (writethrough) is never durable before the
 * data it says the backing device holds, and so that writes passed to it
 * are durable; but only if a write to it completed since its last flush
 * that succeeded (fg_written): in writeback mode a flush then costs the
 * cache device's journal write alone, not a flush of a slow disk. A set
 * that can no longer write its metadata, or a key that could not go in,
 * fails the flush: the writes it covers are not durable.
 */
static int hc_flush(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct hc_cache_set *c = req->c;
	s64 written = atomic64_read(&b->fg_written);
	s64 flushed = atomic64_read(&b->fg_flushed);
	int ret;

	if (written != flushed) {
		ret = blkdev_issue_flush(b->bdev);
		if (ret)
			return ret;
		/* Only forward: a flush that sampled less may end later. */
		while (flushed < written &&
		       !atomic64_try_cmpxchg(&b->fg_flushed, &flushed, written))
			;
	}
	hc_debug_delay(HC_DELAY_FLUSH_BACKING);
	hc_meta_lock_write(c);
	ret = hc_write_drain_locked(c);
	if (!ret && c->meta_failed)
		ret = -EIO;
	if (!ret && c->journal.nr)
		return hc_journal_write_unlock(c);
	up_write(&c->meta_lock);
	if (!ret)
		ret = hc_flush_cache_data(c);
	return ret;
}

/* writeback: the backing superblock says dirty before a dirty write ends. */
static int hc_backing_mark_dirty(struct hc_backing *b)
{
	int ret = 0;

	if (READ_ONCE(b->sb.backing.state) == HC_STATE_DIRTY)
		return 0;
	mutex_lock(&b->sb_lock);
	if (b->sb.backing.state != HC_STATE_DIRTY) {
		unsigned int old = b->sb.backing.state;

		WRITE_ONCE(b->sb.backing.state, HC_STATE_DIRTY);
		ret = hc_backing_sb_write(b);
		if (ret)
			WRITE_ONCE(b->sb.backing.state, old);
	}
	mutex_unlock(&b->sb_lock);
	return ret;
}

/* Return the space of unwritten fragments: no key will point there. */
static void hc_write_frags_free(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	struct hc_frag *f, *tmp;

	if (list_empty(&req->frags))
		return;
	hc_meta_lock_write(c);
	list_for_each_entry(f, &req->frags, node) {
		if (req->in_place)
			hc_bucket_unpin_in_place(c, hc_ptr_offset(f->ptr));
		else
			hc_bucket_unpin(c, hc_ptr_offset(f->ptr));
	}
	up_write(&c->meta_lock);
	list_for_each_entry_safe(f, tmp, &req->frags, node) {
		list_del(&f->node);
		bio_put(&f->bio);
	}
}

/*
 * Cache space for the whole write, fragment by fragment, going on from
 * the fragments it has already. In submit_bio() (@open not HC_OPEN_ANY)
 * it returns -EAGAIN or another error, keeping what it got, when it
 * cannot have the rest without waiting for I/O. With HC_OPEN_ANY,
 * -ENOSPC (and nothing allocated) when the cache has not enough room.
 */
static int hc_write_alloc(struct hc_request *req, enum hc_open open)
{
	struct hc_cache_set *c = req->c;
	u64 pos = req->track.start, offset;
	struct hc_frag *f;
	int ret = 0;
	u32 got;
	u8 gen;

	if (!list_empty(&req->frags)) {
		f = list_last_entry(&req->frags, struct hc_frag, node);
		pos = f->start + f->sectors;
	}
	while (pos < req->track.end) {
		ret = hc_cache_space(c, req->track.end - pos, false, open,
				     &gen, &offset, &got);
		if (ret)
			break;
		f = hc_frag_alloc(req, c->bdev, pos, got);
		f->ptr = hc_ptr_make(offset, 0, gen);
		f->bio.bi_iter.bi_sector = offset;
		f->bio.bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
		list_add_tail(&f->node, &req->frags);
		pos += got;
	}
	if (ret && open == HC_OPEN_ANY)
		hc_write_frags_free(req);
	return ret;
}

/*
 * An overwrite in place: a writeback-mode write that falls within one
 * dirty key is written over that key's data, where the key points
 * already, instead of to a new place under a key of its own. It costs no
 * cache space, no insert and no journal entry, and it leaves nothing for
 * moving GC and writeback to gather again: random overwrites otherwise
 * spread a cache's dirty data thinly over its buckets, and a full cache
 * sends them around. The rules (design.rst, "Overwrites in place"):
 *
 *  - the key stays as it is: dirty, the same pointer, durable or not yet.
 *    The data is durable at the next flush, which flushes the cache
 *    device even when no key changed (hc_flush()). A FUA write takes a
 *    new place: its key would have to be durable at its end too;
 *  - the bucket is not reused meanwhile: the write pins it (io_pin) from
 *    the lookup that found the key current until its I/O completes
 *    (hc_write_in_place_done(), or hc_write_insert() if it failed), as a
 *    write into the open bucket does;
 *  - nothing copies the data elsewhere while it may land: writeback pins
 *    the buckets it collects from (copy_pin) until it has marked them
 *    clean, and moving GC flags the buckets it chose (gc.move); an
 *    overwrite takes neither kind, writeback no bucket an overwrite
 *    pinned (inplace_pin), moving GC none with io_pin. Else either could
 *    read the older data, then vouch for its copy over the newer;
 *  - no other write over the range is in flight: one acked before its
 *    key went in would have that key, and its older data, land over this.
 *
 * @cached_only as for hc_btree_lookup(). Return: true if @req has its one
 * fragment, pinned; false if it takes the usual way.
 */
static bool hc_write_in_place(struct hc_request *req, bool cached_only)
{
	struct hc_cache_set *c = req->c;
	u64 start = req->track.start, end = req->track.end;
	u64 gap_end, bucket = 0, offset = 0;
	struct hc_bucket *bk;
	struct hc_frag *f;
	struct hc_key k;
	bool ok;

	if (req->mode != HC_MODE_WRITEBACK || bio_op(req->bio) != REQ_OP_WRITE ||
	    (req->bio->bi_opf & REQ_FUA) || !list_empty(&req->frags) ||
	    start >= end || hc_track_write_overlaps(req->b, &req->track, false))
		return false;
	down_read(&c->meta_lock);
	ok = !c->meta_failed &&
	     !hc_btree_lookup(c, req->id, start, end, &k, &gap_end,
			      cached_only) &&
	     k.nr_ptrs == 1 && (k.flags & HC_KEY_DIRTY) && k.end >= end;
	if (ok) {
		offset = hc_ptr_offset(k.ptr) + (start - hc_key_start(&k));
		bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(k.ptr));
		ok = bucket < c->geom.nbuckets;
	}
	if (ok) {
		bk = &c->buckets[bucket];
		spin_lock_irq(&c->alloc_lock);
		ok = bk->m.type == HC_BUCKET_DATA &&
		     !hc_ptr_stale(bk->gen, hc_ptr_gen(k.ptr)) &&
		     !bk->copy_pin && bk->io_pin < U16_MAX &&
		     bk->inplace_pin < U16_MAX &&
		     !test_bit(bucket, c->gc.move);
		if (ok) {
			bk->io_pin++;
			bk->inplace_pin++;
		}
		spin_unlock_irq(&c->alloc_lock);
		/* In use as much as a read hit: lru keeps the bucket. */
		if (ok)
			hc_bucket_touch(c, offset);
	}
	up_read(&c->meta_lock);
	if (!ok)
		return false;
	f = hc_frag_alloc(req, c->bdev, start, end - start);
	f->ptr = hc_ptr_make(offset, hc_ptr_dev(k.ptr), hc_ptr_gen(k.ptr));
	f->bio.bi_iter.bi_sector = offset;
	f->bio.bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
	list_add_tail(&f->node, &req->frags);
	req->in_place = true;
	return true;
}

/* Mark an acked write's track, or unmark it once its key is in. */
static void hc_track_set_acked(struct hc_backing *b, struct hc_track *t,
			       bool acked)
{
	unsigned long flags;

	spin_lock_irqsave(&b->track_lock, flags);
	t->acked = acked;
	spin_unlock_irqrestore(&b->track_lock, flags);
}

/*
 * Queue a cached write whose I/O is done on write_done, for write_work to
 * insert its keys. One that waits for that (not acked) has it run now; an
 * acked one lets it gather a batch, up to a jiffy or HC_WRITE_BATCH
 * acked writes: the worker's wake-up and the two context switches around
 * it cost more than the insert, under TCG nearly as much as the write.
 */
static void hc_write_queue(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	unsigned long flags;

	spin_lock_irqsave(&c->write_lock, flags);
	list_add_tail(&req->inserts, &c->write_done);
	spin_unlock_irqrestore(&c->write_lock, flags);
	if (!req->acked ||
	    atomic_inc_return(&c->write_acked) >= HC_WRITE_BATCH)
		mod_delayed_work(hc_io_wq, &c->write_work, 0);
	else
		queue_delayed_work(hc_io_wq, &c->write_work, 1);
}

/*
 * An overwrite in place that went well ends as soon as its I/O does, in
 * whatever context that completed: it has no key to insert, so nothing
 * waits for write_work. Its bucket is unpinned before the bio ends.
 */
static void hc_write_in_place_done(struct hc_request *req)
{
	struct hc_frag *f = list_first_entry(&req->frags, struct hc_frag,
					     node);

	hc_bucket_unpin_in_place(req->c, hc_ptr_offset(f->ptr));
	list_del(&f->node);
	bio_put(&f->bio);
	hc_writeback_dirty_end(req->b);
	hc_count(req->b, req->c, HC_STAT_WRITES_IN_PLACE, 1);
	hc_request_end(req);
}

/*
 * The last I/O of a cached write is done. A writeback write that went
 * well and asked for no FUA is acked at once: its bio ends now, before
 * its key is in the tree, which its submitter cannot tell apart, as
 * nothing is durable before a flush anyway. What could tell is kept
 * from seeing it: its track stays in the tree, marked acked, until the
 * key is in; a read over it (hc_read()), a write that goes around the
 * cache (hc_write_around()) and a flush (hc_flush()) insert the
 * keys of every write done first (hc_write_drain()); cached writes
 * insert in the order their I/O completed. It holds its bucket's pin
 * and the device's dirtying count until then, like any cached write.
 * Anything else waits for its key: writethrough (the key says the
 * backing device has the data), FUA (the journal first), a failure.
 */
static void hc_write_io_done(struct hc_request *req)
{
	if (req->in_place && !req->status && !READ_ONCE(req->cache_failed)) {
		hc_write_in_place_done(req);
		return;
	}
	if (req->mode != HC_MODE_WRITEBACK || req->status ||
	    READ_ONCE(req->cache_failed) || (req->bio->bi_opf & REQ_FUA)) {
		hc_write_queue(req);
		return;
	}
	/* Two owners: this, and write_work once the key is in. */
	req->acked = true;
	atomic_set(&req->remaining, 2);
	/* Queued before it is marked, so that a drain finds it. */
	hc_write_queue(req);
	hc_track_set_acked(req->b, &req->track, true);
	hc_request_end_bio(req);
	hc_request_put_acked(req);
}

static void hc_write_endio(struct bio *bio)
{
	struct hc_frag *f = container_of(bio, struct hc_frag, bio);
	struct hc_request *req = f->req;

	/* Counted before the key goes in: metadata then flushes it first. */
	if (!bio->bi_status && f->ptr)
		atomic64_inc(&req->c->data_written);
	else if (!bio->bi_status)
		hc_backing_write_done(req);
	hc_write_frag_status(f);
	if (atomic_dec_and_test(&req->remaining))
		hc_write_io_done(req);
}

static void hc_write_submit_frag(struct hc_frag *f)
{
	atomic_inc(&f->req->remaining);
	f->bio.bi_end_io = hc_write_endio;
	/* The debug build can fail a cache write as the device would. */
	if (f->ptr && hc_debug_fault(HC_FAULT_CACHE_WRITE)) {
		bio_io_error(&f->bio);
		return;
	}
	submit_bio_noacct(&f->bio);
}

/*
 * writethrough and writeback, with the cache space allocated (and for
 * writethrough, no writeback write in flight over the range): write the
 * cache, and the backing device too for writethrough. Nothing waits: the
 * last completion queues the request for hc_write_insert_work().
 */
static void hc_write_cached_submit(struct hc_request *req)
{
	struct hc_frag *f;

	list_for_each_entry(f, &req->frags, node)
		hc_write_submit_frag(f);
	if (req->mode != HC_MODE_WRITEBACK) {
		f = hc_frag_alloc(req, req->b->bdev, req->track.start,
				  bio_sectors(req->bio));
		f->bio.bi_iter.bi_sector = req->track.start +
					   req->b->data_offset;
		f->bio.bi_opf &= ~REQ_PREFLUSH;
		req->through = f;
		hc_write_submit_frag(f);
	}
	if (atomic_dec_and_test(&req->remaining))
		hc_write_io_done(req);
}

/* hc_btree_visit_range()'s callback: is any of the range dirty? */
static int hc_dirty_piece(void *priv, const struct hc_key *k, u64 from,
			  u64 to)
{
	return (k->flags & HC_KEY_DIRTY) ? 1 : 0;
}

/*
 * Under meta_lock held for writing: insert the keys of a cached write
 * whose I/O is done. If any of it failed, none goes in: it is finished
 * around the cache (hc_write_fallback_work()), which drops what the cache
 * holds of the range in an order a crash cannot undo. A writethrough
 * write over dirty data goes in dirty: said clean, its key could be
 * durable (the journal's timer) before the backing device has flushed the
 * data, and a crash then would leave the backing device with neither the
 * new data nor the acknowledged dirty data the key replaced, once the
 * clean key is evicted. A failed lookup of what lies under it sends it
 * around the cache too. Sets req->insert_ret and, for a dirty key,
 * req->dirty.
 */
static void hc_write_insert(struct hc_request *req)
{
	struct hc_cache_set *c = req->c;
	bool dirty = req->mode == HC_MODE_WRITEBACK;
	struct hc_frag *f;
	int ret = 0;

	lockdep_assert_held_write(&c->meta_lock);
	req->fallback = READ_ONCE(req->cache_failed) || req->status;
	if (!dirty && !req->fallback) {
		ret = hc_btree_visit_range(c, req->id, req->track.start,
					   req->track.end, hc_dirty_piece, NULL);
		/*
		 * No telling (a lookup failed): around the cache, as a failed
		 * write. A dirty key here would need the backing superblock
		 * to say dirty first, which only writeback mode sees to.
		 */
		if (ret < 0)
			req->fallback = true;
		dirty = ret > 0;
		ret = 0;
	}
	list_for_each_entry(f, &req->frags, node) {
		struct hc_key k = {
			.bdev_id = req->id,
			.end = f->start + f->sectors,
			.size = f->sectors,
			.ptr = f->ptr,
			.nr_ptrs = 1,
			.flags = dirty ? HC_KEY_DIRTY : 0,
		};

		/* In place, the key that points there stays as it is. */
		if (req->in_place) {
			hc_bucket_unpin_in_place(c, hc_ptr_offset(f->ptr));
			continue;
		}
		if (!ret && !req->fallback)
			ret = hc_insert(c, &k);
		hc_bucket_unpin(c, hc_ptr_offset(f->ptr));
	}
	if (ret) {
		struct hc_key w = hc_request_whiteout(req);

		ret = hc_insert(c, &w);
	}
	req->insert_ret = ret;
	req->dirty = dirty && !req->fallback ? hc_dirty_sectors(c, req->id) : 0;
}

/*
 * A cached write that failed in part (req->fallback), finished around the
 * cache in a worker, as it waits for the backing device: in writeback its
 * data is nowhere yet and goes to the backing device now; in writethrough
 * the backing device has it already (or failed it, and the request fails).
 * Either way, hc_write_around() drops what the cache holds of the range:
 * the clean keys at once, the dirty ones only once the new data is durable
 * on the backing device.
 */
static void hc_write_fallback_work(struct work_struct *work)
{
	struct hc_request *req = container_of(work, struct hc_request, work);
	bool writeback = req->mode == HC_MODE_WRITEBACK;

	hc_debug_delay(HC_DELAY_WRITE_FALLBACK);
	atomic_set(&req->remaining, 1);
	reinit_completion(&req->done);
	/*
	 * A failed overwrite in place may have torn the only copy of older
	 * dirty data, which its key, durable maybe, still vouches for: its
	 * whiteout is journalled before the write ends, as for FUA.
	 */
	hc_write_around(req, (req->bio->bi_opf & REQ_FUA) || req->in_place,
			!writeback);
	if (writeback)
		hc_writeback_dirty_end(req->b);
	hc_request_end(req);
}

/* A cached write's keys are in (or it failed): complete it. */
static void hc_write_finish(struct hc_request *req)
{
	bool writeback = req->mode == HC_MODE_WRITEBACK;
	struct hc_frag *f, *tmp;

	if (req->dirty)
		hc_writeback_dirty_added(req->b, req->dirty);
	list_for_each_entry_safe(f, tmp, &req->frags, node) {
		list_del(&f->node);
		bio_put(&f->bio);
	}
	if (req->through)
		bio_put(&req->through->bio);
	if (req->fallback) {
		/* A worker: this one must not wait for a backing write. */
		INIT_WORK(&req->work, hc_write_fallback_work);
		queue_work(hc_io_wq, &req->work);
		return;
	}
	/*
	 * An acked write's bio has ended: a failed insert latched the set
	 * as failed, and as the device is dirty until this, the failure
	 * stops it rather than let it read older data (fail.c).
	 */
	if (req->insert_ret && !req->acked)
		hc_request_set_error(req, BLK_STS_IOERR);
	if (writeback)
		hc_writeback_dirty_end(req->b);
	hc_request_end(req);
}

/*
 * Under meta_lock held for writing: take up to @max cached writes whose
 * I/O is done off write_done, oldest first, insert their keys, and move
 * them to @done, for hc_write_finish(). Taking them under meta_lock means
 * that whoever takes it next finds their keys in. *@err (if not NULL)
 * receives the first insert's error, if it had none. *@fua: whether any
 * of them is a FUA write, whose key the caller must then make durable
 * (hc_write_fua_done()) before it completes. Return: how many.
 */
static unsigned int hc_write_insert_done(struct hc_cache_set *c,
					 struct list_head *done,
					 unsigned int max, int *err, bool *fua)
{
	struct hc_request *req, *tmp;
	LIST_HEAD(batch);
	unsigned int n = 0;

	lockdep_assert_held_write(&c->meta_lock);
	*fua = false;
	spin_lock_irq(&c->write_lock);
	list_for_each_entry_safe(req, tmp, &c->write_done, inserts) {
		if (n == max)
			break;
		list_move_tail(&req->inserts, &batch);
		if (req->acked)
			atomic_dec(&c->write_acked);
		n++;
	}
	spin_unlock_irq(&c->write_lock);
	list_for_each_entry(req, &batch, inserts) {
		hc_write_insert(req);
		if (err && req->insert_ret && !*err)
			*err = req->insert_ret;
		if (req->acked)
			hc_track_set_acked(req->b, &req->track, false);
		else if ((req->bio->bi_opf & REQ_FUA) && !req->fallback)
			*fua = true;
	}
	list_splice_tail(&batch, done);
	return n;
}

/*
 * The FUA writes among @batch (taken by hc_write_insert_done()) end with
 * @ret, the journal write that made their keys durable, if it failed. A
 * set that failed meanwhile (another insert of the batch, say) writes no
 * journal: its FUA writes are not durable, and say so (-EIO).
 */
static void hc_write_fua_done(struct list_head *batch, int ret)
{
	struct hc_request *req;

	if (!ret)
		return;
	list_for_each_entry(req, batch, inserts)
		if (!req->acked && !req->fallback &&
		    (req->bio->bi_opf & REQ_FUA) && !req->insert_ret)
			req->insert_ret = ret;
}

/*
 * Under meta_lock held for writing: insert the keys of every cached write
 * whose I/O is done, so that what the caller does next sees them (above
 * all, the acked writes'); write_work completes them. Return: 0, or the
 * first insert's error (the set is failing then).
 */
static int hc_write_drain_locked(struct hc_cache_set *c)
{
	LIST_HEAD(done);
	bool fua;
	int err = 0;

	if (!hc_write_insert_done(c, &done, UINT_MAX, &err, &fua))
		return 0;
	if (fua)
		hc_write_fua_done(&done, c->meta_failed ? -EIO :
				  hc_journal_write(c));
	spin_lock_irq(&c->write_lock);
	list_splice_tail(&done, &c->write_inserted);
	spin_unlock_irq(&c->write_lock);
	mod_delayed_work(hc_io_wq, &c->write_work, 0);
	return err;
}

/**
 * hc_write_drain() - insert the keys of every cached write whose I/O is done
 * @c: the set
 *
 * hc_write_drain_locked(), taking meta_lock. Writes write_work has taken
 * are inserted under its hold of meta_lock: a caller that takes meta_lock
 * next finds them in, so only write_done needs looking at. May sleep.
 */
void hc_write_drain(struct hc_cache_set *c)
{
	bool empty;

	spin_lock_irq(&c->write_lock);
	empty = list_empty(&c->write_done);
	spin_unlock_irq(&c->write_lock);
	if (empty)
		return;
	hc_meta_lock_write(c);
	hc_write_drain_locked(c);
	up_write(&c->meta_lock);
}

/**
 * hc_write_insert_work() - insert the keys of cached writes whose I/O is done
 * @work: the set's write_work
 *
 * Takes meta_lock once per HC_WRITE_BATCH writes, as lookups wait while it
 * is held, and writes the journal once per batch for the FUA writes in it,
 * then completes them, and the writes hc_write_drain() inserted. The
 * set's stop flushes it, after its last backing device has drained its
 * requests.
 */
void hc_write_insert_work(struct work_struct *work)
{
	struct hc_cache_set *c = container_of(to_delayed_work(work),
					      struct hc_cache_set, write_work);
	struct hc_request *req, *tmp;
	LIST_HEAD(done);
	bool more, fua;
	int ret;

	hc_debug_delay(HC_DELAY_WRITE_INSERT);
	do {
		spin_lock_irq(&c->write_lock);
		more = !list_empty(&c->write_done);
		spin_unlock_irq(&c->write_lock);
		if (more) {
			hc_meta_lock_write(c);
			hc_write_insert_done(c, &done, HC_WRITE_BATCH, NULL,
					     &fua);
			/* @done holds this batch alone: it was empty. */
			if (fua && !c->meta_failed) {
				ret = hc_journal_write_unlock(c);
			} else {
				ret = fua ? -EIO : 0;
				up_write(&c->meta_lock);
			}
			hc_write_fua_done(&done, ret);
		}
		spin_lock_irq(&c->write_lock);
		list_splice_tail_init(&c->write_inserted, &done);
		spin_unlock_irq(&c->write_lock);
		list_for_each_entry_safe(req, tmp, &done, inserts) {
			list_del_init(&req->inserts);
			hc_write_finish(req);
		}
		cond_resched();
	} while (more);
}

/*
 * Return: true if the request goes on without this context (a cached
 * write ends in hc_write_insert_work()); false if it is done.
 */
static bool hc_write(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct bio *bio = req->bio;
	unsigned int mode = req->mode;
	bool fua = bio->bi_opf & REQ_FUA;
	int ret;

	/* Tracked already if hc_write_try_submit() gave up half way. */
	if (!hc_track_on(&req->track))
		hc_track_add(b, &req->track, true, NULL);
	if (bio->bi_opf & REQ_PREFLUSH) {
		ret = hc_flush(req);
		if (ret) {
			hc_request_set_error(req, errno_to_blk_status(ret));
			return false;
		}
	}
	if (!bio_sectors(bio))
		return false;

	if (bio_op(bio) != REQ_OP_WRITE) {
		/* Discard, write-zeroes: drop the cached copy, pass it on. */
		hc_write_around(req, fua, false);
		return false;
	}
	/*
	 * writeback: a sequential overwrite of what is cached stays in the
	 * cache (a file system rewriting its tables, a database its log),
	 * where it costs a cache write instead of an invalidation and a
	 * backing write.
	 */
	if (req->reason == HC_BYPASS_SEQUENTIAL &&
	    mode == HC_MODE_WRITEBACK && hc_range_cached(req) == 1)
		req->reason = HC_BYPASS_NONE;
	/* An overwrite in place needs no room. */
	if ((req->reason == HC_BYPASS_NONE || req->reason == HC_BYPASS_FULL) &&
	    hc_write_in_place(req, false))
		req->reason = HC_BYPASS_NONE;
	if (req->reason == HC_BYPASS_NONE && hc_write_alloc(req, HC_OPEN_ANY))
		req->reason = HC_BYPASS_FULL;
	if (req->reason == HC_BYPASS_NONE && mode == HC_MODE_WRITEBACK) {
		/* Until its keys are in, the device may not turn clean. */
		hc_writeback_dirty_begin(b);
		ret = hc_backing_mark_dirty(b);
		if (ret) {
			hc_writeback_dirty_end(b);
			hc_write_frags_free(req);
			req->reason = HC_BYPASS_FULL;
		}
	}
	if (req->reason != HC_BYPASS_NONE) {
		hc_write_around(req, fua, false);
		return false;
	}
	if (mode != HC_MODE_WRITEBACK)
		hc_track_wait_writeback(b, &req->track);
	hc_write_cached_submit(req);
	return true;
}

/*
 * A cached write in the submitter's context, when it needs no waiting
 * but for meta_lock: in writeback the backing superblock says dirty
 * already; in writethrough, no writeback write is in flight over its
 * range. This saves the worker's wake-up and two context switches per
 * write. Where the open bucket has not room enough, this opens the next
 * (meta_lock held for writing; the submitter may sleep, the disk takes no
 * REQ_NOWAIT bios), unless that needs a refill's metadata I/O, which
 * would wait forever here: submit_bio() queues what it is called under
 * until it returns. Left to a worker, every write submitted until the
 * worker has opened the next bucket would find it full too and follow it
 * there: an eighth of all writes with 64 KiB buckets and 4 KiB random
 * writes (make bench's c). Otherwise hc_write() goes on in a worker from
 * where this stopped: it may refill, write the superblock, bypass a full
 * cache, or wait. Return: true if the write was submitted.
 */
static bool hc_write_try_submit(struct hc_request *req)
{
	struct hc_backing *b = req->b;
	struct bio *bio = req->bio;

	if (bio_op(bio) != REQ_OP_WRITE || (bio->bi_opf & REQ_PREFLUSH) ||
	    !bio_sectors(bio) ||
	    (req->reason != HC_BYPASS_NONE && req->reason != HC_BYPASS_FULL) ||
	    (req->mode != HC_MODE_WRITEBACK &&
	     req->mode != HC_MODE_WRITETHROUGH))
		return false;
	hc_track_add(b, &req->track, true, NULL);
	/* An overwrite in place needs no room, even in a full cache. */
	if (hc_write_in_place(req, true))
		req->reason = HC_BYPASS_NONE;
	else if (req->reason != HC_BYPASS_NONE ||
		 hc_write_alloc(req, HC_OPEN_NOIO))
		return false;
	if (req->mode == HC_MODE_WRITEBACK) {
		hc_writeback_dirty_begin(b);
		if (READ_ONCE(b->sb.backing.state) != HC_STATE_DIRTY) {
			hc_writeback_dirty_end(b);
			return false;
		}
	} else if (hc_track_write_overlaps(b, &req->track, true)) {
		return false;
	}
	hc_write_cached_submit(req);
	return true;
}

/* ---- Requests ----------------------------------------------------------- */

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
	if (c)
		atomic_inc(&b->io_active);
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
		/* One count for being attached, dropped by the detach. */
		atomic_set(&b->io_active, 1);
		reinit_completion(&b->io_drained);
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
	hc_io_put(b);
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

	ret = bioset_init(&b->clone_set, HC_REQUEST_RESERVE,
			  offsetof(struct hc_frag, bio), BIOSET_NEED_RESCUER);
	if (ret)
		return ret;
	b->req_pool = mempool_create_kmalloc_pool(HC_REQUEST_RESERVE,
						  sizeof(struct hc_request));
	if (!b->req_pool) {
		bioset_exit(&b->clone_set);
		return -ENOMEM;
	}
	return 0;
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
