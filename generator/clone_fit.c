/* clone_fit.c: fit a variant's clone templates from its probes, and from the extra probes
 * the clone step compiles when --probe-cc is given:
 *
 * Targeted probes: a copy every template refuses (its constants cross a value class or a
 * compare order the probes all shared) is compiled as one more probe, and a template is
 * fitted from it and the variant's probes; that template takes the copy and every later
 * copy on the same side of those edges. At most MAX_TARGETED per variant and part (each
 * costs one compile, as a fallback copy does), and none for a variant whose probes line up
 * in no template. Targeted probes that line up with all six probes form a chain with one
 * template, refitted as the chain grows.
 * Hull probes (widen_ends) widen a first template that the end probes do not both line up.
 * Tie-break probes (break_ties) fit a variant whose two-valued constants tie.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_clone.h"
#include "clone_fit.h"
#include "emit_share.h"
#include "expand.h"
#include "gen.h"
#include "obj_clone.h"
#include "pattern.h"
#include "util.h"

/* A template from the probes in set, the first `chain` probes of the chain and, when text
 * is not NULL, one more (text, name, k); NULL with the reason in err if they do not line
 * up. */
static struct asm_clone *fit_set(const struct fitted *f, const struct variant *v, int set,
				 int chain, const char *text, const char *name, const int64_t *k,
				 char *err, size_t errlen)
{
	const char *tn[NPROBES + MAX_CHAIN + 1], *nn[NPROBES + MAX_CHAIN + 1];
	const int64_t *kn[NPROBES + MAX_CHAIN + 1];
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
	if (text != NULL) {
		tn[np] = text;
		nn[np] = name;
		kn[np++] = k;
	}
	return asm_clone_fit_n(tn, nn, kn, np, (size_t)v->sk.nconsts, err, errlen);
}

struct fitted fit_variant(const struct gen *g, const struct variant *v, const char *dir)
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
			struct asm_clone *ac = fit_set(&f, v, set, 0, NULL, NULL, NULL, err,
						       sizeof(err));
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

void free_fitted(struct fitted *f)
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

/* Copy the variant's training profile to the name gcc -fprofile-use looks for when it
 * compiles s_path (its .gcda): the profile matches by the function's position and control
 * flow, which every probe of a variant shares, not by its name. No profile (a variant the
 * training never ran): the probe is compiled without one, as gcc would. */
static void give_profile(const struct targeting *tg, const struct variant *v, const char *s_path)
{
	struct buf from = {0}, to = {0};
	size_t len;

	buf_printf(&from, "%s/%s_v%03d.gcda", tg->profile_dir, v->p->id, v->index);
	buf_printf(&to, "%.*s.gcda", (int)(strlen(s_path) - 2), s_path);
	char *data = read_file(from.p, &len);
	if (data) {
		write_if_changed(to.p, data, len);
		free(data);
	} else {
		remove(to.p);
	}
	buf_free(&from);
	buf_free(&to);
}

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
	if (tg->profile_dir)
		give_profile(tg, v, s_path.p);
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

/* fit_set with one more probe, its reason dropped. */
static struct asm_clone *fit_with_chain(const struct fitted *f, const struct variant *v, int set,
					int chain, const char *text, const char *name,
					const int64_t *k)
{
	char err[512];

	return fit_set(f, v, set, chain, text, name, k, err, sizeof(err));
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
int add_targeted(struct targeting *tg, struct fitted *f, const struct variant *v,
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

void widen_ends(struct targeting *tg, struct fitted *f, const struct variant *v)
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
void break_ties(struct targeting *tg, struct fitted *f, const struct variant *v)
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

