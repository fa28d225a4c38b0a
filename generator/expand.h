/* expand.h: pattern -> variants (knob choices) -> skeletons (text with constant slots) ->
 * copies (constants drawn per copy, deterministically from the seed). */
#include <stddef.h>
#include <stdint.h>

struct buf;
struct pattern;

/* A per-copy constant's range. */
struct cspec {
	int64_t lo, hi;    /* the template's range, inclusive */
	int odd;           /* odd values only */
	int64_t plo, phi;  /* the range copies are drawn from: probes 0 and 1 sit at its ends */
};

/* Where rendered text gets a per-copy value: the function name or constant j. */
struct slot {
	size_t off;      /* offset in skel.text where the slot goes */
	int j;           /* constant index, or -1 for the function name */
};

/* One variant's function with holes: literal text plus slots. */
struct skel {
	char *text;              /* literal text, slots removed */
	size_t len;
	struct slot *slots;
	int nslots;
	struct cspec *consts;    /* per-copy constants in slot order */
	int nconsts;
	int lines;               /* C lines of one copy (no #line directives) */
	size_t copy_bytes;       /* approximate bytes of one rendered copy */
};

struct variant {
	const struct pattern *p;
	int index;               /* variant index within the pattern */
	int64_t *knobs;          /* value per pattern knob */
	struct skel sk;
};

/* Generation-wide settings the expansion needs. */
struct gen_params {
	uint64_t seed;           /* --seed */
	uint32_t copies;         /* --copies */
	int line_directives;     /* emit #line into generated C (1) or not (0) */
};

/* Choose p's variants from its knob space and expand each one. Fatal with file:line on a
 * template error. Returns an array of p->variants variants. */
struct variant *expand_pattern(const struct pattern *p, const struct gen_params *gp);

/* The per-copy constants of variant v, copy c (c may be a probe id: EXPAND_PROBE + i). */
#define EXPAND_PROBE 0x80000000u
void expand_draw(const struct variant *v, const struct gen_params *gp, uint32_t copy,
		 int64_t *out);

/* Whether v is a value copies of constant c may take (its parity, no special values such
 * as 2^n +-1 in a wide range): a probe made up between two drawn values must be one too. */
int expand_value_ok(const struct cspec *c, int64_t v);

/* Append copy `copy` of v, named name, to out; k holds its constants (expand_draw). */
void expand_render(const struct variant *v, const char *name, const int64_t *k, struct buf *out);

/* The symbol of a copy: fl_PNN_vVVV_cCCCCC. */
void expand_symbol(const struct variant *v, uint32_t copy, char *out, size_t outlen);

/* Format a constant as C source (decimal; u/ull suffix; negatives in parentheses). */
int expand_format_const(int64_t v, char *out);
