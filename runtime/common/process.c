/* process.c: posix_spawnp with directory, redirections and extra environment (process.h). */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np (glibc 2.29) */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

pid_t fl_spawn(const char *const *argv, const struct fl_spawn_opts *o, char *err,
	size_t errlen)
{
	static const struct fl_spawn_opts none;
	posix_spawn_file_actions_t fa;
	const int wr = O_WRONLY | O_CREAT | O_TRUNC;
	char **envp;
	pid_t pid = -1;
	int rc = 0;

	if (o == NULL)
		o = &none;
	envp = spawn_env(o->env);
	if (envp == NULL) {
		fl_errf(err, errlen, "spawn %s: out of memory", argv[0]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	if (o->cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
	if (rc == 0 && o->stdout_path)
		rc = posix_spawn_file_actions_addopen(&fa, 1, o->stdout_path, wr, 0644);
	if (rc == 0 && o->stderr_path)
		rc = posix_spawn_file_actions_addopen(&fa, 2, o->stderr_path, wr, 0644);
	if (rc == 0)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (rc != 0) {
		fl_errf(err, errlen, "spawn %s: %s", argv[0], strerror(rc));
		return -1;
	}
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
