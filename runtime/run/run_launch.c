/* run_launch.c: start, watch and stop every instance's mock, leaf and driver. */
#define _GNU_SOURCE
#include "run_launch.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_procs.h"
#include "run_remote.h"
#include "run_result.h"
#include "run_status.h"
#include "tls.h"

#define RUN_MAX_ARGS 256         /* arguments of one child at most */
#define RUN_REMOTE_TIMEOUT_S 5.0 /* a remote STATS connect, write or read at most */

/* path of program name: beside this executable, else in PATH. Returns 0 or -1. */
static int run_find_program(const struct fl_run *r, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", r->exe_dir, name);
	if (access(out, X_OK) == 0)
		return 0;
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(out, len, "%.*s/%s", (int)n, path, name);
		if (n > 0 && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	snprintf(out, len, "%s/%s", r->exe_dir, name);
	return -1;
}

/* An argv under construction; every string owned. */
struct run_argv {
	char *v[RUN_MAX_ARGS + 1];
	int n;
};

static void argv_add(struct run_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void argv_add(struct run_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	if (a->n >= RUN_MAX_ARGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* Append the words of text (split on spaces). */
static void argv_split(struct run_argv *a, const char *text)
{
	while (text && *text) {
		text += strspn(text, " \t");
		size_t n = strcspn(text, " \t");
		if (n > 0)
			argv_add(a, "%.*s", (int)n, text);
		text += n;
	}
}

/* s as one word of a POSIX shell command line: ssh hands the remote shell one string. */
static void argv_add_quoted(struct run_argv *a, const char *s)
{
	char q[8192];
	size_t n = 0;
	q[n++] = '\'';
	for (; *s && n + 6 < sizeof q; s++) {
		if (*s == '\'') {
			memcpy(q + n, "'\\''", 4);
			n += 4;
		} else {
			q[n++] = *s;
		}
	}
	q[n++] = '\'';
	q[n] = 0;
	argv_add(a, "%s", q);
}

/* --tls-dir for a child, when the run was given one. */
static void argv_tls_dir(struct run_argv *a, const struct fl_run_config *c)
{
	if (c->tls_dir) {
		argv_add(a, "--tls-dir");
		argv_add(a, "%s", c->tls_dir);
	}
}

static void argv_free(struct run_argv *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

/* Item i of a comma list (or the only item when the list has one). 0 or -1. */
static int run_list_item(const char *list, unsigned i, unsigned n, char *out, size_t len,
	unsigned *count)
{
	unsigned k = 0;
	const char *p = list;
	*count = 1;
	for (const char *q = list; *q; q++)
		*count += *q == ',';
	if (*count != 1 && *count != n)
		return -1;
	if (*count == 1)
		i = 0;
	for (; k < i; k++)
		p = strchr(p, ',') + 1;
	size_t l = strcspn(p, ",");
	if (l == 0 || l >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)l, p);
	return 0;
}

/* Every process slot of every instance, drivers first. */
static size_t run_all_procs(struct fl_run *r, struct fl_proc **out, int drivers,
	int servers)
{
	size_t n = 0;
	for (unsigned i = 0; i < r->ninst; i++)
		for (unsigned d = 0; drivers && d < r->inst[i].ndrv; d++)
			out[n++] = &r->inst[i].drv[d].proc;
	for (unsigned i = 0; i < r->ninst; i++)
		if (servers) {
			out[n++] = &r->inst[i].leaf;
			out[n++] = &r->inst[i].mock;
		}
	return n;
}

static int run_spawn(struct fl_run *r, struct fl_proc *p, struct run_argv *a,
	const struct fl_cpus *cpus, int pipes)
{
	char log[4200], err[1024];
	snprintf(log, sizeof log, "%s/%s.log", r->dir, p->name);
	if (fl_proc_start(p, a->v, log, cpus, pipes, err, sizeof err) != 0) {
		run_set_status(r, FL_RUN_FAILED, "%s", err);
		return -1;
	}
	char c[256] = "";
	if (cpus && cpus->n)
		fl_cpus_format(cpus, c, sizeof c);
	run_say(r, 1, RUN_PROG ": started %s (pid %d%s%s), log %s", p->name, (int)p->pid,
		c[0] ? ", CPUs " : "", c, log);
	return 0;
}

/* Wait for p's port file; addr = 127.0.0.1:port. 0, -1 failed, -2 interrupted. */
static int run_wait_ready(struct fl_run *r, struct fl_proc *p, const char *port_file,
	char *addr, size_t addrlen)
{
	char err[2048];
	unsigned port;
	int rc = fl_port_file_wait(port_file, p, r->cfg.ready_timeout_s, &run_signal, &port,
		err, sizeof err);
	if (rc == -1)
		run_set_status(r, FL_RUN_FAILED, "%s", err);
	if (rc == 0)
		snprintf(addr, addrlen, "127.0.0.1:%u", port);
	return rc;
}

/* Start driver d of in: the control protocol on pipes, against in's leaf. 0 or -1. */
static int run_start_driver(struct fl_run *r, struct fl_run_instance *in, unsigned d,
	const char *drv_bin)
{
	const struct fl_run_config *c = &r->cfg;
	struct fl_run_driver *dv = &in->drv[d];
	struct run_argv a = { 0 };
	char path[4200];
	int rc;

	snprintf(path, sizeof path, "%s/%s.jsonl", r->dir, dv->proc.name);
	dv->jsonl = fopen(path, "we");
	if (dv->host[0] && dv->home[0])
		argv_add(&a, "%s/bin/frontload-driver", dv->home);
	else
		argv_add(&a, "%s", dv->host[0] ? "frontload-driver" : drv_bin);
	argv_add(&a, "--leaf");
	argv_add(&a, "%s", in->leaf_addr);
	argv_add(&a, "--control");
	argv_add(&a, "--seed");
	argv_add(&a, "%llu", (unsigned long long)dv->seed);
	argv_add(&a, "--sla-ms");
	argv_add(&a, "%.17g", c->search.sla_p95_ms);
	argv_add(&a, "--timeout-s");
	argv_add(&a, "%.17g", c->driver_timeout_s);
	argv_add(&a, "--arrival");
	argv_add(&a, "%s", c->arrival);
	argv_add(&a, "--draws");
	argv_add(&a, "%s", c->draws);
	if (!dv->host[0]) {
		argv_add(&a, "--json");
		argv_add(&a, "%s", dv->json_path);
	}
	if (c->tls)
		argv_add(&a, "--tls");
	if (c->trace && !dv->host[0]) {
		argv_add(&a, "--trace-csv");
		if (in->ndrv > 1)
			argv_add(&a, "%s/trace-%u.%u.csv", r->dir, in->index, d);
		else if (r->ninst > 1)
			argv_add(&a, "%s/trace-%u.csv", r->dir, in->index);
		else
			argv_add(&a, "%s/trace.csv", r->dir);
	}
	if (!dv->host[0]) {
		argv_tls_dir(&a, c);
	} else if (dv->home[0]) {
		argv_add(&a, "--tls-dir");
		argv_add(&a, "%s/tls", dv->home);
	}
	argv_split(&a, c->driver_args);
	if (!dv->host[0]) {
		rc = run_spawn(r, &dv->proc, &a, &in->driver_cpus, 1);
		argv_free(&a);
		return rc;
	}
	/* Remote: ssh HOST and the driver's command line, each word quoted for its shell. */
	struct run_argv s = { 0 };
	argv_split(&s, c->ssh);
	if (s.n > 0 && strchr(s.v[0], '/') == NULL &&
	    run_find_program(r, s.v[0], path, sizeof path) == 0) {
		char *found = strdup(path);  /* spawned by path: the PATH's */
		if (found != NULL) {
			free(s.v[0]);
			s.v[0] = found;
		}
	}
	argv_add(&s, "%s", dv->host);
	argv_add(&s, "--");
	for (int k = 0; k < a.n; k++)
		argv_add_quoted(&s, a.v[k]);
	rc = run_spawn(r, &dv->proc, &s, NULL, 1);
	argv_free(&s);
	argv_free(&a);
	return rc;
}

/* --driver-ssh: the host (and directory) of each driver after the first. 0 or -1. */
static int run_driver_hosts(struct fl_run *r, struct fl_run_instance *in)
{
	const char *list = r->cfg.driver_ssh;
	char spec[1300];
	unsigned count;

	for (unsigned d = 1; list && d < in->ndrv; d++) {
		if (run_list_item(list, d - 1, in->ndrv - 1, spec, sizeof spec, &count) != 0) {
			run_set_status(r, FL_RUN_FAILED, "--driver-ssh: give one HOST[=DIR], or one "
				"per driver after the first (%u)", in->ndrv - 1);
			return -1;
		}
		char *eq = strchr(spec, '=');
		if (eq)
			*eq = 0;
		if (spec[0] == 0 || strlen(spec) >= sizeof in->drv[d].host ||
		    (eq && (eq[1] == 0 || strlen(eq + 1) >= sizeof in->drv[d].home))) {
			run_set_status(r, FL_RUN_FAILED, "--driver-ssh: '%s' is not HOST[=DIR]",
				spec);
			return -1;
		}
		snprintf(in->drv[d].host, sizeof in->drv[d].host, "%s", spec);
		snprintf(in->drv[d].home, sizeof in->drv[d].home, "%s", eq ? eq + 1 : "");
	}
	return 0;
}

int run_start(struct fl_run *r)
{
	const struct fl_run_config *c = &r->cfg;
	char mock_bin[4096], leaf_bin[4096], drv_bin[4096], port_file[4200];
	unsigned count;
	int rc;

	if (run_find_program(r, "frontload-driver", drv_bin, sizeof drv_bin) != 0 ||
	    (!c->leaf && run_find_program(r, "frontload-leaf", leaf_bin, sizeof leaf_bin) != 0) ||
	    (!c->leaf && !c->mock &&
	     run_find_program(r, "frontload-mock", mock_bin, sizeof mock_bin) != 0)) {
		run_set_status(r, FL_RUN_FAILED, "cannot find frontload-driver, frontload-leaf or "
			"frontload-mock beside %s/frontload or in PATH (build them: ninja "
			"frontload-driver frontload-leaf frontload-mock)", r->exe_dir);
		return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		in->own_leaf = c->leaf == NULL;
		in->own_mock = in->own_leaf && c->mock == NULL;
		if (c->leaf && (run_list_item(c->leaf, i, r->ninst, in->leaf_addr,
		    sizeof in->leaf_addr, &count) != 0 || (count == 1 && r->ninst > 1))) {
			run_set_status(r, FL_RUN_FAILED, "--leaf: give one HOST:PORT per instance "
				"(%u)", r->ninst);
			return -1;
		}
		/* A remote leaf's mock is given only to read its stats. */
		if (c->mock && run_list_item(c->mock, i, r->ninst, in->mock_addr,
		    sizeof in->mock_addr, &count) != 0) {
			run_set_status(r, FL_RUN_FAILED, "--mock: give one HOST:PORT, or one per "
				"instance (%u)", r->ninst);
			return -1;
		}
		snprintf(in->leaf_stats_path, sizeof in->leaf_stats_path, "%s/leaf%u-stats.json",
			r->dir, i);
		snprintf(in->mock_stats_path, sizeof in->mock_stats_path, "%s/mock%u-stats.json",
			r->dir, i);
		for (unsigned d = 0; d < in->ndrv; d++)
			snprintf(in->drv[d].json_path, sizeof in->drv[d].json_path, "%s/%s.json",
				r->dir, in->drv[d].proc.name);
	}

	/* Mocks first (all at once), then leaves, then drivers. */
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct run_argv a = { 0 };
		if (!in->own_mock)
			continue;
		snprintf(port_file, sizeof port_file, "%s/mock%u.port", r->dir, i);
		unlink(port_file);
		argv_add(&a, "%s", mock_bin);
		argv_add(&a, "--port");
		argv_add(&a, "0");
		argv_add(&a, "--port-file");
		argv_add(&a, "%s", port_file);
		argv_add(&a, "--stats-file");
		argv_add(&a, "%s", in->mock_stats_path);
		if (in->mock_cpus.n) {
			argv_add(&a, "--threads");
			argv_add(&a, "%u", in->mock_cpus.n / 2 ? in->mock_cpus.n / 2 : 1);
		}
		argv_tls_dir(&a, c);
		argv_split(&a, c->mock_args);
		rc = run_spawn(r, &in->mock, &a, &in->mock_cpus, 0);
		argv_free(&a);
		if (rc != 0)
			return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (!in->own_mock)
			continue;
		snprintf(port_file, sizeof port_file, "%s/mock%u.port", r->dir, i);
		if ((rc = run_wait_ready(r, &in->mock, port_file, in->mock_addr,
		    sizeof in->mock_addr)) != 0)
			return rc;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct run_argv a = { 0 };
		if (!in->own_leaf)
			continue;
		snprintf(port_file, sizeof port_file, "%s/leaf%u.port", r->dir, i);
		unlink(port_file);
		argv_add(&a, "%s", leaf_bin);
		argv_add(&a, "--port");
		argv_add(&a, "0");
		argv_add(&a, "--port-file");
		argv_add(&a, "%s", port_file);
		argv_add(&a, "--mock");
		argv_add(&a, "%s", in->mock_addr);
		argv_add(&a, "--stats-file");
		argv_add(&a, "%s", in->leaf_stats_path);
		argv_add(&a, "--seed");
		argv_add(&a, "%llu", (unsigned long long)c->seed);
		if (c->rpc_fanout_scale >= 0) {
			argv_add(&a, "--rpc-fanout-scale");
			argv_add(&a, "%.17g", c->rpc_fanout_scale);
		}
		if (c->extractors_per_story >= 0) {
			argv_add(&a, "--extractors-per-story");
			argv_add(&a, "%lld", (long long)c->extractors_per_story);
		}
		if (c->active_copies >= 0) {
			argv_add(&a, "--active-copies");
			argv_add(&a, "%lld", (long long)c->active_copies);
		}
		if (c->active_functions >= 0) {
			argv_add(&a, "--active-functions");
			argv_add(&a, "%lld", (long long)c->active_functions);
		}
		if (c->dispatch) {
			argv_add(&a, "--dispatch");
			argv_add(&a, "%s", c->dispatch);
		}
		if (c->zipf_alpha >= 0) {
			argv_add(&a, "--zipf-alpha");
			argv_add(&a, "%.17g", c->zipf_alpha);
		}
		if (c->tls)
			argv_add(&a, "--tls");
		if (in->leaf_cpus.n) {
			/* Pool sizes from the CPUs it may use, not the whole host's. */
			unsigned k = in->leaf_cpus.n, q = k / 4 ? k / 4 : 1;
			argv_add(&a, "--ranker-threads");
			argv_add(&a, "%u", k);
			argv_add(&a, "--io-threads");
			argv_add(&a, "%u", q);
			argv_add(&a, "--fanout-threads");
			argv_add(&a, "%u", q);
		}
		argv_tls_dir(&a, c);
		if (c->profile) {
			argv_add(&a, "--profile");
			argv_add(&a, "%s", c->profile_path);
		}
		argv_split(&a, c->leaf_args);
		rc = run_spawn(r, &in->leaf, &a, &in->leaf_cpus, 0);
		argv_free(&a);
		if (rc != 0)
			return -1;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (!in->own_leaf)
			continue;
		snprintf(port_file, sizeof port_file, "%s/leaf%u.port", r->dir, i);
		if ((rc = run_wait_ready(r, &in->leaf, port_file, in->leaf_addr,
		    sizeof in->leaf_addr)) != 0)
			return rc;
	}
	for (unsigned i = 0; i < r->ninst; i++) {
		if (run_driver_hosts(r, &r->inst[i]) != 0)
			return -1;
		for (unsigned d = 0; d < r->inst[i].ndrv; d++)
			if (run_start_driver(r, &r->inst[i], d, drv_bin) != 0)
				return -1;
	}
	return 0;
}

/* The client context for remote STATS, made once: the mock is always TLS, the leaf with
 * --tls; the certificate directory is --tls-dir, else the driver's default (tls.h). */
static struct ssl_ctx_st *run_stats_tls(struct fl_run *r, char *err, size_t errlen)
{
	char dir[4096];

	if (r->stats_tls != NULL)
		return r->stats_tls;
	if (r->cfg.tls_dir)
		snprintf(dir, sizeof dir, "%s", r->cfg.tls_dir);
	else if (fl_tls_default_dir(dir, sizeof dir, err, errlen) != 0)
		return NULL;
	r->stats_tls = fl_tls_client_ctx(dir, err, errlen);
	return r->stats_tls;
}

json_t *run_remote_snapshot(struct fl_run *r, struct fl_run_instance *in, int mock)
{
	const char *addr = mock ? in->mock_addr : in->leaf_addr;
	char *why = mock ? in->mock_remote_err : in->leaf_remote_err;
	size_t whylen = sizeof in->leaf_remote_err;
	struct ssl_ctx_st *tls = NULL;

	if ((mock ? in->own_mock : in->own_leaf) || addr[0] == '\0')
		return NULL;
	if ((mock || r->cfg.tls) && (tls = run_stats_tls(r, why, whylen)) == NULL)
		return NULL;
	json_t *j = fl_remote_stats(addr, tls, RUN_REMOTE_TIMEOUT_S,
		mock ? &in->mock_clock : &in->leaf_clock, why, whylen);
	if (j != NULL)
		why[0] = '\0';
	return j;
}

int run_check_servers(struct fl_run *r)
{
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		struct fl_proc *ps[2] = { &in->leaf, &in->mock };
		int own[2] = { in->own_leaf, in->own_mock };
		for (int k = 0; k < 2; k++) {
			if (!own[k] || fl_proc_running(ps[k]))
				continue;
			char how[256], tail[1536];
			fl_proc_describe(ps[k], how, sizeof how);
			fl_log_tail(ps[k]->log_path, 8, tail, sizeof tail);
			run_set_status(r, FL_RUN_FAILED, "%s (pid %d) %s during the run; %s ends:\n%s",
				ps[k]->name, (int)ps[k]->pid, how, ps[k]->log_path,
				tail[0] ? tail : "(empty)");
			return 1;
		}
	}
	return 0;
}

void run_driver_failed(struct fl_run *r, struct fl_run_driver *dv, const char *what)
{
	struct fl_proc *p = &dv->proc;
	char how[256], tail[1536];
	for (int waited = 0; waited < 1000 && fl_proc_running(p); waited += 20)
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	fl_proc_describe(p, how, sizeof how);
	fl_log_tail(p->log_path, 8, tail, sizeof tail);
	run_set_status(r, FL_RUN_FAILED, "%s (pid %d) %s (%s); %s ends:\n%s", p->name,
		(int)p->pid, what, how, p->log_path, tail[0] ? tail : "(empty)");
}

void run_stop(struct fl_run *r)
{
	struct fl_proc *ps[(2 + FL_RUN_MAX_DRIVERS) * FL_RUN_MAX_INSTANCES];
	size_t n;
	/* After a failure or a signal a driver may be mid-step: no point waiting for it. */
	int graceful = r->status == FL_RUN_RUNNING || r->status == FL_RUN_COMPLETE;

	n = run_all_procs(r, ps, 1, 0);
	for (size_t k = 0; k < n; k++) {
		if (ps[k]->to_fd >= 0) {
			if (fl_proc_running(ps[k]) && write(ps[k]->to_fd, "quit\n", 5) != 5)
				(void)0;  /* it is gone already; reaped below */
			close(ps[k]->to_fd);
			ps[k]->to_fd = -1;
		}
	}
	for (int waited = 0; graceful && waited < RUN_STOP_GRACE_MS; waited += 20) {
		int left = 0;
		for (size_t k = 0; k < n; k++)
			left += fl_proc_running(ps[k]);
		if (!left)
			break;
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	fl_proc_stop_all(ps, n, SIGTERM, RUN_STOP_GRACE_MS);
	n = run_all_procs(r, ps, 0, 1);
	fl_proc_stop_all(ps, n, SIGTERM, RUN_STOP_GRACE_MS);
	for (unsigned i = 0; i < r->ninst; i++) {
		struct fl_run_instance *in = &r->inst[i];
		if (in->own_leaf && in->leaf.pid > 0)
			in->leaf_stats_end = fl_result_load_json(in->leaf_stats_path);
		else if (!in->own_leaf)
			in->leaf_stats_end = run_remote_snapshot(r, in, 0);
		if (in->own_mock && in->mock.pid > 0)
			in->mock_stats_end = fl_result_load_json(in->mock_stats_path);
		else if (!in->own_mock)
			in->mock_stats_end = run_remote_snapshot(r, in, 1);
		for (unsigned d = 0; d < in->ndrv; d++) {
			if (in->drv[d].jsonl)
				fclose(in->drv[d].jsonl);
			in->drv[d].jsonl = NULL;
		}
	}
}
