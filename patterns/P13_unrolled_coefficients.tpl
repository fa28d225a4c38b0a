@pattern P13 unrolled_coefficients
@title Massive unrolled coefficient yields (the giants)
@variants 5
@lines 900 2300
@knob yields 264 648                          # coefficient yields, in groups of 8
@require ((yields - 264) % 96) == 0
@body
@# One presence word per group of 8 yields; each pair of yields sits under a pair guard
@# and each yield tests its own presence bits (mostly set, so most branches fall through)
@# and carries its own coefficient and story word.
@# Clone-friendly constants: presence words sit at story-chosen offsets (at + g) and value
@# words at per-copy indexes 64..255, so no two loads of a copy can be merged by gcc; the
@# yields go to slots so + 4 * o of a per-copy base, so no two yields of a copy share or
@# neighbour a slot. Only the giants need this: hundreds of draws from one range collide.
@# Multipliers are odd and drawn from (2^n, 2^(n+1)) with n varying by yield, so that no
@# copy gets one gcc turns into shifts and adds (2^n + 1, 3 * 2^n, ...).
@let groups = yields / 8
	uint32_t at = FL_W(ctx, $K(33, 63, odd)) & 127u;
	const uint32_t so = $K(33, 4095 - 4 * yields);
	uint32_t m, x;

@for g 0 groups
	m = FL_WA(ctx, at + {{g}}u);
@if (g % 16) == 15
	if (FL_RARE(m, $K(2, 126)))
		return;
@end
@for j 0 8
@if (j % 2) == 0
	if ((m >> {{(j / 2 * 7 + g * 3) % 28}}) & 15u) {
@end
@let form = (j + g) % 6
@let b = (j * 4 + g) % 30
@let o = g * 8 + j
@let r = o % 5
@if form == 5
		if ((m >> {{b}}) & 3u) {
@elif (j % 4) == 3
		if ((m >> {{b}}) & 1u)
@else
		if ((m >> {{b}}) & 3u)
@end
@if form == 0
			FL_YIELD(ctx, so + {{4 * o}}u, (int32_t)((FL_W(ctx, $K(64, 255)) & 65535u) * $K((1024 << r) + 3, (2048 << r) - 1, odd)));
@elif form == 1
			FL_YIELD(ctx, so + {{4 * o}}u, (int32_t)(FL_W(ctx, $K(64, 255)) >> {{8 + g % 9}}) - $K(1000, 900000));
@elif form == 2
			FL_YIELD(ctx, so + {{4 * o}}u, (int32_t)((FL_W(ctx, $K(64, 255)) ^ m) & $K(4096, 1048575)));
@elif form == 3
			FL_YIELD(ctx, so + {{4 * o}}u, (int32_t)(FL_T(ctx, FL_W(ctx, $K(64, 255))) & 32767u) * $K((1024 << r) + 3, (2048 << r) - 1, odd));
@elif form == 4
			FL_YIELD(ctx, so + {{4 * o}}u, (int32_t)((FL_W(ctx, $K(64, 255)) >> {{16 + j}}) * $K((65536 << (r % 3)) + 3, (131072 << (r % 3)) - 1, odd)));
@else
			x = FL_W(ctx, $K(64, 255)) & 1048575u;
			FL_YIELD(ctx, so + {{4 * o}}u, x > $K(1000, 900000) ? (int32_t)(x >> 4) : $K(1000, 65535));
		}
@end
@if (j % 2) == 1
	}
@end
@end
@end
