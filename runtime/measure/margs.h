/* margs.h: option parsing of frontload-measure's subcommands (validate, validate
 * --harness, mix, calibrate, study): each describes its flags as an fl_cli table
 * (runtime/common/cli.h) whose --help is generated from it; the frontload-simreq knobs
 * they forward are checked against simreq's own table (simreq_knobs.h). Messages name the
 * flag and go to stderr. */
#ifndef FL_MARGS_H
#define FL_MARGS_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* frontload-simreq's knobs as an fl_cli table, for a subcommand's fwd: simreq's own
 * (simreq_knobs.h), defined in simreq_knobs.c, which compiles with the harness's include
 * path; this side sees only the table. */
extern const struct fl_cli fm_knob_cli;
#define FM_KNOBS_TITLE "frontload-simreq knobs (range-checked here, forwarded as given; " \
	"defaults are frontload-simreq's)"

/* The simulated geometry's options, for a subcommand's struct with the fields cpu, i1, d1
 * and ll (const char *, given to fm_geometry); section: the heading before them. */
#define FM_GEO_CLI_OPTS(section_) \
	FL_OPT_STR("cpu", cpu, "MODEL", "zen4", "cache model simulated: zen4, zen5, " \
		"golden-cove, neoverse-v2 (geometries and sources: validate --harness --help)", \
		.section = (section_)), \
	FL_OPT_STR("i1", i1, "S,A,L", NULL, "override the L1i: size bytes, ways, line bytes"), \
	FL_OPT_STR("d1", d1, "S,A,L", NULL, "override the L1d: size bytes, ways, line bytes"), \
	FL_OPT_STR("ll", ll, "S,A,L", NULL, "override the L2 (valgrind's last level): size " \
		"bytes, ways, line bytes")

/* fl_cli_parse for a subcommand: --help prints usage to stdout and exits 0; an error is
 * printed as "frontload-measure: <message> (see --help)". Returns 0 or -1. */
int fm_cli_parse(const struct fl_cli *cli, int argc, char **argv, void *obj,
	void (*usage)(FILE *));

/* Integer / number values in [lo, hi] (list items: study's --calls, --alphas); -1 with a
 * message naming --flag. */
int fm_parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int fm_parse_f64(const char *flag, const char *s, double lo, double hi, double *out);

/* 1 when the simreq knob name is not a frontload-leaf flag: it shapes the request stream,
 * which is frontload-driver's on the running leaf (validate, study's leaf points). */
int fm_knob_not_leaf(const char *name);

#endif
