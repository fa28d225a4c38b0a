/* clone.c: the clone step: fit each variant's probes into templates (clone_fit.c) and write
 * every copy of a part's shards from them, as machine code (--objects, obj_clone.h) or
 * assembly (asm_clone.h); copies no template takes are compiled from C (fallback shards).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "asm_clone.h"
#include "clone_fit.h"
#include "expand.h"
#include "gen.h"
#include "emit_share.h"
#include "obj_clone.h"
#include "pattern.h"
#include "util.h"

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

/* The weight of each job in [j0, j1): its variant's probe 0 assembly size (bytes, a stat). */
static size_t *probe_weights(const char *dir, const struct job *jobs, size_t j0, size_t j1)
{
	size_t *w = xmalloc((j1 - j0 + 1) * sizeof(*w));
	struct buf path = {0};
	const struct variant *last = NULL;
	size_t sz = 0;

	for (size_t i = j0; i < j1; i++) {
		if (jobs[i].v != last) {
			struct stat st;
			last = jobs[i].v;
			probe_path(&path, dir, last, 0, "s");
			if (stat(path.p, &st) != 0)
				fatal("cannot read probe assembly %s:", path.p);
			sz = (size_t)st.st_size;
		}
		w[i - j0] = sz;
	}
	buf_free(&path);
	return w;
}

void emit_clone(const struct gen *g, const char *probes_s_dir, int nshards, int part, int parts,
		int nfallback, const char *objects_cc, const char *probe_cc,
		const char *profile_dir)
{
	size_t njobs;
	struct job *jobs = all_jobs(g, &njobs);
	int nv = 0;

	for (int p = 0; p < g->np; p++)
		nv += g->ps[p]->variants;
	/* A part is a run of copies fixed by count alone (configure lists the same run's probes
	 * as the part's inputs), and its shards split that run by the size of each variant's
	 * probe 0. So a part reads only its own variants' probes: an edit to one pattern
	 * re-clones the parts holding its copies, not all of them, and a part fits only the
	 * variants it clones (fitting all 699 in each of 11 parts cost 1.7 CPU s per part at
	 * --copies=1000). */
	size_t j0 = (size_t)((uint64_t)part * njobs / (uint64_t)parts);
	size_t j1 = (size_t)((uint64_t)(part + 1) * njobs / (uint64_t)parts);
	int s0 = (int)((int64_t)part * nshards / parts);
	int s1 = (int)((int64_t)(part + 1) * nshards / parts);
	size_t *w = probe_weights(probes_s_dir, jobs, j0, j1);
	size_t *local = balance(jobs + j0, j1 - j0, w, s1 - s0);
	free(w);
	/* start[s] for s in [s0, s1]: shard s's first job, in the whole job list */
	size_t *start = xcalloc((size_t)nshards + 1, sizeof(*start));
	for (int s = s0; s <= s1; s++)
		start[s] = j0 + local[s - s0];
	free(local);

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
			       .profile_dir = profile_dir,
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
	free(start);
	free(jobs);
	buf_free(&dir);
	buf_free(&tpldir);
	buf_free(&path);
	buf_free(&b);
	buf_free(&what);
}
