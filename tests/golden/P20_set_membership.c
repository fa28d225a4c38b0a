// Golden: patterns/P20_set_membership.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P20_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1316571679);
	uint32_t w = fl_mix32(FL_W(ctx, 18) ^ 774790148);
	uint32_t nhit = 0;
	uint32_t id, at, m;

	if (FL_RARE(w, 53))
		return;
	/* each set's members live in table slots, scanned until the id is found */
	id = (FL_W(ctx, 49) ^ w) & 3u;
	#pragma GCC unroll 4
	for (at = 2u, m = 0; m < 2u; m++) {
		if ((FL_T(ctx, 246 + m) & 3u) == id) {
			at = m;
			break;
		}
	}
	if (at < 2u) {
		nhit++;
		FL_YIELD(ctx, 110, FL_T(ctx, 456 + at) >> 12);
	}
	FL_YIELD(ctx, 548, nhit << 10);
	if (nhit == 0)
		FL_YIELD(ctx, 610, w & 44966);
	else
		FL_YIELD_SPARSE(ctx, w ^ 779654168, nhit << 12);
}
