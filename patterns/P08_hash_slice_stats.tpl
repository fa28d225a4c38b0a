@pattern P08 hash_slice_stats
@title Single hash lookup, then engagement statistics over story slices
@variants 45
@lines 75 200
@knob blocks 3 8        # statistic blocks computed from the looked-up counters
@knob slices 2 9        # story slices each block scans (loop trips)
@body
	@# One fl_hmap_find on a story-derived key; a miss yields defaults and returns. On a hit,
	@# each block pairs one engagement counter with a loop over story slices: count above
	@# and excess sum, per-slice yields above a table threshold, then gated summary yields.
	uint32_t sel = fl_mix32(FL_W(ctx, $K(0, 255)) ^ $K(65536, 1073741823));
	const uint32_t *cnt = fl_hmap_find(ctx, fl_key_of(sel));
	if (cnt == NULL) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		FL_YIELD(ctx, $K(0, 4095), sel >> 20);
		return;
	}
	uint32_t imps = cnt[0] | 1u;
	uint32_t clicks = cnt[1];
	int32_t ctr = fl_rate_q16(clicks, imps);
	FL_YIELD(ctx, $K(0, 4095), ctr);
	uint32_t base = sel >> 24;
	uint32_t nonzero = 0;
@for b 0 blocks
	uint32_t eng{{b}} = cnt[{{b % 6}}] & 0xFFFFu;
	uint32_t above{{b}} = 0, excess{{b}} = 0;
	#pragma GCC unroll 4
	for (uint32_t s = 0; s < {{slices}}u; s++) {
		uint32_t x = FL_WA(ctx, base + s * {{1 + b % 3}}u + {{b * 5}}u) & 0xFFFFu;
		if (x > eng{{b}}) {
			above{{b}}++;
			excess{{b}} += x - eng{{b}};
		}
		if (x > (FL_T(ctx, $S(0, 4095) + s) & 0xFFFFu))
			FL_YIELD(ctx, $S(0, 4095) + s, x >> 4);
	}
	if (above{{b}} != 0u) {
		FL_YIELD(ctx, $K(0, 4095), excess{{b}} >> {{2 + b % 3}});
		FL_YIELD(ctx, $K(0, 4095), above{{b}} * {{65536 / slices}}u);
		nonzero++;
	} else
		FL_YIELD(ctx, $K(0, 4095), (eng{{b}} * $K(1025, 65535, odd)) >> 16);
	if (excess{{b}} > $K(20000, 60000))
		FL_YIELD(ctx, $K(0, 4095), excess{{b}} ^ (uint32_t)ctr);
	else
		FL_YIELD(ctx, $K(0, 4095), FL_T(ctx, $K(0, 4095)) >> 16);
@end
	if (nonzero > {{blocks / 2}}u)
		FL_YIELD_SPARSE(ctx, $K(65536, 1073741823), nonzero * 8192u);
	FL_YIELD(ctx, $K(0, 4095), (clicks >> 4) + nonzero);
