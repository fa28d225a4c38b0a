// Golden: patterns/P26_delegating_wrapper.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P26_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 549552849);
	uint32_t w = fl_mix32(FL_W(ctx, 12) ^ 673681150);
	const uint32_t *p;
	uint32_t f;

	if (!fl_validate(ctx, 72, 16))
		return;
	/* pre-check 0: a required field is missing, yield the default */
	f = FL_W(ctx, 26);
	if (FL_RARE(f, 71)) {
		FL_YIELD(ctx, 89, 37963);
		return;
	}
	p = fl_hmap_find(ctx, fl_key_of(w));
	if (p == NULL) {
		FL_YIELD(ctx, 792, w & 31079);
		return;
	}
	/* forward: the counters as they are */
	FL_YIELD(ctx, 1069, p[0]);
	FL_YIELD(ctx, 1134, p[1]);
	FL_YIELD(ctx, 1193, p[2]);
	FL_YIELD(ctx, 1259, p[3]);
	FL_YIELD(ctx, 1299, p[4]);
	FL_YIELD(ctx, 1365, p[5]);
}
