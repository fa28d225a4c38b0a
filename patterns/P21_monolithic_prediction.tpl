@pattern P21 monolithic_prediction
@title Large monolithic prediction: input loop, big class switch, calibration ladders
@variants 3
@lines 110 240
@knob arms 14 34            # arms of the class switch
@knob ladders 2 4           # calibration ladders, each an if/else chain of `steps` rungs
@knob trips 4 16            # input loop trips
@require arms == 10 * ladders - 6
@require trips == 4 * ladders - 4 || trips == 4 * ladders
@body
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 1-15, w2 16-31, arm a 32+4a..35+4a, ladder l 168+4l..171+4l, input
@# loop 192..; table: acc 1-63, input loop 260..511,
@# arm a 512+64a.., rung (l, s) 2688+64(5l+s): cut point +0..31, output +32..63.
@let steps = 6
@let rungs = steps - 1
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 15)) ^ $K(65536, 1073741823));
	uint32_t w2 = FL_W(ctx, $K(16, 31)) ^ w;
	uint32_t acc = FL_T(ctx, $K(1, 63));
	uint32_t npos = 0;
	uint32_t cal, v, i;

	if (FL_RARE(w, $K(1, 127)) || !fl_validate(ctx, $K(1, 240), 16)) {
		FL_YIELD(ctx, $K(2, 61), $K(300, 65000));
		return;
	}
	/* input layer: story features against table cutoffs, one partial output each */
	for (i = 0; i < {{trips}}u; i++) {
		uint32_t x = FL_WA(ctx, $K(192, 255 - trips) + i);
		uint32_t wt = FL_T(ctx, $K(260, 511 - trips) + i);
		if (x > wt) {
			FL_YIELD(ctx, $K(130, 189 - trips) + i, x >> 20);
			npos++;
		} else {
			acc += wt >> 8;
		}
	}
	FL_YIELD(ctx, $K(194, 253), acc >> $S(8, 14));

	/* class-specific adjustment */
	switch (FL_PICK(w, {{arms}})) {
@for a 0 arms
@let kind = a % 4
	case {{a}}:
@if kind == 0
		acc += FL_T(ctx, $K(512 + 64 * a, 575 + 64 * a)) >> {{4 + a % 5}};
@elif kind == 1
		acc ^= FL_T(ctx, $K(512 + 64 * a, 575 + 64 * a));
@elif kind == 2
@let yb = 64 * (4 + a / 4)
		acc += FL_W(ctx, $K(32 + 4 * a, 35 + 4 * a)) >> {{8 + a % 7}};
		FL_YIELD(ctx, $K(yb + 2, yb + 61), acc >> {{12 + a % 5}});
@else
		acc = (acc >> 1) + FL_W(ctx, $K(32 + 4 * a, 35 + 4 * a));
@end
		break;
@end
	}

@for l 0 ladders
@let yb = 64 * (14 + l)
	/* calibration ladder {{l}}: {{steps}} rungs, cut points and outputs from the model table */
	v = acc ^ FL_W(ctx, $K(168 + 4 * l, 171 + 4 * l));
@for s 0 rungs
@let band = 2688 + 64 * (5 * l + s)
@if s == 0
	if (v < FL_T(ctx, $K(band, band + 31)))
@else
	else if (v < FL_T(ctx, $K(band, band + 31)))
@end
		cal = FL_T(ctx, $K(band + 32, band + 63)) >> 16;
@end
	else
		cal = w2 >> 16;
	FL_YIELD(ctx, $K(yb + 2, yb + 61), cal);
	acc += cal >> {{l + 2}};
	if (cal > (v >> 16))
		npos++;

@end
	FL_YIELD(ctx, $K(1282, 1341), npos << $S(8, 12));
	if (acc > w2)
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), acc >> 16);
	else
		FL_YIELD_SPARSE(ctx, w2 ^ $K(65536, 1073741823), cal);
