// Golden: patterns/P14_decayed_coefficients.tpl, variant 0, copy 0, as frontload-gen writes it with
// --copies 1 --seed 1 --mode c --no-line. Do not edit: regenerate with `ninja golden`.
#include "fl_extract.h"

static FL_EXTRACTOR void fl_P14_v000_c00000(struct fl_ctx *ctx)
{
	FL_GATE(ctx, 1247753219);
	uint32_t now = ctx->now_s;
	uint32_t at = FL_W(ctx, 51) & 127u;
	const uint32_t so = 2301;
	uint32_t a, m, y, d;

	a = (now - FL_WA(ctx, at + 0u)) & 1048575u;
	m = FL_WA(ctx, at + 64u);
	y = ((a >> 4) * 5689) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 0) & 15u) {
			if ((m >> 0) & 3u)
				FL_YIELD(ctx, so + 0u, (int32_t)((((FL_W(ctx, 151) & 65535u) * d) >> 16) * 1403));
			if ((m >> 5) & 3u)
				FL_YIELD(ctx, so + 13u, -(int32_t)((((FL_W(ctx, 189) & 65535u) * d) >> 16) * 2933));
		}
		if ((m >> 9) & 15u) {
			if ((m >> 10) & 1u)
				FL_YIELD(ctx, so + 26u, (int32_t)((((FL_W(ctx, 126) & 65535u) * d) >> 16) * 7157));
			if ((m >> 15) & 3u)
				FL_YIELD(ctx, so + 39u, -(int32_t)((((FL_W(ctx, 139) & 65535u) * d) >> 16) * 14323));
		}
		if ((m >> 18) & 15u) {
			if ((m >> 20) & 3u)
				FL_YIELD(ctx, so + 52u, (int32_t)((((FL_W(ctx, 168) & 65535u) * d) >> 16) * 20505));
			if ((m >> 25) & 1u)
				FL_YIELD(ctx, so + 65u, -(int32_t)((((FL_W(ctx, 172) & 65535u) * d) >> 16) * 1565));
		}
	}
	a = (now - FL_WA(ctx, at + 1u)) & 1048575u;
	m = FL_WA(ctx, at + 65u);
	y = ((a >> 4) * 5357) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 5) & 15u) {
			if ((m >> 1) & 3u)
				FL_YIELD(ctx, so + 78u, (int32_t)((((FL_W(ctx, 191) & 65535u) * d) >> 16) * 2661));
			if ((m >> 6) & 3u)
				FL_YIELD(ctx, so + 91u, -(int32_t)((((FL_W(ctx, 150) & 65535u) * d) >> 16) * 5561));
		}
		if ((m >> 14) & 15u) {
			if ((m >> 11) & 1u)
				FL_YIELD(ctx, so + 104u, (int32_t)((((FL_W(ctx, 176) & 65535u) * d) >> 16) * 13063));
			if ((m >> 16) & 3u)
				FL_YIELD(ctx, so + 117u, -(int32_t)((((FL_W(ctx, 185) & 65535u) * d) >> 16) * 26337));
		}
		if ((m >> 23) & 15u) {
			if ((m >> 21) & 3u)
				FL_YIELD(ctx, so + 130u, (int32_t)((((FL_W(ctx, 175) & 65535u) * d) >> 16) * 1733));
			if ((m >> 26) & 1u)
				FL_YIELD(ctx, so + 143u, -(int32_t)((((FL_W(ctx, 183) & 65535u) * d) >> 16) * 3325));
		}
	}
	a = (now - FL_WA(ctx, at + 2u)) & 1048575u;
	m = FL_WA(ctx, at + 66u);
	y = ((a >> 4) * 5841) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 10) & 15u) {
			if ((m >> 2) & 3u)
				FL_YIELD(ctx, so + 156u, (int32_t)((((FL_W(ctx, 180) & 65535u) * d) >> 16) * 6471));
			if ((m >> 7) & 3u)
				FL_YIELD(ctx, so + 169u, -(int32_t)((((FL_W(ctx, 166) & 65535u) * d) >> 16) * 11895));
		}
		if ((m >> 19) & 15u) {
			if ((m >> 12) & 1u)
				FL_YIELD(ctx, so + 182u, (int32_t)((((FL_W(ctx, 140) & 65535u) * d) >> 16) * 22447));
			if ((m >> 17) & 3u)
				FL_YIELD(ctx, so + 195u, -(int32_t)((((FL_W(ctx, 143) & 65535u) * d) >> 16) * 1737));
		}
		if ((m >> 0) & 15u) {
			if ((m >> 22) & 3u)
				FL_YIELD(ctx, so + 208u, (int32_t)((((FL_W(ctx, 149) & 65535u) * d) >> 16) * 2755));
			if ((m >> 27) & 1u)
				FL_YIELD(ctx, so + 221u, -(int32_t)((((FL_W(ctx, 159) & 65535u) * d) >> 16) * 6007));
		}
	}
	a = (now - FL_WA(ctx, at + 3u)) & 1048575u;
	m = FL_WA(ctx, at + 67u);
	y = ((a >> 4) * 5667) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 15) & 15u) {
			if ((m >> 3) & 3u)
				FL_YIELD(ctx, so + 234u, (int32_t)((((FL_W(ctx, 162) & 65535u) * d) >> 16) * 11091));
			if ((m >> 8) & 3u)
				FL_YIELD(ctx, so + 247u, -(int32_t)((((FL_W(ctx, 157) & 65535u) * d) >> 16) * 23279));
		}
		if ((m >> 24) & 15u) {
			if ((m >> 13) & 1u)
				FL_YIELD(ctx, so + 260u, (int32_t)((((FL_W(ctx, 158) & 65535u) * d) >> 16) * 1631));
			if ((m >> 18) & 3u)
				FL_YIELD(ctx, so + 273u, -(int32_t)((((FL_W(ctx, 156) & 65535u) * d) >> 16) * 3011));
		}
		if ((m >> 5) & 15u) {
			if ((m >> 23) & 3u)
				FL_YIELD(ctx, so + 286u, (int32_t)((((FL_W(ctx, 160) & 65535u) * d) >> 16) * 6107));
			if ((m >> 28) & 1u)
				FL_YIELD(ctx, so + 299u, -(int32_t)((((FL_W(ctx, 161) & 65535u) * d) >> 16) * 13927));
		}
	}
	a = (now - FL_WA(ctx, at + 4u)) & 1048575u;
	m = FL_WA(ctx, at + 68u);
	y = ((a >> 4) * 4835) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 20) & 15u) {
			if ((m >> 4) & 3u)
				FL_YIELD(ctx, so + 312u, (int32_t)((((FL_W(ctx, 119) & 65535u) * d) >> 16) * 22369));
			if ((m >> 9) & 3u)
				FL_YIELD(ctx, so + 325u, -(int32_t)((((FL_W(ctx, 129) & 65535u) * d) >> 16) * 1505));
		}
		if ((m >> 1) & 15u) {
			if ((m >> 14) & 1u)
				FL_YIELD(ctx, so + 338u, (int32_t)((((FL_W(ctx, 138) & 65535u) * d) >> 16) * 3367));
			if ((m >> 19) & 3u)
				FL_YIELD(ctx, so + 351u, -(int32_t)((((FL_W(ctx, 177) & 65535u) * d) >> 16) * 5277));
		}
		if ((m >> 10) & 15u) {
			if ((m >> 24) & 3u)
				FL_YIELD(ctx, so + 364u, (int32_t)((((FL_W(ctx, 124) & 65535u) * d) >> 16) * 11495));
			if ((m >> 29) & 1u)
				FL_YIELD(ctx, so + 377u, -(int32_t)((((FL_W(ctx, 173) & 65535u) * d) >> 16) * 21877));
		}
	}
	a = (now - FL_WA(ctx, at + 5u)) & 1048575u;
	m = FL_WA(ctx, at + 69u);
	y = ((a >> 4) * 5361) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 25) & 15u) {
			if ((m >> 5) & 3u)
				FL_YIELD(ctx, so + 390u, (int32_t)((((FL_W(ctx, 186) & 65535u) * d) >> 16) * 1361));
			if ((m >> 10) & 3u)
				FL_YIELD(ctx, so + 403u, -(int32_t)((((FL_W(ctx, 179) & 65535u) * d) >> 16) * 3543));
		}
		if ((m >> 6) & 15u) {
			if ((m >> 15) & 1u)
				FL_YIELD(ctx, so + 416u, (int32_t)((((FL_W(ctx, 163) & 65535u) * d) >> 16) * 5723));
			if ((m >> 20) & 3u)
				FL_YIELD(ctx, so + 429u, -(int32_t)((((FL_W(ctx, 141) & 65535u) * d) >> 16) * 11691));
		}
		if ((m >> 15) & 15u) {
			if ((m >> 25) & 3u)
				FL_YIELD(ctx, so + 442u, (int32_t)((((FL_W(ctx, 155) & 65535u) * d) >> 16) * 26703));
			if ((m >> 0) & 1u)
				FL_YIELD(ctx, so + 455u, -(int32_t)((((FL_W(ctx, 171) & 65535u) * d) >> 16) * 1449));
		}
	}
	a = (now - FL_WA(ctx, at + 6u)) & 1048575u;
	m = FL_WA(ctx, at + 70u);
	y = ((a >> 4) * 4935) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 2) & 15u) {
			if ((m >> 6) & 3u)
				FL_YIELD(ctx, so + 468u, (int32_t)((((FL_W(ctx, 148) & 65535u) * d) >> 16) * 2899));
			if ((m >> 11) & 3u)
				FL_YIELD(ctx, so + 481u, -(int32_t)((((FL_W(ctx, 152) & 65535u) * d) >> 16) * 6535));
		}
		if ((m >> 11) & 15u) {
			if ((m >> 16) & 1u)
				FL_YIELD(ctx, so + 494u, (int32_t)((((FL_W(ctx, 174) & 65535u) * d) >> 16) * 12525));
			if ((m >> 21) & 3u)
				FL_YIELD(ctx, so + 507u, -(int32_t)((((FL_W(ctx, 165) & 65535u) * d) >> 16) * 22311));
		}
		if ((m >> 20) & 15u) {
			if ((m >> 26) & 3u)
				FL_YIELD(ctx, so + 520u, (int32_t)((((FL_W(ctx, 174) & 65535u) * d) >> 16) * 1665));
			if ((m >> 1) & 1u)
				FL_YIELD(ctx, so + 533u, -(int32_t)((((FL_W(ctx, 170) & 65535u) * d) >> 16) * 2827));
		}
	}
	a = (now - FL_WA(ctx, at + 7u)) & 1048575u;
	m = FL_WA(ctx, at + 71u);
	y = ((a >> 4) * 5801) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 7) & 15u) {
			if ((m >> 7) & 3u)
				FL_YIELD(ctx, so + 546u, (int32_t)((((FL_W(ctx, 169) & 65535u) * d) >> 16) * 6047));
			if ((m >> 12) & 3u)
				FL_YIELD(ctx, so + 559u, -(int32_t)((((FL_W(ctx, 166) & 65535u) * d) >> 16) * 13833));
		}
		if ((m >> 16) & 15u) {
			if ((m >> 17) & 1u)
				FL_YIELD(ctx, so + 572u, (int32_t)((((FL_W(ctx, 164) & 65535u) * d) >> 16) * 25045));
			if ((m >> 22) & 3u)
				FL_YIELD(ctx, so + 585u, -(int32_t)((((FL_W(ctx, 159) & 65535u) * d) >> 16) * 1501));
		}
		if ((m >> 25) & 15u) {
			if ((m >> 27) & 3u)
				FL_YIELD(ctx, so + 598u, (int32_t)((((FL_W(ctx, 161) & 65535u) * d) >> 16) * 3385));
			if ((m >> 2) & 1u)
				FL_YIELD(ctx, so + 611u, -(int32_t)((((FL_W(ctx, 236) & 65535u) * d) >> 16) * 5959));
		}
	} else if (FL_RARE(m, 73)) {
		return;
	}
	a = (now - FL_WA(ctx, at + 8u)) & 1048575u;
	m = FL_WA(ctx, at + 72u);
	y = ((a >> 4) * 5409) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 12) & 15u) {
			if ((m >> 8) & 3u)
				FL_YIELD(ctx, so + 624u, (int32_t)((((FL_W(ctx, 237) & 65535u) * d) >> 16) * 13091));
			if ((m >> 13) & 3u)
				FL_YIELD(ctx, so + 637u, -(int32_t)((((FL_W(ctx, 92) & 65535u) * d) >> 16) * 26585));
		}
		if ((m >> 21) & 15u) {
			if ((m >> 18) & 1u)
				FL_YIELD(ctx, so + 650u, (int32_t)((((FL_W(ctx, 238) & 65535u) * d) >> 16) * 1495));
			if ((m >> 23) & 3u)
				FL_YIELD(ctx, so + 663u, -(int32_t)((((FL_W(ctx, 90) & 65535u) * d) >> 16) * 2597));
		}
		if ((m >> 2) & 15u) {
			if ((m >> 28) & 3u)
				FL_YIELD(ctx, so + 676u, (int32_t)((((FL_W(ctx, 103) & 65535u) * d) >> 16) * 6091));
			if ((m >> 3) & 1u)
				FL_YIELD(ctx, so + 689u, -(int32_t)((((FL_W(ctx, 219) & 65535u) * d) >> 16) * 13645));
		}
	}
	a = (now - FL_WA(ctx, at + 9u)) & 1048575u;
	m = FL_WA(ctx, at + 73u);
	y = ((a >> 4) * 5523) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 17) & 15u) {
			if ((m >> 9) & 3u)
				FL_YIELD(ctx, so + 702u, (int32_t)((((FL_W(ctx, 190) & 65535u) * d) >> 16) * 25267));
			if ((m >> 14) & 3u)
				FL_YIELD(ctx, so + 715u, -(int32_t)((((FL_W(ctx, 220) & 65535u) * d) >> 16) * 1371));
		}
		if ((m >> 26) & 15u) {
			if ((m >> 19) & 1u)
				FL_YIELD(ctx, so + 728u, (int32_t)((((FL_W(ctx, 131) & 65535u) * d) >> 16) * 3147));
			if ((m >> 24) & 3u)
				FL_YIELD(ctx, so + 741u, -(int32_t)((((FL_W(ctx, 203) & 65535u) * d) >> 16) * 6213));
		}
		if ((m >> 7) & 15u) {
			if ((m >> 29) & 3u)
				FL_YIELD(ctx, so + 754u, (int32_t)((((FL_W(ctx, 221) & 65535u) * d) >> 16) * 13695));
			if ((m >> 4) & 1u)
				FL_YIELD(ctx, so + 767u, -(int32_t)((((FL_W(ctx, 78) & 65535u) * d) >> 16) * 23097));
		}
	}
	a = (now - FL_WA(ctx, at + 10u)) & 1048575u;
	m = FL_WA(ctx, at + 74u);
	y = ((a >> 4) * 4875) >> 12;
	if (y < 65536u) {
		d = 65536u - y + ((y * y) >> 17);
		d -= (((((y * y) >> 16) * y) >> 16) * 10923u) >> 16;
		if ((m >> 22) & 15u) {
			if ((m >> 10) & 3u)
				FL_YIELD(ctx, so + 780u, (int32_t)((((FL_W(ctx, 75) & 65535u) * d) >> 16) * 1465));
			if ((m >> 15) & 3u)
				FL_YIELD(ctx, so + 793u, -(int32_t)((((FL_W(ctx, 111) & 65535u) * d) >> 16) * 3467));
		}
		if ((m >> 3) & 15u) {
			if ((m >> 20) & 1u)
				FL_YIELD(ctx, so + 806u, (int32_t)((((FL_W(ctx, 123) & 65535u) * d) >> 16) * 6781));
			if ((m >> 25) & 3u)
				FL_YIELD(ctx, so + 819u, -(int32_t)((((FL_W(ctx, 192) & 65535u) * d) >> 16) * 12899));
		}
		if ((m >> 12) & 15u) {
			if ((m >> 0) & 3u)
				FL_YIELD(ctx, so + 832u, (int32_t)((((FL_W(ctx, 233) & 65535u) * d) >> 16) * 22111));
			if ((m >> 5) & 1u)
				FL_YIELD(ctx, so + 845u, -(int32_t)((((FL_W(ctx, 116) & 65535u) * d) >> 16) * 1523));
		}
	}
}
