/* gen_alloc.h: forced (-include) into the generator's sources in the pattern fuzz build only. */
#ifndef FL_FUZZ_GEN_ALLOC_H
#define FL_FUZZ_GEN_ALLOC_H

/* The generator never frees its pattern model and bails out through fatal(), so a fuzz
 * input would leak whatever it built. Its allocations go to fuzz_pattern.c's tracker
 * instead, which frees what an input left and bounds memory and steps. The system
 * headers come first, so their prototypes keep the real names. */
#include <stdlib.h>
#include <string.h>

void *fz_malloc(size_t n);
void *fz_calloc(size_t n, size_t size);
void *fz_realloc(void *p, size_t n);
void fz_free(void *p);

#define malloc fz_malloc
#define calloc fz_calloc
#define realloc fz_realloc
#define free fz_free

#endif
