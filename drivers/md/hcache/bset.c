// SPDX-License-Identifier: GPL-2.0
/*
 * bset.c: sorted sets of keys in memory (bset.h): binary-search lookup,
 * insert resolving overlaps, compare-and-swap insert, merge, the
 * consistency check, and conversion to and from struct hc_bset_disk. Pure
 * code, shared by the module and the tools.
 */

#include "bset.h"

static u64 hc_min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 hc_max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* Does @a end at or before the start of @b, in (bdev_id, sector) order? */
static bool hc_key_wholly_before(const struct hc_key *a,
				 const struct hc_key *b)
{
	if (a->bdev_id != b->bdev_id)
		return a->bdev_id < b->bdev_id;
	return a->end <= hc_key_start(b);
}

/* Why @k may not follow @prev in a sorted set, or NULL. */
static const char *hc_key_order_invalid(const struct hc_key *prev,
					const struct hc_key *k)
{
	if (prev->bdev_id > k->bdev_id ||
	    (prev->bdev_id == k->bdev_id && prev->end >= k->end))
		return "keys out of order";
	if (prev->bdev_id == k->bdev_id && hc_key_start(k) < prev->end)
		return "keys overlap";
	return NULL;
}

/**
 * hc_bset_lookup() - where a sector is, or would be, in a sorted set
 * @set: the set
 * @bdev_id: backing device
 * @sector: backing sector
 *
 * Binary search for the first key after (@bdev_id, @sector) in key order:
 * the first key of @bdev_id whose end is above @sector, or else the first
 * key of a higher bdev_id. That key covers @sector if it belongs to
 * @bdev_id and starts at or before @sector (hc_bset_find()).
 *
 * Return: its index, or @set->nr if there is none.
 */
size_t hc_bset_lookup(const struct hc_bset_mem *set, u32 bdev_id, u64 sector)
{
	size_t lo = 0, hi = set->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct hc_key *k = &set->keys[mid];

		if (k->bdev_id < bdev_id ||
		    (k->bdev_id == bdev_id && k->end <= sector))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/**
 * hc_bset_find() - the key covering a sector
 * @set: the set
 * @bdev_id: backing device
 * @sector: backing sector
 *
 * Return: the key of @bdev_id whose range holds @sector (a whiteout in a
 * set that keeps them), or NULL if there is none.
 */
const struct hc_key *hc_bset_find(const struct hc_bset_mem *set, u32 bdev_id,
				  u64 sector)
{
	size_t i = hc_bset_lookup(set, bdev_id, sector);
	const struct hc_key *k;

	if (i == set->nr)
		return NULL;
	k = &set->keys[i];
	if (k->bdev_id != bdev_id || hc_key_start(k) > sector)
		return NULL;
	return k;
}

/*
 * What inserting a key does to a set: keys [i, j) overlap its range; the
 * first of them keeps a front part, the last a back part (the same key if
 * it covers both sides); out keys replace [i, j).
 */
struct hc_bset_plan {
	size_t	i;
	size_t	j;
	bool	front;
	bool	store;
	bool	back;
	size_t	out;
};

static void hc_bset_plan(const struct hc_bset_mem *set,
			 const struct hc_key *new, struct hc_bset_plan *p)
{
	u64 start = hc_key_start(new);

	p->i = hc_bset_lookup(set, new->bdev_id, start);
	p->j = p->i;
	while (p->j < set->nr && set->keys[p->j].bdev_id == new->bdev_id &&
	       hc_key_start(&set->keys[p->j]) < new->end)
		p->j++;
	p->front = p->i < p->j && hc_key_start(&set->keys[p->i]) < start;
	p->back = p->i < p->j && set->keys[p->j - 1].end > new->end;
	p->store = new->nr_ptrs || set->keep_whiteouts;
	p->out = p->front + p->store + p->back;
}

/* Keys the plan adds to the set; negative if it removes some. */
static long hc_bset_plan_growth(const struct hc_bset_plan *p)
{
	return (long)p->out - (long)(p->j - p->i);
}

static void hc_bset_apply(struct hc_bset_mem *set, const struct hc_key *new,
			  const struct hc_bset_plan *p,
			  const struct hc_bset_ops *ops)
{
	u64 start = hc_key_start(new);
	struct hc_key repl[3];
	size_t n = 0, i;

	for (i = p->i; ops && ops->sectors_removed && i < p->j; i++) {
		const struct hc_key *k = &set->keys[i];

		if (k->nr_ptrs)
			ops->sectors_removed(ops->priv, k,
					     hc_max_u64(hc_key_start(k), start),
					     hc_min_u64(k->end, new->end));
	}

	if (p->front) {
		repl[n] = set->keys[p->i];
		hc_key_cut_back(&repl[n++], start);
	}
	if (p->store)
		repl[n++] = *new;
	if (p->back) {
		repl[n] = set->keys[p->j - 1];
		hc_key_cut_front(&repl[n++], new->end);
	}

	/*
	 * An overwrite of exactly one key (n == j - i), the common case of
	 * random rewrites and of writeback marking keys clean, moves nothing:
	 * memmove() would still copy the whole tail onto itself, which costs
	 * as much as a real shift.
	 */
	if (p->j < set->nr && p->i + n != p->j)
		memmove(set->keys + p->i + n, set->keys + p->j,
			(set->nr - p->j) * sizeof(*set->keys));
	if (n)
		memcpy(set->keys + p->i, repl, n * sizeof(*repl));
	set->nr = set->nr - (p->j - p->i) + n;
}

/**
 * hc_bset_insert() - insert a key, overwriting what it overlaps
 * @set: a valid set (hc_bset_check())
 * @new: the key; with no pointer, an invalidation
 * @ops: callbacks, or NULL
 *
 * Every existing key of @new->bdev_id that overlaps @new loses the
 * overlapping sectors: a key @new covers is dropped; a key covering both
 * sides of @new is split into a front and a back part (the back part's
 * pointer offset advanced); a key overlapping one end is cut. Then @new is
 * stored, unless it is a whiteout and @set does not keep whiteouts.
 * @ops->sectors_removed() hears of every overwritten sector that had a
 * pointer. Other backing devices are untouched.
 *
 * Return: 0; -EINVAL if @new is not a valid key (hc_key_invalid()), or
 * -ENOSPC if @set would need more than its capacity; on error the set is
 * unchanged and no callback was made.
 */
int hc_bset_insert(struct hc_bset_mem *set, const struct hc_key *new,
		   const struct hc_bset_ops *ops)
{
	struct hc_bset_plan p;
	long grow;

	if (hc_key_invalid(new))
		return -EINVAL;
	hc_bset_plan(set, new, &p);
	grow = hc_bset_plan_growth(&p);
	if (grow > 0 && (size_t)grow > set->capacity - set->nr)
		return -ENOSPC;
	hc_bset_apply(set, new, &p, ops);
	return 0;
}

/*
 * The next run of [*pos, to) of @bdev_id that @set maps the way @expected
 * does, cut at key boundaries: one key of the set that maps like @expected
 * (hc_key_same_mapping()), or, if @expected is a whiteout, one gap between
 * keys. Advances *pos past the run.
 */
static bool hc_cmpxchg_next(const struct hc_bset_mem *set,
			    const struct hc_key *expected, u32 bdev_id,
			    u64 *pos, u64 to, u64 *run_start, u64 *run_end)
{
	size_t i = hc_bset_lookup(set, bdev_id, *pos);

	while (*pos < to) {
		const struct hc_key *k = NULL;
		bool match;
		u64 end;

		if (i < set->nr && set->keys[i].bdev_id == bdev_id)
			k = &set->keys[i];
		if (k && hc_key_start(k) <= *pos) {
			end = hc_min_u64(k->end, to);
			match = hc_key_same_mapping(k, expected);
			i++;
		} else {
			end = k ? hc_min_u64(hc_key_start(k), to) : to;
			match = !expected->nr_ptrs;
		}
		if (match) {
			*run_start = *pos;
			*run_end = end;
			*pos = end;
			return true;
		}
		*pos = end;
	}
	return false;
}

static void hc_key_cut_to(struct hc_key *k, const struct hc_key *from,
			  u64 start, u64 end)
{
	*k = *from;
	hc_key_cut_front(k, start);
	hc_key_cut_back(k, end);
}

/**
 * hc_bset_insert_cmpxchg() - insert a key where the set still holds another
 * @set: a valid set (hc_bset_check())
 * @new: the key to insert; with no pointer, an invalidation
 * @expected: what the caller saw in @set when it started (a key as it was
 *	then, possibly cut to a part of it); a whiteout means "nothing
 *	cached"
 * @ops: callbacks, or NULL
 * @inserted: if not NULL, receives the number of sectors inserted
 *
 * For writeback (clear the dirty flag only if the key was not overwritten
 * meanwhile) and promotion (insert data read from the backing device only
 * where nothing was cached meanwhile). Works sector by sector: a sector of
 * both @new's and @expected's ranges (same backing device) qualifies if
 *
 * - @expected has a pointer, and the set holds a key covering the sector
 *   that maps like @expected (hc_key_same_mapping(): same cache device, gen
 *   and dirty flag, and the sector maps to the same cache sector); or
 * - @expected is a whiteout, and no key covers the sector, or a whiteout
 *   does.
 *
 * @new, cut to each maximal run of qualifying sectors within one existing
 * key or gap, is inserted there as by hc_bset_insert(); sectors that do not
 * qualify are left as they are. All runs are inserted, or none.
 *
 * Return: 0, also when nothing qualified (then *@inserted is 0); -EINVAL
 * if @new or @expected is not a valid key; -ENOSPC if the inserts would
 * need more than the set's capacity. On error the set is unchanged, no
 * callback was made and *@inserted is 0.
 */
int hc_bset_insert_cmpxchg(struct hc_bset_mem *set, const struct hc_key *new,
			   const struct hc_key *expected,
			   const struct hc_bset_ops *ops, u64 *inserted)
{
	u64 from, to, pos, run_start, run_end, total = 0;
	struct hc_bset_plan p;
	struct hc_key piece;
	long grow = 0, peak = 0;

	if (inserted)
		*inserted = 0;
	if (hc_key_invalid(new) || hc_key_invalid(expected))
		return -EINVAL;
	if (new->bdev_id != expected->bdev_id)
		return 0;
	from = hc_max_u64(hc_key_start(new), hc_key_start(expected));
	to = hc_min_u64(new->end, expected->end);

	/*
	 * First pass, set untouched: the largest number of keys the inserts
	 * add at any point. Each run lies within one existing key or gap, so
	 * inserting one does not change what the later runs overlap: the
	 * second pass sees the same runs with the same growth.
	 */
	pos = from;
	while (hc_cmpxchg_next(set, expected, new->bdev_id, &pos, to,
			       &run_start, &run_end)) {
		hc_key_cut_to(&piece, new, run_start, run_end);
		hc_bset_plan(set, &piece, &p);
		grow += hc_bset_plan_growth(&p);
		if (grow > peak)
			peak = grow;
	}
	if (peak > 0 && (size_t)peak > set->capacity - set->nr)
		return -ENOSPC;

	pos = from;
	while (hc_cmpxchg_next(set, expected, new->bdev_id, &pos, to,
			       &run_start, &run_end)) {
		hc_key_cut_to(&piece, new, run_start, run_end);
		hc_bset_plan(set, &piece, &p);
		hc_bset_apply(set, &piece, &p, ops);
		total += run_end - run_start;
	}
	if (inserted)
		*inserted = total;
	return 0;
}

static int hc_bset_emit(struct hc_bset_mem *dst, const struct hc_key *k)
{
	if (!k->nr_ptrs && !dst->keep_whiteouts)
		return 0;
	if (dst->nr == dst->capacity)
		return -ENOSPC;
	dst->keys[dst->nr++] = *k;
	return 0;
}

/**
 * hc_bset_merge() - merge two sorted sets, the newer winning
 * @dst: receives the result; its own array, not shared with the others
 * @older: a valid set (hc_bset_check())
 * @newer: a valid set, written after @older
 *
 * The result holds every key of @newer and what is left of @older's keys
 * outside them, cut as hc_bset_insert() cuts: merging is the same as
 * inserting @newer's keys one by one into a copy of @older, provided
 * @newer kept its whiteouts. Whiteouts (of either set) are kept only if
 * @dst->keep_whiteouts. Linear in the number of keys. To resolve a chain
 * of sets, merge them oldest first.
 *
 * Return: 0, or -ENOSPC if the result does not fit in @dst (then @dst is
 * left empty).
 */
int hc_bset_merge(struct hc_bset_mem *dst, const struct hc_bset_mem *older,
		  const struct hc_bset_mem *newer)
{
	size_t i = 0, j = 0;
	struct hc_key cur, front;
	bool have = false;
	int ret = 0;

	dst->nr = 0;
	for (;;) {
		const struct hc_key *n = NULL;

		if (j < newer->nr)
			n = &newer->keys[j];
		if (!have && i < older->nr) {
			cur = older->keys[i++];
			have = true;
		}
		if (!have && !n)
			break;

		if (!have || (n && hc_key_wholly_before(n, &cur))) {
			ret = hc_bset_emit(dst, n);
			j++;
		} else if (!n || hc_key_wholly_before(&cur, n)) {
			ret = hc_bset_emit(dst, &cur);
			have = false;
		} else if (hc_key_start(&cur) < hc_key_start(n)) {
			/* Keep the part before @n; the rest is seen again. */
			front = cur;
			hc_key_cut_back(&front, hc_key_start(n));
			ret = hc_bset_emit(dst, &front);
			hc_key_cut_front(&cur, hc_key_start(n));
		} else if (cur.end <= n->end) {
			have = false;		/* covered by @n */
		} else {
			hc_key_cut_front(&cur, n->end);
		}
		if (ret) {
			dst->nr = 0;
			return ret;
		}
	}
	return 0;
}

/**
 * hc_bset_check() - check a sorted set's invariants
 * @set: the set
 *
 * Every key valid (hc_key_invalid()), keys in strictly increasing
 * (bdev_id, end) order, no two overlapping, no more than the capacity.
 *
 * Return: NULL if consistent, else a constant string naming the first
 * rule broken.
 */
const char *hc_bset_check(const struct hc_bset_mem *set)
{
	const char *err;
	size_t i;

	if (set->nr > set->capacity)
		return "more keys than the set can hold";
	for (i = 0; i < set->nr; i++) {
		err = hc_key_invalid(&set->keys[i]);
		if (!err && i)
			err = hc_key_order_invalid(&set->keys[i - 1],
						   &set->keys[i]);
		if (err)
			return err;
	}
	return NULL;
}

/**
 * hc_bset_csum() - the checksum a sorted set should carry
 * @d: the set, with hc_bset_bytes(@d->u64s) bytes readable
 *
 * CRC-32C of the header and the keys with the csum field read as zero.
 *
 * Return: the checksum, in CPU order.
 */
u32 hc_bset_csum(const struct hc_bset_disk *d)
{
	return hc_csum_skip(d, hc_bset_bytes(le32_to_cpu(d->u64s)),
			    offsetof(struct hc_bset_disk, csum));
}

/**
 * hc_bset_encode_u64s() - length of a sorted set's keys on disk
 * @set: the set
 *
 * Return: the hc_bset_disk.u64s that hc_bset_encode() will write.
 */
size_t hc_bset_encode_u64s(const struct hc_bset_mem *set)
{
	size_t i, u64s = 0;

	for (i = 0; i < set->nr; i++)
		u64s += hc_key_disk_u64s(set->keys[i].nr_ptrs);
	return u64s;
}

/**
 * hc_bset_encode() - the disk form of a sorted set
 * @set: the set; not validated
 * @set_magic: the cache set's magic (hc_set_magic())
 * @info: node and journal seqs for the header
 * @buf: receives hc_bset_bytes(hc_bset_encode_u64s(@set)) bytes, 8-byte
 *	 aligned
 * @len: bytes available at @buf
 *
 * Return: 0, or -ENOSPC if @buf is too short or the keys too many for the
 * header's u64s; then @buf is untouched.
 */
int hc_bset_encode(const struct hc_bset_mem *set, u64 set_magic,
		   const struct hc_bset_info *info, void *buf, size_t len)
{
	size_t u64s = hc_bset_encode_u64s(set);
	struct hc_bset_disk *d = buf;
	__le64 *out;
	size_t i;

	if (u64s > (u32)~0U || len < sizeof(*d) ||
	    u64s > (len - sizeof(*d)) / sizeof(u64))
		return -ENOSPC;

	memset(d, 0, sizeof(*d));
	d->magic = cpu_to_le64(set_magic ^ HC_BSET_MAGIC);
	d->u64s = cpu_to_le32(u64s);
	d->node_seq = cpu_to_le64(info->node_seq);
	d->journal_seq = cpu_to_le64(info->journal_seq);
	out = d->keys;
	for (i = 0; i < set->nr; i++)
		out += hc_key_encode(&set->keys[i], (struct hc_key_disk *)out);
	d->csum = cpu_to_le32(hc_bset_csum(d));
	return 0;
}

/**
 * hc_bset_decode() - validate a sorted set and convert it to memory form
 * @buf: the bytes read, 8-byte aligned
 * @len: how many; the set may be shorter (the rest is ignored)
 * @set_magic: the cache set's magic (hc_set_magic())
 * @cache_sectors: size of the cache device, sectors; every pointer must
 *	point below it
 * @set: receives the keys, whiteouts included, into its array; its
 *	keep_whiteouts is left alone; empty on error
 * @info: receives the header's seqs
 * @why: if not NULL, receives NULL, or a constant string naming the first
 *	 rule broken
 *
 * Return: 0 if valid; -EINVAL if not a sorted set of this cache set (too
 * short for a header, bad magic); -EBADMSG on a checksum mismatch;
 * -ENOSPC if it holds more keys than @set's capacity; -EUCLEAN if anything
 * else breaks a rule (keys past the end of @buf, an invalid key, keys out
 * of order or overlapping).
 */
int hc_bset_decode(const void *buf, size_t len, u64 set_magic,
		   u64 cache_sectors, struct hc_bset_mem *set,
		   struct hc_bset_info *info, const char **why)
{
	const struct hc_bset_disk *d = buf;
	const u8 *p;
	struct hc_key k;
	size_t left, used;
	const char *err;
	int ret;

	set->nr = 0;
	memset(info, 0, sizeof(*info));

	ret = -EINVAL;
	err = "sorted set shorter than its header";
	if (len < sizeof(*d))
		goto err;
	err = "bad magic";
	if (le64_to_cpu(d->magic) != (set_magic ^ HC_BSET_MAGIC))
		goto err;

	ret = -EUCLEAN;
	err = "keys run past the end of the buffer";
	if (le32_to_cpu(d->u64s) > (len - sizeof(*d)) / sizeof(u64))
		goto err;

	ret = -EBADMSG;
	err = "checksum mismatch";
	if (le32_to_cpu(d->csum) != hc_bset_csum(d))
		goto err;

	info->node_seq = le64_to_cpu(d->node_seq);
	info->journal_seq = le64_to_cpu(d->journal_seq);

	p = (const u8 *)d->keys;
	left = (size_t)le32_to_cpu(d->u64s) * sizeof(u64);
	while (left) {
		ret = hc_key_decode(p, left, cache_sectors, &k, &used, &err);
		if (ret)
			goto err;
		ret = -EUCLEAN;
		if (set->nr) {
			err = hc_key_order_invalid(&set->keys[set->nr - 1], &k);
			if (err)
				goto err;
		}
		ret = -ENOSPC;
		err = "more keys than the set can hold";
		if (set->nr == set->capacity)
			goto err;
		set->keys[set->nr++] = k;
		p += used;
		left -= used;
	}
	if (why)
		*why = NULL;
	return 0;
err:
	set->nr = 0;
	if (why)
		*why = err;
	return ret;
}
