/* corpus.h: the bytes replies and stories are cut from.
 *
 * The default corpus is generated at startup, deterministic for a seed: about 64 MB mixing
 * English-like text, C-like source, JSON/XML-like records and binary segments (numeric
 * tables, noise), tuned so zstd level 3 compresses it about 3x, near the Silesia corpus.
 * --corpus-dir uses real files instead (concatenated in name order). Either way the bytes
 * sit in one read-only mmap shared by all threads.
 */
#ifndef FL_CORPUS_H
#define FL_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#define FL_CORPUS_DEFAULT_BYTES (64u << 20)

struct fl_corpus {
	const uint8_t *data;  /* len bytes, read-only after load */
	size_t len;
	size_t map_len;       /* bytes mapped (munmap size) */
	char source[256];     /* "generated seed=S" or the directory */
};

/* Generate the default corpus of bytes (>= 1 MiB) from seed. Returns 0, or -1 (err
 * filled) on a bad size or when mmap fails. */
int fl_corpus_generate(struct fl_corpus *c, uint64_t seed, size_t bytes, char *err,
	size_t errlen);

/* Load every regular file of dir (not recursive, sorted by name) into one mapping.
 * Returns 0, or -1 (err naming the file) when dir cannot be read, holds no bytes, or a
 * file cannot be read. */
int fl_corpus_load_dir(struct fl_corpus *c, const char *dir, char *err, size_t errlen);

/* The contiguous bytes at offset off mod len: sets *p and returns how many there are, at
 * most want. Callers wanting more loop, advancing off (the corpus wraps around). */
size_t fl_corpus_span(const struct fl_corpus *c, uint64_t off, size_t want, const uint8_t **p);

/* Copy len bytes starting at off (wrapping) into dst. */
void fl_corpus_copy(const struct fl_corpus *c, uint64_t off, void *dst, size_t len);

void fl_corpus_free(struct fl_corpus *c);

#endif
