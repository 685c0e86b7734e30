// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c: the statistics windows (stats.h): folding each tick's counts
 * into the total and the decaying windows, reading them back, and the hit
 * ratio. Pure code.
 */

#include "stats.h"

#define HC_STATS_U64_MAX	(~(u64)0)

static const char * const hc_stats_win_names[HC_STATS_WIN_NR] = {
	[HC_STATS_TOTAL]	= "stats_total",
	[HC_STATS_FIVE_MINUTE]	= "stats_five_minute",
	[HC_STATS_HOUR]		= "stats_hour",
	[HC_STATS_DAY]		= "stats_day",
};

/* W of each decaying window, in seconds; 0 for the total. */
static const unsigned int hc_stats_win_secs[HC_STATS_WIN_NR] = {
	[HC_STATS_FIVE_MINUTE]	= 5 * 60,
	[HC_STATS_HOUR]		= 60 * 60,
	[HC_STATS_DAY]		= 24 * 60 * 60,
};

/* The decay subtracts v / n with n = W / T: T must divide every W. */
static_assert(5 * 60 % HC_STATS_TICK_SECONDS == 0, "tick divides 5 minutes");
static_assert(60 * 60 % HC_STATS_TICK_SECONDS == 0, "tick divides an hour");
static_assert(24 * 60 * 60 % HC_STATS_TICK_SECONDS == 0, "tick divides a day");

/**
 * hc_stats_win_name() - the sysfs directory of a window
 * @win: enum hc_stats_win
 *
 * Return: "stats_total", "stats_five_minute", ...; "invalid" for an
 * unknown window.
 */
const char *hc_stats_win_name(unsigned int win)
{
	return win < HC_STATS_WIN_NR ? hc_stats_win_names[win] : "invalid";
}

/**
 * hc_stats_win_seconds() - the length of a decaying window
 * @win: enum hc_stats_win
 *
 * Return: W in seconds: a steady rate of r per second reads about r * W
 * in this window. 0 for the total and for an unknown window.
 */
unsigned int hc_stats_win_seconds(unsigned int win)
{
	return win < HC_STATS_WIN_NR ? hc_stats_win_secs[win] : 0;
}

/**
 * hc_stats_acc_clear() - zero every window
 * @acc: the windows
 */
void hc_stats_acc_clear(struct hc_stats_acc *acc)
{
	memset(acc, 0, sizeof(*acc));
}

/*
 * One tick of a decaying window of @n ticks: v * (1 - 1/n) + delta, in
 * fixed point. Subtracting ceil(v / n) rather than multiplying by n - 1
 * cannot overflow, and takes a window with no new counts down to 0 where
 * rounding down would leave it stuck just above. Adding @delta saturates.
 */
static u64 hc_stats_decay(u64 v, u64 delta, unsigned int n)
{
	v -= v / n + (v % n != 0);
	if (delta > (HC_STATS_U64_MAX - v) >> HC_STATS_FRAC_BITS)
		return HC_STATS_U64_MAX;
	return v + (delta << HC_STATS_FRAC_BITS);
}

/**
 * hc_stats_acc_tick() - fold one tick's counts into every window
 * @acc: the windows
 * @delta: per enum hc_stat, what was counted during the last
 *	HC_STATS_TICK_SECONDS
 *
 * Adds @delta to the total and decays every other window by T/W before
 * adding @delta to it (stats.h).
 */
void hc_stats_acc_tick(struct hc_stats_acc *acc, const u64 delta[HC_STAT_NR])
{
	unsigned int w, i, n;

	for (i = 0; i < HC_STAT_NR; i++)
		acc->v[HC_STATS_TOTAL][i] += delta[i];
	for (w = 0; w < HC_STATS_WIN_NR; w++) {
		if (w == HC_STATS_TOTAL)
			continue;
		n = hc_stats_win_secs[w] / HC_STATS_TICK_SECONDS;
		for (i = 0; i < HC_STAT_NR; i++)
			acc->v[w][i] = hc_stats_decay(acc->v[w][i], delta[i],
						      n);
	}
}

/**
 * hc_stats_acc_value() - what a window reads for a counter
 * @acc: the windows
 * @win: enum hc_stats_win
 * @stat: enum hc_stat
 *
 * Return: the count (total), or the decaying value rounded to the nearest
 * integer; 0 for an unknown window or counter.
 */
u64 hc_stats_acc_value(const struct hc_stats_acc *acc, unsigned int win,
		       unsigned int stat)
{
	u64 v;

	if (win >= HC_STATS_WIN_NR || stat >= HC_STAT_NR)
		return 0;
	v = acc->v[win][stat];
	if (win == HC_STATS_TOTAL)
		return v;
	return (v >> HC_STATS_FRAC_BITS) +
	       (v >> (HC_STATS_FRAC_BITS - 1) & 1);
}

/**
 * hc_stats_acc_hit_ratio() - the hit ratio of a window
 * @acc: the windows
 * @win: enum hc_stats_win
 *
 * Computed from the fixed-point values, so a window whose counts have
 * decayed below 1 still reads the ratio they had.
 *
 * Return: hc_stats_hit_ratio() of the window's hits and misses; 0 for an
 * unknown window.
 */
unsigned int hc_stats_acc_hit_ratio(const struct hc_stats_acc *acc,
				    unsigned int win)
{
	if (win >= HC_STATS_WIN_NR)
		return 0;
	return hc_stats_hit_ratio(acc->v[win][HC_STAT_HITS],
				  acc->v[win][HC_STAT_MISSES]);
}

/**
 * hc_stats_hit_ratio() - hits as an integer percentage of hits and misses
 * @hits: hits
 * @misses: misses
 *
 * Any values, up to 2^64 - 1 each: large ones are scaled down first, so
 * neither the sum nor hits * 100 overflows.
 *
 * Return: floor(100 * hits / (hits + misses)); 0 when both are 0.
 */
unsigned int hc_stats_hit_ratio(u64 hits, u64 misses)
{
	/* Below 2^57, hits * 100 and hits + misses both fit. */
	if (hits >> 57 || misses >> 57) {
		hits >>= 7;
		misses >>= 7;
	}
	if (!hits && !misses)
		return 0;
	return hits * 100 / (hits + misses);
}
