// SPDX-License-Identifier: GPL-2.0
/*
 * hcache: the administrator's command for registered hcache devices:
 * what there is and how it does (show, stats), and the actions of the
 * sysfs files (register, stop, attach, detach, set-mode, set), each
 * naming the device in its errors. It reads and writes only sysfs
 * (Documentation/ABI/testing/); formatting is make-hcache's.
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libsmartcols/libsmartcols.h>

#include "hcache_ondisk.h"
#include "sysfs.h"

/* Exit codes; keep man/hcache.8 in step. */
enum {
	EX_OK		= 0,
	EX_USAGE	= 1,
	EX_NOT_FOUND	= 2,	/* no such device or set, or not registered */
	EX_NO_MODULE	= 3,	/* /sys/fs/hcache missing */
	EX_REFUSED	= 4,	/* the kernel refused the action */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s COMMAND [ARGS]\n"
"Show and manage registered hcache devices.\n"
"\n"
"Commands:\n"
"  show [--json] [--bytes] [-o COLS | --all-columns]\n"
"                        every cache set, cache and backing device, with\n"
"                        those waiting for their set and those stopped by\n"
"                        a failed set\n"
"  stats DEV [--window five_minute|hour|day|total] [--json]\n"
"                        the hit, miss and bypass counters of DEV or a set\n"
"  register DEV...       register formatted devices with the module\n"
"  stop DEV|SET          stop a backing device (it stays attached on\n"
"                        disk) or a whole cache set\n"
"  unregister SET        detach every backing device that has no dirty\n"
"                        data (the others stop), then stop the set\n"
"  attach DEV SET        attach backing device DEV to a registered set\n"
"  detach DEV [--wait]   detach DEV from its set, once written back;\n"
"                        --wait: until it is detached\n"
"  set-mode DEV MODE     writethrough, writeback, writearound or none\n"
"  set DEV KNOB=VALUE... set tunables (see the man page for the list)\n"
"  wipe DEV [--discard-dirty-data]\n"
"                        remove hcache's superblock from an unregistered\n"
"                        device; refuses one that may hold dirty data\n"
"  flush DEV|SET [--wait]\n"
"                        write back all dirty data now; --wait: until clean\n"
"\n"
"DEV is a device path (/dev/sdb, /dev/hcache0) or kernel name (sdb);\n"
"SET is a cache set's uuid or its cache device.\n"
"\n"
"Options:\n"
"  -h, --help      show this help and exit\n"
"  -V, --version   show the version and exit\n"
"\n"
"Exit status: 0 done, 1 usage, 2 no such device or set (or not\n"
"registered), 3 hcache module not loaded, 4 the kernel refused.\n",
		hc_prog);
}

/* ---- Finding what the arguments name ------------------------------------ */

static int need_module(void)
{
	if (hc_sysfs_loaded())
		return 0;
	hc_warn("hcache module not loaded (no %s); try 'modprobe hcache'",
		hc_sysfs_root());
	return EX_NO_MODULE;
}

/*
 * @arg as an object of the kinds in @kinds (bits of 1 << enum
 * hc_obj_kind), for command @cmd. Returns 0 or the exit code, having
 * said why.
 */
static int find(const char *cmd, const char *arg, unsigned int kinds,
		struct hc_obj *o)
{
	static const char *const kind_names[] = {
		[HC_OBJ_SET] = "a cache set",
		[HC_OBJ_CACHE] = "a cache device",
		[HC_OBJ_BACKING] = "a backing device",
	};
	char why[256];
	int ret = need_module();

	if (ret)
		return ret;
	if (hc_obj_find(arg, o, why, sizeof(why))) {
		hc_warn("%s: %s: %s", cmd, arg, why);
		return EX_NOT_FOUND;
	}
	/* A cache device stands for its set where a set is wanted. */
	if (o->kind == HC_OBJ_CACHE && !(kinds & (1u << HC_OBJ_CACHE)) &&
	    (kinds & (1u << HC_OBJ_SET))) {
		if (!o->set_uuid[0]) {
			hc_warn("%s: %s: its cache set is not registered", cmd,
				arg);
			return EX_NOT_FOUND;
		}
		snprintf(why, sizeof(why), "%s", o->set_uuid);
		return find(cmd, why, kinds, o);
	}
	if (!(kinds & (1u << o->kind))) {
		hc_warn("%s: %s is %s; %s takes %s", cmd, arg,
			kind_names[o->kind], cmd,
			kinds & (1u << HC_OBJ_BACKING) ?
			(kinds & (1u << HC_OBJ_SET) ? "a backing device or a set" :
			 "a backing device") : "a cache set or its cache device");
		return EX_USAGE;
	}
	return 0;
}

/* Write @val to @o's @attr; the error names the device and the file. */
static int act(const char *arg, const struct hc_obj *o, const char *attr,
	       const char *val)
{
	int ret = hc_sysfs_write(o->dir, attr, val);

	if (!ret)
		return EX_OK;
	hc_warn("%s: %s %s: %s (the kernel log may say more)", arg,
		o->kind == HC_OBJ_SET ? "cache set" : o->name, attr,
		strerror(-ret));
	return EX_REFUSED;
}

/* ---- show --------------------------------------------------------------- */

enum col {
	COL_NAME, COL_TYPE, COL_DEV, COL_STATE, COL_DATA, COL_MODE, COL_SIZE,
	COL_USED, COL_DIRTY, COL_HITS, COL_BYPASSED, COL_BYP_SEQ, COL_BYP_FULL,
	COL_BYP_MODE, COL_BYP_POLICY, COL_WB_RATE, COL_ERRORS, COL_CHECKSUM,
	COL_CSUM_ERRORS, COL_BAD_DIRTY, COL_LABEL, COL_TUNED, COL_SET, COL_NR
};

static const struct {
	const char *name;	/* as in the header and -o */
	const char *help;
	int flags;		/* SCOLS_FL_* */
	int json;		/* SCOLS_JSON_* */
	bool deflt;		/* shown without -o */
	bool size;		/* bytes: human unless --bytes */
	bool percent;		/* a '%' after it in the table */
} cols[COL_NR] = {
	[COL_NAME]	= { "NAME", "kernel name of the device", SCOLS_FL_TREE, SCOLS_JSON_STRING, true },
	[COL_TYPE]	= { "TYPE", "cache or backing", 0, SCOLS_JSON_STRING, true },
	[COL_DEV]	= { "DEV", "the hcacheN disk a backing device runs as", 0, SCOLS_JSON_STRING, true },
	[COL_STATE]	= { "STATE", "running, loading, waiting (for its set), detaching, failed", 0, SCOLS_JSON_STRING, true },
	[COL_DATA]	= { "DATA", "a backing device's superblock: none, clean, dirty, stale", 0, SCOLS_JSON_STRING, true },
	[COL_MODE]	= { "MODE", "cache mode", 0, SCOLS_JSON_STRING, true },
	[COL_SIZE]	= { "SIZE", "size of the device", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true, true },
	[COL_USED]	= { "USED", "cache buckets in use (data or metadata), percent", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true, false, true },
	[COL_DIRTY]	= { "DIRTY", "dirty data: in the cache, not yet on the backing device", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true, true },
	[COL_HITS]	= { "HIT%", "reads served from the cache, percent, since registration", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_BYPASSED]	= { "BYPASSED", "I/Os sent around the cache", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_BYP_SEQ]	= { "BYP-SEQ", "bypassed: sequential_cutoff", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_BYP_FULL]	= { "BYP-FULL", "bypassed: writes to a cache short of room", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_BYP_MODE]	= { "BYP-MODE", "bypassed: the cache mode", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_BYP_POLICY] = { "BYP-POLICY", "bypassed: the admission policy", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_WB_RATE]	= { "WB-RATE", "writeback rate, bytes per second", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true, true },
	[COL_ERRORS]	= { "ERRORS", "cache device I/O errors since registration", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_CHECKSUM]	= { "CHECKSUM", "data checksums of the cache: crc32c or none", 0, SCOLS_JSON_STRING, true },
	[COL_CSUM_ERRORS] = { "CSUM-ERRORS", "4 KiB chunks failing their checksum since registration", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, true },
	[COL_BAD_DIRTY]	= { "BAD-DIRTY", "dirty chunks among them: unreadable until rewritten", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_LABEL]	= { "LABEL", "a backing device's label", 0, SCOLS_JSON_STRING, true },
	[COL_TUNED]	= { "TUNED", "settings that differ from the defaults, KNOB=VALUE,...", 0, SCOLS_JSON_STRING, true },
	[COL_SET]	= { "SET", "cache set uuid", 0, SCOLS_JSON_STRING },
};

struct show {
	struct libscols_table *tb;
	int col_of[COL_NR];	/* its column in the table, or -1 */
	bool bytes;
};

/* Sizes as lsblk gives them: 512B, 4K, 1.5G. */
static void size_str(u64 bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	unsigned int u = 0;
	double v = bytes;
	int n;

	while (v >= 1024 && u < sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	if (!u) {
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
		return;
	}
	n = snprintf(buf, len, "%.1f", v);
	if (n > 2 && (size_t)n < len && !strcmp(buf + n - 2, ".0"))
		n -= 2;
	snprintf(buf + n, len - n, "%c", units[u]);
}

static void cell(struct show *s, struct libscols_line *ln, enum col c,
		 const char *text)
{
	if (s->col_of[c] >= 0 && text)
		scols_line_set_data(ln, s->col_of[c], text);
}

static void cell_u64(struct show *s, struct libscols_line *ln, enum col c,
		     u64 v)
{
	char buf[32];

	if (cols[c].size && !s->bytes && !scols_table_is_json(s->tb))
		size_str(v, buf, sizeof(buf));
	else if (cols[c].percent && !scols_table_is_json(s->tb))
		snprintf(buf, sizeof(buf), "%llu%%", (unsigned long long)v);
	else
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	cell(s, ln, c, buf);
}

/* A numeric sysfs file into a cell; left empty if it cannot be read. */
static void cell_attr(struct show *s, struct libscols_line *ln, enum col c,
		      const char *dir, const char *attr)
{
	u64 v;

	if (!hc_sysfs_u64(dir, attr, &v))
		cell_u64(s, ln, c, v);
}

/* The counters of stats_total under @dir. */
static void cells_stats(struct show *s, struct libscols_line *ln,
			const char *dir)
{
	char st[PATH_MAX];

	snprintf(st, sizeof(st), "%s/stats_total", dir);
	cell_attr(s, ln, COL_HITS, st, "cache_hit_ratio");
	cell_attr(s, ln, COL_BYPASSED, st, "bypassed");
	cell_attr(s, ln, COL_BYP_SEQ, st, "bypass_sequential");
	cell_attr(s, ln, COL_BYP_FULL, st, "bypass_full");
	cell_attr(s, ln, COL_BYP_MODE, st, "bypass_mode");
	cell_attr(s, ln, COL_BYP_POLICY, st, "bypass_policy");
}

/* Buckets holding data or metadata, as a percentage of all, from bucket_usage. */
static int used_percent(const char *setdir, u64 *pct)
{
	char buf[4096], *line, *save = NULL;
	u64 all = 0, unused = 0, v;
	char name[32];

	if (hc_sysfs_read(setdir, "bucket_usage", buf, sizeof(buf)))
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long x;

		if (sscanf(line, "%31s %llu", name, &x) != 2)
			continue;
		v = x;
		if (!strcmp(name, "buckets"))
			all = v;
		else if (!strcmp(name, "unused"))
			unused = v;
	}
	if (!all || unused > all)
		return -1;
	*pct = (all - unused) * 100 / all;
	return 0;
}

/*
 * The dirty chunks that failed their checksum: the lines of
 * csum_bad_dirty (the kernel lists the first 64). Returns 0 or -errno
 * (-ENOENT from a module without data checksums).
 */
static int bad_dirty_count(const char *setdir, u64 *count)
{
	char buf[4096], *line, *save = NULL;
	int ret = hc_sysfs_read(setdir, "csum_bad_dirty", buf, sizeof(buf));

	if (ret)
		return ret;
	*count = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (line[strspn(line, " \t")])
			(*count)++;
	return 0;
}

/*
 * The settings that survive a reboot (kept in the superblocks), with the
 * defaults a device has without one (hcache_ondisk.h); choices by name.
 */
static const struct tunable {
	const char *knob;
	enum hc_obj_kind kind;	/* whose directory has it */
	u64 deflt;		/* a number... */
	const char *deflt_name;	/* ...or a choice */
} tunables[] = {
	{ "writeback_percent", HC_OBJ_BACKING, HC_WRITEBACK_PERCENT_DEFAULT, NULL },
	{ "sequential_cutoff", HC_OBJ_BACKING, HC_SEQ_CUTOFF_DEFAULT, NULL },
	{ "admission_policy", HC_OBJ_BACKING, 0, "second_access" },
	{ "stop_when_cache_set_failed", HC_OBJ_BACKING, 0, "auto" },
	{ "io_error_limit", HC_OBJ_SET, HC_IO_ERROR_LIMIT_DEFAULT, NULL },
	{ "io_error_halflife", HC_OBJ_SET, HC_IO_ERROR_HALFLIFE_DEFAULT, NULL },
	{ "cache_replacement_policy", HC_OBJ_CACHE, 0, "lru" },
	{ "discard", HC_OBJ_CACHE, 0, NULL },
};

/*
 * Append to @out (@n bytes used of @len) @kind's settings under @dir that
 * differ from the defaults, as KNOB=VALUE,... Return: the bytes @out would
 * need (>= @len: cut short).
 */
static size_t tuned_str(enum hc_obj_kind kind, const char *dir, char *out,
			size_t len, size_t n)
{
	char buf[256], val[64];
	size_t i;
	u64 v;

	for (i = 0; i < sizeof(tunables) / sizeof(tunables[0]); i++) {
		const struct tunable *t = &tunables[i];

		if (t->kind != kind || !dir)
			continue;
		if (t->deflt_name) {
			if (hc_sysfs_read(dir, t->knob, buf, sizeof(buf)))
				continue;
			hc_sysfs_choice(buf, val, sizeof(val));
			if (!strcmp(val, t->deflt_name))
				continue;
		} else {
			if (hc_sysfs_u64(dir, t->knob, &v) || v == t->deflt)
				continue;
			snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
		}
		n += snprintf(out + n, n < len ? len - n : 0, "%s%s=%s",
			      n ? "," : "", t->knob, val);
	}
	return n;
}

static struct libscols_line *show_backing(struct show *s, const struct hc_obj *b,
					  struct libscols_line *parent)
{
	struct libscols_line *ln = scols_table_new_line(s->tb, parent);
	char buf[256], mode[32];
	u64 running = 0, detaching = 0;

	if (!ln)
		return NULL;
	cell(s, ln, COL_NAME, b->name);
	cell(s, ln, COL_TYPE, "backing");
	cell(s, ln, COL_DEV, b->disk[0] ? b->disk : NULL);
	hc_sysfs_u64(b->dir, "running", &running);
	hc_sysfs_u64(b->dir, "detaching", &detaching);
	cell(s, ln, COL_STATE, detaching ? "detaching" :
			       running ? "running" : "waiting");
	if (!hc_sysfs_read(b->dir, "state", buf, sizeof(buf)))
		cell(s, ln, COL_DATA, buf);
	if (!hc_sysfs_read(b->dir, "cache_mode", buf, sizeof(buf))) {
		hc_sysfs_choice(buf, mode, sizeof(mode));
		cell(s, ln, COL_MODE, mode);
	}
	cell_u64(s, ln, COL_SIZE, hc_disk_bytes(b->name));
	cell_attr(s, ln, COL_DIRTY, b->dir, "dirty_data");
	cells_stats(s, ln, b->dir);
	cell_attr(s, ln, COL_WB_RATE, b->dir, "writeback_rate");
	if (!hc_sysfs_read(b->dir, "label", buf, sizeof(buf)))
		cell(s, ln, COL_LABEL, buf);
	if (tuned_str(HC_OBJ_BACKING, b->dir, buf, sizeof(buf), 0) < sizeof(buf))
		cell(s, ln, COL_TUNED, buf);
	cell(s, ln, COL_SET, b->set_uuid[0] ? b->set_uuid : NULL);
	return ln;
}

static struct libscols_line *show_set(struct show *s, const struct hc_obj *set,
				      const struct hc_obj *cache,
				      const struct hc_obj *objs, size_t n)
{
	struct libscols_line *ln = scols_table_new_line(s->tb, NULL);
	char tuned[512] = "", csum[32];
	size_t i, n_tuned;
	u64 dirty = 0, v;

	if (!ln)
		return NULL;
	cell(s, ln, COL_NAME, cache ? cache->name : set->name);
	cell(s, ln, COL_TYPE, "cache");
	cell(s, ln, COL_STATE, "running");
	if (cache)
		cell_u64(s, ln, COL_SIZE, hc_disk_bytes(cache->name));
	if (!used_percent(set->dir, &v))
		cell_u64(s, ln, COL_USED, v);
	cells_stats(s, ln, set->dir);
	cell_attr(s, ln, COL_ERRORS, set->dir, "errors");
	/* Modules before data checksums have none of these: left empty. */
	if (!hc_sysfs_read(set->dir, "checksum", csum, sizeof(csum)))
		cell(s, ln, COL_CHECKSUM, csum);
	cell_attr(s, ln, COL_CSUM_ERRORS, set->dir, "csum_errors");
	if (!bad_dirty_count(set->dir, &v))
		cell_u64(s, ln, COL_BAD_DIRTY, v);
	n_tuned = tuned_str(HC_OBJ_SET, set->dir, tuned, sizeof(tuned), 0);
	if (cache)
		n_tuned = tuned_str(HC_OBJ_CACHE, cache->dir, tuned,
				    sizeof(tuned), n_tuned);
	if (n_tuned < sizeof(tuned))
		cell(s, ln, COL_TUNED, tuned);
	cell(s, ln, COL_SET, set->name);
	for (i = 0; i < n; i++)
		if (objs[i].kind == HC_OBJ_BACKING &&
		    !strcmp(objs[i].set_uuid, set->name) &&
		    !hc_sysfs_u64(objs[i].dir, "dirty_data", &v))
			dirty += v;
	cell_u64(s, ln, COL_DIRTY, dirty);
	return ln;
}

/* Sets whose metadata is still loading: a line each in "loading". */
static void show_loading(struct show *s)
{
	char buf[4096], *line, *save = NULL;

	if (hc_sysfs_read(hc_sysfs_root(), "loading", buf, sizeof(buf)))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char dev[256], uuid[64], step[32], state[64];
		struct libscols_line *ln;
		u64 size;
		const char *name;

		if (sscanf(line, "%255s %63s %31s", dev, uuid, step) != 3)
			continue;
		ln = scols_table_new_line(s->tb, NULL);
		if (!ln)
			return;
		name = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
		cell(s, ln, COL_NAME, name);
		cell(s, ln, COL_TYPE, "cache");
		snprintf(state, sizeof(state), "loading:%s", step);
		cell(s, ln, COL_STATE, state);
		size = hc_disk_bytes(name);
		if (size)
			cell_u64(s, ln, COL_SIZE, size);
		cell(s, ln, COL_SET, uuid);
	}
}

/*
 * Backing devices stopped by a failed set, from failed_dirty: a line per
 * dirty range, summed per device.
 */
static void show_failed(struct show *s)
{
	char buf[8192], *line, *save = NULL;
	struct { char dev[256], uuid[64]; u64 sectors; } f[64];
	size_t nf = 0, i;

	if (hc_sysfs_read(hc_sysfs_root(), "failed_dirty", buf, sizeof(buf)))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long first, last;
		char dev[256], uuid[64];

		if (sscanf(line, "%255s %63s %llu-%llu", dev, uuid, &first,
			   &last) != 4 || last < first)
			continue;
		for (i = 0; i < nf; i++)
			if (!strcmp(f[i].dev, dev) && !strcmp(f[i].uuid, uuid))
				break;
		if (i == nf) {
			if (nf == sizeof(f) / sizeof(f[0]))
				continue;
			snprintf(f[i].dev, sizeof(f[i].dev), "%s", dev);
			snprintf(f[i].uuid, sizeof(f[i].uuid), "%s", uuid);
			f[i].sectors = 0;
			nf++;
		}
		f[i].sectors += last - first + 1;
	}
	for (i = 0; i < nf; i++) {
		struct libscols_line *ln = scols_table_new_line(s->tb, NULL);
		const char *name = strrchr(f[i].dev, '/');

		if (!ln)
			return;
		name = name ? name + 1 : f[i].dev;
		cell(s, ln, COL_NAME, name);
		cell(s, ln, COL_TYPE, "backing");
		cell(s, ln, COL_STATE, "failed");
		cell(s, ln, COL_DATA, "dirty");
		cell_u64(s, ln, COL_DIRTY, f[i].sectors << 9);
	}
}

static int parse_columns(const char *list, bool *want)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int c, ret = 0;

	if (!copy)
		return -1;
	memset(want, 0, COL_NR * sizeof(*want));
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (c = 0; c < COL_NR; c++)
			if (!strcasecmp(tok, cols[c].name))
				break;
		if (c == COL_NR) {
			hc_warn("show: unknown column '%s' (hcache show --help lists them)",
				tok);
			ret = -1;
			break;
		}
		want[c] = true;
	}
	free(copy);
	return ret;
}

static void show_usage(FILE *f)
{
	int c;

	fprintf(f,
"Usage: %s show [--json] [--bytes] [-o COLS | --all-columns]\n"
"Every registered cache set, cache and backing device, with backing\n"
"devices waiting for their set and those a failed set stopped.\n"
"\n"
"  -J, --json          JSON, every column unless -o names some\n"
"  -b, --bytes         sizes in bytes\n"
"  -o, --output COLS   the columns to show, comma-separated\n"
"  -O, --all-columns   every column\n"
"\n"
"Columns:\n", hc_prog);
	for (c = 0; c < COL_NR; c++)
		fprintf(f, "  %-11s %s\n", cols[c].name, cols[c].help);
}

static int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	 no_argument,	    NULL, 'J' },
		{ "bytes",	 no_argument,	    NULL, 'b' },
		{ "output",	 required_argument, NULL, 'o' },
		{ "all-columns", no_argument,	    NULL, 'O' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool want[COL_NR], json = false, all = false, picked = false;
	struct show s = { 0 };
	struct hc_obj *objs;
	size_t n, i, j;
	int c, ret;

	while ((c = getopt_long(argc, argv, "Jbo:Oh", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
			json = true;
			break;
		case 'b':
			s.bytes = true;
			break;
		case 'o':
			if (parse_columns(optarg, want))
				return EX_USAGE;
			picked = true;
			break;
		case 'O':
			all = true;
			break;
		case 'h':
			show_usage(stdout);
			return EX_OK;
		default:
			show_usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		show_usage(stderr);
		return EX_USAGE;
	}
	ret = need_module();
	if (ret)
		return ret;
	ret = hc_obj_list(&objs, &n);
	if (ret) {
		hc_warn("show: cannot read %s: %s", hc_sysfs_root(),
			strerror(-ret));
		return EX_NO_MODULE;
	}
	for (c = 0; c < COL_NR; c++)
		if (!picked)
			want[c] = all || json || cols[c].deflt;

	s.tb = scols_new_table();
	if (!s.tb) {
		free(objs);
		hc_warn("show: out of memory");
		return EX_REFUSED;
	}
	scols_table_enable_json(s.tb, json);
	scols_table_set_name(s.tb, "hcache");
	for (c = 0, j = 0; c < COL_NR; c++) {
		struct libscols_column *cl;
		char lower[32];
		size_t k;

		s.col_of[c] = -1;
		if (!want[c])
			continue;
		cl = scols_table_new_column(s.tb, cols[c].name, 0, cols[c].flags);
		if (!cl)
			continue;
		if (json) {
			/* lsblk's JSON names: lower case, '-' as '_', '%' as "ratio". */
			for (k = 0; cols[c].name[k] && k < sizeof(lower) - 6; k++)
				lower[k] = cols[c].name[k] == '-' ? '_' :
					   tolower((unsigned char)cols[c].name[k]);
			lower[k] = '\0';
			if (k && lower[k - 1] == '%')
				snprintf(lower + k - 1, sizeof(lower) - k + 1, "_ratio");
			scols_column_set_json_type(cl, cols[c].json);
			scols_cell_set_data(scols_column_get_header(cl), lower);
		}
		s.col_of[c] = j++;
	}

	for (i = 0; i < n; i++) {
		const struct hc_obj *cache = NULL;
		struct libscols_line *ln;

		if (objs[i].kind != HC_OBJ_SET)
			continue;
		for (j = 0; j < n; j++)
			if (objs[j].kind == HC_OBJ_CACHE &&
			    !strcmp(objs[j].set_uuid, objs[i].name))
				cache = &objs[j];
		ln = show_set(&s, &objs[i], cache, objs, n);
		for (j = 0; ln && j < n; j++)
			if (objs[j].kind == HC_OBJ_BACKING &&
			    !strcmp(objs[j].set_uuid, objs[i].name))
				show_backing(&s, &objs[j], ln);
	}
	show_loading(&s);
	/* Backing devices whose set is not registered (or that have none). */
	for (i = 0; i < n; i++) {
		bool set_here = false;

		if (objs[i].kind != HC_OBJ_BACKING)
			continue;
		for (j = 0; j < n; j++)
			if (objs[j].kind == HC_OBJ_SET &&
			    !strcmp(objs[j].name, objs[i].set_uuid))
				set_here = true;
		if (!set_here)
			show_backing(&s, &objs[i], NULL);
	}
	show_failed(&s);
	scols_print_table(s.tb);
	scols_unref_table(s.tb);
	free(objs);
	return EX_OK;
}

/* ---- stats -------------------------------------------------------------- */

static int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "window", required_argument, NULL, 'w' },
		{ "json",   no_argument,       NULL, 'J' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const windows[] = {
		"five_minute", "hour", "day", "total"
	};
	static const char *const counters[] = {
		"cache_hits", "cache_misses", "cache_hit_ratio",
		"cache_bypass_hits", "cache_bypass_misses", "bypassed",
		"bypass_sequential", "bypass_full", "bypass_mode",
		"bypass_policy", "cache_miss_collisions", "writes_in_place",
	};
	static const char stats_usage[] =
		"Usage: %s stats DEV|SET [--window five_minute|hour|day|total] [--json]\n";
	const char *window = "total";
	char dir[PATH_MAX], val[64];
	bool json = false;
	struct hc_obj o;
	size_t i;
	int c, ret;

	while ((c = getopt_long(argc, argv, "w:Jh", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			window = optarg;
			break;
		case 'J':
			json = true;
			break;
		case 'h':
			printf(stats_usage, hc_prog);
			return EX_OK;
		default:
			fprintf(stderr, stats_usage, hc_prog);
			return EX_USAGE;
		}
	}
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++)
		if (!strcmp(window, windows[i]))
			break;
	if (i == sizeof(windows) / sizeof(windows[0])) {
		hc_warn("stats: unknown window '%s': five_minute, hour, day or total",
			window);
		return EX_USAGE;
	}
	if (optind != argc - 1) {
		fprintf(stderr, stats_usage, hc_prog);
		return EX_USAGE;
	}
	ret = find("stats", argv[optind], 1u << HC_OBJ_SET | 1u << HC_OBJ_BACKING, &o);
	if (ret)
		return ret;
	if (snprintf(dir, sizeof(dir), "%s/stats_%s", o.dir, window) >= (int)sizeof(dir))
		return EX_NOT_FOUND;
	if (json) {
		printf("{\"name\": ");
		hc_json_str(stdout, o.name);
		printf(", \"type\": \"%s\", \"window\": \"%s\"",
		       o.kind == HC_OBJ_SET ? "set" : "backing", window);
	} else {
		printf("%s %s, window %s\n", o.kind == HC_OBJ_SET ? "cache set" : "backing device",
		       o.name, window);
	}
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		ret = hc_sysfs_read(dir, counters[i], val, sizeof(val));
		if (ret) {
			if (json)
				printf("}\n");
			hc_warn("%s: cannot read %s/%s: %s", argv[optind], dir,
				counters[i], strerror(-ret));
			return EX_NOT_FOUND;
		}
		if (json)
			printf(", \"%s\": %s", counters[i], val);
		else
			printf("  %-22s %s\n", counters[i], val);
	}
	if (json)
		printf("}\n");
	return EX_OK;
}

/* ---- Actions ------------------------------------------------------------ */

static int cmd_register(int argc, char **argv)
{
	struct hc_obj root = { .kind = HC_OBJ_SET };
	int i, ret = need_module(), rc = EX_OK;

	if (ret)
		return ret;
	if (argc < 2) {
		fprintf(stderr, "Usage: %s register DEV...\n", hc_prog);
		return EX_USAGE;
	}
	snprintf(root.dir, sizeof(root.dir), "%s", hc_sysfs_root());
	for (i = 1; i < argc; i++) {
		char path[PATH_MAX];

		if (!realpath(argv[i], path)) {
			hc_warn("%s: %s", argv[i], strerror(errno));
			rc = EX_NOT_FOUND;
			continue;
		}
		/* Quiet about a device registered already, by udev say. */
		ret = hc_sysfs_write(root.dir, "register_quiet", path);
		if (ret) {
			hc_warn("%s: the kernel refused to register it: %s (the kernel log says why)",
				argv[i], strerror(-ret));
			rc = EX_REFUSED;
		}
	}
	return rc;
}

/* stop, unregister, detach: a write to one file of DEV or SET. */
static int cmd_one(int argc, char **argv, unsigned int kinds,
		   const char *set_attr, const char *backing_attr)
{
	struct hc_obj o;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "Usage: %s %s %s\n", hc_prog, argv[0],
			kinds & (1u << HC_OBJ_BACKING) ?
			(kinds & (1u << HC_OBJ_SET) ? "DEV|SET" : "DEV") : "SET");
		return EX_USAGE;
	}
	ret = find(argv[0], argv[1], kinds, &o);
	if (ret)
		return ret;
	return act(argv[1], &o, o.kind == HC_OBJ_SET ? set_attr : backing_attr,
		   "1");
}

/*
 * The options of a command that takes one DEV and one flag (--wait,
 * --discard-dirty-data; @short_opt its letter, or 0): sets *@flag.
 * Returns -1 to go on with argv[optind], else the exit code (the help was
 * shown, or the usage was wrong).
 */
static int one_arg_flag(int argc, char **argv, const char *cmd,
			const char *args, const char *flag_name, char short_opt,
			bool *flag)
{
	const struct option opts[] = {
		{ flag_name, no_argument, NULL, 'F' },
		{ "help",    no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char optstring[4] = { 'h' };
	int c;

	if (short_opt) {
		optstring[0] = short_opt;
		optstring[1] = 'h';
	}
	*flag = false;
	while ((c = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		if (c == 'F' || (short_opt && c == short_opt)) {
			*flag = true;
		} else if (c == 'h') {
			printf("Usage: %s %s %s [--%s]\n", hc_prog, cmd, args,
			       flag_name);
			return EX_OK;
		} else {
			break;
		}
	}
	if (c == -1 && optind == argc - 1)
		return -1;
	fprintf(stderr, "Usage: %s %s %s [--%s]\n", hc_prog, cmd, args,
		flag_name);
	return EX_USAGE;
}

/* ---- flush -------------------------------------------------------------- */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait until every device of @b[] reads dirty_data 0 or, @flushing, until
 * each one's writeback_flush is done; on a terminal, a line of progress on
 * stderr, redrawn each second. A flush that ends with dirty data left
 * (called off, or the device left its cache) is an error.
 */
static int flush_wait(const struct hc_obj *b, size_t n, const char *arg,
		      bool flushing)
{
	bool tty = isatty(STDERR_FILENO), pending;
	u64 first = 0, dirty, written, written0 = 0, v, flush_v = 0;
	double start = now_seconds(), t;
	char rate_s[32], dirty_s[32];
	size_t i;

	for (i = 0; i < n; i++) {
		if (!hc_sysfs_u64(b[i].dir, "dirty_data", &v))
			first += v;
		if (!hc_sysfs_u64(b[i].dir, "writeback_sectors_written", &v))
			written0 += v << 9;
	}
	for (;;) {
		dirty = written = 0;
		pending = false;
		for (i = 0; i < n; i++) {
			/*
			 * A flush is done when the kernel found no dirty data
			 * and no write going dirty after it was asked: then
			 * every write acknowledged before is written back,
			 * even one whose key dirty_data did not count yet.
			 * Read before dirty_data: a flush that ends between
			 * the two reads is then seen done with 0 dirty, not
			 * pending-then-done with data left. A module too old
			 * to tell (no such file to read) counts as pending
			 * while dirty.
			 */
			int fret = flushing ?
				hc_sysfs_u64(b[i].dir, "writeback_flush", &flush_v) : 0;
			int ret = hc_sysfs_u64(b[i].dir, "dirty_data", &v);

			if (ret) {
				if (tty)
					fputc('\n', stderr);
				hc_warn("flush: %s: %s went away before it was clean: %s",
					arg, b[i].name, strerror(-ret));
				return EX_REFUSED;
			}
			dirty += v;
			if (flushing)
				pending |= fret ? v != 0 : flush_v != 0;
			if (!hc_sysfs_u64(b[i].dir, "writeback_sectors_written", &v))
				written += v << 9;
		}
		if (flushing ? !pending : !dirty)
			break;
		t = now_seconds() - start;
		if (tty && t > 0) {
			double rate = (written - written0) / t;

			size_str(rate, rate_s, sizeof(rate_s));
			size_str(dirty, dirty_s, sizeof(dirty_s));
			fprintf(stderr, "\r%s: %3llu%% written back, %s left, %s/s",
				arg, first > dirty ?
				(unsigned long long)((first - dirty) * 100 / first) : 0ULL,
				dirty_s, rate_s);
			if (rate >= 1)
				fprintf(stderr, ", %.0f s to go   ", dirty / rate);
			else
				fputs("            ", stderr);
		}
		usleep(tty ? 1000000 : 200000);
	}
	if (dirty) {
		/*
		 * The flush is done (or was called off: writeback_flush 0);
		 * what is dirty now was written after the kernel found the
		 * device clean, or is what a call-off left.
		 */
		if (tty)
			fputc('\n', stderr);
		size_str(dirty, dirty_s, sizeof(dirty_s));
		hc_warn("flush: %s: flushed; %s dirty again since (new writes in writeback mode), unless the flush was called off",
			arg, dirty_s);
		return EX_OK;
	}
	if (tty)
		fprintf(stderr, "\r%s: clean%60s\n", arg, "");
	return EX_OK;
}

static int cmd_flush(int argc, char **argv)
{
	struct hc_obj o, *list = NULL, *b;
	size_t n = 0, nb = 0, i;
	int ret, rc = EX_OK;
	bool wait;

	ret = one_arg_flag(argc, argv, "flush", "DEV|SET", "wait", 'w', &wait);
	if (ret >= 0)
		return ret;
	ret = find("flush", argv[optind], 1u << HC_OBJ_SET | 1u << HC_OBJ_BACKING, &o);
	if (ret)
		return ret;
	if (o.kind == HC_OBJ_BACKING) {
		b = &o;
		nb = 1;
	} else {
		/* A set: each of its backing devices. */
		ret = hc_obj_list(&list, &n);
		if (ret) {
			hc_warn("flush: cannot read %s: %s", hc_sysfs_root(),
				strerror(-ret));
			return EX_NO_MODULE;
		}
		for (i = 0; i < n; i++)
			if (list[i].kind == HC_OBJ_BACKING &&
			    !strcmp(list[i].set_uuid, o.name))
				list[nb++] = list[i];
		b = list;
	}
	for (i = 0; i < nb; i++) {
		ret = act(argv[optind], &b[i], "writeback_flush", "1");
		if (ret)
			rc = ret;
	}
	if (!rc && wait)
		rc = flush_wait(b, nb, argv[optind], true);
	free(list);
	return rc;
}

static bool detached(const struct hc_obj *b)
{
	char uuid[64];

	return !hc_sysfs_read(b->dir, "cache_set_uuid", uuid, sizeof(uuid)) &&
	       !strcmp(uuid, "00000000-0000-0000-0000-000000000000");
}

static int cmd_detach(int argc, char **argv)
{
	struct hc_obj b;
	u64 detaching;
	bool wait;
	int c, ret;

	ret = one_arg_flag(argc, argv, "detach", "DEV", "wait", 'w', &wait);
	if (ret >= 0)
		return ret;
	ret = find("detach", argv[optind], 1u << HC_OBJ_BACKING, &b);
	if (!ret)
		ret = act(argv[optind], &b, "detach", "1");
	if (ret || !wait)
		return ret;
	/* Writeback runs at full speed; the detach follows once clean. */
	ret = flush_wait(&b, 1, argv[optind], false);
	if (ret)
		return ret;
	for (c = 0; c < 600 && !detached(&b); c++) {
		if (!hc_sysfs_u64(b.dir, "detaching", &detaching) && !detaching &&
		    !detached(&b)) {
			hc_warn("detach: %s: written back, but the detach did not complete (the kernel log says why)",
				argv[optind]);
			return EX_REFUSED;
		}
		usleep(100000);
	}
	if (!detached(&b)) {
		hc_warn("detach: %s: clean, but still attached after 60 s",
			argv[optind]);
		return EX_REFUSED;
	}
	return EX_OK;
}

static int cmd_attach(int argc, char **argv)
{
	struct hc_obj b, set;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "Usage: %s attach DEV SET\n", hc_prog);
		return EX_USAGE;
	}
	ret = find("attach", argv[1], 1u << HC_OBJ_BACKING, &b);
	if (!ret)
		ret = find("attach", argv[2], 1u << HC_OBJ_SET, &set);
	if (ret)
		return ret;
	return act(argv[1], &b, "attach", set.name);
}

static int cmd_set_mode(int argc, char **argv)
{
	struct hc_obj b;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "Usage: %s set-mode DEV writethrough|writeback|writearound|none\n",
			hc_prog);
		return EX_USAGE;
	}
	ret = find("set-mode", argv[1], 1u << HC_OBJ_BACKING, &b);
	if (ret)
		return ret;
	return act(argv[1], &b, "cache_mode", argv[2]);
}

/* The tunables "set" writes, and whose file each is. */
static const struct {
	const char *name;
	enum hc_obj_kind kind;
} knobs[] = {
	{ "cache_mode",			HC_OBJ_BACKING },
	{ "label",			HC_OBJ_BACKING },
	{ "writeback_running",		HC_OBJ_BACKING },
	{ "writeback_percent",		HC_OBJ_BACKING },
	{ "writeback_delay",		HC_OBJ_BACKING },
	{ "writeback_idle_seconds",	HC_OBJ_BACKING },
	{ "writeback_rate",		HC_OBJ_BACKING },
	{ "writeback_rate_update_seconds", HC_OBJ_BACKING },
	{ "writeback_rate_p_term_inverse", HC_OBJ_BACKING },
	{ "writeback_rate_i_term_inverse", HC_OBJ_BACKING },
	{ "writeback_rate_d_term",	HC_OBJ_BACKING },
	{ "writeback_rate_minimum",	HC_OBJ_BACKING },
	{ "sequential_cutoff",		HC_OBJ_BACKING },
	{ "admission_policy",		HC_OBJ_BACKING },
	{ "stop_when_cache_set_failed",	HC_OBJ_BACKING },
	{ "cache_replacement_policy",	HC_OBJ_CACHE },
	{ "discard",			HC_OBJ_CACHE },
	{ "journal_delay_ms",		HC_OBJ_SET },
	{ "io_error_limit",		HC_OBJ_SET },
	{ "io_error_halflife",		HC_OBJ_SET },
};

static void set_usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: %s set DEV|SET KNOB=VALUE...\nKnobs:\n", hc_prog);
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		fprintf(f, "  %-31s of a %s\n", knobs[i].name,
			knobs[i].kind == HC_OBJ_BACKING ? "backing device" :
			knobs[i].kind == HC_OBJ_CACHE ? "cache device (or its set)" :
			"cache set (or its cache device)");
}

static int cmd_set(int argc, char **argv)
{
	struct hc_obj o, target;
	int i, ret, rc = EX_OK;
	size_t k;

	if (argc < 3) {
		set_usage(stderr);
		return EX_USAGE;
	}
	/* Every argument checked before anything is written. */
	for (i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		for (k = 0; eq && k < sizeof(knobs) / sizeof(knobs[0]); k++)
			if (strlen(knobs[k].name) == (size_t)(eq - argv[i]) &&
			    !strncmp(knobs[k].name, argv[i], eq - argv[i]))
				break;
		if (!eq || k == sizeof(knobs) / sizeof(knobs[0])) {
			hc_warn("set: '%s' is not KNOB=VALUE with a known knob", argv[i]);
			set_usage(stderr);
			return EX_USAGE;
		}
	}
	ret = find("set", argv[1], 1u << HC_OBJ_SET | 1u << HC_OBJ_CACHE |
			    1u << HC_OBJ_BACKING, &o);
	if (ret)
		return ret;
	for (i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '='), name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
		for (k = 0; strcmp(knobs[k].name, name); k++)
			;
		target = o;
		/* A set and its cache device stand for each other. */
		if (knobs[k].kind != o.kind) {
			const char *other = NULL;
			struct hc_obj *list;
			size_t n, j;

			if (knobs[k].kind == HC_OBJ_SET && o.kind == HC_OBJ_CACHE &&
			    o.set_uuid[0]) {
				ret = find("set", o.set_uuid, 1u << HC_OBJ_SET,
					   &target);
				if (ret)
					return ret;
				other = target.name;
			} else if (knobs[k].kind == HC_OBJ_CACHE &&
				   o.kind == HC_OBJ_SET && !hc_obj_list(&list, &n)) {
				for (j = 0; j < n; j++)
					if (list[j].kind == HC_OBJ_CACHE &&
					    !strcmp(list[j].set_uuid, o.name)) {
						target = list[j];
						other = target.name;
					}
				free(list);
			}
			if (!other) {
				hc_warn("%s: %s is a knob of a %s", argv[1], name,
					knobs[k].kind == HC_OBJ_BACKING ? "backing device" :
					knobs[k].kind == HC_OBJ_CACHE ? "cache device" :
					"cache set");
				return EX_USAGE;
			}
		}
		ret = act(argv[1], &target, name, eq + 1);
		if (ret)
			rc = ret;
	}
	return rc;
}

/* ---- wipe --------------------------------------------------------------- */

static int cmd_wipe(int argc, char **argv)
{
	static const u8 zero[HC_SB_SIZE];
	bool discard_dirty;
	struct hc_sb_disk d;
	const char *path, *err;
	char uuid[37];
	struct hc_sb sb;
	int fd, ret;

	ret = one_arg_flag(argc, argv, "wipe", "DEV", "discard-dirty-data", 0,
			   &discard_dirty);
	if (ret >= 0)
		return ret;
	path = argv[optind];
	/* O_EXCL: the kernel refuses a registered (or mounted) device. */
	fd = open(path, O_RDWR | O_EXCL | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EBUSY) {
			hc_warn("wipe: %s: busy: registered with hcache or otherwise in use; stop it first (hcache stop)",
				path);
			return EX_REFUSED;
		}
		hc_warn("wipe: %s: %s", path, strerror(errno));
		return EX_NOT_FOUND;
	}
	if (hc_read_sb(fd, &d) || le64_to_cpu(d.magic) != HC_SB_MAGIC) {
		close(fd);
		hc_warn("wipe: %s: holds no hcache superblock", path);
		return EX_NOT_FOUND;
	}
	hc_sb_decode(&d, sizeof(d), &sb, &err);
	if (err && !discard_dirty) {
		close(fd);
		hc_warn("wipe: %s: its hcache superblock is invalid (%s), so whether its cache holds dirty data cannot be told; add --discard-dirty-data to wipe it anyway",
			path, err);
		return EX_REFUSED;
	}
	if (!err) {
		hc_uuid_str(sb.set_uuid, uuid);
		/*
		 * A dirty backing device's newest data is in its cache; a
		 * cache device may hold the only copy of its backing
		 * devices' dirty data, which its superblock alone cannot
		 * rule out.
		 */
		if (sb.kind == HC_KIND_BACKING &&
		    sb.backing.state == HC_STATE_DIRTY && !discard_dirty) {
			close(fd);
			hc_warn("wipe: %s: its superblock says dirty: cache set %s holds data newer than the device; write it back first (hcache flush --wait), or add --discard-dirty-data to lose it",
				path, uuid);
			return EX_REFUSED;
		}
		if (sb.kind == HC_KIND_CACHE && !discard_dirty) {
			close(fd);
			hc_warn("wipe: %s: the cache device of set %s may hold its backing devices' only copy of dirty data; register it and write that back (hcache flush %s --wait), then stop it, and add --discard-dirty-data to wipe it",
				path, uuid, uuid);
			return EX_REFUSED;
		}
		if (discard_dirty && (sb.kind == HC_KIND_CACHE ||
				      sb.backing.state == HC_STATE_DIRTY))
			hc_warn("wipe: %s: discarding any dirty data of cache set %s",
				path, uuid);
	}
	if (pwrite(fd, zero, sizeof(zero), HC_SB_OFFSET) != sizeof(zero) ||
	    fsync(fd)) {
		hc_warn("wipe: %s: cannot write: %s", path, strerror(errno));
		close(fd);
		return EX_REFUSED;
	}
	close(fd);
	return EX_OK;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd;
	int c;

	hc_prog = "hcache";
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EX_OK;
		case 'V':
			hc_print_version();
			return EX_OK;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EX_USAGE;
	}
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	optind = 0;	/* each command parses its own options */
	if (!strcmp(cmd, "show"))
		return cmd_show(argc, argv);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(argc, argv);
	if (!strcmp(cmd, "register"))
		return cmd_register(argc, argv);
	if (!strcmp(cmd, "stop"))
		return cmd_one(argc, argv, 1u << HC_OBJ_SET | 1u << HC_OBJ_BACKING,
			       "stop", "stop");
	if (!strcmp(cmd, "unregister"))
		return cmd_one(argc, argv, 1u << HC_OBJ_SET, "unregister", NULL);
	if (!strcmp(cmd, "detach"))
		return cmd_detach(argc, argv);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc, argv);
	if (!strcmp(cmd, "set-mode"))
		return cmd_set_mode(argc, argv);
	if (!strcmp(cmd, "set"))
		return cmd_set(argc, argv);
	if (!strcmp(cmd, "flush"))
		return cmd_flush(argc, argv);
	if (!strcmp(cmd, "wipe"))
		return cmd_wipe(argc, argv);
	hc_warn("unknown command '%s'", cmd);
	usage(stderr);
	return EX_USAGE;
}
