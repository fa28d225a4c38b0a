/* run_flags.h: the flags of `frontload run` (option table, defaults, --help, parsing). */
#ifndef FL_RUN_FLAGS_H
#define FL_RUN_FLAGS_H

#include <stddef.h>
#include <stdio.h>

struct fl_run_config;

/* `frontload run --help`: usage, the option table with defaults and --quick's, the run
 * directory's contents and the exit statuses. */
void run_usage(FILE *f);

/* Flags into c: --name VALUE or --name=VALUE; --quick fills what was not given. Returns
 * 0, 1 for --help, -1 (err) on a bad flag. */
int run_parse_args(struct fl_run_config *c, int argc, char **argv, char *err,
	size_t errlen);

#endif
