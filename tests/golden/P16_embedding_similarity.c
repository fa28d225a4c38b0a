// Golden: patterns/P16_embedding_similarity.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P16_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 796664777);
	uint32_t w = fl_mix32(FL_W(ctx, 101) ^ 484183433);
	const int16_t *a = ctx->emb + (size_t)(w & 511u) * FL_EMB_DIM;
	const int16_t *b = ctx->emb + (size_t)(512u + (FL_T(ctx, w >> 20) & 511u)) * FL_EMB_DIM;
	uint32_t d;
	int64_t dot = 0;
	uint32_t agree = 0;

	if (FL_RARE(w, 54))
		return;
	#pragma GCC unroll 4
	for (d = 0; d < 8u; d += 4u) {
		dot += a[d + 0u] * b[d + 0u];
		agree += (uint32_t)((a[d + 0u] ^ b[d + 0u]) >= 0);
		dot += a[d + 1u] * b[d + 1u];
		agree += (uint32_t)((a[d + 1u] ^ b[d + 1u]) >= 0);
		dot += a[d + 2u] * b[d + 2u];
		agree += (uint32_t)((a[d + 2u] ^ b[d + 2u]) >= 0);
		dot += a[d + 3u] * b[d + 3u];
		agree += (uint32_t)((a[d + 3u] ^ b[d + 3u]) >= 0);
		if (FL_UNLIKELY(dot > ((int64_t)1 << 42) || dot < -((int64_t)1 << 42)))
			break;
	}
	FL_YIELD(ctx, 51, (int32_t)(dot >> 12));
	if (dot > 580137)
		FL_YIELD(ctx, 119, 40643);
	else if (dot > 0)
		FL_YIELD(ctx, 205, (int32_t)(dot >> 4));
	else
		FL_YIELD(ctx, 249, (int32_t)((dot >> 20) & 21049));
	FL_YIELD(ctx, 315, (int32_t)(agree << 10) - 27034);
	FL_YIELD(ctx, 387, (int32_t)(b[7] ^ a[0]) * 1369);
}
