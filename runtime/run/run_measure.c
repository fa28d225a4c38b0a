/* run_measure.c: hands the front-end measurement subcommands to frontload-measure. */
#include "run_measure.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

int fl_cmd_measure(int argc, char **argv)
{
	char dir[4096], path[4200];
	(void)argc;
	if (fl_exe_dir(dir, sizeof dir) != 0) {
		fprintf(stderr, "frontload: cannot find this program's directory\n");
		return 1;
	}
	snprintf(path, sizeof path, "%s/frontload-measure", dir);
	/* argv is {SUB, args..., NULL}: frontload-measure takes the same vector after its
	 * own name, so build {path, SUB, args...} in place of the caller's argv[-1]. */
	argv[-1] = path;
	execv(path, argv - 1);
	fprintf(stderr, "frontload: cannot run %s: %s\n", path, strerror(errno));
	return 1;
}
