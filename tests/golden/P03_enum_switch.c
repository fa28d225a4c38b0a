// Golden: patterns/P03_enum_switch.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P03_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1130187947);
	uint32_t w = fl_mix32(FL_W(ctx, 122) ^ 543541073);
	uint32_t kind = FL_PICK(w, 4);
	uint32_t val = FL_W(ctx, 71);
	uint32_t hits = 0;
	switch (kind) {
	case 0u: {
		uint32_t e = FL_W(ctx, 75);
		if ((e & 0xFFFFFu) > 235899)
			e ^= val;
		if (FL_LIKELY((e >> 0) & 3u)) {
			FL_YIELD(ctx, 2230, FL_T(ctx, e >> 8));
			hits++;
		}
		FL_YIELD(ctx, 1482, val >> 4);
		break;
	}
	case 1u: {
		uint32_t e = FL_W(ctx, 161);
		if ((e & 0xFFFFFu) > 226699)
			e ^= val;
		if (FL_LIKELY((e >> 1) & 3u)) {
			FL_YIELD(ctx, 1141, FL_T(ctx, e >> 9));
			hits++;
		}
		FL_YIELD(ctx, 1435, val >> 4);
		break;
	}
	case 2u: {
		uint32_t e = FL_W(ctx, 88);
		if ((e & 0xFFFFFu) > 268155)
			e ^= val;
		if (FL_LIKELY((e >> 2) & 3u)) {
			FL_YIELD(ctx, 2958, FL_T(ctx, e >> 10));
			hits++;
		}
		FL_YIELD(ctx, 2661, val >> 4);
		break;
	}
	default:
		FL_YIELD(ctx, 2415, 22651);
		val = 0;
		break;
	}
	FL_YIELD(ctx, 2499, (val & 0xFFu) + hits);
	if (FL_RARE(w, 43))
		FL_YIELD_SPARSE(ctx, 417536608, kind);
}
