/* memacct.c: allocator settings (mallopt) and the memory stats object. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "memacct.h"

static struct fl_mem_tuning mem_tuning = { .keep_bytes = SIZE_MAX };

static void mem_off(const char *why)
{
	mem_tuning.on = 0;
	mem_tuning.mmap_threshold = 0;
	mem_tuning.arena_max = 0;
	mem_tuning.keep_bytes = SIZE_MAX;
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
	    mallopt(M_ARENA_MAX, FL_MEM_ARENA_MAX) != 1) {
		mem_off("mallopt refused");
		return;
	}
	mem_tuning.on = 1;
	mem_tuning.mmap_threshold = FL_MEM_MMAP_THRESHOLD;
	mem_tuning.arena_max = FL_MEM_ARENA_MAX;
	mem_tuning.keep_bytes = FL_MEM_SCRATCH_KEEP;
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

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "tuning", json_string(t->on ? "frontload" : "glibc default"));
	json_object_set_new(o, "why_default", t->on ? json_null() : json_string(t->why));
	json_object_set_new(o, "mmap_threshold_bytes", t->on ? mem_num((int64_t)t->mmap_threshold) :
		json_null());
	json_object_set_new(o, "arena_max", t->on ? mem_num(t->arena_max) : json_null());
	json_object_set_new(o, "scratch_keep_bytes", t->on ? mem_num((int64_t)t->keep_bytes) :
		json_null());
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
