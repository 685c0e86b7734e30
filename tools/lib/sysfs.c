// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs.c: finding and reading the registered hcache objects in sysfs,
 * for the hcache command (see sysfs.h).
 */

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include "sysfs.h"

#define HC_SYSFS_DEFAULT	"/sys/fs/hcache"
#define HC_CLASS_BLOCK		"/sys/class/block"

/* snprintf() into a path or name; -ENAMETOOLONG if it did not fit. */
static int __attribute__((format(printf, 3, 4)))
hc_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *hc_sysfs_root(void)
{
	const char *s = getenv("HCACHE_SYSFS");

	return s && *s ? s : HC_SYSFS_DEFAULT;
}

bool hc_sysfs_loaded(void)
{
	struct stat st;

	return !stat(hc_sysfs_root(), &st) && S_ISDIR(st.st_mode);
}

int hc_sysfs_read(const char *dir, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, e;

	if (hc_pathf(path, sizeof(path), "%s/%s", dir, attr))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int hc_sysfs_u64(const char *dir, const char *attr, u64 *v)
{
	char buf[64];
	int ret = hc_sysfs_read(dir, attr, buf, sizeof(buf));

	if (ret)
		return ret;
	return hc_parse_u64(buf, v) ? -EINVAL : 0;
}

int hc_sysfs_write(const char *dir, const char *attr, const char *val)
{
	char path[PATH_MAX];
	size_t len = strlen(val);
	ssize_t n;
	int fd, e;

	if (hc_pathf(path, sizeof(path), "%s/%s", dir, attr))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	e = errno;
	if (close(fd) && n >= 0) {
		n = -1;
		e = errno;
	}
	if (n < 0)
		return -e;
	return (size_t)n == len ? 0 : -EIO;
}

void hc_sysfs_choice(const char *text, char *buf, size_t len)
{
	const char *open = strchr(text, '['), *close;

	close = open ? strchr(open, ']') : NULL;
	if (!open || !close) {
		snprintf(buf, len, "%s", text);
		return;
	}
	snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
}

u64 hc_disk_bytes(const char *name)
{
	char dir[PATH_MAX];
	u64 sectors;

	snprintf(dir, sizeof(dir), HC_CLASS_BLOCK "/%s", name);
	if (hc_sysfs_u64(dir, "size", &sectors) || sectors > ~0ULL >> 9)
		return 0;
	return sectors << 9;
}

static bool hc_is_uuid(const char *s)
{
	uuid_t u;

	return strlen(s) == 36 && !uuid_parse(s, u);
}

static bool hc_exists(const char *dir, const char *attr)
{
	char path[PATH_MAX];

	return !hc_pathf(path, sizeof(path), "%s/%s", dir, attr) &&
	       !access(path, F_OK);
}

/* The hcacheN disk that exports backing device @o, if it runs. */
static void hc_backing_disk(struct hc_obj *o)
{
	char link[PATH_MAX], target[PATH_MAX], mine[PATH_MAX];
	struct dirent *de;
	DIR *d;

	o->disk[0] = '\0';
	if (!realpath(o->dir, mine))
		return;
	d = opendir(HC_CLASS_BLOCK);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "hcache", 6))
			continue;
		if (hc_pathf(link, sizeof(link), HC_CLASS_BLOCK "/%s/hcache",
			     de->d_name))
			continue;
		if (realpath(link, target) && !strcmp(target, mine)) {
			snprintf(o->disk, sizeof(o->disk), "%s", de->d_name);
			break;
		}
	}
	closedir(d);
}

/*
 * Fill @o for the disk or partition named @name: a cache or backing
 * device hcache registered. Returns 0, -ENOENT or -ENODEV.
 */
static int hc_obj_from_disk(const char *name, struct hc_obj *o)
{
	char dev[PATH_MAX], target[PATH_MAX], *slash;

	memset(o, 0, sizeof(*o));
	if (hc_pathf(dev, sizeof(dev), HC_CLASS_BLOCK "/%s", name) ||
	    access(dev, F_OK))
		return -ENOENT;
	if (hc_pathf(o->dir, sizeof(o->dir), "%s/hcache", dev))
		return -ENOENT;
	/* /dev/hcacheN links to its backing device's directory. */
	if (!strncmp(name, "hcache", 6) && realpath(o->dir, target)) {
		memcpy(o->dir, target, sizeof(o->dir));
		*strrchr(target, '/') = '\0';
		slash = strrchr(target, '/');
		name = slash ? slash + 1 : target;
	}
	if (hc_pathf(o->name, sizeof(o->name), "%s", name))
		return -ENOENT;
	if (hc_exists(o->dir, "set_uuid")) {
		o->kind = HC_OBJ_CACHE;
		if (hc_sysfs_read(o->dir, "set_uuid", o->set_uuid,
				  sizeof(o->set_uuid)))
			o->set_uuid[0] = '\0';
		return 0;
	}
	if (!hc_exists(o->dir, "state"))
		return -ENODEV;
	o->kind = HC_OBJ_BACKING;
	if (hc_sysfs_read(o->dir, "cache_set_uuid", o->set_uuid,
			  sizeof(o->set_uuid)) ||
	    !strcmp(o->set_uuid, "00000000-0000-0000-0000-000000000000"))
		o->set_uuid[0] = '\0';
	hc_backing_disk(o);
	return 0;
}

static void hc_obj_set(const char *uuid, struct hc_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->kind = HC_OBJ_SET;
	snprintf(o->name, sizeof(o->name), "%s", uuid);
	snprintf(o->set_uuid, sizeof(o->set_uuid), "%s", uuid);
	if (hc_pathf(o->dir, sizeof(o->dir), "%s/%s", hc_sysfs_root(), uuid))
		o->dir[0] = '\0';
}

int hc_obj_find(const char *arg, struct hc_obj *o, char *why, size_t why_len)
{
	char path[PATH_MAX], target[PATH_MAX], *base;
	struct stat st;
	int ret;

	if (hc_is_uuid(arg)) {
		hc_obj_set(arg, o);
		if (!access(o->dir, F_OK))
			return 0;
		snprintf(why, why_len, "no cache set %s is registered", arg);
		return -ENOENT;
	}
	if (strchr(arg, '/')) {
		if (stat(arg, &st)) {
			snprintf(why, why_len, "%s", strerror(errno));
			return -ENOENT;
		}
		if (!S_ISBLK(st.st_mode)) {
			snprintf(why, why_len, "not a block device");
			return -ENODEV;
		}
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u",
			 major(st.st_rdev), minor(st.st_rdev));
		if (!realpath(path, target)) {
			snprintf(why, why_len, "block device %u:%u is not in sysfs",
				 major(st.st_rdev), minor(st.st_rdev));
			return -ENOENT;
		}
		base = strrchr(target, '/') + 1;
	} else {
		base = (char *)arg;
	}
	ret = hc_obj_from_disk(base, o);
	if (ret == -ENOENT)
		snprintf(why, why_len, "no such block device or cache set");
	else if (ret == -ENODEV)
		snprintf(why, why_len, "not a registered hcache device (register it first)");
	return ret;
}

static int hc_obj_cmp(const void *a, const void *b)
{
	const struct hc_obj *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int hc_obj_push(struct hc_obj **objs, size_t *n, size_t *cap,
		       const struct hc_obj *o)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct hc_obj *p = realloc(*objs, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*objs = p;
		*cap = c;
	}
	(*objs)[(*n)++] = *o;
	return 0;
}

int hc_obj_list(struct hc_obj **objs, size_t *n)
{
	size_t cap = 0;
	struct hc_obj o;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	*objs = NULL;
	*n = 0;
	d = opendir(hc_sysfs_root());
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d)))
		if (hc_is_uuid(de->d_name)) {
			hc_obj_set(de->d_name, &o);
			ret = hc_obj_push(objs, n, &cap, &o);
		}
	closedir(d);
	d = opendir(HC_CLASS_BLOCK);
	if (!d)
		ret = ret ? ret : -errno;
	while (!ret && d && (de = readdir(d))) {
		/* hcacheN stands for its backing device, listed by its name. */
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "hcache", 6))
			continue;
		if (!hc_obj_from_disk(de->d_name, &o))
			ret = hc_obj_push(objs, n, &cap, &o);
	}
	if (d)
		closedir(d);
	if (ret) {
		free(*objs);
		*objs = NULL;
		*n = 0;
		return ret;
	}
	qsort(*objs, *n, sizeof(**objs), hc_obj_cmp);
	return 0;
}
