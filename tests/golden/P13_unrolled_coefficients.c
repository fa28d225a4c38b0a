// Golden: patterns/P13_unrolled_coefficients.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P13_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1402689681);
	uint32_t at = FL_W(ctx, 55) & 127u;
	const uint32_t so = 1477;
	uint32_t m, x;

	m = FL_WA(ctx, at + 0u);
	if ((m >> 0) & 15u) {
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 0u, (int32_t)((FL_W(ctx, 136) & 65535u) * 1567));
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 4u, (int32_t)(FL_W(ctx, 200) >> 8) - 455430);
	}
	if ((m >> 7) & 15u) {
		if ((m >> 8) & 3u)
			FL_YIELD(ctx, so + 8u, (int32_t)((FL_W(ctx, 166) ^ m) & 408764));
		if ((m >> 12) & 1u)
			FL_YIELD(ctx, so + 12u, (int32_t)(FL_T(ctx, FL_W(ctx, 174)) & 32767u) * 10891);
	}
	if ((m >> 14) & 15u) {
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 16u, (int32_t)((FL_W(ctx, 135) >> 20) * 164585));
		if ((m >> 20) & 3u) {
			x = FL_W(ctx, 129) & 1048575u;
			FL_YIELD(ctx, so + 20u, x > 654926 ? (int32_t)(x >> 4) : 38101);
		}
	}
	if ((m >> 21) & 15u) {
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 24u, (int32_t)((FL_W(ctx, 186) & 65535u) * 2627));
		if ((m >> 28) & 1u)
			FL_YIELD(ctx, so + 28u, (int32_t)(FL_W(ctx, 147) >> 8) - 531258);
	}
	m = FL_WA(ctx, at + 1u);
	if ((m >> 3) & 15u) {
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 32u, (int32_t)(FL_W(ctx, 172) >> 9) - 411384);
		if ((m >> 5) & 3u)
			FL_YIELD(ctx, so + 36u, (int32_t)((FL_W(ctx, 168) ^ m) & 587561));
	}
	if ((m >> 10) & 15u) {
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 40u, (int32_t)(FL_T(ctx, FL_W(ctx, 138)) & 32767u) * 1787);
		if ((m >> 13) & 1u)
			FL_YIELD(ctx, so + 44u, (int32_t)((FL_W(ctx, 160) >> 19) * 202597));
	}
	if ((m >> 17) & 15u) {
		if ((m >> 17) & 3u) {
			x = FL_W(ctx, 152) & 1048575u;
			FL_YIELD(ctx, so + 48u, x > 628354 ? (int32_t)(x >> 4) : 48572);
		}
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 52u, (int32_t)((FL_W(ctx, 169) & 65535u) * 13937));
	}
	if ((m >> 24) & 15u) {
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 56u, (int32_t)(FL_W(ctx, 165) >> 9) - 565379);
		if ((m >> 29) & 1u)
			FL_YIELD(ctx, so + 60u, (int32_t)((FL_W(ctx, 158) ^ m) & 453131));
	}
	m = FL_WA(ctx, at + 2u);
	if ((m >> 6) & 15u) {
		if ((m >> 2) & 3u)
			FL_YIELD(ctx, so + 64u, (int32_t)((FL_W(ctx, 144) ^ m) & 544375));
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 68u, (int32_t)(FL_T(ctx, FL_W(ctx, 153)) & 32767u) * 6887);
	}
	if ((m >> 13) & 15u) {
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 72u, (int32_t)((FL_W(ctx, 156) >> 18) * 112687));
		if ((m >> 14) & 3u) {
			x = FL_W(ctx, 167) & 1048575u;
			FL_YIELD(ctx, so + 76u, x > 359286 ? (int32_t)(x >> 4) : 25480);
		}
	}
	if ((m >> 20) & 15u) {
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 80u, (int32_t)((FL_W(ctx, 154) & 65535u) * 1773));
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 84u, (int32_t)(FL_W(ctx, 162) >> 10) - 544896);
	}
	if ((m >> 27) & 15u) {
		if ((m >> 26) & 3u)
			FL_YIELD(ctx, so + 88u, (int32_t)((FL_W(ctx, 163) ^ m) & 323593));
		if ((m >> 0) & 1u)
			FL_YIELD(ctx, so + 92u, (int32_t)(FL_T(ctx, FL_W(ctx, 161)) & 32767u) * 12125);
	}
	m = FL_WA(ctx, at + 3u);
	if ((m >> 9) & 15u) {
		if ((m >> 3) & 3u)
			FL_YIELD(ctx, so + 96u, (int32_t)(FL_T(ctx, FL_W(ctx, 183)) & 32767u) * 27453);
		if ((m >> 7) & 3u)
			FL_YIELD(ctx, so + 100u, (int32_t)((FL_W(ctx, 122) >> 17) * 83783));
	}
	if ((m >> 16) & 15u) {
		if ((m >> 11) & 3u) {
			x = FL_W(ctx, 139) & 1048575u;
			FL_YIELD(ctx, so + 104u, x > 492034 ? (int32_t)(x >> 4) : 23594);
		}
		if ((m >> 15) & 1u)
			FL_YIELD(ctx, so + 108u, (int32_t)((FL_W(ctx, 120) & 65535u) * 6783));
	}
	if ((m >> 23) & 15u) {
		if ((m >> 19) & 3u)
			FL_YIELD(ctx, so + 112u, (int32_t)(FL_W(ctx, 198) >> 11) - 512881);
		if ((m >> 23) & 3u)
			FL_YIELD(ctx, so + 116u, (int32_t)((FL_W(ctx, 176) ^ m) & 699317));
	}
	if ((m >> 2) & 15u) {
		if ((m >> 27) & 3u)
			FL_YIELD(ctx, so + 120u, (int32_t)(FL_T(ctx, FL_W(ctx, 184)) & 32767u) * 1759);
		if ((m >> 1) & 1u)
			FL_YIELD(ctx, so + 124u, (int32_t)((FL_W(ctx, 151) >> 23) * 185321));
	}
	m = FL_WA(ctx, at + 4u);
	if ((m >> 12) & 15u) {
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 128u, (int32_t)((FL_W(ctx, 141) >> 16) * 397723));
		if ((m >> 8) & 3u) {
			x = FL_W(ctx, 170) & 1048575u;
			FL_YIELD(ctx, so + 132u, x > 674571 ? (int32_t)(x >> 4) : 45717);
		}
	}
	if ((m >> 19) & 15u) {
		if ((m >> 12) & 3u)
			FL_YIELD(ctx, so + 136u, (int32_t)((FL_W(ctx, 173) & 65535u) * 22283));
		if ((m >> 16) & 1u)
			FL_YIELD(ctx, so + 140u, (int32_t)(FL_W(ctx, 140) >> 12) - 364435);
	}
	if ((m >> 26) & 15u) {
		if ((m >> 20) & 3u)
			FL_YIELD(ctx, so + 144u, (int32_t)((FL_W(ctx, 177) ^ m) & 292184));
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 148u, (int32_t)(FL_T(ctx, FL_W(ctx, 148)) & 32767u) * 5841);
	}
	if ((m >> 5) & 15u) {
		if ((m >> 28) & 3u)
			FL_YIELD(ctx, so + 152u, (int32_t)((FL_W(ctx, 178) >> 22) * 90775));
		if ((m >> 2) & 3u) {
			x = FL_W(ctx, 159) & 1048575u;
			FL_YIELD(ctx, so + 156u, x > 305765 ? (int32_t)(x >> 4) : 22313);
		}
	}
	m = FL_WA(ctx, at + 5u);
	if ((m >> 15) & 15u) {
		if ((m >> 5) & 3u) {
			x = FL_W(ctx, 157) & 1048575u;
			FL_YIELD(ctx, so + 160u, x > 355942 ? (int32_t)(x >> 4) : 32458);
		}
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 164u, (int32_t)((FL_W(ctx, 164) & 65535u) * 3133));
	}
	if ((m >> 22) & 15u) {
		if ((m >> 13) & 3u)
			FL_YIELD(ctx, so + 168u, (int32_t)(FL_W(ctx, 155) >> 13) - 573912);
		if ((m >> 17) & 1u)
			FL_YIELD(ctx, so + 172u, (int32_t)((FL_W(ctx, 165) ^ m) & 670987));
	}
	if ((m >> 1) & 15u) {
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 176u, (int32_t)(FL_T(ctx, FL_W(ctx, 164)) & 32767u) * 22815);
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 180u, (int32_t)((FL_W(ctx, 159) >> 21) * 101085));
	}
	if ((m >> 8) & 15u) {
		if ((m >> 29) & 3u) {
			x = FL_W(ctx, 161) & 1048575u;
			FL_YIELD(ctx, so + 184u, x > 260378 ? (int32_t)(x >> 4) : 38445);
		}
		if ((m >> 3) & 1u)
			FL_YIELD(ctx, so + 188u, (int32_t)((FL_W(ctx, 68) & 65535u) * 7119));
	}
	m = FL_WA(ctx, at + 6u);
	if ((m >> 18) & 15u) {
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 192u, (int32_t)((FL_W(ctx, 125) & 65535u) * 14095));
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 196u, (int32_t)(FL_W(ctx, 201) >> 14) - 572102);
	}
	if ((m >> 25) & 15u) {
		if ((m >> 14) & 3u)
			FL_YIELD(ctx, so + 200u, (int32_t)((FL_W(ctx, 251) ^ m) & 406505));
		if ((m >> 18) & 1u)
			FL_YIELD(ctx, so + 204u, (int32_t)(FL_T(ctx, FL_W(ctx, 134)) & 32767u) * 3351);
	}
	if ((m >> 4) & 15u) {
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 208u, (int32_t)((FL_W(ctx, 77) >> 20) * 418777));
		if ((m >> 26) & 3u) {
			x = FL_W(ctx, 112) & 1048575u;
			FL_YIELD(ctx, so + 212u, x > 502125 ? (int32_t)(x >> 4) : 40620);
		}
	}
	if ((m >> 11) & 15u) {
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 216u, (int32_t)((FL_W(ctx, 143) & 65535u) * 26197));
		if ((m >> 4) & 1u)
			FL_YIELD(ctx, so + 220u, (int32_t)(FL_W(ctx, 232) >> 14) - 369530);
	}
	m = FL_WA(ctx, at + 7u);
	if ((m >> 21) & 15u) {
		if ((m >> 7) & 3u)
			FL_YIELD(ctx, so + 224u, (int32_t)(FL_W(ctx, 109) >> 15) - 562248);
		if ((m >> 11) & 3u)
			FL_YIELD(ctx, so + 228u, (int32_t)((FL_W(ctx, 117) ^ m) & 410208));
	}
	if ((m >> 0) & 15u) {
		if ((m >> 15) & 3u)
			FL_YIELD(ctx, so + 232u, (int32_t)(FL_T(ctx, FL_W(ctx, 116)) & 32767u) * 11931);
		if ((m >> 19) & 1u)
			FL_YIELD(ctx, so + 236u, (int32_t)((FL_W(ctx, 216) >> 19) * 216261));
	}
	if ((m >> 7) & 15u) {
		if ((m >> 23) & 3u) {
			x = FL_W(ctx, 187) & 1048575u;
			FL_YIELD(ctx, so + 240u, x > 368822 ? (int32_t)(x >> 4) : 31494);
		}
		if ((m >> 27) & 3u)
			FL_YIELD(ctx, so + 244u, (int32_t)((FL_W(ctx, 197) & 65535u) * 3157));
	}
	if ((m >> 14) & 15u) {
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 248u, (int32_t)(FL_W(ctx, 145) >> 15) - 610520);
		if ((m >> 5) & 1u)
			FL_YIELD(ctx, so + 252u, (int32_t)((FL_W(ctx, 189) ^ m) & 348261));
	}
	m = FL_WA(ctx, at + 8u);
	if ((m >> 24) & 15u) {
		if ((m >> 8) & 3u)
			FL_YIELD(ctx, so + 256u, (int32_t)((FL_W(ctx, 234) ^ m) & 317294));
		if ((m >> 12) & 3u)
			FL_YIELD(ctx, so + 260u, (int32_t)(FL_T(ctx, FL_W(ctx, 230)) & 32767u) * 1507);
	}
	if ((m >> 3) & 15u) {
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 264u, (int32_t)((FL_W(ctx, 214) >> 18) * 215685));
		if ((m >> 20) & 3u) {
			x = FL_W(ctx, 211) & 1048575u;
			FL_YIELD(ctx, so + 268u, x > 552625 ? (int32_t)(x >> 4) : 19271);
		}
	}
	if ((m >> 10) & 15u) {
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 272u, (int32_t)((FL_W(ctx, 182) & 65535u) * 13507));
		if ((m >> 28) & 3u)
			FL_YIELD(ctx, so + 276u, (int32_t)(FL_W(ctx, 110) >> 16) - 512519);
	}
	if ((m >> 17) & 15u) {
		if ((m >> 2) & 3u)
			FL_YIELD(ctx, so + 280u, (int32_t)((FL_W(ctx, 247) ^ m) & 745012));
		if ((m >> 6) & 1u)
			FL_YIELD(ctx, so + 284u, (int32_t)(FL_T(ctx, FL_W(ctx, 237)) & 32767u) * 3011);
	}
	m = FL_WA(ctx, at + 9u);
	if ((m >> 27) & 15u) {
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 288u, (int32_t)(FL_T(ctx, FL_W(ctx, 194)) & 32767u) * 5701);
		if ((m >> 13) & 3u)
			FL_YIELD(ctx, so + 292u, (int32_t)((FL_W(ctx, 81) >> 17) * 86081));
	}
	if ((m >> 6) & 15u) {
		if ((m >> 17) & 3u) {
			x = FL_W(ctx, 240) & 1048575u;
			FL_YIELD(ctx, so + 296u, x > 636114 ? (int32_t)(x >> 4) : 37217);
		}
		if ((m >> 21) & 1u)
			FL_YIELD(ctx, so + 300u, (int32_t)((FL_W(ctx, 65) & 65535u) * 1521));
	}
	if ((m >> 13) & 15u) {
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 304u, (int32_t)(FL_W(ctx, 249) >> 8) - 543501);
		if ((m >> 29) & 3u)
			FL_YIELD(ctx, so + 308u, (int32_t)((FL_W(ctx, 207) ^ m) & 459914));
	}
	if ((m >> 20) & 15u) {
		if ((m >> 3) & 3u)
			FL_YIELD(ctx, so + 312u, (int32_t)(FL_T(ctx, FL_W(ctx, 105)) & 32767u) * 12979);
		if ((m >> 7) & 1u)
			FL_YIELD(ctx, so + 316u, (int32_t)((FL_W(ctx, 252) >> 23) * 171853));
	}
	m = FL_WA(ctx, at + 10u);
	if ((m >> 2) & 15u) {
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 320u, (int32_t)((FL_W(ctx, 124) >> 16) * 100601));
		if ((m >> 14) & 3u) {
			x = FL_W(ctx, 181) & 1048575u;
			FL_YIELD(ctx, so + 324u, x > 673569 ? (int32_t)(x >> 4) : 38026);
		}
	}
	if ((m >> 9) & 15u) {
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 328u, (int32_t)((FL_W(ctx, 118) & 65535u) * 6729));
		if ((m >> 22) & 1u)
			FL_YIELD(ctx, so + 332u, (int32_t)(FL_W(ctx, 137) >> 9) - 317154);
	}
	if ((m >> 16) & 15u) {
		if ((m >> 26) & 3u)
			FL_YIELD(ctx, so + 336u, (int32_t)((FL_W(ctx, 87) ^ m) & 474723));
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 340u, (int32_t)(FL_T(ctx, FL_W(ctx, 180)) & 32767u) * 1437);
	}
	if ((m >> 23) & 15u) {
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 344u, (int32_t)((FL_W(ctx, 212) >> 22) * 179459));
		if ((m >> 8) & 3u) {
			x = FL_W(ctx, 82) & 1048575u;
			FL_YIELD(ctx, so + 348u, x > 477725 ? (int32_t)(x >> 4) : 38644);
		}
	}
	m = FL_WA(ctx, at + 11u);
	if ((m >> 5) & 15u) {
		if ((m >> 11) & 3u) {
			x = FL_W(ctx, 193) & 1048575u;
			FL_YIELD(ctx, so + 352u, x > 580301 ? (int32_t)(x >> 4) : 29133);
		}
		if ((m >> 15) & 3u)
			FL_YIELD(ctx, so + 356u, (int32_t)((FL_W(ctx, 208) & 65535u) * 26807));
	}
	if ((m >> 12) & 15u) {
		if ((m >> 19) & 3u)
			FL_YIELD(ctx, so + 360u, (int32_t)(FL_W(ctx, 97) >> 10) - 616042);
		if ((m >> 23) & 1u)
			FL_YIELD(ctx, so + 364u, (int32_t)((FL_W(ctx, 245) ^ m) & 462343));
	}
	if ((m >> 19) & 15u) {
		if ((m >> 27) & 3u)
			FL_YIELD(ctx, so + 368u, (int32_t)(FL_T(ctx, FL_W(ctx, 123)) & 32767u) * 6473);
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 372u, (int32_t)((FL_W(ctx, 93) >> 21) * 91483));
	}
	if ((m >> 26) & 15u) {
		if ((m >> 5) & 3u) {
			x = FL_W(ctx, 195) & 1048575u;
			FL_YIELD(ctx, so + 376u, x > 349845 ? (int32_t)(x >> 4) : 36117);
		}
		if ((m >> 9) & 1u)
			FL_YIELD(ctx, so + 380u, (int32_t)((FL_W(ctx, 253) & 65535u) * 1731));
	}
	m = FL_WA(ctx, at + 12u);
	if ((m >> 8) & 15u) {
		if ((m >> 12) & 3u)
			FL_YIELD(ctx, so + 384u, (int32_t)((FL_W(ctx, 95) & 65535u) * 3439));
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 388u, (int32_t)(FL_W(ctx, 239) >> 11) - 323730);
	}
	if ((m >> 15) & 15u) {
		if ((m >> 20) & 3u)
			FL_YIELD(ctx, so + 392u, (int32_t)((FL_W(ctx, 213) ^ m) & 763586));
		if ((m >> 24) & 1u)
			FL_YIELD(ctx, so + 396u, (int32_t)(FL_T(ctx, FL_W(ctx, 133)) & 32767u) * 26775);
	}
	if ((m >> 22) & 15u) {
		if ((m >> 28) & 3u)
			FL_YIELD(ctx, so + 400u, (int32_t)((FL_W(ctx, 119) >> 20) * 107259));
		if ((m >> 2) & 3u) {
			x = FL_W(ctx, 202) & 1048575u;
			FL_YIELD(ctx, so + 404u, x > 281190 ? (int32_t)(x >> 4) : 17596);
		}
	}
	if ((m >> 1) & 15u) {
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 408u, (int32_t)((FL_W(ctx, 246) & 65535u) * 5777));
		if ((m >> 10) & 1u)
			FL_YIELD(ctx, so + 412u, (int32_t)(FL_W(ctx, 192) >> 11) - 608990);
	}
	m = FL_WA(ctx, at + 13u);
	if ((m >> 11) & 15u) {
		if ((m >> 13) & 3u)
			FL_YIELD(ctx, so + 416u, (int32_t)(FL_W(ctx, 102) >> 12) - 386725);
		if ((m >> 17) & 3u)
			FL_YIELD(ctx, so + 420u, (int32_t)((FL_W(ctx, 224) ^ m) & 333424));
	}
	if ((m >> 18) & 15u) {
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 424u, (int32_t)(FL_T(ctx, FL_W(ctx, 228)) & 32767u) * 3113);
		if ((m >> 25) & 1u)
			FL_YIELD(ctx, so + 428u, (int32_t)((FL_W(ctx, 217) >> 19) * 344175));
	}
	if ((m >> 25) & 15u) {
		if ((m >> 29) & 3u) {
			x = FL_W(ctx, 85) & 1048575u;
			FL_YIELD(ctx, so + 432u, x > 373143 ? (int32_t)(x >> 4) : 22860);
		}
		if ((m >> 3) & 3u)
			FL_YIELD(ctx, so + 436u, (int32_t)((FL_W(ctx, 66) & 65535u) * 24065));
	}
	if ((m >> 4) & 15u) {
		if ((m >> 7) & 3u)
			FL_YIELD(ctx, so + 440u, (int32_t)(FL_W(ctx, 91) >> 12) - 635205);
		if ((m >> 11) & 1u)
			FL_YIELD(ctx, so + 444u, (int32_t)((FL_W(ctx, 196) ^ m) & 303537));
	}
	m = FL_WA(ctx, at + 14u);
	if ((m >> 14) & 15u) {
		if ((m >> 14) & 3u)
			FL_YIELD(ctx, so + 448u, (int32_t)((FL_W(ctx, 130) ^ m) & 673466));
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 452u, (int32_t)(FL_T(ctx, FL_W(ctx, 244)) & 32767u) * 12949);
	}
	if ((m >> 21) & 15u) {
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 456u, (int32_t)((FL_W(ctx, 78) >> 18) * 208751));
		if ((m >> 26) & 3u) {
			x = FL_W(ctx, 150) & 1048575u;
			FL_YIELD(ctx, so + 460u, x > 383595 ? (int32_t)(x >> 4) : 19974);
		}
	}
	if ((m >> 0) & 15u) {
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 464u, (int32_t)((FL_W(ctx, 250) & 65535u) * 2661));
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 468u, (int32_t)(FL_W(ctx, 146) >> 13) - 596596);
	}
	if ((m >> 7) & 15u) {
		if ((m >> 8) & 3u)
			FL_YIELD(ctx, so + 472u, (int32_t)((FL_W(ctx, 114) ^ m) & 468739));
		if ((m >> 12) & 1u)
			FL_YIELD(ctx, so + 476u, (int32_t)(FL_T(ctx, FL_W(ctx, 142)) & 32767u) * 24987);
	}
	m = FL_WA(ctx, at + 15u);
	if (FL_RARE(m, 50))
		return;
	if ((m >> 17) & 15u) {
		if ((m >> 15) & 3u)
			FL_YIELD(ctx, so + 480u, (int32_t)(FL_T(ctx, FL_W(ctx, 99)) & 32767u) * 1765);
		if ((m >> 19) & 3u)
			FL_YIELD(ctx, so + 484u, (int32_t)((FL_W(ctx, 241) >> 17) * 215553));
	}
	if ((m >> 24) & 15u) {
		if ((m >> 23) & 3u) {
			x = FL_W(ctx, 103) & 1048575u;
			FL_YIELD(ctx, so + 488u, x > 477891 ? (int32_t)(x >> 4) : 33241);
		}
		if ((m >> 27) & 1u)
			FL_YIELD(ctx, so + 492u, (int32_t)((FL_W(ctx, 206) & 65535u) * 13535));
	}
	if ((m >> 3) & 15u) {
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 496u, (int32_t)(FL_W(ctx, 204) >> 14) - 353083);
		if ((m >> 5) & 3u)
			FL_YIELD(ctx, so + 500u, (int32_t)((FL_W(ctx, 171) ^ m) & 550523));
	}
	if ((m >> 10) & 15u) {
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 504u, (int32_t)(FL_T(ctx, FL_W(ctx, 96)) & 32767u) * 2763);
		if ((m >> 13) & 1u)
			FL_YIELD(ctx, so + 508u, (int32_t)((FL_W(ctx, 86) >> 23) * 332267));
	}
	m = FL_WA(ctx, at + 16u);
	if ((m >> 20) & 15u) {
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 512u, (int32_t)((FL_W(ctx, 98) >> 16) * 83303));
		if ((m >> 20) & 3u) {
			x = FL_W(ctx, 231) & 1048575u;
			FL_YIELD(ctx, so + 516u, x > 261772 ? (int32_t)(x >> 4) : 21677);
		}
	}
	if ((m >> 27) & 15u) {
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 520u, (int32_t)((FL_W(ctx, 199) & 65535u) * 1691));
		if ((m >> 28) & 1u)
			FL_YIELD(ctx, so + 524u, (int32_t)(FL_W(ctx, 113) >> 15) - 231631);
	}
	if ((m >> 6) & 15u) {
		if ((m >> 2) & 3u)
			FL_YIELD(ctx, so + 528u, (int32_t)((FL_W(ctx, 149) ^ m) & 330980));
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 532u, (int32_t)(FL_T(ctx, FL_W(ctx, 73)) & 32767u) * 12923);
	}
	if ((m >> 13) & 15u) {
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 536u, (int32_t)((FL_W(ctx, 222) >> 22) * 195863));
		if ((m >> 14) & 3u) {
			x = FL_W(ctx, 235) & 1048575u;
			FL_YIELD(ctx, so + 540u, x > 240046 ? (int32_t)(x >> 4) : 36133);
		}
	}
	m = FL_WA(ctx, at + 17u);
	if ((m >> 23) & 15u) {
		if ((m >> 17) & 3u) {
			x = FL_W(ctx, 238) & 1048575u;
			FL_YIELD(ctx, so + 544u, x > 355953 ? (int32_t)(x >> 4) : 21961);
		}
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 548u, (int32_t)((FL_W(ctx, 233) & 65535u) * 7083));
	}
	if ((m >> 2) & 15u) {
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 552u, (int32_t)(FL_W(ctx, 215) >> 16) - 312447);
		if ((m >> 29) & 1u)
			FL_YIELD(ctx, so + 556u, (int32_t)((FL_W(ctx, 108) ^ m) & 452447));
	}
	if ((m >> 9) & 15u) {
		if ((m >> 3) & 3u)
			FL_YIELD(ctx, so + 560u, (int32_t)(FL_T(ctx, FL_W(ctx, 190)) & 32767u) * 1681);
		if ((m >> 7) & 3u)
			FL_YIELD(ctx, so + 564u, (int32_t)((FL_W(ctx, 254) >> 21) * 190947));
	}
	if ((m >> 16) & 15u) {
		if ((m >> 11) & 3u) {
			x = FL_W(ctx, 175) & 1048575u;
			FL_YIELD(ctx, so + 568u, x > 572864 ? (int32_t)(x >> 4) : 33644);
		}
		if ((m >> 15) & 1u)
			FL_YIELD(ctx, so + 572u, (int32_t)((FL_W(ctx, 242) & 65535u) * 13681));
	}
	m = FL_WA(ctx, at + 18u);
	if ((m >> 26) & 15u) {
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 576u, (int32_t)((FL_W(ctx, 71) & 65535u) * 26833));
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 580u, (int32_t)(FL_W(ctx, 92) >> 8) - 326954);
	}
	if ((m >> 5) & 15u) {
		if ((m >> 26) & 3u)
			FL_YIELD(ctx, so + 584u, (int32_t)((FL_W(ctx, 107) ^ m) & 703853));
		if ((m >> 0) & 1u)
			FL_YIELD(ctx, so + 588u, (int32_t)(FL_T(ctx, FL_W(ctx, 115)) & 32767u) * 5875);
	}
	if ((m >> 12) & 15u) {
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 592u, (int32_t)((FL_W(ctx, 179) >> 20) * 91487));
		if ((m >> 8) & 3u) {
			x = FL_W(ctx, 75) & 1048575u;
			FL_YIELD(ctx, so + 596u, x > 288266 ? (int32_t)(x >> 4) : 36794);
		}
	}
	if ((m >> 19) & 15u) {
		if ((m >> 12) & 3u)
			FL_YIELD(ctx, so + 600u, (int32_t)((FL_W(ctx, 236) & 65535u) * 1445));
		if ((m >> 16) & 1u)
			FL_YIELD(ctx, so + 604u, (int32_t)(FL_W(ctx, 226) >> 8) - 609415);
	}
	m = FL_WA(ctx, at + 19u);
	if ((m >> 1) & 15u) {
		if ((m >> 19) & 3u)
			FL_YIELD(ctx, so + 608u, (int32_t)(FL_W(ctx, 226) >> 9) - 380074);
		if ((m >> 23) & 3u)
			FL_YIELD(ctx, so + 612u, (int32_t)((FL_W(ctx, 74) ^ m) & 558874));
	}
	if ((m >> 8) & 15u) {
		if ((m >> 27) & 3u)
			FL_YIELD(ctx, so + 616u, (int32_t)(FL_T(ctx, FL_W(ctx, 80)) & 32767u) * 25729);
		if ((m >> 1) & 1u)
			FL_YIELD(ctx, so + 620u, (int32_t)((FL_W(ctx, 225) >> 19) * 109273));
	}
	if ((m >> 15) & 15u) {
		if ((m >> 5) & 3u) {
			x = FL_W(ctx, 104) & 1048575u;
			FL_YIELD(ctx, so + 624u, x > 452961 ? (int32_t)(x >> 4) : 38048);
		}
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 628u, (int32_t)((FL_W(ctx, 220) & 65535u) * 5985));
	}
	if ((m >> 22) & 15u) {
		if ((m >> 13) & 3u)
			FL_YIELD(ctx, so + 632u, (int32_t)(FL_W(ctx, 219) >> 9) - 590735);
		if ((m >> 17) & 1u)
			FL_YIELD(ctx, so + 636u, (int32_t)((FL_W(ctx, 132) ^ m) & 305819));
	}
	m = FL_WA(ctx, at + 20u);
	if ((m >> 4) & 15u) {
		if ((m >> 20) & 3u)
			FL_YIELD(ctx, so + 640u, (int32_t)((FL_W(ctx, 210) ^ m) & 597487));
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 644u, (int32_t)(FL_T(ctx, FL_W(ctx, 248)) & 32767u) * 3455);
	}
	if ((m >> 11) & 15u) {
		if ((m >> 28) & 3u)
			FL_YIELD(ctx, so + 648u, (int32_t)((FL_W(ctx, 79) >> 18) * 371675));
		if ((m >> 2) & 3u) {
			x = FL_W(ctx, 72) & 1048575u;
			FL_YIELD(ctx, so + 652u, x > 331895 ? (int32_t)(x >> 4) : 46757);
		}
	}
	if ((m >> 18) & 15u) {
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 656u, (int32_t)((FL_W(ctx, 126) & 65535u) * 27493));
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 660u, (int32_t)(FL_W(ctx, 83) >> 10) - 234047);
	}
	if ((m >> 25) & 15u) {
		if ((m >> 14) & 3u)
			FL_YIELD(ctx, so + 664u, (int32_t)((FL_W(ctx, 205) ^ m) & 643131));
		if ((m >> 18) & 1u)
			FL_YIELD(ctx, so + 668u, (int32_t)(FL_T(ctx, FL_W(ctx, 101)) & 32767u) * 5635);
	}
	m = FL_WA(ctx, at + 21u);
	if ((m >> 7) & 15u) {
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 672u, (int32_t)(FL_T(ctx, FL_W(ctx, 84)) & 32767u) * 10983);
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 676u, (int32_t)((FL_W(ctx, 122) >> 17) * 176275));
	}
	if ((m >> 14) & 15u) {
		if ((m >> 29) & 3u) {
			x = FL_W(ctx, 143) & 1048575u;
			FL_YIELD(ctx, so + 680u, x > 357264 ? (int32_t)(x >> 4) : 39486);
		}
		if ((m >> 3) & 1u)
			FL_YIELD(ctx, so + 684u, (int32_t)((FL_W(ctx, 172) & 65535u) * 3177));
	}
	if ((m >> 21) & 15u) {
		if ((m >> 7) & 3u)
			FL_YIELD(ctx, so + 688u, (int32_t)(FL_W(ctx, 106) >> 11) - 387975);
		if ((m >> 11) & 3u)
			FL_YIELD(ctx, so + 692u, (int32_t)((FL_W(ctx, 203) ^ m) & 656755));
	}
	if ((m >> 0) & 15u) {
		if ((m >> 15) & 3u)
			FL_YIELD(ctx, so + 696u, (int32_t)(FL_T(ctx, FL_W(ctx, 188)) & 32767u) * 21125);
		if ((m >> 19) & 1u)
			FL_YIELD(ctx, so + 700u, (int32_t)((FL_W(ctx, 90) >> 23) * 101797));
	}
	m = FL_WA(ctx, at + 22u);
	if ((m >> 10) & 15u) {
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 704u, (int32_t)((FL_W(ctx, 224) >> 16) * 175673));
		if ((m >> 26) & 3u) {
			x = FL_W(ctx, 224) & 1048575u;
			FL_YIELD(ctx, so + 708u, x > 511177 ? (int32_t)(x >> 4) : 40280);
		}
	}
	if ((m >> 17) & 15u) {
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 712u, (int32_t)((FL_W(ctx, 92) & 65535u) * 12189));
		if ((m >> 4) & 1u)
			FL_YIELD(ctx, so + 716u, (int32_t)(FL_W(ctx, 88) >> 12) - 272867);
	}
	if ((m >> 24) & 15u) {
		if ((m >> 8) & 3u)
			FL_YIELD(ctx, so + 720u, (int32_t)((FL_W(ctx, 191) ^ m) & 347299));
		if ((m >> 12) & 3u)
			FL_YIELD(ctx, so + 724u, (int32_t)(FL_T(ctx, FL_W(ctx, 198)) & 32767u) * 3405);
	}
	if ((m >> 3) & 15u) {
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 728u, (int32_t)((FL_W(ctx, 67) >> 22) * 356205));
		if ((m >> 20) & 3u) {
			x = FL_W(ctx, 77) & 1048575u;
			FL_YIELD(ctx, so + 732u, x > 624410 ? (int32_t)(x >> 4) : 43913);
		}
	}
	m = FL_WA(ctx, at + 23u);
	if ((m >> 13) & 15u) {
		if ((m >> 23) & 3u) {
			x = FL_W(ctx, 100) & 1048575u;
			FL_YIELD(ctx, so + 736u, x > 263198 ? (int32_t)(x >> 4) : 26196);
		}
		if ((m >> 27) & 3u)
			FL_YIELD(ctx, so + 740u, (int32_t)((FL_W(ctx, 171) & 65535u) * 1549));
	}
	if ((m >> 20) & 15u) {
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 744u, (int32_t)(FL_W(ctx, 227) >> 13) - 413484);
		if ((m >> 5) & 1u)
			FL_YIELD(ctx, so + 748u, (int32_t)((FL_W(ctx, 111) ^ m) & 687520));
	}
	if ((m >> 27) & 15u) {
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 752u, (int32_t)(FL_T(ctx, FL_W(ctx, 207)) & 32767u) * 11363);
		if ((m >> 13) & 3u)
			FL_YIELD(ctx, so + 756u, (int32_t)((FL_W(ctx, 90) >> 21) * 198643));
	}
	if ((m >> 6) & 15u) {
		if ((m >> 17) & 3u) {
			x = FL_W(ctx, 163) & 1048575u;
			FL_YIELD(ctx, so + 760u, x > 672382 ? (int32_t)(x >> 4) : 46572);
		}
		if ((m >> 21) & 1u)
			FL_YIELD(ctx, so + 764u, (int32_t)((FL_W(ctx, 118) & 65535u) * 3131));
	}
	m = FL_WA(ctx, at + 24u);
	if ((m >> 16) & 15u) {
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 768u, (int32_t)((FL_W(ctx, 154) & 65535u) * 6357));
		if ((m >> 28) & 3u)
			FL_YIELD(ctx, so + 772u, (int32_t)(FL_W(ctx, 76) >> 14) - 603934);
	}
	if ((m >> 23) & 15u) {
		if ((m >> 2) & 3u)
			FL_YIELD(ctx, so + 776u, (int32_t)((FL_W(ctx, 185) ^ m) & 713679));
		if ((m >> 6) & 1u)
			FL_YIELD(ctx, so + 780u, (int32_t)(FL_T(ctx, FL_W(ctx, 157)) & 32767u) * 1533);
	}
	if ((m >> 2) & 15u) {
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 784u, (int32_t)((FL_W(ctx, 224) >> 20) * 172021));
		if ((m >> 14) & 3u) {
			x = FL_W(ctx, 70) & 1048575u;
			FL_YIELD(ctx, so + 788u, x > 243997 ? (int32_t)(x >> 4) : 48001);
		}
	}
	if ((m >> 9) & 15u) {
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 792u, (int32_t)((FL_W(ctx, 101) & 65535u) * 11207));
		if ((m >> 22) & 1u)
			FL_YIELD(ctx, so + 796u, (int32_t)(FL_W(ctx, 237) >> 14) - 419341);
	}
	m = FL_WA(ctx, at + 25u);
	if ((m >> 19) & 15u) {
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 800u, (int32_t)(FL_W(ctx, 94) >> 15) - 243045);
		if ((m >> 29) & 3u)
			FL_YIELD(ctx, so + 804u, (int32_t)((FL_W(ctx, 123) ^ m) & 642760));
	}
	if ((m >> 26) & 15u) {
		if ((m >> 3) & 3u)
			FL_YIELD(ctx, so + 808u, (int32_t)(FL_T(ctx, FL_W(ctx, 110)) & 32767u) * 6043);
		if ((m >> 7) & 1u)
			FL_YIELD(ctx, so + 812u, (int32_t)((FL_W(ctx, 87) >> 19) * 95167));
	}
	if ((m >> 5) & 15u) {
		if ((m >> 11) & 3u) {
			x = FL_W(ctx, 121) & 1048575u;
			FL_YIELD(ctx, so + 816u, x > 337623 ? (int32_t)(x >> 4) : 36909);
		}
		if ((m >> 15) & 3u)
			FL_YIELD(ctx, so + 820u, (int32_t)((FL_W(ctx, 220) & 65535u) * 1665));
	}
	if ((m >> 12) & 15u) {
		if ((m >> 19) & 3u)
			FL_YIELD(ctx, so + 824u, (int32_t)(FL_W(ctx, 67) >> 15) - 533794);
		if ((m >> 23) & 1u)
			FL_YIELD(ctx, so + 828u, (int32_t)((FL_W(ctx, 150) ^ m) & 706160));
	}
	m = FL_WA(ctx, at + 26u);
	if ((m >> 22) & 15u) {
		if ((m >> 26) & 3u)
			FL_YIELD(ctx, so + 832u, (int32_t)((FL_W(ctx, 229) ^ m) & 559142));
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 836u, (int32_t)(FL_T(ctx, FL_W(ctx, 238)) & 32767u) * 28239);
	}
	if ((m >> 1) & 15u) {
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 840u, (int32_t)((FL_W(ctx, 132) >> 18) * 96393));
		if ((m >> 8) & 3u) {
			x = FL_W(ctx, 248) & 1048575u;
			FL_YIELD(ctx, so + 844u, x > 646492 ? (int32_t)(x >> 4) : 26235);
		}
	}
	if ((m >> 8) & 15u) {
		if ((m >> 12) & 3u)
			FL_YIELD(ctx, so + 848u, (int32_t)((FL_W(ctx, 113) & 65535u) * 6263));
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 852u, (int32_t)(FL_W(ctx, 218) >> 16) - 599254);
	}
	if ((m >> 15) & 15u) {
		if ((m >> 20) & 3u)
			FL_YIELD(ctx, so + 856u, (int32_t)((FL_W(ctx, 98) ^ m) & 514057));
		if ((m >> 24) & 1u)
			FL_YIELD(ctx, so + 860u, (int32_t)(FL_T(ctx, FL_W(ctx, 131)) & 32767u) * 1601);
	}
	m = FL_WA(ctx, at + 27u);
	if ((m >> 25) & 15u) {
		if ((m >> 27) & 3u)
			FL_YIELD(ctx, so + 864u, (int32_t)(FL_T(ctx, FL_W(ctx, 164)) & 32767u) * 2623);
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 868u, (int32_t)((FL_W(ctx, 146) >> 17) * 433719));
	}
	if ((m >> 4) & 15u) {
		if ((m >> 5) & 3u) {
			x = FL_W(ctx, 178) & 1048575u;
			FL_YIELD(ctx, so + 872u, x > 286472 ? (int32_t)(x >> 4) : 45766);
		}
		if ((m >> 9) & 1u)
			FL_YIELD(ctx, so + 876u, (int32_t)((FL_W(ctx, 123) & 65535u) * 27541));
	}
	if ((m >> 11) & 15u) {
		if ((m >> 13) & 3u)
			FL_YIELD(ctx, so + 880u, (int32_t)(FL_W(ctx, 185) >> 8) - 535349);
		if ((m >> 17) & 3u)
			FL_YIELD(ctx, so + 884u, (int32_t)((FL_W(ctx, 84) ^ m) & 391551));
	}
	if ((m >> 18) & 15u) {
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 888u, (int32_t)(FL_T(ctx, FL_W(ctx, 147)) & 32767u) * 6597);
		if ((m >> 25) & 1u)
			FL_YIELD(ctx, so + 892u, (int32_t)((FL_W(ctx, 199) >> 23) * 92327));
	}
	m = FL_WA(ctx, at + 28u);
	if ((m >> 0) & 15u) {
		if ((m >> 28) & 3u)
			FL_YIELD(ctx, so + 896u, (int32_t)((FL_W(ctx, 69) >> 16) * 209075));
		if ((m >> 2) & 3u) {
			x = FL_W(ctx, 239) & 1048575u;
			FL_YIELD(ctx, so + 900u, x > 665411 ? (int32_t)(x >> 4) : 38284);
		}
	}
	if ((m >> 7) & 15u) {
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 904u, (int32_t)((FL_W(ctx, 73) & 65535u) * 3371));
		if ((m >> 10) & 1u)
			FL_YIELD(ctx, so + 908u, (int32_t)(FL_W(ctx, 71) >> 9) - 335841);
	}
	if ((m >> 14) & 15u) {
		if ((m >> 14) & 3u)
			FL_YIELD(ctx, so + 912u, (int32_t)((FL_W(ctx, 196) ^ m) & 378974));
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 916u, (int32_t)(FL_T(ctx, FL_W(ctx, 204)) & 32767u) * 27625);
	}
	if ((m >> 21) & 15u) {
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 920u, (int32_t)((FL_W(ctx, 119) >> 22) * 98623));
		if ((m >> 26) & 3u) {
			x = FL_W(ctx, 148) & 1048575u;
			FL_YIELD(ctx, so + 924u, x > 618989 ? (int32_t)(x >> 4) : 41129);
		}
	}
	m = FL_WA(ctx, at + 29u);
	if ((m >> 3) & 15u) {
		if ((m >> 29) & 3u) {
			x = FL_W(ctx, 89) & 1048575u;
			FL_YIELD(ctx, so + 928u, x > 394965 ? (int32_t)(x >> 4) : 35250);
		}
		if ((m >> 3) & 3u)
			FL_YIELD(ctx, so + 932u, (int32_t)((FL_W(ctx, 230) & 65535u) * 13931));
	}
	if ((m >> 10) & 15u) {
		if ((m >> 7) & 3u)
			FL_YIELD(ctx, so + 936u, (int32_t)(FL_W(ctx, 221) >> 10) - 506527);
		if ((m >> 11) & 1u)
			FL_YIELD(ctx, so + 940u, (int32_t)((FL_W(ctx, 212) ^ m) & 718685));
	}
	if ((m >> 17) & 15u) {
		if ((m >> 15) & 3u)
			FL_YIELD(ctx, so + 944u, (int32_t)(FL_T(ctx, FL_W(ctx, 243)) & 32767u) * 2787);
		if ((m >> 19) & 3u)
			FL_YIELD(ctx, so + 948u, (int32_t)((FL_W(ctx, 236) >> 21) * 452743));
	}
	if ((m >> 24) & 15u) {
		if ((m >> 23) & 3u) {
			x = FL_W(ctx, 121) & 1048575u;
			FL_YIELD(ctx, so + 952u, x > 670631 ? (int32_t)(x >> 4) : 28764);
		}
		if ((m >> 27) & 1u)
			FL_YIELD(ctx, so + 956u, (int32_t)((FL_W(ctx, 227) & 65535u) * 21751));
	}
	m = FL_WA(ctx, at + 30u);
	if ((m >> 6) & 15u) {
		if ((m >> 0) & 3u)
			FL_YIELD(ctx, so + 960u, (int32_t)((FL_W(ctx, 119) & 65535u) * 1325));
		if ((m >> 4) & 3u)
			FL_YIELD(ctx, so + 964u, (int32_t)(FL_W(ctx, 218) >> 11) - 536708);
	}
	if ((m >> 13) & 15u) {
		if ((m >> 8) & 3u)
			FL_YIELD(ctx, so + 968u, (int32_t)((FL_W(ctx, 165) ^ m) & 594422));
		if ((m >> 12) & 1u)
			FL_YIELD(ctx, so + 972u, (int32_t)(FL_T(ctx, FL_W(ctx, 76)) & 32767u) * 13287);
	}
	if ((m >> 20) & 15u) {
		if ((m >> 16) & 3u)
			FL_YIELD(ctx, so + 976u, (int32_t)((FL_W(ctx, 120) >> 20) * 188905));
		if ((m >> 20) & 3u) {
			x = FL_W(ctx, 148) & 1048575u;
			FL_YIELD(ctx, so + 980u, x > 554699 ? (int32_t)(x >> 4) : 34375);
		}
	}
	if ((m >> 27) & 15u) {
		if ((m >> 24) & 3u)
			FL_YIELD(ctx, so + 984u, (int32_t)((FL_W(ctx, 178) & 65535u) * 3387));
		if ((m >> 28) & 1u)
			FL_YIELD(ctx, so + 988u, (int32_t)(FL_W(ctx, 126) >> 11) - 392641);
	}
	m = FL_WA(ctx, at + 31u);
	if (FL_RARE(m, 59))
		return;
	if ((m >> 9) & 15u) {
		if ((m >> 1) & 3u)
			FL_YIELD(ctx, so + 992u, (int32_t)(FL_W(ctx, 146) >> 12) - 483148);
		if ((m >> 5) & 3u)
			FL_YIELD(ctx, so + 996u, (int32_t)((FL_W(ctx, 250) ^ m) & 491255));
	}
	if ((m >> 16) & 15u) {
		if ((m >> 9) & 3u)
			FL_YIELD(ctx, so + 1000u, (int32_t)(FL_T(ctx, FL_W(ctx, 97)) & 32767u) * 1517);
		if ((m >> 13) & 1u)
			FL_YIELD(ctx, so + 1004u, (int32_t)((FL_W(ctx, 68) >> 19) * 164085));
	}
	if ((m >> 23) & 15u) {
		if ((m >> 17) & 3u) {
			x = FL_W(ctx, 172) & 1048575u;
			FL_YIELD(ctx, so + 1008u, x > 667866 ? (int32_t)(x >> 4) : 38750);
		}
		if ((m >> 21) & 3u)
			FL_YIELD(ctx, so + 1012u, (int32_t)((FL_W(ctx, 102) & 65535u) * 11981));
	}
	if ((m >> 2) & 15u) {
		if ((m >> 25) & 3u)
			FL_YIELD(ctx, so + 1016u, (int32_t)(FL_W(ctx, 85) >> 12) - 595945);
		if ((m >> 29) & 1u)
			FL_YIELD(ctx, so + 1020u, (int32_t)((FL_W(ctx, 87) ^ m) & 667651));
	}
	m = FL_WA(ctx, at + 32u);
	if ((m >> 12) & 15u) {
		if ((m >> 2) & 3u)
			FL_YIELD(ctx, so + 1024u, (int32_t)((FL_W(ctx, 156) ^ m) & 647263));
		if ((m >> 6) & 3u)
			FL_YIELD(ctx, so + 1028u, (int32_t)(FL_T(ctx, FL_W(ctx, 243)) & 32767u) * 5771);
	}
	if ((m >> 19) & 15u) {
		if ((m >> 10) & 3u)
			FL_YIELD(ctx, so + 1032u, (int32_t)((FL_W(ctx, 153) >> 18) * 99911));
		if ((m >> 14) & 3u) {
			x = FL_W(ctx, 218) & 1048575u;
			FL_YIELD(ctx, so + 1036u, x > 294045 ? (int32_t)(x >> 4) : 45476);
		}
	}
	if ((m >> 26) & 15u) {
		if ((m >> 18) & 3u)
			FL_YIELD(ctx, so + 1040u, (int32_t)((FL_W(ctx, 216) & 65535u) * 1631));
		if ((m >> 22) & 3u)
			FL_YIELD(ctx, so + 1044u, (int32_t)(FL_W(ctx, 96) >> 13) - 594905);
	}
	if ((m >> 5) & 15u) {
		if ((m >> 26) & 3u)
			FL_YIELD(ctx, so + 1048u, (int32_t)((FL_W(ctx, 169) ^ m) & 701243));
		if ((m >> 0) & 1u)
			FL_YIELD(ctx, so + 1052u, (int32_t)(FL_T(ctx, FL_W(ctx, 232)) & 32767u) * 11465);
	}
}
