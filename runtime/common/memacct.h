/* memacct.h: the servers' allocator settings and their memory, by owner, for the stats.
 *
 * The servers allocate and free messages of 1 KiB to 32 MiB (sampled, heavy-tailed) on
 * every request, so the allocator decides both their RSS and how much CPU goes to page
 * faults. configure picks the allocator the leaf and the mock link (--malloc):
 *
 * jemalloc (the default; memalloc_jemalloc.c): freed pages stay with their arena for
 *   reuse and are given back once they have been free for about FL_MEM_DECAY_MS (jemalloc's
 *   decay, by a background thread), so the churn of one request is reused by the next
 *   without faulting while RSS follows the load down within tens of seconds.
 * glibc (memalloc_glibc.c; the sanitizer builds, whose runtimes replace malloc): the
 *   mmap threshold is fixed at FL_MEM_MMAP_THRESHOLD (glibc's dynamic threshold rises to
 *   32 MiB after the first large free, after which freed messages stay in the heap and
 *   fragment; fixed, every larger chunk is mapped and unmapped, paying its page faults on
 *   each use) and the arenas are capped at FL_MEM_ARENA_MAX.
 *
 * Either way scratch buffers larger than FL_MEM_SCRATCH_KEEP are freed after each use
 * (fl_mem_keep_bytes). FL_MALLOC=default in the environment leaves the allocator's own
 * defaults and grow-only scratch buffers (for comparisons such as the soak's); jemalloc's
 * slab layout (malloc_conf in memalloc_jemalloc.c) is read before main and stays.
 */
#ifndef FL_MEMACCT_H
#define FL_MEMACCT_H

#include <stddef.h>
#include <stdint.h>

#define FL_MEM_MMAP_THRESHOLD (1u << 20)  /* glibc: bytes; chunks this size and up are mmapped */
#define FL_MEM_ARENA_MAX 2                /* glibc: malloc arenas at most */
/* jemalloc: ms a freed page stays before purge. jemalloc's own default, 10 s: at 1 s the
 * leaf purged ~1.3 MB per request and faulted it back (184-224 page faults per request at
 * 100 qps, --copies=2, against 113-129 at 10 s; README "Memory"). */
#define FL_MEM_DECAY_MS 10000
#define FL_MEM_SCRATCH_KEEP (1u << 20)    /* bytes a scratch buffer keeps between uses */

struct fl_mem_tuning {
	const char *allocator;  /* "jemalloc" or "glibc" */
	int on;                 /* 0: FL_MALLOC=default, or the allocator refused a setting */
	size_t mmap_threshold;  /* glibc: set (bytes); 0 when off or jemalloc */
	int arena_max;          /* glibc: set; 0 when off or jemalloc */
	long decay_ms;          /* jemalloc: dirty decay set (ms); -1 when off or glibc */
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
 * {name: bytes}, allocator {name, version, tuning, why_default, scratch_keep_bytes, and
 * the allocator's own settings and figures (memalloc.h)}. */
struct json_t *fl_mem_json(const struct fl_mem_owner *owners, size_t n);

#endif
