@pattern P07 two_level_rate
@title Two-level conditional rate: nested loops that skip with continue
@variants 25
@lines 40 60
@knob d1 2 6            # first-level dimension values (outer loop trips)
@knob d2 2 4            # second-level dimension values (arms inside the inner loop)
@knob inner 2 8         # events scanned per first-level value (inner loop trips)
@body
	@# Outer loop over first-level values, skipped when inactive or below threshold; inner
	@# loop over events, skipped when too weak; each event counts toward one second-level
	@# rate picked from its own bits.
	uint32_t w = fl_mix32(FL_W(ctx, $K(0, 255)) ^ $K(65536, 1073741823));
	uint32_t active = FL_W(ctx, $K(0, 255));
	uint32_t wbase = w >> 24;
	uint32_t num = 0;
	uint32_t den = 0;
	uint32_t skipped = 0;
	uint32_t used = 0;
@for b 0 d2
	uint32_t c{{b}} = 0;
@end
	#pragma GCC unroll 4
	for (uint32_t a = 0; a < {{d1}}u; a++) {
		uint32_t k1 = FL_WA(ctx, wbase + a);
		if (FL_UNLIKELY(((active >> a) & 3u) == 0u)) {
			skipped++;
			continue;
		}
		if (FL_UNLIKELY((k1 & 0xFFFFFu) < $K(50000, 300000)))
			continue;
		used++;
		#pragma GCC unroll 4
		for (uint32_t i = 0; i < {{inner}}u; i++) {
			uint32_t v = FL_WA(ctx, (k1 >> 24) + i);
			den++;
			if (FL_UNLIKELY((v & 0xFFFFu) < $K(3000, 16000)))
				continue;
			uint32_t lvl2 = FL_PICK(v, {{d2}});
@for b 0 d2
@if b == 0
			if (lvl2 == 0u) {
@elif b < d2 - 1
			} else if (lvl2 == {{b}}u) {
@else
			} else {
@end
				c{{b}} += (v >> {{8 + b}}) & 0xFFu;
				FL_YIELD(ctx, $K(0, 4095), v >> {{16 + b}});
@end
			}
			num++;
		}
	}
	FL_YIELD(ctx, $K(0, 4095), fl_rate_q16(num, den));
@for b 0 d2
	if (c{{b}} > $K(100, 900))
		FL_YIELD(ctx, $K(0, 4095), c{{b}} * $K(257, 4095, odd));
@end
	FL_YIELD(ctx, $K(0, 4095), skipped * 8192u + (num & 0xFFu));
	FL_YIELD(ctx, $K(0, 4095), used * {{65536 / d1}}u);
