// Golden: patterns/P02_multi_field_guarded.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P02_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1379741069);
	uint32_t present = FL_W(ctx, 146);
	uint32_t sel = FL_W(ctx, 141);
	uint32_t acc = 0;
	uint32_t nset = 0;
	if (FL_UNLIKELY(FL_RARE(sel, 166))) {
		FL_YIELD(ctx, 1440, 40719);
		return;
	}
	uint32_t x0 = FL_W(ctx, 133);
	if (FL_LIKELY((x0 & 0xFFFFu) > 5138))
		FL_YIELD(ctx, 1088, x0 >> 8);
	if (FL_UNLIKELY(FL_RARE(x0, sel)))
		x0 = FL_T(ctx, 1437);
	FL_YIELD(ctx, 1505, x0 & 0xFFFFu);
	acc ^= x0;
	uint32_t x1 = FL_W(ctx, 85);
	if (FL_LIKELY((x1 & 0xFFFFu) > 7615))
		FL_YIELD(ctx, 1153, x1 >> 9);
	if (FL_UNLIKELY(FL_RARE(x1, sel)))
		x1 = FL_T(ctx, 1934);
	FL_YIELD(ctx, 2320, x1 & 0xFFFFu);
	acc ^= x1;
	if ((acc & 0xFFFFFFu) > 8348974)
		FL_YIELD(ctx, 2508, acc >> 12);
	else
		FL_YIELD(ctx, 2511, acc & 0xFFFFFu);
	FL_YIELD(ctx, 2710, nset * 2u + (present & 7u));
	if ((present >> 24) > 98)
		FL_YIELD_SPARSE(ctx, 712770772, acc & 0xFFFFu);
}
