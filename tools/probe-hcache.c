// SPDX-License-Identifier: GPL-2.0
/*
 * probe-hcache: report an hcache superblock for udev (or humans), and stay
 * silent about any other device.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include <blkid/blkid.h>

#include "util.h"

/* Exit codes; keep man/probe-hcache.8 in step. */
enum {
	EX_OK		= 0,	/* probed, hcache or not */
	EX_USAGE	= 1,
	EX_IO		= 2,	/* cannot open or read the device */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [-o udev] DEV\n"
"Print the identity of an hcache device; print nothing for other devices.\n"
"\n"
"  -o, --output FORMAT  'udev' prints ID_FS_* KEY=value lines for\n"
"                       IMPORT{program}; default is one blkid-style line\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n"
"\n"
"Exit status: 0 probed (whether or not DEV is hcache), 1 usage,\n"
"2 cannot open or read DEV.\n",
		hc_prog);
}

static const struct option long_opts[] = {
	{ "output",	required_argument, NULL, 'o' },
	{ "help",	no_argument,	   NULL, 'h' },
	{ "version",	no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	char dev[37], set[37], label[HC_LABEL_SIZE];
	char label_enc[4 * HC_LABEL_SIZE + 1];
	bool udev = false;
	struct hc_sb_disk d;
	struct hc_sb sb;
	const char *path;
	int c, fd;

	hc_prog = "probe-hcache";
	while ((c = getopt_long(argc, argv, "o:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (strcmp(optarg, "udev")) {
				hc_warn("unknown output format '%s' (only 'udev')",
					optarg);
				return EX_USAGE;
			}
			udev = true;
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

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		hc_warn("%s: cannot open: %s", path, strerror(errno));
		return EX_IO;
	}
	if (hc_read_sb(fd, &d)) {
		int err = errno;

		close(fd);
		/* Shorter than a superblock: not ours, not an error. */
		if (err == ENODATA)
			return EX_OK;
		hc_warn("%s: cannot read: %s", path, strerror(err));
		return EX_IO;
	}
	close(fd);

	/* Only a fully valid superblock counts. */
	if (hc_sb_decode(&d, sizeof(d), &sb, NULL))
		return EX_OK;

	hc_uuid_str(sb.dev_uuid, dev);
	hc_uuid_str(sb.set_uuid, set);
	memcpy(label, sb.label, sizeof(label));

	if (!udev) {
		printf("%s: UUID=\"%s\"", path, dev);
		if (label[0]) {
			printf(" LABEL=");
			hc_json_str(stdout, label);
		}
		printf(" TYPE=\"hcache\" HCACHE_KIND=\"%s\"\n",
		       hc_kind_name(sb.kind));
		return EX_OK;
	}

	printf("ID_FS_TYPE=hcache\n");
	printf("ID_FS_UUID=%s\n", dev);
	printf("ID_FS_UUID_ENC=%s\n", dev);
	if (label[0]) {
		blkid_encode_string(sb.label, label_enc, sizeof(label_enc));
		blkid_safe_string(sb.label, label, sizeof(label));
		printf("ID_FS_LABEL=%s\n", label);
		printf("ID_FS_LABEL_ENC=%s\n", label_enc);
	}
	printf("ID_HCACHE_KIND=%s\n", hc_kind_name(sb.kind));
	if (strcmp(set, "00000000-0000-0000-0000-000000000000"))
		printf("ID_HCACHE_SET_UUID=%s\n", set);
	return EX_OK;
}
