// SPDX-License-Identifier: GPL-2.0
/*
 * wb_rate.c: the writeback rate of a busy backing device (wb_rate.h):
 * the controller that sets it, the target band, the target, the pacing.
 * Pure code. Data in sectors, rates in sectors/s, time in ms (ns pacing).
 *
 * WHY A CONTROLLER
 *
 * Dirty data in the cache is what makes writeback caching fast (writes
 * complete at cache speed, overwrites and sequential runs merge before
 * they reach the disk) and what it risks (a lost cache device loses it;
 * a full cache must bypass writes). writeback_percent sets a target, a
 * share of the cache; while the backing device serves foreground I/O,
 * writeback should write back just as fast as new dirty data comes in,
 * no faster (it would compete with the foreground for nothing), no
 * slower (dirty data would grow without bound). The inflow is unknown
 * and changes, so the rate is fed back from the dirty data itself, every
 * writeback_rate_update_seconds.
 *
 * THE CONTROL LAW
 *
 *	error = dirty - target					(sectors)
 *	P     = error / p_term_inverse				(sectors/s)
 *	I     = sum(error * dt) / i_term_inverse, within [0, maximum]
 *	D     = d_term * slope / p_term_inverse,  slope = EWMA over updates
 *		of (dirty - last dirty) / dt, 1/4 per update		(sectors/s)
 *	rate  = clamp(P + I + D, minimum, maximum)
 *
 * P writes an excess back in about p_term_inverse seconds: gentle enough
 * not to swamp the disk for a burst, firm enough to follow. On its own it
 * is not enough: the plant integrates (dirty' = inflow - rate), so with a
 * steady inflow f the rate only equals f at an error of f * p_term_inverse.
 * Simulated (test_wb_rate), 1 MB/s into a 1 GiB cache leaves 40 MB dirty
 * above a 100 MiB target whose band is +-12.8 MiB; 2 MB/s into a 256 MiB
 * VM cache, 78 MiB above a 25.6 MiB target (band +-3.2 MiB). Only caches
 * of 100 GiB and more would keep that offset in their band.
 *
 * I removes the offset: it grows while dirty stays above the target and
 * settles at exactly the inflow, so P returns to 0 and dirty to the
 * target. The loop is then second order, (dirty - target)'' * (1 + Kd)
 * + (dirty - target)' / p_term_inverse + (dirty - target) / i_term_inverse
 * = 0 with Kd = d_term / p_term_inverse, and critically damped when
 * i_term_inverse = 4 * p_term_inverse^2 (1 + Kd): 6400 s^2, the default,
 * makes it critical without D and slightly underdamped (zeta 0.82) with
 * the default D. Larger is slower and smoother (10000, bcache's, settles
 * 1.4 to 1.8 times later); much smaller rings.
 *
 * D is P applied to the error d_term seconds ahead: a rising dirty raises
 * the rate at once, before the error has built up, and a falling one
 * lowers it. It cuts the peak error after a change of inflow (by 11% at
 * d_term 20) and so settles sooner, at the price of damping: at d_term 40
 * dirty data crosses the target twice as often and small caches settle
 * later. The slope is smoothed over updates, because writes come in
 * bursts and one burst would otherwise swing the rate; the smoothing is
 * light (1/4 per update), as its lag costs damping too.
 *
 * Anti-windup. The integral stands for the inflow the rate must match at
 * the target, so it is kept within [0, maximum]: never negative, never
 * above what the rate can be. It does not grow further while the output
 * is clamped at the maximum, nor shrink while clamped at the minimum
 * (conditional integration), so a long stretch below the target, at the
 * minimum, leaves nothing to unwind. But when the backing device cannot
 * keep up (inflow above its capacity, or the foreground takes it all),
 * the output is not clamped, only not achieved, and the integral climbs
 * toward the maximum; once the inflow drops, that windup would keep
 * writeback at full speed long after dirty data is below the target. So
 * while dirty data is below the band, the integral bleeds: each 5 s it
 * loses the share of itself that dirty data is of the way from the
 * band's low edge to 0. A dip just past the edge costs it little (a
 * normal undershoot must not throw away the inflow estimate, or the loop
 * falls into a limit cycle); an emptied cache clears it in one update.
 *
 * THE BAND
 *
 * Dirty data counts as at the target within +-target/8, at least +-1 MiB.
 * The target is a coarse knob (an integer percentage of a share of the
 * cache): 1/8 of it is 1.25 points of writeback_percent at the default,
 * finer than the knob itself, yet wide enough that the controller need
 * not chase every burst. The floor keeps a target of 0 (writeback_percent
 * 0, or a tiny cache) from demanding a band narrower than one large
 * write. in_band in writeback_rate_debug shows it.
 *
 * THE NUMBERS (test_wb_rate, defaults, 5 s updates; 1 s updates agree)
 *
 * From a cold start (rate at the minimum, integral 0) at the target,
 * dirty settles in the band for good after: 1 GiB cache at 1 MB/s
 * 260 s, at 20 MB/s 495 s; 10 GiB at 10 MB/s 260 s; 100 GiB at 95 MB/s
 * (near a 100 MB/s disk) 355 s, at 10 or 40 MB/s never leaves the band;
 * VM caches of 64-256 MiB at 1-3.5 MB/s over a 4 MB/s disk 455-485 s. A
 * step of 2 -> 40 MB/s settles in 520 s, 40 -> 2 MB/s in 405 s, at most
 * 2 crossings of the target after. Without I none of the small caches
 * ever enters the band. Above the disk's capacity dirty data rises and
 * the rate saturates with the integral bounded; after it, draining the
 * excess takes what it must and the integral is gone once dirty data is
 * below the band.
 *
 * THE KERNEL'S SIDE
 *
 * writeback.c calls hc_wb_rate_update() every writeback_rate_update_seconds
 * with the device's dirty data, hc_wb_target() and the real time elapsed,
 * and paces its writes with hc_wb_pace() at the resulting rate. While the
 * backing device is idle it writes at full speed and need not pace.
 */

#include "wb_rate.h"

#define HC_WB_S64_MAX		((s64)(~0ULL >> 1))
/* The error the integral takes in, at most: |err| * dt fits in 63 bits. */
#define HC_WB_I_ERR_LIMIT	(1LL << 45)
/* d_term beyond this is taken as this: d_smooth * d_term fits. */
#define HC_WB_D_TERM_LIMIT	(1U << 20)
/* The smoothing of the change of dirty data: 1/4 of each new sample. */
#define HC_WB_D_EWMA		4
/* The time over which the integral's bleed (hc_wb_bleed()) is counted. */
#define HC_WB_I_BLEED_MS	5000
/* A write this large is 4 TiB; sectors * 1e9 fits in 64 bits. */
#define HC_WB_PACE_SECTORS_LIMIT	(1ULL << 33)

static s64 hc_wb_clamp_s64(s64 v, s64 lo, s64 hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* @p->maximum, within HC_WB_RATE_LIMIT. */
static u64 hc_wb_max(const struct hc_wb_rate_params *p)
{
	return p->maximum < HC_WB_RATE_LIMIT ? p->maximum : HC_WB_RATE_LIMIT;
}

/* @p->minimum, never above the maximum. */
static u64 hc_wb_min(const struct hc_wb_rate_params *p)
{
	u64 max = hc_wb_max(p);

	return p->minimum < max ? p->minimum : max;
}

/**
 * hc_wb_rate_init() - start a controller
 * @r: its state
 * @p: its tunables
 *
 * The rate starts at the minimum, every term at 0; the first update
 * measures no change of dirty data yet (it has nothing to compare with).
 */
void hc_wb_rate_init(struct hc_wb_rate *r, const struct hc_wb_rate_params *p)
{
	memset(r, 0, sizeof(*r));
	r->rate = hc_wb_min(p);
}

/**
 * hc_wb_rate_resume() - writeback goes on after a pause
 * @r: its state
 *
 * What the dirty data did during the pause (writeback_running 0) was no
 * trend the rate could have followed: forget the last dirty value and the
 * smoothed slope, so that the next update measures no change, as the first
 * one after hc_wb_rate_init() does. The rate and the integral are kept.
 */
void hc_wb_rate_resume(struct hc_wb_rate *r)
{
	r->have_last = false;
	r->d_smooth = 0;
	r->derivative = 0;
}

/* The integral of @acc, sectors/s; @div is i_term_inverse * 1000. */
static s64 hc_wb_integral(s64 acc, s64 div)
{
	return hc_wb_div_s64(acc, div);
}

/*
 * How much of an integral @acc > 0 to drop when dirty data is @below
 * sectors under the band's low edge, @low (> @below), after @dt ms: the
 * share @below / @low of it per HC_WB_I_BLEED_MS, all of it at most.
 */
static s64 hc_wb_bleed(s64 acc, s64 below, s64 low, u32 dt)
{
	s64 share = hc_wb_div_s64(below << 10, low);	/* in 1/1024 */

	if (dt < HC_WB_I_BLEED_MS)
		share = hc_wb_div_s64(share * dt, HC_WB_I_BLEED_MS);
	return share >= 1024 ? acc : (acc >> 10) * share;
}

/**
 * hc_wb_rate_update() - one update of the controller
 * @r: its state
 * @p: its tunables
 * @dirty: the device's dirty data now, sectors
 * @target: the writeback target, sectors (hc_wb_target())
 * @dt_ms: milliseconds since the last update (writeback_rate_update_seconds
 *	* 1000 on schedule); 0 recomputes the proportional term only
 *
 * Inputs beyond HC_WB_SECTORS_LIMIT, HC_WB_RATE_LIMIT or HC_WB_DT_MS_LIMIT
 * are taken as those limits.
 *
 * Return: the new rate, sectors/s, also in @r->rate.
 */
u64 hc_wb_rate_update(struct hc_wb_rate *r, const struct hc_wb_rate_params *p,
		      u64 dirty, u64 target, u32 dt_ms)
{
	s64 max = hc_wb_max(p), min = hc_wb_min(p);
	s64 pinv = p->p_term_inverse ? p->p_term_inverse : 1;
	u32 d_term = p->d_term < HC_WB_D_TERM_LIMIT ? p->d_term :
						       HC_WB_D_TERM_LIMIT;
	u32 dt = dt_ms < HC_WB_DT_MS_LIMIT ? dt_ms : HC_WB_DT_MS_LIMIT;
	s64 err, out, band;

	if (dirty > HC_WB_SECTORS_LIMIT)
		dirty = HC_WB_SECTORS_LIMIT;
	if (target > HC_WB_SECTORS_LIMIT)
		target = HC_WB_SECTORS_LIMIT;
	err = (s64)dirty - (s64)target;
	band = hc_wb_band(target);

	/* D: the change of dirty data since the last update, smoothed. */
	if (dt && r->have_last) {
		s64 d = hc_wb_div_s64(((s64)dirty - (s64)r->last_dirty) * 1000,
				      dt);

		r->d_smooth += hc_wb_div_s64(d - r->d_smooth, HC_WB_D_EWMA);
		r->d_smooth = hc_wb_clamp_s64(r->d_smooth,
					      -(s64)HC_WB_RATE_LIMIT,
					      HC_WB_RATE_LIMIT);
	}
	if (dt || !r->have_last) {
		r->last_dirty = dirty;
		r->have_last = true;
	}

	r->proportional = hc_wb_div_s64(err, pinv);
	r->derivative = hc_wb_clamp_s64(hc_wb_div_s64(r->d_smooth * d_term,
						      pinv),
					-max, max);

	if (!p->i_term_inverse) {
		r->i_acc = 0;
		r->integral = 0;
	} else {
		s64 div = (s64)p->i_term_inverse * 1000;
		s64 bound = max > HC_WB_S64_MAX / div ? HC_WB_S64_MAX :
							 max * div;
		s64 acc = r->i_acc;

		if (err < -band && acc > 0 && dt)
			acc -= hc_wb_bleed(acc, -err - band, (s64)target - band,
					   dt);
		acc = hc_wb_clamp_s64(acc, 0, bound);
		r->i_acc = acc;
		if (dt) {
			s64 step = hc_wb_clamp_s64(err, -HC_WB_I_ERR_LIMIT,
						   HC_WB_I_ERR_LIMIT) * dt;

			acc = step > 0 && acc > HC_WB_S64_MAX - step ?
			      HC_WB_S64_MAX : acc + step;
			acc = hc_wb_clamp_s64(acc, 0, bound);
			out = r->proportional + hc_wb_integral(acc, div) +
			      r->derivative;
			/* Conditional integration: not further into a clamp. */
			if (!(step > 0 && out > max) && !(step < 0 && out < min))
				r->i_acc = acc;
		}
		r->integral = hc_wb_integral(r->i_acc, div);
	}

	out = r->proportional + r->integral + r->derivative;
	r->rate = hc_wb_clamp_s64(out, min, max);
	return r->rate;
}

/**
 * hc_wb_band() - half the width of the target band
 * @target: the writeback target, sectors
 *
 * Return: how far dirty data may be from @target and count as there,
 * sectors: @target >> HC_WB_BAND_SHIFT, at least HC_WB_BAND_MIN.
 */
u64 hc_wb_band(u64 target)
{
	u64 band = target >> HC_WB_BAND_SHIFT;

	return band > HC_WB_BAND_MIN ? band : HC_WB_BAND_MIN;
}

/**
 * hc_wb_rate_in_band() - is dirty data close enough to the target
 * @dirty: dirty data, sectors
 * @target: the writeback target, sectors
 *
 * Return: |@dirty - @target| <= hc_wb_band(@target).
 */
bool hc_wb_rate_in_band(u64 dirty, u64 target)
{
	u64 d = dirty > target ? dirty - target : target - dirty;

	return d <= hc_wb_band(target);
}

/**
 * hc_wb_target() - the writeback target of one backing device
 * @cache_data_sectors: the cache's room for data, sectors
 * @nr_backing: backing devices attached to the cache (0 is taken as 1)
 * @writeback_percent: the device's writeback_percent
 *
 * Each attached device gets an equal share of the cache; its target is
 * @writeback_percent percent of that share, rounded down. Exact for every
 * input, without overflow.
 *
 * Return: the target, sectors.
 */
u64 hc_wb_target(u64 cache_data_sectors, u32 nr_backing,
		 u32 writeback_percent)
{
	u64 share = hc_wb_div_u64(cache_data_sectors,
				  nr_backing ? nr_backing : 1);
	u64 q = hc_wb_div_u64(share, 100), rem = share - q * 100;

	if (writeback_percent > 100)
		writeback_percent = 100;
	return q * writeback_percent +
	       hc_wb_div_u64(rem * writeback_percent, 100);
}

/**
 * hc_wb_pace() - how long to wait after a write to keep to a rate
 * @p: the pacing state of the writeback thread
 * @now_ns: the time now, ns (any monotonic clock, e.g. ktime_get_ns())
 * @sectors: the sectors just written (or about to be); more than
 *	HC_WB_PACE_SECTORS_LIMIT are taken as that many
 * @rate: the rate, sectors/s (0 is taken as 1)
 *
 * Each write moves @p->next_ns on by the time it takes at @rate. If that
 * time is already past (writeback paused, or writes were slow), the
 * schedule restarts no earlier than HC_WB_PACE_CREDIT_NS ago: a long
 * pause earns at most that much time's worth of writes at full speed, not
 * a burst of everything missed. If it is far ahead (a large write at a
 * low rate), the wait is cut to HC_WB_PACE_MAX_SLEEP_NS, so that a new
 * rate takes effect soon; the debt beyond it is forgiven.
 *
 * Return: nanoseconds to sleep before the next write; 0 to go on at once.
 */
u64 hc_wb_pace(struct hc_wb_pace *p, u64 now_ns, u64 sectors, u64 rate)
{
	u64 start = p->next_ns, cost;

	if (!rate)
		rate = 1;
	if (start + HC_WB_PACE_CREDIT_NS < now_ns)
		start = now_ns - HC_WB_PACE_CREDIT_NS;
	if (sectors > HC_WB_PACE_SECTORS_LIMIT)
		sectors = HC_WB_PACE_SECTORS_LIMIT;
	cost = hc_wb_div_u64(sectors * 1000000000ULL, rate);
	if (cost > HC_WB_PACE_MAX_SLEEP_NS * 2)
		cost = HC_WB_PACE_MAX_SLEEP_NS * 2;
	p->next_ns = start + cost;
	if (p->next_ns <= now_ns)
		return 0;
	if (p->next_ns - now_ns > HC_WB_PACE_MAX_SLEEP_NS)
		p->next_ns = now_ns + HC_WB_PACE_MAX_SLEEP_NS;
	return p->next_ns - now_ns;
}
