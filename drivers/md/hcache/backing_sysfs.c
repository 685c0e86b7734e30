// SPDX-License-Identifier: GPL-2.0
/*
 * backing_sysfs.c: the files of a backing device in sysfs,
 * <backing>/hcache/ (also /sys/block/hcacheN/hcache/ while it runs), and
 * the uevents that tell udev its uuid and label. Each file is documented in
 * Documentation/ABI/testing/sysfs-block-hcache.
 */

#include "hcache.h"

#include <linux/sysfs.h>
#include <linux/string.h>
#include <linux/uuid.h>

struct hc_backing_attr {
	struct attribute attr;
	ssize_t (*show)(struct hc_backing *b, char *buf);
	ssize_t (*store)(struct hc_backing *b, const char *buf, size_t len);
};

static const char * const hc_mode_names[] = {
	[HC_MODE_WRITETHROUGH]	= "writethrough",
	[HC_MODE_WRITEBACK]	= "writeback",
	[HC_MODE_WRITEAROUND]	= "writearound",
	[HC_MODE_NONE]		= "none",
};

/* hc_register_lock if @b is still registered (hc_register_lock_listed()). */
static int hc_backing_lock_registered(struct hc_backing *b)
{
	return hc_register_lock_listed(&b->list);
}

/**
 * hc_backing_uevent() - tell udev the uuid and label of /dev/hcacheN
 * @b: a running device; hc_register_lock must be held
 */
void hc_backing_uevent(struct hc_backing *b)
{
	char uuid[sizeof("HCACHE_UUID=") + 36];
	char label[sizeof("HCACHE_LABEL=") + HC_LABEL_SIZE];
	char enc[HC_LABEL_ENC_SIZE];
	char label_enc[sizeof("HCACHE_LABEL_ENC=") + HC_LABEL_ENC_SIZE];
	char *envp[4];

	lockdep_assert_held(&hc_register_lock);
	envp[0] = uuid;
	envp[1] = label;
	envp[2] = label_enc;
	envp[3] = NULL;
	snprintf(uuid, sizeof(uuid), "HCACHE_UUID=%pU", b->sb.dev_uuid);
	mutex_lock(&b->sb_lock);
	snprintf(label, sizeof(label), "HCACHE_LABEL=%s", b->sb.label);
	hc_label_encode(b->sb.label, enc, sizeof(enc));
	mutex_unlock(&b->sb_lock);
	snprintf(label_enc, sizeof(label_enc), "HCACHE_LABEL_ENC=%s", enc);
	kobject_uevent_env(&disk_to_dev(b->disk)->kobj, KOBJ_CHANGE, envp);
}

static ssize_t state_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hc_backing_state_name(READ_ONCE(b->sb.backing.state)));
}

/* The label as udev names it: /dev/hcache/by-label/<label_enc>. */
static ssize_t label_enc_show(struct hc_backing *b, char *buf)
{
	char enc[HC_LABEL_ENC_SIZE];

	mutex_lock(&b->sb_lock);
	hc_label_encode(b->sb.label, enc, sizeof(enc));
	mutex_unlock(&b->sb_lock);
	return sysfs_emit(buf, "%s\n", enc);
}

static ssize_t label_show(struct hc_backing *b, char *buf)
{
	ssize_t ret;

	mutex_lock(&b->sb_lock);
	ret = sysfs_emit(buf, "%s\n", b->sb.label);
	mutex_unlock(&b->sb_lock);
	return ret;
}

static ssize_t label_store(struct hc_backing *b, const char *buf, size_t len)
{
	char old[HC_LABEL_SIZE];
	const char *why;
	size_t n = len;
	int ret;

	if (n && buf[n - 1] == '\n')
		n--;
	why = hc_label_check(buf, n);
	if (why) {
		pr_warn_ratelimited("%pg: label refused: %s\n", b->bdev, why);
		return -EINVAL;
	}

	ret = hc_backing_lock_registered(b);
	if (ret)
		return ret;
	mutex_lock(&b->sb_lock);
	memcpy(old, b->sb.label, sizeof(old));
	memset(b->sb.label, 0, sizeof(b->sb.label));
	memcpy(b->sb.label, buf, n);
	ret = hc_backing_sb_write(b);
	if (ret)
		memcpy(b->sb.label, old, sizeof(old));
	mutex_unlock(&b->sb_lock);
	if (!ret && b->disk)
		hc_backing_uevent(b);
	mutex_unlock(&hc_register_lock);
	return ret ? ret : len;
}

/**
 * hc_sysfs_choice_show() - a sysfs file choosing one of a few names
 * @buf: the page
 * @names: the names, in value order
 * @nr: how many
 * @cur: the current value, shown in brackets
 *
 * Return: bytes written: the names separated by spaces, and a newline.
 */
ssize_t hc_sysfs_choice_show(char *buf, const char * const *names,
			     unsigned int nr, unsigned int cur)
{
	ssize_t n = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		n += sysfs_emit_at(buf, n, i == cur ? "[%s] " : "%s ",
				   names[i]);
	buf[n - 1] = '\n';
	return n;
}

static ssize_t cache_mode_show(struct hc_backing *b, char *buf)
{
	return hc_sysfs_choice_show(buf, hc_mode_names,
				    ARRAY_SIZE(hc_mode_names),
				    READ_ONCE(b->sb.backing.cache_mode));
}

static ssize_t cache_mode_store(struct hc_backing *b, const char *buf,
				size_t len)
{
	int mode = sysfs_match_string(hc_mode_names, buf);
	unsigned int old;
	int ret;

	if (mode < 0)
		return -EINVAL;
	mutex_lock(&b->sb_lock);
	old = b->sb.backing.cache_mode;
	ret = 0;
	if (old != mode) {
		WRITE_ONCE(b->sb.backing.cache_mode, mode);
		ret = hc_backing_sb_write(b);
		if (ret)
			WRITE_ONCE(b->sb.backing.cache_mode, old);
	}
	mutex_unlock(&b->sb_lock);
	return ret ? ret : len;
}

/*
 * Put the setting of @bit that b->sb.backing keeps in force. Wakes no
 * thread: at register none runs yet, and a kick left pending would cut
 * short the writeback thread's first writeback_delay.
 */
static void hc_backing_tunable_apply(struct hc_backing *b, u32 bit)
{
	const struct hc_sb_backing *s = &b->sb.backing;

	switch (bit) {
	case HC_BDEV_TUNE_SEQUENTIAL_CUTOFF:
		WRITE_ONCE(b->sequential_cutoff, s->sequential_cutoff);
		break;
	case HC_BDEV_TUNE_WRITEBACK_PERCENT:
		spin_lock(&b->wb.lock);
		WRITE_ONCE(b->wb.percent, s->writeback_percent);
		spin_unlock(&b->wb.lock);
		break;
	case HC_BDEV_TUNE_ADMISSION_POLICY:
		WRITE_ONCE(b->admit, s->admission_policy);
		break;
	case HC_BDEV_TUNE_STOP_WHEN_FAILED:
		WRITE_ONCE(b->stop_when_cache_set_failed, s->stop_when_failed);
		break;
	}
}

/* The field of b->sb.backing that keeps the setting of @bit. */
static void hc_backing_tunable_set(struct hc_sb_backing *s, u32 bit, u64 v)
{
	switch (bit) {
	case HC_BDEV_TUNE_SEQUENTIAL_CUTOFF:
		s->sequential_cutoff = v;
		break;
	case HC_BDEV_TUNE_WRITEBACK_PERCENT:
		s->writeback_percent = v;
		break;
	case HC_BDEV_TUNE_ADMISSION_POLICY:
		s->admission_policy = v;
		break;
	case HC_BDEV_TUNE_STOP_WHEN_FAILED:
		s->stop_when_failed = v;
		break;
	}
}

/*
 * Keep a setting in the backing superblock (HC_FEAT_COMPAT_TUNABLES), so
 * that it survives a reboot, and apply it: under sb_lock the field of @bit
 * takes @v and the bit is set, the superblock is written (not when it kept
 * @v already: each write is a window for a tear), and only then is @v put
 * in force. If the write fails, the fields return to what they were and
 * the store fails with the device's error.
 */
static int hc_backing_tunable_keep(struct hc_backing *b, u32 bit, u64 v)
{
	struct hc_sb_backing *s = &b->sb.backing;
	struct hc_sb_backing old;
	int ret = 0;

	mutex_lock(&b->sb_lock);
	old = *s;
	hc_backing_tunable_set(s, bit, v);
	s->tunables |= bit;
	if (s->tunables != old.tunables ||
	    s->sequential_cutoff != old.sequential_cutoff ||
	    s->writeback_percent != old.writeback_percent ||
	    s->admission_policy != old.admission_policy ||
	    s->stop_when_failed != old.stop_when_failed)
		ret = hc_backing_sb_write(b);
	if (ret) {
		s->tunables = old.tunables;
		s->sequential_cutoff = old.sequential_cutoff;
		s->writeback_percent = old.writeback_percent;
		s->admission_policy = old.admission_policy;
		s->stop_when_failed = old.stop_when_failed;
	} else {
		hc_backing_tunable_apply(b, bit);
		/* A new target: the thread looks at its device again now. */
		if (bit == HC_BDEV_TUNE_WRITEBACK_PERCENT)
			hc_writeback_wake(b);
	}
	mutex_unlock(&b->sb_lock);
	return ret;
}

/**
 * hc_backing_tunables_load() - apply the settings its superblock keeps
 * @b: a backing device being registered, its superblock just read
 */
void hc_backing_tunables_load(struct hc_backing *b)
{
	u32 bit;

	for (bit = 1; bit & HC_BDEV_TUNE_KNOWN; bit <<= 1)
		if (b->sb.backing.tunables & bit)
			hc_backing_tunable_apply(b, bit);
}

static ssize_t sequential_cutoff_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(b->sequential_cutoff));
}

static ssize_t sequential_cutoff_store(struct hc_backing *b, const char *buf,
				       size_t len)
{
	u64 bytes;
	int ret = hc_size_parse(buf, &bytes);

	if (ret)
		return ret;
	ret = hc_backing_tunable_keep(b, HC_BDEV_TUNE_SEQUENTIAL_CUTOFF, bytes);
	return ret ? ret : len;
}

static ssize_t admission_policy_show(struct hc_backing *b, char *buf)
{
	unsigned int cur = READ_ONCE(b->admit);
	ssize_t n = 0;
	unsigned int i;

	for (i = 0; i < HC_ADMIT_NR; i++)
		n += sysfs_emit_at(buf, n, i == cur ? "[%s] " : "%s ",
				   hc_admit_policies[i].name);
	buf[n - 1] = '\n';
	return n;
}

static ssize_t admission_policy_store(struct hc_backing *b, const char *buf,
				      size_t len)
{
	char name[32];
	int i, ret;

	if (strscpy(name, buf, sizeof(name)) < 0)
		return -EINVAL;
	i = hc_admit_policy_find(strim(name));
	if (i < 0)
		return i;
	ret = hc_backing_tunable_keep(b, HC_BDEV_TUNE_ADMISSION_POLICY, i);
	return ret ? ret : len;
}

static const char * const hc_stop_policies[] = {
	[HC_STOP_AUTO]		= "auto",
	[HC_STOP_ALWAYS]	= "always",
};

static ssize_t stop_when_cache_set_failed_show(struct hc_backing *b,
					       char *buf)
{
	return hc_sysfs_choice_show(buf, hc_stop_policies,
				    ARRAY_SIZE(hc_stop_policies),
				    READ_ONCE(b->stop_when_cache_set_failed));
}

static ssize_t stop_when_cache_set_failed_store(struct hc_backing *b,
						const char *buf, size_t len)
{
	int i = sysfs_match_string(hc_stop_policies, buf);
	int ret;

	if (i < 0)
		return i;
	ret = hc_backing_tunable_keep(b, HC_BDEV_TUNE_STOP_WHEN_FAILED, i);
	return ret ? ret : len;
}

static ssize_t clear_stats_store(struct hc_backing *b, const char *buf,
				 size_t len)
{
	bool v;

	if (kstrtobool(buf, &v) || !v)
		return -EINVAL;
	hc_stats_clear(&b->stats);
	return len;
}

static ssize_t running_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(b->disk) ? 1 : 0);
}

static ssize_t running_store(struct hc_backing *b, const char *buf,
			     size_t len)
{
	bool force = sysfs_streq(buf, "force");
	int ret;

	if (!force && !sysfs_streq(buf, "1"))
		return -EINVAL;
	ret = hc_backing_lock_registered(b);
	if (ret)
		return ret;
	ret = hc_backing_start(b, force);
	mutex_unlock(&hc_register_lock);
	return ret ? ret : len;
}

static ssize_t stop_store(struct hc_backing *b, const char *buf, size_t len)
{
	hc_backing_stop_async(b);
	return len;
}

static ssize_t attach_store(struct hc_backing *b, const char *buf,
			    size_t len)
{
	char str[UUID_STRING_LEN + 2], *s;
	struct hc_cache_set *c;
	uuid_t uuid;
	int ret;

	if (strscpy(str, buf, sizeof(str)) < 0)
		return -EINVAL;
	s = strim(str);
	if (strlen(s) != UUID_STRING_LEN || uuid_parse(s, &uuid))
		return -EINVAL;
	ret = hc_backing_lock_registered(b);
	if (ret)
		return ret;
	c = hc_cache_set_find(uuid.b);
	if (!c) {
		pr_err("%pg: cannot attach: no cache set %pU is registered\n",
		       b->bdev, uuid.b);
		ret = -ENOENT;
	} else {
		ret = hc_backing_attach(b, c);
		if (!ret && !b->disk)
			ret = hc_backing_start(b, false);
	}
	mutex_unlock(&hc_register_lock);
	return ret ? ret : len;
}

static ssize_t detach_store(struct hc_backing *b, const char *buf,
			    size_t len)
{
	int ret;

	ret = hc_backing_lock_registered(b);
	if (ret)
		return ret;
	ret = hc_writeback_detach(b);
	mutex_unlock(&hc_register_lock);
	return ret ? ret : len;
}

static ssize_t cache_set_uuid_show(struct hc_backing *b, char *buf)
{
	ssize_t ret;

	mutex_lock(&b->sb_lock);
	ret = sysfs_emit(buf, "%pU\n", b->sb.set_uuid);
	mutex_unlock(&b->sb_lock);
	return ret;
}

static ssize_t cache_set_id_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(b->id));
}

static ssize_t backing_dev_name_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%pg\n", b->bdev);
}

static ssize_t backing_dev_uuid_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%pU\n", b->sb.dev_uuid);
}

/* ---- Writeback (writeback.c) -------------------------------------------- */

static ssize_t dirty_data_show(struct hc_backing *b, char *buf)
{
	u64 dirty;
	int ret;

	ret = hc_backing_lock_registered(b);
	if (ret)
		return ret;
	dirty = hc_writeback_dirty_sectors(b);
	mutex_unlock(&hc_register_lock);
	return sysfs_emit(buf, "%llu\n", dirty << SECTOR_SHIFT);
}

static ssize_t detaching_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(b->wb.detaching));
}

/* Parse an unsigned number in [@min, @max] and store it under wb.lock. */
static ssize_t hc_wb_store_u32(struct hc_backing *b, const char *buf,
			       size_t len, u32 *field, u32 min, u32 max)
{
	u32 v;
	int ret = kstrtou32(buf, 10, &v);

	if (ret)
		return ret;
	if (v < min || v > max)
		return -EINVAL;
	spin_lock(&b->wb.lock);
	WRITE_ONCE(*field, v);
	spin_unlock(&b->wb.lock);
	hc_writeback_wake(b);
	return len;
}

static ssize_t hc_wb_show_u32(struct hc_backing *b, char *buf,
			      const u32 *field)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(*field));
}

static ssize_t writeback_running_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(b->wb.running));
}

static ssize_t writeback_running_store(struct hc_backing *b, const char *buf,
				       size_t len)
{
	bool v;

	if (kstrtobool(buf, &v))
		return -EINVAL;
	WRITE_ONCE(b->wb.running, v);
	hc_writeback_wake(b);
	return len;
}

static ssize_t writeback_flush_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%d\n", hc_writeback_flush_pending(b));
}

/* Write back every dirty sector now: 1 starts, 0 calls it off. */
static ssize_t writeback_flush_store(struct hc_backing *b, const char *buf,
				     size_t len)
{
	bool v;
	int ret;

	if (kstrtobool(buf, &v))
		return -EINVAL;
	ret = hc_writeback_flush(b, v);
	return ret ? ret : len;
}

static ssize_t writeback_percent_show(struct hc_backing *b, char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.percent);
}

static ssize_t writeback_percent_store(struct hc_backing *b, const char *buf,
				       size_t len)
{
	u32 v;
	int ret = kstrtou32(buf, 10, &v);

	if (ret)
		return ret;
	if (v > HC_WRITEBACK_PERCENT_MAX)
		return -EINVAL;
	ret = hc_backing_tunable_keep(b, HC_BDEV_TUNE_WRITEBACK_PERCENT, v);
	return ret ? ret : len;
}

static ssize_t writeback_delay_show(struct hc_backing *b, char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.delay);
}

static ssize_t writeback_delay_store(struct hc_backing *b, const char *buf,
				     size_t len)
{
	return hc_wb_store_u32(b, buf, len, &b->wb.delay, 0, 3600);
}

static ssize_t writeback_idle_seconds_show(struct hc_backing *b, char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.idle_seconds);
}

static ssize_t writeback_idle_seconds_store(struct hc_backing *b,
					    const char *buf, size_t len)
{
	return hc_wb_store_u32(b, buf, len, &b->wb.idle_seconds, 1,
			       HC_WB_IDLE_SECONDS_MAX);
}

static ssize_t writeback_rate_update_seconds_show(struct hc_backing *b,
						  char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.update_seconds);
}

static ssize_t writeback_rate_update_seconds_store(struct hc_backing *b,
						   const char *buf, size_t len)
{
	return hc_wb_store_u32(b, buf, len, &b->wb.update_seconds, 1, 60);
}

static ssize_t writeback_rate_p_term_inverse_show(struct hc_backing *b,
						  char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.params.p_term_inverse);
}

static ssize_t writeback_rate_p_term_inverse_store(struct hc_backing *b,
						   const char *buf, size_t len)
{
	return hc_wb_store_u32(b, buf, len, &b->wb.params.p_term_inverse, 1,
			       1000000);
}

static ssize_t writeback_rate_i_term_inverse_show(struct hc_backing *b,
						  char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.params.i_term_inverse);
}

static ssize_t writeback_rate_i_term_inverse_store(struct hc_backing *b,
						   const char *buf, size_t len)
{
	return hc_wb_store_u32(b, buf, len, &b->wb.params.i_term_inverse, 0,
			       100000000);
}

static ssize_t writeback_rate_d_term_show(struct hc_backing *b, char *buf)
{
	return hc_wb_show_u32(b, buf, &b->wb.params.d_term);
}

static ssize_t writeback_rate_d_term_store(struct hc_backing *b,
					   const char *buf, size_t len)
{
	return hc_wb_store_u32(b, buf, len, &b->wb.params.d_term, 0, 1000);
}

/* A rate in bytes/s (k/M/G suffixes) as sectors/s in [@min, @max]. */
static int hc_wb_parse_rate(const char *buf, u64 min, u64 max, u64 *sectors)
{
	u64 bytes;
	int ret = hc_size_parse(buf, &bytes);

	if (ret)
		return ret;
	bytes >>= SECTOR_SHIFT;
	if (bytes < min || bytes > max)
		return -EINVAL;
	*sectors = bytes;
	return 0;
}

static ssize_t writeback_rate_minimum_show(struct hc_backing *b, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  READ_ONCE(b->wb.params.minimum) << SECTOR_SHIFT);
}

static ssize_t writeback_rate_minimum_store(struct hc_backing *b,
					    const char *buf, size_t len)
{
	u64 v;
	int ret = hc_wb_parse_rate(buf, 1, b->wb.params.maximum, &v);

	if (ret)
		return ret;
	spin_lock(&b->wb.lock);
	WRITE_ONCE(b->wb.params.minimum, v);
	spin_unlock(&b->wb.lock);
	return len;
}

static ssize_t writeback_rate_show(struct hc_backing *b, char *buf)
{
	u64 rate;

	spin_lock(&b->wb.lock);
	rate = b->wb.rate.rate;
	spin_unlock(&b->wb.lock);
	return sysfs_emit(buf, "%llu\n", rate << SECTOR_SHIFT);
}

static ssize_t writeback_rate_store(struct hc_backing *b, const char *buf,
				    size_t len)
{
	u64 v;
	int ret = hc_wb_parse_rate(buf, 1, b->wb.params.maximum, &v);

	if (ret)
		return ret;
	spin_lock(&b->wb.lock);
	b->wb.rate.rate = v;
	spin_unlock(&b->wb.lock);
	hc_writeback_wake(b);
	return len;
}

static ssize_t writeback_rate_debug_show(struct hc_backing *b, char *buf)
{
	struct hc_wb_rate r;
	u64 dirty, target;

	spin_lock(&b->wb.lock);
	r = b->wb.rate;
	dirty = b->wb.dirty;
	target = b->wb.target;
	spin_unlock(&b->wb.lock);
	return sysfs_emit(buf,
			  "rate: %llu\ndirty: %llu\ntarget: %llu\nproportional: %lld\nintegral: %lld\nderivative: %lld\nidle: %d\nin_band: %d\n",
			  r.rate << SECTOR_SHIFT, dirty << SECTOR_SHIFT,
			  target << SECTOR_SHIFT,
			  r.proportional * SECTOR_SIZE,
			  r.integral * SECTOR_SIZE,
			  r.derivative * SECTOR_SIZE,
			  hc_writeback_idle(b),
			  hc_wb_rate_in_band(dirty, target));
}

static ssize_t hc_wb_show_count(char *buf, atomic64_t *count)
{
	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read(count));
}

static ssize_t writeback_keys_written_show(struct hc_backing *b, char *buf)
{
	return hc_wb_show_count(buf, &b->wb.keys_written);
}

static ssize_t writeback_sectors_written_show(struct hc_backing *b,
					      char *buf)
{
	return hc_wb_show_count(buf, &b->wb.sectors_written);
}

static ssize_t writeback_backing_writes_show(struct hc_backing *b, char *buf)
{
	return hc_wb_show_count(buf, &b->wb.backing_writes);
}

#define HC_ATTR_RO(name) \
	static struct hc_backing_attr hc_attr_##name = __ATTR_RO(name)
#define HC_ATTR_RW(name) \
	static struct hc_backing_attr hc_attr_##name = __ATTR_RW(name)
#define HC_ATTR_WO(name) \
	static struct hc_backing_attr hc_attr_##name = __ATTR_WO(name)

HC_ATTR_RO(state);
HC_ATTR_RW(label);
HC_ATTR_RO(label_enc);
HC_ATTR_RW(cache_mode);
HC_ATTR_RW(running);
HC_ATTR_RW(sequential_cutoff);
HC_ATTR_RW(admission_policy);
HC_ATTR_RW(stop_when_cache_set_failed);
HC_ATTR_WO(clear_stats);
HC_ATTR_WO(stop);
HC_ATTR_WO(attach);
HC_ATTR_WO(detach);
HC_ATTR_RO(cache_set_uuid);
HC_ATTR_RO(cache_set_id);
HC_ATTR_RO(backing_dev_name);
HC_ATTR_RO(backing_dev_uuid);
HC_ATTR_RO(dirty_data);
HC_ATTR_RO(detaching);
HC_ATTR_RW(writeback_running);
HC_ATTR_RW(writeback_flush);
HC_ATTR_RW(writeback_percent);
HC_ATTR_RW(writeback_delay);
HC_ATTR_RW(writeback_idle_seconds);
HC_ATTR_RW(writeback_rate);
HC_ATTR_RW(writeback_rate_update_seconds);
HC_ATTR_RW(writeback_rate_p_term_inverse);
HC_ATTR_RW(writeback_rate_i_term_inverse);
HC_ATTR_RW(writeback_rate_d_term);
HC_ATTR_RW(writeback_rate_minimum);
HC_ATTR_RO(writeback_rate_debug);
HC_ATTR_RO(writeback_keys_written);
HC_ATTR_RO(writeback_sectors_written);
HC_ATTR_RO(writeback_backing_writes);

static struct attribute *hc_backing_attrs[] = {
	&hc_attr_state.attr,
	&hc_attr_label.attr,
	&hc_attr_label_enc.attr,
	&hc_attr_cache_mode.attr,
	&hc_attr_running.attr,
	&hc_attr_sequential_cutoff.attr,
	&hc_attr_admission_policy.attr,
	&hc_attr_stop_when_cache_set_failed.attr,
	&hc_attr_clear_stats.attr,
	&hc_attr_stop.attr,
	&hc_attr_attach.attr,
	&hc_attr_detach.attr,
	&hc_attr_cache_set_uuid.attr,
	&hc_attr_cache_set_id.attr,
	&hc_attr_backing_dev_name.attr,
	&hc_attr_backing_dev_uuid.attr,
	&hc_attr_dirty_data.attr,
	&hc_attr_detaching.attr,
	&hc_attr_writeback_running.attr,
	&hc_attr_writeback_flush.attr,
	&hc_attr_writeback_percent.attr,
	&hc_attr_writeback_delay.attr,
	&hc_attr_writeback_idle_seconds.attr,
	&hc_attr_writeback_rate.attr,
	&hc_attr_writeback_rate_update_seconds.attr,
	&hc_attr_writeback_rate_p_term_inverse.attr,
	&hc_attr_writeback_rate_i_term_inverse.attr,
	&hc_attr_writeback_rate_d_term.attr,
	&hc_attr_writeback_rate_minimum.attr,
	&hc_attr_writeback_rate_debug.attr,
	&hc_attr_writeback_keys_written.attr,
	&hc_attr_writeback_sectors_written.attr,
	&hc_attr_writeback_backing_writes.attr,
	NULL
};
ATTRIBUTE_GROUPS(hc_backing);

static ssize_t hc_backing_attr_show(struct kobject *kobj,
				    struct attribute *attr, char *buf)
{
	struct hc_backing_attr *a = container_of(attr, struct hc_backing_attr,
						 attr);

	return a->show(container_of(kobj, struct hc_backing, kobj), buf);
}

static ssize_t hc_backing_attr_store(struct kobject *kobj,
				     struct attribute *attr,
				     const char *buf, size_t len)
{
	struct hc_backing_attr *a = container_of(attr, struct hc_backing_attr,
						 attr);

	return a->store(container_of(kobj, struct hc_backing, kobj), buf, len);
}

static const struct sysfs_ops hc_backing_sysfs_ops = {
	.show	= hc_backing_attr_show,
	.store	= hc_backing_attr_store,
};

static void hc_backing_release(struct kobject *kobj)
{
	hc_backing_free(container_of(kobj, struct hc_backing, kobj));
}

const struct kobj_type hc_backing_ktype = {
	.release	= hc_backing_release,
	.sysfs_ops	= &hc_backing_sysfs_ops,
	.default_groups	= hc_backing_groups,
};
