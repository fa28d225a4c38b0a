/* pmu.c: perf_event_open counter groups for one thread, multiplex scaling, sums, metrics. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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
};

static void pmu_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pmu_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

const char *fl_pmu_event_name(enum fl_pmu_event e)
{
	if ((unsigned)e >= FL_PMU_NEVENTS)
		return "unknown";
	return pmu_events[e].name;
}

/* perf_event_open for event e of thread tid, leading a new group (group_fd = -1, opened
 * disabled) or joining group_fd (follows its leader's enable state). */
static int pmu_open_one(enum fl_pmu_event e, pid_t tid, int group_fd, bool user_only)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = pmu_events[e].type;
	attr.config = pmu_events[e].config;
	attr.read_format = PMU_READ_FORMAT;
	attr.disabled = group_fd < 0;
	attr.exclude_kernel = user_only;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
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
	pmu_why(p->why[e], sizeof p->why[e], "perf_event_open(%s): %s", pmu_events[e].name,
	        strerror(err));
}

int fl_pmu_open(struct fl_pmu *p, pid_t tid, char *why, size_t whylen)
{
	memset(p, 0, sizeof *p);
	for (int e = 0; e < FL_PMU_NEVENTS; e++)
		p->fd[e] = -1;
	p->tid = tid;
	pmu_why(why, whylen, "%s", "");

	/* Kernel counting is refused under perf_event_paranoid >= 2 for the unprivileged:
	 * count user space only then, and say so. */
	int fd = pmu_open_one(FL_PMU_INSTRUCTIONS, tid, -1, false);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		p->user_only = true;
		fd = pmu_open_one(FL_PMU_INSTRUCTIONS, tid, -1, true);
	}
	if (fd < 0 || pmu_adopt(p, FL_PMU_INSTRUCTIONS, fd, 0) != 0) {
		pmu_why(why, whylen,
		        "hardware counters unsupported on this host: perf_event_open(instructions): "
		        "%s",
		        strerror(errno));
		fl_pmu_close(p);
		return -1;
	}
	p->leader[0] = fd;
	p->ngroups = 1;
	for (int e = FL_PMU_INSTRUCTIONS + 1; e < FL_PMU_NEVENTS; e++)
		pmu_open_optional(p, (enum fl_pmu_event)e);
	return 0;
}

/* One ioctl on every group leader (with PERF_IOC_FLAG_GROUP: the whole group). */
static int pmu_ioctl_groups(struct fl_pmu *p, unsigned long req, const char *what, char *why,
                            size_t whylen)
{
	for (unsigned g = 0; g < p->ngroups; g++) {
		if (ioctl(p->leader[g], req, PERF_IOC_FLAG_GROUP) != 0) {
			pmu_why(why, whylen, "ioctl(%s): %s", what, strerror(errno));
			return -1;
		}
	}
	if (p->ngroups == 0) {
		pmu_why(why, whylen, "ioctl(%s): counters not open", what);
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

int fl_pmu_reset(struct fl_pmu *p, char *why, size_t whylen)
{
	return pmu_ioctl_groups(p, PERF_EVENT_IOC_RESET, "PERF_EVENT_IOC_RESET", why, whylen);
}

/* Mark every event of out unsupported with reason r. */
static void pmu_all_unsupported(struct fl_pmu_counts *out, const char *r)
{
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		out->ev[e].supported = false;
		snprintf(out->ev[e].why, sizeof out->ev[e].why, "%s", r);
	}
}

int fl_pmu_read(struct fl_pmu *p, struct fl_pmu_counts *out, char *why, size_t whylen)
{
	/* PERF_FORMAT_GROUP layout: nr, time_enabled, time_running, then {value, id} x nr. */
	uint64_t buf[3 + 2 * FL_PMU_NEVENTS];

	memset(out, 0, sizeof *out);
	out->threads = 1;
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		if (p->fd[e] < 0) {
			snprintf(out->ev[e].why, sizeof out->ev[e].why, "%s",
			         p->why[e][0] ? p->why[e] : "not opened");
			continue;
		}
		snprintf(out->ev[e].why, sizeof out->ev[e].why, "missing from its group's read");
	}
	for (unsigned g = 0; g < p->ngroups; g++) {
		ssize_t n = read(p->leader[g], buf, sizeof buf);
		if (n < 0 || (size_t)n < 3 * sizeof buf[0] ||
		    (size_t)n < (3 + 2 * buf[0]) * sizeof buf[0]) {
			if (n < 0)
				pmu_why(why, whylen, "read(perf group %u): %s", g, strerror(errno));
			else
				pmu_why(why, whylen, "read(perf group %u): short read (%zd bytes)", g,
				        n);
			pmu_all_unsupported(out, "group read failed");
			return -1;
		}
		uint64_t enabled = buf[1], running = buf[2];
		for (uint64_t i = 0; i < buf[0]; i++) {
			uint64_t value = buf[3 + 2 * i], id = buf[4 + 2 * i];
			for (int e = 0; e < FL_PMU_NEVENTS; e++) {
				if (p->fd[e] < 0 || p->group[e] != g || p->id[e] != id)
					continue;
				struct fl_pmu_count *c = &out->ev[e];
				c->raw = value;
				c->enabled_ns = enabled;
				c->running_ns = running;
				c->value = fl_pmu_scale_count(value, enabled, running);
				c->supported = running > 0;
				snprintf(c->why, sizeof c->why, "%s",
				         running > 0 ? ""
				                     : "never on the PMU (not enabled, or no free "
				                       "counters for its group)");
			}
		}
	}
	return 0;
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
	}
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

void fl_pmu_derive(const struct fl_pmu_counts *c, struct fl_pmu_metrics *m)
{
	pmu_ratio(&m->ipc, c, FL_PMU_INSTRUCTIONS, FL_PMU_CYCLES, 1.0);
	pmu_ratio(&m->l1i_mpki, c, FL_PMU_L1I_MISSES, FL_PMU_INSTRUCTIONS, 1000.0);
	pmu_ratio(&m->itlb_mpki, c, FL_PMU_ITLB_MISSES, FL_PMU_INSTRUCTIONS, 1000.0);
	pmu_ratio(&m->branch_mpki, c, FL_PMU_BRANCH_MISSES, FL_PMU_INSTRUCTIONS, 1000.0);
	pmu_ratio(&m->branch_miss_pct, c, FL_PMU_BRANCH_MISSES, FL_PMU_BRANCHES, 100.0);
	pmu_ratio(&m->fe_stall_share, c, FL_PMU_STALLED_FRONTEND, FL_PMU_CYCLES, 1.0);

	m->max_scale = 1.0;
	for (int e = 0; e < FL_PMU_NEVENTS; e++) {
		double f = fl_pmu_scale_factor(&c->ev[e]);
		if (c->ev[e].supported && f > m->max_scale)
			m->max_scale = f;
	}
}
