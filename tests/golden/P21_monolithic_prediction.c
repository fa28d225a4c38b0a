// Golden: patterns/P21_monolithic_prediction.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P21_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1452627437);
	uint32_t w = fl_mix32(FL_W(ctx, 4) ^ 571947940);
	uint32_t w2 = FL_W(ctx, 22) ^ w;
	uint32_t acc = FL_T(ctx, 23);
	uint32_t npos = 0;
	uint32_t cal, v, i;

	if (FL_RARE(w, 59) || !fl_validate(ctx, 90, 16)) {
		FL_YIELD(ctx, 34, 29996);
		return;
	}
	/* input layer: story features against table cutoffs, one partial output each */
	for (i = 0; i < 4u; i++) {
		uint32_t x = FL_WA(ctx, 215 + i);
		uint32_t wt = FL_T(ctx, 345 + i);
		if (x > wt) {
			FL_YIELD(ctx, 147 + i, x >> 20);
			npos++;
		} else {
			acc += wt >> 8;
		}
	}
	FL_YIELD(ctx, 238, acc >> 13);

	/* class-specific adjustment */
	switch (FL_PICK(w, 14)) {
	case 0:
		acc += FL_T(ctx, 545) >> 4;
		break;
	case 1:
		acc ^= FL_T(ctx, 616);
		break;
	case 2:
		acc += FL_W(ctx, 42) >> 10;
		FL_YIELD(ctx, 274, acc >> 14);
		break;
	case 3:
		acc = (acc >> 1) + FL_W(ctx, 45);
		break;
	case 4:
		acc += FL_T(ctx, 789) >> 8;
		break;
	case 5:
		acc ^= FL_T(ctx, 873);
		break;
	case 6:
		acc += FL_W(ctx, 57) >> 14;
		FL_YIELD(ctx, 365, acc >> 13);
		break;
	case 7:
		acc = (acc >> 1) + FL_W(ctx, 62);
		break;
	case 8:
		acc += FL_T(ctx, 1050) >> 7;
		break;
	case 9:
		acc ^= FL_T(ctx, 1130);
		break;
	case 10:
		acc += FL_W(ctx, 74) >> 11;
		FL_YIELD(ctx, 411, acc >> 12);
		break;
	case 11:
		acc = (acc >> 1) + FL_W(ctx, 77);
		break;
	case 12:
		acc += FL_T(ctx, 1300) >> 6;
		break;
	case 13:
		acc ^= FL_T(ctx, 1360);
		break;
	}

	/* calibration ladder 0: 6 rungs, cut points and outputs from the model table */
	v = acc ^ FL_W(ctx, 169);
	if (v < FL_T(ctx, 2698))
		cal = FL_T(ctx, 2737) >> 16;
	else if (v < FL_T(ctx, 2773))
		cal = FL_T(ctx, 2803) >> 16;
	else if (v < FL_T(ctx, 2832))
		cal = FL_T(ctx, 2863) >> 16;
	else if (v < FL_T(ctx, 2892))
		cal = FL_T(ctx, 2933) >> 16;
	else if (v < FL_T(ctx, 2960))
		cal = FL_T(ctx, 2989) >> 16;
	else
		cal = w2 >> 16;
	FL_YIELD(ctx, 914, cal);
	acc += cal >> 2;
	if (cal > (v >> 16))
		npos++;

	/* calibration ladder 1: 6 rungs, cut points and outputs from the model table */
	v = acc ^ FL_W(ctx, 173);
	if (v < FL_T(ctx, 3027))
		cal = FL_T(ctx, 3049) >> 16;
	else if (v < FL_T(ctx, 3085))
		cal = FL_T(ctx, 3113) >> 16;
	else if (v < FL_T(ctx, 3152))
		cal = FL_T(ctx, 3187) >> 16;
	else if (v < FL_T(ctx, 3220))
		cal = FL_T(ctx, 3246) >> 16;
	else if (v < FL_T(ctx, 3275))
		cal = FL_T(ctx, 3309) >> 16;
	else
		cal = w2 >> 16;
	FL_YIELD(ctx, 996, cal);
	acc += cal >> 3;
	if (cal > (v >> 16))
		npos++;

	FL_YIELD(ctx, 1314, npos << 11);
	if (acc > w2)
		FL_YIELD_SPARSE(ctx, w ^ 443995190, acc >> 16);
	else
		FL_YIELD_SPARSE(ctx, w2 ^ 455006405, cal);
}
