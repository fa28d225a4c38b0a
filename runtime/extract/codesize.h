/* codesize.h: the extractor library's code bytes per registry entry, and a plan's report.
 *
 * A generated function is its symbol fl_PNN_vVVV_cCCCCC (hot part) plus the fragments GCC
 * split off it, NAME.cold (the unlikely paths, placed after every hot body) and NAME.part.K
 * (called from the hot part, counted as hot). Sizes come from the library's ELF symbol
 * table (libelf), matched to registry entries by address. Nothing here prints.
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
 * code_bytes_cold and reuse (distances at quantiles 0.5, 0.9, 0.99 in distinct functions
 * and distinct hot bytes; null when want_reuse is 0). Returns 0, or -1 (err filled) when
 * sizes cannot be read, memory runs out or json is too short. */
int fl_plan_report_json(const struct fl_plan *p, const struct fl_lib *lib, int want_reuse,
	char *json, size_t len, char *err, size_t errlen);

#endif
