// Golden: patterns/P23_tokenizer.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P23_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1591117005);
	uint32_t h = 691807958;
	uint32_t n = 0, ntok = 0;
	uint32_t best = 0, bestw = 0;
	uint32_t i;

	for (i = 0; i < 32u; i++) {
		uint32_t c = ctx->text[i];
		if (c > 0x20u) {
			h = (h * 688736939) ^ FL_T(ctx, 2642 + c);
			n++;
			continue;
		}
		if (n != 0) {
			uint32_t v = (h >> 24) & 255u;
			uint32_t wt = FL_T(ctx, 2299 + v);
			FL_YIELD(ctx, 159 + (v & 63u), wt & 65535u);
			if (wt > bestw) {
				bestw = wt;
				best = v;
			}
			ntok++;
		}
		h = 348517055;
		n = 0;
	}
	FL_YIELD(ctx, 476, ntok << 12);
	FL_YIELD_SPARSE(ctx, best ^ 705187302, bestw >> 16);
}
