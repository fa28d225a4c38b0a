/* cgparse.c: callgrind output parser (see cgparse.h for the accepted format). */
#include "cgparse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"

#define CG_MAX_POS 4          /* position columns we accept (instr, line) */
#define CG_MAX_ID (1u << 24)  /* largest compressed-name id; callgrind numbers densely */

enum cg_pending {
	CG_PEND_NONE,
	CG_PEND_CALL, /* after calls=: next line is call site + inclusive cost */
	CG_PEND_JUMP, /* after jump=/jcnd=: next line is the source position */
};

/* A growable map from compressed-name id to a value (object index + 1, or 1 = defined). */
struct cg_idmap {
	uint32_t *v;
	size_t n;
};

/* Per-file parse state. */
struct cg_file {
	struct fl_cg *cg;
	const char *name;
	uint64_t lineno;
	char *err;
	size_t errlen;
	unsigned npos;              /* position columns */
	int instr_col;              /* column of instr, or -1 */
	int have_events;            /* events line seen in this file */
	int have_costs;             /* a cost or spec line seen (positions now fixed) */
	uint64_t last[CG_MAX_POS];  /* previous cost line's positions */
	uint64_t *cost;             /* scratch: nevents counts */
	uint64_t *decl;             /* this file's summary:/totals: counts */
	int decl_src;               /* 0 none, 1 from summary:, 2 from totals: */
	uint32_t obj;               /* current ob= object, or FL_CG_NO_OBJ */
	struct cg_idmap ob_ids, fl_ids, fn_ids;
	enum cg_pending pending;
	uint64_t pend_count;        /* calls / jump count, or jcnd taken */
	uint64_t pend_exec;         /* jcnd executed */
	int pend_jcnd;              /* pending jump is a jcnd */
	uint64_t pend_line;         /* line of the calls=/jump line, for EOF errors */
	int after_call;             /* the previous line was a call's inclusive cost line */
	uint64_t call_addr;         /* ...at this instr position */
};

/* "name:line: " and the message into the caller's err; -1. */
#define cg_fail(f, ...) \
	fl_errf_at((f)->err, (f)->errlen, (f)->name, (f)->lineno, __VA_ARGS__)

void fl_cg_init(struct fl_cg *cg)
{
	memset(cg, 0, sizeof *cg);
	cg->ir_event = -1;
	cg->bi_event = -1;
	for (int i = 0; i < 4; i++)
		cg->miss_event[i] = -1;
}

void fl_cg_free(struct fl_cg *cg)
{
	for (unsigned i = 0; i < cg->nevents; i++)
		free(cg->events[i]);
	for (uint32_t i = 0; i < cg->nobjs; i++)
		free(cg->objs[i]);
	free(cg->events);
	free(cg->totals);
	free(cg->declared);
	free(cg->obj_totals);
	free(cg->objs);
	free(cg->insns);
	free(cg->slots);
	fl_cg_init(cg);
}

uint64_t fl_cg_obj_total(const struct fl_cg *cg, uint32_t obj, int ev)
{
	if (obj >= cg->obj_rows || ev < 0 || (unsigned)ev >= cg->nevents)
		return 0;
	return cg->obj_totals[(size_t)obj * cg->nevents + (unsigned)ev];
}

int fl_cg_event(const struct fl_cg *cg, const char *name)
{
	for (unsigned i = 0; i < cg->nevents; i++)
		if (strcmp(cg->events[i], name) == 0)
			return (int)i;
	return -1;
}

/* ---- address hash ---- */

static size_t cg_hash(uint32_t obj, uint64_t addr, size_t nslots)
{
	/* Fibonacci hashing: code addresses share low bits, so mix before masking. */
	uint64_t k = addr ^ (uint64_t)obj << 44 ^ (uint64_t)obj >> 20;
	return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (nslots - 1);
}

static int cg_rehash(struct fl_cg *cg, size_t nslots)
{
	uint32_t *s = calloc(nslots, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < cg->ninsns; i++) {
		size_t h = cg_hash(cg->insns[i].obj, cg->insns[i].addr, nslots);
		while (s[h])
			h = (h + 1) & (nslots - 1);
		s[h] = (uint32_t)(i + 1);
	}
	free(cg->slots);
	cg->slots = s;
	cg->nslots = nslots;
	return 0;
}

const struct fl_cg_insn *fl_cg_find(const struct fl_cg *cg, uint32_t obj, uint64_t addr)
{
	if (!cg->nslots)
		return NULL;
	size_t h = cg_hash(obj, addr, cg->nslots);
	for (uint32_t s; (s = cg->slots[h]) != 0; h = (h + 1) & (cg->nslots - 1))
		if (cg->insns[s - 1].addr == addr && cg->insns[s - 1].obj == obj)
			return &cg->insns[s - 1];
	return NULL;
}

/* The entry for addr in the current object, created when missing. NULL (err set) on
 * failure. */
static struct fl_cg_insn *cg_upsert(struct cg_file *f, uint64_t addr)
{
	struct fl_cg *cg = f->cg;
	struct fl_cg_insn *e = (struct fl_cg_insn *)fl_cg_find(cg, f->obj, addr);
	if (e)
		return e;
	if (cg->ninsns >= UINT32_MAX - 1) {
		cg_fail(f, "too many distinct addresses");
		return NULL;
	}
	/* Keep the load factor at most 1/2 so probes stay short. */
	if ((cg->ninsns + 1) * 2 > cg->nslots &&
		cg_rehash(cg, cg->nslots ? cg->nslots * 2 : 1024) != 0)
		goto oom;
	if (cg->ninsns == cg->insns_cap) {
		size_t cap = cg->insns_cap ? cg->insns_cap * 2 : 512;
		struct fl_cg_insn *n = realloc(cg->insns, cap * sizeof *n);
		if (!n)
			goto oom;
		cg->insns = n;
		cg->insns_cap = cap;
	}
	e = &cg->insns[cg->ninsns];
	memset(e, 0, sizeof *e);
	e->addr = addr;
	e->obj = f->obj;
	size_t h = cg_hash(f->obj, addr, cg->nslots);
	while (cg->slots[h])
		h = (h + 1) & (cg->nslots - 1);
	cg->slots[h] = (uint32_t)(++cg->ninsns);
	return e;
oom:
	cg_fail(f, "out of memory");
	return NULL;
}

static int cg_cmp_addr(const void *a, const void *b)
{
	const struct fl_cg_insn *x = a, *y = b;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int fl_cg_sort(struct fl_cg *cg)
{
	if (!cg->ninsns)
		return 0;
	qsort(cg->insns, cg->ninsns, sizeof *cg->insns, cg_cmp_addr);
	return cg_rehash(cg, cg->nslots);
}

/* ---- tokens ---- */

static const char *cg_skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Parse an unsigned decimal or 0x-hex number at *p; it must end at whitespace, NUL or
 * the character stop (0 for none). Advances *p past it. Returns 0, or -1 when invalid or
 * above 2^64-1. */
static int cg_number(const char **p, char stop, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (s += 2;; s++, digits++) {
			int d;
			if (*s >= '0' && *s <= '9')
				d = *s - '0';
			else if (*s >= 'a' && *s <= 'f')
				d = *s - 'a' + 10;
			else if (*s >= 'A' && *s <= 'F')
				d = *s - 'A' + 10;
			else
				break;
			if (v >> 60)
				return -1;
			v = v << 4 | (uint64_t)d;
		}
	} else {
		for (; *s >= '0' && *s <= '9'; s++, digits++) {
			uint64_t d = (uint64_t)(*s - '0');
			if (v > (UINT64_MAX - d) / 10)
				return -1;
			v = v * 10 + d;
		}
	}
	if (!digits || !(*s == 0 || *s == ' ' || *s == '\t' || (stop && *s == stop)))
		return -1;
	*p = s;
	*out = v;
	return 0;
}

/* Parse one subposition (absolute, +N, -N or *) relative to base. */
static int cg_subpos(const char **p, uint64_t base, uint64_t *out)
{
	const char *s = *p;
	uint64_t d;
	if (*s == '*') {
		if (!(s[1] == 0 || s[1] == ' ' || s[1] == '\t'))
			return -1;
		*p = s + 1;
		*out = base;
		return 0;
	}
	if (*s == '+' || *s == '-') {
		const char *q = s + 1;
		if (cg_number(&q, 0, &d) != 0)
			return -1;
		if (*s == '+' ? d > UINT64_MAX - base : d > base)
			return -1;
		*out = *s == '+' ? base + d : base - d;
		*p = q;
		return 0;
	}
	return cg_number(p, 0, out);
}

/* Parse npos positions at *p relative to f->last into pos[]. */
static int cg_positions(struct cg_file *f, const char **p, uint64_t *pos, const char *what)
{
	for (unsigned i = 0; i < f->npos; i++) {
		*p = cg_skip_ws(*p);
		if (!**p)
			return cg_fail(f, "%s: %u position(s) expected, got %u", what, f->npos, i);
		if (cg_subpos(p, f->last[i], &pos[i]) != 0)
			return cg_fail(f, "%s: bad position '%.20s'", what, *p);
	}
	return 0;
}

/* ---- names ---- */

static int cg_idmap_set(struct cg_idmap *m, uint64_t id, uint32_t v)
{
	if (id >= m->n) {
		size_t n = m->n ? m->n : 64;
		while (n <= id)
			n *= 2;
		uint32_t *nv = realloc(m->v, n * sizeof *nv);
		if (!nv)
			return -1;
		memset(nv + m->n, 0, (n - m->n) * sizeof *nv);
		m->v = nv;
		m->n = n;
	}
	m->v[id] = v;
	return 0;
}

static uint32_t cg_idmap_get(const struct cg_idmap *m, uint64_t id)
{
	return id < m->n ? m->v[id] : 0;
}

/* Index of object name (interned across files). UINT32_MAX when out of memory. */
static uint32_t cg_intern_obj(struct fl_cg *cg, const char *name)
{
	for (uint32_t i = 0; i < cg->nobjs; i++)
		if (strcmp(cg->objs[i], name) == 0)
			return i;
	if (cg->nobjs >= UINT32_MAX - 2)
		return UINT32_MAX;
	char **n = realloc(cg->objs, (cg->nobjs + 1) * sizeof *n);
	if (!n)
		return UINT32_MAX;
	cg->objs = n;
	if (!(cg->objs[cg->nobjs] = strdup(name)))
		return UINT32_MAX;
	return cg->nobjs++;
}

/* Resolve a name spec value "(id) name" | "(id)" | "name" in map m. For objects (is_obj)
 * *obj receives the object index. */
static int cg_name(struct cg_file *f, const char *key, const char *v, struct cg_idmap *m,
	int is_obj, uint32_t *obj)
{
	uint64_t id = 0;
	int has_id = 0;
	v = cg_skip_ws(v);
	if (*v == '(') {
		const char *q = v + 1;
		if (cg_number(&q, ')', &id) != 0 || *q != ')')
			return cg_fail(f, "%s=: bad name id", key);
		if (id >= CG_MAX_ID)
			return cg_fail(f, "%s=: name id %llu too large", key, (unsigned long long)id);
		has_id = 1;
		v = cg_skip_ws(q + 1);
	}
	if (!*v) {
		if (!has_id)
			return cg_fail(f, "%s=: empty name", key);
		uint32_t x = cg_idmap_get(m, id);
		if (!x)
			return cg_fail(f, "%s=: name id (%llu) used before definition", key,
				(unsigned long long)id);
		if (is_obj)
			*obj = x - 1;
		return 0;
	}
	uint32_t x = 1;
	if (is_obj) {
		uint32_t o = cg_intern_obj(f->cg, v);
		if (o == UINT32_MAX)
			return cg_fail(f, "out of memory");
		*obj = o;
		x = o + 1;
	}
	if (has_id && cg_idmap_set(m, id, x) != 0)
		return cg_fail(f, "out of memory");
	return 0;
}

/* ---- header lines ---- */

static char *cg_trim(char *s)
{
	s = (char *)cg_skip_ws(s);
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	return s;
}

/* events: first file defines them, later files must match. */
static int cg_events(struct cg_file *f, char *v)
{
	struct fl_cg *cg = f->cg;
	char *names[256];
	unsigned n = 0;
	for (char *save = NULL, *t = strtok_r(v, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 256)
			return cg_fail(f, "events: more than 256 events");
		names[n++] = t;
	}
	if (!n)
		return cg_fail(f, "events: no event names");
	if (f->have_events || f->have_costs)
		return cg_fail(f, "events: must come once, before any cost line");
	f->have_events = 1;
	if (cg->nevents) {
		int same = cg->nevents == n;
		for (unsigned i = 0; same && i < n; i++)
			same = strcmp(cg->events[i], names[i]) == 0;
		if (!same)
			return cg_fail(f, "events differ from the first file's");
	} else {
		cg->events = calloc(n, sizeof *cg->events);
		cg->totals = calloc(n, sizeof *cg->totals);
		cg->declared = calloc(n, sizeof *cg->declared);
		if (!cg->events || !cg->totals || !cg->declared)
			return cg_fail(f, "out of memory");
		cg->nevents = n;
		for (unsigned i = 0; i < n; i++)
			if (!(cg->events[i] = strdup(names[i])))
				return cg_fail(f, "out of memory");
		cg->ir_event = fl_cg_event(cg, "Ir");
		cg->bi_event = fl_cg_event(cg, "Bi");
		static const char *const miss[4] = { "I1mr", "ILmr", "Bcm", "Bim" };
		for (int i = 0; i < 4; i++)
			cg->miss_event[i] = fl_cg_event(cg, miss[i]);
	}
	if (!(f->cost = calloc(n, sizeof *f->cost)) || !(f->decl = calloc(n, sizeof *f->decl)))
		return cg_fail(f, "out of memory");
	return 0;
}

static int cg_positions_hdr(struct cg_file *f, char *v)
{
	unsigned n = 0;
	int instr = -1, line = -1;
	if (f->have_costs)
		return cg_fail(f, "positions: must come before any cost line");
	for (char *save = NULL, *t = strtok_r(v, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (strcmp(t, "instr") == 0 && instr < 0 && line < 0)
			instr = (int)n++;
		else if (strcmp(t, "line") == 0 && line < 0)
			line = (int)n++;
		else
			return cg_fail(f, "positions: unsupported or repeated '%s'", t);
	}
	if (!n)
		return cg_fail(f, "positions: empty");
	f->npos = n;
	f->instr_col = instr;
	return 0;
}

/* Parse up to nevents counts at p into f->cost (the rest zero). */
static int cg_costs(struct cg_file *f, const char *p, const char *what)
{
	unsigned n = f->cg->nevents;
	memset(f->cost, 0, n * sizeof *f->cost);
	for (unsigned i = 0;; i++) {
		p = cg_skip_ws(p);
		if (!*p)
			return 0;
		if (i == n)
			return cg_fail(f, "%s: more counts than the %u events", what, n);
		if (cg_number(&p, 0, &f->cost[i]) != 0)
			return cg_fail(f, "%s: bad count '%.20s'", what, p);
	}
}

static int cg_header(struct cg_file *f, char *key, char *v)
{
	v = cg_trim(v);
	if (strcmp(key, "version") == 0) {
		if (strcmp(v, "1") != 0)
			return cg_fail(f, "unsupported format version '%s' (1 expected)", v);
	} else if (strcmp(key, "events") == 0) {
		return cg_events(f, v);
	} else if (strcmp(key, "positions") == 0) {
		return cg_positions_hdr(f, v);
	} else if (strcmp(key, "summary") == 0 || strcmp(key, "totals") == 0) {
		if (!f->have_events)
			return cg_fail(f, "%s: before events:", key);
		if (cg_costs(f, v, key) != 0)
			return -1;
		/* totals: (written last) wins over summary: within a file. */
		int src = key[0] == 't' ? 2 : 1;
		if (src >= f->decl_src) {
			memcpy(f->decl, f->cost, f->cg->nevents * sizeof *f->decl);
			f->decl_src = src;
		}
	}
	/* Other keys (creator, pid, cmd, part, desc, event, thread, ...) carry no costs. */
	return 0;
}

/* ---- body lines ---- */

/* Add one self cost line to object obj's row of obj_totals, growing the rows to cover
 * every interned object (events are fixed before any cost line). 0, or -1 out of memory. */
static int cg_obj_add(struct fl_cg *cg, uint32_t obj, const uint64_t *cost)
{
	if (obj >= cg->obj_rows) {
		size_t rows = cg->nobjs > obj ? cg->nobjs : obj + 1;
		uint64_t *t = realloc(cg->obj_totals, rows * cg->nevents * sizeof *t);
		if (!t)
			return -1;
		memset(t + cg->obj_rows * cg->nevents, 0,
			(rows - cg->obj_rows) * cg->nevents * sizeof *t);
		cg->obj_totals = t;
		cg->obj_rows = (uint32_t)rows;
	}
	for (unsigned i = 0; i < cg->nevents; i++)
		cg->obj_totals[(size_t)obj * cg->nevents + i] += cost[i];
	return 0;
}

/* Cost line at p (already past leading blanks). */
static int cg_cost_line(struct cg_file *f, const char *p)
{
	uint64_t pos[CG_MAX_POS];
	if (!f->have_events)
		return cg_fail(f, "cost line before events:");
	f->have_costs = 1;
	if (cg_positions(f, &p, pos, "cost line") != 0 || cg_costs(f, p, "cost line") != 0)
		return -1;
	memcpy(f->last, pos, sizeof pos);
	struct fl_cg *cg = f->cg;
	struct fl_cg_insn *e = NULL;
	if (f->instr_col >= 0 && !(e = cg_upsert(f, pos[f->instr_col])))
		return -1;
	enum cg_pending pend = f->pending;
	int after_call = f->after_call;
	f->pending = CG_PEND_NONE;
	f->after_call = 0;
	if (pend == CG_PEND_CALL) {
		/* Inclusive cost of the call: counted in the callee's own lines already. */
		if (e) {
			e->calls += f->pend_count;
			f->after_call = 1;
			f->call_addr = e->addr;
		}
		return 0;
	}
	if (after_call && e && e->addr == f->call_addr && pend == CG_PEND_NONE) {
		/* A self cost right after a call's inclusive cost, at the call's own position:
		 * the PLT stub the call went through (callgrind --skip-plt=yes, its default,
		 * charges skipped code to the call site). */
		if (cg->ir_event >= 0)
			e->plt_ir += f->cost[cg->ir_event];
		if (cg->bi_event >= 0)
			e->plt_jumps += f->cost[cg->bi_event];
	}
	if (pend == CG_PEND_JUMP && e) {
		if (f->pend_jcnd) {
			e->jcnd_taken += f->pend_count;
			e->jcnd_exec += f->pend_exec;
			e->njcnd++;
		} else {
			e->jumps += f->pend_count;
		}
	}
	for (unsigned i = 0; i < cg->nevents; i++)
		cg->totals[i] += f->cost[i];
	if (f->obj != FL_CG_NO_OBJ && cg_obj_add(cg, f->obj, f->cost) != 0)
		return cg_fail(f, "out of memory");
	if (e && cg->ir_event >= 0)
		e->ir += f->cost[cg->ir_event];
	if (e) {
		uint32_t *m[4] = { &e->i1mr, &e->ilmr, &e->bcm, &e->bim };
		for (int i = 0; i < 4; i++)
			if (cg->miss_event[i] >= 0) {
				uint64_t v = *m[i] + f->cost[cg->miss_event[i]];
				*m[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			}
	}
	return 0;
}

/* calls=, jump=, jcnd=: counts then target positions (checked, not kept). */
static int cg_transfer(struct cg_file *f, const char *key, const char *p)
{
	uint64_t pos[CG_MAX_POS];
	if (!f->have_events)
		return cg_fail(f, "%s= before events:", key);
	f->have_costs = 1;
	p = cg_skip_ws(p);
	f->pend_jcnd = strcmp(key, "jcnd") == 0;
	if (cg_number(&p, f->pend_jcnd ? '/' : 0, &f->pend_count) != 0)
		return cg_fail(f, "%s=: bad count", key);
	if (f->pend_jcnd) {
		if (*p != '/')
			return cg_fail(f, "jcnd=: TAKEN/EXECUTED expected");
		p++;
		if (cg_number(&p, 0, &f->pend_exec) != 0)
			return cg_fail(f, "jcnd=: bad executed count");
		if (f->pend_count > f->pend_exec)
			return cg_fail(f, "jcnd=: taken %llu > executed %llu",
				(unsigned long long)f->pend_count, (unsigned long long)f->pend_exec);
	}
	if (cg_positions(f, &p, pos, key) != 0)
		return -1;
	if (*cg_skip_ws(p))
		return cg_fail(f, "%s=: unexpected text after target '%.20s'", key, cg_skip_ws(p));
	f->pending = strcmp(key, "calls") == 0 ? CG_PEND_CALL : CG_PEND_JUMP;
	f->pend_line = f->lineno;
	return 0;
}

static int cg_spec(struct cg_file *f, const char *key, const char *v)
{
	static const char *const file_keys[] = { "fl", "fi", "fe", "cfi", "cfl", "jfi" };
	static const char *const fn_keys[] = { "fn", "cfn", "jfn" };
	uint32_t obj;
	if (strcmp(key, "calls") == 0 || strcmp(key, "jump") == 0 || strcmp(key, "jcnd") == 0)
		return cg_transfer(f, key, v);
	if (strcmp(key, "ob") == 0 || strcmp(key, "cob") == 0) {
		if (cg_name(f, key, v, &f->ob_ids, 1, &obj) != 0)
			return -1;
		if (key[0] == 'o')
			f->obj = obj;
		return 0;
	}
	for (size_t i = 0; i < sizeof file_keys / sizeof *file_keys; i++)
		if (strcmp(key, file_keys[i]) == 0)
			return cg_name(f, key, v, &f->fl_ids, 0, NULL);
	for (size_t i = 0; i < sizeof fn_keys / sizeof *fn_keys; i++)
		if (strcmp(key, fn_keys[i]) == 0)
			return cg_name(f, key, v, &f->fn_ids, 0, NULL);
	return cg_fail(f, "unknown specification '%s='", key);
}

static int cg_line(struct cg_file *f, char *line)
{
	char *p = (char *)cg_skip_ws(line);
	if (!*p || *p == '#')
		return 0;
	if ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '*')
		return cg_cost_line(f, p);
	if (f->pending != CG_PEND_NONE)
		return cg_fail(f, "%s at line %llu must be followed by a cost line",
			f->pending == CG_PEND_CALL ? "calls=" : "jump=/jcnd=",
			(unsigned long long)f->pend_line);
	char *k = p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		(p > k && *p >= '0' && *p <= '9'))
		p++;
	if (p == k || (*p != '=' && *p != ':'))
		return cg_fail(f, "unrecognised line '%.30s'", k);
	char sep = *p;
	*p = 0;
	if (sep == ':')
		return cg_header(f, k, p + 1);
	return cg_spec(f, k, p + 1);
}

int fl_cg_parse_stream(struct fl_cg *cg, FILE *in, const char *name, char *err,
	size_t errlen)
{
	struct cg_file f = {
		.cg = cg, .name = name ? name : "callgrind", .err = err, .errlen = errlen,
		.npos = 1, .instr_col = -1, .obj = FL_CG_NO_OBJ,
	};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	if (err && errlen)
		err[0] = 0;
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		f.lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if ((size_t)n != strlen(line)) {
			rc = cg_fail(&f, "NUL byte in line");
			break;
		}
		if ((rc = cg_line(&f, line)) != 0)
			break;
	}
	if (rc == 0 && ferror(in))
		rc = cg_fail(&f, "read error: %s", strerror(errno ? errno : EIO));
	if (rc == 0 && f.pending != CG_PEND_NONE)
		rc = cg_fail(&f, "file ends after the calls=/jump line at line %llu",
			(unsigned long long)f.pend_line);
	if (rc == 0 && !f.have_events)
		rc = cg_fail(&f, "no events: line");
	if (rc == 0 && cg->nfiles && (f.instr_col >= 0) != cg->has_instr)
		rc = cg_fail(&f, "positions differ from the first file's");
	if (rc == 0) {
		cg->has_instr = f.instr_col >= 0;
		cg->nfiles++;
		if (f.decl_src) {
			for (unsigned i = 0; i < cg->nevents; i++)
				cg->declared[i] += f.decl[i];
			cg->has_declared = 1;
		}
	}
	cg->lines += f.lineno;
	free(line);
	free(f.cost);
	free(f.decl);
	free(f.ob_ids.v);
	free(f.fl_ids.v);
	free(f.fn_ids.v);
	return rc;
}

int fl_cg_parse_file(struct fl_cg *cg, const char *path, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		fl_errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = fl_cg_parse_stream(cg, in, path, err, errlen);
	fclose(in);
	return rc;
}
