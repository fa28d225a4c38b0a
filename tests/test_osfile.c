/* test_osfile.c: tests for runtime/common/osfile.c (atomic replacement, mkdir -p).
 *
 * Each test works in its own mkdtemp directory under $TMPDIR or /tmp. Build: ninja
 * tests/test_osfile.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "osfile.h"
#include "testutil.h"

/* Entries of dir, "." and ".." left out. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* 1. A write replaces the target whole, with the mode asked for whatever the umask, and
 * leaves no temporary behind. */
static void test_replace(void **state)
{
	char path[4200], buf[64], err[256] = "";
	struct fl_atomic_file a;
	struct stat st;

	snprintf(path, sizeof(path), "%s/stats.json", (char *)*state);
	assert_int_equal(fl_write_file_atomic(path, "old\n", 4, err, sizeof(err)), 0);
	mode_t old = umask(077);
	assert_int_equal(fl_atomic_open(&a, path, 0644, FL_ATOMIC_SYNC, err, sizeof(err)), 0);
	umask(old);
	fputs("new", a.f);
	test_read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "old\n"); /* not replaced before the commit */
	assert_int_equal(fl_atomic_commit(&a, 1, err, sizeof(err)), 0);
	test_read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "new");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(count_entries(*state), 1);
}

/* 2. A writer's own failure (ok = 0) keeps the old file, removes the temporary and leaves
 * the caller's message alone. */
static void test_abandon(void **state)
{
	char path[4200], buf[64], err[256];
	struct fl_atomic_file a;

	snprintf(path, sizeof(path), "%s/port", (char *)*state);
	assert_int_equal(fl_write_file_atomic(path, "41\n", 3, err, sizeof(err)), 0);
	assert_int_equal(fl_atomic_open(&a, path, 0600, 0, err, sizeof(err)), 0);
	fputs("half", a.f);
	snprintf(err, sizeof(err), "mine");
	assert_int_equal(fl_atomic_commit(&a, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "mine");
	test_read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "41\n");
	assert_int_equal(count_entries(*state), 1);
}

/* 3. Failures say what and where: a missing directory, a target path that is too long,
 * and a rename onto a directory. */
static void test_errors(void **state)
{
	char path[4200], err[256];
	char *lng = malloc(FL_OSFILE_PATH_MAX + 16);
	struct fl_atomic_file a;

	snprintf(path, sizeof(path), "%s/no/such/dir/f", (char *)*state);
	assert_int_equal(fl_write_file_atomic(path, "x", 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot create "));
	assert_non_null(strstr(err, strerror(ENOENT)));

	memset(lng, 'a', FL_OSFILE_PATH_MAX + 8);
	lng[FL_OSFILE_PATH_MAX + 8] = '\0';
	assert_int_equal(fl_atomic_open(&a, lng, 0644, 0, err, sizeof(err)), -1);
	assert_memory_equal(err, "path too long: ", 15);
	free(lng);

	snprintf(path, sizeof(path), "%s/adir", (char *)*state);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path + strlen(path), 8, "/x");
	assert_int_equal(mkdir(path, 0755), 0);       /* a non-empty directory as target */
	path[strlen(path) - 2] = '\0';
	assert_int_equal(fl_write_file_atomic(path, "x", 1, err, sizeof(err)), -1);
	assert_memory_equal(err, "cannot rename ", 14);
	assert_int_equal(count_entries(*state), 1);   /* only adir: the temporary is gone */
}

/* 4. mkdir -p: parents and the last part made (with its own mode), an existing tree and a
 * trailing or doubled slash accepted, a file in the way refused with ENOTDIR. */
static void test_mkdir_p(void **state)
{
	char path[4200], err[256] = "";
	struct stat st;

	snprintf(path, sizeof(path), "%s/a//b/c/", (char *)*state);
	assert_int_equal(fl_mkdir_p(path, 0700, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(fl_mkdir_p(path, 0700, err, sizeof(err)), 0);

	snprintf(path, sizeof(path), "%s/file", (char *)*state);
	assert_int_equal(fl_write_file_atomic(path, "x", 1, err, sizeof(err)), 0);
	snprintf(path + strlen(path), 8, "/sub");
	assert_int_equal(fl_mkdir_p(path, 0755, err, sizeof(err)), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_non_null(strstr(err, "cannot create directory "));
	path[strlen(path) - 4] = '\0';
	assert_int_equal(fl_mkdir_p(path, 0755, err, sizeof(err)), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_int_equal(fl_mkdir_p("", 0755, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replace, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test_setup_teardown(test_abandon, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test_setup_teardown(test_errors, test_tmp_setup, test_tmp_teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, test_tmp_setup, test_tmp_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
