/* emit_share.h: what emit.c (C shards, probes, registry) lends clone.c (the clone step).
 * Include gen.h and util.h first. */
#ifndef EMIT_SHARE_H
#define EMIT_SHARE_H

#include <stddef.h>
#include <stdint.h>

/* All (variant, copy) pairs in registry order: pattern, variant, copy. */
struct job *all_jobs(const struct gen *g, size_t *njobs);
/* Split jobs into nshards contiguous runs of about equal weight; start[s] is shard s's
 * first job and start[nshards] == njobs. */
size_t *balance(const struct job *jobs, size_t njobs, const size_t *weight, int nshards);
/* The generated-file header: what the file is and the command, no paths or dates. */
void file_header(const struct gen *g, struct buf *b, const char *cmt, const char *what);
/* Write jobs [from, to) as one C shard at path; done/total feed the progress line. */
void write_c_shard(const struct gen *g, const struct job *jobs, size_t from, size_t to,
		   const char *path, const char *what, uint64_t *done, uint64_t total);
/* dir/PNN_vVVV_pI.ext: probe i of variant v. */
void probe_path(struct buf *b, const char *dir, const struct variant *v, int i, const char *ext);

#endif
