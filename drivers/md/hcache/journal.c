// SPDX-License-Identifier: GPL-2.0
/*
 * journal.c: the journal of a cache set: collecting leaf keys into the
 * open entry, writing entries into the ring, reading the ring back at
 * registration and replaying what the btree may not have, and reclaiming
 * ring space by writing out the btree nodes that pin it.
 *
 * Every entry names the roots (btree root, gen/prio chain, backing-device
 * table) as they are when it is written, and last_seq, the oldest entry
 * whose keys may not be in written btree nodes yet. Registration takes
 * the roots from the newest valid entry and replays entries last_seq to
 * newest, in order. Entries are written with PREFLUSH and FUA: when one is
 * durable, so is everything written before it.
 */

#include "hcache.h"
#include "debug.h"
#include "jset.h"
#include "trace.h"

#include <linux/sort.h>
#include <linux/vmalloc.h>

#define HC_JOURNAL_ENTRY_MAX	(256U << 10)
#define HC_JOURNAL_DELAY_MS	100U
/*
 * Most entries a replay may need. A bucket's gen is bumped at most once
 * per entry (each refill writes one), so a key replayed from the journal
 * is never 256 bumps behind its bucket: its gen cannot have wrapped round
 * to look valid again, even though the bucket's oldest-gen limit only
 * counts pointers in the tree.
 */
#define HC_JOURNAL_MAX_WINDOW	128U

static u32 hc_journal_bucket_bytes(struct hc_cache_set *c)
{
	return c->geom.bucket_sectors << SECTOR_SHIFT;
}

static u64 hc_journal_sector(struct hc_cache_set *c, unsigned int ring,
			     u32 offset)
{
	return hc_bucket_to_sector(&c->geom, c->geom.journal_start + ring) +
	       (offset >> SECTOR_SHIFT);
}

static void hc_journal_work(struct work_struct *work)
{
	struct hc_journal *j = container_of(to_delayed_work(work),
					    struct hc_journal, work);
	struct hc_cache_set *c = container_of(j, struct hc_cache_set, journal);

	hc_meta_lock_write(c);
	if (j->nr && !hc_journal_make_room(c)) {
		hc_journal_write_unlock(c);
		return;
	}
	up_write(&c->meta_lock);
}

/**
 * hc_journal_init() - the journal of a new set in memory
 * @c: the set, its geometry and block size known
 *
 * Return: 0 or -ENOMEM.
 */
int hc_journal_init(struct hc_cache_set *c)
{
	struct hc_journal *j = &c->journal;

	j->entry_max = min(hc_journal_bucket_bytes(c), HC_JOURNAL_ENTRY_MAX);
	j->cap = (j->entry_max - sizeof(struct hc_jset_disk)) /
		 (hc_key_disk_u64s(1) * sizeof(u64));
	j->keys = kvmalloc_array(j->cap, sizeof(*j->keys), GFP_KERNEL);
	j->buf = kvmalloc(j->entry_max, GFP_KERNEL);
	j->bucket_seq = kvcalloc(c->geom.journal_buckets, sizeof(u64),
				 GFP_KERNEL);
	if (!j->keys || !j->buf || !j->bucket_seq)
		return -ENOMEM;
	j->seq = 1;
	j->last_seq = 1;
	j->delay_ms = HC_JOURNAL_DELAY_MS;
	INIT_DELAYED_WORK(&j->work, hc_journal_work);
	return 0;
}

/**
 * hc_journal_exit() - free what hc_journal_init() allocated
 * @c: the set; the delayed write must have been cancelled
 */
void hc_journal_exit(struct hc_cache_set *c)
{
	struct hc_journal *j = &c->journal;

	kvfree(j->bucket_seq);
	kvfree(j->buf);
	kvfree(j->keys);
	/* Left by a registration that failed between reading and replay. */
	kvfree(j->replay);
}

/* Decode an entry of this set into @keys, of the journal's capacity. */
static int hc_jset_decode_here(struct hc_cache_set *c, const void *buf,
			       size_t len, struct hc_key *keys,
			       struct hc_jset_info *info, size_t *nr,
			       size_t *bytes, const char **why)
{
	return hc_jset_decode(buf, len, c->set_magic, c->cache_sectors,
			      c->geom.nbuckets, info, keys, c->journal.cap, nr,
			      bytes, why);
}

static int hc_jentry_cmp(const void *a, const void *b)
{
	const struct hc_jentry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Does a valid entry newer than @seq start at @off of the ring bucket in
 * c->node_buf?
 */
static bool hc_journal_newer_at(struct hc_cache_set *c, u32 off, u64 seq)
{
	u32 bytes = hc_journal_bucket_bytes(c);
	struct hc_jset_info info;
	const char *why;
	size_t keys, len;

	return bytes - off >= sizeof(struct hc_jset_disk) &&
	       !hc_jset_decode_here(c, c->node_buf + off, bytes - off,
				    c->journal.keys, &info, &keys, &len,
				    &why) &&
	       info.seq > seq;
}

/*
 * After a clean stop that named its newest entry in the superblock
 * (HC_FEAT_INCOMPAT_EMPTY_MARKS), that entry alone: nothing was written
 * after it, and it needs no entry before it (its last_seq is its own).
 * What a scan of the ring would see around it is checked too: the
 * entries before it in its ring bucket validate one after another from
 * the start (else a scan after a crash would stop short of it and of
 * what comes after), and no newer entry follows it, in its bucket or at
 * the start of the next (written by code that did not clear the name).
 * Return: 0 with the journal set up as hc_journal_read() does; -EAGAIN
 * if the entry is not there as named (the ring is read then); an I/O
 * error; -ENOMEM.
 */
static int hc_journal_read_clean(struct hc_cache_set *c)
{
	const struct hc_sb_cache *s = &c->sb.cache;
	struct hc_journal *j = &c->journal;
	u32 bytes = hc_journal_bucket_bytes(c), off = s->clean_journal_offset;
	unsigned int r = s->clean_journal_bucket;
	struct hc_jset_info info;
	struct hc_jentry *e;
	size_t keys, len;
	const char *why;
	u32 at;
	int ret;

	if (r >= c->geom.journal_buckets || off % c->block_size ||
	    off >= bytes || bytes - off < sizeof(struct hc_jset_disk))
		return -EAGAIN;
	ret = hc_meta_io(c, REQ_OP_READ | REQ_META, hc_journal_sector(c, r, 0),
			 c->node_buf, bytes);
	if (ret)
		return ret;
	for (at = 0; at < off; at += round_up(len, c->block_size))
		if (hc_jset_decode_here(c, c->node_buf + at, bytes - at,
					j->keys, &info, &keys, &len, &why))
			return -EAGAIN;
	if (at != off)
		return -EAGAIN;
	ret = hc_jset_decode_here(c, c->node_buf + off, bytes - off, j->keys,
				  &info, &keys, &len, &why);
	if (ret || info.seq != s->clean_journal_seq ||
	    info.last_seq != info.seq)
		return -EAGAIN;
	len = round_up(len, c->block_size);
	if (hc_journal_newer_at(c, off + len, info.seq))
		return -EAGAIN;
	ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
			 hc_journal_sector(c, (r + 1) % c->geom.journal_buckets, 0),
			 c->node_buf, bytes);
	if (ret)
		return ret;
	if (hc_journal_newer_at(c, 0, info.seq))
		return -EAGAIN;
	e = kvmalloc_array(1, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e[0] = (struct hc_jentry){ info.seq, r, off, len };
	/* Every other ring bucket holds only entries no longer needed. */
	j->bucket_seq[r] = info.seq;
	j->cur = r;
	j->offset = off + len;
	j->written_ring = r;
	j->written_offset = off;
	j->seq = info.seq + 1;
	j->last_seq = info.last_seq;
	j->newest = info;
	j->replay = e;
	j->replay_nr = 1;
	j->replay_first = 0;
	return 0;
}

/**
 * hc_journal_read() - find the newest journal entry and what to replay
 * @c: the set; meta_lock held for writing
 * @found: receives whether the ring holds any valid entry
 *
 * After a clean stop that named its newest entry in the superblock, reads
 * that entry alone; else, or if it is not there as named, every ring
 * bucket. In each, entries follow one another from the
 * start; the first that does not validate ends the bucket (never written,
 * torn, or left from an earlier format). The newest entry gives the
 * roots (hc_journal.newest) and the position to write at next; entries
 * last_seq to newest must all be there, and are kept for
 * hc_journal_replay(). May sleep.
 *
 * Return: 0, an I/O error, -ENOMEM, or -EUCLEAN when an entry that must
 * be replayed is missing (logged).
 */
int hc_journal_read(struct hc_cache_set *c, bool *found)
{
	struct hc_journal *j = &c->journal;
	u32 bytes = hc_journal_bucket_bytes(c);
	size_t max = (size_t)c->geom.journal_buckets * (bytes / c->block_size);
	struct hc_jset_info info, best = {};
	struct hc_jentry *e, newest = {};
	size_t nr = 0, i, first;
	const char *why;
	unsigned int r;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	*found = false;
	if (c->load.marks) {
		ret = hc_journal_read_clean(c);
		if (ret != -EAGAIN) {
			*found = !ret;
			return ret;
		}
		pr_warn("%pg: journal entry %llu is not where the superblock says (ring bucket %u, offset %u), or not the newest; reading the whole ring, and counting every bucket before serving I/O\n",
			c->bdev, c->sb.cache.clean_journal_seq,
			c->sb.cache.clean_journal_bucket,
			c->sb.cache.clean_journal_offset);
		/* The superblock disagrees with the ring: not its marks either. */
		c->load.marks = false;
	}
	e = kvmalloc_array(max, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	for (r = 0; r < c->geom.journal_buckets; r++) {
		u32 off = 0;

		ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
				 hc_journal_sector(c, r, 0), c->node_buf,
				 bytes);
		if (ret)
			goto out;
		while (off + sizeof(struct hc_jset_disk) <= bytes &&
		       nr < max) {
			size_t keys, len;

			ret = hc_jset_decode_here(c, c->node_buf + off,
						  bytes - off, j->keys, &info,
						  &keys, &len, &why);
			if (ret == -EUCLEAN || ret == -ENOSPC)
				pr_warn("%pg: journal bucket %u offset %u: %s; ignored\n",
					c->bdev, r, off, why);
			if (ret)
				break;
			len = round_up(len, c->block_size);
			e[nr++] = (struct hc_jentry){ info.seq, r, off, len };
			j->bucket_seq[r] = max(j->bucket_seq[r], info.seq);
			if (info.seq > best.seq) {
				best = info;
				newest = e[nr - 1];
			}
			off += len;
		}
	}
	ret = 0;
	if (!nr)
		goto out;

	sort(e, nr, sizeof(*e), hc_jentry_cmp, NULL);
	for (first = 0; first < nr && e[first].seq < best.last_seq; first++)
		;
	for (i = first; i < nr; i++) {
		if (e[i].seq != best.last_seq + (i - first)) {
			hc_cache_set_error(c, "journal entry %llu missing (need %llu-%llu)",
					   best.last_seq + (i - first),
					   best.last_seq, best.seq);
			ret = -EUCLEAN;
			goto out;
		}
	}
	j->cur = newest.ring;
	j->offset = newest.offset + newest.bytes;
	j->written_ring = newest.ring;
	j->written_offset = newest.offset;
	j->seq = best.seq + 1;
	j->last_seq = best.last_seq;
	j->newest = best;
	j->replay = e;
	j->replay_nr = nr;
	j->replay_first = first;
	*found = true;
	return 0;
out:
	kvfree(e);
	return ret;
}

/*
 * Insert one key of entry @seq. A stale pointer (its bucket was reused
 * after the entry was written) makes it an invalidation of its range.
 */
static int hc_journal_replay_key(struct hc_cache_set *c, struct hc_key *key,
				 u64 seq)
{
	u64 bucket;
	u8 gen;

	if (!key->nr_ptrs)
		return hc_btree_insert(c, key, seq);
	bucket = hc_sector_to_bucket(&c->geom, hc_ptr_offset(key->ptr));
	gen = c->buckets[bucket].gen;
	if (hc_gen_after(hc_ptr_gen(key->ptr), gen))
		hc_cache_set_error(c, "journal entry %llu: gen %u ahead of bucket %llu's %u",
				   seq, hc_ptr_gen(key->ptr), bucket, gen);
	if (hc_ptr_stale(gen, hc_ptr_gen(key->ptr))) {
		key->nr_ptrs = 0;
		key->ptr = 0;
		key->flags = 0;
	}
	return hc_btree_insert(c, key, seq);
}

static u64 hc_journal_last_seq(struct hc_cache_set *c);

/* Read and decode replay entry @e into @buf. */
static int hc_journal_read_entry(struct hc_cache_set *c,
				 const struct hc_jentry *e, struct hc_key *buf,
				 size_t *nr)
{
	struct hc_jset_info info;
	const char *why = NULL;
	size_t len;
	int ret;

	ret = hc_meta_io(c, REQ_OP_READ | REQ_META,
			 hc_journal_sector(c, e->ring, e->offset), c->node_buf,
			 e->bytes);
	if (ret)
		return ret;
	ret = hc_jset_decode_here(c, c->node_buf, e->bytes, buf, &info, nr,
				  &len, &why);
	if (ret || info.seq != e->seq) {
		hc_cache_set_error(c, "journal entry %llu changed while replaying: %s",
				   e->seq, why ? why : "another seq");
		return -EUCLEAN;
	}
	return 0;
}

/* Pin (or unpin) every bucket a live key of the entries to replay is in. */
static int hc_journal_pin_buckets(struct hc_cache_set *c, struct hc_key *buf,
				  bool pin)
{
	struct hc_journal *j = &c->journal;
	size_t i, k, nr;
	int ret;

	if (!pin) {
		for (i = 0; i < c->geom.nbuckets; i++)
			c->buckets[i].replay_pin = 0;
		return 0;
	}
	for (i = j->replay_first; i < j->replay_nr; i++) {
		ret = hc_journal_read_entry(c, &j->replay[i], buf, &nr);
		if (ret)
			return ret;
		for (k = 0; k < nr; k++) {
			struct hc_bucket *b;

			if (!buf[k].nr_ptrs)
				continue;
			b = &c->buckets[hc_sector_to_bucket(&c->geom,
						hc_ptr_offset(buf[k].ptr))];
			if (!hc_ptr_stale(b->gen, hc_ptr_gen(buf[k].ptr)))
				b->replay_pin = 1;
		}
	}
	return 0;
}

/**
 * hc_journal_replay() - insert the keys of every entry still needed
 * @c: the set, its roots loaded and marked; meta_lock held for writing
 *
 * Entries last_seq to newest, in order. Inserts may split nodes, so
 * allocate buckets: every bucket a key still to be replayed points into
 * is pinned first, so that no allocation reuses it because the tree does
 * not know of its data yet; and the entry being replayed holds back the
 * last_seq of any entry a refill writes meanwhile (hc_journal.replay_seq),
 * so a crash then still replays it. May sleep.
 *
 * Return: 0, an I/O error, or -EUCLEAN (logged).
 */
int hc_journal_replay(struct hc_cache_set *c)
{
	struct hc_journal *j = &c->journal;
	size_t i, k, nr, keys = 0;
	struct hc_key *buf;
	int ret = 0;

	lockdep_assert_held_write(&c->meta_lock);
	buf = kvmalloc_array(j->cap, sizeof(*buf), GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = hc_journal_pin_buckets(c, buf, true);
	hc_load_set_phase(c, "replay", j->replay_nr - j->replay_first);
	for (i = j->replay_first; i < j->replay_nr && !ret; i++) {
		const struct hc_jentry *e = &j->replay[i];

		ret = hc_load_step(c);
		if (ret)
			break;
		nr = 0;
		j->replay_seq = e->seq;
		ret = hc_journal_read_entry(c, e, buf, &nr);
		for (k = 0; k < nr && !ret; k++)
			ret = hc_journal_replay_key(c, &buf[k], e->seq);
		keys += nr;
	}
	j->replay_seq = 0;
	hc_journal_pin_buckets(c, buf, false);
	if (!ret)
		pr_info("%pg: journal replayed: entries %llu to %llu, %zu keys\n",
			c->bdev, j->newest.last_seq, j->newest.seq, keys);
	kvfree(buf);
out:
	kvfree(j->replay);
	j->replay = NULL;
	return ret;
}

/* May ring bucket @r be overwritten, when entries before @last_seq go? */
static bool hc_journal_bucket_free(struct hc_journal *j, unsigned int r,
				   u64 last_seq)
{
	return j->bucket_seq[r] < last_seq;
}

/* The last_seq an entry written now would carry. */
static u64 hc_journal_last_seq(struct hc_cache_set *c)
{
	u64 pin = hc_btree_oldest_pin(c), last = c->journal.seq;

	if (pin)
		last = min(last, pin);
	if (c->journal.replay_seq)
		last = min(last, c->journal.replay_seq);
	if (c->journal.insert_seq)
		last = min(last, c->journal.insert_seq);
	return last;
}

/*
 * Under meta_lock held for writing: encode the open entry into the
 * journal's buffer, with the current roots, and choose its place in the
 * ring (moving on to the next ring bucket when this one is full, if
 * nothing in that one is still needed). @info and @padded receive what
 * hc_journal_commit() needs.
 */
static int hc_journal_prepare(struct hc_cache_set *c,
			      struct hc_jset_info *info, size_t *padded)
{
	struct hc_journal *j = &c->journal;
	u32 bucket_bytes = hc_journal_bucket_bytes(c);
	size_t bytes;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->meta_failed)
		return -EIO;
	*info = (struct hc_jset_info) {
		.seq = j->seq,
		.last_seq = hc_journal_last_seq(c),
		.btree_root = c->root->ptr,
		.btree_level = c->root->level,
		.prio_bucket = c->prio_chain[0],
		.bdev_table_bucket = c->table_bucket,
	};
	ret = hc_jset_encode(info, j->keys, j->nr, c->set_magic, j->buf,
			     j->entry_max, &bytes);
	if (WARN_ON_ONCE(ret))
		return ret;
	*padded = round_up(bytes, c->block_size);
	memset(j->buf + bytes, 0, *padded - bytes);
	if (j->offset + *padded > bucket_bytes) {
		unsigned int next = (j->cur + 1) % c->geom.journal_buckets;

		/* The newest entry on disk still asks for j->last_seq. */
		if (!hc_journal_bucket_free(j, next,
					    min(j->last_seq, info->last_seq))) {
			hc_cache_set_error(c, "journal full: ring bucket %u holds %llu >= %llu",
					   next, j->bucket_seq[next],
					   info->last_seq);
			return -ENOSPC;
		}
		j->cur = next;
		j->offset = 0;
	}
	return 0;
}

/*
 * Write the entry hc_journal_prepare() encoded, and account for it. The
 * caller holds meta_lock for writing, or holds it for reading after
 * downgrading it from writing (hc_journal_write_unlock()): either way no
 * other task changes the journal meanwhile. The fields sysfs reads under
 * meta_lock held for reading are stored with WRITE_ONCE().
 */
static int hc_journal_commit(struct hc_cache_set *c,
			     const struct hc_jset_info *info, size_t padded)
{
	struct hc_journal *j = &c->journal;
	int ret;

	/* For writing, or downgraded by hc_journal_write_unlock(). */
	lockdep_assert(lockdep_is_held_type(&c->meta_lock, 0) ||
		       (lockdep_is_held_type(&c->meta_lock, 1) &&
			READ_ONCE(c->journal.writing)));
	ret = hc_meta_write_ordered(c, REQ_OP_WRITE | REQ_META | REQ_SYNC |
				    REQ_PREFLUSH | REQ_FUA,
				    hc_journal_sector(c, j->cur, j->offset),
				    j->buf, padded);
	trace_hcache_journal_commit(c->bdev->bd_dev, j->seq, j->nr, padded,
				    ret);
	if (ret)
		return ret;
	j->bucket_seq[j->cur] = j->seq;
	j->written_ring = j->cur;
	j->written_offset = j->offset;
	j->offset += padded;
	WRITE_ONCE(j->last_seq, info->last_seq);
	WRITE_ONCE(j->seq, j->seq + 1);
	j->nr = 0;
	WRITE_ONCE(j->entries_written, j->entries_written + 1);
	return 0;
}

/**
 * hc_journal_write() - write the open entry, with the current roots
 * @c: the set; meta_lock held for writing
 *
 * Written even with no keys, to make new roots durable. Continues in the
 * current ring bucket, or the next when full, if nothing in that one is
 * still needed; hc_journal_make_room() is what keeps that so. May sleep.
 *
 * Return: 0, -ENOSPC if the ring is full, or an I/O error.
 */
int hc_journal_write(struct hc_cache_set *c)
{
	struct hc_jset_info info;
	size_t padded;
	int ret;

	ret = hc_journal_prepare(c, &info, &padded);
	if (ret)
		return ret;
	return hc_journal_commit(c, &info, padded);
}

/**
 * hc_journal_write_unlock() - hc_journal_write(), then release meta_lock
 * @c: the set; meta_lock held for writing, released on return
 *
 * For a caller whose last step under meta_lock is the journal write (a
 * flush, a FUA write, the delayed write). The entry is encoded under the
 * lock held for writing; the lock is then downgraded, so that lookups
 * (hits, and the misses and writes that look the tree up) go on while
 * the backing devices and the cache device are flushed and the entry is
 * written, which is most of a flush's time. Nothing else changes the
 * metadata meanwhile: every change needs the lock for writing.
 *
 * Return: as hc_journal_write().
 */
int hc_journal_write_unlock(struct hc_cache_set *c)
{
	struct hc_jset_info info;
	size_t padded;
	int ret;

	ret = hc_journal_prepare(c, &info, &padded);
	if (ret) {
		up_write(&c->meta_lock);
		return ret;
	}
	WRITE_ONCE(c->journal.writing, true);
	downgrade_write(&c->meta_lock);
	hc_debug_delay(HC_DELAY_JOURNAL_WRITE);
	ret = hc_journal_commit(c, &info, padded);
	WRITE_ONCE(c->journal.writing, false);
	/* The store before wake_up_var()'s look at the queue. */
	smp_mb();
	wake_up_var(&c->journal.writing);
	up_read(&c->meta_lock);
	return ret;
}

/* Ring buckets that may be overwritten now, beyond the current one. */
static unsigned int hc_journal_free_buckets(struct hc_cache_set *c,
					    u64 last_seq)
{
	struct hc_journal *j = &c->journal;
	unsigned int n = 0, r = j->cur;

	for (;;) {
		r = (r + 1) % c->geom.journal_buckets;
		if (r == j->cur || !hc_journal_bucket_free(j, r, last_seq))
			return n;
		n++;
	}
}

/**
 * hc_journal_make_room() - keep ring space for the next entries
 * @c: the set; meta_lock held for writing
 *
 * When fewer than three ring buckets beyond the current one could be
 * overwritten, or a replay would need more than HC_JOURNAL_MAX_WINDOW
 * entries, write out every btree node that pins the journal, so the next
 * entry's last_seq moves up to it. Called before keys are added, never
 * from inside a journal write. May sleep.
 *
 * Return: 0 or the error writing a node.
 */
int hc_journal_make_room(struct hc_cache_set *c)
{
	u64 last_seq;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	if (c->in_refill)
		return 0;
	last_seq = hc_journal_last_seq(c);
	if (hc_journal_free_buckets(c, min(c->journal.last_seq, last_seq)) >= 3 &&
	    c->journal.seq - last_seq < HC_JOURNAL_MAX_WINDOW)
		return 0;
	c->journal.reclaims++;
	ret = hc_btree_flush(c);
	if (ret)
		return ret;
	return hc_journal_write(c);
}

/**
 * hc_journal_add() - add a leaf key to the open entry
 * @c: the set; meta_lock held for writing
 * @k: the key
 * @seq: receives the entry's seq, which the caller pins the leaf to
 *
 * A full entry is written first. The entry is written at the latest
 * journal_delay_ms after its first key; a caller that needs the key
 * durable sooner calls hc_journal_write(). May sleep.
 *
 * Return: 0 or the error writing an entry.
 */
int hc_journal_add(struct hc_cache_set *c, const struct hc_key *k, u64 *seq)
{
	struct hc_journal *j = &c->journal;
	int ret;

	lockdep_assert_held_write(&c->meta_lock);
	/* Once per entry: an entry moves the ring on by a bucket at most. */
	if (!j->nr || j->nr == j->cap) {
		ret = hc_journal_make_room(c);
		if (ret)
			return ret;
	}
	if (j->nr == j->cap) {
		ret = hc_journal_write(c);
		if (ret)
			return ret;
	}
	if (!delayed_work_pending(&j->work))
		queue_delayed_work(hc_wq, &j->work,
				   msecs_to_jiffies(j->delay_ms));
	j->keys[j->nr++] = *k;
	*seq = j->seq;
	return 0;
}
