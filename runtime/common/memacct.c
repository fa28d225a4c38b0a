/* memacct.c: allocator settings (mallopt) and the memory stats object. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clock.h"
#include "memacct.h"

static struct fl_mem_tuning mem_tuning = { .keep_bytes = SIZE_MAX };

/* The release thread's counts: written by it, read by the stats (relaxed atomics). */
static struct {
	uint64_t calls;   /* malloc_trim(0) calls */
	uint64_t freed;   /* calls that gave memory back to the system */
	uint64_t ns;      /* wall time spent in them */
	uint64_t last_ns; /* the last one's */
	uint64_t gap_ms;  /* the gap now */
} mem_release;

unsigned fl_mem_release_gap_ms(uint64_t last_ns)
{
	uint64_t ms = last_ns / 1000000u * FL_MEM_RELEASE_COST_X;

	if (ms < FL_MEM_RELEASE_MS)
		return FL_MEM_RELEASE_MS;
	return ms > FL_MEM_RELEASE_MAX_MS ? FL_MEM_RELEASE_MAX_MS : (unsigned)ms;
}

/* Give the arenas' free pages back, paced by the calls' own cost: between two calls freed
 * memory is reused without a page fault, and RSS stays within one gap's churn of what is
 * in use. */
static void *mem_release_main(void *arg)
{
	unsigned gap = FL_MEM_RELEASE_MS;

	(void)arg;
	for (;;) {
		struct timespec ts = { gap / 1000, (long)(gap % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		uint64_t t0 = fl_mono_ns();
		int freed = malloc_trim(0);
		uint64_t took = fl_mono_ns() - t0;

		gap = fl_mem_release_gap_ms(took);
		__atomic_add_fetch(&mem_release.ns, took, __ATOMIC_RELAXED);
		__atomic_store_n(&mem_release.last_ns, took, __ATOMIC_RELAXED);
		__atomic_store_n(&mem_release.gap_ms, gap, __ATOMIC_RELAXED);
		__atomic_add_fetch(&mem_release.calls, 1, __ATOMIC_RELAXED);
		if (freed)
			__atomic_add_fetch(&mem_release.freed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Detached, and created with every signal blocked: the servers take their signals in
 * main with sigtimedwait, which needs every other thread to block them. */
static int mem_release_start(void)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t tid;
	int rc;

	if (pthread_attr_init(&at) != 0)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
		pthread_create(&tid, &at, mem_release_main, NULL) == 0 ? 0 : -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return rc;
}

static void mem_off(const char *why)
{
	mem_tuning.on = 0;
	mem_tuning.mmap_threshold = 0;
	mem_tuning.arena_max = 0;
	mem_tuning.keep_bytes = SIZE_MAX;
	mem_tuning.release_ms = 0;
	snprintf(mem_tuning.why, sizeof(mem_tuning.why), "%s", why);
}

/* mallopt(M_MMAP_THRESHOLD) also turns off glibc's dynamic threshold (and trim
 * threshold) adjustment, which is the point. */
void fl_mem_tune(void)
{
	const char *env = getenv("FL_MALLOC");

	if (env != NULL && strcmp(env, "default") == 0) {
		mem_off("FL_MALLOC=default");
		return;
	}
	if (mallopt(M_MMAP_THRESHOLD, (int)FL_MEM_MMAP_THRESHOLD) != 1 ||
	    mallopt(M_TRIM_THRESHOLD, (int)FL_MEM_TRIM_THRESHOLD) != 1 ||
	    mallopt(M_ARENA_MAX, FL_MEM_ARENA_MAX) != 1) {
		mem_off("mallopt refused");
		return;
	}
	mem_tuning.on = 1;
	mem_tuning.mmap_threshold = FL_MEM_MMAP_THRESHOLD;
	mem_tuning.arena_max = FL_MEM_ARENA_MAX;
	mem_tuning.keep_bytes = FL_MEM_SCRATCH_KEEP;
	/* Not started (it never happens at startup in practice): the stats say so with a
	 * null interval, and the arenas keep their free pages. */
	mem_tuning.release_ms = mem_release_start() == 0 ? FL_MEM_RELEASE_MS : 0;
	mem_tuning.why[0] = '\0';
}

const struct fl_mem_tuning *fl_mem_tuning(void)
{
	return &mem_tuning;
}

size_t fl_mem_keep_bytes(void)
{
	return mem_tuning.keep_bytes;
}

int fl_mem_count_arenas(const char *xml)
{
	int n = 0;

	for (const char *p = xml; (p = strstr(p, "<heap nr=")) != NULL; p++)
		n++;
	return n > 0 ? n : -1;
}

static int mem_arenas(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int n = -1;

	if (f == NULL)
		return -1;
	if (malloc_info(0, f) == 0 && fclose(f) == 0)
		n = fl_mem_count_arenas(buf);
	else
		fclose(f);
	free(buf);
	return n;
}

/* VmRSS, RssAnon, RssFile of /proc/self/status in bytes; -1 each when absent. */
static void mem_rss(int64_t *rss, int64_t *anon, int64_t *file)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long long kb;

	*rss = *anon = *file = -1;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "VmRSS: %lld kB", &kb) == 1)
			*rss = kb * 1024;
		else if (sscanf(line, "RssAnon: %lld kB", &kb) == 1)
			*anon = kb * 1024;
		else if (sscanf(line, "RssFile: %lld kB", &kb) == 1)
			*file = kb * 1024;
	}
	fclose(f);
}

static json_t *mem_num(int64_t v)
{
	return v < 0 ? json_null() : json_integer((json_int_t)v);
}

static json_t *mem_allocator(void)
{
	const struct fl_mem_tuning *t = &mem_tuning;
	struct mallinfo2 mi = mallinfo2();
	json_t *o = json_object();
	int rel = t->on && t->release_ms > 0;  /* the release thread runs */
	uint64_t calls = __atomic_load_n(&mem_release.calls, __ATOMIC_RELAXED);

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "tuning", json_string(t->on ? "frontload" : "glibc default"));
	json_object_set_new(o, "why_default", t->on ? json_null() : json_string(t->why));
	json_object_set_new(o, "mmap_threshold_bytes", t->on ? mem_num((int64_t)t->mmap_threshold) :
		json_null());
	json_object_set_new(o, "arena_max", t->on ? mem_num(t->arena_max) : json_null());
	json_object_set_new(o, "scratch_keep_bytes", t->on ? mem_num((int64_t)t->keep_bytes) :
		json_null());
	json_object_set_new(o, "release_min_gap_ms", rel ? mem_num(t->release_ms) :
		json_null());
	json_object_set_new(o, "release_max_gap_ms", rel ?
		mem_num(FL_MEM_RELEASE_MAX_MS) : json_null());
	json_object_set_new(o, "release_gap_ms", rel && calls ?
		mem_num((int64_t)__atomic_load_n(&mem_release.gap_ms, __ATOMIC_RELAXED)) :
		json_null());
	json_object_set_new(o, "release_last_ms", rel && calls ?
		json_real((double)__atomic_load_n(&mem_release.last_ns, __ATOMIC_RELAXED) / 1e6) :
		json_null());
	json_object_set_new(o, "releases", rel ? mem_num((int64_t)calls) : json_null());
	json_object_set_new(o, "releases_freed", rel ? mem_num((int64_t)__atomic_load_n(
		&mem_release.freed, __ATOMIC_RELAXED)) : json_null());
	json_object_set_new(o, "release_ms_total", rel ? json_real((double)__atomic_load_n(
		&mem_release.ns, __ATOMIC_RELAXED) / 1e6) : json_null());
	json_object_set_new(o, "arenas", mem_num(mem_arenas()));
	json_object_set_new(o, "heap_bytes", mem_num((int64_t)mi.arena));
	json_object_set_new(o, "heap_in_use_bytes", mem_num((int64_t)mi.uordblks));
	json_object_set_new(o, "heap_free_bytes", mem_num((int64_t)mi.fordblks));
	json_object_set_new(o, "top_releasable_bytes", mem_num((int64_t)mi.keepcost));
	json_object_set_new(o, "mmapped_bytes", mem_num((int64_t)mi.hblkhd));
	json_object_set_new(o, "mmapped_chunks", mem_num((int64_t)mi.hblks));
	return o;
}

json_t *fl_mem_json(const struct fl_mem_owner *owners, size_t n)
{
	json_t *o = json_object(), *own = json_object();
	int64_t rss, anon, file;

	if (o == NULL || own == NULL) {
		json_decref(o);
		json_decref(own);
		return NULL;
	}
	mem_rss(&rss, &anon, &file);
	json_object_set_new(o, "rss_bytes", mem_num(rss));
	json_object_set_new(o, "rss_anon_bytes", mem_num(anon));
	json_object_set_new(o, "rss_file_bytes", mem_num(file));
	for (size_t i = 0; i < n; i++)
		json_object_set_new(own, owners[i].name, mem_num(owners[i].bytes));
	json_object_set_new(o, "owners", own);
	json_object_set_new(o, "allocator", mem_allocator());
	return o;
}
