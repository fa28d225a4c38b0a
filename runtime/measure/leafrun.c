/* leafrun.c: start mock, leaf and driver as `frontload run` does; steps and stats. */
#define _GNU_SOURCE
#include "leafrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process.h"

#define LR_MAX_ARGV 256

static double lr_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void lr_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The last lines of log into out (newlines as " | "). */
static void lr_tail(const char *log, char *out, size_t len)
{
	char buf[1024];
	size_t n = 0;
	FILE *f = fopen(log, "r");
	out[0] = '\0';
	if (f == NULL)
		return;
	if (fseek(f, -(long)(sizeof buf - 1), SEEK_END) != 0)
		rewind(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	const char *p = buf;
	for (int lines = 0, i = (int)n - 1; i >= 0; i--)
		if (buf[i] == '\n' && ++lines == 3) {
			p = buf + i + 1;
			break;
		}
	snprintf(out, len, "%s", p);
	for (char *q = out; *q; q++)
		if (*q == '\n')
			*q = '|';
}

static void lr_fail(char *err, size_t errlen, const char *log, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void lr_fail(char *err, size_t errlen, const char *log, const char *fmt, ...)
{
	va_list ap;
	char tail[1024] = "";
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (log)
		lr_tail(log, tail, sizeof tail);
	if (tail[0]) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (log %s: %s)", log, tail);
	}
}

/* Start argv (no shell) with stdout and stderr appended to log; with pipes, stdin and
 * stdout on pipes instead (*to: its stdin, *from: its stdout). The child gets its own
 * process group, so a terminal's Ctrl-C reaches only us. */
static pid_t lr_spawn(char *const argv[], const char *log, int *to, int *from, char *err,
	size_t errlen)
{
	struct fl_spawn_opts o = { .stdout_path = log, .stderr_path = log, .append = 1,
		.stdin_path = "/dev/null", .stdin_pipe = to, .stdout_pipe = from,
		.new_pgroup = 1 };
	return fl_spawn((const char *const *)argv, &o, err, errlen);
}

/* Reap *pid without blocking; 1 while it runs. */
static int lr_alive(pid_t *pid, int *status)
{
	if (*pid <= 0)
		return 0;
	pid_t r = waitpid(*pid, status, WNOHANG);
	if (r == *pid || (r < 0 && errno == ECHILD)) {
		*pid = 0;
		return 0;
	}
	return 1;
}

int fm_leaf_alive(struct fm_leaf *l)
{
	return lr_alive(&l->leaf, &l->leaf_status);
}

static void lr_describe(int status, char *out, size_t len)
{
	if (WIFEXITED(status))
		snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, len, "gone");
}

/* Wait for the port in path while pid runs; addr = 127.0.0.1:PORT. 0 or -1 (err). */
/* 1 when the caller was signalled to stop (fm_leaf_cfg.stop), err saying so. */
static int lr_stopped(const volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	if (stop == NULL || *stop == 0)
		return 0;
	snprintf(err, errlen, "interrupted by signal %d", (int)*stop);
	return 1;
}

static int lr_wait_port(const char *what, const char *path, pid_t *pid, int *status,
	const char *log, double timeout_s, const volatile sig_atomic_t *stop, char *addr,
	size_t addrlen, char *err, size_t errlen)
{
	double t0 = lr_now();
	for (;;) {
		if (lr_stopped(stop, err, errlen))
			return -1;
		FILE *f = fopen(path, "r");
		unsigned port = 0;
		if (f != NULL) {
			char buf[128] = "";
			if (fgets(buf, sizeof buf, f)) {
				char *c = strrchr(buf, ':');
				port = (unsigned)strtoul(c ? c + 1 : buf, NULL, 10);
			}
			fclose(f);
		}
		if (port > 0 && port < 65536) {
			snprintf(addr, addrlen, "127.0.0.1:%u", port);
			return 0;
		}
		if (!lr_alive(pid, status)) {
			char how[64];
			lr_describe(*status, how, sizeof how);
			lr_fail(err, errlen, log, "%s %s before writing its port file", what, how);
			return -1;
		}
		if (lr_now() - t0 > timeout_s) {
			lr_fail(err, errlen, log, "%s wrote no port file within %.0f s", what,
				timeout_s);
			return -1;
		}
		lr_sleep_ms(50);
	}
}

/* An argv under construction (strings owned by the caller or by pool). */
struct lr_argv {
	char *v[LR_MAX_ARGV + 1];
	int n;
	char *pool[LR_MAX_ARGV];
	int npool;
};

static void lr_add(struct lr_argv *a, const char *s)
{
	if (a->n < LR_MAX_ARGV)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void lr_addf(struct lr_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void lr_addf(struct lr_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s && a->npool < LR_MAX_ARGV) {
		a->pool[a->npool++] = s;
		lr_add(a, s);
	} else {
		free(s);
	}
}

static void lr_free(struct lr_argv *a)
{
	for (int i = 0; i < a->npool; i++)
		free(a->pool[i]);
	a->npool = a->n = 0;
}

static int lr_start_mock(const struct fm_leaf_cfg *c, struct fm_leaf *l, char *err,
	size_t errlen)
{
	struct lr_argv a = { 0 };
	char port[4200];
	snprintf(port, sizeof port, "%s/%s-mock.port", c->dir, c->tag);
	unlink(port);
	lr_addf(&a, "%s/frontload-mock", c->bindir);
	lr_add(&a, "--port");
	lr_add(&a, "0");
	lr_add(&a, "--port-file");
	lr_add(&a, port);
	lr_add(&a, "--stats-file");
	lr_add(&a, l->mock_stats);
	l->mock = lr_spawn(a.v, l->mock_log, NULL, NULL, err, errlen);
	lr_free(&a);
	if (l->mock < 0) {
		l->mock = 0;
		return -1;
	}
	return lr_wait_port("frontload-mock", port, &l->mock, &l->mock_status, l->mock_log, 30,
		c->stop, l->mock_addr, sizeof l->mock_addr, err, errlen);
}

static int lr_start_leaf(const struct fm_leaf_cfg *c, struct fm_leaf *l, char *err,
	size_t errlen)
{
	struct lr_argv a = { 0 };
	char port[4200];
	snprintf(port, sizeof port, "%s/%s-leaf.port", c->dir, c->tag);
	unlink(port);
	for (int i = 0; c->wrap[i]; i++)
		lr_add(&a, c->wrap[i]);
	lr_addf(&a, "%s/frontload-leaf", c->bindir);
	lr_add(&a, "--port");
	lr_add(&a, "0");
	lr_add(&a, "--port-file");
	lr_add(&a, port);
	lr_add(&a, "--mock");
	lr_add(&a, l->mock_addr);
	lr_add(&a, "--stats-file");
	lr_add(&a, l->leaf_stats);
	lr_add(&a, "--seed");
	lr_addf(&a, "%llu", c->seed);
	if (c->tls)
		lr_add(&a, "--tls");
	for (int i = 0; c->leaf_args[i]; i++)
		lr_add(&a, c->leaf_args[i]);
	l->leaf = lr_spawn(a.v, l->leaf_log, NULL, NULL, err, errlen);
	lr_free(&a);
	if (l->leaf < 0) {
		l->leaf = 0;
		return -1;
	}
	return lr_wait_port("frontload-leaf", port, &l->leaf, &l->leaf_status, l->leaf_log,
		c->ready_s, c->stop, l->leaf_addr, sizeof l->leaf_addr, err, errlen);
}

static int lr_start_driver(const struct fm_leaf_cfg *c, struct fm_leaf *l, char *err,
	size_t errlen)
{
	struct lr_argv a = { 0 };
	lr_addf(&a, "%s/frontload-driver", c->bindir);
	lr_add(&a, "--leaf");
	lr_add(&a, l->leaf_addr);
	lr_add(&a, "--control");
	lr_add(&a, "--seed");
	lr_addf(&a, "%llu", c->seed);
	lr_add(&a, "--timeout-s");
	lr_addf(&a, "%.17g", c->timeout_s);
	lr_add(&a, "--json");
	lr_addf(&a, "%s/%s-driver.json", c->dir, c->tag);
	if (c->tls)
		lr_add(&a, "--tls");
	for (int i = 0; c->driver_args[i]; i++)
		lr_add(&a, c->driver_args[i]);
	l->driver = lr_spawn(a.v, l->driver_log, &l->to_drv, &l->from_drv, err, errlen);
	lr_free(&a);
	if (l->driver < 0) {
		l->driver = 0;
		return -1;
	}
	fcntl(l->from_drv, F_SETFL, fcntl(l->from_drv, F_GETFL) | O_NONBLOCK);
	return 0;
}

int fm_leaf_start(const struct fm_leaf_cfg *c, struct fm_leaf *l, char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->to_drv = l->from_drv = -1;
	l->stop = c->stop;
	snprintf(l->leaf_stats, sizeof l->leaf_stats, "%s/%s-leaf-stats.json", c->dir, c->tag);
	snprintf(l->mock_stats, sizeof l->mock_stats, "%s/%s-mock-stats.json", c->dir, c->tag);
	snprintf(l->leaf_log, sizeof l->leaf_log, "%s/%s-leaf.log", c->dir, c->tag);
	snprintf(l->mock_log, sizeof l->mock_log, "%s/%s-mock.log", c->dir, c->tag);
	snprintf(l->driver_log, sizeof l->driver_log, "%s/%s-driver.log", c->dir, c->tag);
	signal(SIGPIPE, SIG_IGN);
	if (lr_start_mock(c, l, err, errlen) != 0 || lr_start_leaf(c, l, err, errlen) != 0 ||
	    lr_start_driver(c, l, err, errlen) != 0)
		return -1;
	return 0;
}

/* One line from the driver into line (NUL-terminated, without '\n'), waiting at most
 * until deadline. 1 got one, 0 timed out, -1 the driver closed its stdout, -2 stopped
 * (fm_leaf_cfg.stop). */
static int lr_read_line(struct fm_leaf *l, char *line, size_t len, double deadline)
{
	for (;;) {
		char *nl = memchr(l->rbuf, '\n', l->rlen);
		if (nl) {
			size_t n = (size_t)(nl - l->rbuf);
			snprintf(line, len, "%.*s", (int)n, l->rbuf);
			memmove(l->rbuf, nl + 1, l->rlen - n - 1);
			l->rlen -= n + 1;
			return 1;
		}
		double left = deadline - lr_now();
		if (left <= 0)
			return 0;
		if (l->stop && *l->stop)
			return -2;
		struct pollfd p = { .fd = l->from_drv, .events = POLLIN };
		int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return -1;
		if (l->rlen == sizeof l->rbuf)
			l->rlen = 0;  /* a line too long to be a step result: drop it */
		ssize_t r = read(l->from_drv, l->rbuf + l->rlen, sizeof l->rbuf - l->rlen);
		if (r == 0)
			return -1;
		if (r > 0)
			l->rlen += (size_t)r;
	}
}

json_t *fm_leaf_step(struct fm_leaf *l, double qps, double warmup_s, double duration_s,
	double wait_s, char *err, size_t errlen)
{
	static char line[1 << 16];
	char cmd[128];
	int n = snprintf(cmd, sizeof cmd, "step %.17g %.17g %.17g\n", qps, warmup_s,
		duration_s);
	if (l->driver <= 0 || write(l->to_drv, cmd, (size_t)n) != n) {
		lr_fail(err, errlen, l->driver_log, "frontload-driver is not taking steps");
		return NULL;
	}
	double deadline = lr_now() + wait_s;
	int rc = lr_read_line(l, line, sizeof line, deadline);
	if (rc == -2) {
		lr_stopped(l->stop, err, errlen);
		return NULL;
	}
	if (rc <= 0) {
		lr_fail(err, errlen, l->driver_log, "frontload-driver %s during the step at %g qps",
			rc == 0 ? "gave no result" : "exited", qps);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loads(line, 0, &je);
	if (j == NULL || json_object_get(j, "error") != NULL) {
		snprintf(err, errlen, "frontload-driver: step %g %g %g: %s", qps, warmup_s,
			duration_s, j ? json_string_value(json_object_get(j, "error")) : je.text);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* sig to the leaf's main thread, the one that waits for it (sigtimedwait). A signal to
 * the process may land on a thread that does not block it: OpenBLAS starts its threads
 * before main blocks SIGUSR1 and SIGTERM, and the default action ends the leaf (seen
 * under valgrind, whose signal routing differs from the kernel's; natively it needs the
 * main thread to be out of sigtimedwait when the signal comes). */
static int lr_signal_main(pid_t pid, int sig)
{
	return (int)syscall(SYS_tgkill, pid, pid, sig);
}

json_t *fm_leaf_stats(struct fm_leaf *l, double wait_s, char *err, size_t errlen)
{
	double t0 = lr_now();
	unlink(l->leaf_stats);
	if (!fm_leaf_alive(l) || lr_signal_main(l->leaf, SIGUSR1) != 0) {
		lr_fail(err, errlen, l->leaf_log, "frontload-leaf is gone");
		return NULL;
	}
	while (lr_now() - t0 < wait_s) {
		if (lr_stopped(l->stop, err, errlen))
			return NULL;
		json_t *j = access(l->leaf_stats, R_OK) == 0 ?
			json_load_file(l->leaf_stats, 0, NULL) : NULL;
		if (j != NULL)
			return j;
		if (!fm_leaf_alive(l)) {
			lr_fail(err, errlen, l->leaf_log, "frontload-leaf died on SIGUSR1");
			return NULL;
		}
		lr_sleep_ms(50);
	}
	lr_fail(err, errlen, l->leaf_log, "frontload-leaf wrote no stats within %.0f s of "
		"SIGUSR1", wait_s);
	return NULL;
}

/* SIGTERM the ones alive (to their main thread), wait up to grace_s for all, then SIGKILL
 * and reap. */
static void lr_stop_pids(pid_t *pids[], int *st[], int n, double grace_s)
{
	for (int i = 0; i < n; i++)
		if (*pids[i] > 0)
			lr_signal_main(*pids[i], SIGTERM);
	double t0 = lr_now();
	for (;;) {
		int left = 0;
		for (int i = 0; i < n; i++)
			left += lr_alive(pids[i], st[i]);
		if (!left)
			return;
		if (lr_now() - t0 > grace_s)
			break;
		lr_sleep_ms(50);
	}
	for (int i = 0; i < n; i++)
		if (*pids[i] > 0) {
			kill(*pids[i], SIGKILL);
			waitpid(*pids[i], st[i], 0);
			*pids[i] = 0;
		}
}

void fm_leaf_stop(struct fm_leaf *l, double grace_s)
{
	if (l->driver > 0 && l->to_drv >= 0 && write(l->to_drv, "quit\n", 5) == 5) {
		double t0 = lr_now();
		while (lr_alive(&l->driver, &l->driver_status) && lr_now() - t0 < grace_s)
			lr_sleep_ms(20);
	}
	pid_t *d[] = { &l->driver };
	int *ds[] = { &l->driver_status };
	lr_stop_pids(d, ds, 1, 1);
	pid_t *s[] = { &l->leaf, &l->mock };
	int *ss[] = { &l->leaf_status, &l->mock_status };
	lr_stop_pids(s, ss, 2, grace_s);
	if (l->to_drv >= 0)
		close(l->to_drv);
	if (l->from_drv >= 0)
		close(l->from_drv);
	l->to_drv = l->from_drv = -1;
}
