/* cpumodel.h: CPU cache models of the simulated path (each with the source of its
 * figures) and the geometry handed to valgrind, fitted to what it can simulate. */
#ifndef FL_CPUMODEL_H
#define FL_CPUMODEL_H

#include <stddef.h>

#include <jansson.h>

/* One cache level: bytes, ways, line bytes. */
struct fm_cache {
	unsigned size, assoc, line;
};

/* The three levels valgrind simulates: I1, D1 and its last level (LL: the core's L2). */
struct fm_geo {
	struct fm_cache i1, d1, ll;
};

/* A CPU model: its caches as documented, and the source of the figures. */
struct fm_cpu {
	const char *name;       /* --cpu value */
	const char *title;      /* "AMD Zen 4 (Genoa, Bergamo = Zen 4c)" */
	struct fm_cache i1, d1, ll;
	const char *source;     /* where the geometry comes from */
	const char *note;       /* caveat, or NULL */
};

/* The CPU model named name, or NULL. fm_cpu_names lists them ("zen4, zen5, ..."); the
 * default model is zen4. */
const struct fm_cpu *fm_cpu_find(const char *name);
const struct fm_cpu *fm_cpu_default(void);
const char *fm_cpu_names(void);

/* valgrind needs size / (assoc * line) to be a power of two: got = want when it is, else
 * the nearest representable geometry (same line; size kept and assoc moved when a nearby
 * assoc works, else assoc kept and size moved), with note saying what changed (note = ""
 * when nothing did). Returns 0, or -1 when nothing is representable (zero fields). */
int fm_cache_fit(const struct fm_cache *want, struct fm_cache *got, char *note, size_t len);

/* "32 KiB 8-way 64 B" into buf. */
char *fm_cache_str(const struct fm_cache *c, char *buf, size_t len);

/* Parse "SIZE,ASSOC,LINE" (bytes, ways, bytes; valgrind's --I1 syntax). Returns 0 or -1. */
int fm_cache_parse(const char *s, struct fm_cache *c);

/* Set g from CPU model cpu and optional "S,A,L" overrides, fitted to what valgrind can
 * simulate; *notes gets a JSON array of what was changed and caveats. Returns 0, or -1
 * (message printed) on an unknown model or bad override. */
int fm_geometry(struct fm_geo *g, const char *cpu, const char *i1, const char *d1,
	const char *ll, json_t **notes);

#endif
