// SPDX-License-Identifier: GPL-2.0
/*
 * hcache-super-show: print every field of an hcache superblock, whether its
 * checksum matches and whether it passes validation.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Exit codes; keep man/hcache-super-show.8 in step. */
enum {
	EX_OK		= 0,	/* valid superblock */
	EX_USAGE	= 1,
	EX_IO		= 2,	/* cannot open or read the device */
	EX_NOT_HCACHE	= 3,	/* no hcache magic at byte 4096 */
	EX_INVALID	= 4,	/* hcache magic, but bad checksum or field */
};

struct hc_show {
	const char *path;
	const struct hc_sb_disk *d;
	u32 csum_expected;
	const char *err;	/* NULL when valid */
	bool read_only;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [-f] [--json] DEV\n"
"Show the hcache superblock of DEV (a device or image file).\n"
"\n"
"  -f, --force     print the fields even when the superblock is invalid\n"
"  -j, --json      print one JSON object instead of text\n"
"  -h, --help      show this help and exit\n"
"  -V, --version   show the version and exit\n"
"\n"
"Exit status: 0 valid, 1 usage, 2 I/O error, 3 no hcache superblock,\n"
"4 invalid superblock (bad checksum or field).\n",
		hc_prog);
}

static void label_str(const struct hc_sb_disk *d, char *buf)
{
	memcpy(buf, d->label, HC_LABEL_SIZE);
	buf[HC_LABEL_SIZE] = '\0';
}

/* A cache's csum_type by name; "unknown (N)" for a value not known. */
static void csum_type_str(const struct hc_sb_disk *d, char *buf, size_t len)
{
	u32 type = le32_to_cpu(d->cache.csum_type);
	const char *name = hc_csum_name(type);

	if (strcmp(name, "unknown"))
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "unknown (%u)", type);
}

/* The settings the superblock keeps (HC_FEAT_COMPAT_TUNABLES): their bits. */
static u32 hc_sb_tunables(const struct hc_sb_disk *d, u32 kind)
{
	if (!(le64_to_cpu(d->compat) & HC_FEAT_COMPAT_TUNABLES))
		return 0;
	if (kind == HC_KIND_CACHE)
		return le32_to_cpu(d->cache.tunables) & HC_CACHE_TUNE_KNOWN;
	if (kind == HC_KIND_BACKING)
		return le32_to_cpu(d->backing.tunables) & HC_BDEV_TUNE_KNOWN;
	return 0;
}

static void show_text(const struct hc_show *s)
{
	const struct hc_sb_disk *d = s->d;
	u32 kind = le32_to_cpu(d->kind), tune;
	u64 flags = le64_to_cpu(d->flags);
	u32 csum = le32_to_cpu(d->csum);
	char dev[37], set[37], label[HC_LABEL_SIZE + 1], csum_type[24];

	hc_uuid_str(d->dev_uuid, dev);
	hc_uuid_str(d->set_uuid, set);
	label_str(d, label);
	csum_type_str(d, csum_type, sizeof(csum_type));
	tune = hc_sb_tunables(d, kind);

	printf("device\t\t\t%s\n", s->path);
	printf("sb.magic\t\t0x%016llx [%s]\n", le64_to_cpu(d->magic),
	       le64_to_cpu(d->magic) == HC_SB_MAGIC ? "match" : "BAD");
	printf("sb.csum\t\t\t0x%08x [%s]\n", csum,
	       csum == s->csum_expected ? "match" : "BAD");
	if (csum != s->csum_expected)
		printf("sb.csum_expected\t0x%08x\n", s->csum_expected);
	printf("sb.version\t\t%u\n", le32_to_cpu(d->version));
	printf("sb.compat\t\t0x%016llx\n", le64_to_cpu(d->compat));
	printf("sb.ro_compat\t\t0x%016llx%s\n", le64_to_cpu(d->ro_compat),
	       s->read_only ? " [unknown bits: read only]" : "");
	printf("sb.incompat\t\t0x%016llx%s%s%s\n", le64_to_cpu(d->incompat),
	       le64_to_cpu(d->incompat) & HC_FEAT_INCOMPAT_RETIRED_DRAFT ?
	       " [retired-draft]" : "",
	       le64_to_cpu(d->incompat) & HC_FEAT_INCOMPAT_EMPTY_MARKS ?
	       " [empty-marks]" : "",
	       le64_to_cpu(d->incompat) & HC_FEAT_INCOMPAT_DATA_CSUM ?
	       " [data-csum]" : "");
	printf("sb.seq\t\t\t%llu\n", le64_to_cpu(d->seq));
	printf("sb.sector\t\t%llu\n", le64_to_cpu(d->sb_sector));
	printf("sb.kind\t\t\t%u [%s]\n", kind, hc_kind_name(kind));
	printf("sb.flags\t\t0x%016llx\n", flags);
	printf("dev.uuid\t\t%s\n", dev);
	printf("dev.label\t\t%s\n", label);
	printf("dev.block_size\t\t%u\n", le32_to_cpu(d->block_size));
	printf("cset.uuid\t\t%s\n", set);
	if (kind == HC_KIND_CACHE) {
		printf("cache.nbuckets\t\t%llu\n",
		       le64_to_cpu(d->cache.nbuckets));
		printf("cache.bucket_size\t%u\n",
		       le32_to_cpu(d->cache.bucket_size));
		printf("cache.first_bucket\t%llu\n",
		       le64_to_cpu(d->cache.first_bucket));
		printf("cache.journal_start\t%llu\n",
		       le64_to_cpu(d->cache.journal_start));
		printf("cache.journal_buckets\t%u\n",
		       le32_to_cpu(d->cache.journal_buckets));
		printf("cache.csum_type\t\t%s\n", csum_type);
		printf("cache.csum_start\t%llu\n",
		       le64_to_cpu(d->cache.csum_start));
		printf("cache.csum_buckets\t%u\n",
		       le32_to_cpu(d->cache.csum_buckets));
		printf("cache.replacement\t%s\n",
		       hc_repl_name(flags & HC_CACHE_REPL_MASK));
		printf("cache.discard\t\t%s\n",
		       flags & HC_CACHE_DISCARD ? "yes" : "no");
		printf("cache.clean\t\t%s\n",
		       flags & HC_CACHE_CLEAN ? "yes" : "no");
		if (tune & HC_CACHE_TUNE_IO_ERROR_LIMIT)
			printf("cache.io_error_limit\t%u\n",
			       le32_to_cpu(d->cache.io_error_limit));
		if (tune & HC_CACHE_TUNE_IO_ERROR_HALFLIFE)
			printf("cache.io_error_halflife\t%u\n",
			       le32_to_cpu(d->cache.io_error_halflife));
		if (le64_to_cpu(d->incompat) & HC_FEAT_INCOMPAT_EMPTY_MARKS)
			printf("cache.clean_journal\tentry %llu, ring bucket %u, offset %u\n",
			       le64_to_cpu(d->cache.clean_journal_seq),
			       le32_to_cpu(d->cache.clean_journal_bucket),
			       le32_to_cpu(d->cache.clean_journal_offset));
	} else if (kind == HC_KIND_BACKING) {
		printf("backing.data_offset\t%llu\n",
		       le64_to_cpu(d->backing.data_offset));
		printf("backing.inval_gen\t%u\n",
		       le32_to_cpu(d->backing.inval_gen));
		printf("backing.cache_mode\t%s\n",
		       hc_mode_name(flags & HC_BDEV_MODE_MASK));
		printf("backing.state\t\t%s\n",
		       hc_state_name((flags & HC_BDEV_STATE_MASK) >>
				     HC_BDEV_STATE_SHIFT));
		if (tune & HC_BDEV_TUNE_WRITEBACK_PERCENT)
			printf("backing.writeback_percent\t%u\n",
			       le32_to_cpu(d->backing.writeback_percent));
		if (tune & HC_BDEV_TUNE_SEQUENTIAL_CUTOFF)
			printf("backing.sequential_cutoff\t%llu\n",
			       le64_to_cpu(d->backing.sequential_cutoff));
		if (tune & HC_BDEV_TUNE_ADMISSION_POLICY)
			printf("backing.admission_policy\t%u\n",
			       d->backing.admission_policy);
		if (tune & HC_BDEV_TUNE_STOP_WHEN_FAILED)
			printf("backing.stop_when_failed\t%u\n",
			       d->backing.stop_when_failed);
	}
	printf("valid\t\t\t%s\n", s->err ? s->err : "yes");
}

static void json_u64(const char *key, u64 v, bool comma)
{
	printf("  \"%s\": %llu%s\n", key, v, comma ? "," : "");
}

static void json_str(const char *key, const char *v, bool comma)
{
	printf("  \"%s\": ", key);
	hc_json_str(stdout, v);
	printf("%s\n", comma ? "," : "");
}

static void json_bool(const char *key, bool v, bool comma)
{
	printf("  \"%s\": %s%s\n", key, v ? "true" : "false", comma ? "," : "");
}

static void json_hex(const char *key, u64 v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%016llx", v);
	json_str(key, buf, true);
}

static void show_json(const struct hc_show *s)
{
	const struct hc_sb_disk *d = s->d;
	u32 kind = le32_to_cpu(d->kind), tune;
	u64 flags = le64_to_cpu(d->flags);
	char dev[37], set[37], label[HC_LABEL_SIZE + 1], buf[16];
	char csum_type[24];

	hc_uuid_str(d->dev_uuid, dev);
	hc_uuid_str(d->set_uuid, set);
	label_str(d, label);
	csum_type_str(d, csum_type, sizeof(csum_type));
	tune = hc_sb_tunables(d, kind);

	printf("{\n");
	json_str("device", s->path, true);
	json_hex("magic", le64_to_cpu(d->magic));
	json_bool("magic_ok", le64_to_cpu(d->magic) == HC_SB_MAGIC, true);
	snprintf(buf, sizeof(buf), "0x%08x", le32_to_cpu(d->csum));
	json_str("csum", buf, true);
	snprintf(buf, sizeof(buf), "0x%08x", s->csum_expected);
	json_str("csum_expected", buf, true);
	json_bool("csum_ok", le32_to_cpu(d->csum) == s->csum_expected, true);
	json_u64("version", le32_to_cpu(d->version), true);
	json_hex("compat", le64_to_cpu(d->compat));
	json_hex("ro_compat", le64_to_cpu(d->ro_compat));
	json_hex("incompat", le64_to_cpu(d->incompat));
	json_bool("read_only", s->read_only, true);
	json_u64("seq", le64_to_cpu(d->seq), true);
	json_u64("sb_sector", le64_to_cpu(d->sb_sector), true);
	json_str("kind", hc_kind_name(kind), true);
	json_hex("flags", flags);
	json_str("dev_uuid", dev, true);
	json_str("label", label, true);
	json_u64("block_size", le32_to_cpu(d->block_size), true);
	json_str("cset_uuid", set, true);
	if (kind == HC_KIND_CACHE) {
		json_u64("nbuckets", le64_to_cpu(d->cache.nbuckets), true);
		json_u64("bucket_size", le32_to_cpu(d->cache.bucket_size), true);
		json_u64("first_bucket", le64_to_cpu(d->cache.first_bucket),
			 true);
		json_u64("journal_start", le64_to_cpu(d->cache.journal_start),
			 true);
		json_u64("journal_buckets",
			 le32_to_cpu(d->cache.journal_buckets), true);
		json_str("csum_type", csum_type, true);
		json_u64("csum_start", le64_to_cpu(d->cache.csum_start), true);
		json_u64("csum_buckets", le32_to_cpu(d->cache.csum_buckets),
			 true);
		json_str("replacement", hc_repl_name(flags & HC_CACHE_REPL_MASK),
			 true);
		json_bool("discard", flags & HC_CACHE_DISCARD, true);
		json_bool("clean", flags & HC_CACHE_CLEAN, true);
		if (tune & HC_CACHE_TUNE_IO_ERROR_LIMIT)
			json_u64("io_error_limit",
				 le32_to_cpu(d->cache.io_error_limit), true);
		if (tune & HC_CACHE_TUNE_IO_ERROR_HALFLIFE)
			json_u64("io_error_halflife",
				 le32_to_cpu(d->cache.io_error_halflife), true);
		if (le64_to_cpu(d->incompat) & HC_FEAT_INCOMPAT_EMPTY_MARKS) {
			json_u64("clean_journal_seq",
				 le64_to_cpu(d->cache.clean_journal_seq), true);
			json_u64("clean_journal_bucket",
				 le32_to_cpu(d->cache.clean_journal_bucket),
				 true);
			json_u64("clean_journal_offset",
				 le32_to_cpu(d->cache.clean_journal_offset),
				 true);
		}
	} else if (kind == HC_KIND_BACKING) {
		json_u64("data_offset", le64_to_cpu(d->backing.data_offset),
			 true);
		json_u64("inval_gen", le32_to_cpu(d->backing.inval_gen), true);
		json_str("cache_mode", hc_mode_name(flags & HC_BDEV_MODE_MASK),
			 true);
		json_str("state", hc_state_name((flags & HC_BDEV_STATE_MASK) >>
						HC_BDEV_STATE_SHIFT), true);
		if (tune & HC_BDEV_TUNE_WRITEBACK_PERCENT)
			json_u64("writeback_percent",
				 le32_to_cpu(d->backing.writeback_percent), true);
		if (tune & HC_BDEV_TUNE_SEQUENTIAL_CUTOFF)
			json_u64("sequential_cutoff",
				 le64_to_cpu(d->backing.sequential_cutoff), true);
		if (tune & HC_BDEV_TUNE_ADMISSION_POLICY)
			json_u64("admission_policy",
				 d->backing.admission_policy, true);
		if (tune & HC_BDEV_TUNE_STOP_WHEN_FAILED)
			json_u64("stop_when_failed",
				 d->backing.stop_when_failed, true);
	}
	json_bool("valid", !s->err, true);
	if (s->err)
		json_str("error", s->err, false);
	else
		printf("  \"error\": null\n");
	printf("}\n");
}

static const struct option long_opts[] = {
	{ "force",	no_argument, NULL, 'f' },
	{ "json",	no_argument, NULL, 'j' },
	{ "help",	no_argument, NULL, 'h' },
	{ "version",	no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	bool force = false, json = false;
	struct hc_sb_disk d;
	struct hc_show s = { .d = &d };
	struct hc_sb sb;
	int c, fd;

	hc_prog = "hcache-super-show";
	while ((c = getopt_long(argc, argv, "fjhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = true;
			break;
		case 'j':
			json = true;
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
	s.path = argv[optind];

	fd = open(s.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		hc_warn("%s: cannot open: %s", s.path, strerror(errno));
		return EX_IO;
	}
	if (hc_read_sb(fd, &d)) {
		int err = errno;

		close(fd);
		/* A short read: too small to hold any superblock. */
		if (err == ENODATA) {
			hc_warn("%s: no hcache superblock (smaller than %u bytes)",
				s.path, HC_SB_END);
			return EX_NOT_HCACHE;
		}
		hc_warn("%s: cannot read the superblock: %s", s.path,
			strerror(err));
		return EX_IO;
	}
	close(fd);

	s.csum_expected = hc_sb_csum(&d);
	hc_sb_decode(&d, sizeof(d), &sb, &s.err);
	s.read_only = !s.err && sb.read_only;
	if (le64_to_cpu(d.magic) != HC_SB_MAGIC && !force) {
		hc_warn("%s: no hcache superblock (use -f to show anyway)",
			s.path);
		return EX_NOT_HCACHE;
	}
	if (s.err && !force) {
		hc_warn("%s: invalid hcache superblock: %s (use -f to show anyway)",
			s.path, s.err);
		return EX_INVALID;
	}
	if (json)
		show_json(&s);
	else
		show_text(&s);
	if (le64_to_cpu(d.magic) != HC_SB_MAGIC)
		return EX_NOT_HCACHE;
	return s.err ? EX_INVALID : EX_OK;
}
