/* test_targets.c: tests for runtime/measure/targets.c (the production targets file, verdicts).
 *
 * 1. the real results/targets/production.json loads and holds every documented target
 * 2. verdicts (pass / fail / unmeasurable) on hand-made measurements, every kind
 * 3. bad files are refused with the key at fault named
 * Build: ninja tests/test_targets.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "targets.h"
#include "testutil.h"


static void test_real_file(void **state)
{
	struct fl_targets tg;
	char err[512] = "";
	(void)state;

	if (fl_targets_load(test_src_file("results/targets", "production.json"), &tg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(tg.name, "production");

	const struct fl_target *t = fl_targets_find(&tg, "l1i_mpki");
	assert_non_null(t);
	assert_int_equal(t->kind, FL_TGT_APPROX);
	assert_true(t->value == 21);
	assert_true(t->paths & FL_PATH_SIMULATED);
	assert_true(t->paths & FL_PATH_HARDWARE);
	const struct fl_tgt_source *s = fl_targets_source(&tg, t->source);
	assert_non_null(s);
	assert_non_null(strstr(s->url, "DCPerf/pull/704"));

	t = fl_targets_find(&tg, "ipc");
	assert_non_null(t);
	assert_int_equal(t->kind, FL_TGT_RANGE);
	assert_true(t->min == 0.6 && t->max == 0.8);
	assert_int_equal(t->paths, FL_PATH_HARDWARE);

	static const struct {
		const char *metric;
		enum fl_tgt_kind kind;
		double bound;
	} mix[] = {
		{ "scalar_fp_pct", FL_TGT_MAX, 3.5 },
		{ "cond_branch_pct", FL_TGT_MIN, 15 },
		{ "call_ret_pct", FL_TGT_MAX, 1.5 },
		{ "div_pct", FL_TGT_MAX, 2 },
		{ "insns_per_taken_branch", FL_TGT_MIN, 18 },
	};
	for (size_t i = 0; i < sizeof(mix) / sizeof(mix[0]); i++) {
		t = fl_targets_find(&tg, mix[i].metric);
		assert_non_null(t);
		assert_int_equal(t->kind, mix[i].kind);
		assert_true((t->kind == FL_TGT_MIN ? t->min : t->max) == mix[i].bound);
		assert_non_null(strstr(fl_targets_source(&tg, t->source)->url, "pull/705"));
	}
	t = fl_targets_find(&tg, "mem_pct");
	assert_true(t != NULL && t->min == 40 && t->max == 46);
	t = fl_targets_find(&tg, "frontend_bound_pct");
	assert_true(t != NULL && t->min == 15 && t->max == 30);
	t = fl_targets_find(&tg, "extract_cpu_pct");
	assert_true(t != NULL && t->min == 30 && t->max == 35 && t->paths == FL_PATH_NATIVE);
	assert_non_null(strstr(fl_targets_source(&tg, t->source)->url, "pull/715"));
	/* Production's CPU profile bands (validate's leaf path, perf cpu-clock samples). */
	static const struct {
		const char *metric, *pr;
		double lo, hi;
	} prof[] = {
		{ "profile_extract_pct", "pull/715", 30, 35 },
		{ "profile_ranking_pct", "pull/715", 7, 13 },
		{ "profile_compression_pct", "pull/746", 3.9, 5.2 },
		{ "profile_encryption_pct", "pull/746", 3.3, 3.6 },
	};
	for (size_t i = 0; i < sizeof(prof) / sizeof(prof[0]); i++) {
		t = fl_targets_find(&tg, prof[i].metric);
		assert_non_null(t);
		assert_int_equal(t->kind, FL_TGT_RANGE);
		assert_true(t->min == prof[i].lo && t->max == prof[i].hi);
		assert_int_equal(t->paths, FL_PATH_NATIVE);
		assert_non_null(strstr(fl_targets_source(&tg, t->source)->url, prof[i].pr));
	}
	/* Every target cites a source with a title. */
	for (size_t i = 0; i < tg.n; i++) {
		s = fl_targets_source(&tg, tg.t[i].source);
		assert_non_null(s);
		assert_true(strlen(s->title) > 10);
	}
	assert_null(fl_targets_find(&tg, "no_such_metric"));
	fl_targets_free(&tg);
	assert_null(tg.t);
	fl_targets_free(&tg);
}

static struct fl_measured meas(double v, unsigned path)
{
	struct fl_measured m = { .available = 1, .value = v, .path = path };
	return m;
}

static void test_verdicts(void **state)
{
	struct fl_target t;
	char buf[64];
	(void)state;

	memset(&t, 0, sizeof(t));
	t.paths = FL_PATH_SIMULATED | FL_PATH_HARDWARE;

	t.kind = FL_TGT_RANGE;
	t.min = 40;
	t.max = 46;
	assert_int_equal(fl_target_check(&t, &(struct fl_measured){ 1, 40, FL_PATH_SIMULATED,
		"" }), FL_VERDICT_PASS);
	assert_int_equal(fl_target_check(&t, &(struct fl_measured){ 1, 46, FL_PATH_HARDWARE,
		"" }), FL_VERDICT_PASS);
	struct fl_measured m = meas(46.01, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_FAIL);
	m = meas(39.9, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_FAIL);
	assert_string_equal(fl_target_str(&t, buf, sizeof(buf)), "40..46");

	t.kind = FL_TGT_MIN;
	t.min = 15;
	m = meas(15, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_PASS);
	m = meas(10.7, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_FAIL);
	assert_string_equal(fl_target_str(&t, buf, sizeof(buf)), ">= 15");

	t.kind = FL_TGT_MAX;
	t.max = 3.5;
	m = meas(0.46, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_PASS);
	m = meas(8, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_FAIL);
	assert_string_equal(fl_target_str(&t, buf, sizeof(buf)), "<= 3.5");

	t.kind = FL_TGT_APPROX;
	t.value = 21;
	t.tolerance = 4;
	m = meas(21.34, FL_PATH_HARDWARE);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_PASS);
	m = meas(17, FL_PATH_HARDWARE);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_PASS);
	m = meas(16.9, FL_PATH_HARDWARE);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_FAIL);
	m = meas(60, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_FAIL);
	assert_string_equal(fl_target_str(&t, buf, sizeof(buf)), "21 +- 4");

	/* Unmeasurable: missing, not finite, or from a path the target does not accept. */
	m = meas(21, FL_PATH_HARDWARE);
	m.available = 0;
	snprintf(m.why, sizeof(m.why), "unsupported: no PMU");
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_UNMEASURABLE);
	m = meas(NAN, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_UNMEASURABLE);
	m = meas(21, FL_PATH_NATIVE);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_UNMEASURABLE);
	t.paths = FL_PATH_HARDWARE;
	m = meas(0.7, FL_PATH_SIMULATED);
	assert_int_equal(fl_target_check(&t, &m), FL_VERDICT_UNMEASURABLE);

	assert_string_equal(fl_verdict_name(FL_VERDICT_PASS), "pass");
	assert_string_equal(fl_verdict_name(FL_VERDICT_FAIL), "fail");
	assert_string_equal(fl_verdict_name(FL_VERDICT_UNMEASURABLE), "unmeasurable");
	assert_string_equal(fl_path_name(FL_PATH_SIMULATED), "simulated");
	assert_string_equal(fl_path_name(FL_PATH_HARDWARE), "hardware");
	assert_string_equal(fl_path_name(FL_PATH_NATIVE), "native");
	assert_string_equal(fl_path_name(0), "none");
}

/* A valid file with one target; tests substitute pieces to break it. */
#define SRC "\"sources\": {\"s1\": {\"title\": \"A paper\", \"url\": \"https://x\"}}"
#define TGT(body) "{\"schema\": 1, \"name\": \"t\", " SRC ", \"targets\": [" body "]}"
#define GOOD "{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", \"min\": 0.6, " \
	"\"max\": 0.8, \"unit\": \"i/c\", \"source\": \"s1\", \"paths\": [\"hardware\"]}"

static void expect_refused(const char *text, const char *needle)
{
	struct fl_targets tg;
	char err[512] = "";

	if (fl_targets_parse(text, "bad.json", &tg, err, sizeof(err)) == 0) {
		fl_targets_free(&tg);
		fail_msg("accepted; expected an error naming \"%s\"", needle);
	}
	if (strstr(err, needle) == NULL)
		fail_msg("error \"%s\" does not name \"%s\"", err, needle);
	assert_non_null(strstr(err, "bad.json"));
	assert_null(tg.t);
	assert_null(tg.sources);
}

static void test_bad_files(void **state)
{
	struct fl_targets tg;
	char err[512] = "";
	(void)state;

	/* The template itself is good. */
	if (fl_targets_parse(TGT(GOOD), "good.json", &tg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(tg.n, 1);
	fl_targets_free(&tg);

	expect_refused("{\"schema\": 1,", "bad.json:");
	expect_refused("[1, 2]", "top level");
	expect_refused("{\"schema\": 2, \"name\": \"t\", " SRC ", \"targets\": [" GOOD "]}",
		"schema");
	expect_refused("{\"schema\": 1, " SRC ", \"targets\": [" GOOD "]}", "name: missing");
	expect_refused("{\"schema\": 1, \"name\": \"t\", \"targets\": [" GOOD "]}", "sources");
	expect_refused("{\"schema\": 1, \"name\": \"t\", " SRC ", \"targets\": []}", "targets");
	expect_refused("{\"schema\": 1, \"name\": \"t\", " SRC ", \"extra\": 1, \"targets\": ["
		GOOD "]}", "extra: unknown key");
	expect_refused(TGT("{\"metric\": \"ipcx\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"max\": 0.8, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\"]}"), "targets[0].metric: unknown metric \"ipcx\"");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"between\", "
		"\"min\": 0.6, \"max\": 0.8, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\"]}"), "targets[0].kind");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"unit\": \"u\", \"source\": \"s1\", \"paths\": [\"hardware\"]}"),
		"targets[0].max: missing");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.9, \"max\": 0.8, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\"]}"), "targets[0].max");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"min\", "
		"\"min\": \"high\", \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\"]}"), "targets[0].min: must be a finite number");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"max\", "
		"\"min\": 1, \"max\": 2, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\"]}"), "targets[0].min: not a bound of kind \"max\"");
	expect_refused(TGT("{\"metric\": \"l1i_mpki\", \"label\": \"L1i\", \"kind\": "
		"\"approx\", \"value\": 21, \"tolerance\": -1, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"simulated\"]}"), "targets[0].tolerance");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"max\": 0.8, \"unit\": \"u\", \"source\": \"nope\", "
		"\"paths\": [\"hardware\"]}"), "targets[0].source: \"nope\"");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"max\": 0.8, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": []}"), "targets[0].paths");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"max\": 0.8, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\", \"emulated\"]}"), "targets[0].paths[1]");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"max\": 0.8, \"unit\": \"u\", \"source\": \"s1\", "
		"\"paths\": [\"hardware\"], \"tolerence\": 1}"), "targets[0].tolerence: unknown key");
	expect_refused(TGT("{\"metric\": \"ipc\", \"label\": \"IPC\", \"kind\": \"range\", "
		"\"min\": 0.6, \"max\": 0.8, \"source\": \"s1\", \"paths\": [\"hardware\"]}"),
		"targets[0].unit: missing");
	expect_refused(TGT(GOOD ", " GOOD), "targets[1].metric: \"ipc\" already has a target");
	expect_refused("{\"schema\": 1, \"name\": \"t\", \"sources\": {\"s1\": {\"url\": "
		"\"u\"}}, \"targets\": [" GOOD "]}", "sources.s1.title: missing");

	/* A missing file names the path. */
	assert_int_equal(fl_targets_load("/nonexistent/t.json", &tg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/t.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_file),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_bad_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
