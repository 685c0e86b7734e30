/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HCACHE_WB_RATE_H
#define _HCACHE_WB_RATE_H

/*
 * wb_rate.h: how fast writeback writes dirty data back to a backing device
 * while the device is busy: the writeback target, the rate controller that
 * holds the device's dirty data near it, and the pacing that turns a rate
 * into sleeps. Pure code (no locks, no allocation, no I/O, no floating
 * point): writeback.c feeds it, the unit tests simulate workloads with it.
 * The control law and why each term exists are in wb_rate.c.
 *
 * Units: data in 512-byte sectors, rates in sectors per second, update
 * intervals in milliseconds, pacing in nanoseconds. The sysfs files show
 * bytes; writeback.c converts.
 */

#include "pure.h"

/*
 * 64-bit divisions the same way in both builds: the kernel's helpers,
 * which 32-bit architectures need, or plain C in userspace.
 */
#ifdef __KERNEL__
#include <linux/math64.h>

static inline u64 hc_wb_div_u64(u64 a, u64 b)
{
	return div64_u64(a, b);
}

static inline s64 hc_wb_div_s64(s64 a, s64 b)
{
	return div64_s64(a, b);
}
#else
typedef __s64 s64;

static inline u64 hc_wb_div_u64(u64 a, u64 b)
{
	return a / b;
}

static inline s64 hc_wb_div_s64(s64 a, s64 b)
{
	return a / b;
}
#endif

/* Defaults of the sysfs tunables (see wb_rate.c for how they were chosen). */
#define HC_WB_P_TERM_INVERSE_DEFAULT	40	/* seconds */
#define HC_WB_I_TERM_INVERSE_DEFAULT	6400	/* seconds squared */
#define HC_WB_D_TERM_DEFAULT		20	/* seconds of lookahead */
#define HC_WB_RATE_MINIMUM_DEFAULT	8	/* sectors/s = 4 KiB/s */
#define HC_WB_UPDATE_SECONDS_DEFAULT	5
/* writeback_idle_seconds at most (the module parameter's too). */
#define HC_WB_IDLE_SECONDS_MAX		3600

/*
 * The band around the target that counts as "there": a share of the
 * target, but never less than HC_WB_BAND_MIN sectors (see
 * hc_wb_rate_in_band()).
 */
#define HC_WB_BAND_SHIFT	3		/* target / 8 */
#define HC_WB_BAND_MIN		2048		/* sectors = 1 MiB */

/*
 * Inputs beyond these are clamped to them, so that every product in the
 * controller fits in 64 bits: 2^48 sectors is 128 PiB of dirty data, 2^40
 * sectors/s is 512 PiB/s.
 */
#define HC_WB_SECTORS_LIMIT	(1ULL << 48)
#define HC_WB_RATE_LIMIT	(1ULL << 40)
#define HC_WB_DT_MS_LIMIT	120000U		/* one update covers <= 2 min */

/**
 * struct hc_wb_rate_params - the tunables of one backing device's controller
 * @p_term_inverse: P = error / @p_term_inverse: the proportional term
 *	alone would write an error back in @p_term_inverse seconds (0 is
 *	taken as 1)
 * @i_term_inverse: I accumulates error * dt / @i_term_inverse (seconds
 *	squared); 0 turns the integral off and clears it
 * @d_term: D = (@d_term seconds of the smoothed change of dirty data) /
 *	@p_term_inverse: P applied to the error @d_term seconds ahead; 0 off
 * @minimum: the lowest rate, sectors/s
 * @maximum: the highest rate, sectors/s, also the bound of the integral;
 *	wins over @minimum if they cross
 *
 * The caller serialises changes with hc_wb_rate_update() (plain loads).
 */
struct hc_wb_rate_params {
	u32	p_term_inverse;
	u32	i_term_inverse;
	u32	d_term;
	u64	minimum;
	u64	maximum;
};

/**
 * struct hc_wb_rate - the state of one backing device's controller
 * @rate: the output, sectors/s, in [minimum, maximum]
 * @proportional: the P term of the last update, sectors/s
 * @integral: the I term of the last update, sectors/s
 * @derivative: the D term of the last update, sectors/s
 * @last_dirty: dirty data at the last update, sectors (valid if @have_last)
 * @have_last: an update has run since hc_wb_rate_init()
 * @d_smooth: the change of dirty data, sectors/s, smoothed over updates
 * @i_acc: the integral's accumulator, error * time in sector-milliseconds;
 *	@integral is @i_acc / (i_term_inverse * 1000)
 *
 * No locking of its own: the caller serialises every call on one state.
 * Only @rate may be written by the caller (sysfs "writeback_rate"): it
 * holds until the next update, which recomputes it from the terms.
 */
struct hc_wb_rate {
	u64	rate;
	s64	proportional;
	s64	integral;
	s64	derivative;
	u64	last_dirty;
	bool	have_last;
	s64	d_smooth;
	s64	i_acc;
};

/**
 * struct hc_wb_pace - pacing of one writeback thread
 * @next_ns: when the writes so far are paid for at the rate: a write may
 *	start then without exceeding it. 0 before the first write
 */
struct hc_wb_pace {
	u64	next_ns;
};

/*
 * After a pause, writes may run ahead of the rate by at most this much
 * time's worth (the catch-up credit); a single sleep is never longer than
 * HC_WB_PACE_MAX_SLEEP_NS (see hc_wb_pace()).
 */
#define HC_WB_PACE_CREDIT_NS	1000000000ULL	/* 1 s */
#define HC_WB_PACE_MAX_SLEEP_NS	5000000000ULL	/* 5 s */

/* wb_rate.c; each function is documented at its definition. */
void hc_wb_rate_init(struct hc_wb_rate *r, const struct hc_wb_rate_params *p);
void hc_wb_rate_resume(struct hc_wb_rate *r);
u64 hc_wb_rate_update(struct hc_wb_rate *r, const struct hc_wb_rate_params *p,
		      u64 dirty, u64 target, u32 dt_ms);
u64 hc_wb_band(u64 target);
bool hc_wb_rate_in_band(u64 dirty, u64 target);
u64 hc_wb_target(u64 cache_data_sectors, u32 nr_backing,
		 u32 writeback_percent);
u64 hc_wb_pace(struct hc_wb_pace *p, u64 now_ns, u64 sectors, u64 rate);

#endif /* _HCACHE_WB_RATE_H */
