/* clone.c: the clone step: fit each variant's probes into templates and write every copy of
 * a part's shards from them, as machine code (--objects, obj_clone.h) or assembly
 * (asm_clone.h); copies no template takes are compiled from C (fallback shards).
 *
 * Targeted probes (--probe-cc): a copy every template refuses (its constants cross a value
 * class or a compare order the probes all shared) is compiled as one more probe, and a
 * template is fitted from it and the variant's probes; that template takes the copy and
 * every later copy on the same side of those edges. At most MAX_TARGETED per variant and
 * part (each costs one compile, as a fallback copy does), and none for a variant whose
 * probes line up in no template. Targeted probes that line up with all six probes form a
 * chain with one template, refitted as the chain grows. Hull probes (widen_ends) widen a
 * first template that the end probes do not both line up.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "asm_clone.h"
#include "expand.h"
#include "gen.h"
#include "emit_share.h"
#include "obj_clone.h"
#include "pattern.h"
#include "probes.h"
#include "util.h"

#define NPROBES FL_NPROBES
#define MAX_TARGETED 4

/* A variant is probed NPROBES times; any three probes whose assembly lines up can serve as
 * a clone template. gcc's code for a variant can take more than one shape depending on the
 * constants (register choice, a branch layout), so up to MAX_FITS templates are kept, each
 * from three probes that line up, and a copy is cloned from the first template whose checks
 * (value classes, orders, overlaps: asm_clone.h) its constants pass. */
#define MAX_FITS 3
#define MAX_TEMPLATES (MAX_FITS + MAX_TARGETED)
#define NTIE 2                   /* tie-break probes (break_ties) */
#define MAX_CHAIN (NTIE + MAX_TARGETED)

struct fitted {
	struct asm_clone *ac[MAX_TEMPLATES]; /* templates; none when no three probes line up */
	struct obj_tpl *ot[MAX_TEMPLATES];   /* --objects: each assembled once, NULL if refused */
	int nfits;
	int fit_done;            /* fit_variant ran (only for variants with a copy here) */
	int ot_made;             /* ot[] was tried for the first nfits_probed */
	int nfits_probed;        /* templates from the build's probes (the rest: targeted) */
	int ntargeted;           /* targeted probes compiled (this part) */
	int ends;                /* the first template spans the hull: probes 0 and 1 in it */
	int set0;                /* the probes the first template lines up (bit i: probe i) */
	int widened;             /* a hull probe widened the first template (widen_ends) */
	char *reason;            /* why the first triple did not line up */
	/* Targeted probes that lined up with every build probe. Each new one is fitted with all
	 * of them, so the chain's one template drops every order and class that the copies
	 * behind them broke, not only the newest copy's (P02's copies break orders the probes
	 * shared, each copy a different pair). */
	char *chain_text[MAX_CHAIN];
	int64_t *chain_k[MAX_CHAIN];
	char chain_name[MAX_CHAIN][64];
	int nchain;
	int chain_idx;           /* the chain's template, valid when nchain > 0 */
	int tie_broken;          /* fitted only with break_ties' probes (the chain's first) */
	int ambiguous;           /* some set of probes failed only on an ambiguous slot */
	char *text[NPROBES];     /* the probes, kept for targeted fits */
	int64_t *k[NPROBES];
	char names[NPROBES][64];
};

static struct fitted fit_variant(const struct gen *g, const struct variant *v, const char *dir)
{
	struct fitted f = {0};
	struct buf path = {0};
	char **text = f.text;
	int64_t **k = f.k;
	char (*names)[64] = f.names;
	char err[512];

	for (int i = 0; i < NPROBES; i++) {
		probe_path(&path, dir, v, i, "s");
		text[i] = read_file(path.p, NULL);
		if (!text[i])
			fatal("cannot read probe assembly %s:", path.p);
		k[i] = xmalloc(((size_t)v->sk.nconsts + 1) * sizeof(int64_t));
		expand_draw(v, &g->gp, EXPAND_PROBE + (uint32_t)i, k[i]);
		expand_symbol(v, EXPAND_PROBE + (uint32_t)i, names[i], sizeof(names[i]));
	}
	/* Subsets of the probes, largest first: the more probes a template lines up, the fewer
	 * slots are ambiguous and the wider the range its copies may take. A subset is tried
	 * only if it holds a probe no accepted template holds, so each further template covers
	 * constants the earlier ones do not (gcc giving the ends of a range another shape). */
	int covered = 0;
	for (int size = NPROBES; size >= 3 && f.nfits < MAX_FITS; size--) {
		for (int set = 0; set < (1 << NPROBES) && f.nfits < MAX_FITS; set++) {
			if (__builtin_popcount((unsigned)set) != size || !(set & ~covered))
				continue;
			const char *tn[NPROBES], *nn[NPROBES];
			const int64_t *kn[NPROBES];
			int np = 0;
			for (int i = 0; i < NPROBES; i++)
				if (set & (1 << i)) {
					tn[np] = text[i];
					nn[np] = names[i];
					kn[np++] = k[i];
				}
			struct asm_clone *ac = asm_clone_fit_n(tn, nn, kn, np, (size_t)v->sk.nconsts,
							       err, sizeof(err));
			if (!ac) {
				if (!f.reason)
					f.reason = xstrdup(err);
				f.ambiguous |= strstr(err, ASM_CLONE_AMBIGUOUS) != NULL;
				continue;
			}
			if (f.nfits == 0) {
				f.ends = (set & 3) == 3;
				f.set0 = set;
			}
			f.ac[f.nfits++] = ac;
			covered |= set;
			if (covered == (1 << NPROBES) - 1)
				goto done;
		}
	}
done:
	f.nfits_probed = f.nfits;
	buf_free(&path);
	return f;
}

static void free_fitted(struct fitted *f)
{
	for (int i = 0; i < f->nfits; i++) {
		asm_clone_free(f->ac[i]);
		obj_tpl_free(f->ot[i]);
	}
	for (int i = 0; i < NPROBES; i++) {
		free(f->text[i]);
		free(f->k[i]);
	}
	free(f->reason);
	for (int i = 0; i < f->nchain; i++) {
		free(f->chain_text[i]);
		free(f->chain_k[i]);
	}
}

/* What the clone step needs beyond struct gen to compile targeted probes. */
struct targeting {
	const char *probe_cc;    /* NULL: no targeted probes */
	const char *objects_cc;  /* NULL: templates stay assembly */
	const char *dir;         /* where their files go */
	int part;
	size_t probes, templates, failed_compiles;
	size_t hull_compiles;    /* of probes: widen_ends' */
	size_t tie_compiles;     /* of probes: break_ties' */
	json_t *refused;         /* object templates refused, with reasons */
};

/* Compile the variant with constants k as an extra probe named by probe number n (files
 * tagged kind: 'x' targeted, 'h' hull). Returns its assembly text (free it), or NULL. */
static char *compile_probe(struct targeting *tg, const struct variant *v, const int64_t *k,
			   char kind, uint32_t n, char name[64])
{
	struct buf b = {0}, c_path = {0}, s_path = {0};
	char err[512], *text = NULL;

	expand_symbol(v, EXPAND_PROBE + n, name, 64);
	buf_puts(&b, "#include \"fl_extract.h\"\n\n");
	expand_render(v, name, k, &b);
	buf_printf(&c_path, "%s/p%02d_%s_v%03d_%c%u.c", tg->dir, tg->part, v->p->id, v->index,
		   kind, n);
	buf_printf(&s_path, "%s/p%02d_%s_v%03d_%c%u.s", tg->dir, tg->part, v->p->id, v->index,
		   kind, n);
	write_if_changed(c_path.p, b.p, b.len);
	const char *args[] = {"-S", c_path.p, "-o", s_path.p, NULL};
	tg->probes++;
	if (run_command(tg->probe_cc, args, err, sizeof(err)) != 0 ||
	    !(text = read_file(s_path.p, NULL)))
		tg->failed_compiles++;
	buf_free(&b);
	buf_free(&c_path);
	buf_free(&s_path);
	return text;
}

/* A template from the probes in set, the first `chain` probes of the chain and one more
 * (text, name, k); NULL if they do not line up. */
static struct asm_clone *fit_with_chain(const struct fitted *f, const struct variant *v, int set,
					int chain, const char *text, const char *name,
					const int64_t *k)
{
	const char *tn[NPROBES + MAX_CHAIN + 1], *nn[NPROBES + MAX_CHAIN + 1];
	const int64_t *kn[NPROBES + MAX_CHAIN + 1];
	char err[512];
	int np = 0;

	for (int i = 0; i < NPROBES; i++)
		if (set & (1 << i)) {
			tn[np] = f->text[i];
			nn[np] = f->names[i];
			kn[np++] = f->k[i];
		}
	for (int i = 0; i < chain; i++) {
		tn[np] = f->chain_text[i];
		nn[np] = f->chain_name[i];
		kn[np++] = f->chain_k[i];
	}
	tn[np] = text;
	nn[np] = name;
	kn[np++] = k;
	return asm_clone_fit_n(tn, nn, kn, np, (size_t)v->sk.nconsts, err, sizeof(err));
}

static struct asm_clone *fit_with(const struct fitted *f, const struct variant *v, int set,
				  const char *text, const char *name, const int64_t *k)
{
	return fit_with_chain(f, v, set, 0, text, name, k);
}

/* Make ac template idx of f (replacing what was there), assembled when --objects. */
static void set_template(struct targeting *tg, struct fitted *f, const struct variant *v,
			 int idx, struct asm_clone *ac, const int64_t *k)
{
	char err[512];

	if (idx < f->nfits) {
		asm_clone_free(f->ac[idx]);
		obj_tpl_free(f->ot[idx]);
	} else {
		f->nfits = idx + 1;
	}
	f->ac[idx] = ac;
	f->ot[idx] = NULL;
	if (tg->objects_cc) {
		struct buf path = {0};
		buf_printf(&path, "%s/p%02d_%s_v%03d_t%d", tg->dir, tg->part, v->p->id, v->index,
			   idx);
		f->ot[idx] = obj_tpl_make(ac, k, tg->objects_cc, path.p, err, sizeof(err));
		buf_free(&path);
	}
	tg->templates++;
}

/* Keep a probe that lined up with all six in the chain (takes text). */
static void chain_add(struct fitted *f, const struct variant *v, char *text, const char *name,
		      const int64_t *k)
{
	f->chain_text[f->nchain] = text;
	f->chain_k[f->nchain] = xmalloc((size_t)v->sk.nconsts * sizeof(*k));
	memcpy(f->chain_k[f->nchain], k, (size_t)v->sk.nconsts * sizeof(*k));
	snprintf(f->chain_name[f->nchain++], sizeof(f->chain_name[0]), "%s", name);
}

/* Compile the copy with constants k as a targeted probe and fit a template from it and the
 * variant's probes (largest set first). Returns the new template's index, or -1. */
static int add_targeted(struct targeting *tg, struct fitted *f, const struct variant *v,
			const int64_t *k)
{
	char name[64];
	int n = f->ntargeted++, idx = -1, all = (1 << NPROBES) - 1;
	char *text = compile_probe(tg, v, k, 'x', 16 + (uint32_t)n, name);

	if (!text)
		return -1;
	/* With every build probe and the chain: the chain's template widens in place. */
	struct asm_clone *ac = fit_with_chain(f, v, all, f->nchain, text, name, k);
	if (ac) {
		idx = f->nchain ? f->chain_idx : f->nfits;
		set_template(tg, f, v, idx, ac, k);
		f->chain_idx = idx;
		chain_add(f, v, text, name, k);
		return idx;
	}
	/* Else with every smaller subset of the build's probes, largest first. */
	for (int size = f->nchain ? NPROBES : NPROBES - 1; size >= 2 && idx < 0; size--) {
		for (int set = 0; set < (1 << NPROBES) && idx < 0; set++) {
			if (__builtin_popcount((unsigned)set) != size)
				continue;
			ac = fit_with(f, v, set, text, name, k);
			if (!ac)
				continue;
			idx = f->nfits;
			set_template(tg, f, v, idx, ac, k);
		}
	}
	free(text);
	return idx;
}

/* Hull probes. When end probes 0 and 1 do not line up (gcc gives one end another shape:
 * P08 v24 allocates registers differently when one yield slot is at its high end), the first
 * template spans the build's random probes on that side, not the hull, and most copies fall
 * outside it. Group testing finds a large set of constants that can take the other end's
 * values without changing the shape (about 2 log2(n) compiles per constant that cannot);
 * then each constant that cannot is moved as far toward that end as keeps the shape, by
 * bisection. The last probe that lined up widens the first template. On P08 v24 at
 * --copies=1000 this took the copies compiled from C in clone part 3 from 996 to 30, with 18
 * compiles. */
#define MAX_HULL_COMPILES 32
#define HULL_STEPS 6             /* bisection steps per constant that cannot move whole */

struct hull {
	struct targeting *tg;
	struct fitted *f;
	const struct variant *v;
	const int64_t *ko;       /* the end probe outside the first template */
	int64_t *k;              /* accepted so far: the template's end, widened */
	int *cand;               /* constants where the two ends differ */
	unsigned char *moved;    /* per constant: at the other end in k */
	int compiles;
	struct asm_clone *best;  /* the first template's probes plus the widest probe that fits */
};

/* Whether the constants cand[lo..hi) can join the accepted ones at the other end, or, when
 * j >= 0, constant j can take value x. */
static int hull_try(struct hull *h, int lo, int hi, int j, int64_t x)
{
	int64_t *k = xmalloc((size_t)h->v->sk.nconsts * sizeof(*k));
	char name[64];

	memcpy(k, h->k, (size_t)h->v->sk.nconsts * sizeof(*k));
	for (int i = lo; i < hi; i++)
		k[h->cand[i]] = h->ko[h->cand[i]];
	if (j >= 0)
		k[j] = x;
	char *text = compile_probe(h->tg, h->v, k, 'h', 32 + (uint32_t)h->compiles++, name);
	struct asm_clone *ac = text ? fit_with(h->f, h->v, h->f->set0, text, name, k) : NULL;
	if (ac) {
		asm_clone_free(h->best);
		h->best = ac;
		memcpy(h->k, k, (size_t)h->v->sk.nconsts * sizeof(*k));
		for (int i = lo; i < hi; i++)
			h->moved[h->cand[i]] = 1;
	}
	free(text);
	free(k);
	return ac != NULL;
}

static void hull_grow(struct hull *h, int lo, int hi)
{
	if (h->compiles >= MAX_HULL_COMPILES || hull_try(h, lo, hi, -1, 0) || hi - lo == 1)
		return;
	hull_grow(h, lo, lo + (hi - lo) / 2);
	hull_grow(h, lo + (hi - lo) / 2, hi);
}

/* Move constant j from the template's furthest probe value toward the other end ko[j]. */
static void hull_bisect(struct hull *h, int j)
{
	const struct cspec *c = &h->v->sk.consts[j];
	int64_t to = h->ko[j], at = h->k[j];

	for (int i = 0; i < NPROBES; i++)    /* the set's value nearest the other end */
		if (h->f->set0 & (1 << i) &&
		    (to > at ? h->f->k[i][j] > at : h->f->k[i][j] < at))
			at = h->f->k[i][j];
	for (int step = 0; step < HULL_STEPS && h->compiles < MAX_HULL_COMPILES; step++) {
		int64_t mid = at + (to - at) / 2;
		while (mid != at && !expand_value_ok(c, mid))
			mid += to > at ? -1 : 1;
		if (mid == at)
			break;
		if (hull_try(h, 0, 0, j, mid))
			at = mid;
		else
			to = mid;
	}
}

static void widen_ends(struct targeting *tg, struct fitted *f, const struct variant *v)
{
	int in0 = f->set0 & 1, in1 = (f->set0 >> 1) & 1;

	if (f->nfits == 0 || in0 == in1)
		return;
	int nk = v->sk.nconsts, e = in0 ? 0 : 1;
	struct hull h = {.tg = tg, .f = f, .v = v, .ko = f->k[1 - e]};
	h.k = xmalloc((size_t)nk * sizeof(*h.k));
	memcpy(h.k, f->k[e], (size_t)nk * sizeof(*h.k));
	h.cand = xmalloc((size_t)nk * sizeof(*h.cand));
	h.moved = xcalloc((size_t)nk, 1);
	int n = 0;
	for (int j = 0; j < nk; j++)
		if (h.k[j] != h.ko[j])
			h.cand[n++] = j;
	/* The whole set is the other end probe, known not to line up: start with halves. */
	if (n > 1) {
		hull_grow(&h, 0, n / 2);
		hull_grow(&h, n / 2, n);
	}
	for (int i = 0; i < n; i++)
		if (!h.moved[h.cand[i]])
			hull_bisect(&h, h.cand[i]);
	tg->hull_compiles += (size_t)h.compiles;
	if (h.best) {
		asm_clone_free(f->ac[0]);
		f->ac[0] = h.best;
		f->widened = 1;
	}
	free(h.k);
	free(h.cand);
	free(h.moved);
}

/* Tie-break probes. A constant whose hull holds two values (P21's arm words: a band of 4,
 * the middle 2 in the hull) shows one bit per probe: at its high value or not. Two such
 * constants whose bits over the six probes are equal keep a fixed difference in every
 * probe, and complementary bits a fixed sum, so an integer derived from one fits the other
 * too and the variant has an ambiguous slot (P21 v1 and v2, all of whose copies were
 * compiled from C). Constants are grouped by their bits up to complement; two more probes
 * give the members of a group different pairs of bits (at most four per group), which
 * breaks every tie within it. The other constants keep probe 0's values. */
static void break_ties(struct targeting *tg, struct fitted *f, const struct variant *v)
{
	int nk = v->sk.nconsts, all = (1 << NPROBES) - 1;
	int64_t *kt[NTIE];
	unsigned char group[1 << NPROBES] = {0};
	char *text[NTIE] = {0}, name[NTIE][64];

	for (int t = 0; t < NTIE; t++) {
		kt[t] = xmalloc((size_t)nk * sizeof(**kt));
		memcpy(kt[t], f->k[0], (size_t)nk * sizeof(**kt));
	}
	for (int j = 0; j < nk; j++) {
		int64_t lo = f->k[0][j], hi = lo;
		for (int i = 1; i < NPROBES; i++) {
			lo = f->k[i][j] < lo ? f->k[i][j] : lo;
			hi = f->k[i][j] > hi ? f->k[i][j] : hi;
		}
		unsigned bits = 0;
		int two = lo != hi;
		for (int i = 0; i < NPROBES && two; i++) {
			two = f->k[i][j] == lo || f->k[i][j] == hi;
			bits |= (unsigned)(f->k[i][j] == hi) << i;
		}
		if (!two)
			continue;
		unsigned flip = bits & 1 ? 3u : 0u, norm = bits & 1 ? ~bits & (unsigned)all : bits;
		unsigned code = (group[norm]++ & 3u) ^ flip;
		for (int t = 0; t < NTIE; t++)
			kt[t][j] = (code >> t) & 1 ? hi : lo;
	}
	for (int t = 0; t < NTIE; t++) {
		tg->tie_compiles++;
		if (!(text[t] = compile_probe(tg, v, kt[t], 't', 48 + (uint32_t)t, name[t])))
			goto out;
	}
	chain_add(f, v, text[0], name[0], kt[0]);
	text[0] = NULL;
	struct asm_clone *ac = fit_with_chain(f, v, all, 1, text[1], name[1], kt[1]);
	if (!ac) {            /* not a tie, or not only: the probes stay as they were */
		free(f->chain_text[0]);
		free(f->chain_k[0]);
		f->nchain = 0;
		goto out;
	}
	chain_add(f, v, text[1], name[1], kt[1]);
	text[1] = NULL;
	f->ac[0] = ac;
	f->nfits = f->nfits_probed = 1;
	f->chain_idx = 0;
	f->set0 = all;
	f->ends = 1;
	f->tie_broken = 1;
out:
	for (int t = 0; t < NTIE; t++) {
		free(text[t]);
		free(kt[t]);
	}
}

/* --objects: assemble the variant's templates once, on its first copy in this part. */
static void make_objects(struct fitted *f, const struct variant *v, const int64_t *k,
			 const char *cc, const char *dir, int part, json_t *refused)
{
	struct buf path = {0};
	char err[512];

	f->ot_made = 1;
	for (int i = 0; i < f->nfits_probed; i++) {
		buf_reset(&path);
		buf_printf(&path, "%s/p%02d_%s_v%03d_t%d", dir, part, v->p->id, v->index, i);
		f->ot[i] = obj_tpl_make(f->ac[i], k, cc, path.p, err, sizeof(err));
		if (!f->ot[i] && json_array_size(refused) < 50) {
			json_t *o = json_object();
			json_object_set_new(o, "pattern", json_string(v->p->id));
			json_object_set_new(o, "variant", json_integer(v->index));
			json_object_set_new(o, "template", json_integer(i));
			json_object_set_new(o, "reason", json_string(err));
			json_array_append_new(refused, o);
		}
	}
	buf_free(&path);
}

/* --objects: the copy as machine code from the first object template that takes it. */
static int object_copy(const struct fitted *f, struct obj_shard *o, const char *name,
		       const struct job *j, const int64_t *k, int64_t **vals, size_t *valcap)
{
	for (int i = 0; i < f->nfits; i++) {
		if (!f->ot[i])
			continue;
		size_t n = asm_clone_nslots(f->ac[i]) + 1;
		if (n > *valcap) {
			*valcap = n;
			*vals = xrealloc(*vals, n * sizeof(**vals));
		}
		if (asm_clone_values(f->ac[i], k, *vals) == 0 &&
		    obj_shard_add(o, f->ot[i], *vals, name, (unsigned)j->v->p->index,
				  (unsigned)j->v->index, j->copy) == 0)
			return 0;
	}
	return -1;
}

/* Clone one copy from the first template that accepts its constants. */
static int clone_copy(const struct fitted *f, const char *name, const char *tag, const int64_t *k,
		      struct buf *out)
{
	for (int i = 0; i < f->nfits; i++)
		if (asm_clone_emit(f->ac[i], name, tag, k, out) == 0)
			return 0;
	return -1;
}

/* Write the copy into the shard object (returns 0) or the assembly (1, its registry row into
 * table), or refuse it (-1). */
static int write_copy(const struct fitted *f, struct obj_shard *obj, const struct job *j,
		      const char *name, const char *ltag, const int64_t *k, int64_t **vals,
		      size_t *valcap, struct buf *b, struct buf *table)
{
	if (obj && object_copy(f, obj, name, j, k, vals, valcap) == 0)
		return 0;
	if (clone_copy(f, name, ltag, k, b) == 0) {
		buf_printf(table, "\t.quad %s\n\t.value %d, %d\n\t.long %u\n", name,
			   j->v->p->index, j->v->index, j->copy);
		return 1;
	}
	return -1;
}

/* Probe 0's assembly size per variant ([pattern][variant], bytes): the weight of a copy. */
static size_t **probe_sizes(const struct gen *g, const char *dir)
{
	size_t **sz = xcalloc((size_t)g->np, sizeof(*sz));
	struct buf path = {0};

	for (int p = 0; p < g->np; p++) {
		sz[p] = xcalloc((size_t)g->ps[p]->variants, sizeof(**sz));
		for (int v = 0; v < g->ps[p]->variants; v++) {
			struct stat st;
			probe_path(&path, dir, &g->vs[p][v], 0, "s");
			if (stat(path.p, &st) != 0)
				fatal("cannot read probe assembly %s:", path.p);
			sz[p][v] = (size_t)st.st_size;
		}
	}
	buf_free(&path);
	return sz;
}

void emit_clone(const struct gen *g, const char *probes_s_dir, int nshards, int part, int parts,
		int nfallback, const char *objects_cc, const char *probe_cc)
{
	size_t njobs;
	struct job *jobs = all_jobs(g, &njobs);
	int nv = 0;

	for (int p = 0; p < g->np; p++)
		nv += g->ps[p]->variants;
	/* The shard split weighs a copy by the size of its variant's probe 0 (a stat, the same
	 * in every part), so a part fits only the variants it clones: fitting all 699 in each
	 * of 11 parts cost 1.7 CPU s per part at --copies=1000. */
	size_t **vbytes = probe_sizes(g, probes_s_dir);
	size_t *w = xmalloc(njobs * sizeof(*w));
	for (size_t i = 0; i < njobs; i++)
		w[i] = vbytes[jobs[i].v->p->index][jobs[i].v->index];
	for (int p = 0; p < g->np; p++)
		free(vbytes[p]);
	free(vbytes);
	size_t *start = balance(jobs, njobs, w, nshards);
	int s0 = (int)((int64_t)part * nshards / parts);
	int s1 = (int)((int64_t)(part + 1) * nshards / parts);

	/* Fit the variants with a copy in this part. A variant's facts (fitted or not, its
	 * slots, why not) are reported by the part holding its copy 0, so the manifest sums
	 * them over parts without counting a variant twice. */
	struct buf dir = {0}, path = {0}, b = {0}, what = {0}, tpldir = {0};
	buf_printf(&dir, "%s/shards", g->out_dir);
	make_dirs(dir.p);
	if (objects_cc || probe_cc) {
		buf_printf(&tpldir, "%s/templates", g->out_dir);
		make_dirs(tpldir.p);
	}
	json_t *obj_refused = json_array();
	struct targeting tg = {.probe_cc = probe_cc, .objects_cc = objects_cc, .dir = tpldir.p,
			       .part = part, .refused = obj_refused};

	struct fitted **fits = xcalloc((size_t)g->np, sizeof(*fits));
	unsigned char **owned = xcalloc((size_t)g->np, sizeof(*owned));
	int nfitted = 0, nmulti = 0, nends = 0, nwidened = 0, ntie = 0, nowned = 0;
	size_t slots = 0;
	for (int p = 0; p < g->np; p++) {
		fits[p] = xcalloc((size_t)g->ps[p]->variants, sizeof(**fits));
		owned[p] = xcalloc((size_t)g->ps[p]->variants, 1);
	}
	for (size_t i = start[s0]; i < start[s1]; i++) {
		const struct variant *v = jobs[i].v;
		struct fitted *f = &fits[v->p->index][v->index];
		if (!f->fit_done) {
			*f = fit_variant(g, v, probes_s_dir);
			f->fit_done = 1;
			/* Only for ambiguous slots: where no probes line up (clang's text) two
			 * more would not either. */
			if (probe_cc && f->nfits == 0 && f->ambiguous)
				break_ties(&tg, f, v);
			if (probe_cc)
				widen_ends(&tg, f, v);
		}
		if (jobs[i].copy != 0)
			continue;
		owned[v->p->index][v->index] = 1;
		nowned++;
		if (f->nfits) {
			nfitted++;
			nmulti += f->nfits > 1;
			nends += f->ends;
			nwidened += f->widened;
			ntie += f->tie_broken;
			slots += asm_clone_nslots(f->ac[0]);
		}
	}

	size_t ntargeted_copies = 0;
	struct obj_shard *obj = NULL;
	int64_t *vals = NULL;
	size_t valcap = 0, nobject = 0, ntpl = 0, ntpl_ok = 0;
	uint64_t obj_bytes = 0;
	struct job *fb = NULL;
	size_t nfb = 0, nunsafe = 0, ncloned = 0;
	uint64_t asm_bytes = 0, done = 0, total = start[s1] - start[s0];
	int64_t *k = NULL;
	int kcap = 0;
	for (int s = s0; s < s1; s++) {
		buf_reset(&b);
		buf_reset(&what);
		buf_printf(&what, "Assembly shard %d of %d (cloned from probes).", s, nshards);
		file_header(g, &b, "#", what.p);
		buf_puts(&b, "\t.text\n");
		struct buf table = {0};
		buf_puts(&table, "\t.section fl_registry,\"aw\"\n\t.balign 8\n");
		unsigned tag = 0;
		if (objects_cc)
			obj = obj_shard_new();
		for (size_t i = start[s]; i < start[s + 1]; i++) {
			const struct variant *v = jobs[i].v;
			struct fitted *f = &fits[v->p->index][v->index];
			char name[64], ltag[32];
			expand_symbol(v, jobs[i].copy, name, sizeof(name));
			if (v->sk.nconsts > kcap) {
				kcap = v->sk.nconsts;
				k = xrealloc(k, (size_t)kcap * sizeof(*k));
			}
			expand_draw(v, &g->gp, jobs[i].copy, k);
			snprintf(ltag, sizeof(ltag), "f%u", tag++);
			if (objects_cc && !f->ot_made) {
				make_objects(f, v, k, objects_cc, tpldir.p, part, obj_refused);
				for (int t = 0; t < f->nfits; t++) {
					ntpl++;
					ntpl_ok += f->ot[t] != NULL;
				}
			}
			int how = write_copy(f, obj, &jobs[i], name, ltag, k, &vals, &valcap, &b, &table);
			/* Only where the probes made a template: when six probes do not line up (P21's
			 * ambiguous slots, or clang's text) a seventh did not help at --copies=1000. */
			if (how < 0 && probe_cc && f->nfits_probed > 0 && f->ntargeted < MAX_TARGETED &&
			    f->nfits < MAX_TEMPLATES && add_targeted(&tg, f, v, k) >= 0) {
				how = write_copy(f, obj, &jobs[i], name, ltag, k, &vals, &valcap, &b,
						 &table);
				ntargeted_copies += how >= 0;
			}
			if (how >= 0) {
				nobject += how == 0;
				ncloned++;
			} else {
				nunsafe += f->nfits > 0;
				fb = xrealloc(fb, (nfb + 1) * sizeof(*fb));
				fb[nfb++] = jobs[i];
			}
			if ((++done & 1023) == 0)
				progress(g, "clones", done, total);
		}
		buf_add(&b, table.p, table.len);
		buf_free(&table);
		buf_puts(&b, "\t.section .note.GNU-stack,\"\",@progbits\n");
		asm_bytes += b.len;
		buf_reset(&path);
		buf_printf(&path, "%s/shard_%04d.s", dir.p, s);
		write_if_changed(path.p, b.p, b.len);
		if (obj) {
			char err[512];
			obj_bytes += obj_shard_bytes(obj);
			buf_reset(&path);
			buf_printf(&path, "%s/shard_%04d.o", dir.p, s);
			if (obj_shard_write(obj, path.p, err, sizeof(err)) != 0)
				fatal("%s: %s", path.p, err);
			obj_shard_free(obj);
			obj = NULL;
		}
	}
	progress(g, "clones", total, total);

	/* Copies that cannot be cloned are compiled from C, spread over the fallback shards. */
	size_t *fw = xmalloc((nfb + 1) * sizeof(*fw));
	for (size_t i = 0; i < nfb; i++)
		fw[i] = fb[i].v->sk.copy_bytes;
	size_t *fstart = balance(fb, nfb, fw, nfallback);
	for (int f = 0; f < nfallback; f++) {
		buf_reset(&path);
		buf_reset(&what);
		buf_printf(&path, "%s/fallback_%02d_%02d.c", dir.p, part, f);
		buf_printf(&what, "C fallback shard %d of part %d: copies the cloner could not clone.",
			   f, part);
		write_c_shard(g, fb, fstart[f], fstart[f + 1], path.p, what.p, NULL, 0);
	}

	/* The part's report, merged into the manifest by the verify step. */
	json_t *rep = json_object();
	json_object_set_new(rep, "part", json_integer(part));
	json_object_set_new(rep, "parts", json_integer(parts));
	json_object_set_new(rep, "variants", json_integer(nv));
	/* variants_owned: those whose copy 0 is here; the variant counts below are of these */
	json_object_set_new(rep, "variants_owned", json_integer(nowned));
	json_object_set_new(rep, "variants_fitted", json_integer(nfitted));
	json_object_set_new(rep, "variants_with_several_templates", json_integer(nmulti));
	json_object_set_new(rep, "probes_per_variant", json_integer(NPROBES));
	json_object_set_new(rep, "variants_fitted_on_end_probes", json_integer(nends));
	json_t *refused = json_object();
	for (size_t i = 0; i < nfb; i++) {
		const char *id = fb[i].v->p->id;
		json_t *n = json_object_get(refused, id);
		json_object_set_new(refused, id, json_integer(n ? json_integer_value(n) + 1 : 1));
	}
	json_object_set_new(rep, "copies_from_c_by_pattern", refused);
	json_object_set_new(rep, "slots", json_integer((json_int_t)slots));
	json_t *failed = json_array();
	for (int p = 0; p < g->np; p++)
		for (int v = 0; v < g->ps[p]->variants; v++)
			if (owned[p][v] && !fits[p][v].nfits_probed) {
				json_t *o = json_object();
				json_object_set_new(o, "pattern", json_string(g->ps[p]->id));
				json_object_set_new(o, "variant", json_integer(v));
				json_object_set_new(o, "reason", json_string(fits[p][v].reason));
				json_array_append_new(failed, o);
			}
	json_object_set_new(rep, "variants_not_fitted", failed);
	json_object_set_new(rep, "copies_in_part", json_integer((json_int_t)total));
	json_object_set_new(rep, "copies_cloned", json_integer((json_int_t)ncloned));
	json_object_set_new(rep, "copies_from_c", json_integer((json_int_t)nfb));
	json_object_set_new(rep, "copies_from_c_unsafe_value", json_integer((json_int_t)nunsafe));
	if (probe_cc) {
		json_object_set_new(rep, "targeted_probes",
				    json_integer((json_int_t)(tg.probes - tg.hull_compiles -
							      tg.tie_compiles)));
		json_object_set_new(rep, "hull_probes", json_integer((json_int_t)tg.hull_compiles));
		json_object_set_new(rep, "tie_break_probes",
				    json_integer((json_int_t)tg.tie_compiles));
		json_object_set_new(rep, "variants_fitted_with_tie_breaks", json_integer(ntie));
		json_object_set_new(rep, "variants_widened_by_hull_probes", json_integer(nwidened));
		json_object_set_new(rep, "targeted_probes_failed",
				    json_integer((json_int_t)tg.failed_compiles));
		json_object_set_new(rep, "targeted_templates", json_integer((json_int_t)tg.templates));
		/* copies a targeted template took on the spot; later ones count as cloned only */
		json_object_set_new(rep, "copies_that_made_a_template",
				    json_integer((json_int_t)ntargeted_copies));
	}
	json_object_set_new(rep, "asm_bytes", json_integer((json_int_t)asm_bytes));
	if (objects_cc) {
		json_object_set_new(rep, "copies_to_object", json_integer((json_int_t)nobject));
		json_object_set_new(rep, "object_bytes", json_integer((json_int_t)obj_bytes));
		json_object_set_new(rep, "object_templates", json_integer((json_int_t)ntpl));
		json_object_set_new(rep, "object_templates_assembled",
				    json_integer((json_int_t)ntpl_ok));
		json_object_set_new(rep, "object_templates_refused", json_incref(obj_refused));
	}
	json_decref(obj_refused);
	char *js = json_dumps(rep, JSON_INDENT(2) | JSON_SORT_KEYS);
	buf_reset(&path);
	buf_printf(&path, "%s/clone_%02d.json", g->out_dir, part);
	write_if_changed(path.p, js, strlen(js));
	free(js);
	json_decref(rep);

	for (int p = 0; p < g->np; p++) {
		for (int v = 0; v < g->ps[p]->variants; v++)
			free_fitted(&fits[p][v]);
		free(fits[p]);
		free(owned[p]);
	}
	free(fits);
	free(owned);
	free(fw);
	free(fstart);
	free(fb);
	free(k);
	free(vals);
	free(w);
	free(start);
	free(jobs);
	buf_free(&dir);
	buf_free(&tpldir);
	buf_free(&path);
	buf_free(&b);
	buf_free(&what);
}
