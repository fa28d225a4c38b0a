@pattern P11 hash_tree_walk
@title Hash lookup then a walk over an implicit binary tree in the table
@variants 8
@lines 60 110
@knob chains 0 2                              # extra chains: lookup keyed by the leaf, then another walk
@knob steps 2 9                               # walk steps (tree depth) per chain, unrolled
@require 15 + (chains + 1) * (9 * steps + steps / 2 + 3) + 3 * chains >= 63   # C lines
@require 15 + (chains + 1) * (9 * steps + steps / 2 + 3) + 3 * chains <= 106
@body
@# Chain c's tree lives at table[tb + n] (tb: the chain's per-copy base): node n's entry
@# holds the story word to compare in bits 24..31 and the split threshold in bits 0..15;
@# its children are 2n+1 and 2n+2, and the leaf's entry is the chain's output.
@# Clone-friendly constants: chain bases lie in disjoint 1300-word bands (a tree spans
@# < 1024 words, so no wrap and no shared entries); dense slot o is drawn odd from
@# 33 + 64 * o .. 94 + 64 * o; FL_RARE keys stay in 2..126; multipliers are odd, from
@# (2^n, 2^(n+1)), so none is one gcc turns into shifts and adds (2^n + 1, 3 * 2^n).
	uint32_t sel = fl_mix32(FL_W(ctx, $K(32, 140)) ^ $K(65536, 1073741823));
	const uint32_t *h = fl_hmap_find(ctx, fl_key_of(sel));
	uint32_t bias = h != NULL ? h[{{variant % 6}}] : FL_W(ctx, $K(141, 255));
	uint32_t tb, n, t, f, acc = sel;

	if (FL_RARE(bias, $K(2, 126)))
		FL_YIELD(ctx, $K(33, 94, odd), $K(1000, 90000));
@let nch = chains + 1
@for c 0 nch
	tb = $K(128 + 1300 * c, 378 + 1300 * c);
	n = 0;
@for s 0 steps
	t = FL_T(ctx, tb + n);
	f = FL_WA(ctx, t >> 24) ^ bias;
	if ((f & 65535u) < (t & 65535u)) {
		n = 2u * n + 1u;
		acc += f >> {{1 + (s + c) % 7}};
	} else {
		n = 2u * n + 2u;
@if (s % 2) == 1
@let o = 1 + c * 8 + s / 2
		FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)(t >> {{8 + s % 5}}) - $K(1000, 60000));
@end
		acc ^= t * $K((1024 << (s % 5)) + 3, (2048 << (s % 5)) - 1, odd);
	}
@end
@let o = 30 + c
	t = FL_T(ctx, tb + n);
	FL_YIELD(ctx, $K(33 + 64 * o, 94 + 64 * o, odd), (int32_t)(t & 65535u) - $K(1000, 30000));
@if c < chains
	h = fl_hmap_find(ctx, fl_key_of(acc ^ n));
	bias = h != NULL ? h[{{(c + 2) % 6}}] ^ t : bias + t;
@end
@end
	FL_YIELD(ctx, $K(33 + 64 * 40, 94 + 64 * 40, odd), (int32_t)(acc & 65535u) * $K(8195, 16383, odd));
	if ((acc & 65535u) > $K(8192, 32000))
		FL_YIELD(ctx, $K(33 + 64 * 41, 94 + 64 * 41, odd), (int32_t)(n * $K(16387, 32767, odd)));
