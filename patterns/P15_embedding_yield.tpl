@pattern P15 embedding_yield
@title Embedding yield: per-type row lookup into ctx->emb, then a dimension loop
@variants 20
@lines 20 75
@knob types 2 6                               # entity types (switch arms)
@knob dims 0 3                                # dimensions yielded: 8, 16, 32, 64
@body
@# The type comes from a story word; each type finds its row its own way (hash map, table
@# indirection or story word) and has its own output slots and scale. The loop yields the
@# row four dimensions per trip and accumulates an L1 norm.
@# Clone-friendly constants: the selector word and the arms' words come from disjoint
@# ranges; each arm's slot base and scale come from the arm's own band, and slot bases
@# (>= 161) never meet the two final slots; thresholds compared with int16 values stay
@# above 128; FL_RARE keys stay in 2..126.
@let nd = 8 << dims
	uint32_t w = fl_mix32(FL_W(ctx, $K(32, 99)) ^ $K(65536, 1073741823));
	const uint32_t *h;
	const int16_t *row;
	uint32_t slot, d;
	int32_t scale, v, norm = 0;

	switch (FL_PICK(w, {{types}})) {
@for t 0 types
@if t == types - 1
	default:
@else
	case {{t}}:
@end
@if (t % 3) == 0
		h = fl_hmap_find(ctx, fl_key_of(w >> {{t + 3}}));
		row = ctx->emb + (size_t)((h != NULL ? h[{{t % 6}}] : w) & (FL_EMB_ROWS - 1u)) * FL_EMB_DIM;
@elif (t % 3) == 1
		row = ctx->emb + (size_t)(FL_T(ctx, FL_W(ctx, $K(100, 255))) & (FL_EMB_ROWS - 1u)) * FL_EMB_DIM;
@else
		row = ctx->emb + (size_t)((FL_W(ctx, $K(100, 255)) >> {{t + 4}}) & (FL_EMB_ROWS - 1u)) * FL_EMB_DIM;
@end
		slot = $K(161 + 640 * t, 731 + 640 * t);
		scale = $K(1000 + 5000 * t, 4900 + 5000 * t);
		break;
@end
	}
	if (FL_RARE(w, $K(2, 126)))
		return;
	#pragma GCC unroll 4
	for (d = 0; d < {{nd}}u; d += 4u) {
@for u 0 4
		v = row[d + {{u}}u];
@if (u % 2) == 0
		if (v > $K(129, 4000))
			FL_YIELD(ctx, slot + d + {{u}}u, (v * scale) >> 8);
@else
		if (v != 0)
			FL_YIELD(ctx, slot + d + {{u}}u, (v * scale) >> 8);
@end
		norm += v < 0 ? -v : v;
@end
	}
	FL_YIELD(ctx, $K(33, 94, odd), norm >> {{dims + 2}});
	if (norm > $K(1000, 30000))
		FL_YIELD(ctx, $K(97, 158, odd), $K(1000, 60000));
