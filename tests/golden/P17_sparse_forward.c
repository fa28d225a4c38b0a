// Golden: patterns/P17_sparse_forward.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P17_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1376265415);
	uint32_t w = fl_mix32(FL_W(ctx, 173) ^ 443176382);
	uint32_t at = w >> 25;
	uint32_t i, id, sc, kept;

	if (FL_RARE(w, 48))
		return;
	kept = 0;
	#pragma GCC unroll 4
	for (i = 0; i < 8u; i += 4u) {
		id = FL_WA(ctx, at + i + 0u);
		sc = FL_WA(ctx, at + i + 1u) & 65535u;
		if (sc > 25535) {
			FL_YIELD_SPARSE(ctx, id ^ 318955221, (int32_t)(sc << 4) - 21209);
			kept++;
		}
		id = FL_WA(ctx, at + i + 2u);
		sc = FL_WA(ctx, at + i + 3u) & 65535u;
		if (sc > 19745) {
			FL_YIELD_SPARSE(ctx, id ^ 553300180, (int32_t)(sc << 5) - 23276);
			kept++;
		}
	}
	FL_YIELD(ctx, 63, (int32_t)(kept << 8) + 44978);
}
