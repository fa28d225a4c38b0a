/* validate.c: CPU cache models, native and simulated simreq runs; validate, mix, calibrate. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cgparse.h"
#include "disasm.h"
#include "measure.h"
#include "mix.h"
#include "osfile.h"
#include "paths.h"
#include "pmu.h"
#include "process.h"
#include "targets.h"

/* ---- CPU models ---- */

static const struct fm_cpu fm_cpus[] = {
	{ "zen4", "AMD Zen 4 (Genoa; Bergamo's Zen 4c cores have the same L1/L2)",
	  { 32768, 8, 64 }, { 32768, 8, 64 }, { 1048576, 8, 64 },
	  "AMD, Software Optimization Guide for AMD Family 19h Processors (pub. 57647), "
	  "cache sections: 32 KiB 8-way L1i and L1d, 1 MiB 8-way private L2", NULL },
	{ "zen5", "AMD Zen 5 (Turin)",
	  { 32768, 8, 64 }, { 49152, 12, 64 }, { 1048576, 16, 64 },
	  "AMD, Software Optimization Guide for AMD Family 1Ah Processors (pub. 58455): "
	  "32 KiB 8-way L1i, 48 KiB 12-way L1d, 1 MiB 16-way L2", NULL },
	{ "golden-cove", "Intel Golden Cove (Sapphire Rapids server core)",
	  { 32768, 8, 64 }, { 49152, 12, 64 }, { 2097152, 16, 64 },
	  "Intel 64 and IA-32 Architectures Optimization Reference Manual, Golden Cove "
	  "microarchitecture: 32 KiB 8-way L1i, 48 KiB 12-way L1d; L2 2 MiB 16-way on "
	  "Sapphire Rapids (1.25 MiB 10-way on Alder Lake P-cores)",
	  "the server L2 (2 MiB) is modelled; the client 1.25 MiB 10-way L2 is also "
	  "representable: --ll 1310720,10,64" },
	{ "neoverse-v2", "Arm Neoverse V2 (NVIDIA Grace, AWS Graviton4)",
	  { 65536, 4, 64 }, { 65536, 4, 64 }, { 1048576, 8, 64 },
	  "Arm Neoverse V2 Core Technical Reference Manual: 64 KiB 4-way L1i and L1d, L2 1 or "
	  "2 MiB 8-way (1 MiB on Grace)",
	  "x86-64 code measured against an Arm core's geometry: indicative only (AArch64 "
	  "code density differs)" },
};
#define NCPUS (sizeof(fm_cpus) / sizeof(fm_cpus[0]))

const struct fm_cpu *fm_cpu_find(const char *name)
{
	for (size_t i = 0; i < NCPUS; i++)
		if (strcmp(fm_cpus[i].name, name) == 0)
			return &fm_cpus[i];
	return NULL;
}

const char *fm_cpu_names(void)
{
	return "zen4, zen5, golden-cove, neoverse-v2";
}

static int is_pow2(unsigned long x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static int cache_ok(const struct fm_cache *c)
{
	unsigned long way_bytes = (unsigned long)c->assoc * c->line;

	return c->line >= 16 && is_pow2(c->line) && c->assoc >= 1 && c->size >= way_bytes &&
		c->size % way_bytes == 0 && is_pow2(c->size / way_bytes);
}

int fm_cache_fit(const struct fm_cache *want, struct fm_cache *got, char *note, size_t len)
{
	char a[64], b[64];

	note[0] = '\0';
	*got = *want;
	if (cache_ok(want))
		return 0;
	if (want->line < 16 || !is_pow2(want->line) || want->assoc == 0) {
		memset(got, 0, sizeof(*got));
		snprintf(note, len, "line %u B / %u ways cannot be simulated", want->line,
			want->assoc);
		return -1;
	}
	/* Capacity drives misses most: keep the size and look for the nearest assoc. */
	for (unsigned d = 1; d <= want->assoc; d++) {
		for (int sgn = -1; sgn <= 1; sgn += 2) {
			long as = (long)want->assoc + sgn * (long)d;
			struct fm_cache c = { want->size, (unsigned)as, want->line };

			if (as >= 1 && cache_ok(&c)) {
				*got = c;
				goto done;
			}
		}
	}
	/* Else keep assoc and round the set count to the nearest power of two. */
	{
		double sets = (double)want->size / ((double)want->assoc * want->line);
		unsigned long s = 1;

		while ((double)(s * 2) <= sets)
			s *= 2;
		if (sets - (double)s > (double)(s * 2) - sets)
			s *= 2;
		got->size = (unsigned)(s * want->assoc * want->line);
	}
done:
	snprintf(note, len, "%s is not representable in valgrind (sets must be a power of two): "
		"simulated as %s", fm_cache_str(want, a, sizeof(a)), fm_cache_str(got, b, sizeof(b)));
	return 0;
}

char *fm_cache_str(const struct fm_cache *c, char *buf, size_t len)
{
	if (c->size % 1048576 == 0)
		snprintf(buf, len, "%u MiB %u-way %u B", c->size / 1048576, c->assoc, c->line);
	else if (c->size % 1024 == 0)
		snprintf(buf, len, "%u KiB %u-way %u B", c->size / 1024, c->assoc, c->line);
	else
		snprintf(buf, len, "%u B %u-way %u B", c->size, c->assoc, c->line);
	return buf;
}

int fm_cache_parse(const char *s, struct fm_cache *c)
{
	unsigned a, b, l;
	int n = 0;

	if (sscanf(s, "%u,%u,%u%n", &a, &b, &l, &n) != 3 || s[n] != '\0' || a == 0 || b == 0 ||
	    l == 0)
		return -1;
	c->size = a;
	c->assoc = b;
	c->line = l;
	return 0;
}

/* ---- option parsing shared by the subcommands ---- */

int fm_args_next(int argc, char **argv, int *i, const struct fm_opt *opts, int *id,
	const char **val, const char **knob)
{
	char name[128];
	const char *a, *eq;

	if (*i >= argc)
		return 0;
	a = argv[(*i)++];
	if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
		fprintf(stderr, FM_PROG ": unexpected argument \"%s\" (see --help)\n", a);
		return -1;
	}
	eq = strchr(a, '=');
	snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - a - 2 : (long)strlen(a + 2)), a + 2);
	for (const struct fm_opt *o = opts; o->name; o++) {
		if (strcmp(o->name, name) != 0)
			continue;
		*id = o->id;
		*val = NULL;
		if (o->has_arg) {
			if (eq)
				*val = eq + 1;
			else if (*i < argc)
				*val = argv[(*i)++];
			else {
				fprintf(stderr, FM_PROG ": --%s needs a value (see --help)\n", name);
				return -1;
			}
		} else if (eq) {
			fprintf(stderr, FM_PROG ": --%s takes no value\n", name);
			return -1;
		}
		return 1;
	}
	for (const struct fm_knob_def *k = fm_knob_defs; k->name; k++) {
		if (strcmp(k->name, name) != 0)
			continue;
		*id = FM_OPT_KNOB;
		*val = NULL;
		if (k->has_arg) {
			if (eq)
				*val = eq + 1;
			else if (*i < argc)
				*val = argv[(*i)++];
			else {
				fprintf(stderr, FM_PROG ": --%s needs a value (see --help)\n", name);
				return -1;
			}
		}
		*knob = k->name;
		return 1;
	}
	fprintf(stderr, FM_PROG ": unknown option \"%s\" (see --help)\n", a);
	return -1;
}

int fm_parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, FM_PROG ": --%s: expected an integer in %llu..%llu, got \"%s\"\n",
			flag, (unsigned long long)lo, (unsigned long long)hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int fm_parse_f64(const char *flag, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
		fprintf(stderr, FM_PROG ": --%s: expected a number in %g..%g, got \"%s\"\n", flag,
			lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int fm_geometry(struct fm_run *r, const char *cpu, const char *i1, const char *d1,
	const char *ll, json_t **notes_out)
{
	const struct fm_cpu *c = fm_cpu_find(cpu);
	struct fm_cache want[3];
	struct fm_cache *got[3] = { &r->i1, &r->d1, &r->ll };
	const char *over[3] = { i1, d1, ll }, *lvl[3] = { "I1", "D1", "LL" };
	json_t *notes = json_array();
	char note[256], a[64];

	if (c == NULL) {
		fprintf(stderr, FM_PROG ": --cpu: unknown model \"%s\" (%s)\n", cpu, fm_cpu_names());
		json_decref(notes);
		return -1;
	}
	want[0] = c->i1;
	want[1] = c->d1;
	want[2] = c->ll;
	for (int k = 0; k < 3; k++) {
		if (over[k] && fm_cache_parse(over[k], &want[k]) != 0) {
			fprintf(stderr, FM_PROG ": --%c%c: expected SIZE,ASSOC,LINE in bytes, ways, "
				"bytes, got \"%s\"\n", lvl[k][0] | 0x20, lvl[k][1], over[k]);
			json_decref(notes);
			return -1;
		}
		if (fm_cache_fit(&want[k], got[k], note, sizeof(note)) != 0) {
			fprintf(stderr, FM_PROG ": %s: %s\n", lvl[k], note);
			json_decref(notes);
			return -1;
		}
		if (note[0])
			json_array_append_new(notes, json_sprintf("%s: %s", lvl[k], note));
		if (over[k])
			json_array_append_new(notes, json_sprintf("%s overridden: %s", lvl[k],
				fm_cache_str(got[k], a, sizeof(a))));
	}
	if (c->note)
		json_array_append_new(notes, json_string(c->note));
	*notes_out = notes;
	return 0;
}

/* ---- runs ---- */

int fm_run_init(struct fm_run *r, char *err, size_t errlen)
{
	char dir[4096];

	memset(r, 0, sizeof(*r));
	r->warmup = 2;
	r->requests = 10;
	r->stage = "all";
	r->mix = 1;
	r->tag = "run";
	r->i1 = fm_cpus[0].i1;
	r->d1 = fm_cpus[0].d1;
	r->ll = fm_cpus[0].ll;
	if (fl_exe_dir(dir, sizeof(dir)) != 0) {
		snprintf(err, errlen, "cannot find this program's directory (/proc/self/exe)");
		return -1;
	}
	snprintf(r->simreq, sizeof(r->simreq), "%s/frontload-simreq", dir);
	if (access(r->simreq, X_OK) != 0) {
		snprintf(err, errlen, "%s: %s (frontload-simreq must sit beside " FM_PROG ")",
			r->simreq, strerror(errno));
		return -1;
	}
	return 0;
}

int fm_run_knob(struct fm_run *r, const char *name, const char *value)
{
	if (r->nknobs + 2 > FM_MAX_KNOBS)
		return -1;
	/* Knob names come from fm_knob_defs (static strings): "--" is prefixed at spawn. */
	r->knobs[r->nknobs++] = name;
	r->knobs[r->nknobs++] = value;
	return 0;
}

const char *fm_run_knob_get(const struct fm_run *r, const char *name)
{
	const char *v = NULL;

	for (int i = 0; i + 1 < r->nknobs; i += 2)
		if (strcmp(r->knobs[i], name) == 0)
			v = r->knobs[i + 1] ? r->knobs[i + 1] : "";
	return v;
}

/* argv for simreq: knobs (later ones win, as getopt keeps the last), run settings. Strings
 * are allocated into pool (freed by the caller). */
static int simreq_argv(const struct fm_run *r, const char *json, const char **argv, int max,
	char **pool, int *npool)
{
	int n = 0;
	char buf[64];

#define ADD(s) do { if (n + 1 >= max) return -1; argv[n++] = (s); } while (0)
#define ADDDUP(s) do { char *d_ = strdup(s); if (!d_) return -1; pool[(*npool)++] = d_; \
	ADD(d_); } while (0)
	ADD(r->simreq);
	for (int i = 0; i + 1 < r->nknobs; i += 2) {
		snprintf(buf, sizeof(buf), "--%s", r->knobs[i]);
		ADDDUP(buf);
		if (r->knobs[i + 1])
			ADD(r->knobs[i + 1]);
	}
	ADD("--warmup");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->warmup);
	ADDDUP(buf);
	ADD("--requests");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->requests);
	ADDDUP(buf);
	ADD("--stage");
	ADD(r->stage);
	ADD("--json");
	ADD(json);
	argv[n] = NULL;
	return n;
#undef ADD
#undef ADDDUP
}

/* Start argv with stdout to /dev/null and stderr to errpath (NULL: inherited). */
static pid_t spawn(const char *const *argv, const char *errpath, char *err, size_t errlen)
{
	/* The simulation must not be slowed by a BLAS thread pool. */
	static const char *const env[] = { "OPENBLAS_NUM_THREADS=1", NULL };
	struct fl_spawn_opts o = { .stdout_path = "/dev/null", .stderr_path = errpath,
		.env = env };

	return fl_spawn(argv, &o, err, errlen);
}

/* Last lines of a log file into err (after prefix). */
static void log_tail(const char *path, const char *prefix, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char buf[4096];
	size_t n = 0;

	if (fp != NULL) {
		if (fseek(fp, -1024, SEEK_END) != 0)
			rewind(fp);
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	const char *tail = buf;
	for (int lines = 0; n > 0 && lines < 3; n--)
		if (buf[n - 1] == '\n' && ++lines == 3)
			tail = buf + n;
	snprintf(err, errlen, "%s%s%s", prefix, *tail ? ": " : "", tail);
	for (char *p = err; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static void status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status 0x%x", status);
}

int fm_native_run(const struct fm_run *r, struct fm_native *out, char *err, size_t errlen)
{
	const char *argv[FM_MAX_KNOBS + 32];
	char *pool[FM_MAX_KNOBS + 8];
	char js[4200], log[4200], st[64];
	int npool = 0, n, status;
	json_error_t je;
	double t0 = fm_now();
	pid_t pid;

	memset(out, 0, sizeof(*out));
	snprintf(js, sizeof(js), "%s/%s-native.json", r->tmpdir, r->tag);
	snprintf(log, sizeof(log), "%s/%s-native.log", r->tmpdir, r->tag);
	n = simreq_argv(r, js, argv, FM_MAX_KNOBS + 30, pool, &npool);
	if (n < 0) {
		snprintf(err, errlen, "too many knobs");
		goto fail;
	}
	if (r->pmu)
		argv[n++] = "--pmu";
	argv[n] = NULL;
	pid = spawn(argv, log, err, errlen);
	if (pid < 0)
		goto fail;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out->wall_s = fm_now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char pre[128];

		status_str(status, st, sizeof(st));
		snprintf(pre, sizeof(pre), "frontload-simreq (native) failed, %s", st);
		log_tail(log, pre, err, errlen);
		goto fail;
	}
	out->summary = json_load_file(js, 0, &je);
	if (out->summary == NULL) {
		snprintf(err, errlen, "%s: %s", js, je.text);
		goto fail;
	}
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	return 0;
fail:
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	return -1;
}

void fm_native_free(struct fm_native *n)
{
	json_decref(n->summary);
	n->summary = NULL;
}

int fm_sim_start(const struct fm_run *r, struct fm_sim_job *job, char *err, size_t errlen)
{
	const char *argv[FM_MAX_KNOBS + 64];
	char *pool[FM_MAX_KNOBS + 32];
	char i1[64], d1[64], ll[64], cgo[4300], logo[4300];
	int n = 0, npool = 0, m;
	const char *progress = r->quiet ? NULL : "--progress";

	memset(job, 0, sizeof(*job));
	snprintf(job->cg, sizeof(job->cg), "%s/%s.callgrind", r->tmpdir, r->tag);
	snprintf(job->window, sizeof(job->window), "%s.2", job->cg);
	snprintf(job->js, sizeof(job->js), "%s/%s-sim.json", r->tmpdir, r->tag);
	snprintf(job->log, sizeof(job->log), "%s/%s-valgrind.log", r->tmpdir, r->tag);
	snprintf(i1, sizeof(i1), "--I1=%u,%u,%u", r->i1.size, r->i1.assoc, r->i1.line);
	snprintf(d1, sizeof(d1), "--D1=%u,%u,%u", r->d1.size, r->d1.assoc, r->d1.line);
	snprintf(ll, sizeof(ll), "--LL=%u,%u,%u", r->ll.size, r->ll.assoc, r->ll.line);
	snprintf(cgo, sizeof(cgo), "--callgrind-out-file=%s", job->cg);
	snprintf(logo, sizeof(logo), "--log-file=%s", job->log);
	argv[n++] = "valgrind";
	argv[n++] = "--tool=callgrind";
	/* Everything is collected so the window's opening dump resets every jump counter
	 * (see frontload-simreq --help); --stage extract collects only inside fl_plan_run. */
	argv[n++] = strcmp(r->stage, "extract") == 0 ? "--collect-atstart=no" :
		"--collect-atstart=yes";
	argv[n++] = "--cache-sim=yes";
	argv[n++] = r->mix ? "--branch-sim=yes" : "--branch-sim=no";
	argv[n++] = i1;
	argv[n++] = d1;
	argv[n++] = ll;
	/* Per-instruction counts and jumps always: the rep string correction of every rate
	 * needs them (mix.h), with or without the full mix. */
	argv[n++] = "--dump-instr=yes";
	argv[n++] = "--dump-line=no";
	argv[n++] = "--collect-jumps=yes";
	if (strcmp(r->stage, "extract") == 0)
		argv[n++] = "--toggle-collect=fl_plan_run";
	argv[n++] = cgo;
	argv[n++] = logo;
	m = simreq_argv(r, job->js, argv + n, FM_MAX_KNOBS + 30, pool, &npool);
	if (m < 0) {
		snprintf(err, errlen, "too many knobs");
		goto out;
	}
	n += m;
	if (progress)
		argv[n++] = progress;
	argv[n++] = "--quiet";
	argv[n] = NULL;
	job->cmd[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t l = strlen(job->cmd);

		snprintf(job->cmd + l, sizeof(job->cmd) - l, "%s%s", i ? " " : "", argv[i]);
	}
	job->t0 = fm_now();
	/* With progress the client's stderr (simreq's lines) reaches the terminal; valgrind's
	 * own messages always go to the log. */
	job->pid = spawn(argv, r->quiet ? job->log : NULL, err, errlen);
out:
	for (int i = 0; i < npool; i++)
		free(pool[i]);
	return job->pid > 0 ? 0 : -1;
}

int fm_sim_running(struct fm_sim_job *job, int *status)
{
	pid_t p = waitpid(job->pid, status, WNOHANG);

	return p == 0 || (p < 0 && errno == EINTR);
}

/* Sorted unique callgrind addresses of object obj. */
static uint64_t *obj_addrs(const struct fl_cg *cg, uint32_t obj, size_t *n)
{
	size_t cnt = 0;
	uint64_t *a;

	for (size_t i = 0; i < cg->ninsns; i++)
		if (cg->insns[i].obj == obj)
			cnt++;
	a = malloc((cnt ? cnt : 1) * sizeof(*a));
	if (a == NULL)
		return NULL;
	cnt = 0;
	/* fl_cg_sort ordered insns by object, then address: already sorted and unique. */
	for (size_t i = 0; i < cg->ninsns; i++)
		if (cg->insns[i].obj == obj)
			a[cnt++] = cg->insns[i].addr;
	*n = cnt;
	return a;
}

static int addr_in(const uint64_t *a, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo] == x;
}

/* objdump object, keeping only the instruction lines at the executed addresses (a skipped
 * run becomes objdump's "\t..." line), and parse that into d. A full extractor library is
 * hundreds of MB of text: only what ran is kept in memory. */
static int dis_load_filtered(struct fl_dis *d, const char *object, const uint64_t *addrs,
	size_t naddrs, char *err, size_t errlen)
{
	int rc = -1;
	FILE *in = NULL, *tmp = tmpfile();
	char *line = NULL;
	size_t cap = 0;
	pid_t pid;

	if (tmp == NULL) {
		snprintf(err, errlen, "objdump %s: %s", object, strerror(errno));
		return -1;
	}
	pid = fl_objdump_open(object, &in, err, errlen);
	if (pid < 0) {
		fclose(tmp);
		return -1;
	}
	int skipping = 0;
	for (ssize_t len; (len = getline(&line, &cap, in)) > 0;) {
		const char *p = line + strspn(line, " ");
		char *end;
		unsigned long long a = strtoull(p, &end, 16);

		if (p != line && end != p && *end == ':' && end[1] == '\t') {
			if (!addr_in(addrs, naddrs, a)) {
				if (!skipping)
					fputs("\t...\n", tmp);
				skipping = 1;
				continue;
			}
		}
		skipping = 0;
		fwrite(line, 1, (size_t)len, tmp);
	}
	if (fl_objdump_close(pid, in, object, err, errlen) != 0)
		goto out;
	rewind(tmp);
	rc = fl_dis_parse_stream(d, tmp, object, err, errlen);
out:
	free(line);
	fclose(tmp);
	return rc;
}

/* Every instruction's class of one object, for runs that share objects (study). */
struct fm_dis_obj {
	char *path;
	uint64_t *addr;   /* sorted file VAs */
	uint16_t *cls;    /* flow | flags << 3 */
	size_t n, cap;
};

struct fm_dis_cache {
	struct fm_dis_obj *objs;
	size_t nobjs;
};

struct fm_dis_cache *fm_dis_cache_new(void)
{
	return calloc(1, sizeof(struct fm_dis_cache));
}

void fm_dis_cache_free(struct fm_dis_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nobjs; i++) {
		free(c->objs[i].path);
		free(c->objs[i].addr);
		free(c->objs[i].cls);
	}
	free(c->objs);
	free(c);
}

/* Parse one chunk of objdump text (whole lines) and append its classes to o. */
static int cache_chunk(struct fm_dis_obj *o, char *buf, size_t len, char *err, size_t errlen)
{
	struct fl_dis d;
	FILE *in = fmemopen(buf, len, "r");
	int rc;

	if (in == NULL) {
		snprintf(err, errlen, "fmemopen: %s", strerror(errno));
		return -1;
	}
	fl_dis_init(&d);
	rc = fl_dis_parse_stream(&d, in, o->path, err, errlen);
	fclose(in);
	if (rc == 0 && o->n + d.n > o->cap) {
		size_t cap = (o->n + d.n) * 2;
		uint64_t *a = realloc(o->addr, cap * sizeof(*a));
		uint16_t *c = a ? realloc(o->cls, cap * sizeof(*c)) : NULL;

		if (a)
			o->addr = a;
		if (c)
			o->cls = c;
		if (!a || !c) {
			snprintf(err, errlen, "out of memory caching %s", o->path);
			rc = -1;
		} else {
			o->cap = cap;
		}
	}
	for (size_t i = 0; rc == 0 && i < d.n; i++) {
		if (o->n && d.insns[i].addr <= o->addr[o->n - 1]) {
			snprintf(err, errlen, "%s: objdump addresses not increasing at 0x%llx",
				o->path, (unsigned long long)d.insns[i].addr);
			rc = -1;
			break;
		}
		o->addr[o->n] = d.insns[i].addr;
		o->cls[o->n++] = (uint16_t)(d.insns[i].cls.flow | d.insns[i].cls.flags << 3);
	}
	fl_dis_free(&d);
	return rc;
}

/* objdump object once, classifying in chunks of whole lines (bounded memory). */
static int cache_load(struct fm_dis_obj *o, char *err, size_t errlen)
{
	size_t cap = 64u << 20, len = 0;
	char *buf = malloc(cap), *line = NULL;
	size_t lcap = 0;
	int rc = 0;
	FILE *in;
	pid_t pid;

	if (buf == NULL) {
		snprintf(err, errlen, "objdump %s: out of memory", o->path);
		return -1;
	}
	pid = fl_objdump_open(o->path, &in, err, errlen);
	if (pid < 0) {
		free(buf);
		return -1;
	}
	for (ssize_t n; in && rc == 0 && (n = getline(&line, &lcap, in)) > 0;) {
		if (len + (size_t)n > cap) {
			rc = cache_chunk(o, buf, len, err, errlen);
			len = 0;
		}
		if ((size_t)n <= cap) {
			memcpy(buf + len, line, (size_t)n);
			len += (size_t)n;
		}
	}
	if (rc == 0 && len)
		rc = cache_chunk(o, buf, len, err, errlen);
	if (fl_objdump_close(pid, in, o->path, rc == 0 ? err : NULL, errlen) != 0)
		rc = -1;
	free(line);
	free(buf);
	return rc;
}

/* A table of the executed addresses of an object from the cache (loaded on first use). */
static int cache_dis(struct fm_dis_cache *c, const char *path, const uint64_t *addrs,
	size_t naddrs, struct fl_dis *d, char *err, size_t errlen)
{
	struct fm_dis_obj *o = NULL;

	for (size_t i = 0; i < c->nobjs; i++)
		if (strcmp(c->objs[i].path, path) == 0)
			o = &c->objs[i];
	if (o == NULL) {
		struct fm_dis_obj *n = realloc(c->objs, (c->nobjs + 1) * sizeof(*n));

		if (n == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->objs = n;
		o = &c->objs[c->nobjs];
		memset(o, 0, sizeof(*o));
		if ((o->path = strdup(path)) == NULL || cache_load(o, err, errlen) != 0) {
			free(o->path);
			free(o->addr);
			free(o->cls);
			return -1;
		}
		c->nobjs++;
	}
	fl_dis_init(d);
	d->insns = malloc((naddrs ? naddrs : 1) * sizeof(*d->insns));
	d->pool = calloc(1, 2);
	d->path = strdup(path);
	if (d->insns == NULL || d->pool == NULL || d->path == NULL) {
		fl_dis_free(d);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->pool_len = d->pool_cap = 2;
	for (size_t i = 0, lo = 0; i < naddrs; i++) {
		size_t hi = o->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (o->addr[mid] < addrs[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < o->n && o->addr[lo] == addrs[i]) {
			struct fl_dis_insn *x = &d->insns[d->n++];

			x->addr = addrs[i];
			x->len = 0;
			x->text = 0;
			x->cls.flow = (enum fl_dis_flow)(o->cls[lo] & 7);
			x->cls.flags = o->cls[lo] >> 3;
		}
	}
	d->cap = naddrs;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int fm_dis_executed(const struct fl_cg *cg, uint32_t obj, struct fm_dis_cache *cache,
	struct fl_dis *d, char *err, size_t errlen)
{
	size_t n;
	uint64_t *a = obj_addrs(cg, obj, &n);

	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fl_dis_init(d);
	int r = cache ? cache_dis(cache, cg->objs[obj], a, n, d, err, errlen) :
		dis_load_filtered(d, cg->objs[obj], a, n, err, errlen);
	free(a);
	if (r != 0)
		fl_dis_free(d);
	return r;
}

/* Disassemble the objects holding >= 0.1% of Ir and join them with the counts. */
static int sim_mix(struct fl_cg *cg, struct fm_dis_cache *cache, struct fm_sim *out,
	char *err, size_t errlen)
{
	uint64_t *per = calloc(cg->nobjs + 1, sizeof(*per));
	struct fl_dis *dis = calloc(cg->nobjs + 1, sizeof(*dis));
	struct fl_mix_obj *objs = calloc(cg->nobjs + 1, sizeof(*objs));
	size_t nobjs = 0;
	int rc = -1;

	if (per == NULL || dis == NULL || objs == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (fl_cg_sort(cg) != 0) {
		snprintf(err, errlen, "out of memory sorting callgrind data");
		goto out;
	}
	for (size_t i = 0; i < cg->ninsns; i++)
		if (cg->insns[i].obj != FL_CG_NO_OBJ)
			per[cg->insns[i].obj] += cg->insns[i].ir;
	uint64_t total = cg->ir_event >= 0 ? cg->totals[cg->ir_event] : 0;
	for (uint32_t o = 0; o < cg->nobjs; o++) {
		size_t n;
		uint64_t *a;

		if (per[o] == 0 || (double)per[o] < 0.001 * (double)total ||
		    access(cg->objs[o], R_OK) != 0)
			continue;
		a = obj_addrs(cg, o, &n);
		if (a == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		fl_dis_init(&dis[nobjs]);
		int r = cache ? cache_dis(cache, cg->objs[o], a, n, &dis[nobjs], err, errlen) :
			dis_load_filtered(&dis[nobjs], cg->objs[o], a, n, err, errlen);
		free(a);
		if (r != 0) {
			fl_dis_free(&dis[nobjs]);
			goto out;
		}
		objs[nobjs].dis = &dis[nobjs];
		objs[nobjs].ob_name = cg->objs[o];
		nobjs++;
		size_t l = strlen(out->objects);
		snprintf(out->objects + l, sizeof(out->objects) - l, "%s%s", l ? ", " : "",
			base_name(cg->objs[o]));
	}
	if (fl_mix_compute(&out->mix, cg, objs, nobjs, err, errlen) != 0)
		goto out;
	/* both sides count rep string executions once */
	out->classified_share = out->mix.ir_hw ?
		(double)out->mix.insns / (double)out->mix.ir_hw : NAN;
	rc = 0;
out:
	for (size_t i = 0; i < nobjs; i++)
		fl_dis_free(&dis[i]);
	free(dis);
	free(objs);
	free(per);
	return rc;
}

static uint64_t ev_total(const struct fl_cg *cg, const char *name)
{
	int e = fl_cg_event(cg, name);

	return e >= 0 ? cg->totals[e] : 0;
}

int fm_sim_finish(const struct fm_run *r, struct fm_sim_job *job, int status,
	struct fm_sim *out, char *err, size_t errlen)
{
	struct fl_cg cg;
	json_error_t je;
	char st[64], pre[4400];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->wall_s = fm_now() - job->t0;
	snprintf(out->cmd, sizeof(out->cmd), "%s", job->cmd);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		status_str(status, st, sizeof(st));
		snprintf(pre, sizeof(pre), "valgrind callgrind run failed, %s (log %s)", st,
			job->log);
		log_tail(job->log, pre, err, errlen);
		return -1;
	}
	out->summary = json_load_file(job->js, 0, &je);
	if (out->summary == NULL) {
		snprintf(err, errlen, "%s: %s", job->js, je.text);
		return -1;
	}
	fl_cg_init(&cg);
	/* The window's dump; the others (startup and warmup, exit) are dropped now. */
	if (fl_cg_parse_file(&cg, job->window, err, errlen) != 0)
		goto out;
	for (int k = 0; k < 2; k++) {
		char other[4300];

		snprintf(other, sizeof(other), k ? "%s" : "%s.1", job->cg);
		unlink(other);
	}
	out->ir = ev_total(&cg, "Ir");
	out->i1mr = ev_total(&cg, "I1mr");
	out->ilmr = ev_total(&cg, "ILmr");
	out->bc = ev_total(&cg, "Bc");
	out->bcm = ev_total(&cg, "Bcm");
	out->bi = ev_total(&cg, "Bi");
	out->bim = ev_total(&cg, "Bim");
	if (out->ir == 0) {
		snprintf(err, errlen, "%s: no instructions were collected (is the window empty?)",
			job->window);
		goto out;
	}
	/* Classified always (without --branch-sim when !r->mix): the rates' denominator needs
	 * the rep string correction. */
	if (sim_mix(&cg, r->dcache, out, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	fl_cg_free(&cg);
	return rc;
}

int fm_sim_run(const struct fm_run *r, double eta_s, struct fm_sim *out, char *err,
	size_t errlen)
{
	struct fm_sim_job job;
	int status;
	double next = 30;
	char a[32], b[32];

	if (fm_sim_start(r, &job, err, errlen) != 0)
		return -1;
	while (fm_sim_running(&job, &status)) {
		struct timespec ts = { 0, 200000000 };
		double el = fm_now() - job.t0;

		nanosleep(&ts, NULL);
		if (!r->quiet && el >= next) {
			fprintf(stderr, FM_PROG ": simulating: %s elapsed, ~%s estimated\n",
				fm_dur_str(el, a, sizeof(a)), fm_dur_str(eta_s, b, sizeof(b)));
			next += 30;
		}
	}
	if (!r->quiet)
		fprintf(stderr, FM_PROG ": simulation done in %s; parsing and disassembling\n",
			fm_dur_str(fm_now() - job.t0, a, sizeof(a)));
	return fm_sim_finish(r, &job, status, out, err, errlen);
}

void fm_sim_free(struct fm_sim *s)
{
	json_decref(s->summary);
	s->summary = NULL;
}

double fm_sim_eta(double native_wall_s, double plan_functions, double calls_per_request,
	uint64_t warmup, uint64_t requests)
{
	double touched = (double)(warmup + requests) * calls_per_request;

	if (touched > plan_functions)
		touched = plan_functions;
	return (touched + 3000.0) * FM_TRANSLATE_MS / 1000.0 + native_wall_s * FM_SLOWDOWN;
}

/* ---- measurements and verdicts ---- */

enum {
	M_L1I, M_IPC, M_FE, M_FP, M_COND, M_CALLRET, M_MEM, M_DIV, M_IPTB, M_EXTRACT, M_N
};
static const char *const metric_names[M_N] = {
	"l1i_mpki", "ipc", "frontend_bound_pct", "scalar_fp_pct", "cond_branch_pct",
	"call_ret_pct", "mem_pct", "div_pct", "insns_per_taken_branch", "extract_cpu_pct",
};

static void meas_set(struct fl_measured *m, unsigned path, double v)
{
	m->available = 1;
	m->value = v;
	m->path = path;
	m->why[0] = '\0';
}

static void meas_none(struct fl_measured *m, unsigned path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void meas_none(struct fl_measured *m, unsigned path, const char *fmt, ...)
{
	va_list ap;

	m->available = 0;
	m->value = NAN;
	m->path = path;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

/* Stage share from a native run's summary: path native. */
static void meas_extract(struct fl_measured *m, json_t *native)
{
	double v = fm_json_num(native, "extract_cpu_share");

	if (isfinite(v))
		meas_set(m, FL_PATH_NATIVE, 100.0 * v);
	else
		meas_none(m, FL_PATH_NATIVE, "no native stage timings");
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : NAN;
}

static void meas_sim(struct fl_measured m[M_N], const struct fm_sim *s)
{
	const struct fl_mix *x = &s->mix;
	unsigned p = FL_PATH_SIMULATED;

	if (x->l1i_mpki.available)
		meas_set(&m[M_L1I], p, x->l1i_mpki.value);
	else
		meas_none(&m[M_L1I], p, "%s", x->l1i_mpki.why);
	meas_none(&m[M_IPC], p, "callgrind has no timing model: IPC needs hardware counters");
	meas_none(&m[M_FE], p, "callgrind has no pipeline model: front-end bound needs "
		"hardware counters (top-down)");
	if (x->insns == 0) {
		for (int k = M_FP; k <= M_IPTB; k++)
			meas_none(&m[k], p, "no instruction was classified (objdump)");
		return;
	}
	meas_set(&m[M_FP], p, pct(x->scalar_fp, x->insns));
	meas_set(&m[M_COND], p, pct(x->cond, x->insns));
	meas_set(&m[M_CALLRET], p, pct(x->call + x->call_ind + x->ret, x->insns));
	meas_set(&m[M_MEM], p, pct(x->loads + x->stores, x->insns));
	meas_set(&m[M_DIV], p, pct(x->int_div + x->fp_div, x->insns));
	if (x->taken_branches)
		meas_set(&m[M_IPTB], p, x->insns_per_taken);
	else
		meas_none(&m[M_IPTB], p, "no taken branches were recorded");
}

/* Hardware path: counters from a native --pmu run; mix metrics are not counted. */
static void meas_hw(struct fl_measured m[M_N], json_t *native)
{
	unsigned p = FL_PATH_HARDWARE;
	json_t *pmu = json_object_get(native, "pmu");
	const char *why = json_string_value(json_object_get(pmu, "why"));
	static const struct { int k; const char *key; double scale; } hw[] = {
		/* top-down slots only: the stall-cycle ratio is another quantity (hw_extra) */
		{ M_L1I, "l1i_mpki", 1 }, { M_IPC, "ipc", 1 }, { M_FE, "frontend_bound_slots", 100 },
	};

	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
		json_t *mm = json_object_get(json_object_get(pmu, "metrics"), hw[i].key);

		if (json_is_true(json_object_get(pmu, "supported")) &&
		    json_is_true(json_object_get(mm, "supported")))
			meas_set(&m[hw[i].k], p, hw[i].scale *
				json_number_value(json_object_get(mm, "value")));
		else
			meas_none(&m[hw[i].k], p, "unsupported: %s", mm ?
				json_string_value(json_object_get(mm, "why")) :
				why ? why : "no counters");
	}
	for (int k = M_FP; k <= M_IPTB; k++)
		meas_none(&m[k], p, "the hardware path reads no per-class counters: use "
			"--simulate for the instruction mix");
}

static json_t *num_or_null(double v);

/* A hardware metric of simreq's summary (pmu.metrics.KEY): its value, or NAN. */
static double hw_metric(json_t *native, const char *key)
{
	json_t *mm = json_object_get(json_object_get(json_object_get(native, "pmu"), "metrics"),
		key);

	return json_is_true(json_object_get(mm, "supported")) ?
		json_number_value(json_object_get(mm, "value")) : NAN;
}

/* Hardware figures that have no target: the front-end stall-cycle ratio (a share of
 * cycles, not of slots, so never judged against the slot target) and the formula of the
 * top-down figure. Printed and put in the JSON beside the targets. */
static json_t *hw_extra(json_t *native, int print)
{
	json_t *fb = json_object_get(json_object_get(json_object_get(native, "pmu"), "metrics"),
		"frontend_bound_slots");
	const char *formula = json_string_value(json_object_get(fb, "formula"));
	double r = hw_metric(native, "frontend_stall_cycle_ratio");

	if (print) {
		if (formula)
			printf("frontend_bound_pct = 100 * %s\n", formula);
		if (isfinite(r))
			printf("frontend_stall_cycle_ratio (stalled-cycles-frontend / cycles, no "
				"target: a share of cycles, not of slots): %.3f\n", r);
		else
			printf("frontend_stall_cycle_ratio: unsupported\n");
	}
	return json_pack("{s:o,s:o}", "frontend_stall_cycle_ratio", num_or_null(r),
		"frontend_bound_formula", formula ? json_string(formula) : json_null());
}

/* ---- validate ---- */

/* Options of validate, mix and calibrate. */
enum {
	OPT_SIMULATE = 1, OPT_HARDWARE, OPT_CPU, OPT_I1, OPT_D1, OPT_LL, OPT_REQUESTS,
	OPT_WARMUP, OPT_QUICK, OPT_JSON, OPT_TARGETS, OPT_KEEP, OPT_QUIET, OPT_STAGE, OPT_HELP,
	OPT_TARGET_MPKI, OPT_TOLERANCE, OPT_MIN_CALLS, OPT_MAX_CALLS, OPT_MAX_RUNS, OPT_BODY_MIN,
};

static const struct fm_opt vd_opts[] = {
	{ "simulate", 0, OPT_SIMULATE }, { "hardware", 0, OPT_HARDWARE },
	{ "cpu", 1, OPT_CPU }, { "i1", 1, OPT_I1 }, { "d1", 1, OPT_D1 }, { "ll", 1, OPT_LL },
	{ "requests", 1, OPT_REQUESTS }, { "warmup", 1, OPT_WARMUP }, { "quick", 0, OPT_QUICK },
	{ "json", 1, OPT_JSON }, { "targets", 1, OPT_TARGETS }, { "keep", 1, OPT_KEEP },
	{ "quiet", 0, OPT_QUIET }, { "stage", 1, OPT_STAGE }, { "help", 0, OPT_HELP },
	{ "target-mpki", 1, OPT_TARGET_MPKI }, { "tolerance", 1, OPT_TOLERANCE },
	{ "min-calls", 1, OPT_MIN_CALLS }, { "max-calls", 1, OPT_MAX_CALLS },
	{ "max-runs", 1, OPT_MAX_RUNS }, { "body-min", 1, OPT_BODY_MIN },
	{ NULL, 0, 0 },
};

/* What validate, mix and calibrate parsed. */
struct vd_args {
	const char *sub;
	int simulate, hardware, quick, quiet;
	int requests_set, warmup_set;
	const char *cpu, *i1, *d1, *ll, *json, *targets, *keep, *stage;
	uint64_t requests, warmup;
	double target_mpki, tolerance, body_min;
	uint64_t min_calls, max_calls, max_runs;
	int have_target;
};

static void vd_usage_common(FILE *fp)
{
	fprintf(fp,
"path:\n"
"  --simulate                 valgrind callgrind (cache + branch simulation, objdump\n"
"                             classes); works without hardware counters\n"
"  --hardware                 perf counters around the measured window of a native run;\n"
"                             a host without a PMU reports every counter metric as\n"
"                             \"unsupported: <reason>\"\n"
"                             (neither: hardware when counters open here, else simulated;\n"
"                             the choice is printed)\n"
"simulated geometry:\n"
"  --cpu MODEL                %s [zen4]\n"
"                             zen4: L1i 32 KiB 8-way, L1d 32 KiB 8-way, L2 1 MiB 8-way (AMD\n"
"                               Family 19h Software Optimization Guide, pub. 57647)\n"
"                             zen5: L1i 32 KiB 8-way, L1d 48 KiB 12-way, L2 1 MiB 16-way\n"
"                               (AMD Family 1Ah Software Optimization Guide, pub. 58455)\n"
"                             golden-cove: L1i 32 KiB 8-way, L1d 48 KiB 12-way, L2 2 MiB\n"
"                               16-way (Intel Optimization Reference Manual; Sapphire\n"
"                               Rapids L2; Alder Lake's 1.25 MiB 10-way via --ll)\n"
"                             neoverse-v2: L1i 64 KiB 4-way, L1d 64 KiB 4-way, L2 1 MiB\n"
"                               8-way (Arm Neoverse V2 TRM; x86 code: indicative only)\n"
"                             The L2 is simulated as valgrind's last level (LL). A\n"
"                             geometry whose set count is not a power of two is simulated\n"
"                             as the nearest representable one, and the output says so.\n"
"  --i1 S,A,L, --d1 S,A,L, --ll S,A,L\n"
"                             override a level: size bytes, ways, line bytes\n"
"run:\n"
"  --requests N               measured requests [10; --quick: 2]\n"
"  --warmup N                 requests before the window [2; --quick: 1]\n"
"  --stage all|extract        window: the whole request path, or the extractor calls only\n"
"                             (callgrind --toggle-collect=fl_plan_run) [all]\n"
"  --quick                    small and fast: --active-copies 2 (unless given),\n"
"                             --corpus-mb 8, warmup 1, 2 requests\n"
"  --keep DIR                 keep the callgrind output, logs and simreq JSON in DIR\n"
"  --quiet                    no progress lines\n"
"cost: valgrind translates each distinct function once (~%.1f ms each) and then runs\n"
"12-50x slower than native; the estimate printed before a run is (footprint functions\n"
"touched + 3000) x %.1f ms + native run time x %.0f, and a progress line follows every\n"
"30 s.\n", fm_cpu_names(), FM_TRANSLATE_MS, FM_TRANSLATE_MS, FM_SLOWDOWN);
}

static void vd_usage_limits(FILE *fp)
{
	fputs("limits of the simulated path:\n", fp);
	for (int i = 0; fm_sim_limits[i]; i++)
		fprintf(fp, "  - %s\n", fm_sim_limits[i]);
}

static void validate_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " validate --harness [--simulate|--hardware] [options] [simreq knobs]\n"
"\n"
"Runs frontload-simreq (the leaf's request path in process: decode, overheads, extract,\n"
"stories, rank, compress, reply; no network) and checks what it measures against the\n"
"production targets, printing a table (metric, target, measured, verdict, path) and, with\n"
"--json, the same as JSON with the full mix, miss rates and run details.\n"
"\n"
"Targets (results/targets/production.json; --targets PATH for another file):\n"
"  L1i MPKI 21 +- 4 and IPC 0.6..0.8: feed aggregator on AMD Bergamo, DCPerf PR 704\n"
"    (github.com/facebookresearch/DCPerf/pull/704)\n"
"  scalar FP <= 3.5%, conditional branches >= 15%, near call/return <= 1.5%,\n"
"    loads+stores 40..46%, divides <= 2% (production: divider-active cycles; here divide\n"
"    instructions, a proxy), instructions per taken branch >= 18: DCPerf PR 705\n"
"  front-end bound 15..30% of slots: Kanev et al., ISCA 2015, \"Profiling a\n"
"    warehouse-scale computer\"; DCPerf PR 704 reports 23.5%\n"
"  feature extraction 30..35% of leaf CPU: DCPerf PR 715 (production's profile)\n"
"Measured (simulated): instructions = Ir less rep string iterations (valgrind counts a\n"
"rep movs/stos/lods/cmps/scas once per iteration, hardware once per execution:\n"
"executions = Ir - taken jcnd at the instruction); L1i MPKI = 1000 x I1mr /\n"
"instructions; LL code MPKI = 1000 x ILmr / instructions; branch MPKI = 1000 x Bcm\n"
"(conditional) or Bim (indirect) / instructions; mix shares are of instructions\n"
"classified by objdump (AT&T) over the objects holding >= 0.1% of Ir, each rep string\n"
"execution once; instructions per taken branch = classified instructions / (taken\n"
"conditional + jumps + calls + returns). The Ir removed is printed and in the JSON\n"
"(mix.rep_ir_removed, mix.rep_ir_removed_pct).\n"
"Measured (hardware): L1i MPKI and IPC from perf counters; front-end bound only from\n"
"top-down slot events (Intel topdown-fe-bound / slots or TMA level 1, AMD Zen 4+\n"
"dispatch slots; the formula is printed), else unmeasurable, with stalled-cycles-frontend\n"
"/ cycles printed beside it as frontend_stall_cycle_ratio and never judged.\n"
"The extraction share is thread CPU time of stage 3 over stages 1-5,7 in a native run.\n"
"Verdicts: pass, fail, or unmeasurable (the path cannot produce the metric, with why).\n"
"Under a fail the table prints what moves the metric (the target's \"knob\" text).\n"
"\n", fp);
	vd_usage_common(fp);
	fputs(
"output:\n"
"  --json PATH                write the JSON report here too\n"
"  --targets PATH             targets file [<prefix>/share/frontload/targets/\n"
"                             production.json, else the source tree's results/targets/]\n"
"\n", fp);
	fm_knobs_usage(fp);
	fputc('\n', fp);
	vd_usage_limits(fp);
	fputs("\nexit status: 0 every measured target met (unmeasurable ones do not count), 3 a\n"
		"measured target missed, 1 a run failed (simreq, valgrind, objdump, targets file),\n"
		"2 usage error.\n", fp);
}

static int vd_parse(int argc, char **argv, struct vd_args *a, struct fm_run *r,
	void (*usage)(FILE *))
{
	int i = 1, id, rc;
	const char *v, *knob = NULL;

	memset(a, 0, sizeof(*a));
	a->sub = argv[0];
	a->cpu = "zen4";
	a->stage = "all";
	a->tolerance = 1.0;
	a->min_calls = 1000;
	a->max_calls = 100000;
	a->max_runs = 7;
	a->body_min = 10;
	while ((rc = fm_args_next(argc, argv, &i, vd_opts, &id, &v, &knob)) > 0) {
		switch (id) {
		case OPT_HELP: usage(stdout); exit(FM_EXIT_OK);
		case OPT_SIMULATE: a->simulate = 1; break;
		case OPT_HARDWARE: a->hardware = 1; break;
		case OPT_CPU: a->cpu = v; break;
		case OPT_I1: a->i1 = v; break;
		case OPT_D1: a->d1 = v; break;
		case OPT_LL: a->ll = v; break;
		case OPT_QUICK: a->quick = 1; break;
		case OPT_QUIET: a->quiet = 1; break;
		case OPT_JSON: a->json = v; break;
		case OPT_TARGETS: a->targets = v; break;
		case OPT_KEEP: a->keep = v; break;
		case OPT_STAGE:
			if (strcmp(v, "all") != 0 && strcmp(v, "extract") != 0) {
				fprintf(stderr, FM_PROG ": --stage: all or extract, got \"%s\"\n", v);
				return -1;
			}
			a->stage = v;
			break;
		case OPT_REQUESTS:
			if (fm_parse_u64("requests", v, 1, 1000000, &a->requests) != 0)
				return -1;
			a->requests_set = 1;
			break;
		case OPT_WARMUP:
			if (fm_parse_u64("warmup", v, 0, 1000000, &a->warmup) != 0)
				return -1;
			a->warmup_set = 1;
			break;
		case OPT_TARGET_MPKI:
			if (fm_parse_f64("target-mpki", v, 0.001, 1000, &a->target_mpki) != 0)
				return -1;
			a->have_target = 1;
			break;
		case OPT_TOLERANCE:
			if (fm_parse_f64("tolerance", v, 0.001, 1000, &a->tolerance) != 0)
				return -1;
			break;
		case OPT_MIN_CALLS:
			if (fm_parse_u64("min-calls", v, 1, 100000000, &a->min_calls) != 0)
				return -1;
			break;
		case OPT_MAX_CALLS:
			if (fm_parse_u64("max-calls", v, 1, 100000000, &a->max_calls) != 0)
				return -1;
			break;
		case OPT_MAX_RUNS:
			if (fm_parse_u64("max-runs", v, 2, 50, &a->max_runs) != 0)
				return -1;
			break;
		case OPT_BODY_MIN:
			if (fm_parse_f64("body-min", v, 0, 100, &a->body_min) != 0)
				return -1;
			break;
		case FM_OPT_KNOB:
			if (fm_run_knob(r, knob, v) != 0) {
				fprintf(stderr, FM_PROG ": too many knobs\n");
				return -1;
			}
			break;
		}
	}
	if (rc < 0)
		return -1;
	if (a->simulate && a->hardware) {
		fprintf(stderr, FM_PROG ": --simulate and --hardware exclude each other\n");
		return -1;
	}
	if (a->quick) {
		if (!fm_run_knob_get(r, "active-copies"))
			fm_run_knob(r, "active-copies", "2");
		if (!fm_run_knob_get(r, "corpus-mb"))
			fm_run_knob(r, "corpus-mb", "8");
	}
	r->warmup = a->warmup_set ? a->warmup : a->quick ? 1 : 2;
	r->requests = a->requests_set ? a->requests : a->quick ? 2 : 10;
	r->stage = a->stage;
	r->quiet = a->quiet;
	return 0;
}

/* Decide the path: asked for, or hardware when counters open here. */
static unsigned vd_path(const struct vd_args *a, char *why, size_t len)
{
	struct fl_pmu p;

	why[0] = '\0';
	if (a->simulate)
		return FL_PATH_SIMULATED;
	if (a->hardware)
		return FL_PATH_HARDWARE;
	if (fl_pmu_open(&p, 0, why, len) == 0) {
		fl_pmu_close(&p);
		return FL_PATH_HARDWARE;
	}
	return FL_PATH_SIMULATED;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A figure as text (buf of 32), "n/a" when not measured. */
static const char *num_str(double v, const char *fmt, char *buf)
{
	if (!isfinite(v))
		return "n/a";
	snprintf(buf, 32, fmt, v);
	return buf;
}

static const char *rate_str(const struct fl_mix_rate *r, const char *fmt, char *buf)
{
	return num_str(r->available ? r->value : NAN, fmt, buf);
}

/* The mix and rates as valgrind's Ir counts them (each rep string iteration one
 * instruction, a movs iteration a load and a store), from the same run: what frontload
 * printed before the rep correction, for comparison. */
static json_t *mix_uncorrected_json(const struct fl_mix *x)
{
	uint64_t n = x->insns + x->rep_ir_removed;
	double k = x->ir_total ? (double)x->ir_hw / (double)x->ir_total : NAN;
	json_t *o = json_object();

	json_object_set_new(o, "instructions", json_integer((json_int_t)x->ir_total));
	json_object_set_new(o, "mem_pct", num_or_null(pct(x->loads + x->stores +
		x->rep_removed_loads + x->rep_removed_stores, n)));
	json_object_set_new(o, "insns_per_taken_branch", x->taken_branches ?
		json_real((double)n / (double)x->taken_branches) : json_null());
	json_object_set_new(o, "l1i_mpki", x->l1i_mpki.available && isfinite(k) ?
		json_real(x->l1i_mpki.value * k) : json_null());
	json_object_set_new(o, "ll_code_mpki", x->lli_mpki.available && isfinite(k) ?
		json_real(x->lli_mpki.value * k) : json_null());
	return o;
}

static json_t *mix_json(const struct fm_sim *s)
{
	const struct fl_mix *x = &s->mix;
	json_t *o = json_object();
	uint64_t n = x->insns;

	json_object_set_new(o, "ir", json_integer((json_int_t)s->ir));
	json_object_set_new(o, "instructions", json_integer((json_int_t)x->ir_hw));
	json_object_set_new(o, "rep_ir_removed", json_integer((json_int_t)x->rep_ir_removed));
	json_object_set_new(o, "rep_ir_removed_pct", num_or_null(pct(x->rep_ir_removed,
		x->ir_total)));
	json_object_set_new(o, "rep_executions", json_integer((json_int_t)x->rep_execs));
	json_object_set_new(o, "rep_ir", json_integer((json_int_t)x->rep_ir));
	json_object_set_new(o, "rep_uncorrected_ir",
		json_integer((json_int_t)x->rep_uncorrected_ir));
	json_object_set_new(o, "classified", json_integer((json_int_t)n));
	json_object_set_new(o, "classified_share", num_or_null(s->classified_share));
	json_object_set_new(o, "objects", json_string(s->objects));
	json_object_set_new(o, "cond_branch_pct", num_or_null(pct(x->cond, n)));
	json_object_set_new(o, "cond_taken_rate", n ? json_real(x->taken_rate) : json_null());
	json_object_set_new(o, "jump_pct", num_or_null(pct(x->jmp, n)));
	json_object_set_new(o, "indirect_jump_pct", num_or_null(pct(x->jmp_ind, n)));
	json_object_set_new(o, "call_pct", num_or_null(pct(x->call, n)));
	json_object_set_new(o, "indirect_call_pct", num_or_null(pct(x->call_ind, n)));
	json_object_set_new(o, "ret_pct", num_or_null(pct(x->ret, n)));
	json_object_set_new(o, "call_ret_pct", num_or_null(pct(x->call + x->call_ind + x->ret,
		n)));
	json_object_set_new(o, "load_pct", num_or_null(pct(x->loads, n)));
	json_object_set_new(o, "store_pct", num_or_null(pct(x->stores, n)));
	json_object_set_new(o, "mem_pct", num_or_null(pct(x->loads + x->stores, n)));
	json_object_set_new(o, "mem_any_pct", num_or_null(pct(x->mem, n)));
	json_object_set_new(o, "scalar_fp_pct", num_or_null(pct(x->scalar_fp, n)));
	json_object_set_new(o, "vector_pct", num_or_null(pct(x->vector, n)));
	json_object_set_new(o, "div_pct", num_or_null(pct(x->int_div + x->fp_div, n)));
	json_object_set_new(o, "int_div_pct", num_or_null(pct(x->int_div, n)));
	json_object_set_new(o, "fp_div_pct", num_or_null(pct(x->fp_div, n)));
	json_object_set_new(o, "insns_per_taken_branch", x->taken_branches ?
		json_real(x->insns_per_taken) : json_null());
	json_object_set_new(o, "taken_branches", json_integer((json_int_t)x->taken_branches));
	json_object_set_new(o, "unclassified_ir", json_integer((json_int_t)(x->unmapped_ir +
		x->unmatched_ir)));
	json_object_set_new(o, "uncorrected", mix_uncorrected_json(x));
	return o;
}

static json_t *rates_json(const struct fm_sim *s)
{
	const struct fl_mix *x = &s->mix;
	json_t *o = json_object();
	const struct { const char *k; const struct fl_mix_rate *r; } rr[] = {
		{ "l1i_mpki", &x->l1i_mpki }, { "ll_code_mpki", &x->lli_mpki },
		{ "cond_branch_mpki", &x->cond_mpki }, { "indirect_branch_mpki", &x->ind_mpki },
	};

	for (size_t i = 0; i < sizeof(rr) / sizeof(rr[0]); i++)
		json_object_set_new(o, rr[i].k, rr[i].r->available ? json_real(rr[i].r->value) :
			json_null());
	json_object_set_new(o, "per_1000", json_string(x->rep_corrected ?
		"instructions: Ir less rep string iterations (mix.instructions)" : "valgrind Ir"));
	json_object_set_new(o, "cond_mispredict_pct", num_or_null(pct(s->bcm, s->bc)));
	json_object_set_new(o, "indirect_mispredict_pct", num_or_null(pct(s->bim, s->bi)));
	return o;
}

static json_t *stages_json(json_t *native)
{
	json_t *o = json_object(), *st = json_object_get(native, "stages"), *v;
	const char *k;

	json_object_foreach(st, k, v)
		json_object_set_new(o, k, num_or_null(100.0 * fm_json_num(v, "cpu_share")));
	return o;
}

static json_t *geometry_json(const struct fm_run *r, const char *cpu, json_t *notes)
{
	const struct fm_cpu *c = fm_cpu_find(cpu);
	char a[64], b[64], d[64];

	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:O}", "cpu", cpu, "title", c->title,
		"I1", fm_cache_str(&r->i1, a, sizeof(a)), "D1", fm_cache_str(&r->d1, b, sizeof(b)),
		"LL", fm_cache_str(&r->ll, d, sizeof(d)), "source", c->source, "notes", notes);
}

static int write_json(json_t *o, const char *path)
{
	if (json_dump_file(o, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
		fprintf(stderr, FM_PROG ": cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void print_native_line(json_t *ns, double wall)
{
	char b[32];

	fprintf(stderr, FM_PROG ": native run: %.1f s, %.0f functions in the plan of %.0f, "
		"%.0f extractor calls per request, %.2f ms CPU per request, extraction %s%% of "
		"request CPU\n", wall, fm_json_num(ns, "plan_functions"),
		fm_json_num(ns, "library_functions"), fm_json_num(ns, "extract_calls_per_request"),
		fm_json_num(ns, "cpu_ns_per_request") / 1e6,
		num_str(100 * fm_json_num(ns, "extract_cpu_share"), "%.1f", b));
}

/* Native run (stage shares, cost estimate) then the simulated run. */
static int vd_simulate(struct fm_run *r, struct fm_native *nat, struct fm_sim *sim,
	double *eta_out)
{
	char err[2048], a[32];
	double eta;

	if (!r->quiet)
		fprintf(stderr, FM_PROG ": native run of frontload-simreq (stage timings, cost "
			"estimate)\n");
	if (fm_native_run(r, nat, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	eta = fm_sim_eta(nat->wall_s, fm_json_num(nat->summary, "plan_functions"),
		fm_json_num(nat->summary, "extract_calls_per_request"), r->warmup, r->requests);
	*eta_out = eta;
	if (!r->quiet) {
		print_native_line(nat->summary, nat->wall_s);
		fprintf(stderr, FM_PROG ": simulated run: estimated %s (min(plan, %llu requests x "
			"calls) + 3000 functions x %.1f ms translation + %.1f s native x %.0f)\n",
			fm_dur_str(eta, a, sizeof(a)), (unsigned long long)(r->warmup + r->requests),
			FM_TRANSLATE_MS, nat->wall_s, FM_SLOWDOWN);
	}
	if (fm_sim_run(r, eta, sim, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return -1;
	}
	return 0;
}

static void keep_files(const char *tmp, const char *keep)
{
	char from[4200], err[256] = "";

	if (keep == NULL)
		return;
	snprintf(from, sizeof(from), "%s/.", tmp);
	const char *const argv[] = { "cp", "-r", from, keep, NULL };
	if (fl_mkdir_p(keep, 0755, err, sizeof(err)) != 0 ||
	    fl_spawn_wait(argv, NULL, err, sizeof(err)) != 0)
		fprintf(stderr, FM_PROG ": --keep %s: copy failed\n", keep);
}

static void print_table(const struct fl_targets *tg, const struct fl_measured m[M_N],
	const enum fl_verdict v[M_N], const int have[M_N])
{
	char t[64], val[32];

	printf("%-38s %-12s %10s  %-13s %s\n", "metric", "target", "measured", "verdict",
		"path");
	for (int k = 0; k < M_N; k++) {
		const struct fl_target *x = fl_targets_find(tg, metric_names[k]);

		if (!have[k] || x == NULL)
			continue;
		if (m[k].available)
			snprintf(val, sizeof(val), "%.2f", m[k].value);
		else
			snprintf(val, sizeof(val), "-");
		printf("%-38s %-12s %10s  %-13s %s\n", x->label, fl_target_str(x, t, sizeof(t)),
			val, fl_verdict_name(v[k]), fl_path_name(m[k].path));
		if (!m[k].available)
			printf("    %s\n", m[k].why);
		if (v[k] == FL_VERDICT_FAIL && x->knob[0] != '\0')
			printf("    what moves it: %s\n", x->knob);
	}
}

int fm_validate_main(int argc, char **argv)
{
	struct vd_args a;
	struct fm_run r;
	struct fm_native nat = { 0 };
	struct fm_sim sim;
	struct fl_targets tg;
	struct fl_measured m[M_N];
	enum fl_verdict v[M_N];
	int have[M_N] = { 0 }, rc = FM_EXIT_RUN, simulated = 0;
	char err[2048], tpath[4096], tmp[256], why[FL_PMU_WHY_LEN], tv[64];
	json_t *notes = NULL, *out = NULL, *tj;
	double eta = 0, t0 = fm_now();
	unsigned path;
	int pass = 0, fail = 0, unm = 0;

	memset(&sim, 0, sizeof(sim));
	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (vd_parse(argc, argv, &a, &r, validate_usage) != 0)
		return FM_EXIT_USAGE;
	if (fm_geometry(&r, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	if (a.targets)
		snprintf(tpath, sizeof(tpath), "%s", a.targets);
	else if (fl_targets_default_path(tpath, sizeof(tpath), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	if (fl_targets_load(tpath, &tg, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		goto out;
	}
	r.tmpdir = tmp;
	r.tag = "validate";
	path = vd_path(&a, why, sizeof(why));
	if (!a.simulate && !a.hardware && path == FL_PATH_HARDWARE)
		fprintf(stderr, FM_PROG ": hardware counters open here: using the hardware path "
			"(--simulate for the simulated one)\n");
	if (!a.simulate && !a.hardware && path == FL_PATH_SIMULATED)
		fprintf(stderr, FM_PROG ": hardware path unsupported here (%s): using the "
			"simulated path\n", why);

	if (path == FL_PATH_SIMULATED) {
		if (vd_simulate(&r, &nat, &sim, &eta) != 0)
			goto out;
		simulated = 1;
		meas_sim(m, &sim);
	} else {
		r.pmu = 1;
		if (!a.quiet)
			fprintf(stderr, FM_PROG ": native run of frontload-simreq with --pmu\n");
		if (fm_native_run(&r, &nat, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			goto out;
		}
		meas_hw(m, nat.summary);
	}
	meas_extract(&m[M_EXTRACT], nat.summary);

	tj = json_array();
	for (int k = 0; k < M_N; k++) {
		const struct fl_target *x = fl_targets_find(&tg, metric_names[k]);
		const struct fl_tgt_source *src;

		if (x == NULL)
			continue;
		have[k] = 1;
		v[k] = fl_target_check(x, &m[k]);
		pass += v[k] == FL_VERDICT_PASS;
		fail += v[k] == FL_VERDICT_FAIL;
		unm += v[k] == FL_VERDICT_UNMEASURABLE;
		src = fl_targets_source(&tg, x->source);
		json_array_append_new(tj, json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s}",
			"metric", x->metric, "label", x->label, "target",
			fl_target_str(x, tv, sizeof(tv)), "unit", x->unit, "measured",
			m[k].available ? json_real(m[k].value) : json_null(), "why", m[k].why,
			"verdict", fl_verdict_name(v[k]), "path", fl_path_name(m[k].path),
			"source", src->title, "url", src->url));
		if (x->knob[0] != '\0')
			json_object_set_new(json_array_get(tj, json_array_size(tj) - 1), "knob",
				json_string(x->knob));
	}
	out = json_object();
	json_object_set_new(out, "tool", json_string(FM_PROG " validate"));
	json_object_set_new(out, "path", json_string(fl_path_name(path)));
	json_object_set_new(out, "targets_file", json_string(tpath));
	json_object_set_new(out, "targets", tj);
	json_object_set_new(out, "summary", json_pack("{s:i,s:i,s:i}", "pass", pass, "fail",
		fail, "unmeasurable", unm));
	json_t *mets = json_object();
	for (int k = 0; k < M_N; k++)
		json_object_set_new(mets, metric_names[k], m[k].available ? json_real(m[k].value) :
			json_null());
	json_object_set_new(out, "metrics", mets);
	json_object_set_new(out, "stages_cpu_pct", stages_json(nat.summary));
	if (!simulated)
		json_object_set_new(out, "hardware", hw_extra(nat.summary, 0));
	json_object_set_new(out, "native", json_incref(nat.summary));
	json_object_set_new(out, "host", fm_host_json());
	json_t *bj = fm_build_json();
	json_object_set_new(out, "build", bj ? bj : json_null());
	if (simulated) {
		json_object_set_new(out, "mix", mix_json(&sim));
		json_object_set_new(out, "rates", rates_json(&sim));
		json_object_set_new(out, "geometry", geometry_json(&r, a.cpu, notes));
		json_object_set_new(out, "simulation", json_pack("{s:s,s:f,s:f,s:O}", "command",
			sim.cmd, "wall_s", sim.wall_s, "estimate_s", eta, "simreq", sim.summary));
		json_t *lim = json_array();
		for (int i = 0; fm_sim_limits[i]; i++)
			json_array_append_new(lim, json_string(fm_sim_limits[i]));
		json_object_set_new(out, "limits", lim);
	}
	json_object_set_new(out, "wall_s", json_real(fm_now() - t0));

	/* The report. */
	printf("frontload validate: %s path", fl_path_name(path));
	if (simulated) {
		char g1[64], g2[64], g3[64];

		printf(", %s model (I1 %s, D1 %s, LL %s)", a.cpu,
			fm_cache_str(&r.i1, g1, sizeof(g1)), fm_cache_str(&r.d1, g2, sizeof(g2)),
			fm_cache_str(&r.ll, g3, sizeof(g3)));
	}
	printf("\n%llu measured requests after %llu warmup, stage %s, %.0f functions in the "
		"plan, %.0f extractor calls per request\n", (unsigned long long)r.requests,
		(unsigned long long)r.warmup, r.stage, fm_json_num(nat.summary, "plan_functions"),
		fm_json_num(nat.summary, "extract_calls_per_request"));
	for (size_t i = 0; notes && i < json_array_size(notes); i++)
		printf("note: %s\n", json_string_value(json_array_get(notes, i)));
	putchar('\n');
	print_table(&tg, m, v, have);
	if (!simulated)
		json_decref(hw_extra(nat.summary, 1));
	if (simulated) {
		const struct fl_mix *x = &sim.mix;

		char r1[32], r2[32], r3[32], r4[32], r5[32];

		printf("\nsimulated rates (per 1000 instructions: %llu Ir in the window, less %llu "
			"Ir of rep string iterations (%.3f%%) = %llu instructions as hardware retires "
			"them):\n", (unsigned long long)sim.ir, (unsigned long long)x->rep_ir_removed,
			pct(x->rep_ir_removed, x->ir_total), (unsigned long long)x->ir_hw);
		printf("  L1i MPKI %s, LL code MPKI %s, conditional branch MPKI %s (%s%% "
			"mispredicted), indirect branch MPKI %s\n", rate_str(&x->l1i_mpki, "%.2f", r1),
			rate_str(&x->lli_mpki, "%.3f", r2), rate_str(&x->cond_mpki, "%.2f", r3),
			num_str(pct(sim.bcm, sim.bc), "%.2f", r4), rate_str(&x->ind_mpki, "%.3f", r5));
		printf("instruction mix (%.1f%% of instructions classified; objects: %s):\n",
			100 * sim.classified_share, sim.objects);
		printf("  conditional %.2f%% (taken %.1f%%), calls %.2f%%, returns %.2f%%, loads "
			"%.2f%%, stores %.2f%%, scalar FP %.2f%%, vector %.2f%%, divides %.3f%%, "
			"%s instructions per taken branch\n", pct(x->cond, x->insns),
			100 * x->taken_rate, pct(x->call + x->call_ind, x->insns), pct(x->ret, x->insns),
			pct(x->loads, x->insns), pct(x->stores, x->insns), pct(x->scalar_fp, x->insns),
			pct(x->vector, x->insns), pct(x->int_div + x->fp_div, x->insns),
			num_str(x->taken_branches ? x->insns_per_taken : NAN, "%.2f", r1));
	}
	printf("stage CPU share (native run, thread CPU clock):");
	{
		json_t *st = json_object_get(nat.summary, "stages"), *sv;
		const char *sk;

		json_object_foreach(st, sk, sv) {
			char b[32];

			printf(" %s %s%%", sk, num_str(100 * fm_json_num(sv, "cpu_share"), "%.1f", b));
		}
	}
	printf("\n");
	if (simulated) {
		printf("limits of the simulated path:\n");
		for (int i = 0; fm_sim_limits[i]; i++)
			printf("  - %s\n", fm_sim_limits[i]);
	}
	printf("\n%d pass, %d fail, %d unmeasurable\n", pass, fail, unm);
	if (a.json && write_json(out, a.json) != 0)
		goto out;
	rc = fail ? FM_EXIT_MISSED : FM_EXIT_OK;
out:
	keep_files(tmp, a.keep);
	fm_rmtree(tmp);
	json_decref(out);
	json_decref(notes);
	fm_sim_free(&sim);
	fm_native_free(&nat);
	fl_targets_free(&tg);
	return rc;
}

/* ---- mix ---- */

static void mix_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " mix [options] [simreq knobs]\n"
"\n"
"The dynamic instruction mix of frontload-simreq's measured window under valgrind\n"
"callgrind (always the simulated path: the hardware path reads no per-class counters):\n"
"every executed address's count (--dump-instr=yes) joined with its objdump class, taken\n"
"conditional branches from --collect-jumps=yes, plus L1i/LL code MPKI and branch MPKI.\n"
"A rep string instruction counts once per execution (Ir - taken jcnd at it), in the mix\n"
"and in every rate's denominator; the Ir this removes is printed and in the JSON.\n"
"Prints a table and, with --json PATH, JSON. No targets are checked (see validate).\n"
"\n", fp);
	vd_usage_common(fp);
	fputs("output:\n  --json PATH                write the JSON here too\n\n", fp);
	fm_knobs_usage(fp);
	fputc('\n', fp);
	vd_usage_limits(fp);
	fputs("\nexit status: 0 done, 1 a run failed, 2 usage error.\n", fp);
}

int fm_mix_main(int argc, char **argv)
{
	struct vd_args a;
	struct fm_run r;
	struct fm_native nat = { 0 };
	struct fm_sim sim;
	char err[2048], tmp[256];
	json_t *notes = NULL, *out;
	double eta;
	int rc = FM_EXIT_RUN;

	memset(&sim, 0, sizeof(sim));
	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (vd_parse(argc, argv, &a, &r, mix_usage) != 0)
		return FM_EXIT_USAGE;
	if (a.hardware) {
		fprintf(stderr, FM_PROG ": mix: the hardware path reads no per-class counters; "
			"the mix is simulated only\n");
		return FM_EXIT_USAGE;
	}
	if (fm_geometry(&r, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	r.tmpdir = tmp;
	r.tag = "mix";
	if (vd_simulate(&r, &nat, &sim, &eta) != 0)
		goto out;
	printf("frontload mix: simulated, %s model, %llu measured requests, stage %s, objects: "
		"%s\n", a.cpu, (unsigned long long)r.requests, r.stage, sim.objects);
	fl_mix_print(&sim.mix, stdout);
	out = json_pack("{s:s,s:o,s:o,s:o,s:s,s:f}", "tool", FM_PROG " mix", "mix",
		mix_json(&sim), "rates", rates_json(&sim), "geometry",
		geometry_json(&r, a.cpu, notes), "command", sim.cmd, "wall_s", sim.wall_s);
	json_object_set_new(out, "simreq", json_incref(sim.summary));
	rc = a.json && write_json(out, a.json) != 0 ? FM_EXIT_RUN : FM_EXIT_OK;
	json_decref(out);
out:
	keep_files(tmp, a.keep);
	fm_rmtree(tmp);
	json_decref(notes);
	fm_sim_free(&sim);
	fm_native_free(&nat);
	return rc;
}

/* ---- calibrate ---- */

static void calibrate_usage(FILE *fp)
{
	fputs("usage: " FM_PROG " calibrate --target-mpki X [--simulate|--hardware] [options]\n"
"                  [simreq knobs]\n"
"\n"
"Finds the extractor calls per request that give L1i MPKI X: L1i MPKI rises with calls\n"
"per request, as extraction's share of the instructions grows against the small-footprint\n"
"stages. Geometric bisection between --min-calls and --max-calls, one measured run per\n"
"step (simulated: callgrind cache totals per instruction, without branch simulation, so\n"
"rep string iterations count once (see mix); hardware: perf L1i misses). When\n"
"X is above the MPKI at --max-calls, it then bisects the body share (--body, % of calls\n"
"running their full body: fewer instructions per fetched function) down to --body-min.\n"
"Prints each step and the settings found (--calls-per-request N [--body P]).\n"
"\n"
"  --target-mpki X            L1i misses per 1000 instructions to reach (required)\n"
"  --tolerance T              stop within +-T MPKI [1]\n"
"  --min-calls N, --max-calls N  calls-per-request bracket [1000, 100000]\n"
"  --max-runs N               measured runs at most, bracket ends included [7]\n"
"  --body-min P               lowest body share tried, % [10]\n"
"  --json PATH                steps and result as JSON\n"
"\n", fp);
	vd_usage_common(fp);
	fputc('\n', fp);
	fm_knobs_usage(fp);
	fputs("\nexit status: 0 a setting within tolerance was found, 3 none within tolerance\n"
		"(the closest is printed), 1 a run failed (or no hardware counters with --hardware),\n"
		"2 usage error.\n", fp);
}

struct cal_ctx {
	struct fm_run *r;
	unsigned path;
	int runs, max_runs;
	json_t *steps;
	double native_s_per_call, native_base_s;
	double plan_functions;
};

/* One measured point. Returns 0 with *mpki, or -1 (printed). */
static int cal_point(struct cal_ctx *c, uint64_t calls, double body, double *mpki)
{
	struct fm_run rr = *c->r;
	char cs[32], bs[32], err[2048], tag[64], a[32];
	double t0 = fm_now();

	snprintf(cs, sizeof(cs), "%llu", (unsigned long long)calls);
	snprintf(bs, sizeof(bs), "%g", body);
	snprintf(tag, sizeof(tag), "cal%d", c->runs);
	rr.tag = tag;
	fm_run_knob(&rr, "calls-per-request", cs);
	fm_run_knob(&rr, "body", bs);
	c->runs++;
	if (c->path == FL_PATH_SIMULATED) {
		struct fm_sim s;
		double eta = fm_sim_eta(c->native_base_s + c->native_s_per_call * (double)calls *
			(double)(rr.warmup + rr.requests), c->plan_functions, (double)calls, rr.warmup,
			rr.requests);

		rr.mix = 0;
		rr.quiet = 1;
		fprintf(stderr, FM_PROG ": run %d/%d: %llu calls per request, body %g%%, "
			"estimated %s\n", c->runs, c->max_runs, (unsigned long long)calls, body,
			fm_dur_str(eta, a, sizeof(a)));
		if (fm_sim_run(&rr, eta, &s, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			return -1;
		}
		if (!s.mix.l1i_mpki.available) {
			fprintf(stderr, FM_PROG ": %s\n", s.mix.l1i_mpki.why);
			fm_sim_free(&s);
			return -1;
		}
		*mpki = s.mix.l1i_mpki.value;
		fm_sim_free(&s);
	} else {
		struct fm_native n;

		rr.pmu = 1;
		if (fm_native_run(&rr, &n, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			return -1;
		}
		*mpki = fm_json_num(n.summary, "pmu.metrics.l1i_mpki.value");
		fm_native_free(&n);
		if (!isfinite(*mpki)) {
			fprintf(stderr, FM_PROG ": L1i misses unsupported by the counters here\n");
			return -1;
		}
	}
	fprintf(stderr, FM_PROG ": run %d/%d: %llu calls per request, body %g%% -> L1i MPKI "
		"%.2f (%s)\n", c->runs, c->max_runs, (unsigned long long)calls, body, *mpki,
		fm_dur_str(fm_now() - t0, a, sizeof(a)));
	json_array_append_new(c->steps, json_pack("{s:I,s:f,s:f,s:f}", "calls_per_request",
		(json_int_t)calls, "body_pct", body, "l1i_mpki", *mpki, "seconds", fm_now() - t0));
	return 0;
}

int fm_calibrate_main(int argc, char **argv)
{
	struct vd_args a;
	struct fm_run r;
	struct cal_ctx c;
	char err[2048], tmp[256], why[FL_PMU_WHY_LEN];
	json_t *notes = NULL, *out;
	double lo_m, hi_m, best_m, best_body = 100, body_given = 100;
	uint64_t lo, hi, best;
	int rc = FM_EXIT_RUN, found = 0;

	memset(&c, 0, sizeof(c));
	if (fm_run_init(&r, err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		return FM_EXIT_RUN;
	}
	if (vd_parse(argc, argv, &a, &r, calibrate_usage) != 0)
		return FM_EXIT_USAGE;
	if (!a.have_target) {
		fprintf(stderr, FM_PROG ": calibrate needs --target-mpki X (see --help)\n");
		return FM_EXIT_USAGE;
	}
	if (a.min_calls >= a.max_calls) {
		fprintf(stderr, FM_PROG ": --min-calls must be below --max-calls\n");
		return FM_EXIT_USAGE;
	}
	if (fm_run_knob_get(&r, "calls-per-request") || fm_run_knob_get(&r,
	    "extractors-per-story")) {
		fprintf(stderr, FM_PROG ": calibrate chooses the calls per request itself; drop "
			"--calls-per-request/--extractors-per-story\n");
		return FM_EXIT_USAGE;
	}
	if (fm_run_knob_get(&r, "body"))
		body_given = atof(fm_run_knob_get(&r, "body"));
	if (fm_geometry(&r, a.cpu, a.i1, a.d1, a.ll, &notes) != 0)
		return FM_EXIT_USAGE;
	c.path = vd_path(&a, why, sizeof(why));
	if (a.hardware && c.path == FL_PATH_HARDWARE) {
		struct fl_pmu p;

		if (fl_pmu_open(&p, 0, why, sizeof(why)) != 0) {
			fprintf(stderr, FM_PROG ": --hardware: unsupported: %s\n", why);
			json_decref(notes);
			return FM_EXIT_RUN;
		}
		fl_pmu_close(&p);
	} else if (!a.simulate && !a.hardware && c.path == FL_PATH_SIMULATED) {
		fprintf(stderr, FM_PROG ": hardware path unsupported here (%s): using the "
			"simulated path\n", why);
	}
	if (!a.requests_set)
		r.requests = 2;
	if (!a.warmup_set)
		r.warmup = 1;
	if (fm_mktemp(tmp, sizeof(tmp), err, sizeof(err)) != 0) {
		fprintf(stderr, FM_PROG ": %s\n", err);
		json_decref(notes);
		return FM_EXIT_RUN;
	}
	r.tmpdir = tmp;
	r.dcache = fm_dis_cache_new(); /* each step's objects disassembled once (NULL: per step) */
	c.r = &r;
	c.max_runs = (int)a.max_runs;
	c.steps = json_array();

	/* Native cost model: one short run at each bracket end. */
	{
		struct fm_run rr = r;
		struct fm_native n1, n2;
		char s1[32], s2[32];

		rr.tag = "cal-native-lo";
		snprintf(s1, sizeof(s1), "%llu", (unsigned long long)a.min_calls);
		snprintf(s2, sizeof(s2), "%llu", (unsigned long long)a.max_calls);
		fm_run_knob(&rr, "calls-per-request", s1);
		if (fm_native_run(&rr, &n1, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			goto out;
		}
		rr = r;
		rr.tag = "cal-native-hi";
		fm_run_knob(&rr, "calls-per-request", s2);
		if (fm_native_run(&rr, &n2, err, sizeof(err)) != 0) {
			fprintf(stderr, FM_PROG ": %s\n", err);
			fm_native_free(&n1);
			goto out;
		}
		c.native_s_per_call = (n2.wall_s - n1.wall_s) / ((double)(a.max_calls -
			a.min_calls) * (double)(r.warmup + r.requests));
		if (c.native_s_per_call < 0)
			c.native_s_per_call = 0;
		c.native_base_s = n1.wall_s;
		c.plan_functions = fm_json_num(n1.summary, "plan_functions");
		fm_native_free(&n1);
		fm_native_free(&n2);
	}

	lo = a.min_calls;
	hi = a.max_calls;
	if (cal_point(&c, lo, body_given, &lo_m) != 0 || cal_point(&c, hi, body_given, &hi_m) != 0)
		goto out;
	best = fabs(lo_m - a.target_mpki) < fabs(hi_m - a.target_mpki) ? lo : hi;
	best_m = best == lo ? lo_m : hi_m;
	best_body = body_given;
	if (fabs(best_m - a.target_mpki) <= a.tolerance)
		found = 1;
	if (!found && a.target_mpki > lo_m && a.target_mpki < hi_m) {
		/* MPKI grows with calls: bisect in log space. */
		while (c.runs < c.max_runs && hi > lo + 1 && !found) {
			uint64_t mid = (uint64_t)llround(sqrt((double)lo * (double)hi));
			double mm;

			if (mid <= lo || mid >= hi)
				break;
			if (cal_point(&c, mid, body_given, &mm) != 0)
				goto out;
			if (fabs(mm - a.target_mpki) < fabs(best_m - a.target_mpki)) {
				best = mid;
				best_m = mm;
			}
			if (fabs(mm - a.target_mpki) <= a.tolerance)
				found = 1;
			else if (mm < a.target_mpki)
				lo = mid;
			else
				hi = mid;
		}
	} else if (!found && a.target_mpki > hi_m && a.body_min < body_given) {
		/* Even the most calls fall short: fewer full bodies at the top of the bracket. */
		double blo = a.body_min, bhi = body_given;

		while (c.runs < c.max_runs && !found && bhi - blo > 1) {
			double mid = (blo + bhi) / 2, mm;

			if (cal_point(&c, a.max_calls, mid, &mm) != 0)
				goto out;
			if (fabs(mm - a.target_mpki) < fabs(best_m - a.target_mpki)) {
				best = a.max_calls;
				best_m = mm;
				best_body = mid;
			}
			if (fabs(mm - a.target_mpki) <= a.tolerance)
				found = 1;
			else if (mm < a.target_mpki)
				bhi = mid;  /* need more misses per instruction: less body */
			else
				blo = mid;
		}
	}
	printf("frontload calibrate: %s path, target L1i MPKI %g +- %g\n", fl_path_name(c.path),
		a.target_mpki, a.tolerance);
	for (size_t i = 0; i < json_array_size(c.steps); i++) {
		json_t *s = json_array_get(c.steps, i);

		printf("  %2zu  calls per request %8.0f  body %5.1f%%  L1i MPKI %7.2f\n", i + 1,
			fm_json_num(s, "calls_per_request"), fm_json_num(s, "body_pct"),
			fm_json_num(s, "l1i_mpki"));
	}
	printf("%s: --calls-per-request %llu", found ? "found" :
		"closest (not within tolerance)", (unsigned long long)best);
	if (best_body != body_given)
		printf(" --body %g", best_body);
	printf("  (L1i MPKI %.2f)\n", best_m);
	out = json_pack("{s:s,s:s,s:f,s:f,s:b,s:I,s:f,s:f,s:o,s:O}", "tool",
		FM_PROG " calibrate", "path", fl_path_name(c.path), "target_mpki", a.target_mpki,
		"tolerance", a.tolerance, "found", found, "calls_per_request", (json_int_t)best,
		"body_pct", best_body, "l1i_mpki", best_m, "steps", json_incref(c.steps),
		"geometry_notes", notes);
	rc = a.json && write_json(out, a.json) != 0 ? FM_EXIT_RUN :
		found ? FM_EXIT_OK : FM_EXIT_MISSED;
	json_decref(out);
out:
	keep_files(tmp, a.keep);
	fm_rmtree(tmp);
	fm_dis_cache_free(r.dcache);
	json_decref(c.steps);
	json_decref(notes);
	return rc;
}
