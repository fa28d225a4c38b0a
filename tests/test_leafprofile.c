/* test_leafprofile.c: tests for runtime/common/leafprofile.c, the leaf profile's file
 * rules: 1. a profile fits the build it was calibrated for, 2. not another's (each of
 * functions, variants, copies, seed), 3. a profile without calibrated.build or an
 * unreadable one, 4. --profile found on the command line, 5. --profile none splices
 * nothing, a file splices its flags first, 6. a footprint on the command line replaces
 * the profile's (the leaf's footprint group).
 * Build: ninja tests/test_leafprofile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostcpu.h"
#include "leafprofile.h"
#include "paths.h"

/* The default build's fl_build_info() as the generator writes it (keys sorted). */
static const char lib1000[] = "{\"cc\":\"cc\",\"clone\":\"obj\",\"copies\":1000,"
	"\"functions\":699000,\"linker\":\"mold\",\"patterns\":27,\"seed\":1,\"variants\":699}";

/* A profile file with the given calibrated.build (NULL: none); the path is static. */
static const char *profile_file(const char *build)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/test_leafprofile.%ld.json", (long)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"frontload_profile\": 1, \"leaf_args\": {\"rank-passes\": 3, "
		"\"extractors-per-story\": 898}%s%s%s}\n", build ? ", \"calibrated\": {\"build\": " :
		"", build ? build : "", build ? "}" : "");
	fclose(f);
	return path;
}

static void test_fits_own_build(void **state)
{
	(void)state;
	char why[256] = "";
	const char *p = profile_file("{\"copies\": 1000, \"functions\": 699000, \"seed\": 1, "
		"\"variants\": 699, \"cc\": \"clang\", \"linker\": \"ld\"}");

	/* The compiler and linker may differ: the code is the same build's. */
	assert_int_equal(fl_profile_fits_build(p, lib1000, why, sizeof why), 1);
	unlink(p);
}

static void test_refuses_other_builds(void **state)
{
	(void)state;
	static const struct { const char *build, *why; } cases[] = {
		{ "{\"copies\": 2, \"functions\": 1398, \"seed\": 1, \"variants\": 699}",
		  "calibrated for functions 1398, the library has 699000" },
		{ "{\"copies\": 1000, \"functions\": 699000, \"seed\": 1, \"variants\": 698}",
		  "calibrated for variants 698, the library has 699" },
		{ "{\"copies\": 999, \"functions\": 699000, \"seed\": 1, \"variants\": 699}",
		  "calibrated for copies 999, the library has 1000" },
		{ "{\"copies\": 1000, \"functions\": 699000, \"seed\": 7, \"variants\": 699}",
		  "calibrated for seed 7, the library has 1" },
		{ "{\"copies\": 1000, \"functions\": 699000, \"variants\": 699}",
		  "calibrated.build.seed missing" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char why[256] = "";
		const char *p = profile_file(cases[i].build);

		assert_int_equal(fl_profile_fits_build(p, lib1000, why, sizeof why), 0);
		assert_non_null(strstr(why, cases[i].why));
		unlink(p);
	}
}

static void test_no_build_or_bad_json(void **state)
{
	(void)state;
	char why[256] = "";
	const char *p = profile_file(NULL);

	assert_int_equal(fl_profile_fits_build(p, lib1000, why, sizeof why), 0);
	assert_non_null(strstr(why, "records no calibrated.build"));
	assert_int_equal(fl_profile_fits_build(p, "{not json", why, sizeof why), -1);
	assert_non_null(strstr(why, "not JSON"));
	unlink(p);
	assert_int_equal(fl_profile_fits_build(p, lib1000, why, sizeof why), -1);
}

static void test_given(void **state)
{
	(void)state;
	char *a[] = { "leaf", "--port", "0", "--profile", "x.json", NULL };
	char *b[] = { "leaf", "--profile=none", NULL };
	char *c[] = { "leaf", "--", "--profile", "x.json", NULL };
	char *d[] = { "leaf", "--profile", NULL };  /* no value: the parser's error */

	assert_string_equal(fl_profile_given(5, a), "x.json");
	assert_string_equal(fl_profile_given(2, b), "none");
	assert_null(fl_profile_given(4, c));
	assert_null(fl_profile_given(2, d));
}

static void test_splice(void **state)
{
	(void)state;
	char err[256] = "", **out = NULL, *args[FL_PROFILE_MAX_ARGS];
	int n = -1, nout = 0, dropped = -1;
	char *none[] = { "leaf", "--profile", "none", "--rank-passes", "2", NULL };

	assert_int_equal(fl_profile_splice(5, none, NULL, args, &n, &dropped, &out, &nout, err,
		sizeof err), 0);
	assert_null(out);
	assert_int_equal(n, 0);

	char path[64];
	snprintf(path, sizeof path, "%s", profile_file(NULL));
	char *file[] = { "leaf", "--profile", path, "--rank-passes", "2", NULL };
	assert_int_equal(fl_profile_splice(5, file, NULL, args, &n, &dropped, &out, &nout, err,
		sizeof err), 0);
	assert_non_null(out);
	/* leaf, the profile's 4 strings, then the command line's 4: its --rank-passes last. */
	assert_int_equal(n, 4);
	assert_int_equal(nout, 9);
	assert_string_equal(out[0], "leaf");
	assert_string_equal(out[7], "--rank-passes");
	assert_string_equal(out[8], "2");
	assert_null(out[9]);
	int seen = 0;
	for (int i = 1; i < 5; i++)
		seen += strcmp(out[i], "--rank-passes") == 0 || strcmp(out[i], "3") == 0;
	assert_int_equal(seen, 2);
	free(out);
	fl_profile_args_free(args, n);
	unlink(path);
}

/* A footprint on the command line (in functions or bytes) replaces the profile's. */
static void test_group_yields(void **state)
{
	(void)state;
	static const char *const fp[] = { "active-functions", "footprint-bytes", NULL };
	char err[256] = "", **out = NULL, *args[FL_PROFILE_MAX_ARGS], path[64];
	int n = 0, nout = 0, dropped = -1;
	const char *p = profile_file(NULL);

	/* profile_file writes rank-passes and extractors-per-story; add a footprint. */
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "{\"frontload_profile\": 1, \"leaf_args\": {\"rank-passes\": 3, "
		"\"footprint-bytes\": 835866}}\n");
	fclose(f);
	snprintf(path, sizeof path, "%s", p);

	char *given[] = { "leaf", "--profile", path, "--active-functions=500", NULL };
	assert_int_equal(fl_profile_splice(4, given, fp, args, &n, &dropped, &out, &nout, err,
		sizeof err), 0);
	assert_int_equal(dropped, 1);
	assert_int_equal(n, 2);  /* --rank-passes 3 kept */
	assert_string_equal(args[0], "--rank-passes");
	for (int i = 0; i < nout; i++)
		assert_null(strstr(out[i], "footprint-bytes"));
	free(out);
	fl_profile_args_free(args, n);

	char *plain[] = { "leaf", "--profile", path, "--rank-passes", "7", NULL };
	assert_int_equal(fl_profile_splice(5, plain, fp, args, &n, &dropped, &out, &nout, err,
		sizeof err), 0);
	assert_int_equal(dropped, 0);
	assert_int_equal(n, 4);  /* no footprint on the command line: the profile's stays */
	free(out);
	fl_profile_args_free(args, n);
	unlink(path);
}

static void test_cpu_kind(void **state)
{
	(void)state;
	static const struct { const char *model, *kind; } cases[] = {
		{ "Intel(R) Xeon(R) Processor", "intel-xeon" },
		{ "AMD EPYC", "amd-epyc" },
		{ "AMD EPYC 7B13 64-Core Processor", "amd-epyc-7b13-64-core" },
		{ "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "intel-xeon-platinum-8375c" },
		{ "", "unknown" },
		{ "(R) CPU @ 3GHz", "unknown" },
	};
	char kind[128];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fl_cpu_kind(cases[i].model, kind, sizeof kind);
		assert_string_equal(kind, cases[i].kind);
	}
	/* A short buffer truncates, still terminated. */
	fl_cpu_kind("AMD EPYC", kind, 4);
	assert_string_equal(kind, "amd");
}

/* A profile calibrated on the CPU model given (NULL: no calibrated.host). */
static const char *profile_on(const char *cpu)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/test_leafprofile.%ld.json", (long)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"frontload_profile\": 1, \"leaf_args\": {}, \"calibrated\": {%s%s%s}}\n",
		cpu ? "\"host\": {\"cpu\": \"" : "", cpu ? cpu : "", cpu ? "\"}" : "");
	fclose(f);
	return path;
}

static void test_fits_cpu(void **state)
{
	(void)state;
	char model[256], kind[128], why[256], want[300];

	fl_cpu_model(model, sizeof model);
	fl_cpu_kind(model, kind, sizeof kind);
	assert_int_equal(fl_profile_fits_cpu(profile_on(model), why, sizeof why), 1);
	snprintf(want, sizeof want, "calibrated on this kind of CPU, %s", kind);
	assert_string_equal(why, want);
	assert_int_equal(fl_profile_fits_cpu(profile_on("Acme(TM) Zebra 9 CPU"), why,
		sizeof why), strcmp(kind, "acme-zebra-9") == 0);
	snprintf(want, sizeof want, "calibrated on acme-zebra-9, this host is %s", kind);
	if (strcmp(kind, "acme-zebra-9") != 0)
		assert_string_equal(why, want);
	assert_int_equal(fl_profile_fits_cpu(profile_on(NULL), why, sizeof why), -1);
	assert_non_null(strstr(why, "records no calibrated.host.cpu"));
	unlink(profile_on(NULL));
	assert_int_equal(fl_profile_fits_cpu("/nonexistent/p.json", why, sizeof why), -1);
}

/* "--profile default" is this CPU kind's shipped fit when there is one, else the one
 * for any host; a name with neither is refused naming both files. */
static void test_resolve_by_cpu_kind(void **state)
{
	(void)state;
	char model[256], kind[128], own[200], path[4096], kpath[4096], err[512];

	fl_cpu_model(model, sizeof model);
	fl_cpu_kind(model, kind, sizeof kind);
	snprintf(own, sizeof own, "profile-default-%s.json", kind);
	assert_int_equal(fl_profile_resolve("default", path, sizeof path, err, sizeof err), 0);
	const char *base = strrchr(path, '/') + 1;
	if (fl_data_path(own, kpath, sizeof kpath, NULL, 0) == 0 && access(kpath, R_OK) == 0)
		assert_string_equal(base, own);
	else
		assert_string_equal(base, "profile-default.json");
	assert_int_equal(fl_profile_resolve("no-such-fit", path, sizeof path, err, sizeof err),
		-1);
	assert_non_null(strstr(err, "profile-no-such-fit.json"));
	snprintf(own, sizeof own, "profile-no-such-fit-%s.json", kind);
	assert_non_null(strstr(err, own));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits_own_build),
		cmocka_unit_test(test_refuses_other_builds),
		cmocka_unit_test(test_no_build_or_bad_json),
		cmocka_unit_test(test_given),
		cmocka_unit_test(test_splice),
		cmocka_unit_test(test_group_yields),
		cmocka_unit_test(test_cpu_kind),
		cmocka_unit_test(test_fits_cpu),
		cmocka_unit_test(test_resolve_by_cpu_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
