/* simreq_knobs.c: frontload-simreq's knob table as data, linked into frontload-measure,
 * which forwards the knobs (margs.h). Compiled with the harness's include path: the
 * table is built from the request layer's option fragments, which frontload-measure's
 * own files do not see. */
#include "margs.h"
#include "simreq_knobs.h"

#define FL_CLI_OBJ struct fl_simreq_knobs
static const struct fl_cli_opt knob_opts[] = { FL_SIMREQ_KNOB_OPTS };
#undef FL_CLI_OBJ

const struct fl_cli fm_knob_cli = {
	.opts = knob_opts,
	.nopts = sizeof(knob_opts) / sizeof(knob_opts[0]),
};
