// Golden: patterns/P05_rate_counter_loops.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P05_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 682580829);
	uint32_t hdr = FL_W(ctx, 184);
	uint32_t base = hdr >> 24;
	uint32_t tslot = FL_W(ctx, 166) >> 20;
	if (FL_UNLIKELY(FL_RARE(hdr, 91))) {
		FL_YIELD(ctx, 2489, 30018);
		return;
	}
	uint32_t hits = 0;
	uint32_t total = 0;
	uint32_t peak = 0;
	uint32_t floor_hits = 0;
	#pragma GCC unroll 4
	for (uint32_t i = 0; i < 2u; i++) {
		uint32_t c = FL_WA(ctx, base + i * 4u);
		if (c >= (FL_T(ctx, tslot + i) >> 2)) {
			hits++;
			total += c >> 12;
		}
		if ((c & 0xFFFFFu) > 184265) {
			floor_hits++;
			FL_YIELD(ctx, 300 + i, c >> 20);
		}
		if (c > peak)
			peak = c;
	}
	uint32_t cls = FL_T(ctx, tslot + 2u);
	uint32_t rsum = 0;
	uint32_t capped = 0;
	#pragma GCC unroll 4
	for (uint32_t j = 0; j < 2u; j++) {
		uint32_t num = FL_WA(ctx, base + j + 6u) & 0xFFFFu;
		if (num > 17065) {
			uint32_t r = (num * (FL_T(ctx, tslot + j + 3u) & 0xFFFFu)) >> 16;
			FL_YIELD(ctx, 343 + j, r);
			rsum += r;
		} else {
			capped++;
		}
	}
	int32_t rate = fl_rate_q16(hits, 2u);
	FL_YIELD(ctx, 2283, rate);
	if (hits != 0u)
		FL_YIELD(ctx, 2672, (total >> 2) + hits);
	else
		FL_YIELD(ctx, 2011, peak >> 16);
	FL_YIELD(ctx, 2419, floor_hits * 32768u);
	if (rsum > (cls & 0x3FFFFu))
		FL_YIELD(ctx, 3056, rsum >> 3);
	else
		FL_YIELD(ctx, 2494, (cls >> 16) + rsum);
	if (capped > 1u)
		FL_YIELD_SPARSE(ctx, 281319876, capped * 4096u);
	FL_YIELD(ctx, 2433, (peak >> 8) + capped);
}
