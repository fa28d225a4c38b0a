// Golden: patterns/P07_two_level_rate.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P07_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1480028627);
	uint32_t w = fl_mix32(FL_W(ctx, 82) ^ 400660731);
	uint32_t active = FL_W(ctx, 119);
	uint32_t wbase = w >> 24;
	uint32_t num = 0;
	uint32_t den = 0;
	uint32_t skipped = 0;
	uint32_t used = 0;
	uint32_t c0 = 0;
	uint32_t c1 = 0;
	#pragma GCC unroll 4
	for (uint32_t a = 0; a < 2u; a++) {
		uint32_t k1 = FL_WA(ctx, wbase + a);
		if (FL_UNLIKELY(((active >> a) & 3u) == 0u)) {
			skipped++;
			continue;
		}
		if (FL_UNLIKELY((k1 & 0xFFFFFu) < 116397))
			continue;
		used++;
		#pragma GCC unroll 4
		for (uint32_t i = 0; i < 2u; i++) {
			uint32_t v = FL_WA(ctx, (k1 >> 24) + i);
			den++;
			if (FL_UNLIKELY((v & 0xFFFFu) < 11168))
				continue;
			uint32_t lvl2 = FL_PICK(v, 2);
			if (lvl2 == 0u) {
				c0 += (v >> 8) & 0xFFu;
				FL_YIELD(ctx, 1063, v >> 16);
			} else {
				c1 += (v >> 9) & 0xFFu;
				FL_YIELD(ctx, 1534, v >> 17);
			}
			num++;
		}
	}
	FL_YIELD(ctx, 1330, fl_rate_q16(num, den));
	if (c0 > 503)
		FL_YIELD(ctx, 1092, c0 * 2071);
	if (c1 > 374)
		FL_YIELD(ctx, 1594, c1 * 2161);
	FL_YIELD(ctx, 1072, skipped * 8192u + (num & 0xFFu));
	FL_YIELD(ctx, 1891, used * 32768u);
}
