// SPDX-License-Identifier: GPL-2.0
/*
 * track.c: the reads and writes in flight on a backing device, kept in an
 * interval tree (struct hc_track, under b->track_lock), and what they
 * tell one another: collisions, acked writes whose keys are not in yet,
 * and writeback's writes that a foreground write must wait for.
 *
 * The promotion race. A miss reads the backing device while a write to
 * the same range may land: the miss's older data must not then be cached
 * over the write. Each backing device keeps its reads and writes in
 * flight in an interval tree (struct hc_track). A read is put there
 * before the lookup of its first miss that may be promoted (read.c
 * looks the range up again once it is there; a hit needs no track); a
 * write marks every read it overlaps as collided
 * when it starts, and a read that starts while an overlapping write is in
 * flight is collided from the start. A promotion is inserted only if not
 * collided, checked and removed from the tree under meta_lock held for
 * writing: a write that starts later inserts its own key (or looks up the
 * range to invalidate it) after the promotion's insert, so it wins.
 * Writes that completed before the read started are in the tree before
 * its lookup.
 */

#include "hcache.h"
#include "request.h"

#include <linux/interval_tree_generic.h>

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

bool hc_track_on(const struct hc_track *t)
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

/* hc_track_add() under track_lock. */
static bool hc_track_add_locked(struct hc_backing *b, struct hc_track *t,
				bool write, const struct hc_track *from)
{
	struct hc_track *o;
	bool acked = false;

	lockdep_assert_held(&b->track_lock);
	t->write = write;
	t->acked = false;
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
	return acked;
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
bool hc_track_add(struct hc_backing *b, struct hc_track *t,
		  bool write, const struct hc_track *from)
{
	unsigned long flags;
	bool acked;

	spin_lock_irqsave(&b->track_lock, flags);
	acked = hc_track_add_locked(b, t, write, from);
	spin_unlock_irqrestore(&b->track_lock, flags);
	return acked;
}

/* Is a write overlapping @t acked, its key maybe not in? track_lock held. */
static bool hc_track_acked_locked(struct hc_backing *b,
				  const struct hc_track *t)
{
	struct hc_track *o;
	bool acked = false;

	lockdep_assert_held(&b->track_lock);
	for (o = hc_track_first(b, t); o; o = hc_track_next(o, t))
		acked |= o->write && o->acked;
	return acked;
}

/**
 * hc_track_read_join() - a read's first miss that may be promoted
 * @b: the backing device
 * @t: the request's track, in the tree already or not
 *
 * Puts @t in the tree, as hc_track_add() does for a read, unless another
 * pass over the same request did first: a fragment's retry or a resume
 * may run beside it. Either way the caller has seen @t in the tree, under
 * track_lock, and looks its range up again after this: a write that ends
 * before that lookup has its key in the tree by then (it leaves the tree
 * of I/O in flight only once its key is in), and one that ends later
 * collides @t. Its collided flag is never reset here.
 *
 * Return: whether an overlapping write was acked but its key may not be
 * in yet: the caller must call hc_write_drain() before its lookup.
 */
bool hc_track_read_join(struct hc_backing *b, struct hc_track *t)
{
	unsigned long flags;
	bool acked;

	spin_lock_irqsave(&b->track_lock, flags);
	if (hc_track_on(t))
		acked = hc_track_acked_locked(b, t);
	else
		acked = hc_track_add_locked(b, t, false, NULL);
	spin_unlock_irqrestore(&b->track_lock, flags);
	return acked;
}

/*
 * Was a write overlapping read @t acked before its key went in? @t need
 * not be in the tree. With no acked write on the device, the answer needs
 * no lock: a write is marked acked before its bio ends, so a read
 * submitted after that end sees the mark.
 */
bool hc_track_acked(struct hc_backing *b, struct hc_track *t)
{
	unsigned long flags;
	bool acked;

	if (!READ_ONCE(b->track_acked))
		return false;
	spin_lock_irqsave(&b->track_lock, flags);
	acked = hc_track_acked_locked(b, t);
	spin_unlock_irqrestore(&b->track_lock, flags);
	return acked;
}

/* Out of the tree; returns whether a write raced it. */
bool hc_track_end(struct hc_backing *b, struct hc_track *t)
{
	unsigned long flags;
	bool collided;

	spin_lock_irqsave(&b->track_lock, flags);
	if (hc_track_on(t)) {
		hc_track_tree_remove(t, &b->track_tree);
		RB_CLEAR_NODE(&t->node);
		if (t->acked)
			WRITE_ONCE(b->track_acked, b->track_acked - 1);
		t->acked = false;
	}
	collided = t->collided;
	spin_unlock_irqrestore(&b->track_lock, flags);
	return collided;
}

bool hc_track_collided(struct hc_backing *b, struct hc_track *t)
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
bool hc_track_write_overlaps(struct hc_backing *b,
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
void hc_track_wait_writeback(struct hc_backing *b,
			     const struct hc_track *t)
{
	wait_event(b->wb.track_wait, !hc_track_write_overlaps(b, t, true));
}

/*
 * Mark an acked write's track (in the tree), or unmark it once its key is
 * in, counting the marked ones in b->track_acked.
 */
void hc_track_set_acked(struct hc_backing *b, struct hc_track *t,
			bool acked)
{
	unsigned long flags;

	spin_lock_irqsave(&b->track_lock, flags);
	if (hc_track_on(t) && t->acked != acked) {
		t->acked = acked;
		WRITE_ONCE(b->track_acked,
			   acked ? b->track_acked + 1 : b->track_acked - 1);
	}
	spin_unlock_irqrestore(&b->track_lock, flags);
}
