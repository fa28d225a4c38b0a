/* profile.c: perf record/script of the leaf, each sample sorted into production's categories. */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process.h"

static const char *const cat_ids[FM_PROF_N] = {
	"feature_extraction", "story_processing", "ranking", "encryption", "compression",
	"rpc_io", "decode", "reply", "kernel_network", "other",
};
static const char *const cat_labels[FM_PROF_N] = {
	"feature extraction", "story processing", "ranking/prediction", "encryption",
	"compression", "RPC IO and framing", "decode", "reply", "kernel network stack", "other",
};

const char *fm_prof_cat_id(enum fm_prof_cat c)
{
	return (unsigned)c < FM_PROF_N ? cat_ids[c] : "other";
}

const char *fm_prof_cat_label(enum fm_prof_cat c)
{
	return (unsigned)c < FM_PROF_N ? cat_labels[c] : "other";
}

void fm_prof_share_ci95(uint64_t k, uint64_t n, double *lo, double *hi)
{
	const double z = 1.959964;

	if (n == 0 || k > n) {
		*lo = *hi = NAN;
		return;
	}
	double p = (double)k / (double)n, d = 1 + z * z / (double)n;
	double c = (p + z * z / (2.0 * (double)n)) / d;
	double h = z / d * sqrt(p * (1 - p) / (double)n + z * z / (4.0 * (double)n * (double)n));

	*lo = 100 * fmax(0, c - h);
	*hi = 100 * fmin(1, c + h);
}

static const char *const pool_names[FM_PPOOL_N] = { "ranker", "io", "fanout", "other" };

const char *fm_prof_pool_name(enum fm_prof_pool p)
{
	return (unsigned)p < FM_PPOOL_N ? pool_names[p] : "other";
}

enum fm_prof_pool fm_prof_pool_of(const char *comm)
{
	static const struct { const char *prefix; enum fm_prof_pool p; } m[] = {
		{ "leaf-rank-", FM_PPOOL_RANKER }, { "leaf-io-", FM_PPOOL_IO },
		{ "leaf-fanout-", FM_PPOOL_FANOUT },
	};
	for (size_t i = 0; comm && i < sizeof m / sizeof m[0]; i++)
		if (strncmp(comm, m[i].prefix, strlen(m[i].prefix)) == 0)
			return m[i].p;
	return FM_PPOOL_OTHER;
}

static int cat_find(const char *id)
{
	for (int c = 0; c < FM_PROF_N; c++)
		if (strcmp(cat_ids[c], id) == 0)
			return c;
	return -1;
}

/* One "field=glob" condition into rule r. 0, or -1 with why. */
static int rule_cond(struct fm_prof_rule *r, const char *tok, const char **why)
{
	static const struct { const char *key; char field; } keys[] = {
		{ "sym=", 's' }, { "dso=", 'd' }, { "comm=", 'c' },
	};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		size_t n = strlen(keys[k].key);
		if (strncmp(tok, keys[k].key, n) != 0)
			continue;
		if (r->ncond == FM_PROF_CONDS) {
			*why = "too many conditions";
			return -1;
		}
		if (tok[n] == '\0' || strlen(tok + n) >= FM_PROF_PAT) {
			*why = "empty or too long pattern";
			return -1;
		}
		r->field[r->ncond] = keys[k].field;
		snprintf(r->pat[r->ncond++], FM_PROF_PAT, "%s", tok + n);
		return 0;
	}
	*why = "a condition is sym=GLOB, dso=GLOB or comm=GLOB";
	return -1;
}

/* One rules line (comment stripped) into r; 0 blank, 1 a rule, -1 with why. */
static int rule_line(char *line, struct fm_prof_rule *r, const char **why)
{
	char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
	if (tok == NULL)
		return 0;
	memset(r, 0, sizeof *r);
	int c = cat_find(tok);
	if (c < 0) {
		*why = "unknown category (feature_extraction, story_processing, ranking, "
			"encryption, compression, rpc_io, decode, reply, kernel_network, other)";
		return -1;
	}
	r->cat = (enum fm_prof_cat)c;
	while ((tok = strtok_r(NULL, " \t\r\n", &save)) != NULL)
		if (rule_cond(r, tok, why) != 0)
			return -1;
	if (r->ncond == 0) {
		*why = "a rule needs at least one condition";
		return -1;
	}
	return 1;
}

int fm_prof_rules_parse(FILE *in, const char *name, struct fm_prof_rules *rs, char *err,
	size_t errlen)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0, rcap = 0;
	memset(rs, 0, sizeof *rs);
	while (getline(&line, &cap, in) > 0) {
		struct fm_prof_rule r;
		const char *why = NULL;
		lineno++;
		line[strcspn(line, "#")] = '\0';
		int k = rule_line(line, &r, &why);
		if (k < 0) {
			snprintf(err, errlen, "%s:%zu: %s", name, lineno, why);
			goto fail;
		}
		if (k == 0)
			continue;
		if (rs->n == rcap) {
			struct fm_prof_rule *g = realloc(rs->r, (rcap = rcap ? 2 * rcap : 64) *
				sizeof *g);
			if (g == NULL) {
				snprintf(err, errlen, "%s: out of memory", name);
				goto fail;
			}
			rs->r = g;
		}
		rs->r[rs->n++] = r;
	}
	free(line);
	return 0;
fail:
	free(line);
	fm_prof_rules_free(rs);
	return -1;
}

int fm_prof_rules_load(const char *path, struct fm_prof_rules *rs, char *err,
	size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = fm_prof_rules_parse(f, path, rs, err, errlen);
	fclose(f);
	return rc;
}

void fm_prof_rules_free(struct fm_prof_rules *rs)
{
	free(rs->r);
	rs->r = NULL;
	rs->n = 0;
}

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

enum fm_prof_cat fm_prof_classify(const struct fm_prof_rules *rs, const char *sym,
	const char *dso, const char *comm)
{
	const char *d = base_of(dso ? dso : "");
	for (size_t i = 0; i < rs->n; i++) {
		const struct fm_prof_rule *r = &rs->r[i];
		int ok = 1;
		for (int k = 0; ok && k < r->ncond; k++) {
			const char *v = r->field[k] == 's' ? sym : r->field[k] == 'd' ? d : comm;
			ok = v != NULL && fnmatch(r->pat[k], v, 0) == 0;
		}
		if (ok)
			return r->cat;
	}
	return FM_PROF_OTHER;
}

/* Count one sample of "sym (dso)" under category c. 0, or -1 out of memory. */
static int prof_sym(struct fm_profile *p, enum fm_prof_cat c, const char *sym,
	const char *dso)
{
	char name[128];
	snprintf(name, sizeof name, "%s (%s)", sym, base_of(dso));
	/* Most samples land on few symbols: the last one hit is checked first. */
	for (size_t i = p->nsyms; i-- > 0;)
		if (p->syms[i].cat == c && strcmp(p->syms[i].name, name) == 0) {
			p->syms[i].samples++;
			return 0;
		}
	if (p->nsyms == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct fm_prof_sym *g = realloc(p->syms, cap * sizeof *g);
		if (g == NULL)
			return -1;
		p->syms = g;
		p->cap = cap;
	}
	struct fm_prof_sym *x = &p->syms[p->nsyms++];
	snprintf(x->name, sizeof x->name, "%s", name);
	x->cat = c;
	x->samples = 1;
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct fm_prof_sym *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

void fm_prof_free(struct fm_profile *p)
{
	free(p->syms);
	memset(p, 0, sizeof *p);
}

/* Split a perf script line "COMM TID IP SYM (DSO)" in place. 0, or -1 when it is not one. */
static int script_fields(char *line, char **comm, char **sym, char **dso)
{
	char *save = NULL;
	line[strcspn(line, "\r\n")] = '\0';
	char *open = strrchr(line, '(');
	size_t n = strlen(line);
	if (open == NULL || n == 0 || line[n - 1] != ')')
		return -1;
	line[n - 1] = '\0';
	*dso = open + 1;
	*open = '\0';
	*comm = strtok_r(line, " \t", &save);
	char *tid = strtok_r(NULL, " \t", &save), *ip = strtok_r(NULL, " \t", &save);
	*sym = strtok_r(NULL, "", &save);
	if (*comm == NULL || tid == NULL || ip == NULL)
		return -1;
	if (*sym == NULL)
		*sym = "[unknown]";
	*sym += strspn(*sym, " \t");
	for (char *e = *sym + strlen(*sym); e > *sym && (e[-1] == ' ' || e[-1] == '\t');)
		*--e = '\0';
	if (**sym == '\0')
		*sym = "[unknown]";
	return 0;
}

int fm_prof_parse_script(FILE *in, const struct fm_prof_rules *rs, struct fm_profile *p,
	char *err, size_t errlen)
{
	char *line = NULL, *comm, *sym, *dso;
	size_t cap = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &cap, in) > 0) {
		if (script_fields(line, &comm, &sym, &dso) != 0)
			continue;
		enum fm_prof_cat c = fm_prof_classify(rs, sym, dso, comm);
		p->samples[c]++;
		p->pool[fm_prof_pool_of(comm)][c]++;
		p->total++;
		p->kernel += strncmp(dso, "[kernel", 7) == 0;
		if (prof_sym(p, c, sym, dso) != 0) {
			snprintf(err, errlen, "out of memory counting perf samples");
			rc = -1;
		}
	}
	free(line);
	if (p->nsyms)
		qsort(p->syms, p->nsyms, sizeof *p->syms, sym_cmp);
	return rc;
}

pid_t fm_prof_record_start(pid_t pid, unsigned hz, const char *out, const char *log,
	char *err, size_t errlen)
{
	char p[32], f[32];
	snprintf(p, sizeof p, "%d", (int)pid);
	snprintf(f, sizeof f, "%u", hz);
	const char *const argv[] = { "perf", "record", "-q", "-e", "cpu-clock", "-F", f, "-p",
		p, "-o", out, NULL };
	pid_t k = fl_spawn(argv, &(struct fl_spawn_opts){ .stdout_path = log,
		.stderr_path = log }, err, errlen);
	if (k < 0)
		return -1;
	/* perf attaches within a few ms; one that cannot (no perf, not permitted) exits. */
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	int st;
	if (waitpid(k, &st, WNOHANG) == k) {
		FILE *l = fopen(log, "r");
		char buf[256] = "";
		if (l) {
			if (fgets(buf, sizeof buf, l) == NULL)
				buf[0] = '\0';
			fclose(l);
		}
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(err, errlen, "perf record exited at once: %s", buf[0] ? buf :
			"no message");
		return -1;
	}
	return k;
}

int fm_prof_record_stop(pid_t perf, const char *log, char *err, size_t errlen)
{
	int st;
	kill(perf, SIGINT);
	while (waitpid(perf, &st, 0) < 0 && errno == EINTR)
		;
	/* perf record exits 0 after SIGINT, or with the signal's status (130 / SIGINT). */
	if ((WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 130)) ||
	    (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT))
		return 0;
	snprintf(err, errlen, "perf record failed (status 0x%x; log %s)", st, log);
	return -1;
}

int fm_prof_report(const char *data, const struct fm_prof_rules *rs, struct fm_profile *p,
	char *err, size_t errlen)
{
	int fd = -1, st;
	const char *const argv[] = { "perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso",
		NULL };
	pid_t k = fl_spawn(argv, &(struct fl_spawn_opts){ .stdout_pipe = &fd,
		.stderr_path = "/dev/null" }, err, errlen);
	if (k < 0)
		return -1;
	FILE *in = fdopen(fd, "r");
	int rc = in ? fm_prof_parse_script(in, rs, p, err, errlen) : -1;
	if (in)
		fclose(in);
	else
		close(fd);
	while (waitpid(k, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		snprintf(err, errlen, "perf script -i %s failed (status 0x%x)", data, st);
		rc = -1;
	}
	return rc;
}
