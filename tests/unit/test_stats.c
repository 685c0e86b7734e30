// SPDX-License-Identifier: GPL-2.0
/*
 * test_stats: the statistics windows of drivers/md/hcache/stats.c: the
 * total counts exactly; a steady rate r per second makes each decaying
 * window of W seconds read r * W within 1%, at small and at large rates;
 * once the rate drops to 0 a window loses 1/e of its value every W
 * seconds and reaches exactly 0; values too big for the fixed point
 * saturate instead of wrapping; the hit ratio, even at 2^64 - 1; and a
 * randomised run against a floating-point model of the same formula.
 *
 * The random run's seed is random and printed; set HC_TEST_SEED to rerun
 * one.
 */

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"
#include "testlib.h"

#define T		HC_STATS_TICK_SECONDS
#define U64_MAX		(~(uint64_t)0)
/* The largest value a decaying window can read. */
#define DECAY_MAX	(U64_MAX >> HC_STATS_FRAC_BITS)

static const unsigned int decaying[] = {
	HC_STATS_FIVE_MINUTE, HC_STATS_HOUR, HC_STATS_DAY,
};

#define NR_DECAYING	(sizeof(decaying) / sizeof(decaying[0]))

static double rel_err(double got, double want)
{
	double d = got - want;

	if (want == 0)
		return got == 0 ? 0 : 1;
	return (d < 0 ? -d : d) / want;
}

/* @n ticks, every counter getting @d[i] each. */
static void ticks(struct hc_stats_acc *acc, const u64 *d, unsigned long n)
{
	while (n--)
		hc_stats_acc_tick(acc, d);
}

/* Every counter gets @per_tick, counter i times (i + 1), per tick. */
static void fill(u64 *d, u64 per_tick)
{
	unsigned int i;

	for (i = 0; i < HC_STAT_NR; i++)
		d[i] = per_tick * (i + 1);
}

static void test_names(void)
{
	static const char *const names[] = {
		"stats_total", "stats_five_minute", "stats_hour", "stats_day",
	};
	static const unsigned int secs[] = { 0, 300, 3600, 86400 };
	unsigned int w;

	printf("window names and lengths\n");
	for (w = 0; w < HC_STATS_WIN_NR; w++) {
		CHECK(!strcmp(hc_stats_win_name(w), names[w]), "window %u: %s",
		      w, hc_stats_win_name(w));
		CHECK_EQ_U64(hc_stats_win_seconds(w), secs[w], names[w]);
	}
	CHECK(!strcmp(hc_stats_win_name(HC_STATS_WIN_NR), "invalid"),
	      "unknown window: %s", hc_stats_win_name(HC_STATS_WIN_NR));
	CHECK_EQ_U64(hc_stats_win_seconds(HC_STATS_WIN_NR), 0, "unknown");
	CHECK_EQ_U64(HC_STAT_NR, 11, "counters");
}

static void test_total(void)
{
	struct hc_stats_acc acc;
	u64 d[HC_STAT_NR];
	unsigned int i, w;

	printf("the total counts exactly; a clear zeroes every window\n");
	hc_stats_acc_clear(&acc);
	for (w = 0; w < HC_STATS_WIN_NR; w++)
		for (i = 0; i < HC_STAT_NR; i++)
			CHECK_EQ_U64(hc_stats_acc_value(&acc, w, i), 0,
				     "fresh window");
	for (i = 0; i < HC_STAT_NR; i++)
		d[i] = 1000 + i * 7919;
	ticks(&acc, d, 1234);
	for (i = 0; i < HC_STAT_NR; i++)
		CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_TOTAL, i),
			     (1000 + i * 7919) * 1234ULL, "total");
	/* One tick: the decaying windows hold exactly the delta. */
	hc_stats_acc_clear(&acc);
	hc_stats_acc_tick(&acc, d);
	for (w = 0; w < HC_STATS_WIN_NR; w++)
		for (i = 0; i < HC_STAT_NR; i++)
			CHECK_EQ_U64(hc_stats_acc_value(&acc, w, i), d[i],
				     "after one tick");
	hc_stats_acc_clear(&acc);
	for (w = 0; w < HC_STATS_WIN_NR; w++)
		for (i = 0; i < HC_STAT_NR; i++)
			CHECK_EQ_U64(hc_stats_acc_value(&acc, w, i), 0,
				     "cleared window");
	CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_WIN_NR, 0), 0,
		     "unknown window");
	CHECK_EQ_U64(hc_stats_acc_value(&acc, 0, HC_STAT_NR), 0,
		     "unknown counter");
}

/* (1 - T/W)^(W/T): what is left of a window W seconds after input stops. */
static double left_after_w(unsigned int w)
{
	double n = hc_stats_win_seconds(w) / T, f = 1;
	unsigned int k;

	for (k = 0; k < n; k++)
		f *= 1 - 1 / n;
	return f;
}

/*
 * A steady @rate per second (counter i at (i + 1) * @rate) for 20 time
 * constants of the day window: every decaying window reads rate * W
 * within 1%. Then nothing: after W seconds each window is down to
 * (1 - T/W)^(W/T) of that, about 1/e (0.365 for five minutes, 0.368 for a
 * day), within 1%; and after long enough, exactly 0.
 */
static void test_steady(u64 rate)
{
	const unsigned long converge = 20UL * 86400 / T;
	struct hc_stats_acc acc;
	u64 d[HC_STAT_NR], zero[HC_STAT_NR] = { 0 };
	double want;
	unsigned int i, k;

	printf("steady rate %llu/s reads rate * W, then decays\n",
	       rate);
	hc_stats_acc_clear(&acc);
	fill(d, rate * T);
	ticks(&acc, d, converge);
	for (k = 0; k < NR_DECAYING; k++) {
		unsigned int w = decaying[k];

		for (i = 0; i < HC_STAT_NR; i++) {
			u64 v = hc_stats_acc_value(&acc, w, i);

			want = (double)rate * (i + 1) * hc_stats_win_seconds(w);
			CHECK(rel_err(v, want) < 0.01,
			      "%s counter %u: %llu, want ~%.0f",
			      hc_stats_win_name(w), i, v, want);
			if (i == 0)
				printf("  %-18s %llu (rate * W = %.0f)\n",
				       hc_stats_win_name(w), v, want);
		}
		CHECK_EQ_U64(hc_stats_acc_hit_ratio(&acc, w), 33,
			     "hit ratio of 1 : 2");
	}
	CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_TOTAL, 0),
		     rate * T * converge, "total");

	/* The rate drops to 0: W seconds later, 1/e of rate * W is left. */
	for (k = 0; k < NR_DECAYING; k++) {
		unsigned int w = decaying[k];
		struct hc_stats_acc a = acc;
		u64 v;

		ticks(&a, zero, hc_stats_win_seconds(w) / T);
		v = hc_stats_acc_value(&a, w, 0);
		want = (double)rate * hc_stats_win_seconds(w) * left_after_w(w);
		CHECK(rel_err(v, want) < 0.01,
		      "%s W after the rate stops: %llu, want ~%.0f",
		      hc_stats_win_name(w), v, want);
		printf("  %-18s %llu W seconds after it stops (want ~%.0f)\n",
		       hc_stats_win_name(w), v, want);
	}
	/* 64 time constants of the day window: each window is down to 0. */
	ticks(&acc, zero, 64UL * 86400 / T);
	for (k = 0; k < NR_DECAYING; k++)
		for (i = 0; i < HC_STAT_NR; i++)
			CHECK_EQ_U64(acc.v[decaying[k]][i], 0,
				     "idle window reaches exactly 0");
	CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_TOTAL, 0),
		     rate * T * converge, "total after the rate stops");
	CHECK_EQ_U64(hc_stats_acc_hit_ratio(&acc, HC_STATS_FIVE_MINUTE), 0,
		     "hit ratio of an idle window");
}

/* Sector counts too big for the fixed point saturate, never wrap. */
static void test_saturation(void)
{
	static const u64 big[] = {
		1ULL << 40, 1ULL << 47, DECAY_MAX, DECAY_MAX + 1, 1ULL << 62,
		U64_MAX - 1, U64_MAX,
	};
	struct hc_stats_acc acc;
	u64 d[HC_STAT_NR], zero[HC_STAT_NR] = { 0 };
	unsigned int b, k, t, bad = 0;

	printf("huge sector counts saturate at 2^%d - 1 and decay from there\n",
	       64 - HC_STATS_FRAC_BITS);
	for (b = 0; b < sizeof(big) / sizeof(big[0]); b++) {
		u64 prev[NR_DECAYING] = { 0 };
		double model[NR_DECAYING] = { 0 };

		hc_stats_acc_clear(&acc);
		fill(d, 0);
		d[HC_STAT_BYPASSED] = big[b];
		for (t = 0; t < 3000; t++) {
			hc_stats_acc_tick(&acc, d);
			for (k = 0; k < NR_DECAYING; k++) {
				u64 v = hc_stats_acc_value(&acc, decaying[k],
							   HC_STAT_BYPASSED);
				u64 min = big[b] < DECAY_MAX ? big[b] :
							       DECAY_MAX;

				/* A steady feed never makes it shrink. */
				if ((v < prev[k] || v < min ||
				     v > DECAY_MAX + 1) && bad++ < 5)
					CHECK(0, "%s fed %llu/tick, tick %u: "
					      "%llu after %llu",
					      hc_stats_win_name(decaying[k]),
					      big[b], t, v, prev[k]);
				prev[k] = v;
				model[k] = model[k] * (1 - 1.0 * T /
					   hc_stats_win_seconds(decaying[k])) +
					   big[b];
			}
		}
		/* Saturated where the model is past it, else close to it. */
		for (k = 0; k < NR_DECAYING; k++) {
			u64 v = prev[k];

			if (model[k] >= (double)DECAY_MAX)
				CHECK(v >= DECAY_MAX,
				      "%s fed %llu/tick: %llu, want saturated",
				      hc_stats_win_name(decaying[k]), big[b],
				      v);
			else
				CHECK(rel_err(v, model[k]) < 0.001,
				      "%s fed %llu/tick: %llu, want ~%.0f",
				      hc_stats_win_name(decaying[k]), big[b],
				      v, model[k]);
		}
		CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_TOTAL,
						HC_STAT_BYPASSED),
			     big[b] * 3000, "total (modulo 2^64)");
		CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_TOTAL,
						HC_STAT_HITS), 0,
			     "other counters untouched");
		/* It still decays, from wherever it got to. */
		ticks(&acc, zero, 720);
		CHECK(hc_stats_acc_value(&acc, HC_STATS_FIVE_MINUTE,
					 HC_STAT_BYPASSED) < prev[0] / 1000,
		      "five_minute after an hour idle, fed %llu", big[b]);
		printf("  %llu/tick: five_minute %llu, day %llu\n", big[b],
		       prev[0], prev[2]);
	}
	CHECK(!bad, "%u values shrank or overflowed under a steady feed", bad);
	/* 1 GB/s of sectors for a day reads exactly, well below saturation. */
	hc_stats_acc_clear(&acc);
	fill(d, 0);
	d[HC_STAT_BYPASSED] = 2000000ULL * T;
	ticks(&acc, d, 20UL * 86400 / T);
	CHECK(rel_err(hc_stats_acc_value(&acc, HC_STATS_DAY, HC_STAT_BYPASSED),
		      2000000.0 * 86400) < 0.01, "day at 1 GB/s: %llu",
	      hc_stats_acc_value(&acc, HC_STATS_DAY, HC_STAT_BYPASSED));
}

static void test_hit_ratio(void)
{
	/* Past 2^57 the ratio may be 1 below the exact floor. */
	static const struct {
		u64 hits, misses;
		unsigned int want, slack;
	} cases[] = {
		{ 0, 0, 0, 0 }, { 1, 0, 100, 0 }, { 0, 1, 0, 0 },
		{ 1, 1, 50, 0 }, { 2, 1, 66, 0 }, { 1, 2, 33, 0 },
		{ 1, 99, 1, 0 }, { 99, 1, 99, 0 }, { 199, 1, 99, 0 },
		{ 1, 199, 0, 0 }, { (1ULL << 57) - 1, 1, 99, 0 },
		{ 1, (1ULL << 57) - 1, 0, 0 }, { U64_MAX, 0, 100, 0 },
		{ 0, U64_MAX, 0, 0 }, { U64_MAX, U64_MAX, 50, 0 },
		{ 1ULL << 57, 1ULL << 57, 50, 0 },
		{ U64_MAX / 4 * 3, U64_MAX / 4, 75, 1 },
		{ U64_MAX / 100, U64_MAX / 100 * 99, 1, 1 },
		{ U64_MAX - 1000, 1000, 99, 1 },
	};
	unsigned int i;

	printf("%zu hit ratios\n", sizeof(cases) / sizeof(cases[0]));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int r = hc_stats_hit_ratio(cases[i].hits,
						    cases[i].misses);

		CHECK(r <= cases[i].want && r + cases[i].slack >= cases[i].want,
		      "%llu hits, %llu misses: %u%%, want %u%%",
		      cases[i].hits, cases[i].misses, r, cases[i].want);
	}
	CHECK_EQ_U64(hc_stats_acc_hit_ratio(NULL, HC_STATS_WIN_NR), 0,
		     "unknown window");
}

static u64 rnd64(void)
{
	return (u64)random() << 33 ^ (u64)random() << 11 ^ random();
}

/*
 * Random bursts and silences against v = v * (1 - T/W) + delta in double
 * precision: within 0.1% plus 1 (the rounding of a value near 0).
 */
static void test_random(void)
{
	unsigned int seed = time(NULL) ^ getpid(), t, k, i;
	const char *env = getenv("HC_TEST_SEED");
	double model[NR_DECAYING][HC_STAT_NR] = { { 0 } };
	u64 total[HC_STAT_NR] = { 0 }, d[HC_STAT_NR];
	struct hc_stats_acc acc;
	unsigned int bad = 0;

	if (env)
		seed = strtoul(env, NULL, 0);
	printf("200000 random ticks against a model (HC_TEST_SEED=%u)\n",
	       seed);
	srandom(seed);
	hc_stats_acc_clear(&acc);
	for (t = 0; t < 200000; t++) {
		unsigned int shape = random() % 8;

		for (i = 0; i < HC_STAT_NR; i++) {
			if (shape < 3)
				d[i] = 0;
			else if (shape < 7)
				d[i] = rnd64() % 100000;
			else
				d[i] = rnd64() >> (28 + random() % 36);
			total[i] += d[i];
		}
		hc_stats_acc_tick(&acc, d);
		for (k = 0; k < NR_DECAYING; k++) {
			double n = hc_stats_win_seconds(decaying[k]) / T;

			for (i = 0; i < HC_STAT_NR; i++) {
				double *m = &model[k][i];
				u64 v;

				*m = *m * (1 - 1 / n) + d[i];
				v = hc_stats_acc_value(&acc, decaying[k], i);
				if (v - *m > *m * 0.001 + 1 ||
				    *m - v > *m * 0.001 + 1)
					if (bad++ < 5)
						CHECK(0, "tick %u %s counter %u: "
						      "%llu, model %.1f", t,
						      hc_stats_win_name(decaying[k]),
						      i, v, *m);
			}
		}
	}
	CHECK(!bad, "%u values off the model", bad);
	for (i = 0; i < HC_STAT_NR; i++)
		CHECK_EQ_U64(hc_stats_acc_value(&acc, HC_STATS_TOTAL, i),
			     total[i], "random total");
}

int main(void)
{
	test_names();
	test_total();
	test_steady(1);
	test_steady(1000);
	test_steady(20000000);	/* 10 GB/s of sectors */
	test_saturation();
	test_hit_ratio();
	test_random();
	return hc_test_done("test_stats");
}
