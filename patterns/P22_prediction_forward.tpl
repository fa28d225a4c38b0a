@pattern P22 prediction_forward
@title Medium prediction forward: scored input loop, forwarded outputs, optional trailing switch
@variants 20
@lines 30 95
@knob arms 0 10             # arms of the trailing switch (0: no switch)
@knob trips 2 16            # input loop trips
@require arms == 0 || arms >= 3
@require trips % 2 == 0
@body
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 1-31, arm a 32+8a..39+8a, input loop 130..; table: acc 1-63, input
@# loop 130..4032, arm a 512+256a.. (two draws: +0..127, +128..255).
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 31)) ^ $K(65536, 1073741823));
	uint32_t acc = FL_T(ctx, $K(1, 63));
	uint32_t npos = 0;
	uint32_t i;

	if (FL_RARE(w, $K(1, 127))) {
		FL_YIELD(ctx, $K(2, 61), $K(300, 65000));
		return;
	}
	/* score: story inputs against per-bucket cutoffs from the table */
	for (i = 0; i < {{trips}}u; i++) {
		uint32_t x = FL_WA(ctx, $K(130, 255 - trips) + i);
		uint32_t c = FL_T(ctx, $K(130, 4095 - 63) + (x & 63u));
		if (x > c) {
			FL_YIELD(ctx, $K(450, 509 - trips) + i, c >> 20);
			npos++;
		} else {
			acc -= x >> 8;
		}
	}
	/* forward the prediction and its confidence */
	FL_YIELD(ctx, $K(194, 253), acc >> $S(8, 14));
	FL_YIELD(ctx, $K(258, 317), npos << $S(8, 12));
	if (npos > {{trips / 2}}u)
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), acc >> 16);
	else if (acc > w)
		FL_YIELD(ctx, $K(322, 381), (acc >> 12) & $K(300, 65000));
	else
		FL_YIELD(ctx, $K(386, 445), w & $K(300, 65000));
@if arms > 0

	/* per-surface adjustment of the forwarded score */
	switch (FL_PICK(acc ^ w, {{arms}})) {
@for a 0 arms
	case {{a}}:
		FL_YIELD(ctx, $K(128 * a + 514, 128 * a + 573), FL_T(ctx, $K(512 + 256 * a, 639 + 256 * a)) >> {{8 + a % 9}});
@if a % 2 == 0
		if (npos > {{a % trips}}u)
			FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), FL_T(ctx, $K(640 + 256 * a, 767 + 256 * a)) >> 16);
@else
		if ((w >> {{8 + a % 16}}) & 1u)
			acc += FL_W(ctx, $K(32 + 8 * a, 39 + 8 * a));
		FL_YIELD(ctx, $K(128 * a + 578, 128 * a + 637), acc >> {{8 + a % 5}});
@end
		break;
@end
	}
@else
	FL_YIELD(ctx, $K(1922, 1981), (acc ^ w) >> $S(12, 18));
@end
