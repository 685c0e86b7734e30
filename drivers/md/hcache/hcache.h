/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_H
#define _HCACHE_H

/*
 * hcache: a block cache that puts a fast device in front of a slow one.
 *
 * This comment is the design. It says what exists today and, under "Plan",
 * what the open issues will add; it changes in the same commit as the
 * behaviour it describes.
 *
 * OBJECTS AND LIFETIMES
 *
 * The module (module.c) owns one kobject, /sys/fs/hcache, created at load
 * and removed at unload, with the files register, register_quiet,
 * register_async, loading and pendings_cleanup (register.c). Everything
 * else hangs off it.
 *
 * A backing device (struct hc_backing, backing.c) is a slow device with an
 * hcache superblock. Registering it opens it exclusively (holder: the
 * hc_backing), reads and validates its superblock (sb.c, sb_io.c), puts it on
 * hc_backings and creates <backing>/hcache/ in sysfs (backing_sysfs.c). The
 * kobject there owns the struct: its release frees it. Each registered
 * device holds a module reference, so the module cannot be unloaded while
 * one exists.
 *
 * A backing device is either pending or running. Running means it is
 * exported as /dev/hcacheN (a bio-based disk of HC_MINORS minors, so
 * partitions work), N from hc_backing_ida. By its superblock state:
 *  - none (never had a cache) and stale (ran without its cache once): runs
 *    at once, in passthrough;
 *  - clean: pending, waiting for its cache set; writing 1 to "running"
 *    starts it without the cache, after persisting state stale and a new
 *    invalidation generation, so the cache's keys for it are dropped, never
 *    written back, when the cache set returns;
 *  - dirty: pending; "running" refuses 1 and takes only "force", which logs
 *    at critical level that the cache's dirty data is being thrown away, and
 *    then does as for clean.
 *
 * Stopping (sysfs "stop", pendings_cleanup, the reboot notifier) removes the
 * disk, waits for every bio in flight (b->inflight, a percpu_ref), releases
 * the device and drops the kobject. "stop" works from a work item on
 * hc_wq, as a sysfs file cannot remove its own directory; module unload
 * flushes hc_wq.
 *
 * A cache set (struct hc_cache_set, cache_set.c) is one cache device with
 * its buckets, journal, btree and table of attached backing devices, named
 * by its set uuid: /sys/fs/hcache/<set-uuid>/ (cache_set_sysfs.c), the
 * cache device's <dev>/hcache/, and /sys/kernel/debug/hcache/<set-uuid>/
 * (debug.c). Registering the cache device opens it exclusively (holder:
 * the set) and checks its superblock under hc_register_lock; then the set
 * goes on hc_cache_sets_loading and a work item (hc_load_wq) loads the
 * metadata (below) without that lock, so udev workers and other
 * registrations never wait on a long load; "loading" shows its progress.
 * The work then takes hc_register_lock, publishes the set in sysfs and on
 * hc_cache_sets, and attaches every registered backing device whose
 * superblock names it; a backing device that registers later attaches at
 * once (register.c). "register" waits for the work, "register_async"
 * does not. A failed load releases the set unseen; the reboot notifier
 * makes loads stop at their next node or journal entry, and waits for
 * them. The set's kobject owns it; "stop" stops its backing devices,
 * "unregister" detaches them, and both then write out the metadata and
 * release the device. A set holds a module reference from the start of
 * its load.
 *
 * Attaching (attach.c) gives a backing device an id in the set's table of
 * backing devices (ids never reused; a device whose invalidation
 * generation changed gets a new one, so keys under the old id are dead),
 * persisted before the backing superblock names the set.
 *
 * BUCKETS, GENERATIONS AND THE ALLOCATOR (alloc.c, mark.h)
 *
 * The cache device is cut into buckets. Each has an 8-bit gen; a pointer
 * carries the gen its bucket had when the data was written and is valid
 * only while the two are equal, so bumping a gen invalidates every
 * pointer into the bucket without touching the btree. A gen never runs
 * more than HC_GEN_MAX_DISTANCE ahead of the oldest pointer into its
 * bucket, so wrap-around cannot make a stale pointer valid again. Free
 * lists with reserves (prio, btree, moving GC, data) are refilled in
 * batches: bump the gens, persist all gens and prios in a new gen/prio chain
 * (copy-on-write, named by a journal entry), then hand the buckets out.
 * Empty buckets go first; then clean data is evicted by the replacement
 * policy (lru, fifo, random; lru keeps the lowest priorities in a bounded
 * heap, evict.c). Dirty data is never evicted.
 *
 * THE BTREE (btree.c)
 *
 * A B+tree of extent keys by (backing id, end sector); a node is a bucket,
 * written log-structured: a header, then sorted sets appended as keys
 * arrive; a full bucket, or one holding HC_NODE_SETS_MAX sets (a read
 * merges each into those before it), is rewritten, compacted, into a new
 * one. In memory a node is one resolved, overlap-free array (bset.c) and
 * its pending keys, both sized to what its level holds (HC_LEAF_KEYS,
 * HC_INTERIOR_KEYS), not to its bucket; nodes with pending keys are on the
 * set's dirty_nodes. Every key lies within its node's range; inserts
 * spanning leaves are cut at their boundaries; descents split full nodes
 * top-down. Interior keys are size-1 keys at each child's max. Interior
 * nodes stay cached; clean leaves are evicted by a shrinker. When memory
 * is short, nodes come from a reserve per level (HC_NODE_RESERVE), topped
 * up before every insert (from clean cached leaves if allocation fails);
 * an insert that still finds none changed nothing and is tried again
 * (hc_insert()), a merge is left out, a promotion dropped, a lookup
 * retried, for up to a second (hc_nomem_retry()): memory pressure alone
 * does not fail the set.
 *
 * THE JOURNAL (journal.c)
 *
 * Leaf inserts are added to the open journal entry before they go into
 * the tree; entries are written (PREFLUSH + FUA) when full, after
 * journal_delay_ms, or when roots change. A leaf is written lazily; it
 * pins the oldest entry holding its unwritten keys, and the ring is
 * reclaimed by writing the pinning leaves; so is a replay window past 128
 * entries, which keeps a replayed key's gen from wrapping round to its
 * bucket's (a bucket's gen is bumped at most once per entry). Registration reads the ring,
 * takes the roots from the newest valid entry, reads the gen/prio chain,
 * the table and the root, runs the mark pass (mark_pass.c: every bucket's
 * live sectors and oldest gen from the tree on disk), and replays entries
 * last_seq to newest. After a clean stop that marked the empty buckets in
 * the chain and named its newest entry in the superblock
 * (HC_FEAT_INCOMPAT_EMPTY_MARKS), it reads that entry alone, rewrites the
 * superblock before anything else, and the mark pass runs behind I/O
 * instead, refills taking only the marked buckets until it ends (struct
 * hc_mark_bg): the time to the first I/O grows neither with the keys nor
 * with the journal.
 * A cache whose superblock was never rewritten (seq 1,
 * as make-hcache leaves it) and whose journal is empty is new; a used one
 * without a valid journal entry is refused, never silently emptied.
 *
 * THE I/O PATH (request.c, track.c, read.c, promote.c, write.c, commit.c;
 * insert.c; bypass.c, stats.c)
 *
 * While a running backing device is attached, b->io_cache names its set
 * (RCU) and every bio becomes a request, run in the submitter's context
 * until it would have to wait (a node to read, a bucket to open, the
 * superblock to mark dirty, a flush), then on hc_io_wq. A cached write's
 * keys are inserted after its I/O by the set's write_work, in batches; a
 * writeback write without FUA whose I/O went well is acked first, its key
 * inserted within a jiffy, and a read over it, a write around the cache
 * over it, or a flush inserts the waiting keys before going on. Reads
 * are cut into fragments at key boundaries: cached ones read the cache and
 * re-check their bucket's gen on completion (looked up again if it was
 * reused meanwhile; a failed read of clean data goes to the backing
 * device); gaps read the backing device and, unless bypassed or refused
 * by the backing device's admission policy (second_access, the default:
 * a full cache takes a block on its second miss, remembered in the set's
 * lock-free admit_ghost table), are promoted: read into pages of our own
 * (never the reader's, which it may change while the read is in flight),
 * copied to the reader's by a worker, then written to the cache and
 * inserted clean, in batches, by the set's hcache_promote thread at nice
 * 19. Leaves
 * hold at most HC_LEAF_KEYS keys, which bounds an insert's memmove. Writes by
 * cache_mode: writethrough (both devices, clean key), writeback (cache
 * only, dirty key, the backing superblock marked dirty first), writearound
 * and none (whiteout over the range, then the backing device); bypass
 * (sequential_cutoff, a nearly full cache, the mode) writes as
 * writearound. PREFLUSH flushes the backing device, then writes the
 * journal; FUA writes the journal before completing. Each backing device
 * tracks its reads and writes in flight so that a write collides the
 * promotions it overlaps: an older miss is never cached over a newer
 * write. Hits, misses and bypasses are counted per device and per set
 * over four windows. Detach and stop unpublish io_cache, wait an RCU
 * grace period, then wait for every request and promotion (io_ref).
 * A detach, which may still give up (dirty data found, or its superblock
 * write failing), parks the bios that come meanwhile (hc_request_hold())
 * and sends them on once it has decided: to the cache again if it gave
 * up, around it if the device is detached; passed around a cache that is
 * then used again, they would leave clean keys stale and dirty keys over
 * newer data.
 * A set whose metadata failed (meta_failed) passes I/O straight through
 * until its failure (fail.c) detaches or stops its devices.
 *
 * GARBAGE COLLECTION (gc.c)
 *
 * A thread per set, woken when a refill is short of buckets or held back
 * by a gen limit, after an eighth of the cache was written, and by
 * trigger_gc. Moving GC first copies the dirty data of the buckets it
 * fills at most half of into buckets of its own reserve, inserting each
 * copy by compare-and-swap, in rounds (up to 8; the buckets a round
 * empties refill the reserve). Then btree GC walks the leaves in key
 * order, a few per hold of meta_lock: leaves with enough stale keys
 * (their bucket's gen moved on) or dead keys (an id that left the table)
 * are rewritten without them, small nodes are merged, and the oldest gen
 * of every pointer kept (and of those inserts add or cut meanwhile) is
 * noted per bucket and becomes its oldest gen at the end. Moving also
 * runs alone, without the walk, whenever fewer than a tenth of the
 * buckets can take new data, so that writes that overwrite at random do
 * not run out of room between runs. A refill that
 * found nothing for data makes data allocations fail at once until live
 * data goes; writes then bypass, clean keys whited out before the
 * backing write, dirty ones only after it was flushed.
 *
 * FAILURE (fail.c)
 *
 * Every cache device error or corruption (hc_cache_set_error()) counts
 * against io_error_limit, halved per io_error_halflife. At the limit, at
 * the first error once the device was removed, or at the first metadata
 * write that fails (hc_meta_io()), the set fails once:
 * meta_failed is latched, each attached backing device with dirty data
 * stops (its superblock stays dirty; its dirty ranges are logged and kept
 * in failed_dirty), each other one goes on in
 * passthrough, its superblock first marked stale with a new invalidation
 * generation (or stops, if stop_when_cache_set_failed is always), and the
 * set stops. A failed read of clean data is retried from the backing
 * device.
 *
 * WRITEBACK (writeback.c, wb_rate.c)
 *
 * Each attached backing device has a thread that scans its dirty keys in
 * order from a cursor, reads them from the cache in batches, checks that
 * each run is still in the tree as read and that no foreground write over
 * it is in flight, and puts it in the tree of I/O in flight, in one hold
 * of meta_lock (hc_track_writeback_begin()), writes runs contiguous on
 * the backing device as one bio each, flushes the backing device, then
 * marks the pieces clean where the tree still maps them as read. A
 * foreground write to the backing device waits for writeback writes over
 * its range, so older data never lands over it. Paced by a rate from a
 * P+I+D controller (pure code) on the device's dirty sectors against
 * writeback_percent of its share of the cache; unpaced when the device is
 * idle, detaching or flushing (writeback_flush: until no dirty data is
 * left and no write is going dirty, even with writeback_running 0).
 * Dirty sectors are counted per table entry
 * (hc_bdev_entry.dirty_sectors). The backing superblock turns clean when
 * none is left (journal written first); writes going dirty meanwhile are
 * counted in wb.dirtying. A detach with dirty data writes it back first.
 *
 * DATA CHECKSUMS (csum.c, csum_table.c; HC_FEAT_INCOMPAT_DATA_CSUM)
 *
 * With make-hcache --checksum crc32c, every 4 KiB chunk of the cache
 * device has a CRC-32C: in memory for every chunk (4 bytes per 4 KiB), on
 * disk in the checksum table, fixed buckets after the journal whose blocks
 * each have two slots, written alternately. Data is written in whole
 * chunks (space is handed out in chunks, hc_data_align(); a write's last
 * chunk ends in zeroes), from pages the cache owns (a cached write's data
 * is copied first), and its chunks' checksums are set before it is
 * submitted; nothing is written over in place (no overwrites in place:
 * a torn one would leave an unreadable dirty block). Every read of cached
 * data is checked before it is used, and its bucket's gen after that:
 * hits (in the reader's pages when they cover whole chunks, and again in
 * pages of our own before a mismatch counts; others through pages of our
 * own, read.c), writeback (writeback.c) and moving GC (which copies whole
 * chunks with their checksums). Clean data that does not match is read
 * from the backing device and dropped; dirty data is never returned
 * (EIO), written back or moved, and is reported once (csum_bad_dirty).
 *
 * TRACE EVENTS (trace.h, trace.c)
 *
 * Each request's decision as it completes, promotions, writeback batches,
 * GC runs, journal commits, refills and set failures, for perf, bpftrace
 * and trace-cmd (man/hcache.7). Fields are numbers and fixed choices only,
 * so that the events build alike on every supported kernel.
 *
 * Until a cache set is attached, /dev/hcacheN is the backing device shifted by
 * the superblock's data offset. Each bio is cloned from b->bio_set (a
 * mempool-backed bio set, so the path makes progress under memory pressure
 * and swap on /dev/hcacheN cannot deadlock), remapped and submitted; the
 * clone's completion ends the I/O accounting and the original bio. Queue
 * limits are stacked from the backing device; /dev/hcacheN always
 * advertises a volatile write cache with FUA, since a writeback cache needs
 * its users' flushes even when the backing device has no cache of its own.
 *
 * ON DISK
 *
 * hcache_ondisk.h defines every on-disk structure for the module and the
 * tools alike (little-endian, fixed-width, a magic and a CRC-32C checksum
 * each, a version with compat / ro_compat / incompat feature masks); its
 * opening comment and Documentation/hcache/ondisk-format.rst describe them.
 * Both kinds of device carry a 4 KiB superblock at byte 4096. The module
 * rewrites a backing superblock (sb_io.c: seq + 1, written with PREFLUSH and
 * FUA) whenever its label, cache mode or state changes.
 *
 * The pure layer is built into the module, the unit tests and the fuzzer
 * alike: jset.c, pset.c, bdev_table.c and csum_table.c encode and
 * validate the journal entry, the gen/prio set, the table and the
 * checksum table's blocks; mark.c holds the rules of the
 * mark pass and the consistency check. bkey.c: the in-memory key (struct hc_key, host-endian, one
 * pointer at most), its disk conversion and validation, cutting, and the
 * gen arithmetic with HC_GEN_MAX_DISTANCE. bset.c: a sorted, overlap-free
 * set of keys over a caller's array: lookup (binary search), insert that
 * resolves overlaps and reports the sectors it overwrote, compare-and-swap
 * insert, merge (newer wins), check, and on-disk encode and decode.
 *
 * LOCK ORDER
 *
 *   hc_register_lock  (register.c: hc_backings, hc_cache_sets, _loading,
 *                      registration, attach, detach, run, stop)
 *     hc_backing.sb_lock  (a backing superblock and its writes)
 *     hc_cache_set.meta_lock  (rw_semaphore: the btree, the journal, the
 *                      buckets and free lists, and every metadata write;
 *                      a journal write that ends a hold: downgraded)
 *       hc_cache_set.node_cache_lock  (the node hash, LRU, node reads;
 *                      a lookup finds a cached node without it)
 *         hc_cache_set.node_reserve_lock  (spinlock: the reserve of nodes)
 *
 * meta_lock is taken for reading by lookups and walks, for writing by
 * every change. One lock for all metadata keeps the crash-ordering rules
 * simple to check; there are no per-node locks yet (design.rst, Locks).
 * A section whose last step is a journal write (a flush, a FUA write,
 * the delayed write, a device turning clean) encodes the entry with the
 * lock held for writing, then downgrades it for the write itself
 * (hc_journal_write_unlock()): lookups go on during the flushes and the
 * write, while every change still waits. The I/O path's changes wait for
 * such a write before they queue for the lock (hc_meta_lock_write()): a
 * writer queued on an rwsem holds up every reader that comes after it.
 *
 * No lock is taken in the passthrough I/O path: a running device's data
 * offset and bdev never change, and the disk is removed before the device
 * is freed. The cached path takes meta_lock for reading per lookup and per
 * data allocation and per overwrite in place (with alloc_lock, a spinlock
 * inside it, also taken alone from bio completion to drop an overwrite's
 * bucket pin, so with interrupts off), for writing per insert and to open
 * a new bucket, and never holds it across data I/O;
 * hc_backing.track_lock, seq_lock, wb.lock, hc_cache_set.promote_lock,
 * write_lock, gc.lock and csum.bad_lock are spinlocks with nothing
 * nested inside
 * (track_lock, promote_lock and write_lock also taken from bio completion,
 * and track_lock and write_lock also under meta_lock). The writeback thread takes sb_lock
 * then meta_lock to turn its device clean, never hc_register_lock, so
 * detach and stop may stop it with hc_register_lock held. The GC thread
 * takes meta_lock alone, so a set's stop may stop it the same way.
 *
 * CRASH CONSISTENCY
 *
 * A superblock is written whole, with PREFLUSH and FUA, and checksummed: a
 * torn write fails validation rather than being half-believed. The state
 * change to stale is persisted before a device runs without its cache, so
 * a crash right after it cannot bring the old cached data back. In a
 * cache set: a key is journalled before anything that needs it durable
 * completes, and is never durable before its data: a node write carries
 * PREFLUSH whenever a data write completed since the cache device was
 * last flushed, and the backing devices are flushed first when a
 * foreground write reached them since (hc_meta_write()), so that no
 * clean key vouches for data they could lose (one leaving the set is
 * flushed as it goes); a bucket's new gen is persisted before the bucket
 * takes new data; a node is written (FUA) before its parent or a journal
 * entry names it (a rewritten leaf's journal pin passes to its parent
 * until then), and a bucket freed by a rewrite is reused only after a journal
 * entry names a root that no longer reaches it; the table entry is
 * durable before a backing superblock names the set; with data checksums,
 * a key is never durable before its data's checksums: every metadata
 * write that can make keys durable first writes the changed blocks of
 * the checksum table, each into the slot not holding its newest copy,
 * and then flushes (hc_meta_write_ordered()). A backing superblock
 * says dirty before a dirty write completes and clean only once no dirty
 * key is left and the clean keys are journalled; a key is marked clean
 * only after the backing device was flushed for its data, and dirty keys
 * are dropped only once their replacement is durable there: a write for
 * the backing device alone, or a cached write whose cache half failed,
 * drops them only once its data is flushed there, and a writethrough
 * write over dirty data goes in dirty. A flush fails if the keys of the
 * writes it covers could not be journalled. An overwrite in place (of
 * dirty data, where its key points) changes no key: a flush with no key to
 * journal flushes the cache device for it, and writeback and moving GC,
 * which copy dirty data and then swap its key, never read a bucket such a
 * write is in flight into, nor let one start there until the swap
 * (struct hc_bucket.copy_pin, hc_gc.move). A crash at any point
 * recovers, by the journal replay and the mark pass, to the last flushed
 * state (design.rst has the rules in full).
 *
 * KERNEL VERSIONS
 *
 * compat.h holds every difference between the kernels we build for, driven
 * by build-time probes; no other file tests a kernel version.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/seq_buf.h>
#include <linux/workqueue.h>

#include <linux/rwsem.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>

#include "bdev_table.h"
#include "btree.h"
#include "bypass.h"
#include "compat.h"
#include "csum.h"
#include "evict.h"
#include "journal.h"
#include "mark.h"
#include "sb.h"
#include "stats.h"
#include "wb_rate.h"

/* Minors per /dev/hcacheN: the whole disk and 15 partitions. */
#define HC_MINORS		16

/**
 * struct hc_track - a read or write in flight on a backing device
 * @node: in hc_backing.track_tree, or cleared (RB_CLEAR_NODE) when in
 *	none; hc_backing.track_lock
 * @subtree_last: the interval tree's: the last sector of any track in
 *	@node's subtree; track_lock
 * @start: first backing sector
 * @end: sector after the last (a track of no sectors is never in a tree)
 * @write: a write, else a read (or promotion); a read is in the tree
 *	only from its first miss on (read.c): a hit needs no track
 * @writeback: a write of the writeback thread (@write is set too)
 * @collided: a read that an overlapping write raced; track_lock
 * @acked: a write whose bio has ended before its key is in (commit.c);
 *	track_lock
 */
struct hc_track {
	struct rb_node		node;
	u64			subtree_last;
	u64			start;
	u64			end;
	bool			write;
	bool			writeback;
	bool			collided;
	bool			acked;
};

struct hc_wb_batch;

/**
 * struct hc_writeback - a backing device's writeback (writeback.c)
 * @thread: hcache_wb, while attached
 * @wait: @thread sleeps here between passes and while paced
 * @track_wait: foreground writes wait here for overlapping writeback
 *	writes to complete (hc_track_wait_writeback())
 * @dirtying: writeback-mode writes between marking the superblock dirty
 *	and inserting their keys; the move to clean waits for none
 * @last_io: jiffies of the last foreground request, for idle detection
 * @running: writeback_running
 * @detaching: a detach waits for writeback to empty the cache
 * @flush_seq: writeback_flush requests (writes of 1), counted; @lock
 * @flush_done: @flush_seq as it was when @thread last found no dirty
 *	sector and no write going dirty (hc_wb_flush_done()), or when a
 *	flush was called off (0, or the thread's stop); @lock. A flush is
 *	pending while the two differ (hc_wb_flush_pending()): a request made
 *	while the thread checks stays pending, whatever it found.
 * @percent: writeback_percent
 * @delay: writeback_delay, seconds
 * @idle_seconds: writeback_idle_seconds
 * @update_seconds: writeback_rate_update_seconds
 * @lock: protects @params, @rate, @target, @flush_seq and @flush_done
 *	(sysfs reads them whole)
 * @params: the controller's tunables
 * @rate: the controller's state; @rate.rate is writeback_rate
 * @target: dirty sectors the controller aims at
 * @cursor: backing sector where the next scan starts; @thread only
 * @keys_written: keys written back and marked clean
 * @sectors_written: sectors written back
 * @backing_writes: bios writeback sent to the backing device
 * @detach_work: completes a detach once the device is clean
 * @kick: wake @thread from a sleep now (hc_writeback_wake())
 * @delaying: @thread sleeps out writeback_delay: dirty data above the
 *	target wakes it
 * @dirty: dirty sectors at the last rate update; @lock
 * @batch: @thread's work area
 */
struct hc_writeback {
	struct task_struct	*thread;
	wait_queue_head_t	wait;
	wait_queue_head_t	track_wait;
	atomic_t		dirtying;
	unsigned long		last_io;
	bool			running;
	bool			detaching;
	u32			flush_seq;
	u32			flush_done;
	u32			percent;
	u32			delay;
	u32			idle_seconds;
	u32			update_seconds;
	spinlock_t		lock;	/* see above */
	struct hc_wb_rate_params params;
	struct hc_wb_rate	rate;
	u64			target;
	u64			cursor;
	atomic64_t		keys_written;
	atomic64_t		sectors_written;
	atomic64_t		backing_writes;
	struct work_struct	detach_work;
	bool			kick;
	bool			delaying;
	u64			dirty;
	struct hc_wb_batch	*batch;
};

/**
 * struct hc_backing - a registered backing device
 * @list: on hc_backings; hc_register_lock
 * @kobj: <backing>/hcache/ in sysfs; its release frees the struct
 * @handle: the backing device, opened exclusively at registration
 * @bdev: @handle.bdev
 * @sb_lock: protects @sb and superblock writes
 * @sb: the superblock as last written (or read)
 * @sb_buf: a page to encode @sb into for writing; @sb_lock
 * @disk: /dev/hcacheN while running, else NULL; hc_register_lock
 * @minor_index: N of /dev/hcacheN while running
 * @data_offset: @sb's data offset in sectors, fixed while running
 * @bio_set: clones of the bios sent to @disk
 * @inflight: a reference per bio in flight while running
 * @inflight_done: completed when @inflight drops to zero after being killed
 * @fg_written: writes to @bdev on behalf of @disk's users (passed through,
 *	around the cache, or through it) completed so far, plus one: what
 *	came before this instance is unflushed until its first flush
 * @fg_flushed: @fg_written as it was before the last flush of @bdev that
 *	a user's flush issued and that succeeded: a user's flush needs to
 *	flush @bdev only while the two differ (hc_flush())
 * @stop_work: runs a stop asked for through sysfs
 * @set: the cache set it is attached to, or NULL; hc_register_lock
 * @id: its id in @set's table of backing devices, 0 if not attached
 * @set_node: on @set's list of backing devices; hc_register_lock
 * @io_cache: @set while the I/O path caches (attached and running), else
 *	NULL; published under hc_register_lock, read under RCU (request.c)
 * @io_ref: requests and promotions using @io_cache, plus one while it is
 *	published: a percpu_ref, so that requests on different CPUs share
 *	no counter; dead (at zero) while nothing is published
 * @io_drained: completed when @io_ref drops to zero after a detach
 * @hold_lock: protects @io_hold and @io_held; taken in submit_bio()
 * @io_hold: a detach is deciding whether it can go (hc_request_hold()):
 *	bios that come meanwhile wait on @io_held rather than pass the cache
 * @io_held: those bios, resubmitted once the detach has decided
 * @clone_set: clones of bios for the cached I/O path
 * @req_pool: struct hc_request reserve
 * @track_lock: protects @track_tree and @track_acked
 * @track_tree: reads and writes in flight (track.c's struct hc_track), an
 *	interval tree by sector: a promotion stays in it until its key is
 *	in, so a cache warming up holds thousands, and every request looks
 *	for the ones it overlaps
 * @track_acked: tracks in @track_tree marked acked; read without the lock
 *	by a read, which looks for an acked write over its range only when
 *	there is one
 * @seq_lock: protects @seq
 * @seq: recent sequential streams
 * @sequential_cutoff: bytes; runs this long bypass the cache; 0: off
 * @admit: the admission policy for read misses, an hc_admit_policies index
 * @stop_when_cache_set_failed: HC_STOP_*, from sysfs
 * @stats: stats_total/ and the other windows
 * @wb: writeback
 */
struct hc_backing {
	struct list_head	list;
	struct kobject		kobj;
	struct hc_bdev_handle	handle;
	struct block_device	*bdev;

	struct mutex		sb_lock;	/* protects sb, sb_buf */
	struct hc_sb		sb;
	struct page		*sb_buf;

	struct gendisk		*disk;
	int			minor_index;
	sector_t		data_offset;

	struct bio_set		bio_set;
	struct percpu_ref	inflight;
	struct completion	inflight_done;
	atomic64_t		fg_written;
	atomic64_t		fg_flushed;
	struct work_struct	stop_work;

	struct hc_cache_set	*set;
	u32			id;
	struct list_head	set_node;

	struct hc_cache_set __rcu *io_cache;
	struct percpu_ref	io_ref;
	struct completion	io_drained;
	spinlock_t		hold_lock;	/* io_hold, io_held */
	bool			io_hold;
	struct bio_list		io_held;
	struct bio_set		clone_set;
	mempool_t		*req_pool;
	spinlock_t		track_lock;	/* protects track_tree */
	struct rb_root_cached	track_tree;
	unsigned int		track_acked;
	spinlock_t		seq_lock;	/* protects seq */
	struct hc_seq_detect	seq;
	u64			sequential_cutoff;
	unsigned int		admit;
	unsigned int		stop_when_cache_set_failed;
	struct hc_stats		stats;
	struct hc_writeback	wb;
};

/* Free lists: each reserve is refilled before the next (alloc.c). */
enum hc_reserve {
	HC_RESERVE_PRIO,	/* the next gen/prio chain */
	HC_RESERVE_BTREE,	/* btree nodes and the backing-device table */
	HC_RESERVE_MOVE,	/* moving GC's copies (gc.c) */
	HC_RESERVE_DATA,	/* cached data */
	HC_RESERVE_NR,
};

/**
 * struct hc_freelist - buckets invalidated, their new gens persisted
 * @b: bucket numbers, a stack
 * @nr: how many
 * @target: how many the allocator keeps ready
 */
struct hc_freelist {
	u64		*b;
	size_t		nr;
	size_t		target;
};

/**
 * struct hc_gc - a cache set's garbage collection (gc.c)
 * @thread: hcache_gc
 * @wait: @thread waits here for a reason to run
 * @done_wait: trigger_gc writers wait here for their run to finish
 * @lock: protects @requested
 * @requested: runs asked for through trigger_gc
 * @completed: @requested as it was when the last run started, once done
 * @low: the allocator was short of buckets to reclaim
 * @stopping: the set is stopping: no run will come
 * @last_end: jiffies at the end of the last run
 * @last_len: how long it took, in jiffies
 * @written: sectors of buckets opened for data since the last run
 * @written_limit: @written that starts a run: an eighth of the cache
 * @move_next: jiffies before which moving alone (without a run) does
 *	not start again
 *
 * Protected by the set's meta_lock:
 * @marking: a btree walk is noting the oldest gen per bucket
 * @oldest: per bucket, the oldest pointer gen noted
 * @seen: per bucket, a gen was noted
 * @move: per bucket, moving GC empties it of dirty data: set by
 *	hc_move_choose() and cleared when moving ends, both under meta_lock
 *	held for writing; no overwrite in place starts in such a bucket
 * @move_bucket: the bucket moving GC fills, 0 if none
 * @move_used: sectors of it handed out
 * @max_distance: how far a gen may run ahead of the oldest pointer into
 *	its bucket: HC_GEN_MAX_DISTANCE, lower through debugfs for tests
 * @runs: runs finished
 * @last_ms: how long the last one took
 * @nodes_rewritten: leaves rewritten to drop stale and dead keys
 * @keys_dropped: stale and dead keys dropped
 * @buckets_moved: buckets moving GC chose to empty of dirty data
 * @move_rounds: moving rounds run (a run has one or more)
 * @move_runs: times moving ran alone, for writes short of buckets
 * @sectors_moved: dirty sectors it copied
 *
 * @move_buf: moving GC's copy buffer; @thread only
 */
struct hc_gc {
	struct task_struct	*thread;
	wait_queue_head_t	wait;
	wait_queue_head_t	done_wait;
	spinlock_t		lock;	/* see above */
	unsigned long		requested;
	unsigned long		completed;
	bool			low;
	bool			stopping;
	unsigned long		last_end;
	unsigned long		last_len;
	atomic64_t		written;
	u64			written_limit;
	unsigned long		move_next;

	bool			marking;
	u8			*oldest;
	unsigned long		*seen;
	unsigned long		*move;
	u64			move_bucket;
	u32			move_used;
	u32			max_distance;
	u64			runs;
	u64			last_ms;
	u64			nodes_rewritten;
	u64			keys_dropped;
	u64			buckets_moved;
	u64			move_rounds;
	u64			move_runs;
	u64			sectors_moved;

	void			*move_buf;
};

/**
 * struct hc_mark_bg - the mark pass run behind I/O, after a clean stop
 * @running: the pass has not ended: the rules below hold
 * @pos: every leaf up to this position is counted
 * @hinted: buckets with hc_bucket.hinted HC_HINT_EMPTY
 * @marked: buckets the stop marked empty
 * @load_gen: every bucket's gen at the registration, while the pass runs:
 *	a pointer into a marked bucket with a gen no newer was missed by the
 *	marks
 * @floor: how many of those refills keep for the gen/prio chain and
 *	btree nodes: data gets none below it
 * @leaves: leaves counted so far
 * @start: jiffies when the pass began (at the registration)
 * @ms: how long it took, once ended
 * @done_wait: woken when it ends
 *
 * A registration that finds HC_FEAT_INCOMPAT_EMPTY_MARKS on a clean cache
 * serves I/O before it has counted the live sectors of each bucket: the
 * gc thread counts them afterwards, a few leaves per hold of meta_lock
 * (hc_mark_bg_run()). Until it ends:
 * - the counts of the buckets, the live dirty sectors of each backing
 *   device and leaf_keys cover the leaves up to @pos only: an insert or
 *   a cut of a key past @pos is not counted, as the walk counts that
 *   leaf as it then is (hc_mark_bg_counts()); the dirty sectors read one
 *   more than counted (hc_dirty_sectors()), so no device looks clean;
 * - refills take only hinted buckets, and of those leave @floor to the
 *   gen/prio chain and btree nodes; writes bypass once data has none; a
 *   metadata bucket freed may be taken again if it was hinted (nothing
 *   else, as pointers not yet counted may point into it);
 * - GC, moving GC, writeback, merges at insert time and the consistency
 *   check wait;
 *   a stop writes no empty marks, so the next registration counts first.
 * Fields under meta_lock, except @done_wait and @running, which is also
 * read without it (READ_ONCE) to wait.
 */
struct hc_mark_bg {
	bool			running;
	struct hc_pos		pos;
	u64			hinted;
	u64			marked;
	u8			*load_gen;
	u64			floor;
	u64			leaves;
	unsigned long		start;
	u64			ms;
	wait_queue_head_t	done_wait;
};

/**
 * struct hc_load_progress - how far a cache set's registration is
 * @phase: a string constant naming the step, NULL once published
 * @done: nodes walked, or journal entries replayed, in this step
 * @total: out of how many; 0 if not known beforehand
 * @start: jiffies when the registration was accepted
 * @dev: the cache device's name, kept for the set's life (a failed load
 *	releases the device before it leaves the list)
 * @clean: the superblock said the set was stopped cleanly
 * @marks: and that its chain marks the empty buckets and its superblock
 *	names the newest journal entry (HC_FEAT_INCOMPAT_EMPTY_MARKS): the
 *	superblock is rewritten without either before anything else is
 *	written, so these keep what it said
 *
 * Written by the loading work alone (WRITE_ONCE), read by the sysfs file
 * "loading" under hc_register_lock, which keeps the set on the list.
 */
struct hc_load_progress {
	const char	*phase;
	u64		done;
	u64		total;
	unsigned long	start;
	char		dev[32];
	bool		clean;
	bool		marks;
};

/* hc_cache_set.flags */
#define HC_SET_FAILED			0

/* Why a cache set failed (hc_cache_set_fail()). */
enum hc_fail_reason {
	HC_FAIL_ERRORS,		/* io_errors reached io_error_limit */
	HC_FAIL_REMOVED,	/* the cache device was removed */
	HC_FAIL_METADATA,	/* a metadata write or update failed */
};

/* hc_backing.stop_when_cache_set_failed: HC_STOP_* (hcache_ondisk.h) */

/**
 * struct hc_cache_set - a cache device and everything on it
 *
 * @list: on hc_cache_sets; hc_register_lock
 * @kobj: /sys/fs/hcache/<set-uuid>/; its release frees the set
 * @internal: <set>/internal/
 * @cache_kobj: <cache device>/hcache/
 * @handle: the cache device, opened exclusively
 * @bdev: @handle.bdev
 * @sb: the cache superblock; hc_register_lock (and @meta_lock when the
 *	replacement policy or discard change)
 * @sb_buf: a page to encode @sb into
 * @set_magic: hc_set_magic() of the set uuid
 * @geom: the layout of buckets
 * @block_size: bytes, from the superblock
 * @cache_sectors: size of the cache device
 * @backings: attached backing devices (hc_backing.set_node);
 *	hc_register_lock, and @meta_lock too when it changes, so that a
 *	metadata write may walk it (hc_meta_write())
 * @nr_backings: how many; written under hc_register_lock, read anywhere
 * @stop_work: stop or unregister asked for through sysfs
 * @stop_detach: what @stop_work does: unregister (detach) or stop
 * @load_work: loads the metadata at registration, outside
 *	hc_register_lock (cache_set.c); the set is on hc_cache_sets_loading
 *	meanwhile, and moves to hc_cache_sets when published
 * @loaded: completed when @load_work is done, published or not
 * @load_ret: its result, 0 or -errno; read after @loaded
 * @load: how far @load_work is, for /sys/fs/hcache/loading
 * @flags: HC_SET_FAILED, set once by hc_cache_set_fail()
 * @fail_work: hc_cache_set_fail_work(), queued on hc_wq by the failure
 * @io_error_lock: protects @io_error_count and @io_error_stamp; taken
 *	from bio completion
 * @io_error_count: errors counted (fail.c), halved per half-life gone by
 * @io_error_stamp: jiffies up to which @io_error_count is decayed
 * @io_error_limit: sysfs; the set fails when the count reaches it, 0 never
 * @io_error_halflife: sysfs; seconds, 0 for no decay
 *
 * Protected by @meta_lock: held for reading by lookups, for writing by
 * every change to the btree, the journal, the buckets and the free lists,
 * and across every metadata write (for reading only, downgraded from
 * writing, by hc_journal_write_unlock()'s journal write). One lock for
 * all metadata keeps the ordering rules of the design simple to check.
 * Data allocations take it too (hc_open_bucket_take()): for reading to
 * carve the open bucket, with @alloc_lock, and for writing to open the
 * next one, so a write can queue behind metadata I/O.
 * A bucket's gen is also read without it, by completing reads
 * (READ_ONCE; refills bump it with WRITE_ONCE).
 *
 * @meta_lock: see above
 * @buckets: one per bucket
 * @free: the free lists
 * @prio_chain: the buckets of the current gen/prio chain, in order
 * @prio_nr: buckets in a chain
 * @open_bucket: the data bucket being filled, 0 if none; changes only
 *	with @meta_lock held for writing
 * @alloc_lock: with @meta_lock held for reading, protects @open_used and
 *	the raising of a bucket's io_pin (@open_bucket's, or an overwrite
 *	in place's), inplace_pin and copy_pin, so data allocations run side
 *	by side; every change of io_pin and inplace_pin takes it, also from
 *	bio completion (hc_bucket_unpin_in_place()), so it is taken with
 *	interrupts off; copy_pin drops under @meta_lock held for writing
 * @open_used: sectors of @open_bucket handed out
 * @replacement: HC_REPL_*
 * @discard: discard buckets before reuse
 * @fifo_cursor: where the fifo policy looks next
 * @in_refill: the allocator is refilling; nested refills fail
 * @refill_max: buckets a refill takes at most: every free list's target
 *	and a gen/prio chain
 * @refill_cand: a refill's candidates, @refill_max of them
 * @evict_cand: the replacement policy's heap, as large
 * @prio_old: the chain a prio write replaces, @prio_nr buckets; these
 *	three are allocated with the set, so a refill never fails for memory
 * @prio_buf: a bucket's worth where prio writes encode each set, kept
 *	for them alone, so that its tail stays zero and only the records
 *	are written and checksummed byte by byte (hc_pset_encode())
 * @prio_buf_zero_from: where @prio_buf's zeroes start
 * @refill_futile: the last refill found no bucket for data, and no live
 *	data went since: data allocations fail at once instead of writing
 *	the gen/prio chain and the journal for nothing
 * @journal: the journal
 * @root: the btree root, always cached
 * @node_cache_lock: protects @node_lru, @nr_nodes, the node read buffer
 *	and additions to @node_hash, so readers may load nodes concurrently
 * @node_hash: cached nodes by bucket; searched under @meta_lock alone
 *	(RCU lists: a reader may add a node meanwhile), removed from only
 *	with @meta_lock held for writing too (struct hc_btree_node.hash)
 * @node_hash_bits: @node_hash has 1 << @node_hash_bits heads
 * @node_lru: cached leaves, least recently used first as evictions last
 *	passed them (leaves used since are marked, hc_btree_node.used)
 * @nr_nodes: nodes cached
 * @dirty_nodes: nodes with keys not yet on disk (hc_btree_node.dirty),
 *	for hc_btree_flush() and the journal's oldest pin; @meta_lock
 * @node_reserve_lock: protects @node_reserve; a spinlock inside
 *	@node_cache_lock, taken by readers (a node read) and writers
 * @node_reserve: nodes kept for when memory is short, leaves and
 *	interior (struct hc_node_reserve)
 * @node_buf: a bucket's worth, for metadata writes and reads under
 *	@meta_lock held for writing
 * @read_buf: a bucket's worth, for node reads; @node_cache_lock
 * @scratch: two key arrays of node capacity for node reads
 * @node_cap: key capacity of a node
 * @shrinker: trims @node_lru under memory pressure
 * @table: the backing-device table
 * @table_bucket: where it is on disk, 0 if never written
 * @leaf_keys: keys in all leaves
 * @errors: metadata I/O errors and corruptions seen
 * @data_written: data writes to the cache device completed (cached
 *	writes, promotions, moving GC's copies), counted before their keys
 *	go in; any context
 * @data_flushed: @data_written as it was when the last cache flush that
 *	completed was issued; @meta_lock held for writing, or by the journal
 *	writer that downgraded it (hc_meta_write_ordered()). A metadata write
 *	that can make keys durable adds PREFLUSH while the two differ
 * @backing_written: foreground writes to the backing devices completed
 *	(writethrough, around the cache), whose data clean keys may vouch
 *	for; any context
 * @backing_flushed: @backing_written as it was when the backing devices
 *	were last flushed for a metadata write; as @data_flushed
 * @meta_failed: an update failed half way, so the tree in memory may name
 *	buckets that were freed: no metadata is written any more, and the
 *	next registration recovers the last state on disk; @meta_lock
 * @stats: counters for sysfs internal/
 * @promote_lock: protects @promote_todo and @promote_done; taken from
 *	bio completion
 * @promote_todo: promotions read, to write to the cache
 * @promote_done: promotions written to the cache, to insert
 * @promote_wait: @promote_thread waits here for either
 * @promote_thread: writes and inserts them (hc_promote_thread())
 * @write_lock: protects @write_done and @write_inserted; taken from bio
 *	completion
 * @write_done: cached writes whose I/O is done, to insert the keys of;
 *	taken off only under @meta_lock held for writing
 * @write_inserted: writes whose keys hc_write_drain() inserted, to complete
 * @write_acked: acked writes on @write_done (commit.c)
 * @write_work: inserts them and completes the writes
 *	(hc_write_insert_work(), on hc_io_wq); delayed up to a jiffy while
 *	only acked writes wait
 * @avail_percent: hc_avail_update()'s last count, for the I/O path
 * @free_percent: likewise, the share of buckets holding no data at all and
 *	not on a free list
 * @admit_ghost: read misses the second_access policy refused (bypass.h);
 *	allocated at registration, updated lock-free by the I/O path
 * @io_stats: stats_total/ and the other windows, all backing devices
 * @debugfs: /sys/kernel/debug/hcache/<set-uuid>/
 * @gc: garbage collection
 * @mark_bg: the mark pass behind I/O after a clean stop
 * @empty_marks: the next prio write marks the empty buckets in the chain
 *	(HC_BUCKET_DISK_EMPTY): set only for a clean stop's last one
 * @csum: the data checksums (csum.h), with HC_FEAT_INCOMPAT_DATA_CSUM
 */
struct hc_cache_set {
	struct list_head	list;
	struct kobject		kobj;
	struct kobject		internal;
	struct kobject		cache_kobj;
	struct hc_bdev_handle	handle;
	struct block_device	*bdev;
	struct hc_sb		sb;
	struct page		*sb_buf;
	u64			set_magic;
	struct hc_geom		geom;
	u32			block_size;
	u64			cache_sectors;
	struct list_head	backings;
	u32			nr_backings;
	struct work_struct	stop_work;
	bool			stop_detach;

	struct work_struct	load_work;
	struct completion	loaded;
	int			load_ret;
	struct hc_load_progress	load;

	unsigned long		flags;
	struct work_struct	fail_work;
	spinlock_t		io_error_lock;	/* io_error_count, _stamp */
	u32			io_error_count;
	unsigned long		io_error_stamp;
	u32			io_error_limit;
	u32			io_error_halflife;

	struct rw_semaphore	meta_lock;
	struct hc_bucket	*buckets;
	struct hc_freelist	free[HC_RESERVE_NR];
	u64			*prio_chain;
	u64			prio_nr;
	u64			open_bucket;
	spinlock_t		alloc_lock;	/* see above */
	u32			open_used;
	unsigned int		replacement;
	bool			discard;
	u64			fifo_cursor;
	bool			in_refill;
	size_t			refill_max;
	u64			*refill_cand;
	struct hc_evict_cand	*evict_cand;
	u64			*prio_old;
	void			*prio_buf;
	u32			prio_buf_zero_from;
	bool			refill_futile;

	struct hc_journal	journal;

	struct hc_btree_node	*root;
	struct mutex		node_cache_lock;	/* see above */
	struct hlist_head	*node_hash;
	unsigned int		node_hash_bits;
	struct list_head	node_lru;
	unsigned long		nr_nodes;
	struct list_head	dirty_nodes;
	spinlock_t		node_reserve_lock;	/* see above */
	struct hc_node_reserve	node_reserve[2];
	void			*node_buf;
	void			*read_buf;
	struct hc_key		*scratch[2];
	size_t			node_cap;
	struct hc_shrinker	shrinker;

	struct hc_bdev_table	*table;
	u64			table_bucket;

	u64			leaf_keys;
	atomic64_t		errors;
	atomic64_t		data_written;
	u64			data_flushed;
	atomic64_t		backing_written;
	u64			backing_flushed;
	bool			meta_failed;
	struct {
		u64		node_writes;
		u64		node_rewrites;
		u64		node_splits;
		u64		node_merges;
		u64		node_reads;
		u64		node_sets_read_max;
		u64		prio_writes;
		u64		buckets_invalidated;
		u64		gen_limited;
		u64		gen_wrapped;
	} stats;
	spinlock_t		promote_lock;	/* see above */
	struct list_head	promote_todo;
	struct list_head	promote_done;
	wait_queue_head_t	promote_wait;
	struct task_struct	*promote_thread;
	spinlock_t		write_lock;	/* see above */
	struct list_head	write_done;
	struct list_head	write_inserted;
	atomic_t		write_acked;
	struct delayed_work	write_work;
	u32			avail_percent;
	u32			free_percent;
	struct hc_admit_ghost	admit_ghost;
	struct hc_stats		io_stats;
	struct dentry		*debugfs;
	struct hc_gc		gc;
	struct hc_mark_bg	mark_bg;
	bool			empty_marks;
	struct hc_csum		csum;
};

/* Does the set keep data checksums (HC_FEAT_INCOMPAT_DATA_CSUM)? */
static inline bool hc_csum_on(const struct hc_cache_set *c)
{
	return c->csum.crc;
}

/**
 * hc_meta_lock_write() - take meta_lock for writing, on the I/O path
 * @c: the set
 *
 * A journal write that ends a hold runs with meta_lock downgraded to
 * reading (hc_journal_write_unlock()), so that lookups go on during its
 * I/O. A task queued for the lock for writing meanwhile would stop them
 * all the same: an rwsem queues new readers behind a waiting writer. So
 * the changes the I/O path makes wait for that journal write outside the
 * lock first. The lock still orders everything: this is only a hint, and
 * another journal write may start before down_write() returns.
 */
static inline void hc_meta_lock_write(struct hc_cache_set *c)
{
	wait_var_event(&c->journal.writing, !READ_ONCE(c->journal.writing));
	down_write(&c->meta_lock);
}

/* module.c */
extern struct kobject *hc_root_kobj;
extern struct workqueue_struct *hc_wq;

/* register.c */
extern struct mutex hc_register_lock;
extern bool hc_shutting_down;
void hc_cache_set_attach_pending(struct hc_cache_set *c);
int hc_register_lock_listed(const struct list_head *entry);
int hc_register_init(void);
void hc_register_exit(void);

/* backing.c */
int hc_backing_major_init(void);
void hc_backing_major_exit(void);
struct hc_backing *hc_backing_alloc(void);
int hc_backing_setup(struct hc_backing *b);
int hc_backing_start(struct hc_backing *b, bool force);
int hc_backing_sb_mark_stale(struct hc_backing *b);
void hc_backing_stop(struct hc_backing *b);
void hc_backing_stop_async(struct hc_backing *b);
void hc_backing_put(struct hc_backing *b);
void hc_backing_free(struct hc_backing *b);
const char *hc_backing_state_name(unsigned int state);

/* request.c */
int hc_request_init(void);
void hc_request_exit(void);
int hc_request_init_backing(struct hc_backing *b);
void hc_request_exit_backing(struct hc_backing *b);
bool hc_request_submit(struct hc_backing *b, struct bio *bio);
void hc_request_attach(struct hc_backing *b);
void hc_request_detach(struct hc_backing *b);
void hc_request_hold(struct hc_backing *b);
void hc_request_release(struct hc_backing *b);

/* track.c */
void hc_track_init(struct hc_track *t);
bool hc_track_writeback_begin(struct hc_backing *b, struct hc_track *t);
void hc_track_writeback_end(struct hc_backing *b, struct hc_track *t);

/* promote.c */
int hc_promote_thread(void *arg);

/* commit.c */
void hc_write_insert_work(struct work_struct *work);
void hc_write_drain(struct hc_cache_set *c);

/* insert.c */
int hc_insert(struct hc_cache_set *c, const struct hc_key *k);
int hc_insert_optional(struct hc_cache_set *c, const struct hc_key *k);
bool hc_nomem_retry(unsigned long *deadline);

/* writeback.c */
void hc_writeback_init(struct hc_backing *b);
int hc_writeback_start(struct hc_backing *b);
void hc_writeback_stop(struct hc_backing *b);
void hc_writeback_note_io(struct hc_backing *b);
bool hc_writeback_idle(struct hc_backing *b);
void hc_writeback_dirty_begin(struct hc_backing *b);
void hc_writeback_dirty_end(struct hc_backing *b);
void hc_writeback_dirty_added(struct hc_backing *b, u64 dirty);
u64 hc_writeback_dirty_sectors(struct hc_backing *b);
int hc_writeback_detach(struct hc_backing *b);
int hc_writeback_flush(struct hc_backing *b, bool start);
bool hc_writeback_flush_pending(struct hc_backing *b);
void hc_writeback_wake(struct hc_backing *b);

/* backing_sysfs.c */
extern const struct kobj_type hc_backing_ktype;
void hc_backing_tunables_load(struct hc_backing *b);
void hc_backing_uevent(struct hc_backing *b);
ssize_t hc_sysfs_choice_show(char *buf, const char * const *names,
			     unsigned int nr, unsigned int cur);

/* sb_io.c */
int hc_sb_read_page(struct block_device *bdev, struct page *page);
int hc_sb_write(struct block_device *bdev, struct hc_sb *sb, struct page *buf);
int hc_backing_sb_write(struct hc_backing *b);

/* cache_set.c */
extern struct list_head hc_cache_sets;
extern struct list_head hc_cache_sets_loading;
int hc_cache_register(const char *path, dev_t devt,
		      struct hc_cache_set **wait);
int hc_cache_register_wait(struct hc_cache_set *c);
void hc_cache_set_loads_flush(void);
int hc_cache_set_load_init(void);
void hc_cache_set_load_exit(void);
ssize_t hc_cache_set_loading_show(char *buf);
void hc_load_set_phase(struct hc_cache_set *c, const char *phase, u64 total);
int hc_load_step(struct hc_cache_set *c);
void hc_cache_set_stop(struct hc_cache_set *c, bool detach);
void hc_cache_set_stop_async(struct hc_cache_set *c, bool detach);
struct hc_cache_set *hc_cache_set_find(const u8 *set_uuid);
void hc_cache_set_free(struct hc_cache_set *c);
int hc_meta_io(struct hc_cache_set *c, blk_opf_t opf, u64 sector, void *buf,
	       size_t bytes);
int hc_meta_write(struct hc_cache_set *c, blk_opf_t opf, u64 sector,
		  void *buf, size_t bytes);
int hc_meta_write_ordered(struct hc_cache_set *c, blk_opf_t opf, u64 sector,
			  void *buf, size_t bytes);

/**
 * struct hc_io_batch - cache device I/O in flight together (cache_set.c)
 * @pending: bios not completed, plus one until hc_io_batch_wait()
 * @done: completed by the last one
 * @status: the first error
 */
struct hc_io_batch {
	atomic_t	pending;
	struct completion done;
	blk_status_t	status;
};

void hc_vmap_before_io(blk_opf_t opf, void *buf, size_t bytes);
void hc_vmap_after_io(blk_opf_t opf, void *buf, size_t bytes);
void hc_io_batch_init(struct hc_io_batch *batch);
void hc_io_batch_add(struct hc_cache_set *c, struct hc_io_batch *batch,
		     blk_opf_t opf, u64 sector, void *buf, size_t bytes);
int hc_io_batch_wait(struct hc_io_batch *batch);
__printf(2, 3) void hc_cache_set_error(struct hc_cache_set *c,
				       const char *fmt, ...);
void hc_cache_set_meta_fail(struct hc_cache_set *c);

/* fail.c */
u32 hc_cache_set_io_errors(struct hc_cache_set *c);
void hc_cache_set_io_error(struct hc_cache_set *c);
void hc_cache_set_fail(struct hc_cache_set *c, enum hc_fail_reason why);
void hc_cache_set_fail_work(struct work_struct *work);
ssize_t hc_failed_dirty_show(char *buf);
void hc_failed_dirty_exit(void);

/* cache_set_sysfs.c */
extern const struct kobj_type hc_cache_set_ktype;
extern const struct kobj_type hc_cache_set_internal_ktype;
extern const struct kobj_type hc_cache_dev_ktype;

/* alloc.c */
int hc_alloc_init(struct hc_cache_set *c, bool fresh);
void hc_alloc_exit(struct hc_cache_set *c);
int hc_bucket_alloc(struct hc_cache_set *c, enum hc_reserve r, u8 type,
		    u64 *bucket);
bool hc_data_open_needs_io(struct hc_cache_set *c);
void hc_bucket_free_meta(struct hc_cache_set *c, u64 bucket);
int hc_open_bucket_take(struct hc_cache_set *c, u32 want, u32 align,
			bool whole, bool may_open, u8 *gen, u64 *offset,
			u32 *got);

/* What hc_cache_space() may do when the open bucket has not room enough. */
enum hc_open {
	HC_OPEN_NOIO,	/* open the next bucket, unless that needs I/O */
	HC_OPEN_ANY,	/* open the next bucket, refilling if need be */
};

int hc_cache_space(struct hc_cache_set *c, u32 want, bool whole,
		   enum hc_open open, u8 *gen, u64 *offset, u32 *got);
void hc_bucket_unpin(struct hc_cache_set *c, u64 offset);
void hc_bucket_unpin_in_place(struct hc_cache_set *c, u64 offset);
void hc_bucket_touch(struct hc_cache_set *c, u64 offset);
void hc_avail_update(struct hc_cache_set *c);
int hc_alloc_cursor_set(struct hc_cache_set *c, u64 bucket);
u32 hc_avail_percent(struct hc_cache_set *c);
int hc_prio_write(struct hc_cache_set *c);
int hc_prio_read(struct hc_cache_set *c, u64 head);
void hc_prio_get(void *priv, u64 bucket, u8 *gen, u16 *prio, u8 *flags);
void hc_bucket_key_added(struct hc_cache_set *c, const struct hc_key *k);
void hc_bucket_key_count(struct hc_cache_set *c, const struct hc_key *k);
void hc_bucket_sectors_removed(void *priv, const struct hc_key *k, u64 start,
			       u64 end);
u64 hc_buckets_available(struct hc_cache_set *c, u64 *free);
u64 hc_dirty_sectors(struct hc_cache_set *c, u32 id);
extern const char * const hc_replacement_names_table[HC_REPL_NR];

/* gc.c */
int hc_gc_init(struct hc_cache_set *c);
void hc_gc_exit(struct hc_cache_set *c);
int hc_gc_start(struct hc_cache_set *c);
void hc_gc_stop(struct hc_cache_set *c);
void hc_gc_wake(struct hc_cache_set *c);
void hc_gc_avail_changed(struct hc_cache_set *c);
int hc_gc_trigger(struct hc_cache_set *c);
void hc_gc_note_ptr(struct hc_cache_set *c, const struct hc_key *k);

/* mark_pass.c */
int hc_mark_pass(struct hc_cache_set *c, struct hc_bucket_mark *fresh,
		 struct seq_buf *errs, bool before_replay);
int hc_check(struct hc_cache_set *c, struct seq_buf *errs);
bool hc_mark_bg_begin(struct hc_cache_set *c);
void hc_mark_bg_run(struct hc_cache_set *c);
int hc_mark_bg_wait(struct hc_cache_set *c);

/**
 * hc_mark_bg_counts() - is a key at this position counted yet
 * @c: the set; meta_lock held
 * @bdev: the key's backing-device id
 * @end: the sector after it
 *
 * Return: true unless the background mark pass runs and has not counted
 * the leaf the key belongs in: then an insert leaves the counts alone.
 */
static inline bool hc_mark_bg_counts(struct hc_cache_set *c, u32 bdev, u64 end)
{
	const struct hc_pos *pos = &c->mark_bg.pos;

	return !c->mark_bg.running || bdev < pos->bdev ||
	       (bdev == pos->bdev && end <= pos->end);
}

/* attach.c */
int hc_table_write(struct hc_cache_set *c);
int hc_table_read(struct hc_cache_set *c, u64 bucket);
int hc_backing_attach(struct hc_backing *b, struct hc_cache_set *c);
int hc_backing_detach(struct hc_backing *b);
void hc_backing_unlink(struct hc_backing *b);

/* debug.c */
void hc_debugfs_init(void);
void hc_debugfs_exit(void);
void hc_debugfs_add_set(struct hc_cache_set *c);
void hc_debugfs_remove_set(struct hc_cache_set *c);

/**
 * hc_big_array() - an array of @n elements of @size bytes, not zeroed
 * @n: elements, one per bucket say
 * @size: bytes each
 * @noio: the caller holds locks that I/O completion may need
 *
 * kvmalloc() up to INT_MAX bytes, vmalloc() beyond, which kvmalloc()
 * refuses with a warning: a per-bucket array of 2^27 buckets of 16 bytes
 * (8 TiB of 64 KiB buckets) is past it.
 *
 * Return: the array, to be freed with kvfree(); NULL without memory.
 */
static inline void *hc_big_array(size_t n, size_t size, bool noio)
{
	size_t bytes = array_size(n, size);
	unsigned int flags;
	void *p;

	if (bytes <= INT_MAX)
		return kvmalloc(bytes, noio ? GFP_NOIO : GFP_KERNEL);
	if (!noio)
		return vmalloc(bytes);
	flags = memalloc_noio_save();
	p = vmalloc(bytes);
	memalloc_noio_restore(flags);
	return p;
}

#endif /* _HCACHE_H */
