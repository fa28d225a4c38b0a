// Golden: patterns/P25_topic_rate_iter.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P25_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1225932035);
	uint32_t w = fl_mix32(FL_W(ctx, 165) ^ 321656614);
	const uint32_t *user = fl_hmap_find(ctx, fl_key_of(w));
	uint32_t sum = 0, live = 0, t, j;
	if (user == NULL) {
		FL_YIELD(ctx, 41, w & 28250);
		return;
	}
	/* each topic id names a bucket of the map: empty buckets are skipped */
	#pragma GCC unroll 4
	for (t = 0; t < 2u; t++) {
		const struct fl_hmap_slot *s = &ctx->hmap->slots[(((user[t] ^ w) * 277468665) >> 8) & ctx->hmap->mask];
		if (s->key == 0)
			continue;
		live++;
		#pragma GCC unroll 4
		for (j = 0; j < 2u; j++) {
			if (s->val[j] > user[j])
				FL_YIELD(ctx, 169 + j, ((uint64_t)s->val[j] * FL_T(ctx, 1265 - j)) >> 40);
			else
				sum += s->val[j] >> 4;
		}
	}
	FL_YIELD(ctx, 298, sum >> 11);
	FL_YIELD(ctx, 340, live << 14);
	if (live > 1u)
		FL_YIELD_SPARSE(ctx, w ^ 454571666, sum >> 16);
}
