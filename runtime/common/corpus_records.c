/* corpus_records.c: the generated corpus's records: JSON-like and XML-like records of a
 * random schema per segment, and the binary segments: tables of little-endian rows and
 * noise. */
#include "corpus_gen.h"

#include <stdint.h>
#include <string.h>

#include "rng.h"

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

/* v with exactly width digits (zero padded). */
static void corpus_put_pad(struct corpus_gen *g, uint64_t v, unsigned width)
{
	for (unsigned k = width; k-- > 0; v /= 10)
		g->p[k] = (char)('0' + v % 10);
	g->p += width;
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

void corpus_records_json(struct corpus_gen *g, uint8_t *end)
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

void corpus_records_xml(struct corpus_gen *g, uint8_t *end)
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
void corpus_records_table(struct corpus_gen *g, uint8_t *end)
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

void corpus_records_noise(struct corpus_gen *g, uint8_t *end)
{
	while (g->p < end) {
		uint64_t v = fl_rng_next(&g->rng);

		memcpy(g->p, &v, sizeof v);
		g->p += sizeof v;
	}
}
