/* test_verify.c: the uniqueness check (generator/verify.c) on small libraries built here.
 *
 * The group setup writes C sources into a mkdtemp directory and links them with gcc
 * (-fPIC -shared -Wl,--emit-relocs, -fno-ipa-icf so GCC keeps identical functions apart,
 * as the generator's own build must). The teardown removes the directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verify.h"

#define TEST_PATH 512u     /* bytes of a path in the temporary directory */
#define TEST_ERRLEN 512u
#define TEST_CC "gcc -O2 -fPIC -shared -fno-ipa-icf"

/* Functions of the libraries. fl_helper is the shared helper (a PLT call, R_X86_64_PLT32);
 * FN is how the generator declares an extractor. */
static const char test_prelude[] =
	"int fl_helper(int x);\n"
	"__attribute__((noinline)) int fl_helper(int x) { return x * 3 + 1; }\n"
	"__attribute__((cold, noreturn, noinline)) void fl_die(int code);\n"
	"void fl_die(int code) { (void)code; __builtin_trap(); }\n"
	"#define FN static __attribute__((used, noinline, noclone))\n"
	"int not_generated(int x) { return x + 1; }\n"
	"FN int fl_P01_v000_c0000(int x) { return x + 99; }\n"     /* 4-digit copy: ignored */
	"FN int fl_P01_v000_c00002x(int x) { return x + 98; }\n";  /* suffix without '.': ignored */

/* dup.so: two identical functions (P01 c00000, c00001), two that differ only in the call
 * displacement to fl_helper (P02 c00000, c00001), and unique ones, including a pair whose
 * main parts match but whose .cold fragments differ (P04). */
static const char test_dup_src[] =
	"FN int fl_P01_v000_c00000(int x) { return x * 7 + 11; }\n"
	"FN int fl_P01_v000_c00001(int x) { return x * 7 + 11; }\n"
	"FN int fl_P01_v000_c00002(int x) { return x * 9 + 13; }\n"
	"FN int fl_P02_v001_c00000(int x) { return fl_helper(x) + 5 * x; }\n"
	"FN int fl_P02_v001_c00001(int x) { return fl_helper(x) + 5 * x; }\n"
	"FN int fl_P03_v000_c00000(int x) { return fl_helper(x) ^ 0x1234; }\n"
	"FN int fl_P04_v000_c00000(int x)\n"
	"{ if (__builtin_expect(x == 77, 0)) fl_die(x * 5 + 1); return x * 11 + 3; }\n"
	"FN int fl_P04_v000_c00001(int x)\n"
	"{ if (__builtin_expect(x == 77, 0)) fl_die(x * 9 + 1); return x * 11 + 3; }\n";

/* ok.so: all unique, two of them calling the helper. */
static const char test_ok_src[] =
	"FN int fl_P01_v000_c00000(int x) { return x * 7 + 11; }\n"
	"FN int fl_P01_v001_c00000(int x) { return x * 9 + 11; }\n"
	"FN int fl_P05_v002_c00003(int x) { return fl_helper(x) + 5 * x; }\n"
	"FN int fl_P05_v002_c00004(int x) { return fl_helper(x) + 6 * x; }\n";

/* none.so: functions, none named like a generated one. */
static const char test_none_src[] = "int fl_other(int x) { return x; }\n";

/* The temporary directory and the paths in it. */
struct test_env {
	char dir[64];               /* mkdtemp directory */
	char dup[TEST_PATH];        /* dup.so, linked with --emit-relocs */
	char dup_plain[TEST_PATH];  /* dup.so's source linked without --emit-relocs */
	char ok[TEST_PATH];         /* ok.so */
	char none[TEST_PATH];       /* none.so */
	char text[TEST_PATH];       /* a text file */
	char manifest[TEST_PATH];   /* a manifest to extend */
	char out[TEST_PATH];        /* where manifests are written */
};

/* Write text to dir/name; the path goes to path. */
static int test_write(const char *dir, const char *name, const char *text1, const char *text2,
	char *path)
{
	FILE *f;

	snprintf(path, TEST_PATH, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(text1, f);
	if (text2 != NULL)
		fputs(text2, f);
	return fclose(f);
}

/* Compile dir/name.c (prelude + src) into so with the given extra link flags. */
static int test_build(const struct test_env *e, const char *name, const char *src,
	const char *ldflags, char *so)
{
	char file[64], c[TEST_PATH], cmd[3 * TEST_PATH];

	snprintf(file, sizeof(file), "%s.c", name);
	if (test_write(e->dir, file, test_prelude, src, c) != 0)
		return -1;
	snprintf(so, TEST_PATH, "%s/%s", e->dir, name);
	strcat(so, ".so");
	snprintf(cmd, sizeof(cmd), TEST_CC " %s '%s' -o '%s'", ldflags, c, so);
	return system(cmd) == 0 ? 0 : -1;
}

static int test_setup(void **state)
{
	struct test_env *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return -1;
	strcpy(e->dir, "/tmp/fl_test_verify.XXXXXX");
	if (mkdtemp(e->dir) == NULL)
		return -1;
	*state = e;
	if (test_build(e, "dup", test_dup_src, "-Wl,--emit-relocs", e->dup) != 0 ||
	    test_build(e, "dup_plain", test_dup_src, "", e->dup_plain) != 0 ||
	    test_build(e, "ok", test_ok_src, "-Wl,--emit-relocs", e->ok) != 0 ||
	    test_build(e, "none", test_none_src, "-Wl,--emit-relocs", e->none) != 0 ||
	    test_write(e->dir, "text.txt", "not an ELF file\n", NULL, e->text) != 0 ||
	    test_write(e->dir, "manifest.json",
		"{\"generator\": \"test\", \"copies\": 2, \"verify\": {\"stale\": true}}\n",
		NULL, e->manifest) != 0)
		return -1;
	snprintf(e->out, sizeof(e->out), "%s/out.json", e->dir);
	return 0;
}

static int test_teardown(void **state)
{
	struct test_env *e = *state;
	char cmd[128];

	if (e == NULL)
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	if (strncmp(e->dir, "/tmp/fl_test_verify.", 20) == 0 && system(cmd) != 0)
		return -1;
	free(e);
	return 0;
}

/* The "verify" object of the manifest at path (the caller decrefs root). */
static json_t *test_load_verify(const char *path, json_t **root)
{
	json_error_t je;
	json_t *v;

	*root = json_load_file(path, 0, &je);
	if (*root == NULL)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	v = json_object_get(*root, "verify");
	assert_true(json_is_object(v));
	return v;
}

static json_int_t test_int(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("manifest: %s is not an integer", key);
	return json_integer_value(v);
}

/* Group i of the manifest holds exactly the two names a and b. */
static void test_check_group(const json_t *v, size_t i, const char *a, const char *b)
{
	const json_t *g = json_array_get(json_object_get(v, "duplicate_groups"), i);
	const json_t *names = json_object_get(g, "symbols");

	assert_int_equal(test_int(g, "count"), 2);
	assert_int_equal(json_array_size(names), 2);
	assert_string_equal(json_string_value(json_array_get(names, 0)), a);
	assert_string_equal(json_string_value(json_array_get(names, 1)), b);
}

/* dup.so: exactly the identical pair and the call-displacement pair are duplicates, the
 * latter only once relocations are masked; the .cold fragments keep P04 apart; the old
 * manifest members survive and the stale "verify" is replaced. */
static void test_verify_duplicates(void **state)
{
	struct test_env *e = *state;
	char err[TEST_ERRLEN];
	json_t *root, *v, *per, *size;

	assert_int_equal(verify_library(e->dup, e->manifest, e->out, err, sizeof(err)), 1);
	v = test_load_verify(e->out, &root);
	assert_string_equal(json_string_value(json_object_get(root, "generator")), "test");
	assert_int_equal(test_int(root, "copies"), 2);
	assert_null(json_object_get(v, "stale"));
	assert_string_equal(json_string_value(json_object_get(v, "library")), e->dup);
	assert_true(json_is_false(json_object_get(v, "ok")));
	assert_int_equal(test_int(v, "functions"), 8);
	assert_int_equal(test_int(v, "unique"), 6);
	assert_int_equal(test_int(v, "duplicate_functions"), 4);
	assert_int_equal(test_int(v, "duplicate_groups_total"), 2);
	assert_int_equal(json_array_size(json_object_get(v, "duplicate_groups")), 2);
	test_check_group(v, 0, "fl_P01_v000_c00000", "fl_P01_v000_c00001");
	test_check_group(v, 1, "fl_P02_v001_c00000", "fl_P02_v001_c00001");
	assert_int_equal(test_int(v, "raw_identical"), 2);
	assert_true(test_int(v, "relocations_masked") >= 5);   /* 3 helper calls, 2 cold jumps */
	assert_int_equal(test_int(v, "fragments"), 2);
	per = json_object_get(v, "functions_per_pattern");
	assert_int_equal(json_object_size(per), 4);
	assert_int_equal(test_int(per, "P01"), 3);
	assert_int_equal(test_int(per, "P02"), 2);
	assert_int_equal(test_int(per, "P03"), 1);
	assert_int_equal(test_int(per, "P04"), 2);
	per = json_object_get(v, "text_bytes_per_pattern");
	assert_int_equal(test_int(per, "P01") + test_int(per, "P02") + test_int(per, "P03") +
		test_int(per, "P04"), test_int(v, "text_bytes"));
	size = json_object_get(v, "function_size");
	assert_true(test_int(size, "min") > 0);
	assert_true(test_int(size, "min") <= test_int(size, "median"));
	assert_true(test_int(size, "median") <= test_int(size, "max"));
	json_decref(root);
}

/* Without --emit-relocs nothing is masked: the call-displacement pair looks unique, which
 * is what masking exists to see through. */
static void test_verify_needs_relocs(void **state)
{
	struct test_env *e = *state;
	char err[TEST_ERRLEN];
	json_t *root, *v;

	assert_int_equal(verify_library(e->dup_plain, NULL, e->out, err, sizeof(err)), 1);
	v = test_load_verify(e->out, &root);
	assert_int_equal(test_int(v, "relocations_masked"), 0);
	assert_int_equal(test_int(v, "duplicate_groups_total"), 1);
	test_check_group(v, 0, "fl_P01_v000_c00000", "fl_P01_v000_c00001");
	json_decref(root);
}

/* ok.so: every function unique, returns 0, manifest from scratch (manifest_in NULL). */
static void test_verify_unique(void **state)
{
	struct test_env *e = *state;
	char err[TEST_ERRLEN];
	json_t *root, *v;

	assert_int_equal(verify_library(e->ok, NULL, e->out, err, sizeof(err)), 0);
	v = test_load_verify(e->out, &root);
	assert_int_equal(json_object_size(root), 1);
	assert_true(json_is_true(json_object_get(v, "ok")));
	assert_int_equal(test_int(v, "functions"), 4);
	assert_int_equal(test_int(v, "unique"), 4);
	assert_int_equal(test_int(v, "raw_identical"), 0);
	assert_int_equal(json_array_size(json_object_get(v, "duplicate_groups")), 0);
	assert_int_equal(test_int(json_object_get(v, "functions_per_pattern"), "P05"), 2);
	json_decref(root);
}

/* Missing file, not ELF, no generated symbols, bad manifest: -1 with a message, and no
 * manifest written. */
static void test_verify_errors(void **state)
{
	struct test_env *e = *state;
	char err[TEST_ERRLEN], missing[TEST_PATH], bad_out[TEST_PATH];

	snprintf(missing, sizeof(missing), "%s/missing.so", e->dir);
	snprintf(bad_out, sizeof(bad_out), "%s/never.json", e->dir);
	assert_int_equal(verify_library(missing, NULL, bad_out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "missing.so: open: No such file"));
	assert_int_equal(verify_library(e->text, NULL, bad_out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not an ELF file"));
	assert_int_equal(verify_library(e->none, NULL, bad_out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no fl_PNN_vVVV_cCCCCC function symbols"));
	assert_int_equal(verify_library(e->ok, e->text, bad_out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "manifest"));
	assert_int_equal(verify_library(e->ok, missing, bad_out, err, sizeof(err)), -1);
	assert_int_equal(access(bad_out, F_OK), -1);
	assert_int_equal(verify_library(e->ok, NULL, "/nonexistent-dir/x.json", err, 8), -1);
	assert_int_equal(strlen(err), 7);   /* truncated to errlen */
	assert_int_equal(verify_library(missing, NULL, bad_out, NULL, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verify_duplicates),
		cmocka_unit_test(test_verify_needs_relocs),
		cmocka_unit_test(test_verify_unique),
		cmocka_unit_test(test_verify_errors),
	};

	return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
