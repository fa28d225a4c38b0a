// Golden: patterns/P22_prediction_forward.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P22_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1004274479);
	uint32_t w = fl_mix32(FL_W(ctx, 10) ^ 490670134);
	uint32_t acc = FL_T(ctx, 41);
	uint32_t npos = 0;
	uint32_t i;

	if (FL_RARE(w, 40)) {
		FL_YIELD(ctx, 37, 46496);
		return;
	}
	/* score: story inputs against per-bucket cutoffs from the table */
	for (i = 0; i < 2u; i++) {
		uint32_t x = FL_WA(ctx, 216 + i);
		uint32_t c = FL_T(ctx, 2339 + (x & 63u));
		if (x > c) {
			FL_YIELD(ctx, 483 + i, c >> 20);
			npos++;
		} else {
			acc -= x >> 8;
		}
	}
	/* forward the prediction and its confidence */
	FL_YIELD(ctx, 213, acc >> 9);
	FL_YIELD(ctx, 292, npos << 9);
	if (npos > 1u)
		FL_YIELD_SPARSE(ctx, w ^ 715313730, acc >> 16);
	else if (acc > w)
		FL_YIELD(ctx, 354, (acc >> 12) & 42750);
	else
		FL_YIELD(ctx, 403, w & 42052);
	FL_YIELD(ctx, 1963, (acc ^ w) >> 16);
}
