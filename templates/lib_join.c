/* lib_join.c: fl_registry for the head of a library split over several shared objects
 * (configure --lib-parts, README "Past 2 GB of code").
 *
 * x86-64 code reaches its calls and constants with 32-bit PC-relative offsets, so one
 * shared object holds at most about 2 GB of text and data. Above that the generated
 * functions go into parts (libfrontload-extract-K.so, K = 1..FL_LIB_MAX_PARTS), each
 * with its own helpers and registry rows; the head (libfrontload-extract.so) names them
 * as DT_NEEDED, so one dlopen maps them all, and joins their rows here into the one
 * table every consumer reads. The order is the parts' order, the same order one object
 * linked from the same shards would give. */
#include <string.h>
#include <sys/mman.h>

#include "fl_extract.h"

#define FL_LIB_MAX_PARTS 16

typedef const struct fl_fn_entry *(*part_fn)(size_t *count);

/* Weak: a part that is not linked resolves to NULL, so one file serves every part count
 * up to FL_LIB_MAX_PARTS (configure refuses more). */
#define PART_DECL(k) \
	extern const struct fl_fn_entry *fl_registry_part_##k(size_t *count) \
		__attribute__((weak));
PART_DECL(1) PART_DECL(2) PART_DECL(3) PART_DECL(4) PART_DECL(5) PART_DECL(6)
PART_DECL(7) PART_DECL(8) PART_DECL(9) PART_DECL(10) PART_DECL(11) PART_DECL(12)
PART_DECL(13) PART_DECL(14) PART_DECL(15) PART_DECL(16)

/* The joined table: built once when the head is loaded (before dlopen returns, so no
 * caller races the build) and unmapped when it is unloaded; NULL with 0 rows when a part
 * is missing or memory ran out,
 * which fl_registry's callers report as an empty library. */
static struct fl_fn_entry *joined;
static size_t njoined;

__attribute__((constructor)) static void lib_join(void)
{
	const part_fn parts[FL_LIB_MAX_PARTS] = {
		fl_registry_part_1, fl_registry_part_2, fl_registry_part_3, fl_registry_part_4,
		fl_registry_part_5, fl_registry_part_6, fl_registry_part_7, fl_registry_part_8,
		fl_registry_part_9, fl_registry_part_10, fl_registry_part_11, fl_registry_part_12,
		fl_registry_part_13, fl_registry_part_14, fl_registry_part_15, fl_registry_part_16,
	};
	size_t total = 0, n = 0, k;

	/* Parts are numbered from 1 without gaps: the first missing one ends the list. */
	for (k = 0; k < FL_LIB_MAX_PARTS && parts[k] != NULL; k++) {
		parts[k](&n);
		total += n;
	}
	if (k == 0 || total == 0)
		return;
	/* 33 MB at --copies=3000, written once here and read while plans are built: huge
	 * pages asked for, so the copy takes one page fault per 2 MB (runtime/extract/bigmap.h) */
	void *p = mmap(NULL, total * sizeof(*joined), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	(void)madvise(p, total * sizeof(*joined), MADV_HUGEPAGE);
	joined = p;
	for (size_t i = 0; i < k; i++) {
		const struct fl_fn_entry *rows = parts[i](&n);
		memcpy(joined + njoined, rows, n * sizeof(*rows));
		njoined += n;
	}
}

__attribute__((destructor)) static void lib_unjoin(void)
{
	if (joined != NULL)
		munmap(joined, njoined * sizeof(*joined));
	joined = NULL;
	njoined = 0;
}

FL_API const struct fl_fn_entry *fl_registry(size_t *count)
{
	*count = njoined;
	return joined;
}
