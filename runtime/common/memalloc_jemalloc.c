/* memalloc_jemalloc.c: jemalloc's settings and figures (mallctl) for memacct.c; linked
 * when configure --malloc=jemalloc (the default). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <jemalloc/jemalloc.h>

#include "memalloc.h"

#define JE_ALL_ARENAS "4096"  /* MALLCTL_ARENAS_ALL, as text for the mallctl names */

/* jemalloc reads this once, at its first allocation (before main), and MALLOC_CONF in the
 * environment overrides it, so FL_MALLOC=default cannot undo it. jemalloc 5.3 gives its
 * 4 KiB class one region per one-page slab and its 8 KiB class one per two pages: the
 * leaf's libevent buffers (4 KiB chains, about 7,000 a second) then took a slab each, and
 * every thread-cache refill or flush went to the arena for 8 of them (about 16,000
 * instructions a refill; jemalloc and libm 8.9% of the leaf's Ir under callgrind). Eight
 * pages a slab make that 8 and 4 regions: 3.1% (README "Validation", seventeenth
 * session). The cost is up to 7 idle regions per class, thread cache and arena. The
 * name is jemalloc's API. */
const char *malloc_conf = "slab_sizes:4096-8192:8";

void fl_malloc_name(struct fl_mem_tuning *t)
{
	t->allocator = "jemalloc";
}

static int je_set(const char *name, void *v, size_t len, struct fl_mem_tuning *t)
{
	int err = mallctl(name, NULL, NULL, v, len);

	if (err != 0)
		snprintf(t->why, sizeof(t->why), "mallctl %s refused (%s)", name, strerror(err));
	return err == 0 ? 0 : -1;
}

/* Whether arena i exists: 1 or 0; -1 when jemalloc refuses the question. */
static int je_arena_initialized(unsigned i)
{
	char name[48];
	bool init = false;
	size_t l = sizeof(init);

	snprintf(name, sizeof(name), "arena.%u.initialized", i);
	if (mallctl(name, &init, &l, NULL, 0) != 0)
		return -1;
	return init;
}

/* Set the decay of every arena that exists already (the main thread's): the defaults
 * in arenas.*_decay_ms reach only arenas made later. arena.<MALLCTL_ARENAS_ALL> is
 * refused for these two settings, so one arena at a time. */
static int je_decay_existing(ssize_t dirty, ssize_t muzzy, struct fl_mem_tuning *t)
{
	unsigned narenas = 0;
	size_t l = sizeof(narenas);

	if (mallctl("arenas.narenas", &narenas, &l, NULL, 0) != 0) {
		snprintf(t->why, sizeof(t->why), "mallctl arenas.narenas refused");
		return -1;
	}
	for (unsigned i = 0; i < narenas; i++) {
		char name[48];

		if (je_arena_initialized(i) != 1)
			continue;
		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		if (je_set(name, &dirty, sizeof(dirty), t) != 0)
			return -1;
		snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", i);
		if (je_set(name, &muzzy, sizeof(muzzy), t) != 0)
			return -1;
	}
	return 0;
}

/* Freed pages are purged once they have been dirty for about FL_MEM_DECAY_MS, straight to
 * the OS (no muzzy stage: the soak judges RSS, which lazily freed pages still count in),
 * by jemalloc's background threads rather than by the threads serving requests.
 * Measured here (tests/test_memacct): a 2 or 4 MiB buffer freed and allocated again
 * comes back without a page fault; one of 8 MiB or more (opt.oversize_threshold, and
 * with a decay set on its arena too) is purged on free and faults every page again, as
 * every buffer of 1 MiB and up does with glibc's fixed threshold. */
int fl_malloc_setup(struct fl_mem_tuning *t)
{
	ssize_t dirty = FL_MEM_DECAY_MS, muzzy = 0;
	bool bg = true;

	fl_malloc_name(t);
	if (je_set("background_thread", &bg, sizeof(bg), t) != 0 ||
	    je_set("arenas.dirty_decay_ms", &dirty, sizeof(dirty), t) != 0 ||
	    je_set("arenas.muzzy_decay_ms", &muzzy, sizeof(muzzy), t) != 0 ||
	    je_decay_existing(dirty, muzzy, t) != 0)
		return -1;
	t->decay_ms = FL_MEM_DECAY_MS;
	return 0;
}

/* A mallctl figure of type size_t, or -1 when refused. */
static long long je_size(const char *name)
{
	size_t v = 0, l = sizeof(v);

	return mallctl(name, &v, &l, NULL, 0) == 0 ? (long long)v : -1;
}

/* A mallctl counter of type uint64_t, or -1 when refused. */
static long long je_u64(const char *name)
{
	uint64_t v = 0;
	size_t l = sizeof(v);

	return mallctl(name, &v, &l, NULL, 0) == 0 ? (long long)v : -1;
}

static json_t *je_num(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* Arenas initialized so far, of the opt.narenas jemalloc may use; -1 when refused. */
static int je_arenas_used(unsigned narenas)
{
	int n = 0;

	for (unsigned i = 0; i < narenas; i++) {
		int init = je_arena_initialized(i);

		if (init < 0)
			return -1;
		n += init;
	}
	return n;
}

/* Regions per slab of the small size class of size bytes, as jemalloc laid it out (the
 * malloc_conf above, or MALLOC_CONF); -1 when no class has that size or it is refused. */
static long long je_bin_regions(size_t size)
{
	unsigned nbins = 0;
	size_t l = sizeof(nbins);

	if (mallctl("arenas.nbins", &nbins, &l, NULL, 0) != 0)
		return -1;
	for (unsigned i = 0; i < nbins; i++) {
		char name[48];
		size_t sz = 0;
		uint32_t nregs = 0;

		snprintf(name, sizeof(name), "arenas.bin.%u.size", i);
		l = sizeof(sz);
		if (mallctl(name, &sz, &l, NULL, 0) != 0)
			return -1;
		if (sz != size)
			continue;
		snprintf(name, sizeof(name), "arenas.bin.%u.nregs", i);
		l = sizeof(nregs);
		return mallctl(name, &nregs, &l, NULL, 0) == 0 ? (long long)nregs : -1;
	}
	return -1;
}

/* Pages as bytes; -1 stays -1. */
static long long je_pages(long long pages)
{
	return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

void fl_malloc_json(json_t *o, const struct fl_mem_tuning *t)
{
	const char *version = NULL;
	unsigned narenas = 0;
	uint64_t epoch = 1;
	ssize_t decay = 0;
	bool bg = false;
	size_t l;

	(void)t;
	/* The stats are a snapshot taken at each epoch: refresh it first. */
	mallctl("epoch", NULL, NULL, &epoch, sizeof(epoch));
	l = sizeof(version);
	json_object_set_new(o, "version", mallctl("version", (void *)&version, &l, NULL, 0) == 0 ?
		json_string(version) : json_null());
	l = sizeof(decay);
	json_object_set_new(o, "dirty_decay_ms",
		mallctl("arenas.dirty_decay_ms", &decay, &l, NULL, 0) == 0 ?
		json_integer(decay) : json_null());
	l = sizeof(bg);
	json_object_set_new(o, "background_thread",
		mallctl("background_thread", &bg, &l, NULL, 0) == 0 ? json_boolean(bg) :
		json_null());
	l = sizeof(narenas);
	if (mallctl("opt.narenas", &narenas, &l, NULL, 0) == 0) {
		json_object_set_new(o, "arena_max", json_integer(narenas));
		json_object_set_new(o, "arenas", je_num(je_arenas_used(narenas)));
	} else {
		json_object_set_new(o, "arena_max", json_null());
		json_object_set_new(o, "arenas", json_null());
	}
	json_object_set_new(o, "malloc_conf", json_string(malloc_conf));
	json_object_set_new(o, "regions_per_slab_4KiB", je_num(je_bin_regions(4096)));
	json_object_set_new(o, "regions_per_slab_8KiB", je_num(je_bin_regions(8192)));
	json_object_set_new(o, "allocated_bytes", je_num(je_size("stats.allocated")));
	json_object_set_new(o, "active_bytes", je_num(je_size("stats.active")));
	json_object_set_new(o, "resident_bytes", je_num(je_size("stats.resident")));
	json_object_set_new(o, "mapped_bytes", je_num(je_size("stats.mapped")));
	json_object_set_new(o, "retained_bytes", je_num(je_size("stats.retained")));
	json_object_set_new(o, "dirty_bytes",
		je_num(je_pages(je_size("stats.arenas." JE_ALL_ARENAS ".pdirty"))));
	json_object_set_new(o, "purged_bytes",
		je_num(je_pages(je_u64("stats.arenas." JE_ALL_ARENAS ".dirty_purged"))));
}
