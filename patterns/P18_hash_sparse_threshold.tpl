@pattern P18 hash_sparse_threshold
@title Hash lookup then sparse forward of the items above a threshold
@variants 8
@lines 20 30
@knob miss 0 1                                # on a miss: 0 yield a default and return, 1 weight from story
@knob items 4 11                              # items forwarded (loop trips)
@body
@# The hit's counters weight the story items, (id, score) word pairs from word lb on;
@# items scoring above the threshold are forwarded as sparse features, and the forwarded
@# count is a dense feature.
@# Clone-friendly constants: the selector, fallback and item words come from disjoint
@# ranges and items never wrap the story; dense slot o is drawn odd from 33 + 64 * o ..
@# 94 + 64 * o; the count is scaled by a shift, not a per-copy multiplier.
	uint32_t sel = fl_mix32(FL_W(ctx, $K(32, 99)) ^ $K(65536, 1073741823));
	const uint32_t *h = fl_hmap_find(ctx, fl_key_of(sel));
	uint32_t i, wgt, sc, n = 0;
	const uint32_t lb = $K(141, 231);

@if miss == 0
	if (h == NULL) {
		FL_YIELD(ctx, $K(33, 94, odd), $K(1000, 60000));
		return;
	}
	wgt = (h[{{variant % 6}}] & 255u) + 1u;
@else
	if (h != NULL) {
		wgt = (h[{{variant % 6}}] & 255u) + 1u;
		FL_YIELD(ctx, $K(33, 94, odd), (int32_t)(h[{{(variant + 3) % 6}}] & 65535u));
	} else {
		wgt = (FL_W(ctx, $K(100, 140)) & 127u) + $K(3, 120);
	}
@end
	#pragma GCC unroll 4
	for (i = 0; i < {{2 * items}}u; i += 2u) {
		sc = ((FL_WA(ctx, lb + i + 1u) & 65535u) * wgt) >> 8;
		if (sc > $K(8192, 32000)) {
			FL_YIELD_SPARSE(ctx, FL_WA(ctx, lb + i) ^ $K(65536, 1073741823), (int32_t)sc);
			n++;
		}
	}
	FL_YIELD(ctx, $K(97, 158, odd), (int32_t)(n << 11) - $K(1000, 60000));
	if (n == 0u)
		FL_YIELD(ctx, $K(161, 222, odd), (int32_t)(wgt * $K(1027, 2047, odd)));
