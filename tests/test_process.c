/* test_process.c: tests for runtime/common/process.c (programs started without a shell).
 *
 * The children are sh, true and grep from PATH (on every Debian host);
 * each test works in its own mkdtemp directory. Build: ninja tests/test_process.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* 4. stdout on a pipe: the output is read as the child writes it, the read end is
 * close-on-exec, and the child's exit status is the caller's to reap. */
static void test_stdout_pipe(void **state)
{
	char err[256] = "", buf[64] = "";
	int fd = -1, st;
	const char *const argv[] = { "sh", "-c", "echo one; echo two", NULL };
	struct fl_spawn_opts o = { .cwd = *state, .stdout_pipe = &fd, .stdout_path = "ignored" };
	char path[4200];

	pid_t pid = fl_spawn(argv, &o, err, sizeof(err));
	assert_true(pid > 0);
	assert_true(fd >= 0);
	FILE *in = fdopen(fd, "r");
	assert_non_null(in);
	size_t n = fread(buf, 1, sizeof(buf) - 1, in);
	fclose(in);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	buf[n] = 0;
	assert_string_equal(buf, "one\ntwo\n");
	snprintf(path, sizeof(path), "%s/ignored", (char *)*state);
	assert_int_equal(access(path, F_OK), -1);  /* stdout_path unused with a pipe */
}

/* 5. append keeps what the file held; the same path for stdout and stderr is one file
 * with both streams in order, neither overwriting the other. */
static void test_append_one_log(void **state)
{
	char path[4200], buf[256], err[256] = "";
	const char *const argv[] = { "sh", "-c", "echo out1; echo err1 >&2; echo out2", NULL };

	snprintf(path, sizeof(path), "%s/log", (char *)*state);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("before\n", f);
	fclose(f);
	struct fl_spawn_opts o = { .stdout_path = path, .stderr_path = path, .append = 1 };
	assert_int_equal(fl_spawn_wait(argv, &o, err, sizeof(err)), 0);
	test_read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "before\nout1\nerr1\nout2\n");
	o.append = 0;  /* truncated first, still one file */
	assert_int_equal(fl_spawn_wait(argv, &o, err, sizeof(err)), 0);
	test_read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "out1\nerr1\nout2\n");
}

/* 6. stdin from a pipe (the caller writes, then closes: end of input), and the child in
 * a process group of its own (its pgid is its pid). */
static void test_stdin_pipe_pgroup(void **state)
{
	char err[256] = "", buf[128] = "", want[128];
	int to = -1, from = -1, st;
	const char *const argv[] = { "sh", "-c",
		"read x; echo \"$x\"; cut -d' ' -f5 /proc/$$/stat", NULL };
	struct fl_spawn_opts o = { .stdin_pipe = &to, .stdout_pipe = &from, .new_pgroup = 1 };

	(void)state;
	pid_t pid = fl_spawn(argv, &o, err, sizeof(err));
	assert_true(pid > 0);
	assert_true(to >= 0 && from >= 0);
	assert_int_equal(write(to, "hello\n", 6), 6);
	close(to);
	FILE *in = fdopen(from, "r");
	assert_non_null(in);
	size_t n = fread(buf, 1, sizeof(buf) - 1, in);
	fclose(in);
	buf[n] = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(want, sizeof(want), "hello\n%d\n", (int)pid);
	assert_string_equal(buf, want);
}

/* Run argv with o, its stdout through a pipe, into buf; the child's exit status 0. */
static void run_piped(const char *const *argv, struct fl_spawn_opts *o, char *buf,
	size_t len)
{
	char err[256] = "";
	int fd = -1, st;

	o->stdout_pipe = &fd;
	pid_t pid = fl_spawn(argv, o, err, sizeof(err));
	assert_true(pid > 0);
	FILE *in = fdopen(fd, "r");
	assert_non_null(in);
	size_t n = fread(buf, 1, len - 1, in);
	fclose(in);
	buf[n] = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* 7. cpus: the child starts on those CPUs and the caller's own affinity comes back;
 * reset_signals: a signal the caller ignores or blocks is neither in the child (ignored
 * dispositions and the mask survive exec otherwise). */
static void test_cpus_and_signals(void **state)
{
	const char *const cpus[] = { "sh", "-c", "grep Cpus_allowed_list /proc/self/status",
		NULL };
	/* grep itself, not through sh: dash clears the signal mask at start. */
	const char *const sigs[] = { "grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status", NULL };
	char buf[256], before[256], after[256];
	struct fl_spawn_opts o = { 0 };
	(void)state;

	run_piped(cpus, &o, before, sizeof before);
	const uint16_t cpu0 = 0;
	o = (struct fl_spawn_opts){ .cpus = &cpu0, .ncpus = 1 };
	run_piped(cpus, &o, buf, sizeof buf);
	assert_string_equal(buf, "Cpus_allowed_list:\t0\n");
	o = (struct fl_spawn_opts){ 0 };
	run_piped(cpus, &o, after, sizeof after);
	assert_string_equal(before, after);   /* the caller is unpinned again */

	/* SIGHUP ignored and SIGUSR1 blocked here: without reset_signals the child has
	 * both (bit 0 of SigIgn, bit 9 of SigBlk); with it, neither. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigset_t usr1, oldmask;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	assert_int_equal(sigaction(SIGHUP, &ign, &old), 0);
	assert_int_equal(sigprocmask(SIG_BLOCK, &usr1, &oldmask), 0);
	o = (struct fl_spawn_opts){ 0 };
	run_piped(sigs, &o, buf, sizeof buf);
	unsigned long long ig = 0, bl = 0;
	assert_int_equal(sscanf(buf, "SigBlk: %llx SigIgn: %llx", &bl, &ig), 2);
	assert_true((ig & 1) && (bl & (1ull << 9)));
	o = (struct fl_spawn_opts){ .reset_signals = 1 };
	run_piped(sigs, &o, buf, sizeof buf);
	assert_int_equal(sscanf(buf, "SigBlk: %llx SigIgn: %llx", &bl, &ig), 2);
	assert_false(ig & 1);
	assert_false(bl & (1ull << 9));
	sigaction(SIGHUP, &old, NULL);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status_and_args, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test_setup_teardown(test_cwd_stderr_env, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test(test_failures),
		cmocka_unit_test_setup_teardown(test_stdout_pipe, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test_setup_teardown(test_append_one_log, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test(test_stdin_pipe_pgroup),
		cmocka_unit_test(test_cpus_and_signals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
