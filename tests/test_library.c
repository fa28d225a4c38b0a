/* test_library.c: the built extractor library end to end: registry, manifest, every
 * function run over real contexts, the body gate, determinism, and (asm mode) clones
 * against their twins compiled from C.
 *
 * Reads FL_BUILDDIR (default "."): libfrontload-extract.so, manifest.json and, when present,
 * libfrontload-sample.so (a random sample of copies compiled straight from C).
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

/* Find (pattern, variant, copy) in l; -1 when absent. */
static long find_entry(const struct lib *l, const struct fl_fn_entry *e)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->tab[i].pattern == e->pattern && l->tab[i].variant == e->variant &&
		    l->tab[i].copy == e->copy)
			return (long)i;
	return -1;
}

/* 4: every sampled copy compiled from C computes exactly what the library's copy (cloned
 * from assembly, or compiled from C) computes, on many random contexts: same dense and
 * sparse features, same mutable state. Skipped when no sample library was built. */
static void test_4_clones_match_c_twins(void **state)
{
	(void)state;
	struct lib l, ref;
	char err[256];
	if (lib_open(&ref, "libfrontload-sample.so") != 0)
		skip();
	assert_int_equal(lib_open(&l, "libfrontload-extract.so"), 0);
	assert_true(ref.n > 0);
	struct fl_ctx *ctx = fl_ctx_init(3, 64, err, sizeof(err));
	assert_non_null(ctx);
	uint64_t *state0 = malloc(FL_STATE_WORDS * 8);
	struct fl_sink *sink_ref = malloc(sizeof(*sink_ref));
	uint64_t *state_ref = malloc(FL_STATE_WORDS * 8);
	unsigned long contexts = 0;
	for (size_t r = 0; r < ref.n; r++) {
		long i = find_entry(&l, &ref.tab[r]);
		assert_true(i >= 0);
		for (uint64_t s = 0; s < 200; s++) {
			uint8_t story[FL_STORY_BYTES];
			uint64_t x = r * 1000003u + s;
			for (size_t b = 0; b < sizeof(story); b++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				story[b] = (uint8_t)(x >> 56);
			}
			fl_ctx_set_story(ctx, story, sizeof(story));
			fl_ctx_set_hit(ctx, (uint32_t)(s % 5) * 16384, err, sizeof(err));
			memcpy(state0, ctx->state, FL_STATE_WORDS * 8);
			ctx->call_word = (uint32_t)x;
			fl_ctx_clear_sink(ctx);
			ref.tab[r].fn(ctx);
			memcpy(sink_ref, ctx->sink, sizeof(*sink_ref));
			memcpy(state_ref, ctx->state, FL_STATE_WORDS * 8);
			memcpy(ctx->state, state0, FL_STATE_WORDS * 8);
			fl_ctx_clear_sink(ctx);
			l.tab[i].fn(ctx);
			if (memcmp(sink_ref->dense, ctx->sink->dense, sizeof(sink_ref->dense)) ||
			    sink_ref->nsparse != ctx->sink->nsparse ||
			    memcmp(sink_ref->sparse, ctx->sink->sparse,
				   ctx->sink->nsparse * sizeof(struct fl_sparse)) ||
			    memcmp(state_ref, ctx->state, FL_STATE_WORDS * 8))
				fail_msg("%s variant %u copy %u differs from its C twin on context %llu",
					 l.pats[ref.tab[r].pattern].id, ref.tab[r].variant,
					 ref.tab[r].copy, (unsigned long long)s);
			contexts++;
		}
	}
	printf("clone check: %zu sampled copies x 200 contexts = %lu calls, all equal to their C twins\n",
	       ref.n, contexts);
	free(state0);
	free(sink_ref);
	free(state_ref);
	fl_ctx_free(ctx);
	dlclose(l.h);
	dlclose(ref.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1_registry_matches_manifest),
		cmocka_unit_test(test_2_run_every_function),
		cmocka_unit_test(test_3_every_pattern_yields),
		cmocka_unit_test(test_4_clones_match_c_twins),
	};
	return cmocka_run_group_tests_name("library", tests, NULL, NULL);
}
