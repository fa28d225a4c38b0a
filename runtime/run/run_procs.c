/* run_procs.c: the run's processes: started pinned with log files (fl_spawn), reaped,
 * stopped in order. */
#define _GNU_SOURCE
#include "run_procs.h"
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void fl_proc_init(struct fl_proc *p, const char *name)
{
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name);
	p->to_fd = -1;
	p->from_fd = -1;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int fl_proc_start(struct fl_proc *p, char *const argv[], const char *log_path,
	const struct fl_cpus *cpus, int pipes, char *err, size_t errlen)
{
	char why[512];
	int to = -1, from = -1;
	/* Own process group and default signal actions (frontload catches INT, TERM, ...);
	 * stdin from /dev/null and both streams to the log, or (pipes) stdin and stdout
	 * through pipes and stderr to the log. */
	struct fl_spawn_opts o = {
		.stdin_path = "/dev/null", .stdout_path = log_path, .stderr_path = log_path,
		.append = 1, .new_pgroup = 1, .reset_signals = 1,
		.cpus = cpus ? cpus->cpu : NULL, .ncpus = cpus ? cpus->n : 0,
	};
	if (pipes) {
		o.stdin_pipe = &to;
		o.stdout_pipe = &from;
	}
	snprintf(p->log_path, sizeof p->log_path, "%s", log_path);
	pid_t pid = fl_spawn((const char *const *)argv, &o, why, sizeof why);
	if (pid < 0) {
		p->pid = 0;
		snprintf(err, errlen, "cannot start %s (%s): %s", p->name, argv[0], why);
		return -1;
	}
	p->pid = pid;
	if (pipes) {
		p->to_fd = to;
		p->from_fd = from;
		fcntl(p->from_fd, F_SETFL, fcntl(p->from_fd, F_GETFL) | O_NONBLOCK);
	}
	return 0;
}

int fl_proc_running(struct fl_proc *p)
{
	int status;

	if (p->pid <= 0 || p->exited)
		return 0;
	pid_t r = waitpid(p->pid, &status, WNOHANG);
	if (r == p->pid || (r < 0 && errno == ECHILD)) {
		p->exited = 1;
		p->status = r == p->pid ? status : 0;
		return 0;
	}
	return 1;
}

static void proc_close(struct fl_proc *p)
{
	if (p->to_fd >= 0)
		close(p->to_fd);
	if (p->from_fd >= 0)
		close(p->from_fd);
	p->to_fd = p->from_fd = -1;
}

void fl_proc_stop_all(struct fl_proc *const *ps, size_t n, int sig, int grace_ms)
{
	int left = 0;

	for (size_t i = 0; i < n; i++)
		if (fl_proc_running(ps[i])) {
			kill(ps[i]->pid, sig);
			left++;
		}
	for (int waited = 0; left > 0 && waited < grace_ms; waited += 10) {
		sleep_ms(10);
		left = 0;
		for (size_t i = 0; i < n; i++)
			left += fl_proc_running(ps[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (fl_proc_running(ps[i])) {
			kill(ps[i]->pid, SIGKILL);
			int status;
			while (waitpid(ps[i]->pid, &status, 0) < 0 && errno == EINTR)
				;
			ps[i]->exited = 1;
			ps[i]->status = status;
		}
		proc_close(ps[i]);
	}
}

void fl_proc_describe(const struct fl_proc *p, char *out, size_t outlen)
{
	if (p->pid <= 0)
		snprintf(out, outlen, "not started");
	else if (!p->exited)
		snprintf(out, outlen, "running");
	else if (WIFEXITED(p->status))
		snprintf(out, outlen, "exited with status %d", WEXITSTATUS(p->status));
	else if (WIFSIGNALED(p->status))
		snprintf(out, outlen, "killed by signal %d (%s)", WTERMSIG(p->status),
			strsignal(WTERMSIG(p->status)));
	else
		snprintf(out, outlen, "ended (wait status %#x)", p->status);
}

void fl_log_tail(const char *path, unsigned lines, char *out, size_t outlen)
{
	char buf[16384];
	FILE *f;
	long size;
	size_t n;

	if (outlen == 0)
		return;
	out[0] = 0;
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > (long)sizeof buf - 1)
		fseek(f, size - (long)sizeof buf + 1, SEEK_SET);
	else
		fseek(f, 0, SEEK_SET);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	/* Back up over `lines` newlines. */
	size_t start = n;
	for (unsigned seen = 0; start > 0; start--)
		if (buf[start - 1] == '\n' && ++seen == lines)
			break;
	const char *s = buf + start;
	size_t len = strlen(s);
	if (len >= outlen)
		s += len - (outlen - 1);
	snprintf(out, outlen, "%s", s);
}

int fl_port_file_wait(const char *path, struct fl_proc *p, double timeout_s,
	volatile sig_atomic_t *stop, unsigned *port, char *err, size_t errlen)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char buf[64];
		FILE *f = fopen(path, "r");
		if (f != NULL) {
			size_t n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
			buf[n] = 0;
			char *end;
			unsigned long v = strtoul(buf, &end, 10);
			if (end != buf && v > 0 && v <= 65535) {
				*port = (unsigned)v;
				return 0;
			}
		}
		if (stop != NULL && *stop)
			return -2;
		if (p != NULL && !fl_proc_running(p)) {
			char how[128], tail[1024];
			fl_proc_describe(p, how, sizeof how);
			fl_log_tail(p->log_path, 5, tail, sizeof tail);
			snprintf(err, errlen, "%s (pid %d) %s before it was ready; %s ends:\n%s",
				p->name, (int)p->pid, how, p->log_path, tail[0] ? tail : "(empty)");
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		double waited = (double)(now.tv_sec - t0.tv_sec) +
			(double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (waited >= timeout_s) {
			char tail[1024] = "";
			if (p != NULL)
				fl_log_tail(p->log_path, 5, tail, sizeof tail);
			snprintf(err, errlen, "%s not ready after %.0f s (no port in %s)%s%s%s",
				p ? p->name : "process", timeout_s, path, p ? "; " : "",
				p ? p->log_path : "", tail[0] ? " ends:\n" : "");
			if (tail[0]) {
				size_t l = strlen(err);
				snprintf(err + l, errlen - l, "%s", tail);
			}
			return -1;
		}
		sleep_ms(50);
	}
}
