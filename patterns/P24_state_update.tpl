@pattern P24 state_update
@title Mutable state read/update: counters, recency, diversity window, frequency cap
@variants 6
@lines 25 45
@knob shape 0 3             # 0 counters, 1 recency, 2 diversity window, 3 frequency cap (token bucket)
@knob keys 1 2              # state words read and updated per call (unrolled)
@body
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 1-63, key k 64+32k.., category 130+32k..
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 63)) ^ $K(65536, 1073741823));
	uint64_t *st = ctx->state;
	uint32_t sum = 0;
	uint64_t v;
	uint32_t slot;
@if shape == 1
	uint32_t age;
@elif shape == 2
	const uint8_t *win;
	uint32_t cat, same, i;
@elif shape == 3
	uint32_t age, tok;
@end

	if (FL_RARE(w, $K(1, 127)))
		return;
@for k 0 keys
@let yb = 64 * (1 + 4 * k)
	slot = (((FL_W(ctx, $K(64 + 32 * k, 95 + 32 * k)) ^ w) & 63u) + $K(130, 191)) & (FL_STATE_WORDS - 1u);
	v = st[slot];
@if shape == 0
	/* counter {{k}}: low half counts (saturating), high half remembers the last request time */
	if ((uint32_t)v < $K(200, 4000)) {
		v++;
		FL_YIELD(ctx, $K(yb + 2, yb + 61), (uint32_t)v << $S(6, 10));
	} else {
		FL_YIELD(ctx, $K(yb + 66, yb + 125), (w >> {{k}}) & $K(300, 65000));
	}
	if ((uint32_t)(v >> 32) != ctx->now_s)
		sum++;
	st[slot] = (v & 0xFFFFFFFFull) | ((uint64_t)ctx->now_s << 32);
@elif shape == 1
	/* recency {{k}}: low half is the last-seen time, high half the number of sightings */
	age = (uint32_t)v != 0 ? fl_age_s(ctx, (uint32_t)v) : 0xFFFFFFFFu;
	if (age == 0xFFFFFFFFu)
		FL_YIELD(ctx, $K(yb + 2, yb + 61), w & $K(300, 65000));
	else if (age < $K(300, 86400))
		FL_YIELD(ctx, $K(yb + 66, yb + 125), ((uint32_t)(v >> 32) & 0xFFFu) << $S(8, 12));
	else
		sum += age >> 20;
	st[slot] = (((v >> 32) + 1u) << 32) | ctx->now_s;
@elif shape == 2
	/* diversity {{k}}: a window of the last 8 categories seen, one byte each, 0 = empty */
	cat = ((FL_W(ctx, $K(130 + 32 * k, 159 + 32 * k)) ^ w) & 15u) + 1u;
	win = (const uint8_t *)&st[slot];
	for (same = 0, i = 0; i < 8u && win[i] != 0; i++) {
		if (win[i] == cat)
			same++;
	}
	FL_YIELD(ctx, $K(yb + 2, yb + 61), FL_T(ctx, $K(130, 4095 - 8) + same) >> 16);
	sum += i - same;
	st[slot] = (v << 8) | cat;
@else
	/* frequency cap {{k}}: a token bucket, high half tokens, low half last refill time */
	age = fl_age_s(ctx, (uint32_t)v);
	tok = (uint32_t)(v >> 32) + (age >> $S(4, 8));
	if (tok > {{32 + 8 * k}}u)
		tok = {{32 + 8 * k}}u;
	if (tok >= {{2 + k}}u) {
		tok -= {{2 + k}}u;
		FL_YIELD(ctx, $K(yb + 2, yb + 61), $K(300, 65000));
	} else {
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), tok << 12);
		sum++;
	}
	st[slot] = ((uint64_t)tok << 32) | ctx->now_s;
@end
@end
	if (sum != 0)
		FL_YIELD(ctx, $K(642, 701), sum << $S(4, 8));
	else
		FL_YIELD(ctx, $K(706, 765), w & $K(300, 65000));
