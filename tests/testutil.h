/* testutil.h: helpers the cmocka tests share (include after cmocka.h).
 *
 * Seeds: a test that draws random inputs defines TEST_SEED_DEFAULT before including this
 * and calls test_seed(), which prints the seed so a failure can be replayed with
 * FL_TEST_SEED. Directories: test_tmp_setup and test_tmp_teardown make and remove a
 * mkdtemp directory under $TMPDIR or /tmp, passed as the cmocka state. Header-only and
 * static inline, so a test pays only for what it calls.
 */
#ifndef FL_TESTUTIL_H
#define FL_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
