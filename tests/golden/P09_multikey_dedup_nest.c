// Golden: patterns/P09_multikey_dedup_nest.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P09_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 538971741);
	uint64_t seen[2] = { 0, 0 };
	uint32_t sel = fl_mix32(FL_W(ctx, 150) ^ 722187692);
	uint32_t base = sel >> 25;
	uint32_t nq = ctx->nqkeys;
	uint32_t dups = 0;
	uint32_t misses = 0;
	uint32_t found = 0;
	uint32_t filtered = 0;
	uint32_t slice_sum[2] = { 0 };
	if (!fl_validate(ctx, base * 2u, 4u)) {
		FL_YIELD(ctx, 1848, 22176);
		return;
	}
	#pragma GCC unroll 4
	for (uint32_t k = 0; k < 2u; k++) {
		uint64_t key;
		uint32_t origin;
		if (k < nq) {
			key = ctx->qkeys[k];
			origin = 0;
		} else {
			key = FL_WA64(ctx, base + k);
			origin = 1;
		}
		if (key == 0u)
			continue;
		if ((uint32_t)(key >> 60) == 13) {
			filtered++;
			continue;
		}
		uint32_t h = fl_mix32((uint32_t)key ^ (uint32_t)(key >> 32) ^ 709315385);
		uint32_t bit = h >> 25;
		uint64_t m = 1ull << (bit & 63u);
		if (seen[bit >> 6] & m) {
			dups++;
			continue;
		}
		seen[bit >> 6] |= m;
		const uint32_t *cnt = fl_hmap_find(ctx, fl_key_of(h));
		if (cnt == NULL) {
			misses++;
			continue;
		}
		found++;
		uint32_t since = cnt[2];
		uint32_t wshift;
		if (since < 82841)
			wshift = 0;
		else if (since < 1345320)
			wshift = 1;
		else
			wshift = 3;
		uint32_t score = 0;
		uint32_t hot = 0;
		#pragma GCC unroll 4
		for (uint32_t s = 0; s < 2u; s++) {
			uint32_t lo = FL_WA(ctx, (h >> 8) + s * 7u) & 0xFFFFu;
			uint32_t part = 0;
			#pragma GCC unroll 4
			for (uint32_t j = 0; j < 6u; j++) {
				uint32_t c = cnt[j] & 0xFFFFu;
				if (c == 0u)
					continue;
				if (c > lo) {
					part += c - lo;
					hot++;
				} else {
					part += FL_T(ctx, c + s) & 0xFFu;
				}
			}
			if (part > 51004)
				part = (part >> 2) + 6949;
			slice_sum[s] += part >> wshift;
			score += part >> 3;
		}
		score >>= wshift;
		if (origin != 0u)
			score -= score >> 2;
		if (hot > 6u)
			FL_YIELD_SPARSE(ctx, h & 0xFFFFFFu, score);
		else
			FL_YIELD(ctx, 1656, score >> 4);
		FL_YIELD(ctx, 1244 + wshift, 65536);
	}
	FL_YIELD(ctx, 1637, filtered * 16384u + dups);
	if (found == 0u) {
		FL_YIELD(ctx, 1380, misses * 4096u);
		return;
	}
	FL_YIELD(ctx, 2780, found * 32768u);
	if (misses > found)
		FL_YIELD(ctx, 2019, (misses - found) * 1765);
	else
		FL_YIELD(ctx, 1417, (found - misses) * 2161);
	uint32_t slice_max = 0;
	if (slice_sum[0] > 31013)
		FL_YIELD(ctx, 1703, slice_sum[0] >> 4);
	else if (slice_sum[0] != 0u)
		FL_YIELD(ctx, 1135, slice_sum[0] ^ 518394704);
	if (slice_sum[0] > slice_max)
		slice_max = slice_sum[0];
	if (slice_sum[1] > 99097)
		FL_YIELD(ctx, 2157, slice_sum[1] >> 5);
	else if (slice_sum[1] != 0u)
		FL_YIELD(ctx, 2169, slice_sum[1] ^ 466037056);
	if (slice_sum[1] > slice_max)
		slice_max = slice_sum[1];
	if (slice_max > 599572)
		FL_YIELD_SPARSE(ctx, 413049345, slice_max >> 6);
	else
		FL_YIELD(ctx, 1126, slice_max >> 2);
}
