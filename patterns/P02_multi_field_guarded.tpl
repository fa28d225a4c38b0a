@pattern P02 multi_field_guarded
@title Multi-field read with guarded predicates, optional cross-field ratio
@variants 70
@lines 30 160
@knob fields 2 8        # fields read
@knob guarded 0 8       # how many of them sit behind a presence + threshold predicate
@knob ratio 0 1         # cross-field ratio of the first two fields via fl_rate_q16
@require guarded <= fields
@body
	@# A presence word gates the guarded fields (presence bits, then a threshold); a passing field
	@# is weighted through the table, a failing one yields a default. Unguarded fields are
	@# read, checked against a floor and yielded raw.
	uint32_t present = FL_W(ctx, $K(0, 255));
	uint32_t sel = FL_W(ctx, $K(0, 255));
	uint32_t acc = 0;
	uint32_t nset = 0;
	if (FL_UNLIKELY(FL_RARE(sel, $K(128, 255)))) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		return;
	}
@for f 0 fields
	uint32_t x{{f}} = FL_W(ctx, $K(0, 255));
@if f < guarded
	if (FL_LIKELY(((present >> {{(f * 5 + 3) % 29}}) & 7u) != 0u &&
		      (x{{f}} & 0xFFFFFu) > $K(100000 + 40000 * f, 130000 + 40000 * f))) {
		uint32_t t{{f}} = FL_T(ctx, x{{f}} >> {{f + 8}});
		if ((t{{f}} & 0xFFFFFu) > $K(500000 + 40000 * f, 530000 + 40000 * f))
			FL_YIELD(ctx, $K(0, 4095), t{{f}} >> {{12 + f}});
		FL_YIELD(ctx, $K(0, 4095), x{{f}} & 0xFFFFu);
		acc += t{{f}} >> 8;
		nset++;
	} else {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
@if ratio && f < 2
		x{{f}} = sel >> {{f + 8}};
@else
		acc ^= sel;
@end
	}
@else
	if (FL_LIKELY((x{{f}} & 0xFFFFu) > $K(4000 + 3000 * f, 6000 + 3000 * f)))
		FL_YIELD(ctx, $K(0, 4095), x{{f}} >> {{8 + f}});
	if (FL_UNLIKELY(FL_RARE(x{{f}}, sel)))
		x{{f}} = FL_T(ctx, $K(0, 4095));
	FL_YIELD(ctx, $K(0, 4095), x{{f}} & 0xFFFFu);
	acc ^= x{{f}};
@end
@end
@if ratio
	@# Cross-field ratio: x0 over x1, both present (or replaced above).
	int32_t r = fl_rate_q16(x0 & 0xFFFFu, (x1 & 0xFFFFFu) | 1u);
	if (r > $K(40000, 64000))
		FL_YIELD(ctx, $K(0, 4095), r);
	else
		FL_YIELD(ctx, $K(0, 4095), r >> 4);
@end
	if ((acc & 0xFFFFFFu) > $K(2000000, 12000000))
		FL_YIELD(ctx, $K(0, 4095), acc >> 12);
	else
		FL_YIELD(ctx, $K(0, 4095), acc & 0xFFFFFu);
	FL_YIELD(ctx, $K(0, 4095), nset * {{fields}}u + (present & 7u));
	if ((present >> 24) > $K(40, 200))
		FL_YIELD_SPARSE(ctx, $K(65536, 1073741823), acc & 0xFFFFu);
