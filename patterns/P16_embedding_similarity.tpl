@pattern P16 embedding_similarity
@title Embedding similarity (dot, cosine, L2) between rows of two embedding regions
@variants 15
@lines 30 45
@knob dims 0 5                                # dimensions: 8, 16, 24, 32, 48, 64
@knob metric 0 2                              # 0 dot, 1 cosine, 2 L2
@body
@# Row a comes from the query region (rows 0..511), row b from the item region (rows
@# 512..1023), picked by story data through the table. Accumulation is integer (int64);
@# only the final normalisation of cosine and L2 uses scalar float. The saturation exit
@# keeps the loop scalar: gcc -O2 would otherwise vectorize the reduction into SSE.
@# Clone-friendly constants: dense slot o is drawn odd from 33 + 64 * o .. 94 + 64 * o; the
@# agreement count is scaled by a shift (a per-copy multiplier of a loop-computed value
@# changes gcc's induction-variable choice from copy to copy); FL_RARE keys stay in 2..126.
@let nd = dims < 4 ? 8 * (dims + 1) : 16 * (dims - 1)
	uint32_t w = fl_mix32(FL_W(ctx, $K(32, 255)) ^ $K(65536, 1073741823));
	const int16_t *a = ctx->emb + (size_t)(w & 511u) * FL_EMB_DIM;
	const int16_t *b = ctx->emb + (size_t)(512u + (FL_T(ctx, w >> 20) & 511u)) * FL_EMB_DIM;
	uint32_t d;
@if metric == 2
	int64_t l2 = 0;
	int32_t df;
@else
	int64_t dot = 0;
@end
@if metric == 0
	uint32_t agree = 0;
@end
@if metric == 1
	int64_t na = 0, nb = 0;
@end

	if (FL_RARE(w, $K(2, 126)))
		return;
	#pragma GCC unroll 4
	for (d = 0; d < {{nd}}u; d += 4u) {
@for u 0 4
@if metric == 2
		df = a[d + {{u}}u] - b[d + {{u}}u];
		l2 += (int64_t)df * df;
@else
		dot += a[d + {{u}}u] * b[d + {{u}}u];
@end
@if metric == 0
		agree += (uint32_t)((a[d + {{u}}u] ^ b[d + {{u}}u]) >= 0);
@end
@if metric == 1
		na += a[d + {{u}}u] * a[d + {{u}}u];
		nb += b[d + {{u}}u] * b[d + {{u}}u];
@end
@end
@if metric == 2
		if (FL_UNLIKELY(l2 > ((int64_t)1 << 42)))
@else
		if (FL_UNLIKELY(dot > ((int64_t)1 << 42) || dot < -((int64_t)1 << 42)))
@end
			break;
	}
@if metric == 0
	FL_YIELD(ctx, $K(33, 94, odd), (int32_t)(dot >> {{12 + dims / 2}}));
	if (dot > $K(1000, 900000))
		FL_YIELD(ctx, $K(97, 158, odd), $K(1000, 60000));
	else if (dot > 0)
		FL_YIELD(ctx, $K(161, 222, odd), (int32_t)(dot >> 4));
	else
		FL_YIELD(ctx, $K(225, 286, odd), (int32_t)((dot >> 20) & $K(4096, 65535)));
	FL_YIELD(ctx, $K(289, 350, odd), (int32_t)(agree << 10) - $K(1000, 60000));
@elif metric == 1
	{
		float den = (float)na * (float)nb + 1.0f;
		float c2 = (float)dot * (float)(dot < 0 ? -dot : dot) / den;
		FL_YIELD(ctx, $K(33, 94, odd), (int32_t)(c2 * 65536.0f));
		if (c2 > 0.25f)
			FL_YIELD(ctx, $K(97, 158, odd), $K(1000, 60000));
	}
@else
	{
		float sim = 65536.0f / (1.0f + (float)(l2 >> 16));
		FL_YIELD(ctx, $K(33, 94, odd), (int32_t)sim);
		if (l2 < $K(1000, 900000))
			FL_YIELD(ctx, $K(97, 158, odd), $K(1000, 60000));
	}
@end
	FL_YIELD(ctx, $K(353, 414, odd), (int32_t)(b[{{nd - 1}}] ^ a[0]) * $K(1027, 2047, odd));
