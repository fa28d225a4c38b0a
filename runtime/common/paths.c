/* paths.c: data file lookup for installed and in-tree programs. */
#include "paths.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef FL_SRC_DATA_DIR
#error "FL_SRC_DATA_DIR must be defined by the build"
#endif

int fl_exe_dir(char *out, size_t outlen)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *d = dirname(buf);
	if (strlen(d) + 1 > outlen)
		return -1;
	memcpy(out, d, strlen(d) + 1);
	return 0;
}

int fl_data_path(const char *name, char *out, size_t outlen, char *err, size_t errlen)
{
	char dir[4096];
	if (fl_exe_dir(dir, sizeof dir) == 0) {
		int n = snprintf(out, outlen, "%s/../share/frontload/data/%s", dir, name);
		if (n > 0 && (size_t)n < outlen && access(out, R_OK) == 0)
			return 0;
	}
	int n = snprintf(out, outlen, "%s/%s", FL_SRC_DATA_DIR, name);
	if (n > 0 && (size_t)n < outlen && access(out, R_OK) == 0)
		return 0;
	if (err)
		snprintf(err, errlen, "data file %s not found in <exe>/../share/frontload/data "
			"or %s", name, FL_SRC_DATA_DIR);
	return -1;
}
