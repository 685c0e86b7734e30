// SPDX-License-Identifier: GPL-2.0
/*
 * hcache-register: hand a device to the hcache module through
 * /sys/fs/hcache/register_quiet, or register_async (--async) as the udev
 * rule does on every add event.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Exit codes; keep man/hcache-register.8 in step. */
enum {
	EX_OK		= 0,	/* registered, or already registered */
	EX_USAGE	= 1,
	EX_IO		= 2,	/* cannot open or read the device */
	EX_NOT_HCACHE	= 3,	/* no valid hcache superblock */
	EX_NO_MODULE	= 4,	/* /sys/fs/hcache/register_quiet missing */
	EX_REFUSED	= 5,	/* the kernel refused the device */
};

#define HC_SYSFS_DEFAULT	"/sys/fs/hcache"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [-a] DEV\n"
"Register the hcache device DEV with the kernel module.\n"
"\n"
"  -a, --async     return once a cache device's load has started, not\n"
"                  when it ends (progress: /sys/fs/hcache/loading)\n"
"  -h, --help      show this help and exit\n"
"  -V, --version   show the version and exit\n"
"\n"
"Exit status: 0 registered or already registered, 1 usage, 2 cannot read\n"
"DEV, 3 DEV holds no valid hcache superblock, 4 hcache module not loaded,\n"
"5 the kernel refused DEV.\n",
		hc_prog);
}

static const struct option long_opts[] = {
	{ "async",	no_argument, NULL, 'a' },
	{ "help",	no_argument, NULL, 'h' },
	{ "version",	no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	char dev[PATH_MAX], attr[PATH_MAX];
	const char *path, *sysfs, *err;
	struct hc_sb_disk d;
	struct hc_sb sb;
	ssize_t n;
	const char *file = "register_quiet";
	int c, fd;

	hc_prog = "hcache-register";
	while ((c = getopt_long(argc, argv, "ahV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			file = "register_async";
			break;
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
	if (optind != argc - 1) {
		usage(stderr);
		return EX_USAGE;
	}
	path = argv[optind];

	if (!realpath(path, dev)) {
		hc_warn("%s: %s", path, strerror(errno));
		return EX_IO;
	}
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		hc_warn("%s: cannot open: %s", path, strerror(errno));
		return EX_IO;
	}
	if (hc_read_sb(fd, &d)) {
		int e = errno;

		close(fd);
		if (e == ENODATA) {
			hc_warn("%s: not an hcache device: smaller than %u bytes",
				path, HC_SB_END);
			return EX_NOT_HCACHE;
		}
		hc_warn("%s: cannot read the superblock: %s", path,
			strerror(e));
		return EX_IO;
	}
	close(fd);
	hc_sb_decode(&d, sizeof(d), &sb, &err);
	if (err) {
		hc_warn("%s: not an hcache device: %s", path, err);
		return EX_NOT_HCACHE;
	}

	/* HCACHE_SYSFS points the tool elsewhere, for tests. */
	sysfs = getenv("HCACHE_SYSFS");
	if (!sysfs || !*sysfs)
		sysfs = HC_SYSFS_DEFAULT;
	snprintf(attr, sizeof(attr), "%s/%s", sysfs, file);
	fd = open(attr, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			hc_warn("%s: hcache module not loaded (no %s); try 'modprobe hcache'",
				path, attr);
		else
			hc_warn("%s: cannot open %s: %s", path, attr,
				strerror(errno));
		return EX_NO_MODULE;
	}
	n = write(fd, dev, strlen(dev));
	if (n < 0) {
		int e = errno;

		close(fd);
		/* register_quiet is silent about a registered device... */
		if (e == EEXIST)
			return EX_OK;
		hc_warn("%s: kernel refused to register %s: %s", path, dev,
			strerror(e));
		return EX_REFUSED;
	}
	if (close(fd)) {
		hc_warn("%s: kernel refused to register %s: %s", path, dev,
			strerror(errno));
		return EX_REFUSED;
	}
	return EX_OK;
}
