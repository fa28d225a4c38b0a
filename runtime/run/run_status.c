/* run_status.c: how `frontload run` is going: stop signal, status, progress, result file. */
#include "run_status.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run_result.h"

volatile sig_atomic_t run_signal;

static void run_on_signal(int sig)
{
	run_signal = sig;
}

void run_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = run_on_signal;  /* no SA_RESTART: poll and sleeps return early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void run_set_status(struct fl_run *r, enum fl_run_status st, const char *fmt, ...)
{
	va_list ap;
	if (r->status != FL_RUN_RUNNING)
		return;  /* the first cause wins */
	r->status = st;
	va_start(ap, fmt);
	vsnprintf(r->status_reason, sizeof r->status_reason, fmt, ap);
	va_end(ap);
}

void run_say(struct fl_run *r, int permanent, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (r->tty) {
		fprintf(stderr, "\r\033[K%s%s", buf, permanent ? "\n" : "");
		r->progress_open = !permanent;
	} else if (permanent) {
		fprintf(stderr, "%s\n", buf);
	}
	fflush(stderr);
}

void run_fmt_secs(double s, char *out, size_t len)
{
	long t = s > 0 ? lround(s) : 0;
	if (t >= 60)
		snprintf(out, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(out, len, "%lds", t);
}

void run_write(struct fl_run *r)
{
	char err[4200];
	if (fl_result_write(r, err, sizeof err) != 0) {
		run_say(r, 1, RUN_PROG ": %s", err);
		run_set_status(r, FL_RUN_FAILED, "%s", err);
	}
}
