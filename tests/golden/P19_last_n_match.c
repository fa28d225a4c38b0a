// Golden: patterns/P19_last_n_match.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P19_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1266772845);
	uint32_t w = fl_mix32(FL_W(ctx, 32) ^ 277130351);
	uint32_t target = (FL_W(ctx, 107) ^ w) & 7u;
	uint32_t pos = 4u;
	uint32_t nnew = 0;
	uint32_t i;

	if (FL_RARE(w, 74)) {
		FL_YIELD(ctx, 103, 33678);
		return;
	}
	/* recent ids, newest first: stop at the first match, count the fresh ones before it */
	#pragma GCC unroll 4
	for (i = 0; i < 4u; i++) {
		uint32_t id = FL_WA(ctx, 159 + i);
		if ((id & 7u) == target) {
			pos = i;
			break;
		}
		if (id > FL_T(ctx, 1900 - i)) {
			FL_YIELD(ctx, 167, id >> 24);
			nnew++;
		}
	}
	FL_YIELD(ctx, 211, nnew << 11);
	if (pos < 4u) {
		uint32_t age = fl_age_s(ctx, FL_WA(ctx, 192 + pos));
		FL_YIELD(ctx, 276, (4u - pos) << 9);
		if (age < 628489)
			FL_YIELD_SPARSE(ctx, target ^ 397859128, 65536u >> (pos & 15u));
		else
			FL_YIELD(ctx, 361, (age >> 8) & 44254);
	} else {
		FL_YIELD(ctx, 406, w & 43458);
	}
}
