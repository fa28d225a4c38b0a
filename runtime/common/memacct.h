/* memacct.h: the servers' allocator settings and their memory, by owner, for the stats.
 *
 * glibc's defaults let a server's RSS ratchet under the sampled 1-16 MiB messages: the
 * mmap threshold starts at 128 KiB and rises to the size of any mmapped chunk freed (up
 * to 32 MiB), so after the first large message every later one up to that size comes
 * from the heap, where freed space is kept and fragments; each thread gets its own arena
 * (up to 8 per CPU), each keeping its own free space. fl_mem_tune fixes the threshold
 * (FL_MEM_MMAP_THRESHOLD: larger chunks are mapped and unmapped on free, whatever came
 * before) and caps the arenas (FL_MEM_ARENA_MAX), and scratch buffers larger than
 * FL_MEM_SCRATCH_KEEP are freed after each use (fl_mem_keep_bytes, fl_bytes_trim).
 * FL_MALLOC=default in the environment leaves glibc's defaults and grow-only scratch
 * buffers (what the servers did before; for comparisons such as the soak's).
 */
#ifndef FL_MEMACCT_H
#define FL_MEMACCT_H

#include <stddef.h>
#include <stdint.h>

#define FL_MEM_MMAP_THRESHOLD (1u << 20)  /* bytes: chunks this size and up are mmapped */
#define FL_MEM_ARENA_MAX 2                /* malloc arenas at most */
#define FL_MEM_SCRATCH_KEEP (1u << 20)    /* bytes a scratch buffer keeps between uses */

struct fl_mem_tuning {
	int on;                 /* 0: FL_MALLOC=default (or a mallopt refused) */
	size_t mmap_threshold;  /* set (bytes); 0 when off */
	int arena_max;          /* set; 0 when off */
	size_t keep_bytes;      /* scratch kept between uses; SIZE_MAX when off */
	char why[96];           /* why off, "" when on */
};

/* Apply the settings: first thing in main, before any thread or large allocation. */
void fl_mem_tune(void);
const struct fl_mem_tuning *fl_mem_tuning(void);
/* Bytes a scratch buffer may keep between uses (SIZE_MAX before fl_mem_tune or off). */
size_t fl_mem_keep_bytes(void);

/* One owner's bytes for the stats; value < 0 means not measured (JSON null). */
struct fl_mem_owner {
	const char *name;       /* JSON key, e.g. "corpus_bytes" */
	int64_t bytes;
};

/* The "memory" stats object (new reference, NULL when out of memory): rss_bytes,
 * rss_anon_bytes, rss_file_bytes (/proc/self/status; null when unreadable), owners
 * {name: bytes}, allocator {tuning, mmap_threshold_bytes, arena_max,
 * scratch_keep_bytes (null: glibc default / grow-only), arenas, heap_bytes,
 * heap_in_use_bytes, heap_free_bytes, top_releasable_bytes, mmapped_bytes,
 * mmapped_chunks}. */
struct json_t *fl_mem_json(const struct fl_mem_owner *owners, size_t n);

/* Count "<heap nr=" in malloc_info's XML: the arenas in use. -1 when not found. */
int fl_mem_count_arenas(const char *xml);

#endif
