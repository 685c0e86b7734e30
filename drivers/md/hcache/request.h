/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_REQUEST_H
#define _HCACHE_REQUEST_H

/*
 * request.h: what the files of the I/O path share (request.c, track.c,
 * read.c, promote.c, write.c, commit.c), and no other file: a request,
 * a promotion, a fragment, and the functions one file calls in another.
 * What the rest of the module calls is in hcache.h.
 */

#include <linux/bio.h>
#include <linux/completion.h>
#include <linux/workqueue.h>

#include "bypass.h"
#include "stats.h"

/* Their work items, and the set's write_work: WQ_MEM_RECLAIM, high priority. */
extern struct workqueue_struct *hc_io_wq;

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
 * @own_pages: @bio is not a clone but a bio of pages of our own, freed
 *	with it (hc_frag_put()): a cached write's data, copied
 *	(hc_frag_alloc_copy()), with data checksums
 * @csum_bad: what was read did not match its checksums: clean data is
 *	dropped from the cache and read from the backing device
 * @bounce: a read of whole chunks into pages of our own, to check them
 *	against their checksums before they are copied to @bio
 *	(read.c), or NULL
 * @iter: the clone's position before it was submitted, to copy to
 * @work: looks the piece up again (a read from a reused bucket), or
 *	delivers a promotion's data, or checks a read's checksums
 * @bio: the clone; last, the bio set's front padding ends here
 */
struct hc_frag {
	struct hc_request	*req;
	struct list_head	node;
	u64			start;
	u32			sectors;
	u64			ptr;
	bool			dirty;
	bool			own_pages;
	bool			csum_bad;
	struct hc_promote	*promote;
	struct bio		*bounce;
	struct bvec_iter	iter;
	struct work_struct	work;
	struct bio		bio;
};

/* request.c */
void hc_io_put(struct hc_backing *b);
void hc_request_set_error(struct hc_request *req, blk_status_t status);
void hc_count(struct hc_backing *b, struct hc_cache_set *c,
	      enum hc_stat st, u64 n);
void hc_request_end_bio(struct hc_request *req);
void hc_request_put_acked(struct hc_request *req);
void hc_request_end(struct hc_request *req);
void hc_request_put(struct hc_request *req);
struct hc_frag *hc_frag_alloc(struct hc_request *req,
			      struct block_device *bdev, u64 start,
			      u32 sectors);
struct hc_frag *hc_frag_alloc_copy(struct hc_request *req, u64 start,
				   u32 sectors, u32 padded, gfp_t gfp);
void hc_frag_put(struct hc_frag *f);
struct bio *hc_pages_bio(struct block_device *bdev, u32 bytes, blk_opf_t opf,
			 gfp_t gfp);
void hc_pages_bio_free(struct bio *bio);
void hc_bio_zero_from(struct bio *bio, u32 from);

/* track.c */
bool hc_track_on(const struct hc_track *t);
bool hc_track_add(struct hc_backing *b, struct hc_track *t,
		  bool write, const struct hc_track *from);
bool hc_track_acked(struct hc_backing *b, struct hc_track *t);
bool hc_track_read_join(struct hc_backing *b, struct hc_track *t);
bool hc_track_end(struct hc_backing *b, struct hc_track *t);
bool hc_track_collided(struct hc_backing *b, struct hc_track *t);
bool hc_track_write_overlaps(struct hc_backing *b,
			     const struct hc_track *t, bool writeback);
void hc_track_wait_writeback(struct hc_backing *b,
			     const struct hc_track *t);
void hc_track_set_acked(struct hc_backing *b, struct hc_track *t,
			bool acked);

/* read.c */
void hc_read(struct hc_request *req, bool in_submit);

/* promote.c */
void hc_promote_free(struct hc_promote *p);
struct hc_promote *hc_promote_alloc(struct hc_request *req, u64 start,
				    u32 sectors);

/* write.c */
void hc_to_backing(struct hc_request *req, blk_opf_t strip);
struct hc_key hc_request_whiteout(const struct hc_request *req);
void hc_write_around(struct hc_request *req, bool fua, bool written);
void hc_write_frags_free(struct hc_request *req);
bool hc_write(struct hc_request *req);
bool hc_write_try_submit(struct hc_request *req);

/* commit.c */
int hc_flush(struct hc_request *req);
void hc_write_queue(struct hc_request *req);

#endif /* _HCACHE_REQUEST_H */
