/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_STATS_H
#define _HCACHE_STATS_H

/*
 * stats.h: the I/O statistics of a backing device and of a cache set, as
 * bcache users know them: hits, misses, bypasses and their reasons, over
 * four windows, each a directory in sysfs (stats_total/, stats_five_minute/,
 * stats_hour/, stats_day/).
 *
 * The windows (struct hc_stats_acc, stats.c) are pure code, built in the
 * module and in the unit tests. Every HC_STATS_TICK_SECONDS (T) the
 * counts of the last tick, delta, are folded in:
 *
 *	total += delta
 *	v     = v * (1 - T/W) + delta	(each decaying window of W seconds)
 *
 * so a steady rate of r per second makes a decaying window read about
 * r * W: what the last W seconds held, with older counts fading out
 * exponentially (a burst keeps 1/e of its weight W seconds later). T
 * divides every W, so 1 - T/W = 1 - 1/n with n = W/T ticks; the decay
 * subtracts ceil(v / n), which never overflows and takes an idle window
 * down to exactly 0. Decaying values are fixed point with
 * HC_STATS_FRAC_BITS fraction bits and saturate at 2^(64 - FRAC) - 1
 * (2^48: 128 PiB of sectors, or a day window fed 1.6 TB/s), rather than
 * wrap. Totals are plain integers and wrap at 2^64.
 *
 * The kernel part (struct hc_stats, stats_sysfs.c) counts into per-CPU
 * counters from any context, folds them into the windows from a delayed
 * work every tick, and shows the windows in sysfs. stats_total is exact at
 * read time (it adds what the tick has not folded yet); the decaying
 * windows move at ticks.
 */

#include "pure.h"

#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif

/* What is counted. The order is the order of the sysfs files. */
enum hc_stat {
	HC_STAT_HITS,			/* I/Os found entirely in the cache */
	HC_STAT_MISSES,			/* I/Os that were not */
	HC_STAT_BYPASS_HITS,		/* bypassed I/Os that were cached */
	HC_STAT_BYPASS_MISSES,		/* bypassed I/Os that were not */
	HC_STAT_BYPASSED,		/* sectors of bypassed I/O */
	HC_STAT_MISS_COLLISIONS,	/* promotions dropped: a write raced */
	HC_STAT_BYPASS_SEQUENTIAL,	/* I/Os bypassed: sequential stream */
	HC_STAT_BYPASS_FULL,		/* I/Os bypassed: cache full */
	HC_STAT_BYPASS_MODE,		/* I/Os bypassed: the cache mode */
	HC_STAT_BYPASS_POLICY,		/* I/Os bypassed: the bypass policy */
	HC_STAT_WRITES_IN_PLACE,	/* writes over dirty data, in place */
	HC_STAT_NR,
};

/* The windows, each a directory of the same files. */
enum hc_stats_win {
	HC_STATS_TOTAL,			/* since start or the last clear */
	HC_STATS_FIVE_MINUTE,		/* decaying, W = 300 s */
	HC_STATS_HOUR,			/* decaying, W = 3600 s */
	HC_STATS_DAY,			/* decaying, W = 86400 s */
	HC_STATS_WIN_NR,
};

#define HC_STATS_TICK_SECONDS	5
#define HC_STATS_FRAC_BITS	16

/**
 * struct hc_stats_acc - the windows of a set of counters
 * @v: per window, per counter: a plain count for HC_STATS_TOTAL, else a
 *	fixed-point value with HC_STATS_FRAC_BITS fraction bits; read them
 *	with hc_stats_acc_value()
 *
 * No locking of its own: the owner serialises every call on one @acc.
 */
struct hc_stats_acc {
	u64	v[HC_STATS_WIN_NR][HC_STAT_NR];
};

/* stats.c; each function is documented at its definition. */
const char *hc_stats_win_name(unsigned int win);
unsigned int hc_stats_win_seconds(unsigned int win);
void hc_stats_acc_clear(struct hc_stats_acc *acc);
void hc_stats_acc_tick(struct hc_stats_acc *acc, const u64 delta[HC_STAT_NR]);
u64 hc_stats_acc_value(const struct hc_stats_acc *acc, unsigned int win,
		       unsigned int stat);
unsigned int hc_stats_acc_hit_ratio(const struct hc_stats_acc *acc,
				    unsigned int win);
unsigned int hc_stats_hit_ratio(u64 hits, u64 misses);

#ifdef __KERNEL__

#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

/**
 * struct hc_stats_dir - one window's directory in sysfs
 * @kobj: stats_<window>/; embedded, so its release only completes
 *	@released, which hc_stats_exit() waits for
 * @released: the kobject's release has run
 * @win: enum hc_stats_win, which also places this entry in hc_stats.win[]
 */
struct hc_stats_dir {
	struct kobject		kobj;
	struct completion	released;
	unsigned int		win;
};

/**
 * struct hc_stats - the statistics of a backing device or of a cache set
 * @cur: per-CPU counts since hc_stats_init(), one u64 per enum hc_stat,
 *	only ever added to (hc_stats_count()); NULL before hc_stats_init(),
 *	after hc_stats_exit() or a failed init. Set once the rest is ready;
 *	cleared under @lock
 * @lock: protects @folded, @acc, @next_tick and the clearing of @cur;
 *	taken in process context only (sysfs reads, the tick,
 *	hc_stats_clear(), hc_stats_exit()), never from I/O
 * @folded: per counter, the sum of @cur over every CPU when the tick (or
 *	hc_stats_clear()) last folded it into @acc
 * @acc: the windows
 * @next_tick: when the tick is due, in jiffies
 * @tick: folds @cur into @acc every HC_STATS_TICK_SECONDS, on
 *	system_power_efficient_wq
 * @nr_dirs: entries of @win added to sysfs, which hc_stats_exit() removes
 * @win: the window directories, indexed by enum hc_stats_win
 *
 * Embed it in the object whose statistics it keeps; that object's owner
 * controls the lifetime and calls hc_stats_init() and hc_stats_exit().
 */
struct hc_stats {
	u64 __percpu		*cur;
	spinlock_t		lock;	/* see above */
	u64			folded[HC_STAT_NR];
	struct hc_stats_acc	acc;
	unsigned long		next_tick;
	struct delayed_work	tick;
	unsigned int		nr_dirs;
	struct hc_stats_dir	win[HC_STATS_WIN_NR];
};

/**
 * hc_stats_count() - count @n of @st
 * @s: the statistics; a no-op if they were never set up (@s->cur is NULL)
 * @st: what happened
 * @n: how many: 1 per I/O, or sectors for HC_STAT_BYPASSED
 *
 * Any context, hard interrupt included (bio completion); never sleeps,
 * takes no lock. Must not race hc_stats_init() or hc_stats_exit() on @s.
 */
static inline void hc_stats_count(struct hc_stats *s, enum hc_stat st, u64 n)
{
	u64 __percpu *cur = READ_ONCE(s->cur);

	if (cur)
		this_cpu_add(cur[st], n);
}

/* stats_sysfs.c; each function is documented at its definition. */
int hc_stats_init(struct hc_stats *s, struct kobject *parent);
void hc_stats_exit(struct hc_stats *s);
void hc_stats_clear(struct hc_stats *s);

#endif /* __KERNEL__ */

#endif /* _HCACHE_STATS_H */
