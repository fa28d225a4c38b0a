// Golden: patterns/P24_state_update.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P24_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1367131605);
	uint32_t w = fl_mix32(FL_W(ctx, 34) ^ 788331813);
	uint64_t *st = ctx->state;
	uint32_t sum = 0;
	uint64_t v;
	uint32_t slot;

	if (FL_RARE(w, 61))
		return;
	slot = (((FL_W(ctx, 83) ^ w) & 63u) + 163) & (FL_STATE_WORDS - 1u);
	v = st[slot];
	/* counter 0: low half counts (saturating), high half remembers the last request time */
	if ((uint32_t)v < 1343) {
		v++;
		FL_YIELD(ctx, 108, (uint32_t)v << 9);
	} else {
		FL_YIELD(ctx, 172, (w >> 0) & 31842);
	}
	if ((uint32_t)(v >> 32) != ctx->now_s)
		sum++;
	st[slot] = (v & 0xFFFFFFFFull) | ((uint64_t)ctx->now_s << 32);
	if (sum != 0)
		FL_YIELD(ctx, 670, sum << 5);
	else
		FL_YIELD(ctx, 723, w & 28276);
}
