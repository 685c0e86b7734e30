// SPDX-License-Identifier: GPL-2.0
/*
 * test_wb_rate: the writeback rate controller of
 * drivers/md/hcache/wb_rate.c, driven by a simulated dirtying workload:
 *
 *	dirty += inflow * dt - min(rate, backing capacity) * dt   (>= 0)
 *
 * in 100 ms steps, the controller updated every 5 s (and every 1 s), with
 * the default tunables and realistic sizes (a 100 MB/s disk behind caches
 * of 1 to 100 GiB; a test VM's 64-256 MiB cache in front of a 4 MB/s
 * null_blk). Each scenario prints its trace and checks that dirty data
 * settles in the target band within a bound, stays there without
 * oscillating, that the rate stays within [minimum, maximum] and the
 * integral within [0, maximum]. Then the terms one by one, the edge
 * cases, hc_wb_target(), the band and the pacing.
 */

#include <stdlib.h>

#include "wb_rate.h"
#include "testlib.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define U64_MAX		(~(u64)0)
#define MIB		2048ULL			/* in sectors */
#define GIB		(1024 * MIB)
#define MBS		2000ULL			/* 1 MB/s in sectors/s */
#define DISK		(100 * MBS)		/* 100 MB/s backing disk */
#define NULLBLK		(4 * MBS)		/* the VM's slow null_blk */
#define KMAX		(4096 * MIB)		/* 4 GiB/s, what writeback.c sets */
#define STEP_MS		100

static const struct hc_wb_rate_params defaults = {
	.p_term_inverse	= HC_WB_P_TERM_INVERSE_DEFAULT,
	.i_term_inverse	= HC_WB_I_TERM_INVERSE_DEFAULT,
	.d_term		= HC_WB_D_TERM_DEFAULT,
	.minimum	= HC_WB_RATE_MINIMUM_DEFAULT,
	.maximum	= KMAX,
};

/*
 * A workload: @inflow0 sectors/s of new dirty data until @step_s, then
 * @inflow1; dirty data starts at @dirty0; writeback can do at most @cap.
 * It must be in the band no later than @settle_s seconds after @step_s
 * and stay there to the end (@settle_s 0: it must not settle at all, for
 * the runs without an integral).
 */
struct scenario {
	const char	*name;
	u64		target;
	u64		cap;
	u64		inflow0;
	u64		inflow1;
	u32		step_s;
	u64		dirty0;
	u32		update_s;
	u32		duration_s;
	u32		settle_s;
};

struct sim_result {
	u32	settled_s;	/* last time out of the band, after step_s */
	u32	sign_changes;	/* of dirty - target, once settled */
	s64	end_err;
	u64	max_dirty;
	u64	max_rate;
	u64	min_rate;
	s64	max_integral;
	s64	min_integral;
	bool	rate_in_bounds;
	bool	integral_in_bounds;
};

static s64 s_abs(s64 v)
{
	return v < 0 ? -v : v;
}

static void print_row(u32 t, u64 dirty, u64 target, const struct hc_wb_rate *r)
{
	printf("  %6u %11llu %11llu %9llu %9lld %9lld %8lld %d\n", t,
	       (unsigned long long)dirty, (unsigned long long)target,
	       (unsigned long long)r->rate, (long long)r->proportional,
	       (long long)r->integral, (long long)r->derivative,
	       hc_wb_rate_in_band(dirty, target));
}

static void simulate(const struct scenario *s,
		     const struct hc_wb_rate_params *p, struct sim_result *res)
{
	u32 updates = s->duration_s / s->update_s, every = updates / 24 + 1;
	u64 dirty = s->dirty0, rate, min = p->minimum, max = p->maximum;
	u32 t_ms, n = 0, settle_from = 0;
	struct hc_wb_rate r;
	int last_sign = 0;

	memset(res, 0, sizeof(*res));
	res->min_rate = U64_MAX;
	res->rate_in_bounds = true;
	res->integral_in_bounds = true;
	hc_wb_rate_init(&r, p);
	rate = r.rate;
	printf("%s: target %llu, cap %llu/s, inflow %llu/s then %llu/s at %us, update %us\n",
	       s->name, (unsigned long long)s->target,
	       (unsigned long long)s->cap, (unsigned long long)s->inflow0,
	       (unsigned long long)s->inflow1, s->step_s, s->update_s);
	printf("  %6s %11s %11s %9s %9s %9s %8s %s\n", "t(s)", "dirty",
	       "target", "rate", "P", "I", "D", "in_band");
	for (t_ms = 0; t_ms <= s->duration_s * 1000; t_ms += STEP_MS) {
		u64 inflow = t_ms < s->step_s * 1000 ? s->inflow0 : s->inflow1;
		u64 out;

		if (t_ms % (s->update_s * 1000) == 0) {
			s64 err = (s64)dirty - (s64)s->target;
			bool in = hc_wb_rate_in_band(dirty, s->target);
			int sign = err > 0 ? 1 : err < 0 ? -1 : 0;

			rate = hc_wb_rate_update(&r, p, dirty, s->target,
						 t_ms ? s->update_s * 1000 : 0);
			if (rate < min || rate > max)
				res->rate_in_bounds = false;
			if (r.integral < 0 || r.integral > (s64)max)
				res->integral_in_bounds = false;
			if (rate > res->max_rate)
				res->max_rate = rate;
			if (rate < res->min_rate)
				res->min_rate = rate;
			if (r.integral > res->max_integral)
				res->max_integral = r.integral;
			if (r.integral < res->min_integral)
				res->min_integral = r.integral;
			if (t_ms >= s->step_s * 1000) {
				if (!in) {
					settle_from = t_ms / 1000 + s->update_s;
					res->sign_changes = 0;
					last_sign = 0;
				} else if (sign) {
					if (last_sign && sign != last_sign)
						res->sign_changes++;
					last_sign = sign;
				}
			}
			if (n++ % every == 0)
				print_row(t_ms / 1000, dirty, s->target, &r);
		}
		out = rate < s->cap ? rate : s->cap;
		dirty += inflow * STEP_MS / 1000;
		out = out * STEP_MS / 1000;
		dirty = dirty > out ? dirty - out : 0;
		if (dirty > res->max_dirty)
			res->max_dirty = dirty;
	}
	print_row(s->duration_s, dirty, s->target, &r);
	res->settled_s = settle_from > s->step_s ? settle_from - s->step_s : 0;
	res->end_err = (s64)dirty - (s64)s->target;
	printf("  -> settled %us after %us (band +-%llu), %u sign changes since,",
	       res->settled_s, s->step_s,
	       (unsigned long long)hc_wb_band(s->target), res->sign_changes);
	printf(" end error %lld, integral %lld..%lld, rate %llu..%llu\n",
	       (long long)res->end_err, (long long)res->min_integral,
	       (long long)res->max_integral,
	       (unsigned long long)res->min_rate,
	       (unsigned long long)res->max_rate);
}

/* Checks common to every run: bounds, settling, no oscillation. */
static void check_run(const struct scenario *s, const struct sim_result *res)
{
	CHECK(res->rate_in_bounds, "%s: rate out of [minimum, maximum]",
	      s->name);
	CHECK(res->integral_in_bounds, "%s: integral out of [0, maximum]",
	      s->name);
	if (!s->settle_s)
		return;
	CHECK(res->settled_s <= s->settle_s,
	      "%s: settled after %us, want <= %us", s->name, res->settled_s,
	      s->settle_s);
	CHECK(s->step_s + res->settled_s + 10 * s->update_s <= s->duration_s,
	      "%s: not in the band for the last 10 updates", s->name);
	/* Settled means it stays: crossing the target is fine, a few times. */
	CHECK(res->sign_changes <= 4, "%s: %u sign changes once settled",
	      s->name, res->sign_changes);
	CHECK(hc_wb_rate_in_band(s->target + res->end_err, s->target),
	      "%s: ends out of the band, error %lld", s->name,
	      (long long)res->end_err);
}

static const struct scenario constant[] = {
	/* Big cache: the P offset alone would fit the wide band. */
	{ "100G, 10 MB/s", 10 * GIB, DISK, 10 * MBS, 10 * MBS, 0, 10 * GIB,
	  5, 1500, 60 },
	{ "100G, 40 MB/s", 10 * GIB, DISK, 40 * MBS, 40 * MBS, 0, 10 * GIB,
	  5, 1500, 60 },
	/* Inflow near the disk's capacity. */
	{ "100G, 95 MB/s", 10 * GIB, DISK, 95 * MBS, 95 * MBS, 0, 10 * GIB,
	  5, 2000, 500 },
	{ "10G, 10 MB/s", GIB, DISK, 10 * MBS, 10 * MBS, 0, GIB,
	  5, 1500, 400 },
	{ "1G, 1 MB/s", GIB / 10, DISK, MBS, MBS, 0, GIB / 10,
	  5, 1500, 400 },
	{ "1G, 20 MB/s", GIB / 10, DISK, 20 * MBS, 20 * MBS, 0, GIB / 10,
	  5, 1500, 700 },
	{ "1G, 20 MB/s, 1 s updates", GIB / 10, DISK, 20 * MBS, 20 * MBS, 0,
	  GIB / 10, 1, 1500, 700 },
	/* The test VM: 64 and 256 MiB caches, 4 MB/s null_blk. */
	{ "VM 64M, 1 MB/s", 64 * MIB / 10, NULLBLK, MBS, MBS, 0, 0,
	  5, 1500, 700 },
	{ "VM 256M, 2 MB/s", 256 * MIB / 10, NULLBLK, 2 * MBS, 2 * MBS, 0, 0,
	  5, 1500, 700 },
	{ "VM 256M, 3.5 MB/s (near capacity)", 256 * MIB / 10, NULLBLK,
	  3500, 3500, 0, 0, 5, 1500, 700 },
	{ "VM 256M, 2 MB/s, 1 s updates", 256 * MIB / 10, NULLBLK,
	  2 * MBS, 2 * MBS, 0, 0, 1, 1500, 700 },
};

static const struct scenario changes[] = {
	{ "1G, step 2 -> 40 MB/s", GIB / 10, DISK, 2 * MBS, 40 * MBS, 1000,
	  GIB / 10, 5, 2500, 800 },
	{ "1G, step 40 -> 2 MB/s", GIB / 10, DISK, 40 * MBS, 2 * MBS, 1000,
	  GIB / 10, 5, 2500, 600 },
	{ "1G, step 40 -> 2 MB/s, 1 s updates", GIB / 10, DISK, 40 * MBS,
	  2 * MBS, 1000, GIB / 10, 1, 2500, 600 },
	/* After a burst: 500 MiB dirty for a 100 MiB target. */
	{ "1G, start far above, 5 MB/s", GIB / 10, DISK, 5 * MBS, 5 * MBS, 0,
	  GIB / 2, 5, 1500, 400 },
	{ "1G, start empty, 5 MB/s", GIB / 10, DISK, 5 * MBS, 5 * MBS, 0, 0,
	  5, 1500, 600 },
	{ "VM 64M, start far above, 1 MB/s", 64 * MIB / 10, NULLBLK, MBS, MBS,
	  0, 60 * MIB, 5, 1500, 700 },
};

/*
 * Inflow above what the disk can take for @step_s: dirty data can only
 * rise, the rate saturates; once the inflow drops, dirty data must drain
 * (which takes the excess / (cap - inflow)) and settle without the
 * integral holding the rate up.
 */
static const struct scenario overload[] = {
	{ "10G, 125 MB/s for 1000 s, then 10 MB/s", GIB, DISK, 125 * MBS,
	  10 * MBS, 1000, GIB, 5, 3000, 1000 },
	{ "VM 64M, 6 MB/s for 1000 s, then 1 MB/s", 64 * MIB / 10, NULLBLK,
	  6 * MBS, MBS, 1000, 0, 5, 3500, 1500 },
};

static void test_scenarios(void)
{
	struct sim_result res;
	unsigned int i;

	printf("constant inflow: settles in the band and stays\n");
	for (i = 0; i < ARRAY_LEN(constant); i++) {
		simulate(&constant[i], &defaults, &res);
		check_run(&constant[i], &res);
	}
	printf("changes of inflow, far from the target\n");
	for (i = 0; i < ARRAY_LEN(changes); i++) {
		simulate(&changes[i], &defaults, &res);
		check_run(&changes[i], &res);
	}
	printf("overload: inflow above the disk's capacity\n");
	for (i = 0; i < ARRAY_LEN(overload); i++) {
		const struct scenario *s = &overload[i];
		u64 excess = (s->inflow0 - s->cap) * s->step_s;

		simulate(s, &defaults, &res);
		check_run(s, &res);
		CHECK(res.max_dirty >= s->dirty0 + excess - excess / 20,
		      "%s: dirty rose to %llu only", s->name,
		      (unsigned long long)res.max_dirty);
		CHECK(res.max_rate >= s->cap, "%s: rate never reached the cap",
		      s->name);
		/* Draining the excess is physics; what comes after is not. */
		CHECK(res.settled_s <= excess / (s->cap - s->inflow1) + 600,
		      "%s: settled %us after the overload, the drain takes %llus",
		      s->name, res.settled_s,
		      (unsigned long long)(excess / (s->cap - s->inflow1)));
	}
}

/*
 * Why the integral: without it the rate only matches the inflow at an
 * error of inflow * p_term_inverse, far outside the band of a small cache.
 */
static void test_without_integral(void)
{
	static const struct scenario s[] = {
		{ "no I: 1G, 1 MB/s", GIB / 10, DISK, MBS, MBS, 0, GIB / 10,
		  5, 1500, 0 },
		{ "no I: VM 256M, 2 MB/s", 256 * MIB / 10, NULLBLK, 2 * MBS,
		  2 * MBS, 0, 0, 5, 1500, 0 },
	};
	struct hc_wb_rate_params p = defaults;
	struct sim_result res;
	unsigned int i;

	printf("without the integral: a steady offset of inflow * p_term_inverse\n");
	p.i_term_inverse = 0;
	for (i = 0; i < ARRAY_LEN(s); i++) {
		s64 offset = s[i].inflow0 * p.p_term_inverse;

		simulate(&s[i], &p, &res);
		check_run(&s[i], &res);
		CHECK(s_abs(res.end_err - offset) <= offset / 50,
		      "%s: end error %lld, want about %lld", s[i].name,
		      (long long)res.end_err, (long long)offset);
		CHECK(!hc_wb_rate_in_band(s[i].target + res.end_err,
					  s[i].target),
		      "%s: in the band without I", s[i].name);
		CHECK(!res.max_integral && !res.min_integral,
		      "%s: integral %lld..%lld with i_term_inverse 0",
		      s[i].name, (long long)res.min_integral,
		      (long long)res.max_integral);
	}
}

/* Zero inflow: dirty data drains to 0, never below the minimum rate. */
static void test_drain(void)
{
	static const struct scenario s = {
		"drain: 1 GiB dirty, target 0, no inflow", 0, DISK, 0, 0, 0,
		GIB, 5, 600, 0
	};
	struct sim_result res;
	struct hc_wb_rate r;
	u64 dirty = 4096;
	u32 t;

	printf("zero inflow: dirty data drains to 0\n");
	simulate(&s, &defaults, &res);
	check_run(&s, &res);
	CHECK(res.end_err == 0, "dirty left: %lld", (long long)res.end_err);

	/* Below the target with no inflow: the minimum still drains it. */
	hc_wb_rate_init(&r, &defaults);
	for (t = 0; t < 1000 && dirty; t += 5) {
		u64 rate = hc_wb_rate_update(&r, &defaults, dirty, GIB, 5000);

		CHECK(rate == HC_WB_RATE_MINIMUM_DEFAULT,
		      "far below the target: rate %llu",
		      (unsigned long long)rate);
		CHECK(r.integral == 0, "integral %lld below the target",
		      (long long)r.integral);
		dirty -= dirty < rate * 5 ? dirty : rate * 5;
	}
	CHECK(!dirty, "4096 sectors at 8/s: %llu left after 1000 s",
	      (unsigned long long)dirty);
}

/* Each term on its own, against its formula. */
static void test_terms(void)
{
	struct hc_wb_rate_params p = defaults;
	struct hc_wb_rate r;
	u64 dirty = 10 * GIB;
	int i;

	printf("the terms: P = error / p_term_inverse, D follows the slope\n");
	p.i_term_inverse = 0;
	p.d_term = 0;
	hc_wb_rate_init(&r, &p);
	CHECK_EQ_U64(r.rate, p.minimum, "rate after init");
	hc_wb_rate_update(&r, &p, GIB + 40 * 12345, GIB, 0);
	CHECK_EQ_U64(r.proportional, 12345, "P");
	CHECK_EQ_U64(r.rate, 12345, "rate = P");
	hc_wb_rate_update(&r, &p, GIB - 40 * 12345, GIB, 5000);
	CHECK(r.proportional == -12345, "P below: %lld",
	      (long long)r.proportional);
	CHECK_EQ_U64(r.rate, p.minimum, "rate at the minimum below target");

	/* Dirty rising 10000 sectors/s: D converges to 10000 * d / p. */
	p.d_term = 20;
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 40; i++, dirty += 50000)
		hc_wb_rate_update(&r, &p, dirty, 10 * GIB, 5000);
	CHECK(r.derivative > 0, "D %lld with dirty rising",
	      (long long)r.derivative);
	CHECK(s_abs(r.derivative - 10000 * 20 / 40) <= 10,
	      "D %lld, want about %d", (long long)r.derivative,
	      10000 * 20 / 40);
	for (i = 0; i < 40; i++, dirty -= 50000)
		hc_wb_rate_update(&r, &p, dirty, 10 * GIB, 5000);
	CHECK(s_abs(r.derivative + 10000 * 20 / 40) <= 10,
	      "D %lld with dirty falling", (long long)r.derivative);

	/*
	 * One burst of 100000 sectors in a 5 s update (20000 sectors/s) is
	 * smoothed: D moves by a quarter of it, 20000 / 4 * 20 / 40 = 2500.
	 */
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 10; i++)
		hc_wb_rate_update(&r, &p, 10 * GIB, 10 * GIB, 5000);
	hc_wb_rate_update(&r, &p, 10 * GIB + 100000, 10 * GIB, 5000);
	CHECK_EQ_U64(r.derivative, 2500, "D after one burst");

	/* Dirty data that grew during a pause is no slope after a resume. */
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 10; i++)
		hc_wb_rate_update(&r, &p, 10 * GIB, 10 * GIB, 5000);
	hc_wb_rate_resume(&r);
	hc_wb_rate_update(&r, &p, 10 * GIB + 100000, 10 * GIB, 1000);
	CHECK_EQ_U64(r.derivative, 0, "D right after a resume");
	hc_wb_rate_update(&r, &p, 10 * GIB + 100000 + 5000, 10 * GIB, 5000);
	CHECK_EQ_U64(r.derivative, 1000 / 4 * 20 / 40,
		     "D one update after a resume");

	/*
	 * Rising fast just below the target, D outweighs P and the rate is
	 * above the minimum, so the negative error integrates: the integral
	 * stops at 0 (it stands for the inflow, never negative).
	 */
	p = defaults;
	hc_wb_rate_init(&r, &p);
	for (dirty = 10 * GIB - 3000000; dirty < 10 * GIB; dirty += 500000) {
		hc_wb_rate_update(&r, &p, dirty, 10 * GIB, 5000);
		CHECK(r.integral >= 0 && r.i_acc >= 0,
		      "integral %lld rising below the target",
		      (long long)r.integral);
	}
	CHECK(r.rate > p.minimum, "rate %llu: D did not outweigh P",
	      (unsigned long long)r.rate);

	/*
	 * I: error e for t seconds adds e * t / i_term_inverse (the first
	 * update integrates its dt too).
	 */
	p = defaults;
	p.d_term = 0;
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 10; i++)
		hc_wb_rate_update(&r, &p, GIB + 64000, GIB, 5000);
	CHECK_EQ_U64(r.integral, 64000 * 50 / 6400, "I after 50 s");
	/* Off clears it. */
	p.i_term_inverse = 0;
	hc_wb_rate_update(&r, &p, GIB + 64000, GIB, 5000);
	CHECK(r.integral == 0 && r.i_acc == 0, "I off: %lld",
	      (long long)r.integral);

	/* Anti-windup: no integration while clamped at the maximum. */
	p = defaults;
	p.maximum = 1000;
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 1000; i++)
		hc_wb_rate_update(&r, &p, 10 * GIB, GIB, 5000);
	CHECK_EQ_U64(r.rate, 1000, "clamped at the maximum");
	CHECK(r.integral == 0, "integral %lld while P alone saturates",
	      (long long)r.integral);
	/* ... and bounded by the maximum when P alone does not saturate. */
	p.maximum = 1000000;
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 100000; i++)
		hc_wb_rate_update(&r, &p, GIB + 400000, GIB, 5000);
	CHECK(r.integral <= 1000000 && r.integral > 900000,
	      "integral %lld, bound 1000000", (long long)r.integral);
	/* Far below the target, that windup bleeds off within a minute. */
	for (i = 0; i < 12; i++)
		hc_wb_rate_update(&r, &p, 0, GIB, 5000);
	CHECK(r.integral < 1000, "integral %lld a minute below the band",
	      (long long)r.integral);
}

/* dt 0, zeros, huge values, crossed limits: no overflow (UBSan). */
static void test_edges(void)
{
	struct hc_wb_rate_params p = defaults;
	struct hc_wb_rate r, before;
	u64 rate;
	int i;

	printf("edge cases\n");
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 5; i++)
		CHECK_EQ_U64(hc_wb_rate_update(&r, &p, 0, 0, 5000), p.minimum,
			     "dirty 0, target 0");
	hc_wb_rate_update(&r, &p, GIB, 0, 5000);
	before = r;
	hc_wb_rate_update(&r, &p, GIB, 0, 0);
	CHECK(r.i_acc == before.i_acc && r.d_smooth == before.d_smooth &&
	      r.last_dirty == before.last_dirty, "dt 0 changed I or D");

	/* Everything at its largest. */
	p.p_term_inverse = 0;
	p.i_term_inverse = ~0U;
	p.d_term = ~0U;
	p.minimum = U64_MAX;
	p.maximum = U64_MAX;
	hc_wb_rate_init(&r, &p);
	for (i = 0; i < 100; i++) {
		rate = hc_wb_rate_update(&r, &p, i & 1 ? U64_MAX : 0,
					 i & 2 ? U64_MAX : 0, ~0U);
		CHECK(rate <= HC_WB_RATE_LIMIT, "rate %llu over the limit",
		      (unsigned long long)rate);
	}
	p.i_term_inverse = 1;
	p.minimum = 0;
	for (i = 0; i < 100; i++) {
		rate = hc_wb_rate_update(&r, &p, i & 2 ? U64_MAX : 0, 0, 1);
		CHECK(rate <= HC_WB_RATE_LIMIT && r.integral >= 0 &&
		      r.integral <= (s64)HC_WB_RATE_LIMIT,
		      "rate %llu integral %lld", (unsigned long long)rate,
		      (long long)r.integral);
	}
	/* Minimum above the maximum: the maximum wins. */
	p = defaults;
	p.minimum = 5000;
	p.maximum = 100;
	hc_wb_rate_init(&r, &p);
	CHECK_EQ_U64(r.rate, 100, "init, minimum > maximum");
	CHECK_EQ_U64(hc_wb_rate_update(&r, &p, 0, GIB, 5000), 100,
		     "update, minimum > maximum");
	/* A rate written by sysfs holds until the next update. */
	p = defaults;
	hc_wb_rate_init(&r, &p);
	r.rate = 123456;
	CHECK_EQ_U64(hc_wb_rate_update(&r, &p, GIB, GIB, 5000), p.minimum,
		     "update after a written rate");
}

static void test_target_band(void)
{
	printf("hc_wb_target and the band\n");
	/* 10% of a 1 GiB cache shared by 2 devices: 51.2 MiB. */
	CHECK_EQ_U64(hc_wb_target(GIB, 2, 10), GIB / 2 / 10, "1G, 2, 10%");
	CHECK_EQ_U64(hc_wb_target(GIB, 1, 10), 209715, "1G, 1, 10%");
	CHECK_EQ_U64(hc_wb_target(GIB, 0, 10), 209715, "no device taken as 1");
	CHECK_EQ_U64(hc_wb_target(GIB, 3, 0), 0, "0%");
	CHECK_EQ_U64(hc_wb_target(0, 1, 50), 0, "empty cache");
	CHECK_EQ_U64(hc_wb_target(199, 1, 50), 99, "rounded down");
	CHECK_EQ_U64(hc_wb_target(U64_MAX, 1, 100), U64_MAX, "all of 2^64-1");
	CHECK_EQ_U64(hc_wb_target(U64_MAX, 1, 50), U64_MAX / 2, "half");
	CHECK_EQ_U64(hc_wb_target(U64_MAX, 1, 1000), U64_MAX, "over 100%");

	CHECK_EQ_U64(hc_wb_band(0), HC_WB_BAND_MIN, "band of 0");
	CHECK_EQ_U64(hc_wb_band(8 * GIB), GIB, "band of 8 GiB");
	CHECK(hc_wb_rate_in_band(0, 0), "0 at 0");
	CHECK(hc_wb_rate_in_band(HC_WB_BAND_MIN, 0), "edge above 0");
	CHECK(!hc_wb_rate_in_band(HC_WB_BAND_MIN + 1, 0), "past the edge");
	CHECK(hc_wb_rate_in_band(7 * GIB, 8 * GIB), "low edge");
	CHECK(!hc_wb_rate_in_band(7 * GIB - 1, 8 * GIB), "below low edge");
	CHECK(hc_wb_rate_in_band(9 * GIB, 8 * GIB), "high edge");
	CHECK(!hc_wb_rate_in_band(9 * GIB + 1, 8 * GIB), "above high edge");
	CHECK(!hc_wb_rate_in_band(U64_MAX, 0), "2^64-1 at 0");
	CHECK(!hc_wb_rate_in_band(0, U64_MAX), "0 at 2^64-1");
	CHECK(hc_wb_rate_in_band(U64_MAX, U64_MAX), "2^64-1 at 2^64-1");
}

/*
 * A writeback thread: writes of @sectors taking @write_ns each, sleeping
 * what hc_wb_pace() says, for @secs seconds from @now. Returns the sectors
 * written.
 */
static u64 pace_run(struct hc_wb_pace *p, u64 *now, u64 secs, u64 sectors,
		    u64 write_ns, u64 rate)
{
	u64 end = *now + secs * 1000000000ULL, written = 0;

	while (*now < end) {
		*now += write_ns;
		written += sectors;
		*now += hc_wb_pace(p, *now, sectors, rate);
	}
	return written;
}

static void test_pace(void)
{
	static const struct { u64 rate, sectors, write_ns; } runs[] = {
		{ 200000, 2048, 1000000 },	/* 100 MB/s in 1 MiB writes */
		{ 20000, 256, 100000 },
		{ 4096, 8, 50000 },
		{ 8, 8, 50000 },		/* the minimum, 4 KiB writes */
		{ 1000000, 1, 100 },
	};
	struct hc_wb_pace p = { 0 };
	u64 now = 1000000000000ULL, w, burst, sleep;
	unsigned int i;

	printf("pacing keeps the average and bounds the catch-up\n");
	for (i = 0; i < ARRAY_LEN(runs); i++) {
		u64 want = runs[i].rate * 100;

		w = pace_run(&p, &now, 100, runs[i].sectors, runs[i].write_ns,
			     runs[i].rate);
		printf("  rate %7llu, %4llu-sector writes: %llu sectors in 100 s\n",
		       (unsigned long long)runs[i].rate,
		       (unsigned long long)runs[i].sectors,
		       (unsigned long long)w);
		/* The credit of one second may come on top. */
		CHECK(w >= want - want / 50 &&
		      w <= want + want / 50 + runs[i].rate + runs[i].sectors,
		      "rate %llu: %llu sectors in 100 s",
		      (unsigned long long)runs[i].rate, (unsigned long long)w);
	}

	/* A minute's pause: at most a second's worth at full speed. */
	now += 60 * 1000000000ULL;
	burst = 0;
	do {
		now += 1000;
		burst += 256;
		sleep = hc_wb_pace(&p, now, 256, 20000);
	} while (!sleep && burst < 10000000);
	printf("  after a 60 s pause: %llu sectors before the first sleep\n",
	       (unsigned long long)burst);
	CHECK(burst <= 20000 + 256, "burst of %llu sectors at 20000/s",
	      (unsigned long long)burst);
	CHECK(burst >= 20000 - 256, "credit of %llu sectors, want 1 s worth",
	      (unsigned long long)burst);

	/* A big write at a low rate: the sleep is bounded. */
	sleep = hc_wb_pace(&p, now, 1 << 20, 8);
	CHECK_EQ_U64(sleep, HC_WB_PACE_MAX_SLEEP_NS, "sleep after 512 MiB at 8/s");
	CHECK(hc_wb_pace(&p, now, U64_MAX, 0) <= HC_WB_PACE_MAX_SLEEP_NS,
	      "huge write at rate 0");
	p.next_ns = 0;
	CHECK(hc_wb_pace(&p, U64_MAX / 2, U64_MAX, U64_MAX) <=
	      HC_WB_PACE_MAX_SLEEP_NS, "huge everything");
}

int main(void)
{
	test_scenarios();
	test_without_integral();
	test_drain();
	test_terms();
	test_edges();
	test_target_band();
	test_pace();
	return hc_test_done("test_wb_rate");
}
