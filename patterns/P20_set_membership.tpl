@pattern P20 set_membership
@title Set-membership match: story ids tested against several small id sets
@variants 15
@lines 25 90
@knob sets 1 6              # sets tested (unrolled)
@knob members 2 12          # members per set (scan loop trips)
@require members % 2 == 0
@require sets * members <= 48
@body
@# ids keep idbits low bits, so a set holds the id a third to a half of the time
@let idbits = members <= 3 ? 2 : members <= 6 ? 3 : 4
@let idmask = (1 << idbits) - 1
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 1-31, set s 32+32s..; table: set s members 130+640s.., weights 340+640s..
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 31)) ^ $K(65536, 1073741823));
	uint32_t nhit = 0;
	uint32_t id, at, m;

	if (FL_RARE(w, $K(1, 127)))
		return;
	/* each set's members live in table slots, scanned until the id is found */
@for s 0 sets
	id = (FL_W(ctx, $K(32 + 32 * s, 63 + 32 * s)) ^ w) & {{idmask}}u;
	#pragma GCC unroll 4
	for (at = {{members}}u, m = 0; m < {{members}}u; m++) {
		if ((FL_T(ctx, $K(130 + 640 * s, 330 + 640 * s) + m) & {{idmask}}u) == id) {
			at = m;
			break;
		}
	}
	if (at < {{members}}u) {
		nhit++;
		FL_YIELD(ctx, $K(64 * s + 66, 64 * s + 125), FL_T(ctx, $K(340 + 640 * s, 528 + 640 * s) + at) >> {{12 + s}});
	}
@end
	FL_YIELD(ctx, $K(514, 573), nhit << $S(10, 14));
	if (nhit == 0)
		FL_YIELD(ctx, $K(578, 637), w & $K(300, 65000));
	else
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), nhit << $S(10, 14));
