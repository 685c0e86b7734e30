// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count.c: a QEMU TCG plugin that counts the guest instructions run
 * at each address, between two marker files, for make bench-profile.
 *
 * Sampling the guest's instruction pointer from the host (rip-sample.py)
 * weighs code by the host time TCG spends on it, which favours MMIO exits
 * and the places where TCG lets the monitor in. This counts instead:
 * every translated block gets an inline add of its length to a counter
 * kept for its start address, so the figures are the guest's own
 * instructions, exact up to a block left early by an exception.
 *
 *   -plugin build/insn-count.so,dir=DIR,out=FILE
 *
 * A thread polls DIR for sample-start (the counters are read as they
 * stand then) and sample-stop (they are read again and the difference
 * written to FILE, one "ADDRESS INSTRUCTIONS" line per block start that
 * ran, then the thread ends). rip-sample.py insns FILE KALLSYMS sums them
 * per function.
 *
 * Built against QEMU's plugin API version 1 (QEMU 7.2): the few entry
 * points it uses are declared here, so that no QEMU header is needed.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORTED __attribute__((visibility("default")))

/* The plugin API, version 1 (include/qemu/qemu-plugin.h in QEMU 7.2). */
typedef uint64_t plugin_id_t;
struct plugin_info;		/* not read */
struct qemu_plugin_tb;		/* opaque */
enum plugin_op { PLUGIN_INLINE_ADD_U64 };
void qemu_plugin_register_vcpu_tb_trans_cb(plugin_id_t id,
		void (*cb)(plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
		enum plugin_op op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

EXPORTED int qemu_plugin_version = 1;

/*
 * One counter per block start. A block translated again (its code
 * flushed, or cut at another length) adds to the same counter. Counters
 * never move once made: the translated code holds their address.
 */
struct block {
	uint64_t vaddr;
	uint64_t insns;		/* added to by the guest's code, racily */
	uint64_t at_start;	/* insns when sample-start appeared */
	struct block *next;	/* in its hash chain */
};

#define HASH_BITS	20
#define CHUNK		4096

static struct block *table[1U << HASH_BITS];
static struct block *chunk;
static unsigned int chunk_used = CHUNK;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block **all;	/* every block, for the snapshots */
static size_t nr_all, max_all;
static const char *dir, *out;

static unsigned int hash(uint64_t vaddr)
{
	return (unsigned int)((vaddr * 0x9e3779b97f4a7c15ULL) >>
			      (64 - HASH_BITS));
}

static struct block *block_get(uint64_t vaddr)
{
	struct block **slot = &table[hash(vaddr)], *b;

	for (b = *slot; b; b = b->next)
		if (b->vaddr == vaddr)
			return b;
	if (chunk_used == CHUNK) {
		chunk = calloc(CHUNK, sizeof(*chunk));
		if (!chunk)
			abort();
		chunk_used = 0;
	}
	if (nr_all == max_all) {
		max_all = max_all ? 2 * max_all : CHUNK;
		all = realloc(all, max_all * sizeof(*all));
		if (!all)
			abort();
	}
	b = &chunk[chunk_used++];
	b->vaddr = vaddr;
	b->next = *slot;
	*slot = b;
	all[nr_all++] = b;
	return b;
}

static void tb_trans(plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b;

	(void)id;
	pthread_mutex_lock(&table_lock);
	b = block_get(qemu_plugin_tb_vaddr(tb));
	pthread_mutex_unlock(&table_lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, PLUGIN_INLINE_ADD_U64,
						 &b->insns,
						 qemu_plugin_tb_n_insns(tb));
}

static bool marker(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void *watch(void *arg)
{
	size_t i;
	FILE *f;

	(void)arg;
	while (!marker("sample-start"))
		usleep(20000);
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < nr_all; i++)
		all[i]->at_start = __atomic_load_n(&all[i]->insns,
						   __ATOMIC_RELAXED);
	pthread_mutex_unlock(&table_lock);
	while (!marker("sample-stop"))
		usleep(20000);
	f = fopen(out, "w");
	if (!f) {
		perror(out);
		return NULL;
	}
	pthread_mutex_lock(&table_lock);
	/* A block first made after sample-start has at_start 0. */
	for (i = 0; i < nr_all; i++) {
		uint64_t n = __atomic_load_n(&all[i]->insns, __ATOMIC_RELAXED);

		if (n != all[i]->at_start)
			fprintf(f, "%llx %llu\n",
				(unsigned long long)all[i]->vaddr,
				(unsigned long long)(n - all[i]->at_start));
	}
	pthread_mutex_unlock(&table_lock);
	fclose(f);
	return NULL;
}

EXPORTED int qemu_plugin_install(plugin_id_t id,
				 const struct plugin_info *info,
				 int argc, char **argv)
{
	pthread_t thread;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "dir=", 4))
			dir = argv[i] + 4;
		else if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	}
	if (!dir || !out) {
		fprintf(stderr, "insn-count: needs dir= and out=\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	if (pthread_create(&thread, NULL, watch, NULL))
		return -1;
	pthread_detach(thread);
	return 0;
}
