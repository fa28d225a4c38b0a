@pattern P17 sparse_forward
@title Sparse feature forward: lists of (id, score) with a filter
@variants 15
@lines 20 130
@knob lists 1 7                               # sparse lists forwarded
@knob items 0 2                               # items per list: 4, 8, 16 (two per trip)
@body
@# List l is (id, score) word pairs from story word at + 32 * l on (at: a story-chosen
@# offset). Filters rotate by list: score threshold, id bitmap in the table, or both; kept
@# items go to FL_YIELD_SPARSE with a per-list id salt, and each list yields its kept count.
@# Clone-friendly constants: list words are addressed from data, so gcc can merge no loads
@# of a copy; dense slot l is drawn odd from 33 + 64 * l .. 94 + 64 * l; scores and kept
@# counts are scaled by shifts, not per-copy multipliers (gcc's loop optimisers price a
@# multiply by its constant, so copies would get different loop code).
@let ni = 4 << items
	uint32_t w = fl_mix32(FL_W(ctx, $K(32, 255)) ^ $K(65536, 1073741823));
	uint32_t at = w >> 25;
	uint32_t i, id, sc, kept;

	if (FL_RARE(w, $K(2, 126)))
		return;
@for l 0 lists
@let filter = (l + variant) % 3
	kept = 0;
	#pragma GCC unroll 4
	for (i = 0; i < {{2 * ni}}u; i += 4u) {
@for u 0 2
		id = FL_WA(ctx, at + i + {{32 * l + 2 * u}}u);
		sc = FL_WA(ctx, at + i + {{32 * l + 2 * u + 1}}u) & 65535u;
@if filter == 0
		if (sc > $K(8192, 32000)) {
@elif filter == 1
		if ((FL_T(ctx, id >> 5) >> (id & 31u)) & 1u) {
@else
		if (sc > $K(8192, 32000) && ((FL_T(ctx, id ^ w) >> (id & 31u)) & 1u)) {
@end
			FL_YIELD_SPARSE(ctx, id ^ $K(65536, 1073741823), (int32_t)(sc << {{4 + (l + u) % 3}}) - $K(1000, 60000));
			kept++;
		}
@end
	}
	FL_YIELD(ctx, $K(33 + 64 * l, 94 + 64 * l, odd), (int32_t)(kept << {{8 + l % 4}}) + $K(1000, 60000));
@end
