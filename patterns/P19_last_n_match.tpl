@pattern P19 last_n_match
@title Last-N id match: linear scan over recent ids, break on the first match
@variants 20
@lines 30 45
@knob scan 4 40             # recent ids scanned (loop trips)
@knob src 0 1               # target id from: 0 a story field, 1 the request's query keys
@require scan % 2 == 0
@body
@# the id compare keeps idbits low bits, so the scan matches about half the time
@let idbits = scan <= 6 ? 3 : scan <= 12 ? 4 : scan <= 24 ? 5 : 6
@let idmask = (1 << idbits) - 1
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 1-63, target 64-127, ids 130.., timestamps 171.. The table is walked
@# downwards while the ids go up, so gcc cannot fold both bases into one induction
@# variable (a displacement made of two constants, which the cloner cannot fit).
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 63)) ^ $K(65536, 1073741823));
@if src == 0
	uint32_t target = (FL_W(ctx, $K(64, 127)) ^ w) & {{idmask}}u;
@else
	uint32_t target = ((uint32_t)ctx->qkeys[FL_PICK(w, ctx->nqkeys)] ^ w) & {{idmask}}u;
@end
	uint32_t pos = {{scan}}u;
	uint32_t nnew = 0;
	uint32_t i;

	if (FL_RARE(w, $K(1, 127))) {
		FL_YIELD(ctx, $K(66, 125), $K(300, 65000));
		return;
	}
	/* recent ids, newest first: stop at the first match, count the fresh ones before it */
	#pragma GCC unroll 4
	for (i = 0; i < {{scan}}u; i++) {
		uint32_t id = FL_WA(ctx, $K(130, 170) + i);
		if ((id & {{idmask}}u) == target) {
			pos = i;
			break;
		}
		if (id > FL_T(ctx, $K(260 + scan, 4095) - i)) {
			FL_YIELD(ctx, $K(130, 189), id >> 24);
			nnew++;
		}
	}
	FL_YIELD(ctx, $K(194, 253), nnew << $S(8, 12));
	if (pos < {{scan}}u) {
		uint32_t age = fl_age_s(ctx, FL_WA(ctx, $K(171, 255 - scan) + pos));
		FL_YIELD(ctx, $K(258, 317), ({{scan}}u - pos) << $S(8, 12));
		if (age < $K(1000, 900000))
			FL_YIELD_SPARSE(ctx, target ^ $K(65536, 1073741823), 65536u >> (pos & 15u));
		else
			FL_YIELD(ctx, $K(322, 381), (age >> 8) & $K(4100, 65000));
	} else {
		FL_YIELD(ctx, $K(386, 445), w & $K(300, 65000));
	}
