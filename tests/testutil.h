/* testutil.h: helpers the cmocka tests share (include after cmocka.h).
 *
 * Seeds: a test that draws random inputs defines TEST_SEED_DEFAULT before including this
 * and calls test_seed(), which prints the seed so a failure can be replayed with
 * FL_TEST_SEED. Directories: test_tmp_setup and test_tmp_teardown make and remove a
 * mkdtemp directory under $TMPDIR or /tmp, passed as the cmocka state. Header-only and
 * static inline, so a test pays only for what it calls. Files of the source tree:
 * test_src_dir and test_src_file (tests built with FL_SRC_DATA_DIR). Parsers: test_mutations
 * feeds one every single-byte change and every truncation of a fixture.
 */
#ifndef FL_TESTUTIL_H
#define FL_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osfile.h"
#include "rng.h"

/* splitmix64 step on a bare state word (rng.h): the tests' random source. */
static inline uint64_t test_rand(uint64_t *s)
{
	struct fl_rng r = { *s };
	uint64_t z = fl_rng_next(&r);

	*s = r.s;
	return z;
}

#ifdef TEST_SEED_DEFAULT
/* The run's seed: FL_TEST_SEED if set, else TEST_SEED_DEFAULT; printed for replay. */
static inline uint64_t test_seed(void)
{
	const char *e = getenv("FL_TEST_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : TEST_SEED_DEFAULT;

	print_message("seed = %#llx (FL_TEST_SEED to replay)\n", (unsigned long long)seed);
	return seed;
}
#endif

/* cmocka group setup: *state = a new empty directory (malloc'd path). */
static inline int test_tmp_setup(void **state)
{
	const char *t = getenv("TMPDIR");
	char *dir = malloc(4096);

	if (dir == NULL)
		return -1;
	snprintf(dir, 4096, "%s/frontload-test.XXXXXX", t && *t ? t : "/tmp");
	if (mkdtemp(dir) == NULL) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

/* cmocka teardown: remove the directory and everything in it (osfile.h). */
static inline int test_tmp_teardown(void **state)
{
	int rc = fl_rmtree(*state);

	free(*state);
	return rc;
}

/* A whole small file into buf (NUL-terminated, cut at len - 1 bytes); fails the test
 * when it cannot be opened. */
static inline void test_read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

#ifdef FL_SRC_DATA_DIR
/* The source tree: $FL_SRCDIR when set, else the tree the test was built from
 * (FL_SRC_DATA_DIR without its "/runtime/data"). */
static inline const char *test_src_dir(void)
{
	static char dir[4096];
	const char *e = getenv("FL_SRCDIR");

	if (e != NULL && *e != '\0')
		return e;
	snprintf(dir, sizeof dir, "%s", FL_SRC_DATA_DIR);
	char *p = strstr(dir, "/runtime/data");
	if (p != NULL)
		*p = '\0';
	return dir;
}

/* DIR/NAME under the source tree, in a static buffer valid until the next call. */
static inline const char *test_src_file(const char *dir, const char *name)
{
	static char path[4400];

	snprintf(path, sizeof path, "%s/%s/%s", test_src_dir(), dir, name);
	return path;
}
#endif

/* Every single-byte change of the file at path (to each of a few bytes parsers trip on)
 * and every truncation, each through parse: it reads the stream and returns 0, or -1 with
 * an error located at "t:" (the stream's name). Any other outcome fails the test, naming
 * the byte. *ok and *failed count the outcomes, so the caller can check both occur. */
static inline void test_mutations(const char *path,
	int (*parse)(FILE *f, char *err, size_t errlen), size_t *ok, size_t *failed)
{
	static const char subst[] = { ' ', 'x', '(', ')', '-', '+', '*', '\n', '9', '=', '/',
		':', '\0' };
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	char *orig = malloc(1 << 16);
	assert_non_null(orig);
	size_t len = fread(orig, 1, 1 << 16, in);
	assert_true(len > 0 && len < 1 << 16);
	fclose(in);
	char *buf = malloc(len);
	assert_non_null(buf);
	*ok = *failed = 0;
	for (size_t at = 0; at < len; at++)
		for (size_t k = 0; k <= sizeof subst; k++) {
			char err[256] = "";
			size_t n = len;
			memcpy(buf, orig, len);
			if (k == sizeof subst)
				n = at + 1; /* truncated after byte at */
			else
				buf[at] = subst[k];
			FILE *f = fmemopen(buf, n, "r");
			assert_non_null(f);
			int rc = parse(f, err, sizeof err);
			fclose(f);
			if (rc == 0)
				(*ok)++;
			else if (rc == -1 && strncmp(err, "t:", 2) == 0)
				(*failed)++;
			else
				fail_msg("%s: byte %zu variant %zu: rc %d err '%s'", path, at, k, rc, err);
		}
	free(buf);
	free(orig);
}

#endif
