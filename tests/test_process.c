/* test_process.c: tests for runtime/common/process.c (programs started without a shell).
 *
 * The children are sh and true from PATH (dash and coreutils are on every Debian host);
 * each test works in its own mkdtemp directory. Build: ninja tests/test_process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "osfile.h"
#include "process.h"
#include "testutil.h"

/* 1. The exit status comes back, and arguments reach the child as they are: quotes,
 * spaces and $ are not interpreted by any shell. */
static void test_status_and_args(void **state)
{
	char out[4200], buf[256], err[256] = "";
	const char *const quiet[] = { "sh", "-c", "exit 7", NULL };
	const char *const echo[] = { "sh", "-c", "printf '%s|' \"$@\"", "sh", "it's", "a b",
		"$HOME", NULL };
	struct fl_spawn_opts o = { .stdout_path = out };

	assert_int_equal(fl_spawn_wait(quiet, NULL, err, sizeof(err)), 7);
	snprintf(out, sizeof(out), "%s/out", (char *)*state);
	assert_int_equal(fl_spawn_wait(echo, &o, err, sizeof(err)), 0);
	test_read_file(out, buf, sizeof(buf));
	assert_string_equal(buf, "it's|a b|$HOME|");
}

/* 2. Directory, stderr file (relative to it) and extra environment apply to the child,
 * and an extra entry replaces the inherited one of the same name. */
static void test_cwd_stderr_env(void **state)
{
	char path[4200], buf[256], err[256] = "";
	const char *const env[] = { "FL_SPAWN_A=one", "FL_SPAWN_B=two", NULL };
	const char *const argv[] = { "sh", "-c",
		"pwd -P >&2; echo \"$FL_SPAWN_A $FL_SPAWN_B\" >&2", NULL };
	struct fl_spawn_opts o = { .cwd = *state, .stdout_path = "/dev/null",
		.stderr_path = "log", .env = env };
	char real[4096];

	setenv("FL_SPAWN_A", "inherited", 1);
	assert_int_equal(fl_spawn_wait(argv, &o, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/log", (char *)*state);
	test_read_file(path, buf, sizeof(buf));
	assert_non_null(realpath(*state, real));
	snprintf(path, sizeof(path), "%s\none two\n", real);
	assert_string_equal(buf, path);
	assert_string_equal(getenv("FL_SPAWN_A"), "inherited"); /* the caller's is untouched */
}

/* 3. A program that is not there, a directory that is not there and a child killed by a
 * signal are errors that say so, not exit statuses. */
static void test_failures(void **state)
{
	char err[256] = "";
	const char *const missing[] = { "fl-no-such-program", NULL };
	const char *const killed[] = { "sh", "-c", "kill -9 $$", NULL };
	const char *const ok[] = { "true", NULL };
	struct fl_spawn_opts nodir = { .cwd = "/nonexistent/dir" };

	(void)state;
	assert_int_equal(fl_spawn_wait(missing, NULL, err, sizeof(err)), -1);
	assert_memory_equal(err, "spawn fl-no-such-program: ", 26);
	assert_int_equal(fl_spawn_wait(ok, &nodir, err, sizeof(err)), -1);
	assert_memory_equal(err, "spawn true: ", 12);
	assert_int_equal(fl_spawn_wait(killed, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "sh: killed by signal 9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status_and_args, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test_setup_teardown(test_cwd_stderr_env, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test(test_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
