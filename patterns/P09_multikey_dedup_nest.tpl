@pattern P09 multikey_dedup_nest
@title Multi-key hash lookup with a dedup bitmap, 3-deep loop nest over keys, slices, counters
@variants 25
@lines 110 150
@knob keys 2 8          # keys examined (query keys first, then story ids)
@knob slices 2 5        # story slices scored per found key (middle loop trips)
@knob agg 0 1           # 1: aggregate over keys and yield at the end; 0: yield per key
@body
	@# Keys come from the request's query keys, topped up with story ids. A 128-bit bitmap
	@# drops keys whose hash bucket was already seen; each new key is looked up (one
	@# fl_hmap_find per key), weighted by the recency of its last engagement (counter 2),
	@# and its six counters are scored against story slices (keys -> slices -> counters).
	uint64_t seen[2] = { 0, 0 };
	uint32_t sel = fl_mix32(FL_W(ctx, $K(0, 255)) ^ $K(65536, 1073741823));
	uint32_t base = sel >> 25;
	uint32_t nq = ctx->nqkeys;
	uint32_t dups = 0;
	uint32_t misses = 0;
	uint32_t found = 0;
	uint32_t filtered = 0;
	uint32_t slice_sum[{{slices}}] = { 0 };
@if agg
	uint32_t agg_best = 0;
	uint32_t agg_total = 0;
	uint32_t agg_key = 0;
@end
	if (!fl_validate(ctx, base * 2u, {{keys * 2}}u)) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		return;
	}
	#pragma GCC unroll 4
	for (uint32_t k = 0; k < {{keys}}u; k++) {
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
		if ((uint32_t)(key >> 60) == $S(1, 14)) {
			filtered++;
			continue;
		}
		uint32_t h = fl_mix32((uint32_t)key ^ (uint32_t)(key >> 32) ^ $K(65536, 1073741823));
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
		if (since < $K(3600, 200000))
			wshift = 0;
		else if (since < $K(400000, 2000000))
			wshift = 1;
		else
			wshift = 3;
		uint32_t score = 0;
		uint32_t hot = 0;
		#pragma GCC unroll 4
		for (uint32_t s = 0; s < {{slices}}u; s++) {
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
			if (part > $K(20000, 90000))
				part = (part >> 2) + $K(1000, 20000);
			slice_sum[s] += part >> wshift;
			score += part >> {{1 + slices % 3}};
		}
		score >>= wshift;
		if (origin != 0u)
			score -= score >> 2;
@if agg
		agg_total += score + hot;
		if (score > agg_best) {
			agg_best = score;
			agg_key = h;
		}
@else
		if (hot > {{slices * 3}}u)
			FL_YIELD_SPARSE(ctx, h & 0xFFFFFFu, score);
		else
			FL_YIELD(ctx, $K(0, 4095), score >> 4);
		FL_YIELD(ctx, $K(0, 4095) + wshift, 65536);
@end
	}
	FL_YIELD(ctx, $K(0, 4095), filtered * 16384u + dups);
	if (found == 0u) {
		FL_YIELD(ctx, $K(0, 4095), misses * 4096u);
		return;
	}
	FL_YIELD(ctx, $K(0, 4095), found * {{65536 / keys}}u);
	if (misses > found)
		FL_YIELD(ctx, $K(0, 4095), (misses - found) * $K(257, 4095, odd));
	else
		FL_YIELD(ctx, $K(0, 4095), (found - misses) * $K(257, 4095, odd));
	uint32_t slice_max = 0;
@for s 0 slices
	if (slice_sum[{{s}}] > $K(20000 + 60000 * s, 60000 + 60000 * s))
		FL_YIELD(ctx, $K(0, 4095), slice_sum[{{s}}] >> {{4 + s}});
	else if (slice_sum[{{s}}] != 0u)
		FL_YIELD(ctx, $K(0, 4095), slice_sum[{{s}}] ^ $K(65536, 1073741823));
	if (slice_sum[{{s}}] > slice_max)
		slice_max = slice_sum[{{s}}];
@end
	if (slice_max > $K(300000, 700000))
		FL_YIELD_SPARSE(ctx, $K(65536, 1073741823), slice_max >> 6);
	else
		FL_YIELD(ctx, $K(0, 4095), slice_max >> 2);
@if agg
	int32_t mean = fl_rate_q16(agg_total >> 4, (agg_best >> 2) | 1u);
	FL_YIELD(ctx, $K(0, 4095), mean);
	if (agg_best > $K(10000, 200000)) {
		FL_YIELD_SPARSE(ctx, agg_key & 0xFFFFFFu, agg_best);
		FL_YIELD(ctx, $K(0, 4095), agg_total >> 6);
	} else if (agg_total > $K(20000, 400000)) {
		FL_YIELD(ctx, $K(0, 4095), agg_best * {{keys}}u);
	} else {
		FL_YIELD(ctx, $K(0, 4095), (agg_total * $K(1025, 65535, odd)) >> 8);
	}
@end
