/* corpus_gen.h: what the files of the generated corpus share (private to them): the
 * generator's state (struct corpus_gen), its random draws and byte writers, and the
 * generators of each kind that fl_corpus_generate (corpus.c) assembles the corpus from:
 * corpus_text.c (the vocabulary, English-like text, C-like source) and corpus_records.c
 * (JSON-like and XML-like records, binary tables and noise).
 */
#ifndef FL_CORPUS_GEN_H
#define FL_CORPUS_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rng.h"

/* Generators emit whole units (a paragraph, a function, a record, a table row) and only
 * check the end between units, so the mapping carries this much slack past len. Every unit
 * is far smaller. */
#define CORPUS_SLACK (64u << 10)

#define CORPUS_WORDS 4096u       /* vocabulary size (ranked, most frequent first) */
#define CORPUS_ZIPF_SLOTS 65536u /* word sampling table: rank per 16-bit draw */
#define CORPUS_POOL 48u          /* identifiers or enum values in use in one segment */
#define CORPUS_POOL_SLOTS 1024u
#define CORPUS_WORD_MAX 23u

struct corpus_word {
	uint8_t len;
	char s[CORPUS_WORD_MAX];
};

/* Everything a generation run needs; allocated per call, so no global mutable state. */
struct corpus_gen {
	struct fl_rng rng;
	uint8_t *p;                                  /* write position */
	struct corpus_word words[CORPUS_WORDS];      /* ranked vocabulary */
	uint16_t zipf[CORPUS_ZIPF_SLOTS];            /* 16-bit draw -> word rank */
	uint8_t pool_zipf[CORPUS_POOL_SLOTS];        /* 10-bit draw -> pool index */
	struct corpus_word pool[CORPUS_POOL];        /* this segment's names or enum values */
	uint64_t bits;                               /* unused random bits */
	unsigned nbits;
};

/* Up to 32 random bits, taken from a cached 64-bit draw. */
static inline uint32_t corpus_bits(struct corpus_gen *g, unsigned n)
{
	if (g->nbits < n) {
		g->bits = fl_rng_next(&g->rng);
		g->nbits = 64;
	}
	uint32_t v = (uint32_t)(g->bits & ((1ull << n) - 1));
	g->bits >>= n;
	g->nbits -= n;
	return v;
}

static inline uint32_t corpus_below(struct corpus_gen *g, uint32_t n)
{
	return (uint32_t)fl_rng_below(&g->rng, n);
}

/* True with probability num/256. */
static inline int corpus_chance(struct corpus_gen *g, unsigned num)
{
	return corpus_bits(g, 8) < num;
}

#define CORPUS_PICK(g, arr) ((arr)[corpus_below((g), sizeof(arr) / sizeof((arr)[0]))])

static inline const struct corpus_word *corpus_word(struct corpus_gen *g)
{
	return &g->words[g->zipf[corpus_bits(g, 16)]];
}

static inline void corpus_put(struct corpus_gen *g, const void *s, size_t n)
{
	memcpy(g->p, s, n);
	g->p += n;
}

static inline void corpus_puts(struct corpus_gen *g, const char *s)
{
	corpus_put(g, s, strlen(s));
}

static inline void corpus_putc(struct corpus_gen *g, char c)
{
	*g->p++ = (uint8_t)c;
}

static inline void corpus_put_word(struct corpus_gen *g, const struct corpus_word *w)
{
	corpus_put(g, w->s, w->len);
}

static inline void corpus_put_u64(struct corpus_gen *g, uint64_t v)
{
	char tmp[20];
	unsigned n = 0;

	do {
		tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	corpus_put(g, tmp + sizeof tmp - n, n);
}

/* Each generator of a kind below writes one segment at g->p, units until g->p reaches end
 * (past it by less than CORPUS_SLACK). */

/* corpus_text.c: build g's vocabulary and its Zipf tables from the vocabulary's own fixed
 * seed, leaving g->rng as it was. */
void corpus_text_build_words(struct corpus_gen *g);
/* corpus_text.c: English-like paragraphs, sometimes wrapped at 72 columns. */
void corpus_text_prose(struct corpus_gen *g, uint8_t *end);
/* corpus_text.c: C-like source: includes, structs and functions over a pool of names. */
void corpus_text_code(struct corpus_gen *g, uint8_t *end);
/* corpus_records.c: a JSON-like array of records of one random schema. */
void corpus_records_json(struct corpus_gen *g, uint8_t *end);
/* corpus_records.c: an XML-like document of records of one random schema. */
void corpus_records_xml(struct corpus_gen *g, uint8_t *end);
/* corpus_records.c: a binary table of little-endian rows, columns walking by small deltas. */
void corpus_records_table(struct corpus_gen *g, uint8_t *end);
/* corpus_records.c: random bytes, 8 at a time. */
void corpus_records_noise(struct corpus_gen *g, uint8_t *end);

#endif
