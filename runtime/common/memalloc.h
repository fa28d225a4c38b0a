/* memalloc.h: what memacct.c asks of the allocator the servers link; one implementation
 * per allocator (memalloc_glibc.c, memalloc_jemalloc.c), chosen by configure --malloc. */
#ifndef FL_MEMALLOC_H
#define FL_MEMALLOC_H

#include "memacct.h"

struct json_t;

/* Name the allocator in t and apply its settings; on failure set nothing else and
 * return -1 with the reason in t->why. */
int fl_malloc_setup(struct fl_mem_tuning *t);
/* Name the allocator in t only (FL_MALLOC=default). */
void fl_malloc_name(struct fl_mem_tuning *t);
/* Add the allocator's settings in force and its figures to o (null: not measured). */
void fl_malloc_json(struct json_t *o, const struct fl_mem_tuning *t);

#endif
