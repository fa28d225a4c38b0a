/* asm_tok.h: what asm_lex.c, asm_fit.c and asm_clone.c share, private to the three (the
 * module's API is asm_clone.h): a probe's tokens, a fitted slot, W-bit arithmetic, and the
 * functions one of the files calls in another. */
#ifndef ASM_TOK_H
#define ASM_TOK_H

#include <stddef.h>
#include <stdint.h>

enum tok_kind {
	TK_TEXT,    /* literal bytes: blanks, punctuation, mnemonics, registers, strings */
	TK_SYM,     /* a symbol reference, resolved to TK_TEXT or TK_LOCAL after the lex */
	TK_NUM,     /* an integer literal (with its unary minus) */
	TK_NAME,    /* the function's name, possibly with a suffix (NAME.cold) */
	TK_LABEL,   /* a .L local label */
	TK_LOCAL    /* another symbol the probe defines (CSWTCH.3, x.0) */
};

/* Most probes one fit takes (asm_clone_fit_n): the build's six, two tie-break probes, a
 * chain of four targeted ones and the new one (clone.c). */
#define MAXP 16

enum num_ctx { NC_NONE, NC_IMM, NC_DISP, NC_DATA };

struct tok {
	uint32_t off, len;   /* bytes in the probe text */
	uint32_t line;       /* 1-based line in the probe text */
	uint8_t kind;        /* enum tok_kind */
	uint8_t ctx;         /* TK_NUM: enum num_ctx, NC_NONE when no slot may go there;
	                        TK_TEXT "(": NC_DISP for a memory operand without displacement */
	uint8_t width;       /* TK_NUM: W of the arithmetic, 8/16/32/64 */
	uint8_t need32;      /* TK_NUM: the encoding holds a signed 32-bit value */
	uint8_t is_cmp;      /* TK_NUM: the immediate of a cmp instruction */
	uint8_t is_store;    /* NC_DISP: the memory operand may be written (the last operand) */
	uint8_t is_addsub;   /* NC_DISP: ... by an add or sub (updates that commute) */
	uint16_t key_len;    /* NC_DISP: length of the "(base,index,scale)" text after it, 0 in
	                        lea (no memory access); cmp immediate: length of the rest of
	                        the operands (", %eax"): what it is compared with */
	uint64_t val;        /* TK_NUM: value, two's complement */
	uint32_t label_id;   /* TK_LABEL: order of the label's first appearance in its probe */
};

struct toks {
	struct tok *v;
	size_t n, cap;
};

/* Sign-extend the low w bits of x. */
static inline int64_t sext(uint64_t x, int w)
{
	if (w >= 64)
		return (int64_t)x;
	return (int64_t)(x << (64 - w)) >> (64 - w);
}

static inline uint64_t wmask(int w)
{
	return w >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
}

/* An integer that differs between the probes, fitted to a rule of one constant (asm_fit.c);
 * agree and want hold the value classes (asm_fit.c's CL_ bits). */
struct slot {
	int64_t s, d;        /* value = sext_W(s * k[j] + d) */
	uint32_t j;
	uint32_t line;       /* line in probe 0 */
	uint8_t width;
	uint8_t need32;      /* the value must fit a signed 32-bit encoding */
	uint32_t agree;      /* class bits all probes share */
	uint32_t want;       /* their setting */
};

/* Lex probe text (probe number probe, function name) into out: every token with its kind,
 * where an integer may become a slot, and .L labels numbered by first appearance. Returns
 * 0, or -1 with err set (unsupported lines, the function not defined exactly once). */
int asm_lex_probe(const char *text, const char *name, int probe, struct toks *out,
                  char *err, size_t errlen);

/* Describe token t of text for an error message into d (n bytes): 'text' or end of line. */
void asm_lex_tok_desc(char *d, size_t n, const char *text, const struct tok *t);

/* Fit the differing integers at[0..np-1] (token i of each probe) to exactly one rule
 * s * k[j] + d and record the value classes the probes agree on. Returns 0 and fills *out,
 * or -1 with err naming the line and values. */
int asm_fit_slot(const struct tok *const at[MAXP], int np, const char *const text[MAXP],
                 const int64_t *const k[MAXP], size_t nk, struct slot *out, char *err,
                 size_t errlen);

/* A copy's values of slots[0..n-1] for its constants k into vals; returns 0, or -1 when one
 * is unsafe (a class all probes shared does not hold, or it does not fit the signed 32 bits
 * the instruction encodes). */
int asm_fit_slot_values(const struct slot *slots, size_t n, const int64_t *k, int64_t *vals);

#endif
