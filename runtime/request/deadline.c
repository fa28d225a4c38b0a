/* deadline.c: deadline verdicts and stage time estimates (pure). */
#include <stddef.h>

#include "deadline.h"

#define DL_STEP_SHIFT 5u  /* a move is 1/32 of the estimate (x3 downward): p25 */
#define DL_DOWN_STEPS 3u

const char *fl_dl_stage_name(enum fl_dl_stage s)
{
	static const char *const names[FL_DL_NSTAGES] = {
		"admit", "queue", "extract", "rank", "fanout",
	};
	return (unsigned)s < FL_DL_NSTAGES ? names[s] : "unknown";
}

uint64_t fl_dl_local(uint64_t client_deadline_ns, uint64_t now_wall, uint64_t now_mono)
{
	uint64_t left;

	if (client_deadline_ns == 0)
		return 0;
	if (client_deadline_ns >= now_wall) {
		left = client_deadline_ns - now_wall;
		return left > UINT64_MAX - now_mono ? UINT64_MAX : now_mono + left;
	}
	left = now_wall - client_deadline_ns;  /* how long ago it passed */
	return left < now_mono ? now_mono - left : 1;
}

enum fl_dl_verdict fl_dl_decide(uint64_t now, uint64_t deadline, uint64_t rest_ns)
{
	if (deadline == 0)
		return FL_DL_GO;
	if (now >= deadline)
		return FL_DL_EXPIRED;
	return rest_ns > deadline - now ? FL_DL_WOULD_MISS : FL_DL_GO;
}

enum fl_dl_verdict fl_dl_decide_queue(uint64_t now, uint64_t enqueued, uint64_t max_wait_ns,
	uint64_t deadline, uint64_t rest_ns)
{
	if (max_wait_ns != 0 && now > enqueued && now - enqueued > max_wait_ns)
		return FL_DL_QUEUE_WAIT;
	return fl_dl_decide(now, deadline, rest_ns);
}

void fl_dl_est_add(struct fl_dl_est *e, const uint64_t wall_ns[FL_STAGE_COUNT])
{
	for (int s = 0; s < FL_STAGE_COUNT; s++) {
		uint64_t old = e->wall_ns[s], v = wall_ns[s];

		uint64_t step = (old >> DL_STEP_SHIFT) ? old >> DL_STEP_SHIFT : 1;

		/* Never past the sample: a move stops at v. */
		if (old == 0)
			e->wall_ns[s] = v;
		else if (v > old)
			e->wall_ns[s] = v - old < step ? v : old + step;
		else if (v < old)
			e->wall_ns[s] = old - v < DL_DOWN_STEPS * step ? v : old - DL_DOWN_STEPS * step;
	}
}

uint64_t fl_dl_est_rest(const struct fl_dl_est *e, enum fl_stage from,
	const uint64_t *done)
{
	uint64_t sum = 0;

	for (int s = (int)from; s >= 0 && s < FL_STAGE_COUNT; s++) {
		uint64_t d = done != NULL ? done[s] : 0;

		sum += e->wall_ns[s] > d ? e->wall_ns[s] - d : 0;
	}
	return sum;
}

enum fl_dl_verdict fl_dl_probe(struct fl_dl_est *e, enum fl_dl_verdict v)
{
	if (v == FL_DL_GO) {
		e->miss_run = 0;
		return v;
	}
	if (v != FL_DL_WOULD_MISS)
		return v;
	if (++e->miss_run < FL_DL_PROBE_EVERY)
		return v;
	e->miss_run = 0;
	return FL_DL_GO;
}
