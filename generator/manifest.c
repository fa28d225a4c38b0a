/* manifest.c: manifest.json: what was generated, from what, and its structure per variant. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "expand.h"
#include "gen.h"
#include "pattern.h"
#include "util.h"

static json_t *metrics_json(const struct metrics *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "if", json_integer(m->ifs));
	json_object_set_new(o, "else", json_integer(m->elses));
	json_object_set_new(o, "switch", json_integer(m->switches));
	json_object_set_new(o, "switch_arms", json_integer(m->cases));
	json_object_set_new(o, "loops", json_integer(m->loops));
	json_object_set_new(o, "max_loop_depth", json_integer(m->max_loop_depth));
	json_object_set_new(o, "call_sites", json_integer(m->calls));
	json_object_set_new(o, "helper_call_sites", json_integer(m->helper_calls));
	json_object_set_new(o, "break", json_integer(m->breaks));
	json_object_set_new(o, "continue", json_integer(m->continues));
	json_object_set_new(o, "return", json_integer(m->returns));
	json_object_set_new(o, "statements", json_integer(m->stmts));
	return o;
}

void manifest_write(const struct gen *g, const char *path)
{
	json_t *root = json_object();
	json_t *pats = json_array();
	uint64_t tot_lines = 0, tot_bytes = 0, tot_fn = 0;
	int tot_var = 0;

	json_object_set_new(root, "generator", json_string("frontload-gen 1"));
	json_object_set_new(root, "command", json_string(g->command));
	json_object_set_new(root, "seed", json_integer((json_int_t)g->gp.seed));
	json_object_set_new(root, "copies", json_integer(g->gp.copies));
	json_error_t jerr;
	json_t *cfg = json_loads(g->config_json, 0, &jerr);
	/* configure's word (asm or obj: both clone from probes), else the generator's mode */
	json_t *cm = cfg ? json_object_get(cfg, "clone") : NULL;
	json_object_set_new(root, "clone", json_is_string(cm) ? json_copy(cm)
				: json_string(strcmp(g->mode, "asm") ? "none" : "asm"));
	json_object_set_new(root, "config", cfg ? cfg : json_object());
	for (int p = 0; p < g->np; p++) {
		const struct pattern *pt = g->ps[p];
		json_t *po = json_object();
		json_t *vars = json_array();
		int lmin = 1 << 30, lmax = 0;
		uint64_t plines = 0, pbytes = 0;
		json_object_set_new(po, "id", json_string(pt->id));
		json_object_set_new(po, "name", json_string(pt->name));
		json_object_set_new(po, "title", json_string(pt->title));
		json_object_set_new(po, "file", json_string(pt->path));
		json_object_set_new(po, "variants", json_integer(pt->variants));
		json_object_set_new(po, "functions",
				    json_integer((json_int_t)pt->variants * g->gp.copies));
		for (int v = 0; v < pt->variants; v++) {
			const struct variant *var = &g->vs[p][v];
			json_t *vo = json_object();
			json_t *kn = json_object();
			for (int k = 0; k < pt->nknobs; k++)
				json_object_set_new(kn, pt->knobs[k].name, json_integer(var->knobs[k]));
			json_object_set_new(vo, "variant", json_integer(v));
			json_object_set_new(vo, "knobs", kn);
			json_object_set_new(vo, "lines", json_integer(var->sk.lines));
			json_object_set_new(vo, "bytes", json_integer((json_int_t)var->sk.copy_bytes));
			json_object_set_new(vo, "constants_per_copy", json_integer(var->sk.nconsts));
			if (g->ms) {
				json_object_set_new(vo, "metrics", metrics_json(&g->ms[p][v]));
				json_object_set_new(vo, "signature", json_string(g->ms[p][v].signature));
			}
			json_array_append_new(vars, vo);
			lmin = var->sk.lines < lmin ? var->sk.lines : lmin;
			lmax = var->sk.lines > lmax ? var->sk.lines : lmax;
			plines += (uint64_t)var->sk.lines * g->gp.copies;
			pbytes += (uint64_t)var->sk.copy_bytes * g->gp.copies;
		}
		json_t *lo = json_object();
		json_object_set_new(lo, "min", json_integer(lmin));
		json_object_set_new(lo, "max", json_integer(lmax));
		if (pt->lines_hi) {
			json_t *exp = json_array();
			json_array_append_new(exp, json_integer(pt->lines_lo));
			json_array_append_new(exp, json_integer(pt->lines_hi));
			json_object_set_new(lo, "expected", exp);
		}
		json_object_set_new(po, "lines_per_copy", lo);
		json_object_set_new(po, "generated_lines", json_integer((json_int_t)plines));
		json_object_set_new(po, "generated_bytes", json_integer((json_int_t)pbytes));
		if (g->ms)
			json_object_set_new(po, "signature", json_string(g->ms[p][0].signature));
		json_object_set_new(po, "variant_list", vars);
		json_array_append_new(pats, po);
		tot_lines += plines;
		tot_bytes += pbytes;
		tot_fn += (uint64_t)pt->variants * g->gp.copies;
		tot_var += pt->variants;
	}
	json_t *tot = json_object();
	json_object_set_new(tot, "patterns", json_integer(g->np));
	json_object_set_new(tot, "variants", json_integer(tot_var));
	json_object_set_new(tot, "functions", json_integer((json_int_t)tot_fn));
	json_object_set_new(tot, "generated_lines", json_integer((json_int_t)tot_lines));
	json_object_set_new(tot, "generated_bytes", json_integer((json_int_t)tot_bytes));
	json_object_set_new(tot, "signatures_checked", json_boolean(g->ms != NULL));
	json_object_set_new(root, "totals", tot);
	json_object_set_new(root, "patterns", pats);
	char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	write_if_changed(path, s, strlen(s));
	free(s);
	json_decref(root);
}

void manifest_merge_clone(const char *manifest_in, char *const *reports, int nreports,
			  const char *manifest_out)
{
	json_error_t err;
	json_t *root = json_load_file(manifest_in, 0, &err);

	if (!root)
		fatal("%s:%d: %s", manifest_in, err.line, err.text);
	json_t *clone = json_object();
	json_t *parts = json_array();
	/* Counts summed over the parts; one no part reported (the object or targeted-probe ones
	 * of a build without them) stays absent rather than 0. Variant counts too: each part
	 * reports the variants whose copy 0 it holds. */
	static const char *const sums[] = {
		"copies_cloned", "copies_from_c", "copies_from_c_unsafe_value", "asm_bytes",
		"copies_to_object", "object_bytes", "object_templates", "object_templates_assembled",
		"targeted_probes", "targeted_probes_failed", "targeted_templates",
		"copies_that_made_a_template", "variants_owned", "variants_fitted", "slots",
		"variants_with_several_templates", "variants_fitted_on_end_probes", "hull_probes",
		"variants_widened_by_hull_probes", "tie_break_probes",
		"variants_fitted_with_tie_breaks"};
	enum { NSUMS = sizeof(sums) / sizeof(sums[0]) };
	json_int_t sum[NSUMS] = {0};
	int seen[NSUMS] = {0};
	json_t *not_fitted = json_array();
	for (int i = 0; i < nreports; i++) {
		json_t *r = json_load_file(reports[i], 0, &err);
		if (!r)
			fatal("%s:%d: %s", reports[i], err.line, err.text);
		for (int j = 0; j < NSUMS; j++) {
			json_t *x = json_object_get(r, sums[j]);
			seen[j] |= json_is_integer(x);
			sum[j] += json_integer_value(x);
		}
		if (i == 0) {
			json_object_set(clone, "variants", json_object_get(r, "variants"));
			json_object_set(clone, "probes_per_variant", json_object_get(r, "probes_per_variant"));
		}
		json_array_extend(not_fitted, json_object_get(r, "variants_not_fitted"));
		json_object_del(r, "variants_not_fitted");
		json_array_append_new(parts, r);
	}
	json_object_set_new(clone, "variants_not_fitted", not_fitted);
	/* Every variant's copy 0 lies in exactly one part: the parts' variants add up. */
	json_int_t nv = json_integer_value(json_object_get(clone, "variants"));
	for (int j = 0; j < NSUMS; j++)
		if (!strcmp(sums[j], "variants_owned") && seen[j] && sum[j] != nv)
			fatal("clone reports: the parts own %lld variants, the build has %lld (a "
			      "part's report missing or stale?)", (long long)sum[j], (long long)nv);
	for (int j = 0; j < NSUMS; j++)
		if (seen[j])
			json_object_set_new(clone, sums[j], json_integer(sum[j]));
	json_object_set_new(clone, "parts", parts);
	json_object_set_new(root, "clone_report", clone);
	char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	write_if_changed(manifest_out, s, strlen(s));
	free(s);
	json_decref(root);
}
