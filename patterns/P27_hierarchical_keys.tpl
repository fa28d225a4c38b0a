@pattern P27 hierarchical_keys
@title Multi-category hierarchical keys (root, parent, leaf), two aggregation passes
@variants 5
@lines 50 140
@knob second 0 1            # second pass: per-category values against the first pass's mean
@knob cats 3 8              # categories, each keyed at three levels (unrolled)
@body
@let shift = cats <= 4 ? 2 : 3
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
@# Story words: w 240-255, category c: root 30c+1.., parent 30c+10.., leaf 30c+20..
	uint32_t w = fl_mix32(FL_W(ctx, $K(240, 255)) ^ $K(65536, 1073741823));
	uint32_t agg[3] = {0, 0, 0};
	uint32_t top = 0;
	uint32_t k0, k1, k2, v;
	const uint32_t *p;
@if second
	uint32_t cv[{{cats}}];
	uint32_t mean, above = 0, spread = 0, c;
@end

	if (FL_RARE(w, $K(1, 127)))
		return;
	/* first pass: per category, root -> parent -> leaf keys; a level is read only when its parent is active */
@for c 0 cats
	k0 = (FL_W(ctx, $K(30 * c + 1, 30 * c + 9)) ^ w) * $K(1234567, 987654321, odd);
	v = FL_T(ctx, k0) >> 20;
	if (v > ((w >> {{c % 12}}) & 4095u)) {
		k1 = (k0 ^ FL_W(ctx, $K(30 * c + 10, 30 * c + 19))) * $K(1234567, 987654321, odd);
		v += FL_T(ctx, k1) >> 20;
		agg[1] += v;
		top ^= k1;
		if (FL_T(ctx, k1 >> 12) > FL_T(ctx, k0 >> 12)) {
			k2 = (k1 ^ FL_W(ctx, $K(30 * c + 20, 30 * c + 29))) * $K(1234567, 987654321, odd);
			agg[2] += FL_T(ctx, k2) >> 22;
			FL_YIELD(ctx, $K(64 * c + 66, 64 * c + 125), v);
		}
	}
	agg[0] += v;
@if second
	cv[{{c}}] = v;
@end
@end
	FL_YIELD(ctx, $K(642, 701), agg[0] << $S(4, 8));
	FL_YIELD(ctx, $K(706, 765), agg[1] << $S(4, 8));
	FL_YIELD(ctx, $K(770, 829), agg[2] << $S(4, 8));

	/* the combined parent key names the user's affinity record */
	p = fl_hmap_find(ctx, fl_key_of(top ^ w));
	if (p == NULL) {
		FL_YIELD(ctx, $K(834, 893), w & $K(300, 65000));
	} else if (p[0] > p[1]) {
		FL_YIELD_SPARSE(ctx, top ^ $K(65536, 1073741823), (p[0] - p[1]) >> $S(2, 6));
		FL_YIELD(ctx, $K(898, 957), agg[1] + (p[2] & 0xFFFFu));
	} else {
		FL_YIELD(ctx, $K(962, 1021), agg[2] + (p[3] & 0xFFFFu));
	}
@if second

	/* second pass: each category against the mean of the first */
	mean = (agg[0] + agg[1]) >> {{shift}};
	#pragma GCC unroll 4
	for (c = 0; c < {{cats}}u; c++) {
		if (cv[c] > mean) {
			above++;
			spread += cv[c] - mean;
		} else {
			spread += (mean - cv[c]) >> 1;
		}
	}
	FL_YIELD(ctx, $K(1026, 1085), above << $S(10, 14));
	FL_YIELD(ctx, $K(1090, 1149), spread << $S(4, 8));
@end
