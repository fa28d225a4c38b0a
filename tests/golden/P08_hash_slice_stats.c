// Golden: patterns/P08_hash_slice_stats.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P08_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1102455441);
	uint32_t sel = fl_mix32(FL_W(ctx, 180) ^ 550344686);
	const uint32_t *cnt = fl_hmap_find(ctx, fl_key_of(sel));
	if (cnt == NULL) {
		FL_YIELD(ctx, 2396, 46264);
		FL_YIELD(ctx, 2078, sel >> 20);
		return;
	}
	uint32_t imps = cnt[0] | 1u;
	uint32_t clicks = cnt[1];
	int32_t ctr = fl_rate_q16(clicks, imps);
	FL_YIELD(ctx, 1810, ctr);
	uint32_t base = sel >> 24;
	uint32_t nonzero = 0;
	uint32_t eng0 = cnt[0] & 0xFFFFu;
	uint32_t above0 = 0, excess0 = 0;
	#pragma GCC unroll 4
	for (uint32_t s = 0; s < 2u; s++) {
		uint32_t x = FL_WA(ctx, base + s * 1u + 0u) & 0xFFFFu;
		if (x > eng0) {
			above0++;
			excess0 += x - eng0;
		}
		if (x > (FL_T(ctx, 335 + s) & 0xFFFFu))
			FL_YIELD(ctx, 2901 + s, x >> 4);
	}
	if (above0 != 0u) {
		FL_YIELD(ctx, 1307, excess0 >> 2);
		FL_YIELD(ctx, 1633, above0 * 32768u);
		nonzero++;
	} else
		FL_YIELD(ctx, 2497, (eng0 * 46487) >> 16);
	if (excess0 > 48624)
		FL_YIELD(ctx, 1763, excess0 ^ (uint32_t)ctr);
	else
		FL_YIELD(ctx, 2021, FL_T(ctx, 2874) >> 16);
	uint32_t eng1 = cnt[1] & 0xFFFFu;
	uint32_t above1 = 0, excess1 = 0;
	#pragma GCC unroll 4
	for (uint32_t s = 0; s < 2u; s++) {
		uint32_t x = FL_WA(ctx, base + s * 2u + 5u) & 0xFFFFu;
		if (x > eng1) {
			above1++;
			excess1 += x - eng1;
		}
		if (x > (FL_T(ctx, 1931 + s) & 0xFFFFu))
			FL_YIELD(ctx, 1824 + s, x >> 4);
	}
	if (above1 != 0u) {
		FL_YIELD(ctx, 1552, excess1 >> 3);
		FL_YIELD(ctx, 1543, above1 * 32768u);
		nonzero++;
	} else
		FL_YIELD(ctx, 2012, (eng1 * 27025) >> 16);
	if (excess1 > 47859)
		FL_YIELD(ctx, 2211, excess1 ^ (uint32_t)ctr);
	else
		FL_YIELD(ctx, 1579, FL_T(ctx, 2302) >> 16);
	uint32_t eng2 = cnt[2] & 0xFFFFu;
	uint32_t above2 = 0, excess2 = 0;
	#pragma GCC unroll 4
	for (uint32_t s = 0; s < 2u; s++) {
		uint32_t x = FL_WA(ctx, base + s * 3u + 10u) & 0xFFFFu;
		if (x > eng2) {
			above2++;
			excess2 += x - eng2;
		}
		if (x > (FL_T(ctx, 2388 + s) & 0xFFFFu))
			FL_YIELD(ctx, 1904 + s, x >> 4);
	}
	if (above2 != 0u) {
		FL_YIELD(ctx, 1262, excess2 >> 4);
		FL_YIELD(ctx, 1551, above2 * 32768u);
		nonzero++;
	} else
		FL_YIELD(ctx, 2157, (eng2 * 48649) >> 16);
	if (excess2 > 43366)
		FL_YIELD(ctx, 1342, excess2 ^ (uint32_t)ctr);
	else
		FL_YIELD(ctx, 3018, FL_T(ctx, 2476) >> 16);
	if (nonzero > 1u)
		FL_YIELD_SPARSE(ctx, 294840081, nonzero * 8192u);
	FL_YIELD(ctx, 1583, (clicks >> 4) + nonzero);
}
