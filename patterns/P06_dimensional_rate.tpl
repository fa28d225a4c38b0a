@pattern P06 dimensional_rate
@title Dimensional rate: pick a dimension from the story, then per-dimension rates
@variants 65
@lines 60 100
@knob dims 2 7          # dimensions (surface, position, device, ...) the extractor knows
@knob trips 2 12        # window slots aggregated for the picked dimension
@body
	@# The story picks one dimension; an if/else chain binds that dimension's story window
	@# and scale, the table gives its threshold, a loop aggregates its rate, then every
	@# dimension's own count is compared with its table baseline.
	uint32_t w = fl_mix32(FL_W(ctx, $K(0, 255)) ^ $K(65536, 1073741823));
	uint32_t dim = FL_PICK(w, {{dims}});
	uint32_t base;
	uint32_t scale;
@for d 0 dims
@if d == 0
	if (dim == 0u) {
@elif d < dims - 1
	} else if (dim == {{d}}u) {
@else
	} else {
@end
		base = FL_W(ctx, $K(0, 255)) >> 24;
		scale = $K(1025, 65535, odd);
@end
	}
	if (FL_RARE(w, $K(0, 127))) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		return;
	}
	uint32_t thr = FL_T(ctx, $K(0, 4095) + dim) & 0xFFFFFu;
	uint32_t num = 0;
	uint32_t den = 0;
	uint32_t best = 0;
	uint32_t zero = 0;
	#pragma GCC unroll 4
	for (uint32_t i = 0; i < {{trips}}u; i++) {
		uint32_t ev = FL_WA(ctx, base + i);
		uint32_t imp = FL_WA(ctx, base + i + {{trips}}u) & 0xFFFu;
		if (FL_UNLIKELY(imp < $K(40, 400))) {
			zero++;
			ev >>= 8;
		}
		den += imp;
		if ((ev & 0xFFFFFu) > thr) {
			num += ev & 0xFFu;
			if ((ev & 0xFFu) > best)
				best = ev & 0xFFu;
		}
	}
	int32_t rate = fl_rate_q16(num, den);
	FL_YIELD(ctx, $K(0, 4095) + dim, rate);
	FL_YIELD(ctx, $K(0, 4095), (uint32_t)rate * scale >> 16);
	if (num == 0u)
		FL_YIELD(ctx, $K(0, 4095), den >> 2);
	else
		FL_YIELD(ctx, $K(0, 4095), best + (num >> 4));
	if (rate > $K(30000, 60000))
		FL_YIELD_SPARSE(ctx, $K(65536, 1073741823) ^ dim, rate);
	uint32_t total = 0;
@for d 0 dims
	uint32_t r{{d}} = FL_W(ctx, $K(0, 255)) & 0xFFFFu;
	if (r{{d}} > (FL_T(ctx, $K(0, 4095)) & 0xFFFFu))
		FL_YIELD(ctx, $K(0, 4095), r{{d}});
	total += r{{d}} >> 4;
@end
	uint32_t share = (total >> 4) + 1u;
	if ((uint32_t)rate > share)
		FL_YIELD(ctx, $K(0, 4095), (uint32_t)rate - share);
	else
		FL_YIELD(ctx, $K(0, 4095), share - (uint32_t)rate);
	FL_YIELD(ctx, $K(0, 4095), zero * 4096u + (total & 0xFFu));
