/* bigmap.h: scratch arrays of tens of MB, mapped with transparent huge pages asked for.
 *
 * The leaf's start-up reads a large library (2.1 M functions at --copies=3000) into
 * arrays it touches once and frees (symbol sizes, the reuse profile). On this VM a page
 * fault was a third of the start-up CPU; with MADV_HUGEPAGE the first touch faults once
 * per 2 MB instead of once per 4 KB (transparent_hugepage "madvise", Debian's default).
 * Only for start-up scratch: arrays the running leaf reads keep ordinary pages, so the
 * measured data side is the one a default allocator gives. Header-only: two calls.
 */
#ifndef FL_BIGMAP_H
#define FL_BIGMAP_H

#include <stddef.h>
#include <sys/mman.h>

/* n elements of size bytes each, zeroed, or NULL. Free with fl_bigmap_free(p, n, size). */
static inline void *fl_bigmap(size_t n, size_t size)
{
	size_t bytes = (n ? n : 1) * size;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE);   /* advice: 4 KB pages work as well */
	return p;
}

static inline void fl_bigmap_free(void *p, size_t n, size_t size)
{
	if (p != NULL)
		munmap(p, (n ? n : 1) * size);
}

#endif
