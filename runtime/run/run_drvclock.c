/* run_drvclock.c: remote drivers' clock offsets over their control pipes
 * (run_drvclock.h). */
#include "run_drvclock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "clock.h"
#include "run_drvline.h"
#include "run_launch.h"
#include "run_result.h"

/* One exchange: 1 sampled, 0 answered without a clock (clock_err set), -1 failed. */
static int drv_clock_once(struct fl_run *r, struct fl_run_driver *dv)
{
	uint64_t t0 = fl_wall_ns();
	double until = fl_run_now() + RUN_CLOCK_WAIT_S;
	char what[512], *line;
	size_t len;

	if (run_drv_send(dv, "clock\n") != 0) {
		snprintf(what, sizeof what, "could not be sent the clock line: %s",
			strerror(errno));
		run_driver_failed(r, dv, what);
		return -1;
	}
	for (;;) {
		int got = run_drv_line(r, dv, &line, &len);
		uint64_t t3 = fl_wall_ns();
		if (got == -1)
			return -1;
		if (got == -2) {
			run_driver_failed(r, dv, "closed its output before answering the clock line");
			return -1;
		}
		if (got == 1) {
			json_error_t je;
			json_t *j = json_loads(line, 0, &je);
			json_t *ts = json_object_get(j, "clock_wall_ns");
			int rc = 1;
			if (json_is_integer(ts) && json_integer_value(ts) > 0) {
				fl_clock_add(&dv->clock, t0, (uint64_t)json_integer_value(ts), t3);
			} else {
				json_t *e = json_object_get(j, "error");
				snprintf(dv->clock_err, sizeof dv->clock_err, "it answered the clock "
					"line with %.200s", json_is_string(e) ? json_string_value(e) :
					"something else");
				rc = 0;
			}
			json_decref(j);
			run_drv_consume(dv, len);
			return rc;
		}
		double left = until - fl_run_now();
		if (left <= 0) {
			snprintf(what, sizeof what, "did not answer the clock line within %g s",
				RUN_CLOCK_WAIT_S);
			run_driver_failed(r, dv, what);
			return -1;
		}
		struct pollfd p = { dv->proc.from_fd, POLLIN, 0 };
		poll(&p, 1, (int)(left * 1000) + 1);
	}
}

int run_driver_clocks(struct fl_run *r)
{
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		for (unsigned d = 0; d < in->ndrv; d++) {
			struct fl_run_driver *dv = &in->drv[d];
			if (!dv->host[0])
				continue;
			for (unsigned k = 0; k < RUN_CLOCK_SAMPLES; k++) {
				int rc = drv_clock_once(r, dv);
				if (rc < 0)
					return -1;
				if (rc == 0)
					break;
			}
		}
	}
	return 0;
}
