/* memacct.c: the allocator's settings (through memalloc.h) and the memory stats object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "memacct.h"
#include "memalloc.h"

static struct fl_mem_tuning mem_tuning = { .allocator = "", .decay_ms = -1,
	.keep_bytes = SIZE_MAX };

static void mem_off(const char *why)
{
	mem_tuning.on = 0;
	mem_tuning.mmap_threshold = 0;
	mem_tuning.arena_max = 0;
	mem_tuning.decay_ms = -1;
	mem_tuning.keep_bytes = SIZE_MAX;
	if (why != NULL)
		snprintf(mem_tuning.why, sizeof(mem_tuning.why), "%s", why);
}

void fl_mem_tune(void)
{
	const char *env = getenv("FL_MALLOC");

	if (env != NULL && strcmp(env, "default") == 0) {
		fl_malloc_name(&mem_tuning);
		mem_off("FL_MALLOC=default");
		return;
	}
	if (fl_malloc_setup(&mem_tuning) != 0) {
		mem_off(NULL);  /* fl_malloc_setup wrote why */
		return;
	}
	mem_tuning.on = 1;
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
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "name", json_string(t->allocator));
	json_object_set_new(o, "tuning", json_string(t->on ? "frontload" : "allocator default"));
	json_object_set_new(o, "why_default", t->on ? json_null() : json_string(t->why));
	json_object_set_new(o, "scratch_keep_bytes", t->on ? mem_num((int64_t)t->keep_bytes) :
		json_null());
	fl_malloc_json(o, t);
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
