/* corpus_text.c: the generated corpus's vocabulary (English-like words, most frequent
 * first, sampled Zipf-like) and the kinds of segment written from words and identifiers:
 * English-like text and C-like source. */
#include "corpus_gen.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rng.h"

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

static void corpus_word_append(struct corpus_word *w, const char *s)
{
	size_t n = strlen(s);

	if (w->len + n > CORPUS_WORD_MAX)
		n = CORPUS_WORD_MAX - w->len;
	memcpy(w->s + w->len, s, n);
	w->len = (uint8_t)(w->len + n);
}

/* The vocabulary is fixed (its own seed), so every corpus speaks the same language. */
void corpus_text_build_words(struct corpus_gen *g)
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

static const struct corpus_word *corpus_pool_word(struct corpus_gen *g)
{
	return &g->pool[g->pool_zipf[corpus_bits(g, 10)]];
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

void corpus_text_prose(struct corpus_gen *g, uint8_t *end)
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

void corpus_text_code(struct corpus_gen *g, uint8_t *end)
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
