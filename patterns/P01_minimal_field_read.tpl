@pattern P01 minimal_field_read
@title Minimal field read: read one field, check it, yield 1-3 features
@variants 60
@lines 20 90
@knob yields 1 3        # features derived from the field
@knob check 0 3         # 0 rare guard, 1 threshold fallback, 2 fl_validate, 3 flag bit
@knob wide 0 1          # field is a 64-bit word folded to 32 bits
@knob xform 0 2         # 0 table weight of a field bucket, 1 scaled field, 2 xor with a 2nd field
@knob sparse 0 1        # last feature goes to the sparse list
@body
	@# One field; a missing field yields a default and returns; one more check; then the raw
	@# field and 1-3 derived features. Derived features are table lookups, scalings and
	@# compares of loaded words, so the body stays load/branch heavy like a real field read.
@if wide
	uint64_t raw = FL_W64(ctx, $K(0, 127));
	uint32_t v = (uint32_t)(raw >> 32) ^ (uint32_t)raw;
@else
	uint32_t v = FL_W(ctx, $K(0, 255));
@end
	uint32_t aux = FL_W(ctx, $K(0, 255));
	if (FL_UNLIKELY(v == 0u)) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		return;
	}
@if check == 0
	if (FL_UNLIKELY(FL_RARE(aux, $K(0, 127))))
		return;
@elif check == 1
	if ((v & 0xFFFFFu) < $K(100000, 400000))
		v = FL_T(ctx, $K(0, 4095));
@elif check == 2
	if (FL_UNLIKELY(!fl_validate(ctx, $K(0, 240), {{2 + yields}}u)))
		return;
@else
	if ((aux >> $S(0, 31)) & 1u)
		v = ~v;
@end
	FL_YIELD(ctx, $K(0, 4095), v & 0xFFFFu);
@for y 0 yields
@if xform == 0
	uint32_t f{{y}} = FL_T(ctx, v >> {{8 + 6 * y}});
@elif xform == 1
	uint32_t f{{y}} = (v >> {{4 * y}}) * $K(1025, 65535, odd);
@else
	uint32_t f{{y}} = FL_W(ctx, $K(0, 255)) ^ v;
@end
	if (FL_LIKELY((f{{y}} & 0xFFFFFu) > $K(100000, 400000)))
		FL_YIELD(ctx, $K(0, 4095), f{{y}} >> {{16 + y}});
	else
		FL_YIELD(ctx, $K(0, 4095), aux >> {{20 + y}});
	if ((f{{y}} >> {{20 + y}}) != (aux & 0xFFu))
		FL_YIELD(ctx, $K(0, 4095), f{{y}} & 0xFFFFu);
@if sparse && y == yields - 1
	FL_YIELD_SPARSE(ctx, $K(65536, 1073741823), f{{y}} >> 8);
@else
	FL_YIELD(ctx, $K(0, 4095), FL_T(ctx, $K(0, 4095)) & f{{y}});
@end
@end
