/* test_library.c: the built extractor library end to end: registry, manifest, every
 * function run over real contexts, the body gate, determinism, and (asm mode) clones
 * against their twins compiled from C.
 *
 * Reads FL_BUILDDIR (default "."): libfrontload-extract.so, manifest.json and
 * libfrontload-sample.so (copies compiled straight from C: see build.ninja.in).
 */
#include <dlfcn.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "clone_cmp.h"
#include "dispatch.h"
#include "fl_extract.h"

typedef const struct fl_fn_entry *(*registry_fn)(size_t *);
typedef const struct fl_pattern_info *(*patterns_fn)(size_t *);
typedef const char *(*info_fn)(void);

/* One loaded extractor library. */
struct lib {
	void *h;
	const struct fl_fn_entry *tab;
	size_t n;
	const struct fl_pattern_info *pats;
	size_t npats;
	const char *info;
};

static const char *builddir(void)
{
	const char *d = getenv("FL_BUILDDIR");
	return d && *d ? d : ".";
}

static int lib_open(struct lib *l, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", builddir(), name);
	l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->h)
		return -1;
	registry_fn r = (registry_fn)dlsym(l->h, "fl_registry");
	patterns_fn p = (patterns_fn)dlsym(l->h, "fl_patterns");
	info_fn i = (info_fn)dlsym(l->h, "fl_build_info");
	assert_non_null(r);
	assert_non_null(p);
	assert_non_null(i);
	l->tab = r(&l->n);
	l->pats = p(&l->npats);
	l->info = i();
	return 0;
}

static json_t *load_manifest(void)
{
	char path[4096];
	json_error_t err;

	snprintf(path, sizeof(path), "%s/manifest.json", builddir());
	json_t *m = json_load_file(path, 0, &err);
	if (!m)
		fail_msg("%s: %s", path, err.text);
	return m;
}

static json_int_t jint(json_t *o, const char *a, const char *b)
{
	json_t *x = json_object_get(o, a);
	if (b)
		x = json_object_get(x, b);
	if (!json_is_integer(x))
		fail_msg("manifest: %s%s%s is not an integer", a, b ? "." : "", b ? b : "");
	return json_integer_value(x);
}

/* 1: the registry holds every (pattern, variant, copy) exactly once, as the manifest says. */
static void test_1_registry_matches_manifest(void **state)
{
	(void)state;
	struct lib l;
	assert_int_equal(lib_open(&l, "libfrontload-extract.so"), 0);
	json_t *m = load_manifest();
	json_int_t copies = jint(m, "copies", NULL);
	assert_int_equal(l.n, jint(m, "totals", "functions"));
	assert_int_equal(l.npats, jint(m, "totals", "patterns"));
	json_int_t variants = 0;
	for (size_t p = 0; p < l.npats; p++)
		variants += l.pats[p].variants;
	assert_int_equal(variants, jint(m, "totals", "variants"));
	assert_int_equal(l.n, (size_t)(variants * copies));

	/* Index = offset of (p, v) among all variants * copies + copy: each seen once. */
	size_t *first = calloc(l.npats + 1, sizeof(size_t));
	for (size_t p = 0; p < l.npats; p++)
		first[p + 1] = first[p] + l.pats[p].variants;
	uint8_t *seen = calloc(l.n, 1);
	for (size_t i = 0; i < l.n; i++) {
		const struct fl_fn_entry *e = &l.tab[i];
		assert_non_null(e->fn);
		assert_true(e->pattern < l.npats);
		assert_true(e->variant < l.pats[e->pattern].variants);
		assert_true(e->copy < (uint32_t)copies);
		size_t at = (first[e->pattern] + e->variant) * (size_t)copies + e->copy;
		assert_int_equal(seen[at], 0);
		seen[at] = 1;
	}
	free(seen);
	free(first);

	/* The uniqueness check ran on this library and passed. */
	json_t *v = json_object_get(m, "verify");
	assert_true(json_is_true(json_object_get(v, "ok")));
	assert_int_equal(jint(v, "functions", NULL), l.n);
	assert_int_equal(jint(v, "unique", NULL), l.n);

	/* The library reports the build it came from. */
	json_error_t err;
	json_t *info = json_loads(l.info, 0, &err);
	assert_non_null(info);
	assert_int_equal(jint(info, "copies", NULL), copies);
	assert_int_equal(jint(info, "seed", NULL), jint(m, "seed", NULL));
	json_decref(info);
	json_decref(m);
	dlclose(l.h);
}

/* Run every function once on ctx with story seed s; returns a checksum of the sink. */
static uint64_t run_all(const struct lib *l, struct fl_ctx *ctx, uint64_t s)
{
	uint8_t story[FL_STORY_BYTES];
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(story); i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		story[i] = (uint8_t)(s >> 56);
	}
	assert_int_equal(fl_ctx_set_story(ctx, story, sizeof(story)), 0);
	fl_ctx_clear_sink(ctx);
	for (size_t i = 0; i < l->n; i++) {
		ctx->call_word = (uint32_t)(i * 2654435761u);
		l->tab[i].fn(ctx);
	}
	for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
		sum = sum * 31 + (uint32_t)ctx->sink->dense[i];
	for (uint32_t i = 0; i < ctx->sink->nsparse; i++)
		sum = sum * 31 + ctx->sink->sparse[i].id + (uint32_t)ctx->sink->sparse[i].score;
	return sum + ctx->sink->nsparse + ((uint64_t)ctx->sink->dropped << 32);
}

static int sink_empty(const struct fl_ctx *ctx)
{
	for (uint32_t i = 0; i < FL_DENSE_SLOTS; i++)
		if (ctx->sink->dense[i])
			return 0;
	return ctx->sink->nsparse == 0;
}

/* 2: every function runs (under the sanitizers in that build); the body gate at 0 stops
 * every body, at 65536 features appear; the same inputs give the same sink. */
static void test_2_run_every_function(void **state)
{
	(void)state;
	struct lib l;
	char err[256];
	assert_int_equal(lib_open(&l, "libfrontload-extract.so"), 0);
	struct fl_ctx *ctx = fl_ctx_init(7, 64, err, sizeof(err));
	assert_non_null(ctx);
	assert_int_equal(fl_ctx_set_hit(ctx, 32768, err, sizeof(err)), 0);

	assert_int_equal(fl_ctx_set_body(ctx, 0), 0);
	run_all(&l, ctx, 1);
	assert_true(sink_empty(ctx));

	assert_int_equal(fl_ctx_set_body(ctx, 65536), 0);
	uint64_t a = run_all(&l, ctx, 1);
	assert_false(sink_empty(ctx));
	struct fl_ctx *ctx2 = fl_ctx_init(7, 64, err, sizeof(err));
	assert_non_null(ctx2);
	assert_int_equal(fl_ctx_set_hit(ctx2, 32768, err, sizeof(err)), 0);
	assert_int_equal(run_all(&l, ctx2, 1), a);
	assert_int_not_equal(run_all(&l, ctx2, 2), a);
	fl_ctx_free(ctx2);
	fl_ctx_free(ctx);
	dlclose(l.h);
}

/* 3: per pattern, features come out for most stories: no pattern is dead code. */
static void test_3_every_pattern_yields(void **state)
{
	(void)state;
	struct lib l;
	char err[256];
	assert_int_equal(lib_open(&l, "libfrontload-extract.so"), 0);
	struct fl_ctx *ctx = fl_ctx_init(11, 64, err, sizeof(err));
	assert_non_null(ctx);
	assert_int_equal(fl_ctx_set_hit(ctx, 49152, err, sizeof(err)), 0);
	for (size_t p = 0; p < l.npats; p++) {
		int yielded = 0, runs = 0;
		for (size_t i = 0; i < l.n && runs < 64; i++) {
			if (l.tab[i].pattern != p)
				continue;
			for (uint64_t s = 0; s < 4; s++) {
				uint8_t story[FL_STORY_BYTES];
				for (size_t b = 0; b < sizeof(story); b++)
					story[b] = (uint8_t)((b * 131 + s * 977 + i) ^ (b >> 3));
				fl_ctx_set_story(ctx, story, sizeof(story));
				fl_ctx_clear_sink(ctx);
				ctx->call_word = (uint32_t)(i + s);
				l.tab[i].fn(ctx);
				yielded += !sink_empty(ctx);
				runs++;
			}
		}
		if (yielded * 4 < runs)
			fail_msg("pattern %s yields in only %d of %d calls", l.pats[p].id, yielded, runs);
	}
	fl_ctx_free(ctx);
	dlclose(l.h);
}

/* Whether the build cloned variant (pattern id, v) from assembly: the manifest's clone
 * report lists the variants that did not fit; a build without one (--clone=none) cloned
 * none. */
static int variant_fitted(json_t *m, const char *id, unsigned v)
{
	json_t *rep = json_object_get(m, "clone_report");
	if (!json_is_object(rep))
		return 0;
	json_t *nf = json_object_get(rep, "variants_not_fitted"), *x;
	size_t i;
	json_array_foreach(nf, i, x) {
		const char *p = json_string_value(json_object_get(x, "pattern"));
		if (p && !strcmp(p, id) && json_integer_value(json_object_get(x, "variant")) == v)
			return 0;
	}
	return 1;
}

/* 4: the copies compiled straight from C (libfrontload-sample.so: every variant's copy 0,
 * and at a small --copies every copy at a constant's end or a value-class edge; see
 * build.ninja.in) compute exactly what the library's copies (cloned from assembly, or
 * compiled from C) compute on contexts that vary the hit rate, the body share and the
 * sink's fill: every dense slot, sparse entry, dropped count and state word
 * (tests/clone_cmp.h). Every variant, fitted ones included, has a copy in the check. */
static void test_4_clones_match_c_twins(void **state)
{
	(void)state;
	struct lib l, ref;
	struct clone_index ix;
	char err[256], why[512];
	assert_int_equal(lib_open(&l, "libfrontload-extract.so"), 0);
	if (lib_open(&ref, "libfrontload-sample.so") != 0)
		fail_msg("%s/libfrontload-sample.so: %s (ninja test builds it)",
			 builddir(), dlerror());
	assert_true(ref.n > 0);
	assert_int_equal(clone_index_build(&ix, l.tab, l.n, l.pats, l.npats), 0);
	json_t *m = load_manifest();
	struct clone_cmp *c = clone_cmp_new(err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	unsigned *per_variant = calloc(ix.nvariants, sizeof(unsigned));
	unsigned differed = 0;
	for (size_t r = 0; r < ref.n; r++) {
		const struct fl_fn_entry *e = &ref.tab[r];
		long i = clone_index_find(&ix, e);
		if (i < 0)
			fail_msg("sample copy %u/%u/%u is not in the library", e->pattern, e->variant,
				 e->copy);
		per_variant[clone_index_variant(&ix, e)]++;
		uint64_t key = (uint64_t)e->pattern << 48 | (uint64_t)e->variant << 32 | e->copy;
		if (clone_cmp_run(c, e->fn, l.tab[i].fn, key, why, sizeof(why)) != 0 &&
		    differed++ < 10)
			printf("%s variant %u copy %u differs from its C twin: %s\n",
			       l.pats[e->pattern].id, e->variant, e->copy, why);
	}
	unsigned fitted = 0, missing = 0;
	for (size_t p = 0; p < l.npats; p++)
		for (unsigned v = 0; v < l.pats[p].variants; v++) {
			int f = variant_fitted(m, l.pats[p].id, v);
			fitted += f;
			if (!per_variant[ix.first[p] + v] && missing++ < 10)
				printf("%s variant %u%s has no copy in the sample\n", l.pats[p].id, v,
				       f ? " (fitted)" : "");
		}
	const struct clone_cmp_stats *st = clone_cmp_stats(c);
	printf("clone check: %zu of %zu copies compiled from C (%zu variants, %u fitted, each "
	       "with a copy) x %u contexts: %u differed from the library's; of %llu calls "
	       "%llu yielded, %llu dropped sparse yields, %llu changed state\n", ref.n, l.n,
	       ix.nvariants, fitted, CLONE_CMP_CONTEXTS, differed, (unsigned long long)st->calls,
	       (unsigned long long)st->yielding, (unsigned long long)st->dropping,
	       (unsigned long long)st->state_changing);
	assert_int_equal(missing, 0);
	assert_int_equal(differed, 0);
	/* The contexts reach every output the check compares. */
	assert_true(st->yielding > 0 && st->dropping > 0 && st->state_changing > 0);
	free(per_variant);
	clone_cmp_free(c);
	clone_index_free(&ix);
	json_decref(m);
	dlclose(l.h);
	dlclose(ref.h);
}

/* 5: the check tells functions apart: each variant's copy 0 against copy 0 of the next
 * variant of its pattern (other code, other constants) differs in nearly every case, so
 * test 4's "0 differed" is not a comparison that cannot fail. */
static void test_5_check_sees_differences(void **state)
{
	(void)state;
	struct lib l;
	struct clone_index ix;
	char err[256], why[512];
	assert_int_equal(lib_open(&l, "libfrontload-extract.so"), 0);
	assert_int_equal(clone_index_build(&ix, l.tab, l.n, l.pats, l.npats), 0);
	struct clone_cmp *c = clone_cmp_new(err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	unsigned pairs = 0, told = 0;
	for (size_t p = 0; p < l.npats; p++)
		for (unsigned v = 0; v < l.pats[p].variants && l.pats[p].variants > 1; v++) {
			struct fl_fn_entry a = {0, (uint16_t)p, (uint16_t)v, 0};
			struct fl_fn_entry b = {0, (uint16_t)p, (uint16_t)((v + 1) % l.pats[p].variants), 0};
			long i = clone_index_find(&ix, &a), j = clone_index_find(&ix, &b);
			assert_true(i >= 0 && j >= 0);
			pairs++;
			told += clone_cmp_run(c, l.tab[i].fn, l.tab[j].fn, (uint64_t)p << 32 | v, why,
					      sizeof(why)) != 0;
		}
	printf("check against the wrong twin: %u of %u variant pairs differed\n", told, pairs);
	assert_true(pairs > 0);
	assert_true(told * 100 >= pairs * 95);
	clone_cmp_free(c);
	clone_index_free(&ix);
	dlclose(l.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_registry_matches_manifest),
		cmocka_unit_test(test_2_run_every_function),
		cmocka_unit_test(test_3_every_pattern_yields),
		cmocka_unit_test(test_4_clones_match_c_twins),
		cmocka_unit_test(test_5_check_sees_differences),
	};
	return cmocka_run_group_tests_name("library", tests, NULL, NULL);
}
