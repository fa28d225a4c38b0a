/* margs.h: option parsing of frontload-measure's harness subcommands (validate --harness,
 * mix, calibrate, study, and validate's leaf path), and the frontload-simreq knobs they
 * forward. Messages name the flag and go to stderr. */
#ifndef FL_MARGS_H
#define FL_MARGS_H

#include <stdint.h>
#include <stdio.h>

/* One subcommand option for fm_args_next: "--name", "--name V" or "--name=V". */
struct fm_opt {
	const char *name;
	int has_arg;
	int id;    /* returned by fm_args_next; nonzero */
};
#define FM_OPT_KNOB (-1) /* fm_args_next id of a forwarded simreq knob */

/* Parse argv[*i] (advancing *i past it and its value): an option of opts (id, *val) or a
 * knob of fm_knob_defs (id FM_OPT_KNOB, *knob its name, *val its value or NULL). Returns
 * 1, 0 at the end, -1 on an unknown option or a missing value (message printed). */
int fm_args_next(int argc, char **argv, int *i, const struct fm_opt *opts, int *id,
	const char **val, const char **knob);

/* Integer / number flag values in [lo, hi]; -1 with a message naming --flag. */
int fm_parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int fm_parse_f64(const char *flag, const char *s, double lo, double hi, double *out);

/* The simreq knobs frontload-measure forwards: name (without "--") and whether it takes a
 * value; NULL-terminated. Used by every subcommand's option parser and --help. */
struct fm_knob_def {
	const char *name;
	int has_arg;
	const char *help;
};
extern const struct fm_knob_def fm_knob_defs[];

/* Print the forwarded-knob section of a --help. */
void fm_knobs_usage(FILE *fp);

#endif
