@pattern P10 dual_hash_lookup
@title Dual hash lookup, if/else halves of straight-line yields
@variants 15
@lines 80 170
@knob yields 7 14                             # straight-line yields per side (if or else half)
@knob cross 0 1                               # cross-lookup ratio block when both hit
@body
@# Each lookup has a hit half (counters mixed with story words) and a miss half (defaults
@# from story words and the table); both are straight-line yields.
@# Clone-friendly constants (every copy must compile to the same instructions): dense slot
@# o is drawn odd from its own stratum 33 + 64 * o .. 94 + 64 * o (o < 63), so no two yields
@# of a copy share or neighbour a slot (gcc would merge them, neighbours into SSE); story
@# read q is word sw + q of a per-copy window, so no two reads share a word (gcc would merge
@# the loads); thresholds of 16-bit values stay below 32768 (cmpw immediates keep their
@# sign); multipliers are odd and drawn from (2^n, 2^(n+1)), so none becomes shifts and adds.
	uint32_t sa = fl_mix32(FL_W(ctx, $K(32, 140)) ^ $K(65536, 1073741823));
	uint32_t sb = fl_mix32(FL_W(ctx, $K(141, 255)) ^ $K(65536, 1073741823));
	const uint32_t *pa = fl_hmap_find(ctx, fl_key_of(sa));
	const uint32_t *pb = fl_hmap_find(ctx, fl_key_of(sb));
	const uint32_t sw = $K(32, 215);
	uint32_t t;

@for side 0 2
@if side == 0
	if (pa != NULL) {
@else
	if (pb != NULL) {
@end
@for y 0 yields
@let src = (y + side) % 6
@let sh = 1 + (y * 3 + side) % 11
@let o = side * 32 + y
@let q = side * 15 + y
@if side == 0
		t = pa[{{src}}] ^ FL_WA(ctx, sw + {{q}}u);
@else
		t = pb[{{src}}] + FL_WA(ctx, sw + {{q}}u);
@end
@if (y % 4) == 0
		if (t > $K(65536, 1073741823))
			FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)(t & 65535u) - $K(9000, 13000));
@elif (y % 4) == 1
		if ((t & 65535u) > $K(4500, 9500))
			FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)((t >> {{sh}}) * $K((1024 << (o % 5)) + 3, (2048 << (o % 5)) - 1, odd)));
@elif (y % 4) == 2
		if (((t >> {{sh}}) & 1023u) < $K(600, 1000))
			FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)((t >> {{sh + 4}}) ^ $K(65536, 1073741823)));
@else
		if ((t & 65535u) > $K(17000, 23000))
			FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)((t & $K(4096, 65535)) + (uint32_t)(sa >> {{sh}})));
@end
@end
	} else {
@for y 0 yields
@let sh = 2 + (y * 5 + side) % 13
@let o = side * 32 + 16 + y
@let q = 30 + side * 5 + y / 3
@if (y % 3) == 0
		FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), $K(1000, 90000));
@elif (y % 3) == 1
		t = FL_WA(ctx, sw + {{q}}u);
		if ((t & 65535u) > $K(13000, 17000))
			FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)(t >> {{sh}}) - $K(23000, 31000));
@else
@if side == 0
		t = FL_T(ctx, sa >> {{sh}});
@else
		t = FL_T(ctx, sb >> {{sh}});
@end
		if ((t & 65535u) > $K(1000, 5000))
			FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)((t & 32767u) * $K((1024 << (o % 5)) + 3, (2048 << (o % 5)) - 1, odd)));
@end
@end
	}
@end
@if cross
@# Ordinals 15, 31 and 47 are free: yields <= 14 uses y <= 13.
	if (pa != NULL && pb != NULL) {
		int32_t r = fl_rate_q16(pa[0] & 65535u, (pb[1] & 65535u) + 1u);
		FL_YIELD(ctx, $K(993, 1054, odd), r);
		if (r > $K(36000, 60000))
			FL_YIELD(ctx, $K(2017, 2078, odd), r - $K(31000, 35000));
		else
			FL_YIELD(ctx, $K(3041, 3102, odd), (int32_t)((pa[2] ^ pb[3]) & $K(4096, 65535)));
	}
@end
