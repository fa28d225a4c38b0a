/* study_plan.c: frontload-measure study's model and point plan: the native cost model,
 * the point list, each point's plan (functions, code bytes, reuse), duplicates and the
 * budget; separate from the options, the run and the report. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "mutil.h"
#include "simrun.h"
#include "study.h"

#define ST_SMALL_PLAN 64   /* functions of the small plan the cost model also times */

static int st_native(const struct fm_run *r0, const char *tag, const char *calls,
	const char *functions, struct fm_native *out)
{
	struct fm_run r = *r0;
	char err[2048];

	r.tag = tag;
	r.warmup = 0;
	r.requests = 2;
	fm_run_knob(&r, calls ? "calls-per-request" : "plan-only", calls);
	if (functions)
		fm_run_knob(&r, "active-functions", functions);
	if (fm_native_run(&r, out, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	return 0;
}

/* The native extract stage's CPU a call (wall-time differences of short runs are noise);
 * 1 us when it cannot be read. */
static double st_call_s(const struct fm_native *n)
{
	double v = fm_json_num(n->summary, "stages.extract.cpu_ns") / 1e9 /
		fm_json_num(n->summary, "extract_calls");

	return isfinite(v) && v >= 1e-9 ? v : 1e-6;
}

int st_model(const struct fm_run *r0, struct st_model *m)
{
	struct fm_native lo, hi, all, small;
	char nsmall[32];

	snprintf(nsmall, sizeof(nsmall), "%d", ST_SMALL_PLAN);
	if (st_native(r0, "model-lo", "1000", NULL, &lo) != 0)
		return -1;
	if (st_native(r0, "model-hi", "50000", NULL, &hi) != 0) {
		fm_native_free(&lo);
		return -1;
	}
	if (st_native(r0, "model-plan", NULL, NULL, &all) != 0) {
		fm_native_free(&lo);
		fm_native_free(&hi);
		return -1;
	}
	/* A plan too small for the library's plan keeps the whole plan's cost. */
	if (st_native(r0, "model-small", "50000", nsmall, &small) != 0) {
		small = hi;
		small.summary = json_incref(hi.summary);
	}
	/* Per call: the whole plan's (cold: a large plan misses every cache natively too) and
	 * a small plan's (warm); the rest of a run is the low run's wall time. */
	m->per_call_s = st_call_s(&hi);
	m->small_call_s = fmin(st_call_s(&small), m->per_call_s);
	fm_native_free(&small);
	m->base_s = lo.wall_s;
	m->lib_functions = fm_json_num(lo.summary, "library_functions");
	m->lib_copies = fm_json_num(lo.summary, "copies");
	m->plan_functions = fm_json_num(all.summary, "plan_functions");
	m->plan_bytes = fm_json_num(all.summary, "plan.code_bytes");
	fm_native_free(&lo);
	fm_native_free(&hi);
	fm_native_free(&all);
	if (!(m->plan_functions >= 1) || !(m->plan_bytes >= 1)) {
		fprintf(stderr, FM_PROG ": frontload-simreq --plan-only gave no code bytes\n");
		return -1;
	}
	return 0;
}

double st_call_cost(const struct st_model *m, double nfuncs)
{
	double t;

	if (!(m->plan_functions > ST_SMALL_PLAN) || nfuncs <= ST_SMALL_PLAN)
		return nfuncs <= ST_SMALL_PLAN ? m->small_call_s : m->per_call_s;
	t = log(nfuncs / ST_SMALL_PLAN) / log(m->plan_functions / ST_SMALL_PLAN);
	return m->small_call_s + fmin(1, t) * (m->per_call_s - m->small_call_s);
}

/* The default footprints stop at the library: larger ones become the whole library. */
void st_cap_footprints(struct st_args *a, const struct st_model *m)
{
	size_t k = 0;

	if (a->bytes_given)
		return;
	for (size_t i = 0; i < a->nbytes; i++)
		if ((double)a->bytes[i] < m->plan_bytes)
			a->bytes[k++] = a->bytes[i];
	a->bytes[k++] = (uint64_t)m->plan_bytes;
	a->nbytes = k;
}

void st_order_str(double alpha, char *buf, size_t len)
{
	if (alpha < 0)
		snprintf(buf, len, "flat");
	else
		snprintf(buf, len, "zipf a=%g", alpha);
}

/* A new point of kind; its plan is found later (st_plan_facts). */
static struct st_point *st_add(struct st_point *p, size_t *n, int kind, uint64_t want,
	double alpha, uint64_t calls, unsigned i1)
{
	struct st_point *q = &p[(*n)++];

	memset(q, 0, sizeof(*q));
	q->kind = kind;
	q->want_bytes = want;
	q->alpha = alpha;
	q->calls = calls;
	q->i1_bytes = i1;
	q->code = q->hot = q->cold = NAN;
	for (int k = 0; k < 3; k++)
		q->reuse_fn[k] = q->reuse_b[k] = NAN;
	return q;
}

void st_leaf_footprints(struct st_args *a, const struct fm_run *r0)
{
	uint64_t want[ST_MAX_LIST];
	size_t nwant = 0;

	if (a->no_leaf) {
		a->nleaf = 0;
		return;
	}
	if (a->leaf_text) {
		memcpy(want, a->leaf_bytes, a->nleaf * sizeof(want[0]));
		nwant = a->nleaf;
	} else {
		want[nwant++] = r0->geo.i1.size;
		want[nwant++] = r0->geo.ll.size;
	}
	a->nleaf = 0;
	for (size_t w = 0; w < nwant; w++) {
		size_t best = 0;

		for (size_t i = 1; i < a->nbytes; i++)
			if (fabs(log((double)a->bytes[i] / (double)want[w])) <
			    fabs(log((double)a->bytes[best] / (double)want[w])))
				best = i;
		int dup = 0;
		for (size_t k = 0; k < a->nleaf; k++)
			dup |= a->leaf_bytes[k] == a->bytes[best];
		if (!dup)
			a->leaf_bytes[a->nleaf++] = a->bytes[best];
	}
}

/* The point list: sweep points, the leaf points (the sweep's at the first calls value and
 * the leaf footprints), then the curves. */
size_t st_points(const struct st_args *a, const struct fm_run *r0,
	struct st_point *p)
{
	size_t n = 0;

	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t i = 0; i < a->nbytes; i++)
			for (size_t k = 0; k < a->ncalls && n < ST_MAX_POINTS; k++)
				st_add(p, &n, ST_SWEEP, a->bytes[i], a->alphas[j], a->calls[k],
					r0->geo.i1.size);
	for (size_t j = 0; j < a->nalphas; j++)
		for (size_t i = 0; i < a->nleaf && n < ST_MAX_POINTS; i++) {
			struct st_point *q = st_add(p, &n, ST_LEAF, a->leaf_bytes[i], a->alphas[j],
				a->calls[0], r0->geo.i1.size);

			/* The leaf's calls per request: extractors per story x the stories. */
			q->eps = (a->calls[0] + ST_LEAF_STORIES / 2) / ST_LEAF_STORIES;
			if (q->eps == 0)
				q->eps = 1;
			q->lreq = a->leaf_requests;
		}
	for (size_t j = 0; !a->no_mrc && j < a->nalphas; j++)
		for (size_t i = 0; i < a->nsizes && n < ST_MAX_POINTS; i++)
			st_add(p, &n, ST_MRC, a->mrc_bytes, a->alphas[j], a->mrc_calls,
				(unsigned)(a->sizes_kib[i] * 1024));
	return n;
}

/* A sweep (leaf) point whose plan is an earlier sweep (leaf) point's (same functions,
 * order, calls) is dropped as a duplicate. */
void st_dedupe(struct st_point *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; p[i].kind != ST_MRC && !p[i].skipped && k < i; k++)
			if (p[k].kind == p[i].kind && p[k].calls == p[i].calls &&
			    p[k].alpha == p[i].alpha && p[k].nfuncs == p[i].nfuncs && !p[k].skipped &&
			    !p[k].failed) {
				char o[32];

				st_order_str(p[i].alpha, o, sizeof(o));
				p[i].skipped = 2;
				snprintf(p[i].why, sizeof(p[i].why), "same plan as --footprint %llu "
					"(%llu functions, %s)", (unsigned long long)p[k].want_bytes,
					(unsigned long long)p[i].nfuncs, o);
			}
}

void st_shard(struct st_point *p, size_t n, unsigned shard_k, unsigned shard_n)
{
	for (size_t i = 0; i < n; i++)
		if (i % shard_n != shard_k && !p[i].skipped && !p[i].failed) {
			p[i].skipped = 3;
			snprintf(p[i].why, sizeof(p[i].why), "another shard's point: shard %zu/%u "
				"measures it (this is %u/%u)", i % shard_n, shard_n, shard_k, shard_n);
		}
}

/* Estimates; drop the most expensive points until the budget fits. */
void st_budget(const struct st_args *a, const struct st_model *m,
	struct st_point *p, size_t n, double *total_s)
{
	for (size_t i = 0; i < n; i++) {
		struct st_point *q = &p[i];
		double native = m->base_s + st_call_cost(m, (double)q->nfuncs) *
			(double)q->calls * (double)(a->warmup + a->requests);

		q->eta_s = fm_sim_eta(native, (double)q->nfuncs, (double)q->calls, a->warmup,
			a->requests);
		/* Mix runs also disassemble and join: about a fifth more. */
		if (q->kind != ST_MRC)
			q->eta_s *= 1.2;
		if (q->kind == ST_LEAF)
			q->eta_s = st_leaf_eta(m, q);
	}
	/* Fit the budget: drop the most expensive points first. */
	for (;;) {
		double sum = 0;
		size_t worst = n;

		for (size_t i = 0; i < n; i++) {
			if (p[i].skipped || p[i].failed || p[i].done)
				continue;
			sum += p[i].eta_s;
			if (worst == n || p[i].eta_s > p[worst].eta_s)
				worst = i;
		}
		*total_s = sum / (double)a->jobs;
		if (*total_s <= a->budget_min * 60 || worst == n)
			break;
		char d[32];

		p[worst].skipped = 1;
		snprintf(p[worst].why, sizeof(p[worst].why), "estimated %s alone, over the "
			"--budget-min %g budget", fm_dur_str(p[worst].eta_s, d, sizeof(d)),
			a->budget_min);
	}
}

/* Set the point's plan knobs on its run: the footprint in bytes (for --plan-only) or the
 * active functions it was found to be. */
void st_plan_knobs(struct st_point *q, struct fm_run *r, int by_bytes)
{
	if (by_bytes)
		snprintf(q->nfs, sizeof(q->nfs), "%llu", (unsigned long long)q->want_bytes);
	else
		snprintf(q->nfs, sizeof(q->nfs), "%llu", (unsigned long long)q->nfuncs);
	snprintf(q->als, sizeof(q->als), "%.17g", q->alpha < 0 ? 0 : q->alpha);
	fm_run_knob(r, by_bytes ? "footprint-bytes" : "active-functions", q->nfs);
	fm_run_knob(r, "dispatch", q->alpha < 0 ? "flat" : "zipf");
	fm_run_knob(r, "zipf-alpha", q->als);
}

/* Each point's plan: the fewest functions whose code reaches its footprint, their code
 * bytes and reuse profile, from a native --plan-only --footprint-bytes run per distinct
 * (footprint, order); points sharing one copy it. A point whose plan fails is failed.
 * Returns the plans that failed. */
size_t st_plan_facts(struct st_point *p, size_t n, const struct fm_run *r0)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		struct st_point *q = &p[i], *same = NULL;
		struct fm_native nat;
		struct fm_run r = *r0;
		char err[2048], tag[32];

		if (q->skipped)
			continue;
		for (size_t k = 0; k < i && same == NULL; k++)
			if (!isnan(p[k].code) && p[k].want_bytes == q->want_bytes &&
			    p[k].alpha == q->alpha)
				same = &p[k];
		if (same) {
			q->nfuncs = same->nfuncs;
			q->code = same->code;
			q->hot = same->hot;
			q->cold = same->cold;
			memcpy(q->reuse_fn, same->reuse_fn, sizeof(q->reuse_fn));
			memcpy(q->reuse_b, same->reuse_b, sizeof(q->reuse_b));
			continue;
		}
		snprintf(tag, sizeof(tag), "plan%03zu", i);
		r.tag = tag;
		st_plan_knobs(q, &r, 1);
		fm_run_knob(&r, "plan-only", NULL);
		if (fm_native_run(&r, &nat, err, sizeof(err)) != 0) {
			q->failed = 1;
			snprintf(q->why, sizeof(q->why), "plan: %.2000s", err);
			bad++;
			continue;
		}
		q->nfuncs = (uint64_t)fm_json_num(nat.summary, "plan_functions");
		q->code = fm_json_num(nat.summary, "plan.code_bytes");
		q->hot = fm_json_num(nat.summary, "plan.code_bytes_hot");
		q->cold = fm_json_num(nat.summary, "plan.code_bytes_cold");
		for (int k = 0; k < 3; k++) {
			json_t *rj = json_object_get(json_object_get(nat.summary, "plan"), "reuse");
			json_t *f = json_array_get(json_object_get(rj, "functions"), (size_t)k);
			json_t *b = json_array_get(json_object_get(rj, "hot_bytes"), (size_t)k);

			q->reuse_fn[k] = f ? json_number_value(f) : NAN;
			q->reuse_b[k] = b ? json_number_value(b) : NAN;
		}
		fm_native_free(&nat);
	}
	return bad;
}
