// Golden: patterns/P06_dimensional_rate.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P06_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1437098065);
	uint32_t w = fl_mix32(FL_W(ctx, 82) ^ 370421998);
	uint32_t dim = FL_PICK(w, 2);
	uint32_t base;
	uint32_t scale;
	if (dim == 0u) {
		base = FL_W(ctx, 92) >> 24;
		scale = 25069;
	} else {
		base = FL_W(ctx, 114) >> 24;
		scale = 40251;
	}
	if (FL_RARE(w, 81)) {
		FL_YIELD(ctx, 1030, 37318);
		return;
	}
	uint32_t thr = FL_T(ctx, 2023 + dim) & 0xFFFFFu;
	uint32_t num = 0;
	uint32_t den = 0;
	uint32_t best = 0;
	uint32_t zero = 0;
	#pragma GCC unroll 4
	for (uint32_t i = 0; i < 2u; i++) {
		uint32_t ev = FL_WA(ctx, base + i);
		uint32_t imp = FL_WA(ctx, base + i + 2u) & 0xFFFu;
		if (FL_UNLIKELY(imp < 310)) {
			zero++;
			ev >>= 8;
		}
		den += imp;
		if ((ev & 0xFFFFFu) > thr) {
			num += ev & 0xFFu;
			if ((ev & 0xFFu) > best)
				best = ev & 0xFFu;
		}
	}
	int32_t rate = fl_rate_q16(num, den);
	FL_YIELD(ctx, 2213 + dim, rate);
	FL_YIELD(ctx, 1519, (uint32_t)rate * scale >> 16);
	if (num == 0u)
		FL_YIELD(ctx, 2000, den >> 2);
	else
		FL_YIELD(ctx, 2014, best + (num >> 4));
	if (rate > 48136)
		FL_YIELD_SPARSE(ctx, 394578092 ^ dim, rate);
	uint32_t total = 0;
	uint32_t r0 = FL_W(ctx, 169) & 0xFFFFu;
	if (r0 > (FL_T(ctx, 2034) & 0xFFFFu))
		FL_YIELD(ctx, 1999, r0);
	total += r0 >> 4;
	uint32_t r1 = FL_W(ctx, 135) & 0xFFFFu;
	if (r1 > (FL_T(ctx, 2751) & 0xFFFFu))
		FL_YIELD(ctx, 2087, r1);
	total += r1 >> 4;
	uint32_t share = (total >> 4) + 1u;
	if ((uint32_t)rate > share)
		FL_YIELD(ctx, 2344, (uint32_t)rate - share);
	else
		FL_YIELD(ctx, 2812, share - (uint32_t)rate);
	FL_YIELD(ctx, 1813, zero * 4096u + (total & 0xFFu));
}
