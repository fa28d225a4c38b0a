/* clone_vs_c.c: the clone-versus-C check per variant, for tests/bench/clone_vs_c.sh.
 *
 * usage: clone-vs-c LIB REF MANIFEST
 *   LIB       the extractor library (libfrontload-extract.so of a build)
 *   REF       copies of the same build compiled straight from C (frontload-gen generate
 *             --mode c --sample-cover ..., linked with the build's helpers)
 *   MANIFEST  the build's manifest.json (which variants the cloner fitted)
 * Runs every REF copy and its LIB twin over the contexts of tests/clone_cmp.h, then prints
 * one line per variant (fitted or compiled from C, copies checked, copies that differed,
 * the first difference) and a total. Exit 0 when no copy differed and every variant had a
 * copy checked, 1 otherwise, 2 on a usage or load error.
 */
#include <dlfcn.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clone_cmp.h"

typedef const struct fl_fn_entry *(*registry_fn)(size_t *);
typedef const struct fl_pattern_info *(*patterns_fn)(size_t *);

struct lib {
	void *h;
	const struct fl_fn_entry *tab;
	size_t n;
	const struct fl_pattern_info *pats;
	size_t npats;
};

static int lib_open(struct lib *l, const char *path)
{
	l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->h) {
		fprintf(stderr, "clone-vs-c: %s\n", dlerror());
		return -1;
	}
	registry_fn r = (registry_fn)dlsym(l->h, "fl_registry");
	patterns_fn p = (patterns_fn)dlsym(l->h, "fl_patterns");
	if (!r || !p) {
		fprintf(stderr, "clone-vs-c: %s: no fl_registry or fl_patterns\n", path);
		return -1;
	}
	l->tab = r(&l->n);
	l->pats = p(&l->npats);
	return 0;
}

/* 1 when the manifest's clone report does not list (id, v) as not fitted; 0 when it does
 * or the build cloned nothing (--clone=none: no report). */
static int fitted(json_t *m, const char *id, unsigned v)
{
	json_t *rep = json_object_get(m, "clone_report"), *x;
	size_t i;
	if (!json_is_object(rep))
		return 0;
	json_array_foreach(json_object_get(rep, "variants_not_fitted"), i, x) {
		const char *p = json_string_value(json_object_get(x, "pattern"));
		if (p && !strcmp(p, id) && json_integer_value(json_object_get(x, "variant")) == v)
			return 0;
	}
	return 1;
}

struct tally {
	unsigned checked, differed;
	char first[600];   /* the first difference, or "" */
};

int main(int argc, char **argv)
{
	struct lib l, ref;
	struct clone_index ix;
	json_error_t jerr;
	char err[256], why[512];

	if (argc != 4) {
		fprintf(stderr, "usage: clone-vs-c LIB REF MANIFEST\n");
		return 2;
	}
	json_t *m = json_load_file(argv[3], 0, &jerr);
	if (!m) {
		fprintf(stderr, "clone-vs-c: %s: %s\n", argv[3], jerr.text);
		return 2;
	}
	if (lib_open(&l, argv[1]) || lib_open(&ref, argv[2]))
		return 2;
	if (clone_index_build(&ix, l.tab, l.n, l.pats, l.npats) != 0) {
		fprintf(stderr, "clone-vs-c: %s: registry does not match its pattern table\n", argv[1]);
		return 2;
	}
	struct clone_cmp *c = clone_cmp_new(err, sizeof(err));
	if (!c) {
		fprintf(stderr, "clone-vs-c: %s\n", err);
		return 2;
	}
	struct tally *t = calloc(ix.nvariants, sizeof(*t));
	for (size_t r = 0; r < ref.n; r++) {
		const struct fl_fn_entry *e = &ref.tab[r];
		long i = clone_index_find(&ix, e);
		if (i < 0) {
			fprintf(stderr, "clone-vs-c: %s copy %u/%u/%u is not in %s\n", argv[2],
				e->pattern, e->variant, e->copy, argv[1]);
			return 2;
		}
		struct tally *v = &t[clone_index_variant(&ix, e)];
		uint64_t key = (uint64_t)e->pattern << 48 | (uint64_t)e->variant << 32 | e->copy;
		v->checked++;
		if (clone_cmp_run(c, e->fn, l.tab[i].fn, key, why, sizeof(why)) != 0 &&
		    !v->differed++)
			snprintf(v->first, sizeof(v->first), "copy %u: %s", e->copy, why);
	}
	unsigned nfit = 0, fit_checked = 0, checked = 0, differed = 0, uncovered = 0;
	printf("variant   cloned  copies checked  differed  first difference\n");
	for (size_t p = 0; p < l.npats; p++)
		for (unsigned v = 0; v < l.pats[p].variants; v++) {
			const struct tally *x = &t[ix.first[p] + v];
			int f = fitted(m, l.pats[p].id, v);
			nfit += f;
			fit_checked += f ? x->checked : 0;
			checked += x->checked;
			differed += x->differed;
			uncovered += x->checked == 0;
			printf("%s v%03u  %-6s  %14u  %8u  %s\n", l.pats[p].id, v, f ? "yes" : "from C",
			       x->checked, x->differed, x->first[0] ? x->first : "-");
		}
	printf("total: %u of %zu copies checked x %u contexts (%u in the %u fitted variants), "
	       "%zu variants, %u without a copy checked; %u copies differed from their C twins\n",
	       checked, l.n, CLONE_CMP_CONTEXTS, fit_checked, nfit, ix.nvariants, uncovered,
	       differed);
	free(t);
	clone_cmp_free(c);
	clone_index_free(&ix);
	json_decref(m);
	return differed || uncovered ? 1 : 0;
}
