/* meter.c: per-thread meters (stage CPU clock and PMU group) and their sums over pools. */
#include "meter.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

/* Every event of c unsupported, saying why. */
static void meter_unsupported(struct fl_pmu_counts *c, const char *why)
{
	memset(c, 0, sizeof(*c));
	for (int e = 0; e < FL_PMU_NEVENTS; e++)
		snprintf(c->ev[e].why, sizeof(c->ev[e].why), "%s", why);
}

void fl_meter_init(struct fl_meter *m, const struct fl_meter_config *cfg, int timed)
{
	memset(m, 0, sizeof(*m));
	m->cfg = cfg;
	m->timed = timed;
	m->clk.fd = -1;
	m->clk.method = FL_CPUTIME_CLOCK_GETTIME;
	m->clock_method = FL_CPUTIME_CLOCK_GETTIME;
	snprintf(m->pmu_why, sizeof(m->pmu_why), "%s", cfg == NULL ? "no meter configured" :
		cfg->pmu ? "thread not started" : "disabled (--pmu off)");
	meter_unsupported(&m->final, m->pmu_why);
	sem_init(&m->ready, 0, 0);
	m->inited = 1;
}

int fl_meter_start(struct fl_meter *m)
{
	const struct fl_meter_config *cfg = m->cfg;
	char why[FL_PMU_WHY_LEN];

	if (cfg != NULL && m->timed) {
		if (fl_cputime_open(&m->clk, cfg->clock, m->clock_why, sizeof(m->clock_why)) != 0) {
			snprintf(m->err, sizeof(m->err), "--cpu-clock %s: %s",
				fl_cputime_method_name(cfg->clock), m->clock_why);
			m->rc = -1;
		}
		m->clock_method = m->clk.method;
		if (cfg->clock == FL_CPUTIME_CLOCK_GETTIME)
			snprintf(m->clock_why, sizeof(m->clock_why), "not tried (--cpu-clock "
				"clock_gettime)");
	}
	if (cfg != NULL && cfg->pmu && m->rc == 0) {
		if (fl_pmu_open(&m->pmu, 0, m->pmu_why, sizeof(m->pmu_why)) == 0) {
			if (fl_pmu_enable(&m->pmu, why, sizeof(why)) == 0) {
				m->pmu_open = 1;
			} else {
				snprintf(m->pmu_why, sizeof(m->pmu_why), "%s", why);
				fl_pmu_close(&m->pmu);
			}
		}
		meter_unsupported(&m->final, m->pmu_open ? "thread still running" : m->pmu_why);
	}
	sem_post(&m->ready);
	return m->rc;
}

int fl_meter_wait(struct fl_meter *m, char *err, size_t errlen)
{
	while (sem_wait(&m->ready) != 0 && errno == EINTR)
		;
	if (m->rc != 0)
		snprintf(err, errlen, "%s", m->err);
	return m->rc;
}

uint64_t fl_meter_cpu_ns(void *arg)
{
	struct fl_meter *m = arg;

	return fl_cputime_ns(&m->clk);
}

void fl_meter_exit(struct fl_meter *m)
{
	char why[FL_PMU_WHY_LEN];

	if (m->pmu_open && fl_pmu_read(&m->pmu, &m->final, why, sizeof(why)) != 0)
		meter_unsupported(&m->final, why);
	__atomic_store_n(&m->exited, 1, __ATOMIC_RELEASE);
}

void fl_meter_close(struct fl_meter *m)
{
	if (!m->inited)
		return;
	fl_cputime_close(&m->clk);
	if (m->pmu_open)
		fl_pmu_close(&m->pmu);
	m->pmu_open = 0;
	sem_destroy(&m->ready);
	m->inited = 0;
}

void fl_meter_sum_init(struct fl_meter_sum *s)
{
	memset(s, 0, sizeof(*s));
	meter_unsupported(&s->counts, "no threads in this pool");
}

/* Counts into a sum: the first thread's replace the empty sum's "no threads". */
static void meter_sum_counts(struct fl_meter_sum *s, const struct fl_pmu_counts *c)
{
	if (s->threads == 0)
		s->counts = *c;
	else
		fl_pmu_sum(&s->counts, c);
}

void fl_meter_sum_add(struct fl_meter_sum *s, struct fl_meter *m)
{
	struct fl_pmu_counts c;
	char why[FL_PMU_WHY_LEN];

	if (__atomic_load_n(&m->exited, __ATOMIC_ACQUIRE) || !m->pmu_open)
		c = m->final;
	else if (fl_pmu_read(&m->pmu, &c, why, sizeof(why)) != 0)
		meter_unsupported(&c, why);
	meter_sum_counts(s, &c);
	s->threads++;
	if (m->timed && m->cfg != NULL) {
		if (m->clock_method == FL_CPUTIME_PERF_MMAP)
			s->clock_perf_mmap++;
		else
			s->clock_gettime++;
		if (s->clock_why[0] == '\0')
			snprintf(s->clock_why, sizeof(s->clock_why), "%s", m->clock_why);
	}
	if (m->pmu_open) {
		s->pmu_threads++;
		s->user_only |= m->pmu.user_only;
	} else if (s->pmu_why[0] == '\0') {
		snprintf(s->pmu_why, sizeof(s->pmu_why), "%s", m->pmu_why);
	}
}

void fl_meter_sum_merge(struct fl_meter_sum *dst, const struct fl_meter_sum *src)
{
	if (src->threads == 0)
		return;
	meter_sum_counts(dst, &src->counts);
	dst->threads += src->threads;
	dst->clock_perf_mmap += src->clock_perf_mmap;
	dst->clock_gettime += src->clock_gettime;
	if (dst->clock_why[0] == '\0')
		snprintf(dst->clock_why, sizeof(dst->clock_why), "%s", src->clock_why);
	dst->pmu_threads += src->pmu_threads;
	dst->user_only |= src->user_only;
	if (dst->pmu_why[0] == '\0')
		snprintf(dst->pmu_why, sizeof(dst->pmu_why), "%s", src->pmu_why);
}
