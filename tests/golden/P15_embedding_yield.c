// Golden: patterns/P15_embedding_yield.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P15_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1139175187);
	uint32_t w = fl_mix32(FL_W(ctx, 82) ^ 418911126);
	const uint32_t *h;
	const int16_t *row;
	uint32_t slot, d;
	int32_t scale, v, norm = 0;

	switch (FL_PICK(w, 2)) {
	case 0:
		h = fl_hmap_find(ctx, fl_key_of(w >> 3));
		row = ctx->emb + (size_t)((h != NULL ? h[0] : w) & (FL_EMB_ROWS - 1u)) * FL_EMB_DIM;
		slot = 360;
		scale = 2327;
		break;
	default:
		row = ctx->emb + (size_t)(FL_T(ctx, FL_W(ctx, 200)) & (FL_EMB_ROWS - 1u)) * FL_EMB_DIM;
		slot = 1189;
		scale = 8285;
		break;
	}
	if (FL_RARE(w, 33))
		return;
	#pragma GCC unroll 4
	for (d = 0; d < 8u; d += 4u) {
		v = row[d + 0u];
		if (v > 2151)
			FL_YIELD(ctx, slot + d + 0u, (v * scale) >> 8);
		norm += v < 0 ? -v : v;
		v = row[d + 1u];
		if (v != 0)
			FL_YIELD(ctx, slot + d + 1u, (v * scale) >> 8);
		norm += v < 0 ? -v : v;
		v = row[d + 2u];
		if (v > 2431)
			FL_YIELD(ctx, slot + d + 2u, (v * scale) >> 8);
		norm += v < 0 ? -v : v;
		v = row[d + 3u];
		if (v != 0)
			FL_YIELD(ctx, slot + d + 3u, (v * scale) >> 8);
		norm += v < 0 ? -v : v;
	}
	FL_YIELD(ctx, 59, norm >> 2);
	if (norm > 10327)
		FL_YIELD(ctx, 135, 23462);
}
