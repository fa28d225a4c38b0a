@pattern P05 rate_counter_loops
@title Simple rate and counter loops with a table lookup
@variants 40
@lines 50 80
@knob ctrips 2 9        # counter loop trips (event counters scanned)
@knob rtrips 2 9        # rate loop trips (per-slot rates through the table)
@body
	@# Two sequential loops over a story window whose base is data dependent: a counter
	@# loop that compares each counter with its table threshold, then a rate loop that
	@# scales each slot with enough events by a table reciprocal and yields it.
	uint32_t hdr = FL_W(ctx, $K(0, 255));
	uint32_t base = hdr >> 24;
	uint32_t tslot = FL_W(ctx, $K(0, 255)) >> 20;
	if (FL_UNLIKELY(FL_RARE(hdr, $K(0, 127)))) {
		FL_YIELD(ctx, $K(0, 4095), $K(4096, 65535));
		return;
	}
	uint32_t hits = 0;
	uint32_t total = 0;
	uint32_t peak = 0;
	uint32_t floor_hits = 0;
	#pragma GCC unroll 4
	for (uint32_t i = 0; i < {{ctrips}}u; i++) {
		uint32_t c = FL_WA(ctx, base + i * {{2 + ctrips % 3}}u);
		if (c >= (FL_T(ctx, tslot + i) >> 2)) {
			hits++;
			total += c >> 12;
		}
		if ((c & 0xFFFFFu) > $K(100000, 400000)) {
			floor_hits++;
			FL_YIELD(ctx, $S(0, 4095) + i, c >> 20);
		}
		if (c > peak)
			peak = c;
	}
	uint32_t cls = FL_T(ctx, tslot + {{ctrips}}u);
	uint32_t rsum = 0;
	uint32_t capped = 0;
	#pragma GCC unroll 4
	for (uint32_t j = 0; j < {{rtrips}}u; j++) {
		uint32_t num = FL_WA(ctx, base + j + {{ctrips * 3}}u) & 0xFFFFu;
		if (num > $K(4000, 30000)) {
			uint32_t r = (num * (FL_T(ctx, tslot + j + {{ctrips + 1}}u) & 0xFFFFu)) >> 16;
			FL_YIELD(ctx, $S(0, 4095) + j, r);
			rsum += r;
		} else {
			capped++;
		}
	}
	int32_t rate = fl_rate_q16(hits, {{ctrips}}u);
	FL_YIELD(ctx, $K(0, 4095), rate);
	if (hits != 0u)
		FL_YIELD(ctx, $K(0, 4095), (total >> {{2 + (ctrips > 4)}}) + hits);
	else
		FL_YIELD(ctx, $K(0, 4095), peak >> 16);
	FL_YIELD(ctx, $K(0, 4095), floor_hits * {{65536 / ctrips}}u);
	if (rsum > (cls & 0x3FFFFu))
		FL_YIELD(ctx, $K(0, 4095), rsum >> 3);
	else
		FL_YIELD(ctx, $K(0, 4095), (cls >> 16) + rsum);
	if (capped > {{rtrips / 2}}u)
		FL_YIELD_SPARSE(ctx, $K(65536, 1073741823), capped * 4096u);
	FL_YIELD(ctx, $K(0, 4095), (peak >> 8) + capped);
