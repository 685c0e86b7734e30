/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h: hcache's trace events, for perf, bpftrace and trace-cmd
 * (/sys/kernel/tracing/events/hcache/, described in man/hcache.7):
 * each request's decision, promotions, writeback batches, GC runs,
 * journal commits, bucket refills and set failures. Devices are given as
 * major,minor: a request's /dev/hcacheN, a writeback's backing device, a
 * set's cache device. Every field is a number or a fixed choice printed
 * by name, so that the events build alike on 6.1 and 6.12.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM hcache

#if !defined(_HCACHE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HCACHE_TRACE_H

#include <linux/blkdev.h>
#include <linux/tracepoint.h>

/* What became of a request (hcache_request's decision). */
#define HC_TRACE_HIT		0	/* a read served from the cache */
#define HC_TRACE_MISS		1	/* a read, in part or whole from the backing device */
#define HC_TRACE_CACHED		2	/* a write the cache took */
#define HC_TRACE_BYPASS		3	/* + enum hc_bypass_reason - 1 (trace.c) */

#define hc_trace_decisions						\
	{ HC_TRACE_HIT,			"hit" },			\
	{ HC_TRACE_MISS,		"miss" },			\
	{ HC_TRACE_CACHED,		"cached" },			\
	{ HC_TRACE_BYPASS + 0,		"bypass_sequential" },		\
	{ HC_TRACE_BYPASS + 1,		"bypass_full" },		\
	{ HC_TRACE_BYPASS + 2,		"bypass_mode" },		\
	{ HC_TRACE_BYPASS + 3,		"bypass_policy" }

TRACE_EVENT(hcache_request,
	TP_PROTO(dev_t dev, u64 sector, u32 sectors, bool write, u8 decision),
	TP_ARGS(dev, sector, sectors, write, decision),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	sector)
		__field(u32,	sectors)
		__field(bool,	write)
		__field(u8,	decision)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->sector = sector;
		__entry->sectors = sectors;
		__entry->write = write;
		__entry->decision = decision;
	),
	TP_printk("%d,%d %s %llu + %u %s", MAJOR(__entry->dev),
		  MINOR(__entry->dev), __entry->write ? "W" : "R",
		  __entry->sector, __entry->sectors,
		  __print_symbolic(__entry->decision, hc_trace_decisions))
);

/* A read miss's copy, once written to the cache: its key went in or not. */
TRACE_EVENT(hcache_promote,
	TP_PROTO(dev_t dev, u64 sector, u32 sectors, bool inserted),
	TP_ARGS(dev, sector, sectors, inserted),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	sector)
		__field(u32,	sectors)
		__field(bool,	inserted)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->sector = sector;
		__entry->sectors = sectors;
		__entry->inserted = inserted;
	),
	TP_printk("%d,%d %llu + %u %s", MAJOR(__entry->dev),
		  MINOR(__entry->dev), __entry->sector, __entry->sectors,
		  __entry->inserted ? "inserted" : "dropped")
);

/* A writeback batch: keys written back and marked clean, or the error. */
TRACE_EVENT(hcache_writeback,
	TP_PROTO(dev_t dev, u64 keys, u64 sectors, int ret),
	TP_ARGS(dev, keys, sectors, ret),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	keys)
		__field(u64,	sectors)
		__field(int,	ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->keys = keys;
		__entry->sectors = sectors;
		__entry->ret = ret;
	),
	TP_printk("%d,%d keys %llu sectors %llu ret %d", MAJOR(__entry->dev),
		  MINOR(__entry->dev), __entry->keys, __entry->sectors,
		  __entry->ret)
);

/* A GC run: a whole one (moving, then the btree walk) or moving alone. */
TRACE_EVENT(hcache_gc,
	TP_PROTO(dev_t dev, bool moving_only, u32 ms, u64 buckets_moved,
		 int ret),
	TP_ARGS(dev, moving_only, ms, buckets_moved, ret),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(bool,	moving_only)
		__field(u32,	ms)
		__field(u64,	buckets_moved)
		__field(int,	ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->moving_only = moving_only;
		__entry->ms = ms;
		__entry->buckets_moved = buckets_moved;
		__entry->ret = ret;
	),
	TP_printk("%d,%d %s %u ms buckets_moved %llu ret %d",
		  MAJOR(__entry->dev), MINOR(__entry->dev),
		  __entry->moving_only ? "moving" : "full", __entry->ms,
		  __entry->buckets_moved, __entry->ret)
);

/* A journal entry written (a commit): its seq, keys and padded size. */
TRACE_EVENT(hcache_journal_commit,
	TP_PROTO(dev_t dev, u64 seq, u32 keys, u32 bytes, int ret),
	TP_ARGS(dev, seq, keys, bytes, ret),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	seq)
		__field(u32,	keys)
		__field(u32,	bytes)
		__field(int,	ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->seq = seq;
		__entry->keys = keys;
		__entry->bytes = bytes;
		__entry->ret = ret;
	),
	TP_printk("%d,%d seq %llu keys %u bytes %u ret %d",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->seq,
		  __entry->keys, __entry->bytes, __entry->ret)
);

/* A refill of the free lists: buckets wanted and invalidated, the result. */
TRACE_EVENT(hcache_refill,
	TP_PROTO(dev_t dev, u64 wanted, u64 invalidated, int ret),
	TP_ARGS(dev, wanted, invalidated, ret),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u64,	wanted)
		__field(u64,	invalidated)
		__field(int,	ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->wanted = wanted;
		__entry->invalidated = invalidated;
		__entry->ret = ret;
	),
	TP_printk("%d,%d wanted %llu invalidated %llu ret %d",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->wanted,
		  __entry->invalidated, __entry->ret)
);

#define hc_trace_fail_reasons						\
	{ 0,	"errors" },						\
	{ 1,	"removed" },						\
	{ 2,	"metadata" }

/* A set failed (enum hc_fail_reason, whose values trace.c pins). */
TRACE_EVENT(hcache_set_fail,
	TP_PROTO(dev_t dev, u8 reason),
	TP_ARGS(dev, reason),
	TP_STRUCT__entry(
		__field(dev_t,	dev)
		__field(u8,	reason)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->reason = reason;
	),
	TP_printk("%d,%d %s", MAJOR(__entry->dev), MINOR(__entry->dev),
		  __print_symbolic(__entry->reason, hc_trace_fail_reasons))
);

#endif /* _HCACHE_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src) (Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
