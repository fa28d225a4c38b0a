/* run_procs.c: posix_spawn with CPU pinning and log files, reaping, ordered stop. */
#define _GNU_SOURCE
#include "run_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

/* The child inherits the spawner's affinity, so pin this (single-threaded) process around
 * posix_spawn: the child is on its CPUs from its first instruction, before it makes any
 * thread, which sched_setaffinity on the child's PID afterwards could not promise. */
static int spawn_pinned(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
	const posix_spawnattr_t *attr, char *const argv[], const struct fl_cpus *cpus)
{
	cpu_set_t old, set;
	int pinned = 0, rc;

	if (cpus != NULL && cpus->n > 0) {
		CPU_ZERO(&set);
		for (unsigned i = 0; i < cpus->n; i++)
			CPU_SET(cpus->cpu[i], &set);
		if (sched_getaffinity(0, sizeof old, &old) != 0)
			return errno;
		if (sched_setaffinity(0, sizeof set, &set) != 0)
			return errno;
		pinned = 1;
	}
	rc = posix_spawn(pid, path, fa, attr, argv, environ);
	if (pinned)
		sched_setaffinity(0, sizeof old, &old);
	return rc;
}

int fl_proc_start(struct fl_proc *p, char *const argv[], const char *log_path,
	const struct fl_cpus *cpus, int pipes, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, rc;

	snprintf(p->log_path, sizeof p->log_path, "%s", log_path);
	if (pipes && (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)) {
		snprintf(err, errlen, "cannot start %s: pipe: %s", p->name, strerror(errno));
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	if (pipes) {
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
		posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_APPEND,
			0644);
	} else {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_APPEND,
			0644);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	/* Own process group; default dispositions for what frontload catches or ignores. */
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGHUP);
	sigaddset(&defaults, SIGPIPE);
	sigaddset(&defaults, SIGUSR1);
	sigaddset(&defaults, SIGCHLD);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
		POSIX_SPAWN_SETSIGDEF);

	rc = spawn_pinned(&p->pid, argv[0], &fa, &attr, argv, cpus);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (pipes) {
		close(in[0]);
		close(out[1]);
	}
	if (rc != 0) {
		p->pid = 0;
		snprintf(err, errlen, "cannot start %s (%s): %s", p->name, argv[0], strerror(rc));
		if (pipes) {
			close(in[1]);
			close(out[0]);
		}
		return -1;
	}
	if (pipes) {
		p->to_fd = in[1];
		p->from_fd = out[0];
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
