/* validate_leaf_sim.c: the simulated window of `validate` on the running leaf, per object
 * kind and per pool: the callgrind dumps parsed per thread, the executed instructions
 * classified (Capstone, or objdump), and the rows' counts and mix. */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgparse.h"
#include "disasm.h"
#include "discache.h"
#include "mix.h"
#include "mutil.h"
#include "objects.h"
#include "patmap.h"
#include "validate_leaf.h"

/* ---- the simulated window: per object kind and per pool ---- */

static uint64_t vl_ev(const struct fl_cg *cg, const char *name)
{
	int e = fl_cg_event(cg, name);
	return e >= 0 ? cg->totals[e] : 0;
}

/* Fill row from cg (its totals) and the mix over the disassembled objects. */
static int vl_row_fill(struct vl_row *row, const char *name, const struct fl_cg *cg,
	struct fl_mix_obj *objs, size_t nobjs, char *err, size_t errlen)
{
	snprintf(row->name, sizeof row->name, "%s", name);
	row->ir = vl_ev(cg, "Ir");
	row->i1mr = vl_ev(cg, "I1mr");
	row->ilmr = vl_ev(cg, "ILmr");
	row->bcm = vl_ev(cg, "Bcm");
	row->bim = vl_ev(cg, "Bim");
	if (row->ir == 0)
		return 0;
	if (fl_mix_compute(&row->mix, cg, objs, nobjs, err, errlen) != 0)
		return -1;
	row->have_mix = 1;
	return 0;
}

/* A view of cg holding only the objects of one kind: its instructions and summed totals
 * (the object rows of cgparse). insns and totals are allocated here. */
static int vl_kind_view(const struct fl_cg *cg, enum fm_obj_kind k, struct fl_cg *v)
{
	*v = *cg;
	v->insns = malloc((cg->ninsns ? cg->ninsns : 1) * sizeof *v->insns);
	v->totals = calloc(cg->nevents ? cg->nevents : 1, sizeof *v->totals);
	v->ninsns = 0;
	v->slots = NULL;
	v->nslots = 0;
	if (v->insns == NULL || v->totals == NULL) {
		free(v->insns);
		free(v->totals);
		return -1;
	}
	for (size_t i = 0; i < cg->ninsns; i++) {
		uint32_t o = cg->insns[i].obj;
		enum fm_obj_kind ok = o == FL_CG_NO_OBJ ? FM_OBJ_UNKNOWN :
			fm_obj_classify(cg->objs[o]);
		if (ok == k)
			v->insns[v->ninsns++] = cg->insns[i];
	}
	for (uint32_t o = 0; o < cg->nobjs; o++)
		if (fm_obj_classify(cg->objs[o]) == k)
			for (unsigned e = 0; e < cg->nevents; e++)
				v->totals[e] += fl_cg_obj_total(cg, o, (int)e);
	if (k == FM_OBJ_UNKNOWN)
		/* Cost lines before any ob=: the process total less every object's. */
		for (unsigned e = 0; e < cg->nevents; e++) {
			uint64_t s = 0;
			for (uint32_t o = 0; o < cg->nobjs; o++)
				s += fl_cg_obj_total(cg, o, (int)e);
			v->totals[e] = cg->totals[e] - s;
		}
	return 0;
}

/* The generated library's rows by pattern: each a view of cg holding one pattern's
 * addresses (or the library's shared code), its totals summed from their per-address
 * counts (cgparse.h), so its Ir, misses and mix are that code's alone. A library whose
 * symbols cannot be read leaves the split out (have_pat 0, pat_why), not the window. */
static int vl_pattern_rows(const struct fl_cg *cg, struct vl_sim *s, struct fl_mix_obj *objs,
	size_t nobjs, char *err, size_t errlen)
{
	struct fm_patmap *pm = calloc(cg->nobjs ? cg->nobjs : 1, sizeof *pm);
	unsigned char *pat = malloc(cg->ninsns ? cg->ninsns : 1);
	size_t count[FM_PAT_MAX + 1] = { 0 };
	int rc = -1, ngen = 0;
	const unsigned none = FM_PAT_MAX + 1;

	if (pm == NULL || pat == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (cg->ir_event < 0) {
		snprintf(s->pat_why, sizeof s->pat_why, "the callgrind data has no Ir event");
		rc = 0;
		goto out;
	}
	for (uint32_t o = 0; o < cg->nobjs; o++) {
		if (fm_obj_classify(cg->objs[o]) != FM_OBJ_GENERATED ||
		    fl_cg_obj_total(cg, o, cg->ir_event) == 0)
			continue;
		if (fm_patmap_load(&pm[o], cg->objs[o], s->pat_why, sizeof s->pat_why) != 0) {
			rc = 0;
			goto out;
		}
		ngen++;
	}
	if (ngen == 0) {
		snprintf(s->pat_why, sizeof s->pat_why, "no generated code ran in the window");
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < cg->ninsns; i++) {
		uint32_t o = cg->insns[i].obj;
		unsigned p = o != FL_CG_NO_OBJ && pm[o].n ? fm_patmap_of(&pm[o], cg->insns[i].addr) :
			none;
		pat[i] = (unsigned char)p;
		if (p != none)
			count[p]++;
	}
	for (unsigned p = 0; p <= FM_PAT_MAX; p++) {
		if (count[p] == 0)
			continue;
		struct fl_cg v = *cg;
		v.insns = malloc(count[p] * sizeof *v.insns);
		v.totals = calloc(cg->nevents ? cg->nevents : 1, sizeof *v.totals);
		v.ninsns = 0;
		v.slots = NULL;
		v.nslots = 0;
		if (v.insns == NULL || v.totals == NULL) {
			free(v.insns);
			free(v.totals);
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < cg->ninsns; i++) {
			const struct fl_cg_insn *e = &cg->insns[i];
			if (pat[i] != p)
				continue;
			v.insns[v.ninsns++] = *e;
			v.totals[cg->ir_event] += e->ir;
			const uint32_t miss[4] = { e->i1mr, e->ilmr, e->bcm, e->bim };
			for (int k = 0; k < 4; k++)
				if (cg->miss_event[k] >= 0)
					v.totals[cg->miss_event[k]] += miss[k];
		}
		char name[16];
		if (p == FM_PAT_SHARED)
			snprintf(name, sizeof name, "shared");
		else
			snprintf(name, sizeof name, "P%02u", p + 1);
		int r = vl_row_fill(&s->pat[p], name, &v, objs, nobjs, err, errlen);
		free(v.insns);
		free(v.totals);
		if (r != 0)
			goto out;
	}
	s->have_pat = 1;
	rc = 0;
out:
	for (uint32_t o = 0; pm && o < cg->nobjs; o++)
		fm_patmap_free(&pm[o]);
	free(pm);
	free(pat);
	return rc;
}

static const char *vl_base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Parse the window's per-thread dumps of every simulated leaf (DIR/sim*.cg.1-TT),
 * disassemble what ran, and fill the rows. 0, or -1 with err. */
int vl_sim_analyse(const char *dir, struct vl_sim *s, const struct vl_args *a,
	char *err, size_t errlen)
{
	struct fl_cg all, pc[FM_POOL_N];
	struct fl_dis *dis = NULL;
	struct fl_mix_obj *objs = NULL;
	size_t nobjs = 0;
	char pat[4200];
	glob_t g;
	int rc = -1;

	memset(s, 0, sizeof *s);
	fl_cg_init(&all);
	for (int p = 0; p < FM_POOL_N; p++)
		fl_cg_init(&pc[p]);
	snprintf(pat, sizeof pat, "%s/sim*.cg.1-*", dir);
	if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
		snprintf(err, errlen, "no callgrind dump of the window (%.1000s)", pat);
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int pool = fm_pool_of_cg_file(g.gl_pathv[i]);
		if (pool < 0) {
			snprintf(err, errlen, "%s: %s", g.gl_pathv[i], strerror(errno));
			goto out;
		}
		s->threads[pool]++;
		if (fl_cg_parse_file(&all, g.gl_pathv[i], err, errlen) != 0 ||
		    fl_cg_parse_file(&pc[pool], g.gl_pathv[i], err, errlen) != 0)
			goto out;
	}
	if (fl_cg_sort(&all) != 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	uint64_t total = vl_ev(&all, "Ir");
	dis = calloc(all.nobjs + 1, sizeof *dis);
	objs = calloc(all.nobjs + 1, sizeof *objs);
	if (dis == NULL || objs == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	double t_dis = fm_now();
	vl_say(a, "simulated run: classifying the executed instructions (%s)", a->objdump ?
		"objdump" : "Capstone");
	for (uint32_t o = 0; o < all.nobjs; o++) {
		uint64_t ir = fl_cg_obj_total(&all, o, all.ir_event);
		if (ir == 0 || (double)ir < 0.001 * (double)total || access(all.objs[o], R_OK))
			continue;
		if (fm_dis_executed(&all, o, a->objdump, &dis[nobjs], err, errlen) != 0)
			goto out;
		objs[nobjs].dis = &dis[nobjs];
		objs[nobjs].ob_name = all.objs[o];
		nobjs++;
		size_t l = strlen(s->objects);
		snprintf(s->objects + l, sizeof s->objects - l, "%s%s", l ? ", " : "",
			vl_base(all.objs[o]));
	}
	s->dis_s = fm_now() - t_dis;
	if (vl_row_fill(&s->all, "process", &all, objs, nobjs, err, errlen) != 0)
		goto out;
	s->classified_share = s->all.mix.ir_hw ? (double)s->all.mix.insns /
		(double)s->all.mix.ir_hw : NAN;
	for (int k = 0; k < FM_OBJ_N; k++) {
		struct fl_cg v;
		if (vl_kind_view(&all, (enum fm_obj_kind)k, &v) != 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		int r = vl_row_fill(&s->kind[k], fm_obj_kind_name((enum fm_obj_kind)k), &v, objs,
			nobjs, err, errlen);
		free(v.insns);
		free(v.totals);
		if (r != 0)
			goto out;
	}
	if (vl_pattern_rows(&all, s, objs, nobjs, err, errlen) != 0)
		goto out;
	for (int p = 0; p < FM_POOL_N; p++) {
		if (s->threads[p] == 0)
			continue;
		if (fl_cg_sort(&pc[p]) != 0 || vl_row_fill(&s->pool[p],
		    fm_pool_name((enum fm_pool)p), &pc[p], objs, nobjs, err, errlen) != 0)
			goto out;
	}
	rc = 0;
out:
	globfree(&g);
	for (size_t i = 0; i < nobjs; i++)
		fl_dis_free(&dis[i]);
	free(dis);
	free(objs);
	fl_cg_free(&all);
	for (int p = 0; p < FM_POOL_N; p++)
		fl_cg_free(&pc[p]);
	return rc;
}
