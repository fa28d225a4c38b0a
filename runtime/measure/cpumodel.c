/* cpumodel.c: the CPU cache models of the simulated path (figures from each vendor's
 * optimization guide or TRM, named in the table), and geometries valgrind can simulate. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cpumodel.h"
#include "mutil.h"

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

const struct fm_cpu *fm_cpu_default(void)
{
	return &fm_cpus[0];
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

int fm_geometry(struct fm_geo *g, const char *cpu, const char *i1, const char *d1,
	const char *ll, json_t **notes_out)
{
	const struct fm_cpu *c = fm_cpu_find(cpu);
	struct fm_cache want[3];
	struct fm_cache *got[3] = { &g->i1, &g->d1, &g->ll };
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
