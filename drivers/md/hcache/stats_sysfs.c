// SPDX-License-Identifier: GPL-2.0
/*
 * stats_sysfs.c: the kernel side of the I/O statistics (stats.h): the
 * per-CPU counters, the tick that folds them into the windows, and the
 * stats_<window>/ directories in sysfs. Each file is documented in
 * Documentation/ABI/testing/sysfs-block-hcache and sysfs-fs-hcache.
 */

#include "stats.h"

#include <linux/jiffies.h>
#include <linux/sysfs.h>

#define HC_STATS_TICK_JIFFIES	(HC_STATS_TICK_SECONDS * HZ)

/* A file of a window directory: a counter, or the hit ratio. */
struct hc_stats_attr {
	struct attribute	attr;
	unsigned int		stat;	/* enum hc_stat; HC_STAT_NR: the ratio */
};

#define HC_STATS_ATTR(_name, _stat)					\
	static struct hc_stats_attr hc_stats_attr_##_name = {		\
		.attr = { .name = #_name, .mode = 0444 },		\
		.stat = (_stat),					\
	}

HC_STATS_ATTR(cache_hits, HC_STAT_HITS);
HC_STATS_ATTR(cache_misses, HC_STAT_MISSES);
HC_STATS_ATTR(cache_bypass_hits, HC_STAT_BYPASS_HITS);
HC_STATS_ATTR(cache_bypass_misses, HC_STAT_BYPASS_MISSES);
HC_STATS_ATTR(bypassed, HC_STAT_BYPASSED);
HC_STATS_ATTR(cache_miss_collisions, HC_STAT_MISS_COLLISIONS);
HC_STATS_ATTR(bypass_sequential, HC_STAT_BYPASS_SEQUENTIAL);
HC_STATS_ATTR(bypass_full, HC_STAT_BYPASS_FULL);
HC_STATS_ATTR(bypass_mode, HC_STAT_BYPASS_MODE);
HC_STATS_ATTR(bypass_policy, HC_STAT_BYPASS_POLICY);
HC_STATS_ATTR(writes_in_place, HC_STAT_WRITES_IN_PLACE);
HC_STATS_ATTR(cache_hit_ratio, HC_STAT_NR);

static struct attribute *hc_stats_attrs[] = {
	&hc_stats_attr_cache_hits.attr,
	&hc_stats_attr_cache_misses.attr,
	&hc_stats_attr_cache_bypass_hits.attr,
	&hc_stats_attr_cache_bypass_misses.attr,
	&hc_stats_attr_bypassed.attr,
	&hc_stats_attr_cache_miss_collisions.attr,
	&hc_stats_attr_bypass_sequential.attr,
	&hc_stats_attr_bypass_full.attr,
	&hc_stats_attr_bypass_mode.attr,
	&hc_stats_attr_bypass_policy.attr,
	&hc_stats_attr_writes_in_place.attr,
	&hc_stats_attr_cache_hit_ratio.attr,
	NULL
};
ATTRIBUTE_GROUPS(hc_stats);

/* Every counter has its file, plus the ratio and the NULL. */
static_assert(ARRAY_SIZE(hc_stats_attrs) == HC_STAT_NR + 2);

/* The sum of @stat over every CPU, online or not, since hc_stats_init(). */
static u64 hc_stats_sum(struct hc_stats *s, unsigned int stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(s->cur, cpu)[stat]);
	return sum;
}

/*
 * The exact total of @stat: what the tick folded, plus what was counted
 * since. Both sums wrap alike, so the difference is right across a wrap.
 */
static u64 hc_stats_total(struct hc_stats *s, unsigned int stat)
{
	lockdep_assert_held(&s->lock);
	return hc_stats_acc_value(&s->acc, HC_STATS_TOTAL, stat) +
	       hc_stats_sum(s, stat) - s->folded[stat];
}

static struct hc_stats *hc_stats_of_dir(struct hc_stats_dir *d)
{
	return container_of(d - d->win, struct hc_stats, win[0]);
}

static ssize_t hc_stats_attr_show(struct kobject *kobj,
				  struct attribute *attr, char *buf)
{
	struct hc_stats_dir *d = container_of(kobj, struct hc_stats_dir, kobj);
	struct hc_stats *s = hc_stats_of_dir(d);
	unsigned int stat = container_of(attr, struct hc_stats_attr,
					 attr)->stat;
	u64 v;

	spin_lock(&s->lock);
	if (stat == HC_STAT_NR && d->win == HC_STATS_TOTAL)
		v = hc_stats_hit_ratio(hc_stats_total(s, HC_STAT_HITS),
				       hc_stats_total(s, HC_STAT_MISSES));
	else if (stat == HC_STAT_NR)
		v = hc_stats_acc_hit_ratio(&s->acc, d->win);
	else if (d->win == HC_STATS_TOTAL)
		v = hc_stats_total(s, stat);
	else
		v = hc_stats_acc_value(&s->acc, d->win, stat);
	spin_unlock(&s->lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static const struct sysfs_ops hc_stats_sysfs_ops = {
	.show	= hc_stats_attr_show,
};

/* Embedded in struct hc_stats: nothing to free, only to report. */
static void hc_stats_dir_release(struct kobject *kobj)
{
	complete(&container_of(kobj, struct hc_stats_dir, kobj)->released);
}

static const struct kobj_type hc_stats_ktype = {
	.release	= hc_stats_dir_release,
	.sysfs_ops	= &hc_stats_sysfs_ops,
	.default_groups	= hc_stats_groups,
};

/*
 * Make every counter's count since the last fold the delta of a tick,
 * or with @delta NULL drop it (a clear).
 */
static void hc_stats_fold(struct hc_stats *s, u64 *delta)
{
	unsigned int i;
	u64 sum;

	lockdep_assert_held(&s->lock);
	for (i = 0; i < HC_STAT_NR; i++) {
		sum = hc_stats_sum(s, i);
		if (delta)
			delta[i] = sum - s->folded[i];
		s->folded[i] = sum;
	}
}

/*
 * Every HC_STATS_TICK_SECONDS, due at fixed times so that a late run does
 * not shift the next ones. A run later than a whole tick counts as one
 * tick: the windows then decay a little slower than real time.
 */
static void hc_stats_tick(struct work_struct *work)
{
	struct hc_stats *s = container_of(to_delayed_work(work),
					  struct hc_stats, tick);
	unsigned long now = jiffies, delay;
	u64 delta[HC_STAT_NR];

	spin_lock(&s->lock);
	hc_stats_fold(s, delta);
	hc_stats_acc_tick(&s->acc, delta);
	s->next_tick += HC_STATS_TICK_JIFFIES;
	if (time_before_eq(s->next_tick, now))
		s->next_tick = now + HC_STATS_TICK_JIFFIES;
	delay = s->next_tick - now;
	spin_unlock(&s->lock);
	queue_delayed_work(system_power_efficient_wq, &s->tick, delay);
}

/* Drop directory @d's kobject and wait for its release. */
static void hc_stats_dir_put(struct hc_stats_dir *d)
{
	kobject_put(&d->kobj);
	wait_for_completion(&d->released);
}

/**
 * hc_stats_init() - start keeping statistics
 * @s: embedded in its owner: zeroed, or after hc_stats_exit()
 * @parent: the directory that gets stats_total/, stats_five_minute/,
 *	stats_hour/ and stats_day/; already in sysfs
 *
 * Allocates the per-CPU counters, creates the window directories and
 * starts the tick. On failure @s is left as hc_stats_exit() expects
 * (and hc_stats_count() and hc_stats_clear() ignore). hc_stats_clear()
 * may run meanwhile (a clear_stats file that is already visible): it
 * sees the counters only once they are ready. May sleep.
 *
 * Return: 0, or -ENOMEM, or an error of kobject_add().
 */
int hc_stats_init(struct hc_stats *s, struct kobject *parent)
{
	u64 __percpu *cur;
	struct hc_stats_dir *d;
	int ret;

	spin_lock_init(&s->lock);
	memset(s->folded, 0, sizeof(s->folded));
	hc_stats_acc_clear(&s->acc);
	INIT_DELAYED_WORK(&s->tick, hc_stats_tick);
	s->nr_dirs = 0;
	cur = __alloc_percpu(HC_STAT_NR * sizeof(u64), __alignof__(u64));
	if (!cur)
		return -ENOMEM;
	/* Pairs with hc_stats_clear(): the lock is ready before @cur. */
	smp_store_release(&s->cur, cur);

	for (; s->nr_dirs < HC_STATS_WIN_NR; s->nr_dirs++) {
		d = &s->win[s->nr_dirs];
		memset(&d->kobj, 0, sizeof(d->kobj));
		d->win = s->nr_dirs;
		init_completion(&d->released);
		ret = kobject_init_and_add(&d->kobj, &hc_stats_ktype, parent,
					   "%s", hc_stats_win_name(d->win));
		if (ret) {
			hc_stats_dir_put(d);
			goto out_exit;
		}
	}

	s->next_tick = jiffies + HC_STATS_TICK_JIFFIES;
	queue_delayed_work(system_power_efficient_wq, &s->tick,
			   HC_STATS_TICK_JIFFIES);
	return 0;

out_exit:
	hc_stats_exit(s);
	return ret;
}

/**
 * hc_stats_exit() - stop keeping statistics
 * @s: set up by hc_stats_init(), even if it failed, or zeroed
 *
 * Removes the window directories, waiting for any read in progress and
 * for each kobject's release, stops the tick and frees the counters.
 * Call it before dropping the last reference on the parent directory,
 * and once nothing calls hc_stats_count() on @s any more; a concurrent
 * hc_stats_clear() is fine. Calling it again does nothing. May sleep.
 */
void hc_stats_exit(struct hc_stats *s)
{
	struct hc_stats_dir *d;
	u64 __percpu *cur;

	/* kobject_del() drains the readers: none runs past this loop. */
	while (s->nr_dirs) {
		d = &s->win[--s->nr_dirs];
		kobject_del(&d->kobj);
		hc_stats_dir_put(d);
	}
	if (!s->cur)
		return;
	cancel_delayed_work_sync(&s->tick);
	spin_lock(&s->lock);
	cur = s->cur;
	s->cur = NULL;
	spin_unlock(&s->lock);
	free_percpu(cur);
}

/**
 * hc_stats_clear() - zero every window
 * @s: the statistics; a no-op if they were never set up
 *
 * Counts not yet folded are dropped too: every window then reads 0. The
 * per-CPU counters are not written (that would race hc_stats_count());
 * the current sums become the new base instead. Process context; does
 * not sleep. May race hc_stats_init() and hc_stats_exit(), as long as
 * @s itself stays allocated.
 */
void hc_stats_clear(struct hc_stats *s)
{
	/* Pairs with hc_stats_init(): once @cur is set, the lock is ready. */
	if (!smp_load_acquire(&s->cur))
		return;
	spin_lock(&s->lock);
	if (s->cur) {
		hc_stats_fold(s, NULL);
		hc_stats_acc_clear(&s->acc);
	}
	spin_unlock(&s->lock);
}
