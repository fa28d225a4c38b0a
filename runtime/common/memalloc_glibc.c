/* memalloc_glibc.c: glibc malloc's settings (mallopt) and figures (mallinfo2, malloc_info)
 * for memacct.c; linked when configure --malloc=glibc (and in the sanitizer builds). */
#define _GNU_SOURCE
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "memalloc.h"

void fl_malloc_name(struct fl_mem_tuning *t)
{
	t->allocator = "glibc";
}

/* mallopt(M_MMAP_THRESHOLD) also turns off glibc's dynamic threshold (and trim
 * threshold) adjustment, which is the point. */
int fl_malloc_setup(struct fl_mem_tuning *t)
{
	fl_malloc_name(t);
	if (mallopt(M_MMAP_THRESHOLD, (int)FL_MEM_MMAP_THRESHOLD) != 1 ||
	    mallopt(M_ARENA_MAX, FL_MEM_ARENA_MAX) != 1) {
		snprintf(t->why, sizeof(t->why), "mallopt refused");
		return -1;
	}
	t->mmap_threshold = FL_MEM_MMAP_THRESHOLD;
	t->arena_max = FL_MEM_ARENA_MAX;
	return 0;
}

/* Arenas in use: the "<heap nr=" elements of malloc_info's XML; -1 when unreadable. */
static int glibc_arenas(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int n = 0;

	if (f == NULL)
		return -1;
	if (malloc_info(0, f) != 0 || fclose(f) != 0) {
		free(buf);
		return -1;
	}
	for (const char *p = buf; (p = strstr(p, "<heap nr=")) != NULL; p++)
		n++;
	free(buf);
	return n > 0 ? n : -1;
}

static json_t *glibc_num(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

void fl_malloc_json(json_t *o, const struct fl_mem_tuning *t)
{
	struct mallinfo2 mi = mallinfo2();

	json_object_set_new(o, "version", json_string(gnu_get_libc_version()));
	json_object_set_new(o, "mmap_threshold_bytes", t->on ?
		glibc_num((long long)t->mmap_threshold) : json_null());
	json_object_set_new(o, "arena_max", t->on ? glibc_num(t->arena_max) : json_null());
	json_object_set_new(o, "arenas", glibc_num(glibc_arenas()));
	json_object_set_new(o, "heap_bytes", glibc_num((long long)mi.arena));
	json_object_set_new(o, "heap_in_use_bytes", glibc_num((long long)mi.uordblks));
	json_object_set_new(o, "heap_free_bytes", glibc_num((long long)mi.fordblks));
	json_object_set_new(o, "top_releasable_bytes", glibc_num((long long)mi.keepcost));
	json_object_set_new(o, "mmapped_bytes", glibc_num((long long)mi.hblkhd));
	json_object_set_new(o, "mmapped_chunks", glibc_num((long long)mi.hblks));
}
