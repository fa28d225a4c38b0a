/* memacct.h: the servers' allocator settings and their memory, by owner, for the stats.
 *
 * glibc's defaults let a server's RSS ratchet under the sampled 1-32 MiB messages: the
 * mmap threshold starts at 128 KiB and rises to the size of any mmapped chunk freed (up
 * to 32 MiB), so after the first large message every later one up to that size comes
 * from the heap, where freed space is kept and fragments; each thread gets its own arena
 * (up to 8 per CPU), each keeping its own free space. Mapping every large chunk instead
 * bounds RSS but pays a page fault per 4 KiB of every large message on every request
 * (on a VM where a fault traps to the hypervisor, 37% of the leaf's CPU). So, as
 * production allocators do (jemalloc's dirty-page decay), fl_mem_tune keeps freed
 * memory for reuse and gives it back on a clock: every message comes from the arenas
 * (FL_MEM_MMAP_THRESHOLD is the largest frame; free() never trims), the arenas are
 * capped (FL_MEM_ARENA_MAX), and a thread calls malloc_trim(0) every
 * FL_MEM_RELEASE_MS, returning the free pages of every arena. Scratch buffers larger
 * than FL_MEM_SCRATCH_KEEP are freed after each use (fl_mem_keep_bytes, fl_bytes_trim).
 * FL_MALLOC=default in the environment leaves glibc's defaults, grow-only scratch
 * buffers and no release thread (what the servers did before; for comparisons such as
 * the soak's).
 */
#ifndef FL_MEMACCT_H
#define FL_MEMACCT_H

#include <stddef.h>
#include <stdint.h>

#define FL_MEM_MMAP_THRESHOLD (32u << 20) /* bytes: chunks this size and up are mmapped */
#define FL_MEM_TRIM_THRESHOLD (1u << 30)  /* bytes: free() trims no heap top below this */
/* The release thread's pace. glibc has no decay (jemalloc purges pages by how long they
 * have been free): malloc_trim(0) purges every free page, the churn about to be reused
 * included, so each call costs its own time (with the arena locked) and the page faults
 * that follow, both growing with the heap. Once a second keeps RSS within a second's
 * churn while the heap is small; under overload (54 ms a call on a 270 MB heap) a
 * fixed second cost the leaf a third of its capacity. So the next call waits
 * FL_MEM_RELEASE_COST_X times the last one's duration, within these bounds. */
#define FL_MEM_RELEASE_MS 1000            /* ms between calls at least */
#define FL_MEM_RELEASE_MAX_MS 10000       /* ms at most (jemalloc's dirty_decay_ms) */
#define FL_MEM_RELEASE_COST_X 200         /* a call's time x this = the gap: <= 0.5% */
#define FL_MEM_ARENA_MAX 2                /* malloc arenas at most */
#define FL_MEM_SCRATCH_KEEP (1u << 20)    /* bytes a scratch buffer keeps between uses */

struct fl_mem_tuning {
	int on;                 /* 0: FL_MALLOC=default (or a mallopt refused) */
	size_t mmap_threshold;  /* set (bytes); 0 when off */
	int arena_max;          /* set; 0 when off */
	size_t keep_bytes;      /* scratch kept between uses; SIZE_MAX when off */
	unsigned release_ms;    /* least gap between malloc_trim(0) calls; 0: no thread */
	char why[96];           /* why off, "" when on */
};

/* Apply the settings: first thing in main, before any thread or large allocation. It
 * starts the release thread itself, with every signal blocked. */
void fl_mem_tune(void);
const struct fl_mem_tuning *fl_mem_tuning(void);
/* The gap (ms) before the next malloc_trim(0), given the last one took last_ns:
 * FL_MEM_RELEASE_COST_X x its duration, clamped to [FL_MEM_RELEASE_MS,
 * FL_MEM_RELEASE_MAX_MS]. Pure. */
unsigned fl_mem_release_gap_ms(uint64_t last_ns);
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
 * scratch_keep_bytes (null: glibc default / grow-only), release_min_gap_ms,
 * release_max_gap_ms, release_gap_ms (the next wait), release_last_ms (the last
 * call's time), releases, releases_freed, release_ms_total (null when off), arenas,
 * heap_bytes, heap_in_use_bytes, heap_free_bytes, top_releasable_bytes, mmapped_bytes,
 * mmapped_chunks}. */
struct json_t *fl_mem_json(const struct fl_mem_owner *owners, size_t n);

/* Count "<heap nr=" in malloc_info's XML: the arenas in use. -1 when not found. */
int fl_mem_count_arenas(const char *xml);

#endif
