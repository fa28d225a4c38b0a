@pattern P23 tokenizer
@title Tokenizer: hash text characters (table-driven) into a vocabulary, unigram and bigram features
@variants 8
@lines 25 35
@knob lenlog 5 8            # text bytes scanned: 1 << lenlog (at most FL_TEXT_BYTES)
@knob bigram 0 1            # also yield (previous, current) token pairs
@knob voclog 8 11           # vocabulary size: 1 << voclog table slots
@require voclog == 8 + (lenlog - 5 + 2 * bigram) % 4
@body
@let vmask = (1 << voclog) - 1
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
	uint32_t h = $K(65536, 1073741823);
	uint32_t n = 0, ntok = 0;
	uint32_t best = 0, bestw = 0;
@if bigram
	uint32_t prev = 0;
@end
	uint32_t i;

	for (i = 0; i < {{1 << lenlog}}u; i++) {
		uint32_t c = ctx->text[i];
		if (c > 0x20u) {
			h = (h * $K(1234567, 987654321, odd)) ^ FL_T(ctx, $K(130, 4095 - 255) + c);
			n++;
			continue;
		}
		if (n != 0) {
			uint32_t v = (h >> {{32 - voclog}}) & {{vmask}}u;
			uint32_t wt = FL_T(ctx, $K(130, 4095 - vmask) + v);
			FL_YIELD(ctx, $K(130, 192) + (v & 63u), wt & 65535u);
@if bigram
			FL_YIELD(ctx, $K(258, 320) + (v & 63u), FL_T(ctx, $K(130, 4095) + ((prev * $K(1234567, 987654321, odd)) ^ v)) >> 16);
			prev = v;
@end
			if (wt > bestw) {
				bestw = wt;
				best = v;
			}
			ntok++;
		}
		h = $K(65536, 1073741823);
		n = 0;
	}
	FL_YIELD(ctx, $K(450, 509), ntok << $S(8, 12));
	FL_YIELD_SPARSE(ctx, best ^ $K(65536, 1073741823), bestw >> 16);
