// SPDX-License-Identifier: GPL-2.0
/*
 * bypass.c: which I/O the cache takes in (bypass.h): sequential stream
 * detection, the bypass decision, the read-miss admission policies and
 * the size parser of their sysfs tunables. Pure code.
 */

#include "bypass.h"

/**
 * hc_seq_init() - forget every stream
 * @d: the detector of one backing device
 *
 * Context: before @d is shared, or with the lock protecting it held.
 */
void hc_seq_init(struct hc_seq_detect *d)
{
	unsigned int i;

	for (i = 0; i < HC_SEQ_STREAMS; i++) {
		d->next[i] = HC_SEQ_FREE;
		d->bytes[i] = 0;
		d->lru[i] = i;
	}
}

/* Where slot @slot stands in @d->lru. */
static unsigned int hc_seq_lru_pos(const struct hc_seq_detect *d,
				   unsigned int slot)
{
	unsigned int p = 0;

	while (p < HC_SEQ_STREAMS - 1 && d->lru[p] != slot)
		p++;
	return p;
}

/* Slot @slot was just used: the last to go. */
static void hc_seq_lru_touch(struct hc_seq_detect *d, unsigned int slot)
{
	unsigned int p;

	for (p = hc_seq_lru_pos(d, slot); p < HC_SEQ_STREAMS - 1; p++)
		d->lru[p] = d->lru[p + 1];
	d->lru[HC_SEQ_STREAMS - 1] = slot;
}

/* Slot @slot was freed: the first to go. */
static void hc_seq_lru_free(struct hc_seq_detect *d, unsigned int slot)
{
	unsigned int p;

	d->next[slot] = HC_SEQ_FREE;
	d->bytes[slot] = 0;
	for (p = hc_seq_lru_pos(d, slot); p > 0; p--)
		d->lru[p] = d->lru[p - 1];
	d->lru[0] = slot;
}

/**
 * hc_seq_note() - note an I/O and measure the sequential run it is part of
 * @d: the detector of the I/O's backing device
 * @sector: the I/O's first sector on the backing device
 * @sectors: its length in sectors
 *
 * An I/O continues a stream when it starts exactly at the sector the
 * stream expects next; the stream's run grows by the I/O and now expects
 * the sector after it. Each stream is kept by its expected sector alone,
 * not by who issues it, so two readers scanning different ranges in
 * alternation keep two streams, and HC_SEQ_STREAMS interleaved scans are
 * all told apart.
 *
 * An I/O that continues no stream starts a new one in the least recently
 * used slot: random I/O churns the slots but each run it measures is one
 * I/O long (two random I/O rarely abut), so random I/O stays far below
 * any sensible cutoff. An I/O overlapping a stream's last I/O, or starting
 * before it, is not a continuation: it starts a run of its own.
 *
 * No two streams expect the same sector. An I/O that continues no stream
 * but ends where one expects to go on (a re-read of a stream's last block,
 * or a step back) starts no stream: the stream it touches keeps its run,
 * and repeating such an I/O cannot fill the slots with copies and push out
 * real streams. When a continued stream catches up with another that
 * expects the same sector, the continued one is kept and the other freed.
 *
 * Not detected: a scan running backwards, or one with gaps; more than
 * HC_SEQ_STREAMS streams at once lose their oldest. The run is not capped:
 * a u64 of bytes does not wrap in any device's lifetime.
 *
 * Every I/O costs one pass over @d->next, and a shift of @d->lru when it
 * starts or continues a stream.
 *
 * Context: caller holds the lock protecting @d; does not sleep.
 * Return: the run in bytes, this I/O included; 0 for an I/O of no sectors,
 * which changes nothing.
 */
u64 hc_seq_note(struct hc_seq_detect *d, u64 sector, u32 sectors)
{
	unsigned int i, cont = HC_SEQ_STREAMS, same_next = HC_SEQ_STREAMS;
	u64 next = sector + sectors;
	u64 bytes = (u64)sectors << 9;

	if (!sectors)
		return 0;
	/* A free slot's HC_SEQ_FREE is neither: no I/O starts or ends there. */
	for (i = 0; i < HC_SEQ_STREAMS; i++) {
		if (d->next[i] == sector)
			cont = i;
		else if (d->next[i] == next)
			same_next = i;
	}

	if (cont < HC_SEQ_STREAMS) {
		if (same_next < HC_SEQ_STREAMS)
			hc_seq_lru_free(d, same_next);
		d->next[cont] = next;
		d->bytes[cont] += bytes;
		hc_seq_lru_touch(d, cont);
		return d->bytes[cont];
	}
	if (same_next < HC_SEQ_STREAMS)
		return bytes;

	i = d->lru[0];
	d->next[i] = next;
	d->bytes[i] = bytes;
	hc_seq_lru_touch(d, i);
	return bytes;
}

static const char * const hc_bypass_reason_names[HC_BYPASS_NR] = {
	[HC_BYPASS_NONE]	= "none",
	[HC_BYPASS_SEQUENTIAL]	= "sequential",
	[HC_BYPASS_FULL]	= "full",
	[HC_BYPASS_MODE]	= "mode",
	[HC_BYPASS_POLICY]	= "policy",
};

/**
 * hc_bypass_reason_name() - name of a bypass reason, for sysfs and tracing
 * @r: the reason
 *
 * Return: a constant string; "invalid" for an unknown reason.
 */
const char *hc_bypass_reason_name(enum hc_bypass_reason r)
{
	return (unsigned int)r < HC_BYPASS_NR ? hc_bypass_reason_names[r] :
						"invalid";
}

/**
 * hc_bypass_decide() - should an I/O bypass the cache, and why
 * @in: the I/O and the state of its backing device and cache
 *
 * The rules, first match wins:
 *
 * 1. Mode "none", or a mode this code does not know: every I/O bypasses.
 *    The administrator asked for no caching (say, to drain the cache
 *    before detaching); an unknown mode must fail safe, and bypassing is
 *    always correct where caching might not be.
 *
 * 2. Mode "writearound": writes bypass. Writes go to the backing device
 *    only, so the cache holds only data that was read; reads follow the
 *    rules below.
 *
 * 3. A run of @in->sequential_cutoff bytes or more bypasses, read or
 *    write (0 turns the rule off). A backup, a copy or a scan reads each
 *    block once; caching it would flush the hot set for data that will
 *    not be read again, and the backing device, often a disk, does large
 *    sequential I/O well anyway. The I/O that crosses the cutoff bypasses
 *    with the rest of its run; the start of the run is cached, which is
 *    cheap when the cutoff is small against the cache.
 *
 * 4. A write bypasses when fewer than HC_BYPASS_FULL_PERCENT percent of
 *    buckets are free or clean. Caching a write needs a bucket; when
 *    nearly every bucket holds dirty data or metadata, buckets come back
 *    only as writeback cleans dirty data, and writeback itself needs
 *    buckets for the btree updates that record it. Letting new writes
 *    take those last buckets could deadlock writeback and every writer
 *    waiting on it; sending them to the backing device keeps both going.
 *    Reads do not bypass here: a promotion adds only clean data, which
 *    the allocator may evict, so it cannot bring the cache closer to that
 *    state (the I/O path must still not let a promotion wait for a
 *    bucket).
 *
 * Return: HC_BYPASS_NONE to cache the I/O, else why not; never
 * HC_BYPASS_POLICY, which only the admission policy gives.
 */
enum hc_bypass_reason hc_bypass_decide(const struct hc_bypass_in *in)
{
	if (in->cache_mode == HC_MODE_NONE || in->cache_mode >= HC_MODE_NR)
		return HC_BYPASS_MODE;
	if (in->write && in->cache_mode == HC_MODE_WRITEAROUND)
		return HC_BYPASS_MODE;
	if (in->sequential_cutoff && in->seq_bytes >= in->sequential_cutoff)
		return HC_BYPASS_SEQUENTIAL;
	if (in->write && in->avail_percent < HC_BYPASS_FULL_PERCENT)
		return HC_BYPASS_FULL;
	return HC_BYPASS_NONE;
}

/*
 * Promote on first access: every read miss not bypassed is cached. Cheap
 * and right for a working set that fits; a long scan below the sequential
 * cutoff (random reads of a big file, say) still pushes out the hot set.
 */
static bool hc_admit_first_access(const struct hc_admit_in *in __always_unused)
{
	return true;
}

/*
 * Where a miss of @sector's 4 KiB block goes in the ghost table, and how
 * it is told from the others there: the two halves of a well mixed hash
 * (the finaliser of splitmix64). Never 0, which marks an empty slot.
 */
static u64 hc_admit_hash(u32 bdev_id, u64 sector)
{
	u64 x = (sector >> 3) ^ ((u64)bdev_id << 48);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x | (1ULL << 32);
}

/*
 * Promote on second access: once the cache has no free space left to
 * fill, each promotion evicts cached data, and a range read once (a scan,
 * a cold random read) is rarely read again. So a miss is promoted only if
 * the same 4 KiB block missed before and is still remembered in the ghost
 * table (a slot pair per hash, each slot a 32-bit fingerprint); a first
 * miss is remembered there instead. The table holds about
 * as many blocks as the cache, so "before" means within about one cache's
 * worth of misses. Keyed by the range's first block: a range read again
 * in the same pieces, as databases and page caches do, is recognised.
 */
static bool hc_admit_second_access(const struct hc_admit_in *in)
{
	struct hc_admit_ghost *g = in->ghost;
	u32 *pair, fp, i;
	u64 h;

	if (in->free_percent > HC_ADMIT_FILL_PERCENT || !g || !g->slots)
		return true;
	h = hc_admit_hash(in->bdev_id, in->sector);
	pair = &g->slots[h & g->mask & ~1U];
	fp = h >> 32;
	for (i = 0; i < 2; i++) {
		if (READ_ONCE(pair[i]) == fp) {
			WRITE_ONCE(pair[i], 0);
			return true;
		}
	}
	/*
	 * Into an empty slot if there is one, else into either, in turn: a
	 * slot a block would always take could keep two blocks that hash
	 * alike, read in turn, pushing each other out for ever.
	 */
	if (!READ_ONCE(pair[0])) {
		i = 0;
	} else if (!READ_ONCE(pair[1])) {
		i = 1;
	} else {
		i = READ_ONCE(g->hand) & 1;
		WRITE_ONCE(g->hand, i + 1);
	}
	WRITE_ONCE(pair[i], fp);
	return false;
}

/* Every admission policy, by its HC_ADMIT_* index. */
const struct hc_admit_policy hc_admit_policies[HC_ADMIT_NR] = {
	[HC_ADMIT_FIRST_ACCESS] = {
		.name	= "first_access",
		.admit	= hc_admit_first_access,
	},
	[HC_ADMIT_SECOND_ACCESS] = {
		.name	= "second_access",
		.admit	= hc_admit_second_access,
	},
};

/**
 * hc_admit_ghost_slots() - size a set's ghost table
 * @cache_sectors: the cache device's data space
 *
 * Return: one slot per 4 KiB of cache, rounded down to a power of two,
 * within HC_ADMIT_GHOST_MIN and HC_ADMIT_GHOST_MAX (4 MiB of table).
 */
u32 hc_admit_ghost_slots(u64 cache_sectors)
{
	u64 blocks = cache_sectors >> 3;
	u32 n = HC_ADMIT_GHOST_MIN;

	while (n < HC_ADMIT_GHOST_MAX && (u64)n * 2 <= blocks)
		n *= 2;
	return n;
}

/* @s is @name, or @name and a newline as sysfs writes come. */
static bool hc_name_eq(const char *name, const char *s)
{
	size_t n = strlen(name);

	return !strncmp(s, name, n) &&
	       (!s[n] || (s[n] == '\n' && !s[n + 1]));
}

/**
 * hc_admit_policy_find() - look an admission policy up by name
 * @name: the name, with or without one trailing newline
 *
 * Return: the policy's index in hc_admit_policies[], or -EINVAL if no
 * policy has that name.
 */
int hc_admit_policy_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < HC_ADMIT_NR; i++)
		if (hc_name_eq(hc_admit_policies[i].name, name))
			return i;
	return -EINVAL;
}

/**
 * hc_size_parse() - parse a size written to sysfs
 * @s: decimal digits, then optionally k, m or g (either case: KiB, MiB,
 *	GiB), then optionally one newline; nothing else, not even spaces
 * @bytes: where the size goes, in bytes; untouched on error
 *
 * Written by hand: the same code runs in the module and in userspace,
 * where pure.h offers no parser.
 *
 * Return: 0; -EINVAL if @s is empty, signed or has anything else in it;
 * -ERANGE if it is well formed but does not fit in 64 bits.
 */
int hc_size_parse(const char *s, u64 *bytes)
{
	const u64 max = ~(u64)0;
	unsigned int shift = 0;
	bool range = false;
	u64 v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned int digit = *s - '0';

		if (v > (max - digit) / 10)
			range = true;
		else
			v = v * 10 + digit;
	}
	switch (*s) {
	case 'k':
	case 'K':
		shift = 10;
		s++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		s++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		s++;
		break;
	}
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	if (range || v > max >> shift)
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}
