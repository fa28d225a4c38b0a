/* fuzz_pattern.c: pattern text through pattern_parse, expand_pattern and rendered copies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
#include "expr.h"
#include "fuzz.h"
#include "pattern.h"
#include "util.h"

/* Live bytes one input may hold (real patterns: < 1 MiB); 4 MiB before the probe-hull skip
 * links, which add 16 bytes per hull table slot (1 MiB at MAX_CONSTS constants). */
#define FZ_HEAP_BYTES (5u << 20)
#define FZ_STEPS 200000ul  /* allocator calls + expression evaluations (real: < 80000) */

/* The generator's fatal() and its expression evaluator, renamed by -Wl,--wrap. */
void __wrap_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
int __real_expr_eval(const struct expr *e, const struct scope *sc, int64_t *out, char *err,
	size_t errlen);
int __wrap_expr_eval(const struct expr *e, const struct scope *sc, int64_t *out, char *err,
	size_t errlen);
/* The tracker gen_alloc.h points the generator at. */
void *fz_malloc(size_t n);
void *fz_calloc(size_t n, size_t size);
void *fz_realloc(void *p, size_t n);
void fz_free(void *p);

/* One live generator allocation. */
struct fz_block {
	void *p;
	size_t n;
};

/* Open-addressing set of the live blocks (linear probing, backward-shift deletion). */
static struct {
	struct fz_block *t;
	size_t cap, used;   /* cap: power of two */
	size_t bytes;       /* live bytes */
	unsigned long steps;
	int armed;          /* inside an input: fatal() and the budgets may jump out */
	jmp_buf out;
} fz;

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_pattern: %s\n", what);
	abort();
}

/* End the current input: a template error or a budget overrun, never a finding. */
static void __attribute__((noreturn)) fz_bail(void)
{
	if (!fz.armed)
		fz_die("generator bailed out outside an input");
	longjmp(fz.out, 1);
}

void __wrap_fatal(const char *fmt, ...)
{
	if (getenv("FZ_PATTERN_VERBOSE") != NULL) {
		va_list ap;

		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fz_bail();
}

/* A budget overrun ends the input; FZ_PATTERN_VERBOSE names it. */
static void __attribute__((noreturn)) fz_over(const char *budget)
{
	if (getenv("FZ_PATTERN_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_pattern: over the %s budget\n", budget);
	fz_bail();
}

static void fz_step(void)
{
	if (++fz.steps > FZ_STEPS)
		fz_over("step");
}

int __wrap_expr_eval(const struct expr *e, const struct scope *sc, int64_t *out, char *err,
	size_t errlen)
{
	fz_step();
	return __real_expr_eval(e, sc, out, err, errlen);
}

static size_t fz_slot(const void *p)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) & (fz.cap - 1);
}

static void fz_insert(void *p, size_t n)
{
	size_t i;

	if (2 * (fz.used + 1) > fz.cap) {
		struct fz_block *old = fz.t;
		size_t oldcap = fz.cap;

		fz.cap = oldcap ? 2 * oldcap : 1024;
		fz.t = calloc(fz.cap, sizeof(*fz.t));
		if (fz.t == NULL)
			fz_die("tracker out of memory");
		for (size_t k = 0; k < oldcap; k++) {
			if (old[k].p == NULL)
				continue;
			for (i = fz_slot(old[k].p); fz.t[i].p != NULL; i = (i + 1) & (fz.cap - 1))
				;
			fz.t[i] = old[k];
		}
		free(old);
	}
	for (i = fz_slot(p); fz.t[i].p != NULL; i = (i + 1) & (fz.cap - 1))
		;
	fz.t[i].p = p;
	fz.t[i].n = n;
	fz.used++;
	fz.bytes += n;
}

/* Forget p; returns 0, or -1 when p is not a live block. */
static int fz_remove(void *p, size_t *n)
{
	size_t i, j;

	if (fz.cap == 0)
		return -1;
	for (i = fz_slot(p); fz.t[i].p != p; i = (i + 1) & (fz.cap - 1))
		if (fz.t[i].p == NULL)
			return -1;
	*n = fz.t[i].n;
	fz.bytes -= fz.t[i].n;
	fz.used--;
	fz.t[i].p = NULL;
	/* Pull later members of the probe run back over the hole. */
	for (j = (i + 1) & (fz.cap - 1); fz.t[j].p != NULL; j = (j + 1) & (fz.cap - 1)) {
		size_t home = fz_slot(fz.t[j].p);

		if (((j - home) & (fz.cap - 1)) >= ((j - i) & (fz.cap - 1))) {
			fz.t[i] = fz.t[j];
			fz.t[j].p = NULL;
			i = j;
		}
	}
	return 0;
}

static void fz_budget(size_t add)
{
	fz_step();
	if (add > FZ_HEAP_BYTES || fz.bytes > FZ_HEAP_BYTES - add)
		fz_over("heap");
}

void *fz_malloc(size_t n)
{
	void *p;

	fz_budget(n);
	p = malloc(n);
	if (p != NULL)
		fz_insert(p, n);
	return p;
}

void *fz_calloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	fz_budget(n * size);
	p = calloc(n, size);
	if (p != NULL)
		fz_insert(p, n * size);
	return p;
}

void *fz_realloc(void *p, size_t n)
{
	size_t old = 0;
	void *q;

	if (p == NULL)
		return fz_malloc(n);
	if (fz_remove(p, &old) != 0)
		return realloc(p, n);  /* not ours: let ASan name the bad pointer */
	fz_insert(p, old);  /* tracked while the budget may bail out, or p would leak */
	fz_budget(n > old ? n - old : 0);
	fz_remove(p, &old);
	q = realloc(p, n);
	fz_insert(q != NULL ? q : p, q != NULL ? n : old);
	return q;
}

void fz_free(void *p)
{
	size_t n;

	fz_step();
	if (p != NULL && fz_remove(p, &n) != 0) {
		free(p);  /* a double or wild free: ASan reports it */
		return;
	}
	free(p);
}

static void fz_release_all(void)
{
	for (size_t i = 0; i < fz.cap; i++)
		if (fz.t[i].p != NULL) {
			free(fz.t[i].p);
			fz.t[i].p = NULL;
		}
	fz.used = 0;
	fz.bytes = 0;
	fz.steps = 0;
}

/* Parse, expand every variant, and render two copies and both end probes of each. */
static void fz_run(const uint8_t *data, size_t size)
{
	static const uint32_t copies[] = { 0, 1, EXPAND_PROBE, EXPAND_PROBE + 1 };
	struct gen_params gp = { 0x5eed, 4, (int)(size & 1) };
	struct pattern *p = pattern_parse("fuzz/P99_fuzz.tpl", (const char *)data, size);
	struct variant *vs = expand_pattern(p, &gp);
	struct buf out = { 0 };
	char name[64];

	for (int i = 0; i < p->variants; i++) {
		int64_t *k = xcalloc((size_t)vs[i].sk.nconsts + 1, sizeof(*k));

		for (size_t c = 0; c < sizeof(copies) / sizeof(copies[0]); c++) {
			expand_draw(&vs[i], &gp, copies[c], k);
			for (int j = 0; j < vs[i].sk.nconsts; j++) {
				const struct cspec *cs = &vs[i].sk.consts[j];

				if (k[j] < cs->lo || k[j] > cs->hi)
					fz_die("a drawn constant is outside its template range");
			}
			expand_symbol(&vs[i], copies[c], name, sizeof(name));
			buf_reset(&out);
			expand_render(&vs[i], name, k, &out);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (setjmp(fz.out) == 0) {
		fz.armed = 1;
		fz_run(data, size);
	}
	fz.armed = 0;
	if (getenv("FZ_PATTERN_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_pattern: %lu steps, %zu bytes live\n", fz.steps, fz.bytes);
	fz_release_all();
	return 0;
}
