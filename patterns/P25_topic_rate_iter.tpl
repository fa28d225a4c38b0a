@pattern P25 topic_rate_iter
@title Multi-topic hash iteration: walk the user's topic buckets, inner rate loop per topic
@variants 15
@lines 20 30
@knob topics 2 6            # topic buckets walked (outer trips; the user record holds 6 topic ids)
@knob trips 2 6             # counters rated per topic (inner trips)
@body
@# Constants sit in disjoint bands so no two sites can alias in any copy (the compiler would
@# merge them in some copies only, and the copies' code shapes would differ): dense slots in
@# 64-slot bands, one per yield site; a base added to a runtime index is >= 130 and never wraps.
	uint32_t w = fl_mix32(FL_W(ctx, $K(1, 255)) ^ $K(65536, 1073741823));
	const uint32_t *user = fl_hmap_find(ctx, fl_key_of(w));
	uint32_t sum = 0, live = 0, t, j;
	if (user == NULL) {
		FL_YIELD(ctx, $K(2, 61), w & $K(300, 65000));
		return;
	}
	/* each topic id names a bucket of the map: empty buckets are skipped */
	#pragma GCC unroll 4
	for (t = 0; t < {{topics}}u; t++) {
		const struct fl_hmap_slot *s = &ctx->hmap->slots[(((user[t] ^ w) * $K(1234567, 987654321, odd)) >> 8) & ctx->hmap->mask];
		if (s->key == 0)
			continue;
		live++;
		#pragma GCC unroll 4
		for (j = 0; j < {{trips}}u; j++) {
			if (s->val[j] > user[j])
				FL_YIELD(ctx, $K(130, 189 - trips) + j, ((uint64_t)s->val[j] * FL_T(ctx, $K(260 + trips, 4095) - j)) >> 40);
			else
				sum += s->val[j] >> 4;
		}
	}
	FL_YIELD(ctx, $K(258, 317), sum >> $S(8, 14));
	FL_YIELD(ctx, $K(322, 381), live << $S(10, 14));
	if (live > {{topics / 2}}u)
		FL_YIELD_SPARSE(ctx, w ^ $K(65536, 1073741823), sum >> 16);
