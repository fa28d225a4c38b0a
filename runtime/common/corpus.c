/* corpus.c: the default generated corpus and the --corpus-dir loader. */
#include "corpus.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rng.h"

/* Generators emit whole units (a paragraph, a function, a record, a table row) and only
 * check the end between units, so the mapping carries this much slack past len. Every unit
 * is far smaller. */
#define CORPUS_SLACK (64u << 10)
#define CORPUS_MIN_BYTES (1u << 20)
#define CORPUS_SEG_MIN (4u << 10)
#define CORPUS_SEG_MAX (256u << 10)

#define CORPUS_WORDS 4096u       /* vocabulary size (ranked, most frequent first) */
#define CORPUS_ZIPF_SLOTS 65536u /* word sampling table: rank per 16-bit draw */
#define CORPUS_POOL 48u          /* identifiers or enum values in use in one segment */
#define CORPUS_POOL_SLOTS 1024u
#define CORPUS_WORD_MAX 23u

enum corpus_kind {
	CORPUS_TEXT,
	CORPUS_CODE,
	CORPUS_JSON,
	CORPUS_XML,
	CORPUS_TABLE,
	CORPUS_NOISE,
	CORPUS_NKINDS
};

/* Share of segments per kind, in 1/256ths; tuned so zstd -3 gives about 3x overall. */
static const uint8_t corpus_kind_weight[CORPUS_NKINDS] = {
	[CORPUS_TEXT] = 90,
	[CORPUS_CODE] = 50,
	[CORPUS_JSON] = 42,
	[CORPUS_XML] = 30,
	[CORPUS_TABLE] = 34,
	[CORPUS_NOISE] = 10,
};

/* The most frequent English-like words, roughly in frequency order; the rest of the
 * vocabulary is built from syllables. */
static const char *const corpus_common_words[] = {
	"the", "of", "and", "to", "a", "in", "is", "that", "it", "was", "for", "on", "as",
	"with", "he", "be", "at", "by", "his", "this", "had", "not", "are", "but", "from",
	"or", "have", "an", "they", "which", "one", "you", "were", "her", "all", "she",
	"there", "would", "their", "we", "him", "been", "has", "when", "who", "will", "more",
	"no", "if", "out", "so", "said", "what", "up", "its", "about", "into", "than", "them",
	"can", "only", "other", "new", "some", "could", "time", "these", "two", "may", "then",
	"do", "first", "any", "my", "now", "such", "like", "our", "over", "man", "me", "even",
	"most", "made", "after", "also", "did", "many", "before", "must", "through", "back",
	"years", "where", "much", "your", "way", "well", "down", "should", "because", "each",
	"just", "those", "people", "how", "too", "little", "state", "good", "very", "make",
	"world", "still", "own", "see", "men", "work", "long", "get", "here", "between",
	"both", "life", "being", "under", "never", "day", "same", "another", "know", "while",
	"last", "might", "us", "great", "old", "year", "off", "come", "since", "against",
	"go", "came", "right", "used", "take", "three", "house", "without", "again", "place",
	"around", "however", "home", "small", "found", "thought", "went", "say", "part",
	"once", "general", "high", "upon", "school", "every", "water", "room", "left",
	"number", "night", "hand", "light", "river", "morning", "letter", "voice", "window",
	"question", "reason", "table", "system", "country", "story", "road", "city", "door",
};

static const char *const corpus_onsets[] = {
	"b", "br", "c", "ch", "cl", "cr", "d", "dr", "f", "fl", "fr", "g", "gl", "gr", "h",
	"j", "k", "l", "m", "n", "p", "pl", "pr", "qu", "r", "s", "sc", "sh", "sl", "sp",
	"st", "str", "t", "th", "tr", "v", "w", "wh", "y", "",
};
static const char *const corpus_vowels[] = {
	"a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ai", "ou", "ee", "oo", "ie", "y",
};
static const char *const corpus_codas[] = {
	"", "", "", "", "", "", "n", "t", "r", "s", "l", "nd", "st", "ng", "ck", "m", "rt", "ll", "nt",
	"rd", "sh", "th", "ld",
};
static const char *const corpus_suffixes[] = {
	"", "", "", "", "", "s", "ed", "ing", "er", "ly", "tion", "ness", "ment", "al", "ous",
};

/* Pieces of C identifiers. */
static const char *const corpus_id_parts[] = {
	"buf", "len", "count", "node", "next", "prev", "head", "tail", "key", "val", "size",
	"data", "ptr", "idx", "pos", "off", "cap", "flags", "mode", "state", "ctx", "conn",
	"req", "resp", "hdr", "body", "msg", "err", "ret", "tmp", "src", "dst", "in", "out",
	"list", "map", "hash", "table", "entry", "slot", "item", "elem", "first", "last",
	"min", "max", "sum", "total", "num", "id", "name", "path", "file", "fd", "sock",
	"addr", "port", "time", "start", "end", "limit", "lock", "ref", "cache", "page",
	"block", "chunk", "frame", "queue", "stack", "tree", "root", "leaf", "parent",
	"child", "left", "right", "level", "depth", "width", "height", "row", "col", "init",
	"free", "alloc", "get", "set", "put", "add", "del", "find", "read", "write", "open",
	"close", "parse", "emit", "scan", "check", "update", "reset", "flush", "push", "pop",
};
static const char *const corpus_c_types[] = {
	"int", "int", "int", "size_t", "size_t", "unsigned", "char *", "const char *",
	"uint32_t", "uint64_t", "long", "void *", "double", "bool", "uint8_t *",
	"struct node *", "struct buf *", "ssize_t",
};
static const char *const corpus_c_ops[] = {
	" + ", " - ", " * ", " & ", " | ", " << ", " >> ", " + ", " - ", " / ",
};
static const char *const corpus_c_cmps[] = {
	" == ", " != ", " < ", " > ", " <= ", " >= ", " == ", " < ",
};
static const char *const corpus_headers[] = {
	"stdio.h", "stdlib.h", "string.h", "stdint.h", "stddef.h", "errno.h", "unistd.h",
	"assert.h", "limits.h", "stdbool.h", "fcntl.h", "sys/types.h", "pthread.h",
};

/* How one record field's value varies. */
enum corpus_field {
	FIELD_SERIAL,   /* increasing by a small step */
	FIELD_INT,      /* uniform in a per-field range */
	FIELD_FIXED2,   /* decimal with two places */
	FIELD_WORDS,    /* one to a few vocabulary words */
	FIELD_ENUM,     /* one of a few per-field words */
	FIELD_BOOL,
	FIELD_EMAIL,
	FIELD_TIME,     /* ISO-8601-like, increasing */
};

/* Record keys (JSON) and element names (XML), each with the kind of value it holds.
 * The first, the record's id, opens every record. */
static const struct corpus_key {
	const char *name;
	uint8_t field;
} corpus_keys[] = {
	{ "id", FIELD_SERIAL }, { "name", FIELD_WORDS }, { "title", FIELD_WORDS },
	{ "type", FIELD_ENUM }, { "status", FIELD_ENUM }, { "created", FIELD_TIME },
	{ "updated", FIELD_TIME }, { "user", FIELD_ENUM }, { "email", FIELD_EMAIL },
	{ "count", FIELD_INT }, { "score", FIELD_FIXED2 }, { "price", FIELD_FIXED2 },
	{ "quantity", FIELD_INT }, { "tag", FIELD_ENUM }, { "active", FIELD_BOOL },
	{ "country", FIELD_ENUM }, { "city", FIELD_WORDS }, { "region", FIELD_ENUM },
	{ "version", FIELD_INT }, { "description", FIELD_WORDS }, { "owner", FIELD_EMAIL },
	{ "priority", FIELD_INT }, { "level", FIELD_ENUM }, { "category", FIELD_ENUM },
	{ "source", FIELD_WORDS }, { "weight", FIELD_FIXED2 }, { "rank", FIELD_INT },
	{ "visible", FIELD_BOOL }, { "language", FIELD_ENUM }, { "comment", FIELD_WORDS },
	{ "rating", FIELD_FIXED2 }, { "total", FIELD_FIXED2 }, { "parent", FIELD_INT },
	{ "group", FIELD_ENUM }, { "label", FIELD_WORDS }, { "unit", FIELD_ENUM },
	{ "timestamp", FIELD_TIME }, { "duration", FIELD_INT }, { "size", FIELD_INT },
	{ "contact", FIELD_EMAIL }, { "deleted", FIELD_BOOL }, { "seq", FIELD_SERIAL },
};
static const char *const corpus_record_names[] = {
	"record", "item", "entry", "row", "event", "order", "user", "message", "product",
};
static const char *const corpus_domains[] = {
	"example.com", "mail.example.org", "corp.example.net", "test.example",
};

#define CORPUS_MAX_FIELDS 12u
#define CORPUS_MAX_COLS 8u

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

/* Fill slots so that item i of n gets a share proportional to 1/(i+h): Zipf-like, and
 * only exact IEEE arithmetic, so every host builds the same table. */
static void corpus_build_zipf(void *table, size_t elem, size_t slots, unsigned n, double h)
{
	double total = 0, acc = 0;
	size_t j = 0;

	for (unsigned i = 0; i < n; i++)
		total += 1.0 / (i + h);
	for (unsigned i = 0; i < n && j < slots; i++) {
		acc += 1.0 / (i + h);
		size_t stop = (size_t)(acc / total * (double)slots + 0.5);
		if (stop <= j)
			stop = j + 1;  /* every item reachable */
		for (; j < stop && j < slots; j++) {
			if (elem == 1)
				((uint8_t *)table)[j] = (uint8_t)i;
			else
				((uint16_t *)table)[j] = (uint16_t)i;
		}
	}
	for (; j < slots; j++) {
		if (elem == 1)
			((uint8_t *)table)[j] = (uint8_t)(n - 1);
		else
			((uint16_t *)table)[j] = (uint16_t)(n - 1);
	}
}

/* Up to 32 random bits, taken from a cached 64-bit draw. */
static uint32_t corpus_bits(struct corpus_gen *g, unsigned n)
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

static uint32_t corpus_below(struct corpus_gen *g, uint32_t n)
{
	return (uint32_t)fl_rng_below(&g->rng, n);
}

/* True with probability num/256. */
static int corpus_chance(struct corpus_gen *g, unsigned num)
{
	return corpus_bits(g, 8) < num;
}

#define CORPUS_PICK(g, arr) ((arr)[corpus_below((g), sizeof(arr) / sizeof((arr)[0]))])

static void corpus_word_append(struct corpus_word *w, const char *s)
{
	size_t n = strlen(s);

	if (w->len + n > CORPUS_WORD_MAX)
		n = CORPUS_WORD_MAX - w->len;
	memcpy(w->s + w->len, s, n);
	w->len = (uint8_t)(w->len + n);
}

/* The vocabulary is fixed (its own seed), so every corpus speaks the same language. */
static void corpus_build_words(struct corpus_gen *g)
{
	const unsigned ncommon = sizeof corpus_common_words / sizeof corpus_common_words[0];
	struct fl_rng saved = g->rng;
	unsigned i = 0;

	fl_rng_seed(&g->rng, 0x766f636162756c61ull);
	for (; i < ncommon; i++) {
		g->words[i].len = 0;
		corpus_word_append(&g->words[i], corpus_common_words[i]);
	}
	for (; i < CORPUS_WORDS; i++) {
		struct corpus_word *w = &g->words[i];
		/* Rarer words are longer, as in real text. */
		unsigned nsyl = 1 + corpus_below(g, i < 1500 ? 2 : 3);

		w->len = 0;
		for (unsigned k = 0; k < nsyl; k++) {
			/* The empty onset (last) only starts a word: no vowel pile-ups inside. */
			unsigned no = sizeof corpus_onsets / sizeof corpus_onsets[0] - (k > 0);

			corpus_word_append(w, corpus_onsets[corpus_below(g, no)]);
			corpus_word_append(w, CORPUS_PICK(g, corpus_vowels));
			corpus_word_append(w, CORPUS_PICK(g, corpus_codas));
		}
		corpus_word_append(w, CORPUS_PICK(g, corpus_suffixes));
		if (w->len < 2)
			corpus_word_append(w, "er");
	}
	corpus_build_zipf(g->zipf, 2, CORPUS_ZIPF_SLOTS, CORPUS_WORDS, 1.0);
	corpus_build_zipf(g->pool_zipf, 1, CORPUS_POOL_SLOTS, CORPUS_POOL, 2.0);
	g->rng = saved;
}

static const struct corpus_word *corpus_word(struct corpus_gen *g)
{
	return &g->words[g->zipf[corpus_bits(g, 16)]];
}

static const struct corpus_word *corpus_pool_word(struct corpus_gen *g)
{
	return &g->pool[g->pool_zipf[corpus_bits(g, 10)]];
}

static void corpus_put(struct corpus_gen *g, const void *s, size_t n)
{
	memcpy(g->p, s, n);
	g->p += n;
}

static void corpus_puts(struct corpus_gen *g, const char *s)
{
	corpus_put(g, s, strlen(s));
}

static void corpus_putc(struct corpus_gen *g, char c)
{
	*g->p++ = (uint8_t)c;
}

static void corpus_put_word(struct corpus_gen *g, const struct corpus_word *w)
{
	corpus_put(g, w->s, w->len);
}

static void corpus_put_u64(struct corpus_gen *g, uint64_t v)
{
	char tmp[20];
	unsigned n = 0;

	do {
		tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	corpus_put(g, tmp + sizeof tmp - n, n);
}

/* v with exactly width digits (zero padded). */
static void corpus_put_pad(struct corpus_gen *g, uint64_t v, unsigned width)
{
	for (unsigned k = width; k-- > 0; v /= 10)
		g->p[k] = (char)('0' + v % 10);
	g->p += width;
}

static void corpus_indent(struct corpus_gen *g, unsigned depth)
{
	for (unsigned k = 0; k < depth; k++)
		corpus_putc(g, '\t');
}

/* ---- English-like text ---- */

/* One sentence: Zipf-drawn words, a capital, commas, sometimes a number. *col tracks
 * the line length; with wrap set, lines break after 72 columns. */
static void corpus_sentence(struct corpus_gen *g, unsigned *col, int wrap)
{
	unsigned nwords = 4 + corpus_below(g, 20);

	for (unsigned k = 0; k < nwords; k++) {
		uint8_t *start = g->p;

		if (k > 0 && corpus_chance(g, 3)) {
			corpus_put_u64(g, corpus_chance(g, 128) ? corpus_below(g, 100) :
				1800 + corpus_below(g, 230));
		} else {
			corpus_put_word(g, corpus_word(g));
			if (k == 0 && *start >= 'a' && *start <= 'z')
				*start = (uint8_t)(*start - 'a' + 'A');
		}
		if (k + 1 == nwords) {
			unsigned r = corpus_bits(g, 8);
			corpus_putc(g, r < 210 ? '.' : r < 235 ? '?' : '!');
		} else if (corpus_chance(g, 24)) {
			corpus_putc(g, corpus_chance(g, 230) ? ',' : ';');
		}
		*col += (unsigned)(g->p - start) + 1;
		if (wrap && *col > 72) {
			corpus_putc(g, '\n');
			*col = 0;
		} else {
			corpus_putc(g, ' ');
		}
	}
}

static void corpus_text(struct corpus_gen *g, uint8_t *end)
{
	int wrap = corpus_chance(g, 128);

	while (g->p < end) {
		unsigned col = 0, nsent = 1 + corpus_below(g, 8);

		if (corpus_chance(g, 20)) {
			/* A quoted line of dialogue. */
			corpus_putc(g, '"');
			corpus_sentence(g, &col, 0);
			g->p--;
			corpus_puts(g, "\" he said. ");
			nsent--;
		}
		for (unsigned k = 0; k < nsent; k++)
			corpus_sentence(g, &col, wrap);
		g->p--;  /* drop the trailing blank */
		corpus_puts(g, "\n\n");
	}
}

/* ---- C-like source ---- */

static void corpus_pool_fill(struct corpus_gen *g)
{
	for (unsigned i = 0; i < CORPUS_POOL; i++) {
		struct corpus_word *w = &g->pool[i];

		w->len = 0;
		corpus_word_append(w, CORPUS_PICK(g, corpus_id_parts));
		if (corpus_chance(g, 150)) {
			corpus_word_append(w, "_");
			corpus_word_append(w, CORPUS_PICK(g, corpus_id_parts));
		}
	}
}

/* A C type then a fresh name: "int x", "char *x". */
static void corpus_c_decl(struct corpus_gen *g)
{
	const char *t = CORPUS_PICK(g, corpus_c_types);
	size_t n = strlen(t);

	corpus_put(g, t, n);
	if (t[n - 1] != '*')
		corpus_putc(g, ' ');
	corpus_put_word(g, corpus_pool_word(g));
}

static void corpus_c_expr(struct corpus_gen *g)
{
	unsigned r = corpus_below(g, 8);

	if (r < 3) {
		corpus_put_word(g, corpus_pool_word(g));
	} else if (r < 5) {
		corpus_put_word(g, corpus_pool_word(g));
		corpus_puts(g, corpus_chance(g, 180) ? "->" : ".");
		corpus_put_word(g, corpus_pool_word(g));
	} else if (r < 6) {
		corpus_put_u64(g, corpus_chance(g, 200) ? corpus_below(g, 16) : corpus_bits(g, 16));
	} else {
		corpus_put_word(g, corpus_pool_word(g));
		corpus_puts(g, CORPUS_PICK(g, corpus_c_ops));
		if (corpus_chance(g, 128))
			corpus_put_u64(g, corpus_below(g, 64));
		else
			corpus_put_word(g, corpus_pool_word(g));
	}
}

static void corpus_c_call(struct corpus_gen *g)
{
	unsigned nargs = corpus_below(g, 4);

	corpus_put_word(g, corpus_pool_word(g));
	corpus_putc(g, '(');
	for (unsigned k = 0; k < nargs; k++) {
		if (k)
			corpus_puts(g, ", ");
		corpus_c_expr(g);
	}
	corpus_putc(g, ')');
}

static void corpus_c_cond(struct corpus_gen *g)
{
	unsigned r = corpus_below(g, 4);

	if (r == 0) {
		corpus_putc(g, '!');
		corpus_put_word(g, corpus_pool_word(g));
	} else if (r == 1) {
		corpus_put_word(g, corpus_pool_word(g));
		corpus_puts(g, corpus_chance(g, 128) ? " == NULL" : " < 0");
	} else {
		corpus_c_expr(g);
		corpus_puts(g, CORPUS_PICK(g, corpus_c_cmps));
		corpus_c_expr(g);
	}
}

/* Statements of one block at depth; *budget bounds a function's total size. */
static void corpus_c_block(struct corpus_gen *g, unsigned depth, int *budget)
{
	unsigned n = 1 + corpus_below(g, depth == 1 ? 10 : 4);

	for (unsigned k = 0; k < n && *budget > 0; k++, (*budget)--) {
		unsigned r = corpus_below(g, 16);

		corpus_indent(g, depth);
		if (r < 4) {
			corpus_put_word(g, corpus_pool_word(g));
			corpus_puts(g, corpus_chance(g, 200) ? " = " : " += ");
			corpus_c_expr(g);
			corpus_puts(g, ";\n");
		} else if (r < 7) {
			corpus_c_call(g);
			corpus_puts(g, ";\n");
		} else if (r < 9 && depth < 4) {
			corpus_puts(g, "if (");
			corpus_c_cond(g);
			if (corpus_chance(g, 100)) {
				corpus_puts(g, ")\n");
				corpus_indent(g, depth + 1);
				corpus_puts(g, corpus_chance(g, 128) ? "return -1;\n" : "goto out;\n");
			} else {
				corpus_puts(g, ") {\n");
				corpus_c_block(g, depth + 1, budget);
				corpus_indent(g, depth);
				if (corpus_chance(g, 60)) {
					corpus_puts(g, "} else {\n");
					corpus_c_block(g, depth + 1, budget);
					corpus_indent(g, depth);
				}
				corpus_puts(g, "}\n");
			}
		} else if (r < 10 && depth < 4) {
			const struct corpus_word *w = corpus_pool_word(g);

			corpus_puts(g, "for (i = 0; i < ");
			corpus_put_word(g, w);
			corpus_puts(g, "; i++) {\n");
			corpus_c_block(g, depth + 1, budget);
			corpus_indent(g, depth);
			corpus_puts(g, "}\n");
		} else if (r < 11) {
			corpus_c_decl(g);
			corpus_puts(g, ";\n");
		} else if (r < 12) {
			/* A comment in prose. */
			unsigned nw = 3 + corpus_below(g, 9);

			corpus_puts(g, "/* ");
			for (unsigned j = 0; j < nw; j++) {
				if (j)
					corpus_putc(g, ' ');
				corpus_put_word(g, corpus_word(g));
			}
			corpus_puts(g, ". */\n");
		} else if (r < 13) {
			corpus_puts(g, "return ");
			corpus_c_expr(g);
			corpus_puts(g, ";\n");
		} else {
			corpus_put_word(g, corpus_pool_word(g));
			corpus_puts(g, "->");
			corpus_put_word(g, corpus_pool_word(g));
			corpus_puts(g, " = ");
			corpus_c_call(g);
			corpus_puts(g, ";\n");
		}
	}
}

static void corpus_c_function(struct corpus_gen *g)
{
	unsigned nparams = corpus_below(g, 4);
	int budget = 40;

	if (corpus_chance(g, 100))
		corpus_puts(g, "static ");
	corpus_c_decl(g);
	corpus_putc(g, '(');
	if (nparams == 0)
		corpus_puts(g, "void");
	for (unsigned k = 0; k < nparams; k++) {
		if (k)
			corpus_puts(g, ", ");
		corpus_c_decl(g);
	}
	corpus_puts(g, ")\n{\n");
	corpus_c_block(g, 1, &budget);
	corpus_puts(g, "}\n\n");
}

static void corpus_code(struct corpus_gen *g, uint8_t *end)
{
	unsigned nhdr = 2 + corpus_below(g, 6);

	corpus_pool_fill(g);
	for (unsigned k = 0; k < nhdr; k++) {
		corpus_puts(g, "#include <");
		corpus_puts(g, CORPUS_PICK(g, corpus_headers));
		corpus_puts(g, ">\n");
	}
	corpus_putc(g, '\n');
	while (g->p < end) {
		if (corpus_chance(g, 30)) {
			unsigned nf = 2 + corpus_below(g, 6);

			corpus_puts(g, "struct ");
			corpus_put_word(g, corpus_pool_word(g));
			corpus_puts(g, " {\n");
			for (unsigned k = 0; k < nf; k++) {
				corpus_putc(g, '\t');
				corpus_c_decl(g);
				corpus_puts(g, ";\n");
			}
			corpus_puts(g, "};\n\n");
		}
		corpus_c_function(g);
	}
}

/* ---- JSON-like and XML-like records ---- */

struct corpus_schema {
	unsigned nfields;
	const char *key[CORPUS_MAX_FIELDS];
	uint8_t kind[CORPUS_MAX_FIELDS];
	uint64_t state[CORPUS_MAX_FIELDS];   /* serial counter or time */
	uint32_t range[CORPUS_MAX_FIELDS];   /* int range, step or enum size */
};

static void corpus_schema_new(struct corpus_gen *g, struct corpus_schema *s)
{
	const unsigned nkeys = sizeof corpus_keys / sizeof corpus_keys[0];
	uint8_t order[sizeof corpus_keys / sizeof corpus_keys[0]];

	for (unsigned i = 0; i < nkeys; i++)
		order[i] = (uint8_t)i;
	s->nfields = 4 + corpus_below(g, CORPUS_MAX_FIELDS - 3);
	for (unsigned i = 0; i < s->nfields; i++) {
		/* Distinct keys, the id first, the rest a partial shuffle. */
		unsigned j = i ? i + corpus_below(g, nkeys - i) : 0;
		uint8_t t = order[i];

		order[i] = order[j];
		order[j] = t;
		s->key[i] = corpus_keys[order[i]].name;
		s->kind[i] = corpus_keys[order[i]].field;
		s->state[i] = corpus_bits(g, 20) + (s->kind[i] == FIELD_TIME ? 1500000000u : 0);
		s->range[i] = 2u + corpus_below(g, s->kind[i] == FIELD_ENUM ? 10 :
			s->kind[i] == FIELD_SERIAL ? 3 : 100000);
	}
	/* Enum values: mid-frequency vocabulary words. */
	for (unsigned i = 0; i < CORPUS_POOL; i++)
		g->pool[i] = g->words[50 + corpus_below(g, 2000)];
}

static void corpus_field_value(struct corpus_gen *g, struct corpus_schema *s, unsigned i,
	int quote)
{
	uint64_t v;

	switch (s->kind[i]) {
	case FIELD_SERIAL:
		s->state[i] += 1 + corpus_below(g, s->range[i]);
		corpus_put_u64(g, s->state[i]);
		break;
	case FIELD_INT:
		corpus_put_u64(g, corpus_below(g, s->range[i]));
		break;
	case FIELD_FIXED2:
		v = corpus_below(g, s->range[i]);
		corpus_put_u64(g, v / 100);
		corpus_putc(g, '.');
		corpus_put_pad(g, v % 100, 2);
		break;
	case FIELD_WORDS:
		if (quote)
			corpus_putc(g, '"');
		for (unsigned k = 0, n = 1 + corpus_below(g, 4); k < n; k++) {
			if (k)
				corpus_putc(g, ' ');
			corpus_put_word(g, corpus_word(g));
		}
		if (quote)
			corpus_putc(g, '"');
		break;
	case FIELD_ENUM:
		if (quote)
			corpus_putc(g, '"');
		corpus_put_word(g, &g->pool[(i * 11 + corpus_below(g, s->range[i])) % CORPUS_POOL]);
		if (quote)
			corpus_putc(g, '"');
		break;
	case FIELD_BOOL:
		corpus_puts(g, corpus_chance(g, 170) ? "true" : "false");
		break;
	case FIELD_EMAIL:
		if (quote)
			corpus_putc(g, '"');
		corpus_put_word(g, corpus_word(g));
		corpus_putc(g, '.');
		corpus_put_word(g, corpus_word(g));
		corpus_putc(g, '@');
		corpus_puts(g, CORPUS_PICK(g, corpus_domains));
		if (quote)
			corpus_putc(g, '"');
		break;
	default: {  /* FIELD_TIME: a clock that moves forward a little per record */
		uint64_t t = (s->state[i] += corpus_below(g, 600));
		uint64_t day = t / 86400, sec = t % 86400;

		if (quote)
			corpus_putc(g, '"');
		/* A simple 360-day calendar is enough to look like a date. */
		corpus_put_pad(g, 1970 + day / 360, 4);
		corpus_putc(g, '-');
		corpus_put_pad(g, 1 + day / 30 % 12, 2);
		corpus_putc(g, '-');
		corpus_put_pad(g, 1 + day % 30, 2);
		corpus_putc(g, 'T');
		corpus_put_pad(g, sec / 3600, 2);
		corpus_putc(g, ':');
		corpus_put_pad(g, sec / 60 % 60, 2);
		corpus_putc(g, ':');
		corpus_put_pad(g, sec % 60, 2);
		corpus_putc(g, 'Z');
		if (quote)
			corpus_putc(g, '"');
		break;
	}
	}
}

static void corpus_json(struct corpus_gen *g, uint8_t *end)
{
	struct corpus_schema s;
	int pretty;

	corpus_schema_new(g, &s);
	pretty = corpus_chance(g, 90);
	corpus_puts(g, "[\n");
	while (g->p < end) {
		corpus_puts(g, pretty ? "  {\n" : "  {");
		for (unsigned i = 0; i < s.nfields; i++) {
			/* Optional fields come and go. */
			if (i > 2 && corpus_chance(g, 20))
				continue;
			if (pretty)
				corpus_puts(g, "    ");
			else if (i)
				corpus_puts(g, ", ");
			corpus_putc(g, '"');
			corpus_puts(g, s.key[i]);
			corpus_puts(g, "\": ");
			corpus_field_value(g, &s, i, 1);
			if (pretty)
				corpus_puts(g, i + 1 < s.nfields ? ",\n" : "\n");
		}
		corpus_puts(g, pretty ? "  },\n" : "},\n");
	}
	corpus_puts(g, "]\n");
}

static void corpus_xml(struct corpus_gen *g, uint8_t *end)
{
	struct corpus_schema s;
	const char *rec;

	corpus_schema_new(g, &s);
	rec = CORPUS_PICK(g, corpus_record_names);
	corpus_puts(g, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records>\n");
	while (g->p < end) {
		corpus_puts(g, "  <");
		corpus_puts(g, rec);
		corpus_puts(g, " ");
		corpus_puts(g, s.key[0]);
		corpus_puts(g, "=\"");
		corpus_field_value(g, &s, 0, 0);
		corpus_puts(g, "\">\n");
		for (unsigned i = 1; i < s.nfields; i++) {
			if (i > 2 && corpus_chance(g, 20))
				continue;
			corpus_puts(g, "    <");
			corpus_puts(g, s.key[i]);
			corpus_putc(g, '>');
			corpus_field_value(g, &s, i, 0);
			corpus_puts(g, "</");
			corpus_puts(g, s.key[i]);
			corpus_puts(g, ">\n");
		}
		corpus_puts(g, "  </");
		corpus_puts(g, rec);
		corpus_puts(g, ">\n");
	}
	corpus_puts(g, "</records>\n");
}

/* ---- binary ---- */

static void corpus_put_le(struct corpus_gen *g, uint64_t v, unsigned width)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v) >> (64 - 8 * width);
#endif
	memcpy(g->p, &v, width);
	g->p += width;
}

/* A table of little-endian rows; each column walks with small deltas, as sensor logs,
 * counters and database columns do. */
static void corpus_table(struct corpus_gen *g, uint8_t *end)
{
	static const uint8_t widths[] = { 1, 2, 2, 4, 4, 4, 8, 8 };
	unsigned ncols = 2 + corpus_below(g, CORPUS_MAX_COLS - 1);
	uint8_t width[CORPUS_MAX_COLS];
	uint32_t spread[CORPUS_MAX_COLS];
	uint64_t val[CORPUS_MAX_COLS];

	for (unsigned c = 0; c < ncols; c++) {
		width[c] = CORPUS_PICK(g, widths);
		spread[c] = 1u << corpus_below(g, width[c] == 1 ? 3 : 8);
		val[c] = fl_rng_next(&g->rng) >> (64 - 6 * width[c]);
	}
	while (g->p < end) {
		for (unsigned c = 0; c < ncols; c++) {
			val[c] += (uint64_t)corpus_below(g, 2 * spread[c] + 1) - spread[c];
			corpus_put_le(g, val[c], width[c]);
		}
	}
}

static void corpus_noise(struct corpus_gen *g, uint8_t *end)
{
	while (g->p < end) {
		uint64_t v = fl_rng_next(&g->rng);

		memcpy(g->p, &v, sizeof v);
		g->p += sizeof v;
	}
}

static void corpus_segment(struct corpus_gen *g, enum corpus_kind kind, uint8_t *end)
{
	switch (kind) {
	case CORPUS_TEXT:
		corpus_text(g, end);
		break;
	case CORPUS_CODE:
		corpus_code(g, end);
		break;
	case CORPUS_JSON:
		corpus_json(g, end);
		break;
	case CORPUS_XML:
		corpus_xml(g, end);
		break;
	case CORPUS_TABLE:
		corpus_table(g, end);
		break;
	default:
		corpus_noise(g, end);
		break;
	}
}

/* A kind drawn by weight, redrawn while it is already well over its share of the bytes
 * written so far: the mix, and so the compression ratio, stays steady across seeds. */
static enum corpus_kind corpus_pick_kind(struct corpus_gen *g, const size_t *kind_bytes,
	size_t done)
{
	unsigned total = 0;
	unsigned k = CORPUS_NOISE;

	for (unsigned i = 0; i < CORPUS_NKINDS; i++)
		total += corpus_kind_weight[i];
	for (unsigned tries = 0; tries < 16; tries++) {
		unsigned r = corpus_below(g, total);

		for (k = 0; k + 1 < CORPUS_NKINDS && r >= corpus_kind_weight[k]; k++)
			r -= corpus_kind_weight[k];
		if (kind_bytes[k] <= done / total * corpus_kind_weight[k] + CORPUS_SEG_MAX)
			break;
	}
	return (enum corpus_kind)k;
}

/* A segment length in [4, 256) KiB, roughly log-uniform so small and large both occur
 * (integer arithmetic: the same on every host). */
static size_t corpus_seg_len(struct corpus_gen *g)
{
	size_t base = (size_t)CORPUS_SEG_MIN << corpus_below(g, 6);

	return base + corpus_below(g, (uint32_t)base);
}

static size_t corpus_page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

int fl_corpus_generate(struct fl_corpus *c, uint64_t seed, size_t bytes, char *err,
	size_t errlen)
{
	struct corpus_gen *g;
	uint8_t *base, *end;
	size_t map_len, kind_bytes[CORPUS_NKINDS] = { 0 };

	memset(c, 0, sizeof *c);
	if (bytes < CORPUS_MIN_BYTES || bytes > ((size_t)1 << 40)) {
		snprintf(err, errlen, "corpus: size %zu out of range [%u, 2^40]", bytes,
			CORPUS_MIN_BYTES);
		return -1;
	}
	g = malloc(sizeof *g);
	if (!g) {
		snprintf(err, errlen, "corpus: out of memory");
		return -1;
	}
	map_len = corpus_page_round(bytes + CORPUS_SLACK);
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		snprintf(err, errlen, "corpus: mmap %zu bytes: %s", map_len, strerror(errno));
		free(g);
		return -1;
	}
	fl_rng_seed(&g->rng, fl_rng_derive(seed, 0x636f72707573ull));
	g->nbits = 0;
	g->bits = 0;
	corpus_build_words(g);
	g->p = base;
	end = base + bytes;
	while (g->p < end) {
		uint8_t *start = g->p;
		enum corpus_kind kind = corpus_pick_kind(g, kind_bytes, (size_t)(start - base));
		uint8_t *seg_end = start + corpus_seg_len(g);

		corpus_segment(g, kind, seg_end < end ? seg_end : end);
		kind_bytes[kind] += (size_t)(g->p - start);
	}
	free(g);
	mprotect(base, map_len, PROT_READ);
	c->data = base;
	c->len = bytes;
	c->map_len = map_len;
	snprintf(c->source, sizeof c->source, "generated seed=%llu", (unsigned long long)seed);
	return 0;
}

struct corpus_file {
	char *name;
	size_t size;
};

static int corpus_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct corpus_file *)a)->name, ((const struct corpus_file *)b)->name);
}

static void corpus_files_free(struct corpus_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

/* List dir's regular files (following symlinks), sorted by name. */
static int corpus_list(DIR *d, const char *dir, struct corpus_file **out, size_t *nout,
	char *err, size_t errlen)
{
	struct corpus_file *f = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		struct stat st;

		if (fstatat(dirfd(d), e->d_name, &st, 0) != 0) {
			snprintf(err, errlen, "corpus: %s/%s: %s", dir, e->d_name, strerror(errno));
			corpus_files_free(f, n);
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct corpus_file *nf = realloc(f, ncap * sizeof *nf);

			if (!nf)
				goto oom;
			f = nf;
			cap = ncap;
		}
		f[n].name = strdup(e->d_name);
		if (!f[n].name)
			goto oom;
		f[n++].size = (size_t)st.st_size;
	}
	if (errno) {
		snprintf(err, errlen, "corpus: %s: %s", dir, strerror(errno));
		corpus_files_free(f, n);
		return -1;
	}
	if (n)
		qsort(f, n, sizeof *f, corpus_file_cmp);
	*out = f;
	*nout = n;
	return 0;
oom:
	snprintf(err, errlen, "corpus: %s: out of memory", dir);
	corpus_files_free(f, n);
	return -1;
}

/* Read exactly want bytes of dir/name into dst. */
static int corpus_read_file(int dfd, const char *dir, const char *name, uint8_t *dst,
	size_t want, char *err, size_t errlen)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0) {
		snprintf(err, errlen, "corpus: %s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	while (got < want) {
		ssize_t r = read(fd, dst + got, want - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "corpus: %s/%s: %s", dir, name,
				r < 0 ? strerror(errno) : "file shrank while reading");
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

int fl_corpus_load_dir(struct fl_corpus *c, const char *dir, char *err, size_t errlen)
{
	struct corpus_file *f = NULL;
	size_t n = 0, total = 0, map_len, off = 0;
	uint8_t *base;
	DIR *d;

	memset(c, 0, sizeof *c);
	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "corpus: %s: %s", dir, strerror(errno));
		return -1;
	}
	if (corpus_list(d, dir, &f, &n, err, errlen) != 0) {
		closedir(d);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (f[i].size > SIZE_MAX / 2 - total) {
			snprintf(err, errlen, "corpus: %s/%s: too large", dir, f[i].name);
			goto fail;
		}
		total += f[i].size;
	}
	if (total == 0) {
		snprintf(err, errlen, "corpus: %s: no bytes in regular files", dir);
		goto fail;
	}
	map_len = corpus_page_round(total);
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		snprintf(err, errlen, "corpus: %s: mmap %zu bytes: %s", dir, map_len,
			strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		if (corpus_read_file(dirfd(d), dir, f[i].name, base + off, f[i].size, err,
				errlen) != 0) {
			munmap(base, map_len);
			goto fail;
		}
		off += f[i].size;
	}
	mprotect(base, map_len, PROT_READ);
	corpus_files_free(f, n);
	closedir(d);
	c->data = base;
	c->len = total;
	c->map_len = map_len;
	snprintf(c->source, sizeof c->source, "%s", dir);
	return 0;
fail:
	corpus_files_free(f, n);
	closedir(d);
	return -1;
}

size_t fl_corpus_span(const struct fl_corpus *c, uint64_t off, size_t want, const uint8_t **p)
{
	size_t o = (size_t)(off % c->len);
	size_t n = c->len - o;

	*p = c->data + o;
	return want < n ? want : n;
}

void fl_corpus_copy(const struct fl_corpus *c, uint64_t off, void *dst, size_t len)
{
	uint8_t *out = dst;

	while (len > 0) {
		const uint8_t *p;
		size_t n = fl_corpus_span(c, off, len, &p);

		memcpy(out, p, n);
		out += n;
		off += n;
		len -= n;
	}
}

void fl_corpus_free(struct fl_corpus *c)
{
	if (c->data)
		munmap((void *)c->data, c->map_len);
	memset(c, 0, sizeof *c);
}
