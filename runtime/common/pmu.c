/* pmu.c: perf_event_open counter groups for one thread, multiplex scaling, sums, metrics. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errbuf.h"
#include "pmu.h"

#define PMU_CACHE(cache, op, result) \
	((uint64_t)(cache) | ((uint64_t)(op) << 8) | ((uint64_t)(result) << 16))

#define PMU_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
                         PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

/* The events, in enum order: perf type and config, and the name used in reasons. */
static const struct {
	uint32_t type;
	uint64_t config;
	const char *name;
} pmu_events[FL_PMU_NEVENTS] = {
	[FL_PMU_INSTRUCTIONS] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
	[FL_PMU_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
	[FL_PMU_L1I_MISSES] = {PERF_TYPE_HW_CACHE,
	                       PMU_CACHE(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
	                                 PERF_COUNT_HW_CACHE_RESULT_MISS),
	                       "L1i-misses"},
	[FL_PMU_ITLB_MISSES] = {PERF_TYPE_HW_CACHE,
	                        PMU_CACHE(PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ,
	                                  PERF_COUNT_HW_CACHE_RESULT_MISS),
	                        "iTLB-misses"},
	[FL_PMU_BRANCHES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches"},
	[FL_PMU_BRANCH_MISSES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	                          "branch-misses"},
	[FL_PMU_STALLED_FRONTEND] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	                             "stalled-cycles-frontend"},
	/* type and config of the top-down pair come from fl_pmu_topdown_find */
	[FL_PMU_TD_SLOTS] = {0, 0, "topdown-slots"},
	[FL_PMU_TD_FE] = {0, 0, "topdown-fe"},
};

const char *fl_pmu_event_name(enum fl_pmu_event e)
{
	if ((unsigned)e >= FL_PMU_NEVENTS)
		return "unknown";
	return pmu_events[e].name;
}

/* perf_event_open for event e of thread tid, leading a new group (group_fd = -1, opened
 * disabled) or joining group_fd (follows its leader's enable state). */
static int pmu_open_raw(uint32_t type, uint64_t config, pid_t tid, int group_fd,
                        bool user_only)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = type;
	attr.config = config;
	attr.read_format = PMU_READ_FORMAT;
	attr.disabled = group_fd < 0;
	attr.exclude_kernel = user_only;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int pmu_open_one(enum fl_pmu_event e, pid_t tid, int group_fd, bool user_only)
{
	return pmu_open_raw(pmu_events[e].type, pmu_events[e].config, tid, group_fd, user_only);
}

/* Record fd as event e of group g, with its kernel id. Returns 0, or -1 (errno set). */
static int pmu_adopt(struct fl_pmu *p, enum fl_pmu_event e, int fd, unsigned g)
{
	if (ioctl(fd, PERF_EVENT_IOC_ID, &p->id[e]) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	p->fd[e] = fd;
	p->group[e] = g;
	return 0;
}

/* Open optional event e: join an existing group, else (it did not fit: EINVAL/ENOSPC)
 * lead a new one. Leaves p->why[e] set when the host refuses it. */
static void pmu_open_optional(struct fl_pmu *p, enum fl_pmu_event e)
{
	int fd = -1, err = 0;

	for (unsigned g = 0; g < p->ngroups; g++) {
		fd = pmu_open_one(e, p->tid, p->leader[g], p->user_only);
		if (fd >= 0) {
			if (pmu_adopt(p, e, fd, g) == 0)
				return;
			err = errno;
			break;
		}
		err = errno;
		if (err != EINVAL && err != ENOSPC)
			break;
	}
	if (err == EINVAL || err == ENOSPC) {
		fd = pmu_open_one(e, p->tid, -1, p->user_only);
		if (fd >= 0) {
			unsigned g = p->ngroups;
			if (pmu_adopt(p, e, fd, g) == 0) {
				p->leader[g] = fd;
				p->ngroups++;
				return;
			}
		}
		err = errno;
	}
	fl_errf(p->why[e], sizeof p->why[e], "perf_event_open(%s): %s", pmu_events[e].name,
	        strerror(err));
}

/* The top-down pair as a group of its own, slots leading; both or neither. */
static void pmu_open_topdown(struct fl_pmu *p)
{
	char r[FL_PMU_WHY_LEN];
	unsigned g = p->ngroups;
	int fd, err;

	fl_pmu_topdown_find(&p->td, r, sizeof r);
	if (p->td.name == NULL) {
		for (int e = FL_PMU_TD_SLOTS; e <= FL_PMU_TD_FE; e++)
			fl_errf(p->why[e], sizeof p->why[e], "%s", r);
		return;
	}
	fd = pmu_open_raw(p->td.type, p->td.slots_config, p->tid, -1, p->user_only);
	if (fd >= 0 && pmu_adopt(p, FL_PMU_TD_SLOTS, fd, g) == 0) {
		p->leader[g] = fd;
		p->ngroups++;
		fd = pmu_open_raw(p->td.type, p->td.fe_config, p->tid, p->leader[g], p->user_only);
		if (fd >= 0 && pmu_adopt(p, FL_PMU_TD_FE, fd, g) == 0)
			return;
		err = errno;
		close(p->fd[FL_PMU_TD_SLOTS]);
		p->fd[FL_PMU_TD_SLOTS] = -1;
		p->ngroups--;
	} else {
		err = errno;
	}
	for (int e = FL_PMU_TD_SLOTS; e <= FL_PMU_TD_FE; e++)
		fl_errf(p->why[e], sizeof p->why[e], "perf_event_open(%s top-down): %s",
		        p->td.name, strerror(err));
	p->td.name = NULL;
}

int fl_pmu_open(struct fl_pmu *p, pid_t tid, char *why, size_t whylen)
{
	memset(p, 0, sizeof *p);
	for (int e = 0; e < FL_PMU_NEVENTS; e++)
		p->fd[e] = -1;
	p->tid = tid;
	fl_errf(why, whylen, "%s", "");

	/* Kernel counting is refused under perf_event_paranoid >= 2 for the unprivileged:
	 * count user space only then, and say so. */
	int fd = pmu_open_one(FL_PMU_INSTRUCTIONS, tid, -1, false);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		p->user_only = true;
		fd = pmu_open_one(FL_PMU_INSTRUCTIONS, tid, -1, true);
	}
	if (fd < 0 || pmu_adopt(p, FL_PMU_INSTRUCTIONS, fd, 0) != 0) {
		fl_errf(why, whylen,
		        "hardware counters unsupported on this host: perf_event_open(instructions): "
		        "%s",
		        strerror(errno));
		fl_pmu_close(p);
		return -1;
	}
	p->leader[0] = fd;
	p->ngroups = 1;
	for (int e = FL_PMU_INSTRUCTIONS + 1; e < FL_PMU_TD_SLOTS; e++)
		pmu_open_optional(p, (enum fl_pmu_event)e);
	pmu_open_topdown(p);
	return 0;
}

/* One ioctl on every group leader (with PERF_IOC_FLAG_GROUP: the whole group). */
static int pmu_ioctl_groups(struct fl_pmu *p, unsigned long req, const char *what, char *why,
                            size_t whylen)
{
	for (unsigned g = 0; g < p->ngroups; g++) {
		if (ioctl(p->leader[g], req, PERF_IOC_FLAG_GROUP) != 0) {
			fl_errf(why, whylen, "ioctl(%s): %s", what, strerror(errno));
			return -1;
		}
	}
	if (p->ngroups == 0) {
		fl_errf(why, whylen, "ioctl(%s): counters not open", what);
		return -1;
	}
	return 0;
}

int fl_pmu_enable(struct fl_pmu *p, char *why, size_t whylen)
{
	return pmu_ioctl_groups(p, PERF_EVENT_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE", why, whylen);
}

int fl_pmu_disable(struct fl_pmu *p, char *why, size_t whylen)
{
	return pmu_ioctl_groups(p, PERF_EVENT_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE", why, whylen);
}

/* PERF_FORMAT_GROUP layout: nr, time_enabled, time_running, then {value, id} x nr. */
#define PMU_BUF_WORDS (3 + 2 * FL_PMU_NEVENTS)

/* The kernel's reset zeroes counts but not time_enabled/time_running: record them so
 * scaling after a reset uses the window's times, not the event's lifetime. */
int fl_pmu_reset(struct fl_pmu *p, char *why, size_t whylen)
{
	uint64_t buf[PMU_BUF_WORDS];

	if (pmu_ioctl_groups(p, PERF_EVENT_IOC_RESET, "PERF_EVENT_IOC_RESET", why, whylen) != 0)
		return -1;
	for (unsigned g = 0; g < p->ngroups; g++) {
		ssize_t n = read(p->leader[g], buf, sizeof buf);
		if (n < (ssize_t)(3 * sizeof buf[0])) {
			fl_errf(why, whylen, "read(perf group %u) at reset: %s", g,
			        n < 0 ? strerror(errno) : "short read");
			return -1;
		}
		p->base_enabled[g] = buf[1];
		p->base_running[g] = buf[2];
	}
	return 0;
}

/* Mark every event of out unsupported with reason r. */
static void pmu_all_unsupported(struct fl_pmu_counts *out, const char *r)
{
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		out->ev[e].supported = false;
		snprintf(out->ev[e].why, sizeof out->ev[e].why, "%s", r);
	}
}

int fl_pmu_parse_group(const struct fl_pmu *p, unsigned g, const void *buf, size_t len,
	struct fl_pmu_counts *out, char *why, size_t whylen)
{
	uint64_t w[PMU_BUF_WORDS];
	size_t words = len / sizeof w[0];

	if (words > PMU_BUF_WORDS)
		words = PMU_BUF_WORDS;
	memcpy(w, buf, words * sizeof w[0]);
	if (words < 3 || w[0] > FL_PMU_NEVENTS || words < 3 + 2 * w[0]) {
		fl_errf(why, whylen, "read(perf group %u): short or malformed read (%zu bytes)", g,
		        len);
		return -1;
	}
	/* Times since the last reset; a counter that went backwards is a window of 0. */
	uint64_t enabled = w[1] >= p->base_enabled[g] ? w[1] - p->base_enabled[g] : 0;
	uint64_t running = w[2] >= p->base_running[g] ? w[2] - p->base_running[g] : 0;
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		if (p->fd[e] < 0 || p->group[e] != g)
			continue;
		out->ev[e].supported = false;
		snprintf(out->ev[e].why, sizeof out->ev[e].why, "missing from its group's read");
	}
	for (uint64_t i = 0; i < w[0]; i++) {
		uint64_t value = w[3 + 2 * i], id = w[4 + 2 * i];
		for (int e = 0; e < FL_PMU_NEVENTS; e++) {
			if (p->fd[e] < 0 || p->group[e] != g || p->id[e] != id)
				continue;
			struct fl_pmu_count *c = &out->ev[e];
			c->raw = value;
			c->enabled_ns = enabled;
			c->running_ns = running;
			c->value = fl_pmu_scale_count(value, enabled, running);
			c->max_scale = fl_pmu_scale_factor(c);
			c->supported = running > 0;
			snprintf(c->why, sizeof c->why, "%s",
			         running > 0 ? ""
			                     : "never on the PMU (not enabled, or no free "
			                       "counters for its group)");
		}
	}
	return 0;
}

int fl_pmu_read(struct fl_pmu *p, struct fl_pmu_counts *out, char *why, size_t whylen)
{
	uint64_t buf[PMU_BUF_WORDS];

	memset(out, 0, sizeof *out);
	out->threads = 1;
	out->td = p->td;
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		if (p->fd[e] < 0) {
			snprintf(out->ev[e].why, sizeof out->ev[e].why, "%s",
			         p->why[e][0] ? p->why[e] : "not opened");
		}
	}
	for (unsigned g = 0; g < p->ngroups; g++) {
		ssize_t n = read(p->leader[g], buf, sizeof buf);
		if (n < 0) {
			fl_errf(why, whylen, "read(perf group %u): %s", g, strerror(errno));
			pmu_all_unsupported(out, "group read failed");
			return -1;
		}
		if (fl_pmu_parse_group(p, g, buf, (size_t)n, out, why, whylen) != 0) {
			pmu_all_unsupported(out, "group read failed");
			return -1;
		}
	}
	return 0;
}

/* x86 core config layout of the sysfs spec terms: {name, low bit, width}. */
static const struct {
	const char *name;
	unsigned lo, bits;
} pmu_terms[] = {
	{"umask", 8, 8}, {"edge", 18, 1}, {"pc", 19, 1}, {"any", 21, 1},
	{"inv", 23, 1},  {"cmask", 24, 8},
};

int fl_pmu_spec_config(const char *spec, uint64_t *config)
{
	char buf[256], *save = NULL;

	if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	*config = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		unsigned long long v = 1;

		if (eq) {
			*eq = '\0';
			errno = 0;
			v = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end)
				return -1;
		}
		if (strcmp(t, "event") == 0) {
			if (v > 0xfff)
				return -1;
			/* AMD's event select is 12 bits: 11:8 sit at config bits 32-35 */
			*config |= (v & 0xff) | ((v >> 8) << 32);
			continue;
		}
		size_t k = 0;
		while (k < sizeof pmu_terms / sizeof pmu_terms[0] && strcmp(t, pmu_terms[k].name))
			k++;
		if (k == sizeof pmu_terms / sizeof pmu_terms[0] || v >> pmu_terms[k].bits)
			return -1;
		*config |= (uint64_t)v << pmu_terms[k].lo;
	}
	return 0;
}

/* First line of a small file into buf; -1 if unreadable. */
static int pmu_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, (int)len, f) != NULL;

	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok ? 0 : -1;
}

/* Event name's config and .scale under the sysfs PMU dir; -1 when the name is absent. */
static int pmu_sysfs_event(const char *dir, const char *name, uint64_t *config, double *mult)
{
	char path[512], line[256];

	snprintf(path, sizeof path, "%s/events/%s", dir, name);
	if (pmu_read_line(path, line, sizeof line) != 0 || fl_pmu_spec_config(line, config) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/events/%s.scale", dir, name);
	*mult = pmu_read_line(path, line, sizeof line) == 0 ? strtod(line, NULL) : 1.0;
	if (!(*mult > 0))
		*mult = 1.0;
	return 0;
}

/* Intel: the perf-metrics pair (Ice Lake and later), else the pre-Ice Lake TMA level-1
 * pair, as the kernel names them in sysfs (on hybrid parts under cpu_core). */
static int pmu_topdown_intel(struct fl_pmu_topdown *td)
{
	static const char *const dirs[] = {"/sys/bus/event_source/devices/cpu",
	                                   "/sys/bus/event_source/devices/cpu_core"};
	char path[512], line[64];

	for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
		snprintf(path, sizeof path, "%s/type", dirs[d]);
		if (pmu_read_line(path, line, sizeof line) != 0)
			continue;
		td->type = (uint32_t)strtoul(line, NULL, 10);
		if (pmu_sysfs_event(dirs[d], "slots", &td->slots_config, &td->slots_mult) == 0 &&
		    pmu_sysfs_event(dirs[d], "topdown-fe-bound", &td->fe_config, &td->fe_mult) == 0) {
			td->name = "intel-perf-metrics";
			td->formula = "topdown-fe-bound / slots";
			return 0;
		}
		if (pmu_sysfs_event(dirs[d], "topdown-total-slots", &td->slots_config,
		                    &td->slots_mult) == 0 &&
		    pmu_sysfs_event(dirs[d], "topdown-fetch-bubbles", &td->fe_config,
		                    &td->fe_mult) == 0) {
			td->name = "intel-tma-l1";
			td->formula = "topdown-fetch-bubbles / (topdown-total-slots * its sysfs scale) "
			              "(IDQ_UOPS_NOT_DELIVERED.CORE / (4 * CPU_CLK_UNHALTED))";
			return 0;
		}
	}
	return -1;
}

/* AMD family 19h models of Zen 4 (10-1f, 60-7f, a0-af) and family 1ah (Zen 5): 6 dispatch
 * slots per cycle, PMCx1A0 umask 1 counts slots left empty for want of front-end ops. */
static int pmu_topdown_amd(struct fl_pmu_topdown *td, unsigned family, unsigned model)
{
	bool zen4 = family == 0x19 && ((model >= 0x10 && model <= 0x1f) ||
	                               (model >= 0x60 && model <= 0x7f) ||
	                               (model >= 0xa0 && model <= 0xaf));
	if (!zen4 && family != 0x1a)
		return -1;
	td->name = "amd-zen4";
	td->formula = "de_no_dispatch_per_slot.no_ops_from_frontend / (6 * ls_not_halted_cyc)";
	td->type = PERF_TYPE_RAW;
	td->slots_config = 0x76; /* ls_not_halted_cyc */
	td->slots_mult = 6.0;
	td->fe_config = 0x1000001a0ull; /* event 0x1a0, umask 0x01 */
	td->fe_mult = 1.0;
	return 0;
}

void fl_pmu_topdown_find(struct fl_pmu_topdown *td, char *why, size_t whylen)
{
	char line[256], vendor[64] = "";
	unsigned family = 0, model = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	memset(td, 0, sizeof *td);
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "vendor_id : %63s", vendor) == 1)
			continue;
		if (sscanf(line, "cpu family : %u", &family) == 1)
			continue;
		if (sscanf(line, "model : %u", &model) == 1)
			break;
	}
	if (f)
		fclose(f);
	if (strcmp(vendor, "GenuineIntel") == 0 && pmu_topdown_intel(td) == 0)
		return;
	if (strcmp(vendor, "AuthenticAMD") == 0 && pmu_topdown_amd(td, family, model) == 0)
		return;
	memset(td, 0, sizeof *td);
	fl_errf(why, whylen, "no top-down slot events on this CPU (%s family %u model %u)",
	        vendor[0] ? vendor : "unknown vendor", family, model);
}

void fl_pmu_close(struct fl_pmu *p)
{
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		if (p->fd[e] >= 0)
			close(p->fd[e]);
		p->fd[e] = -1;
	}
	p->ngroups = 0;
}

uint64_t fl_pmu_scale_count(uint64_t raw, uint64_t enabled_ns, uint64_t running_ns)
{
	if (running_ns == 0)
		return 0;
	if (enabled_ns <= running_ns)
		return raw;
	/* raw * enabled / running as quot * enabled + rem * enabled / running (rem < running),
	 * the second product in 128 bits: exact, and no overflow short of a 2^64 result. */
	uint64_t quot = raw / running_ns, rem = raw % running_ns;
#if defined(__SIZEOF_INT128__)
	return quot * enabled_ns + (uint64_t)((unsigned __int128)rem * enabled_ns / running_ns);
#else
	return quot * enabled_ns + (uint64_t)((long double)rem * enabled_ns / running_ns);
#endif
}

double fl_pmu_scale_factor(const struct fl_pmu_count *c)
{
	if (c->running_ns == 0)
		return 0.0;
	return (double)c->enabled_ns / (double)c->running_ns;
}

void fl_pmu_counts_init(struct fl_pmu_counts *c)
{
	memset(c, 0, sizeof *c);
	for (int e = 0; e < FL_PMU_NEVENTS; e++)
		c->ev[e].supported = true;
}

/* The largest factor behind a count: recorded by reads and sums, else its own times. */
static double pmu_count_max_scale(const struct fl_pmu_count *c)
{
	return c->max_scale > 0 ? c->max_scale : fl_pmu_scale_factor(c);
}

void fl_pmu_sum(struct fl_pmu_counts *dst, const struct fl_pmu_counts *src)
{
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		struct fl_pmu_count *d = &dst->ev[e];
		const struct fl_pmu_count *s = &src->ev[e];

		if (d->supported && !s->supported) {
			d->supported = false;
			memcpy(d->why, s->why, sizeof d->why);
		}
		d->value += s->value;
		d->raw += s->raw;
		d->enabled_ns += s->enabled_ns;
		d->running_ns += s->running_ns;
		/* the sum's enabled/running is a time-weighted mean; keep the worst read */
		double f = pmu_count_max_scale(s);
		if (f > d->max_scale)
			d->max_scale = f;
	}
	if (dst->td.name == NULL)
		dst->td = src->td;
	dst->threads += src->threads;
}

/* m = scale * num / den, or unsupported naming the missing input or the zero denominator. */
static void pmu_ratio(struct fl_pmu_metric *m, const struct fl_pmu_counts *c,
                      enum fl_pmu_event num, enum fl_pmu_event den, double scale)
{
	const struct fl_pmu_count *n = &c->ev[num], *d = &c->ev[den];

	m->value = 0.0;
	m->supported = false;
	if (!n->supported || !d->supported) {
		enum fl_pmu_event miss = n->supported ? den : num;
		int len = snprintf(m->why, sizeof m->why, "%s unsupported: %s",
		                   pmu_events[miss].name, c->ev[miss].why);
		(void)len; /* a long errno text may be cut; the event name leads */
		return;
	}
	if (d->value == 0) {
		snprintf(m->why, sizeof m->why, "no %s counted", pmu_events[den].name);
		return;
	}
	m->value = scale * (double)n->value / (double)d->value;
	m->supported = true;
	m->why[0] = '\0';
}

/* Top-down front-end bound: fe * fe_mult / (slots * slots_mult), with the formula. */
static void pmu_fe_bound(struct fl_pmu_metrics *m, const struct fl_pmu_counts *c)
{
	const struct fl_pmu_count *fe = &c->ev[FL_PMU_TD_FE], *sl = &c->ev[FL_PMU_TD_SLOTS];

	m->fe_bound_formula = c->td.name ? c->td.formula : NULL;
	if (c->td.name == NULL && fe->supported && sl->supported) {
		m->fe_bound.supported = false;
		m->fe_bound.value = 0.0;
		snprintf(m->fe_bound.why, sizeof m->fe_bound.why, "no top-down source recorded");
		return;
	}
	pmu_ratio(&m->fe_bound, c, FL_PMU_TD_FE, FL_PMU_TD_SLOTS, 1.0);
	if (m->fe_bound.supported && c->td.slots_mult > 0 && c->td.fe_mult > 0)
		m->fe_bound.value *= c->td.fe_mult / c->td.slots_mult;
}

void fl_pmu_derive(const struct fl_pmu_counts *c, struct fl_pmu_metrics *m)
{
	pmu_ratio(&m->ipc, c, FL_PMU_INSTRUCTIONS, FL_PMU_CYCLES, 1.0);
	pmu_ratio(&m->l1i_mpki, c, FL_PMU_L1I_MISSES, FL_PMU_INSTRUCTIONS, 1000.0);
	pmu_ratio(&m->itlb_mpki, c, FL_PMU_ITLB_MISSES, FL_PMU_INSTRUCTIONS, 1000.0);
	pmu_ratio(&m->branch_mpki, c, FL_PMU_BRANCH_MISSES, FL_PMU_INSTRUCTIONS, 1000.0);
	pmu_ratio(&m->branch_miss_pct, c, FL_PMU_BRANCH_MISSES, FL_PMU_BRANCHES, 100.0);
	pmu_ratio(&m->fe_stall_share, c, FL_PMU_STALLED_FRONTEND, FL_PMU_CYCLES, 1.0);
	pmu_fe_bound(m, c);

	m->max_scale = 1.0;
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		double f = pmu_count_max_scale(&c->ev[e]);
		if (c->ev[e].supported && f > m->max_scale)
			m->max_scale = f;
	}
}
