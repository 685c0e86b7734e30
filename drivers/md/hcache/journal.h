/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_JOURNAL_H
#define _HCACHE_JOURNAL_H

/*
 * journal.h: the journal of a cache set (journal.c). The on-disk entry is
 * struct hc_jset_disk; its encoding and validation are jset.c's.
 */

#include <linux/workqueue.h>

#include "jset.h"

struct hc_cache_set;

/* Where a valid entry was found in the ring. */
struct hc_jentry {
	u64	seq;
	u32	ring;
	u32	offset;
	u32	bytes;
};

/**
 * struct hc_journal - the journal ring and the entry being filled
 *
 * Everything here is protected by the set's meta_lock held for writing, or
 * held for reading by the one task that downgraded it from writing to
 * finish a journal write (hc_journal_write_unlock()): lookups, which hold
 * it for reading too, never touch the journal. @seq, @last_seq and
 * @entries_written, which sysfs reads under meta_lock held for reading,
 * are stored with WRITE_ONCE() for that reason.
 *
 * @seq: sequence number of the open entry, the next to be written
 * @last_seq: the last_seq written in the newest entry on disk
 * @cur: ring index (0 .. journal_buckets - 1) being written
 * @offset: bytes of ring bucket @cur already used
 * @written_ring: ring index of the last entry written (or found newest)
 * @written_offset: its byte offset in that ring bucket; with
 *	@written_ring, what a clean stop's superblock names
 *	(hc_sb_cache.clean_journal_*)
 * @bucket_seq: per ring bucket, the newest seq written into it (0: none);
 *	a ring bucket may be overwritten once that is below the oldest
 *	entry still needed
 * @keys: the open entry's keys, in insertion order
 * @nr: keys in @keys
 * @cap: room in @keys
 * @buf: an entry being encoded, @entry_max bytes
 * @entry_max: largest entry, bytes, a multiple of the block size
 * @work: writes the open entry @delay_ms after its first key
 * @delay_ms: sysfs journal_delay_ms
 * @entries_written: statistics for sysfs internal/
 * @reclaims: times the ring filled and the btree was flushed to free it
 * @newest: the newest entry found by hc_journal_read()
 * @replay: entries found by hc_journal_read(), by seq; freed by the replay
 * @replay_nr: how many
 * @replay_first: index of the first to replay (the newest's last_seq)
 * @replay_seq: while replaying, the entry being replayed: no entry written
 *	meanwhile (a refill's) may say the ones from it on are not needed
 * @writing: hc_journal_write_unlock() is writing an entry with meta_lock
 *	downgraded; set and cleared by that task (WRITE_ONCE), read
 *	without the lock by hc_meta_lock_write(), which waits on it
 *	(wait_var_event())
 * @insert_seq: while a key journalled in it is going into the tree
 *	(hc_insert()), that entry: until a leaf pins it, no entry written
 *	meanwhile (a refill's, during a split) may say it is not needed
 */
struct hc_journal {
	u64			seq;
	u64			last_seq;
	unsigned int		cur;
	u32			offset;
	unsigned int		written_ring;
	u32			written_offset;
	u64			*bucket_seq;
	struct hc_key		*keys;
	size_t			nr;
	size_t			cap;
	void			*buf;
	u32			entry_max;
	struct delayed_work	work;
	unsigned int		delay_ms;
	u64			entries_written;
	u64			reclaims;
	struct hc_jset_info	newest;
	struct hc_jentry	*replay;
	size_t			replay_nr;
	size_t			replay_first;
	u64			replay_seq;
	u64			insert_seq;
	bool			writing;
};

/* journal.c; each function is documented at its definition. */
int hc_journal_init(struct hc_cache_set *c);
void hc_journal_exit(struct hc_cache_set *c);
int hc_journal_read(struct hc_cache_set *c, bool *found);
int hc_journal_replay(struct hc_cache_set *c);
int hc_journal_add(struct hc_cache_set *c, const struct hc_key *k, u64 *seq);
int hc_journal_write(struct hc_cache_set *c);
int hc_journal_write_unlock(struct hc_cache_set *c);
int hc_journal_make_room(struct hc_cache_set *c);

#endif /* _HCACHE_JOURNAL_H */
