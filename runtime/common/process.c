/* process.c: posix_spawnp with directory, redirections and extra environment (process.h). */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np (glibc 2.29) */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errbuf.h"

extern char **environ;

/* envp for the child: environ with every entry of extra added, replacing a same-named
 * entry. NULL on out of memory; free() the array (its strings are borrowed). */
static char **spawn_env(const char *const *extra)
{
	size_t n = 0, k = 0, m = 0;

	while (environ[n])
		n++;
	while (extra && extra[k])
		k++;
	char **envp = malloc((n + k + 1) * sizeof(*envp));
	if (envp == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int replaced = 0;
		for (size_t j = 0; j < k && !replaced; j++) {
			const char *eq = strchr(extra[j], '=');
			size_t len = eq ? (size_t)(eq - extra[j]) + 1 : strlen(extra[j]);
			replaced = strncmp(environ[i], extra[j], len) == 0;
		}
		if (!replaced)
			envp[m++] = environ[i];
	}
	for (size_t j = 0; j < k; j++)
		envp[m++] = (char *)extra[j];
	envp[m] = NULL;
	return envp;
}

static void spawn_close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0) {
			close(p[i]);
			p[i] = -1;
		}
}

/* The child inherits the spawner's affinity, so pin this (single-threaded) process around
 * posix_spawnp: the child is on its CPUs from its first instruction, before it makes any
 * thread, which sched_setaffinity on the child's pid afterwards could not promise. */
static int spawn_pinned(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
	const posix_spawnattr_t *attr, char *const argv[], char *const envp[],
	const uint16_t *cpus, unsigned ncpus)
{
	cpu_set_t old, set;
	int rc;

	if (cpus != NULL && ncpus > 0) {
		CPU_ZERO(&set);
		for (unsigned i = 0; i < ncpus; i++)
			CPU_SET(cpus[i], &set);
		if (sched_getaffinity(0, sizeof old, &old) != 0 ||
		    sched_setaffinity(0, sizeof set, &set) != 0)
			return errno;
	}
	rc = posix_spawnp(pid, file, fa, attr, argv, envp);
	if (cpus != NULL && ncpus > 0)
		sched_setaffinity(0, sizeof old, &old);
	return rc;
}

/* o->reset_signals: nothing blocked, default actions for what frontload catches. */
static int spawn_signals(posix_spawnattr_t *attr, short *flags)
{
	static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGCHLD };
	sigset_t none, defaults;

	sigemptyset(&none);
	sigemptyset(&defaults);
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
		sigaddset(&defaults, caught[i]);
	*flags |= POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	int rc = posix_spawnattr_setsigmask(attr, &none);
	return rc ? rc : posix_spawnattr_setsigdefault(attr, &defaults);
}

pid_t fl_spawn(const char *const *argv, const struct fl_spawn_opts *o, char *err,
	size_t errlen)
{
	static const struct fl_spawn_opts none;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char **envp;
	pid_t pid = -1;
	int rc = 0, fds[2] = { -1, -1 }, ins[2] = { -1, -1 };

	if (o == NULL)
		o = &none;
	const int wr = O_WRONLY | O_CREAT | (o->append ? O_APPEND : O_TRUNC);
	const char *out = o->stdout_pipe ? NULL : o->stdout_path;
	envp = spawn_env(o->env);
	if (envp == NULL) {
		fl_errf(err, errlen, "spawn %s: out of memory", argv[0]);
		return -1;
	}
	if ((o->stdout_pipe && pipe2(fds, O_CLOEXEC) != 0) ||
	    (o->stdin_pipe && pipe2(ins, O_CLOEXEC) != 0)) {
		fl_errf(err, errlen, "spawn %s: pipe: %s", argv[0], strerror(errno));
		spawn_close_pair(fds);
		free(envp);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	short flags = 0;
	if (o->new_pgroup) {
		rc = posix_spawnattr_setpgroup(&attr, 0);
		flags |= POSIX_SPAWN_SETPGROUP;
	}
	if (rc == 0 && o->reset_signals)
		rc = spawn_signals(&attr, &flags);
	if (rc == 0 && flags)
		rc = posix_spawnattr_setflags(&attr, flags);
	if (rc == 0 && o->cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
	if (rc == 0 && ins[0] >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, ins[0], 0);
	else if (rc == 0 && o->stdin_path)
		rc = posix_spawn_file_actions_addopen(&fa, 0, o->stdin_path, O_RDONLY, 0);
	if (rc == 0 && fds[1] >= 0)  /* dup2 clears close-on-exec on the copy */
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	if (rc == 0 && out)
		rc = posix_spawn_file_actions_addopen(&fa, 1, out, wr, 0644);
	/* One file for both streams: one open file description, so neither overwrites. */
	if (rc == 0 && o->stderr_path && out && strcmp(o->stderr_path, out) == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
	else if (rc == 0 && o->stderr_path)
		rc = posix_spawn_file_actions_addopen(&fa, 2, o->stderr_path, wr, 0644);
	if (rc == 0)
		rc = spawn_pinned(&pid, argv[0], &fa, &attr, (char *const *)argv, envp, o->cpus,
			o->ncpus);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(envp);
	/* The child's ends are the child's now. */
	if (fds[1] >= 0)
		close(fds[1]);
	if (ins[0] >= 0)
		close(ins[0]);
	fds[1] = ins[0] = -1;
	if (rc != 0) {
		spawn_close_pair(fds);
		spawn_close_pair(ins);
		fl_errf(err, errlen, "spawn %s: %s", argv[0], strerror(rc));
		return -1;
	}
	if (o->stdout_pipe)
		*o->stdout_pipe = fds[0];
	if (o->stdin_pipe)
		*o->stdin_pipe = ins[1];
	return pid;
}

int fl_spawn_wait(const char *const *argv, const struct fl_spawn_opts *o, char *err,
	size_t errlen)
{
	int st;
	pid_t pid = fl_spawn(argv, o, err, errlen);

	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fl_errf(err, errlen, "wait for %s: %s", argv[0], strerror(errno));
			return -1;
		}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fl_errf(err, errlen, "%s: killed by signal %d", argv[0], WTERMSIG(st));
	return -1;
}
