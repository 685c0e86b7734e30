// SPDX-License-Identifier: GPL-2.0
/*
 * bdev_table.c: the backing-device table (bdev_table.h): lookup, attach
 * and detach with ids that are never reused, and conversion between
 * struct hc_bdev_table_disk and struct hc_bdev_table, validating on the
 * way in. Pure code, shared by the module and the tools.
 */

#include "bdev_table.h"

static bool hc_bdev_uuid_is_nil(const u8 *uuid)
{
	unsigned int i;

	for (i = 0; i < HC_UUID_SIZE; i++)
		if (uuid[i])
			return false;
	return true;
}

/**
 * hc_bdev_table_init() - make an empty backing-device table
 * @t: the table
 *
 * No entries, seq 0, next_id 1: id 0 is never handed out.
 */
void hc_bdev_table_init(struct hc_bdev_table *t)
{
	t->seq = 0;
	t->next_id = 1;
	t->nr = 0;
}

/**
 * hc_bdev_table_bytes() - on-disk size of a backing-device table
 * @t: the table
 *
 * Return: header and @t->nr entries, in bytes.
 */
size_t hc_bdev_table_bytes(const struct hc_bdev_table *t)
{
	return sizeof(struct hc_bdev_table_disk) +
	       (size_t)t->nr * sizeof(struct hc_bdev_entry_disk);
}

/**
 * hc_bdev_table_csum() - the checksum a backing-device table should carry
 * @d: the table, with its header and @d->nr entries readable
 *
 * CRC-32C of the header and the entries, the csum field read as zero.
 *
 * Return: the checksum, in CPU order.
 */
u32 hc_bdev_table_csum(const struct hc_bdev_table_disk *d)
{
	size_t bytes = sizeof(*d) +
		       (size_t)le32_to_cpu(d->nr) * sizeof(d->d[0]);

	return hc_csum_skip(d, bytes,
			    offsetof(struct hc_bdev_table_disk, csum));
}

/**
 * hc_bdev_table_encode() - the disk form of a backing-device table
 * @t: the table; not validated beyond its entry count
 * @set_magic: the cache set's magic (hc_set_magic())
 * @buf: receives hc_bdev_table_bytes(@t) bytes, 8-byte aligned
 * @len: bytes available at @buf
 *
 * Nothing past hc_bdev_table_bytes(@t) is written.
 *
 * Return: 0; -ENOSPC if the table does not fit in @len bytes, -EINVAL if
 * @t->nr is above HC_BDEV_TABLE_MAX; then @buf is untouched.
 */
int hc_bdev_table_encode(const struct hc_bdev_table *t, u64 set_magic,
			 void *buf, size_t len)
{
	struct hc_bdev_table_disk *d = buf;
	u32 i;

	if (t->nr > HC_BDEV_TABLE_MAX)
		return -EINVAL;
	if (len < hc_bdev_table_bytes(t))
		return -ENOSPC;

	memset(d, 0, hc_bdev_table_bytes(t));
	d->magic = cpu_to_le64(set_magic ^ HC_BDEV_TABLE_MAGIC);
	d->nr = cpu_to_le32(t->nr);
	d->seq = cpu_to_le64(t->seq);
	d->next_id = cpu_to_le32(t->next_id);
	for (i = 0; i < t->nr; i++) {
		const struct hc_bdev_entry *e = &t->d[i];
		struct hc_bdev_entry_disk *de = &d->d[i];

		memcpy(de->uuid, e->uuid, HC_UUID_SIZE);
		de->id = cpu_to_le32(e->id);
		de->inval_gen = cpu_to_le32(e->inval_gen);
		de->flags = cpu_to_le32(e->flags);
		de->sectors = cpu_to_le64(e->sectors);
		de->last_attach = cpu_to_le64(e->last_attach);
	}
	d->csum = cpu_to_le32(hc_bdev_table_csum(d));
	return 0;
}

/* Why entry @i of @t, already converted, breaks a rule; or NULL. */
static const char *hc_bdev_entry_invalid(const struct hc_bdev_table *t,
					 u32 i)
{
	const struct hc_bdev_entry *e = &t->d[i];
	u32 j;

	if (hc_bdev_uuid_is_nil(e->uuid))
		return "backing device uuid is nil";
	if (!e->id)
		return "backing device id 0";
	if (e->id >= t->next_id)
		return "backing device id not below next_id";
	if (e->flags & ~HC_BDEV_ENTRY_FLAGS_KNOWN)
		return "unknown backing device flag bits";
	for (j = 0; j < i; j++) {
		if (t->d[j].id == e->id)
			return "duplicate backing device id";
		if (!memcmp(t->d[j].uuid, e->uuid, HC_UUID_SIZE))
			return "duplicate backing device uuid";
	}
	return NULL;
}

/**
 * hc_bdev_table_decode() - validate a backing-device table and convert it
 * @buf: the bytes read, 8-byte aligned
 * @len: how many; the table may be shorter (what follows is ignored)
 * @set_magic: the cache set's magic (hc_set_magic())
 * @t: receives the table; empty (nr 0) on error
 * @why: if not NULL, receives NULL, or a constant string naming the first
 *	 rule broken
 *
 * Return: 0 if valid; -EINVAL if not a backing-device table of this cache
 * set (too short for a header, bad magic); -EBADMSG on a checksum
 * mismatch; -EUCLEAN if anything else breaks a rule (more than
 * HC_BDEV_TABLE_MAX entries or entries past @len, next_id 0, an entry
 * with a nil uuid, id 0, an id not below next_id, unknown flags, a
 * duplicate id or uuid, nonzero padding).
 */
int hc_bdev_table_decode(const void *buf, size_t len, u64 set_magic,
			 struct hc_bdev_table *t, const char **why)
{
	const struct hc_bdev_table_disk *d = buf;
	const char *err;
	u32 i, nr;
	int ret;

	t->seq = 0;
	t->next_id = 0;
	t->nr = 0;

	ret = -EINVAL;
	err = "backing-device table shorter than its header";
	if (len < sizeof(*d))
		goto err;
	err = "not a backing-device table of this cache set";
	if (le64_to_cpu(d->magic) != (set_magic ^ HC_BDEV_TABLE_MAGIC))
		goto err;

	ret = -EUCLEAN;
	nr = le32_to_cpu(d->nr);
	err = "more than 256 backing devices";
	if (nr > HC_BDEV_TABLE_MAX)
		goto err;
	err = "entries run past the end of the buffer";
	if (nr > (len - sizeof(*d)) / sizeof(d->d[0]))
		goto err;

	ret = -EBADMSG;
	err = "checksum mismatch";
	if (le32_to_cpu(d->csum) != hc_bdev_table_csum(d))
		goto err;

	ret = -EUCLEAN;
	t->seq = le64_to_cpu(d->seq);
	t->next_id = le32_to_cpu(d->next_id);
	err = "next_id 0";
	if (!t->next_id)
		goto err;
	err = "backing-device table padding not zero";
	if (d->pad)
		goto err;
	for (i = 0; i < nr; i++) {
		const struct hc_bdev_entry_disk *de = &d->d[i];
		struct hc_bdev_entry *e = &t->d[i];

		memcpy(e->uuid, de->uuid, HC_UUID_SIZE);
		e->id = le32_to_cpu(de->id);
		e->inval_gen = le32_to_cpu(de->inval_gen);
		e->flags = le32_to_cpu(de->flags);
		e->sectors = le64_to_cpu(de->sectors);
		e->last_attach = le64_to_cpu(de->last_attach);
		e->dirty_sectors = 0;
		err = "backing device entry padding not zero";
		if (de->pad)
			goto err;
		err = hc_bdev_entry_invalid(t, i);
		if (err)
			goto err;
	}
	t->nr = nr;
	if (why)
		*why = NULL;
	return 0;
err:
	t->seq = 0;
	t->next_id = 0;
	t->nr = 0;
	if (why)
		*why = err;
	return ret;
}

/**
 * hc_bdev_table_find() - the entry of a backing device, by uuid
 * @t: the table
 * @uuid: the backing device's dev_uuid, HC_UUID_SIZE bytes
 *
 * Return: the entry, or NULL if @uuid has none.
 */
struct hc_bdev_entry *hc_bdev_table_find(struct hc_bdev_table *t,
					 const u8 *uuid)
{
	u32 i;

	for (i = 0; i < t->nr; i++)
		if (!memcmp(t->d[i].uuid, uuid, HC_UUID_SIZE))
			return &t->d[i];
	return NULL;
}

/**
 * hc_bdev_table_find_id() - the entry of a backing device, by id
 * @t: the table
 * @id: the id, as in keys
 *
 * Return: the entry, or NULL if no entry has @id: keys under it are dead.
 */
struct hc_bdev_entry *hc_bdev_table_find_id(struct hc_bdev_table *t, u32 id)
{
	u32 i;

	for (i = 0; i < t->nr; i++)
		if (t->d[i].id == id)
			return &t->d[i];
	return NULL;
}

/**
 * hc_bdev_table_attach() - record that a backing device attaches
 * @t: a valid table
 * @uuid: the backing device's dev_uuid, HC_UUID_SIZE bytes, not nil
 * @inval_gen: the inval_gen of its superblock
 * @sectors: its size
 * @now: the time, seconds since the epoch
 * @id: receives the id its keys use; 0 on error
 * @new_id: receives true if the id is new (no key in the cache is under
 *	    it), false if the device keeps its id and its cached data
 *
 * If @uuid has an entry with the same @inval_gen, the device keeps its
 * id: the entry's sectors and last_attach are updated and its
 * HC_BDEV_ENTRY_DETACHED flag cleared. Otherwise (no entry, or an entry
 * with another inval_gen: the device was written without this cache) it
 * gets next_id, and next_id grows by one; an existing entry is replaced
 * in place, so its old id leaves the table and the keys under it are
 * dead. The caller bumps @t->seq and writes the table.
 *
 * Return: 0; -EINVAL if @uuid is nil; -ENOSPC if a new entry is needed
 * and the table holds HC_BDEV_TABLE_MAX; -EOVERFLOW if a new id is needed
 * and next_id would wrap. On error the table is unchanged.
 */
int hc_bdev_table_attach(struct hc_bdev_table *t, const u8 *uuid,
			 u32 inval_gen, u64 sectors, u64 now, u32 *id,
			 bool *new_id)
{
	struct hc_bdev_entry *e;

	*id = 0;
	*new_id = false;
	if (hc_bdev_uuid_is_nil(uuid))
		return -EINVAL;
	e = hc_bdev_table_find(t, uuid);
	if (e && e->inval_gen == inval_gen) {
		e->flags &= ~HC_BDEV_ENTRY_DETACHED;
		e->sectors = sectors;
		e->last_attach = now;
		*id = e->id;
		return 0;
	}
	if (!e && t->nr >= HC_BDEV_TABLE_MAX)
		return -ENOSPC;
	/* next_id is never 0; handing out U32_MAX would wrap it to 0. */
	if (!t->next_id || t->next_id == (u32)~0U)
		return -EOVERFLOW;
	if (!e) {
		e = &t->d[t->nr++];
		memcpy(e->uuid, uuid, HC_UUID_SIZE);
	}
	e->id = t->next_id++;
	e->inval_gen = inval_gen;
	e->flags = 0;
	e->dirty_sectors = 0;
	e->sectors = sectors;
	e->last_attach = now;
	*id = e->id;
	*new_id = true;
	return 0;
}

/**
 * hc_bdev_table_detach() - remove a backing device from the table
 * @t: the table
 * @id: its id
 *
 * The entry goes; the others keep their order. The id is not reused, so
 * keys still under it are dead. The caller bumps @t->seq and writes the
 * table.
 *
 * Return: 0, or -ENOENT if no entry has @id.
 */
int hc_bdev_table_detach(struct hc_bdev_table *t, u32 id)
{
	struct hc_bdev_entry *e = hc_bdev_table_find_id(t, id);
	u32 i;

	if (!e || !id)
		return -ENOENT;
	i = e - t->d;
	memmove(e, e + 1, (t->nr - i - 1) * sizeof(*e));
	t->nr--;
	return 0;
}
