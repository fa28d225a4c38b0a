// Golden: patterns/P11_hash_tree_walk.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P11_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1226328559);
	uint32_t sel = fl_mix32(FL_W(ctx, 103) ^ 288963356);
	const uint32_t *h = fl_hmap_find(ctx, fl_key_of(sel));
	uint32_t bias = h != NULL ? h[0] : FL_W(ctx, 179);
	uint32_t tb, n, t, f, acc = sel;

	if (FL_RARE(bias, 40))
		FL_YIELD(ctx, 51, 44692);
	tb = 223;
	n = 0;
	t = FL_T(ctx, tb + n);
	f = FL_WA(ctx, t >> 24) ^ bias;
	if ((f & 65535u) < (t & 65535u)) {
		n = 2u * n + 1u;
		acc += f >> 1;
	} else {
		n = 2u * n + 2u;
		acc ^= t * 1513;
	}
	t = FL_T(ctx, tb + n);
	f = FL_WA(ctx, t >> 24) ^ bias;
	if ((f & 65535u) < (t & 65535u)) {
		n = 2u * n + 1u;
		acc += f >> 2;
	} else {
		n = 2u * n + 2u;
		FL_YIELD(ctx, 121, (int32_t)(t >> 9) - 38512);
		acc ^= t * 3315;
	}
	t = FL_T(ctx, tb + n);
	f = FL_WA(ctx, t >> 24) ^ bias;
	if ((f & 65535u) < (t & 65535u)) {
		n = 2u * n + 1u;
		acc += f >> 3;
	} else {
		n = 2u * n + 2u;
		acc ^= t * 5369;
	}
	t = FL_T(ctx, tb + n);
	f = FL_WA(ctx, t >> 24) ^ bias;
	if ((f & 65535u) < (t & 65535u)) {
		n = 2u * n + 1u;
		acc += f >> 4;
	} else {
		n = 2u * n + 2u;
		FL_YIELD(ctx, 177, (int32_t)(t >> 11) - 27156);
		acc ^= t * 13165;
	}
	t = FL_T(ctx, tb + n);
	f = FL_WA(ctx, t >> 24) ^ bias;
	if ((f & 65535u) < (t & 65535u)) {
		n = 2u * n + 1u;
		acc += f >> 5;
	} else {
		n = 2u * n + 2u;
		acc ^= t * 28327;
	}
	t = FL_T(ctx, tb + n);
	FL_YIELD(ctx, 1995, (int32_t)(t & 65535u) - 22106);
	FL_YIELD(ctx, 2621, (int32_t)(acc & 65535u) * 10949);
	if ((acc & 65535u) > 15570)
		FL_YIELD(ctx, 2677, (int32_t)(n * 28113));
}
