@pattern P14 decayed_coefficients
@title Decayed coefficient yields: exponential, linear or half-life decay in Q16 fixed point
@variants 12
@lines 260 820
@knob style 0 2                               # decay: 0 exponential, 1 linear, 2 half-life
@knob yields 66 174                           # coefficient yields, in groups of 6
@require ((yields - 66) % 36) == 0
@body
@# A group reads an event timestamp, turns its age into a Q16 decay factor d (the group is
@# skipped once fully decayed), then yields 6 presence-tested value * d * coefficient terms,
@# in pairs under a pair guard.
@# Ages are masked to about 12 days; y is the age scaled by a per-group rate, Q16. Rates
@# are odd and large enough that no copy lets gcc prove a group always live. Coefficients
@# are odd and drawn from (2^(10+r), 2^(11+r)) with r = o % 5, so that no copy gets a
@# multiplier gcc turns into shifts and adds (2^n + 1, 3 * 2^n, ...).
@# Clone-friendly constants: timestamps and presence words sit at story-chosen offsets
@# (at + g, at + 64 + g) and value words at per-copy indexes 64..255, so gcc can merge no
@# two loads of a copy; yields go to slots so + 13 * o of a per-copy base, so no two yields
@# of a copy share or neighbour a slot.
	uint32_t now = ctx->now_s;
	uint32_t at = FL_W(ctx, $K(33, 63, odd)) & 127u;
	const uint32_t so = $K(33, 4095 - 13 * yields);
@if style == 2
	uint32_t a, m, y, d, k;
@else
	uint32_t a, m, y, d;
@end

@let groups = yields / 6
@for g 0 groups
	a = (now - FL_WA(ctx, at + {{g}}u)) & 1048575u;
	m = FL_WA(ctx, at + {{64 + g}}u);
@if style == 2
	y = ((a >> 4) * $K(4701, 8191, odd)) >> 8;
@else
	y = ((a >> 4) * $K(4201, 6499, odd)) >> 12;
@end
@if style == 0
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
@elif style == 1
	if (y < 65536u) {
		d = 65536u - y;
@else
	k = y >> 16;
	if (k < 16u) {
		d = 65536u >> k;
		d -= ((d >> 1) * (y & 65535u)) >> 16;
@end
@for j 0 6
@let b = (j * 5 + g) % 30
@let o = g * 6 + j
@let r = o % 5
@if (j % 2) == 0
		if ((m >> {{(j / 2 * 9 + g * 5) % 28}}) & 15u) {
@end
@if (j % 3) == 2
			if ((m >> {{b}}) & 1u)
@else
			if ((m >> {{b}}) & 3u)
@end
@if (j % 2) == 0
				FL_YIELD(ctx, so + {{13 * o}}u, (int32_t)((((FL_W(ctx, $K(64, 255)) & 65535u) * d) >> 16) * $K((1024 << r) + 3, (2048 << r) - 1, odd)));
@else
				FL_YIELD(ctx, so + {{13 * o}}u, -(int32_t)((((FL_W(ctx, $K(64, 255)) & 65535u) * d) >> 16) * $K((1024 << r) + 3, (2048 << r) - 1, odd)));
		}
@end
@end
@if (g % 8) == 7
	} else if (FL_RARE(m, $K(2, 126))) {
		return;
@end
	}
@end
