/* asm_clone.h: derive copies of a generated function from the assembly of a few probes.
 *
 * Copies of one structural variant differ only in integer constants, so instead of compiling
 * every copy with gcc the build compiles a few probes of the variant (FL_NPROBES, probes.h),
 * takes three whose assembly lines up, fits each integer that differs between them to a
 * linear rule of one per-copy constant (value = s * k[j] + d), and writes every copy by
 * substituting its own constants into the probe's assembly text.
 *
 * Reading a probe (x86-64 AT&T syntax as gcc 12 prints it with -O2 -fPIC -S):
 *  - The text is split into tokens; the three probes' token streams must be identical except
 *    for integers in slot positions and the function's name.
 *  - Slot positions: the immediate of an integer ALU instruction (mov add sub and or xor cmp
 *    test imul adc sbb push with a b/w/l/q suffix, and movabs), a displacement (`-8(%rbp)`),
 *    or a whole operand of `.byte .value .word .short .hword .2byte .long .int .4byte .quad
 *    .8byte`. Integers anywhere else (`.p2align 4`, `.size x, 40`, scale factors, `sym+8`,
 *    shift counts, bit indexes, SSE control bytes) must be equal in all probes.
 *  - Arithmetic is modulo 2^W, W being the width of the place the value goes: the suffix of
 *    the instruction, 32 for `leal` displacements, 64 for other displacements, the size of
 *    a data directive. `xorl $-559038737` is fitted as k = 0xDEADBEEF, s = 1, d = 0.
 *  - Multipliers: 0 < |s| <= 65536 as planned, and also s = +-2^n (n < W), because gcc
 *    rewrites (x >> 24) > K as x > K * 2^24 + 0xFFFFFF (a tenth of the README variants
 *    failed without it; a wrong rule still has to match two more 32-bit values by chance).
 *    Slots of width 8 or 16 take only s = +-1: with three probes a wrong rule would fit a
 *    byte by chance once in 256 tries per constant when any s is allowed.
 *  - The function (`NAME`, `NAME.cold`, ...) is renamed to the copy's name; every `.L`
 *    label becomes `.L<tag>_<rest>`; any other symbol the probe defines (switch tables
 *    `CSWTCH.N`, function-local statics `x.0`) becomes `<symbol>.<tag>`. A probe that
 *    exports another symbol (`.globl`, `.weak`) or carries debug info (-g) is refused.
 *  - `.file`, `.ident`, `.section .note.GNU-stack` and `.globl NAME` lines are dropped.
 *
 * What keeps a copy correct: the probes' code is right for the copy's constants when gcc
 * would have made the same decisions for them. Besides fitting, the module checks:
 *  - range: each constant of a copy must lie between its smallest and largest probe value.
 *    gcc decides things from values that no slot shows (value range propagation dropped
 *    the `& 4095` of `(K + hour) & 4095` when K + 23 < 4096 in all probes; the copy with
 *    K = 4092 then wrote past the dense array). Such a decision is a threshold on K: when
 *    probes at both ends of K's range got the same code, every K between them gets it.
 *  - classes: each value's sign, |v| < 128, fits int32, fits uint32, is 0/1/-1, is a power
 *    of two, is 2^n-1 (of the value as written and of the exact s * k + d), and whether the
 *    exact value fits the slot's W bits; every class all three probes shared must hold for
 *    a copy. Displacements are checked for range only: any signed 32-bit offset encodes in
 *    the same instruction and gcc's -O2 address costs ignore it (checking imm8 and the rest
 *    there refused 10-25% of the copies of README-style test templates with random probes).
 *  - order: the order of two cmp immediates compared with the same operand text (switch
 *    case trees, implied compares).
 *  - overlap: two accesses off the same address registers, one of them a store and not
 *    both adds to memory (FL_YIELD's, which commute), that were at least 8 bytes apart in
 *    every probe must stay so (gcc forwards values past stores it proved distinct).
 *  - use: every constant must differ between the probes and drive some slot; a constant
 *    gcc folded away (dead code, an implied compare) makes the fit fail.
 *
 * Choosing probe constants (the range check makes this necessary): probe 0 takes every
 * constant at the low end of its range, probe 1 at the high end (the extreme values a copy
 * can draw: odd where asked, no 0, +-1, powers of two, 2^n-1), probe 2 a normal draw that
 * differs from both. Copies are then refused only for classes (a power of two drawn
 * inside the range), orders and overlaps; where the ends make gcc's code differ, the fit
 * fails and the variant is compiled from C. Probes drawn at random leave most copies
 * outside their range: nearly all are refused.
 */
#ifndef ASM_CLONE_H
#define ASM_CLONE_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct asm_clone; /* a fitted variant: probe assembly as literal text + integer slots */

/* Fit one variant from three probe .s texts. asm_text[i] holds one generated function named
 * probe_name[i] (plus the sections gcc emitted for it), compiled from the same template with
 * per-copy constant vector k[i][0..nk-1]. Every integer position that differs between the
 * probes must be explained by exactly one rule value = s * k[j] + d (mod 2^W), 0 < |s| <=
 * 65536; positions equal in all probes are literal text. Returns NULL and writes a one-line
 * reason into err (what differed, probe line number) when the probes differ in anything else,
 * a slot has no rule or more than one, or a constant is the same in all probes or drives no
 * slot: the caller then compiles the variant's copies from C. About 0.1 ms for a 100-line
 * function. */
struct asm_clone *asm_clone_fit(const char *const asm_text[3], const char *const probe_name[3],
                                const int64_t *const k[3], size_t nk, char *err, size_t errlen);

/* Append one copy to out: the function renamed to name, local labels and symbols tagged with
 * label_tag (unique within a shard, [A-Za-z0-9_]), every slot set to s * k[j] + d, file-level
 * lines dropped; the function stays local. k has the nk entries given to the fit. Returns 0,
 * or -1 with out untouched when a value is unsafe: a constant lies outside the probes'
 * range, or a class, order or overlap the probes all shared does not hold (see above), or a
 * value does not fit the signed 32 bits the instruction encodes (anything but movabs and
 * .quad). The caller then compiles that copy from C. */
int asm_clone_emit(const struct asm_clone *c, const char *name, const char *label_tag,
                   const int64_t *k, struct buf *out);

/* Addition to the planned API: allow (1) or forbid (0, the default) copies whose constants
 * lie outside the probes' range. Only for a caller that checks its copies some other way
 * (compiling a sample from C and comparing): on the README patterns with probes drawn at
 * random, about 1 copy in 9000 computed a wrong result without the range check. */
void asm_clone_allow_outside_range(struct asm_clone *c, int allow);

/* The same over np probes (3 to MAXP, 16): every probe's token stream must line up with
 * probe 0's, and every rule must predict every probe, so extra probes settle slots three
 * probes leave ambiguous, widen the classes copies may take, and widen each constant's
 * range. An error naming a slot that two rules fit contains ASM_CLONE_AMBIGUOUS (more
 * probes may settle it; clone.c's tie-break probes look for it). */
#define ASM_CLONE_AMBIGUOUS " is ambiguous: "

struct asm_clone *asm_clone_fit_n(const char *const *asm_text, const char *const *probe_name,
                                  const int64_t *const *k, int np, size_t nk, char *err,
                                  size_t errlen);

/* For the object cloner (obj_clone.h): the slot values of the copy with constants k into
 * vals (asm_clone_nslots entries), with every check of asm_clone_emit; 0, or -1 when the copy
 * is unsafe. And the copy's text for slot values given directly, unchecked: the object cloner
 * assembles a template with chosen values to find where each slot lands in the machine code. */
int asm_clone_values(const struct asm_clone *c, const int64_t *k, int64_t *vals);
void asm_clone_emit_values(const struct asm_clone *c, const char *name, const char *label_tag,
                           const int64_t *vals, struct buf *out);

size_t asm_clone_nslots(const struct asm_clone *c);   /* integer slots found */
size_t asm_clone_nk(const struct asm_clone *c);       /* constants per copy */
/* Each constant's smallest and largest probe value (asm_clone_nk entries each). */
void asm_clone_hull(const struct asm_clone *c, int64_t *lo, int64_t *hi);
void asm_clone_free(struct asm_clone *c);

/* Addition to the planned API, for tests and diagnostics: the rule of slot i (0-based, in
 * text order). width is the W of the modular arithmetic, line the slot's line in probe 0.
 * Returns 0, or -1 when i >= asm_clone_nslots(c). */
struct asm_clone_rule {
	size_t j;        /* constant index */
	int64_t s;       /* multiplier, non-zero */
	int64_t d;       /* offset, as a signed W-bit value */
	int width;       /* 8, 16, 32 or 64 */
	unsigned line;   /* line in probe 0 */
};
int asm_clone_slot(const struct asm_clone *c, size_t i, struct asm_clone_rule *rule);

#endif
