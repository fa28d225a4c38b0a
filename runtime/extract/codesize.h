/* codesize.h: the extractor library's code bytes per registry entry, and a plan's report.
 *
 * A generated function is its symbol fl_PNN_vVVV_cCCCCC (hot part) plus the fragments GCC
 * split off it, NAME.cold (the unlikely paths, placed after every hot body) and NAME.part.K
 * (called from the hot part, counted as hot). Sizes come from the library's ELF symbol
 * table (libelf), matched to registry entries by address; a library split over several
 * shared objects (configure --lib-parts) is read object by object. Nothing here prints.
 */
#ifndef FL_CODESIZE_H
#define FL_CODESIZE_H

#include <stddef.h>
#include <stdint.h>

struct fl_lib;
struct fl_plan;

/* Fill hot[i] and cold[i] (lib->n entries each) with registry entry i's bytes. Returns 0,
 * or -1 (err filled) when the file has no symbol table (stripped), an entry has no
 * symbol, or libelf fails. */
int fl_lib_code_sizes(const struct fl_lib *lib, uint32_t *hot, uint32_t *cold, char *err,
	size_t errlen);

/* Write plan p's report as one JSON object into json (len bytes): dispatch, zipf_alpha,
 * active_copies, active_functions, lap_calls, code_bytes (hot + cold), code_bytes_hot,
 * code_bytes_cold and reuse (calls of a lap; distances at percentiles 50, 90, 99 in distinct functions
 * and distinct hot bytes; null when want_reuse is 0). Returns 0, or -1 (err filled) when
 * sizes cannot be read, memory runs out or json is too short. */
int fl_plan_report_json(const struct fl_plan *p, const struct fl_lib *lib, int want_reuse,
	char *json, size_t len, char *err, size_t errlen);

/* The plan's fine knobs as fl_cli options (runtime/common/cli.h), for a config struct with
 * the fields active_functions, footprint_bytes (uint64_t), dispatch (const char *) and
 * zipf_alpha (double);
 * one definition for the leaf and frontload-simreq. */
#define FL_PLAN_CLI_OPTS \
	FL_OPT_UINT("active-functions", active_functions, 0, UINT32_MAX, "N", "0", "fine " \
		"footprint knob: distinct functions in the plan, 1..(functions kept by " \
		"--active-copies), drawn across patterns in proportion to their variants, " \
		"seeded (0 = all kept); more than kept is an error"), \
	FL_OPT_BYTES("footprint-bytes", footprint_bytes, 0, UINT64_MAX, "BYTES", "0", \
		"the same knob in executed code bytes (suffix k, M, G): the fewest functions " \
		"of that draw whose code (hot + cold, from the library's symbols) reaches " \
		"BYTES, all kept when they fall short (0 = unset; not with --active-functions)"), \
	FL_OPT_STR("dispatch", dispatch, "flat|zipf", "flat", "call order: flat = each " \
		"active function once a lap in one seeded order; zipf = call frequency of the " \
		"rank-r function ~ 1/r^alpha, ranks in a seeded order (not by address)"), \
	FL_OPT_REAL("zipf-alpha", zipf_alpha, 0, FL_ZIPF_ALPHA_MAX, "ALPHA", "1", "Zipf " \
		"exponent alpha of --dispatch zipf, 0..4 (0 = uniform frequencies)")

/* The knobs of FL_PLAN_CLI_OPTS and the coarse ones, as parsed. */
struct fl_plan_knobs {
	uint64_t seed, active_copies, active_functions, footprint_bytes;
	const char *dispatch;       /* "flat" or "zipf" */
	double zipf_alpha;
};

/* Build p over lib's registry from the knobs (footprint_bytes through
 * fl_plan_functions_for_bytes over hot + cold sizes). Returns 0, or -1 (err filled) as
 * fl_plan_build, on an unknown dispatch name, on both active_functions and
 * footprint_bytes, or when sizes cannot be read. */
int fl_plan_from_knobs(struct fl_plan *p, const struct fl_lib *lib,
	const struct fl_plan_knobs *k, char *err, size_t errlen);

#endif
