@pattern P26 delegating_wrapper
@title Thin delegating wrapper: pre-checks, then forward or convert a shared helper's result
@variants 4
@lines 25 85
@knob checks 1 10           # pre-checks before delegating (unrolled)
@knob convert 0 1           # 0 forward the looked-up counters, 1 convert them (rate, log bucket, delta)
@body
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 1-15, check c 16+24c..39+24c
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 15)) ^ $K(65536, 1073741823));
	const uint32_t *p;
	uint32_t f;

	if (!fl_validate(ctx, $K(1, 240), 16))
		return;
@for c 0 checks
@let kind = c % 3
@let yb = 64 * (1 + c)
@if kind == 0
	/* pre-check {{c}}: a required field is missing, yield the default */
	f = FL_W(ctx, $K(16 + 24 * c, 39 + 24 * c));
	if (FL_RARE(f, $K(1, 127))) {
		FL_YIELD(ctx, $K(yb + 2, yb + 61), $K(300, 65000));
		return;
	}
@elif kind == 1
	/* pre-check {{c}}: an out-of-range field re-keys the delegate */
	f = FL_W(ctx, $K(16 + 24 * c, 39 + 24 * c)) & 0xFFFFFu;
	if (f > $K(1000, 900000)) {
		w = fl_mix32(w ^ f);
		FL_YIELD(ctx, $K(yb + 2, yb + 61), f >> 8);
	}
@else
	/* pre-check {{c}}: a disabled surface skips the delegate */
	f = fl_mix32(FL_W(ctx, $K(16 + 24 * c, 39 + 24 * c)) ^ $K(65536, 1073741823));
	if (FL_RARE(f, w)) {
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), f >> 16);
		return;
	}
@end
@end
	p = fl_hmap_find(ctx, fl_key_of(w));
	if (p == NULL) {
		FL_YIELD(ctx, $K(770, 829), w & $K(300, 65000));
		return;
	}
@if convert
	/* convert: engagement rate, log-bucketed volume, counter delta */
	FL_YIELD(ctx, $K(834, 893), fl_rate_q16(p[0], p[1]));
	FL_YIELD(ctx, $K(898, 957), fl_log_bucket(p[2], 16) << $S(10, 14));
	if (p[3] > p[4])
		FL_YIELD(ctx, $K(962, 1021), (p[3] - p[4]) >> $S(2, 6));
	else
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), p[5] >> $S(2, 6));
@else
	/* forward: the counters as they are */
@for i 0 6
@let yb = 64 * (16 + i)
	FL_YIELD(ctx, $K(yb + 2, yb + 61), p[{{i}}]);
@end
@end
