/* main.c: frontload-gen's command line: generate, clone, verify. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cli.h"
#include "expand.h"
#include "gen.h"
#include "pattern.h"
#include "probes.h"
#include "util.h"
#include "verify.h"

/* generate's and clone's flags, filled by fl_cli_parse and then copied into struct gen. */
struct gen_args {
	const char *patterns, *templates, *out, *mode, *config, *only, *sample_cover, *probes_s;
	const char *objects, *probe_cc, *profile_dir;
	uint32_t copies, shards, sample, part, parts, fallback;
	uint64_t seed;
	int no_check, no_line, quiet;
};

#define FL_CLI_OBJ struct gen_args
static const struct fl_cli_opt gen_opts[] = {
	FL_OPT_STR("patterns", patterns, "DIR", NULL, "pattern files, *.tpl, read in name "
		"order (required)"),
	FL_OPT_STR("templates", templates, "DIR", NULL, "directory holding fl_extract.h "
		"(required)"),
	FL_OPT_STR("out", out, "DIR", NULL, "output directory (required); writes "
		"DIR/registry.c, DIR/manifest.gen.json and DIR/shards/ or DIR/probes/"),
	FL_OPT_UINT("copies", copies, 1, 99999, "N", "1000", "copies of each variant"),
	FL_OPT_UINT("seed", seed, 0, UINT64_MAX, "S", "1", "seed of every per-copy constant, "
		"decimal; the same seed gives byte-identical output, another seed other "
		"constants"),
	FL_OPT_STR("mode", mode, "asm|c", "asm", "asm: write " FL_NPROBES_STR " probes per "
		"variant (DIR/probes/*.c) for the build to compile and the clone step to clone; "
		"c: write every copy as C shards (DIR/shards/shard_NNNN.c)"),
	FL_OPT_UINT("shards", shards, 1, 100000, "N", "8", "number of shards, balanced by "
		"bytes"),
	FL_OPT_STR("config", config, "FILE", NULL, "JSON object recorded by ./configure, "
		"embedded in the library (without it: {})"),
	FL_OPT_STR("only", only, "IDS", NULL, "comma-separated pattern ids to keep (e.g. "
		"P01,P13; without it: every pattern)"),
	FL_OPT_FLAG("no-check", no_check, "skip the libclang parse (no metrics in the "
		"manifest)"),
	FL_OPT_FLAG("no-line", no_line, "no #line directives in generated C"),
	FL_OPT_FLAG("quiet", quiet, "no progress line"),
	FL_OPT_UINT("sample", sample, 1, 1000000, "K", NULL, "with --mode c: shards hold only K "
		"copies chosen at random (seeded) from the whole table, for the clone-versus-C "
		"test (without it: every copy)"),
	FL_OPT_STR("sample-cover", sample_cover, "LEVEL", NULL, "with --mode c: shards hold, "
		"besides any --sample K, the copies that cover every variant at LEVEL: variants "
		"(copy 0 of each), ends (and for each per-copy constant the copies at its "
		"smallest and largest value) or edges (and the copies on each side of every "
		"value-class edge the assembly cloner checks: sign, |v| < 128, int32, uint32, "
		"0/+-1, 2^n, 2^n-1); at --copies 2 ends is every copy (without it: no cover)"),
	/* generate accepts these too, and ignores them. */
	FL_OPT_STR("probes-s", probes_s, "DIR", NULL, "assembly of the probes (PNN_vVVV_pI.s), "
		"compiled by the build (required)", .section = "options of clone only"),
	FL_OPT_UINT("part", part, 0, 9999, "I", "0", "write assembly shards [I*N/P, "
		"(I+1)*N/P) of --shards N, below --parts P"),
	FL_OPT_UINT("parts", parts, 1, 10000, "P", "1", "parts the shards are split into"),
	FL_OPT_UINT("fallback", fallback, 1, 1000, "N", "2", "C fallback shards per part for "
		"copies that cannot be cloned"),
	FL_OPT_STR("objects", objects, "CC", NULL, "clone to object code: assemble each "
		"template once with CC (-c -x assembler) and write DIR/shards/shard_NNNN.o "
		"directly; shard_NNNN.s then holds only the copies whose values do not fit the "
		"template's fields (without it: every clone is assembly text)"),
	FL_OPT_STR("probe-cc", probe_cc, "CMD", NULL, "compile a copy that no template takes "
		"as one more probe with CMD -S IN -o OUT (the probes' compiler and flags) and fit "
		"a template from it and the variant's probes, at most 4 per variant and part; "
		"and, for a variant whose end probes do not line up, compile up to 32 hull probes "
		"that widen its first template toward the other end; files in DIR/templates "
		"(without it: such copies are compiled from C)"),
	FL_OPT_STR("profile-dir", profile_dir, "DIR", NULL, "with --probe-cc: before compiling "
		"an extra probe of variant PNN_vVVV, copy DIR/PNN_vVVV.gcda to OUT's name with "
		".gcda, the file gcc -fprofile-use reads for it, so that it is laid out by the "
		"same training profile as the build's probes (configure --pgo)"),
};
#undef FL_CLI_OBJ
static const struct fl_cli gen_cli = {
	.opts = gen_opts, .nopts = sizeof(gen_opts) / sizeof(gen_opts[0]),
};

static const char usage_head[] =
"usage: frontload-gen generate [options]   expand patterns into C shards or probes\n"
"       frontload-gen clone [options]      clone probe assembly into assembly shards\n"
"                                          (or, with --objects, object shards)\n"
"       frontload-gen verify --lib SO[,SO...] --manifest IN --out OUT [--clone-report F ...]\n"
"       frontload-gen --help\n"
"\n"
"frontload-gen expands extractor pattern templates (patterns/*.tpl) into structural\n"
"variants x copies of unique C functions, checks every variant with libclang, and writes\n"
"a registry and manifest.json. The 27-pattern taxonomy and its variant weights come from\n"
"the public DCPerf FeedSim v2 study (PR #704); see patterns/README.md.\n"
"\n"
"options of generate and clone (defaults in brackets):\n";

static const char usage_tail[] =
"\n"
"template syntax (patterns/README.md has the full text):\n"
"  header:  @pattern PNN name | @title text | @variants N | @lines LO HI |\n"
"           @knob NAME LO HI (inclusive) | @require EXPR | @body\n"
"  body:    @for V LO HI ... @end (V = LO..HI-1) | @if E / @elif E / @else / @end |\n"
"           @let V = E | @# comment\n"
"  inline:  {{E}} value of E | $K(LO, HI[, odd]) per-copy constant |\n"
"           $S(LO, HI) per-variant constant\n"
"  E is a C-like 64-bit integer expression over knobs, @let/@for names and `variant`.\n"
"\n"
"errors: a template error or a libclang error-severity diagnostic stops generation with\n"
"file:line and the variant; exit status 1; generate and clone exit 2 on a usage error.\n"
"verify exits 1 when two generated functions have identical code (relocations masked), 2\n"
"on a usage error.\n";

static const struct fl_cli verify_cli;

static void usage(FILE *fp)
{
	fputs(usage_head, fp);
	fl_cli_help(fp, &gen_cli);
	fputs("\noptions of verify:\n", fp);
	fl_cli_help(fp, &verify_cli);
	fputs(usage_tail, fp);
}

/* A usage error of generate or clone: one line, exit 2 (as for a flag the table refuses). */
static void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("frontload-gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(" (see --help)\n", stderr);
	va_end(ap);
	exit(2);
}

/* Pairwise distinct structural signatures across patterns (patterns/README.md rule 6). */
static void check_signatures(const struct gen *g)
{
	for (int a = 0; a < g->np; a++)
		for (int b = a + 1; b < g->np; b++)
			if (!strcmp(g->ms[a][0].signature, g->ms[b][0].signature))
				fatal("patterns %s and %s have the same structural signature \"%s\": "
				      "one of them does not describe a distinct shape",
				      g->ps[a]->id, g->ps[b]->id, g->ms[a][0].signature);
}

static void load_all(struct gen *g, const char *only, int check)
{
	g->ps = pattern_load_dir(g->patterns_dir, only, &g->np);
	g->vs = xcalloc((size_t)g->np, sizeof(*g->vs));
	if (check)
		g->ms = xcalloc((size_t)g->np, sizeof(*g->ms));
	for (int p = 0; p < g->np; p++) {
		const struct pattern *pt = g->ps[p];
		g->vs[p] = expand_pattern(pt, &g->gp);
		for (int v = 0; v < pt->variants; v++) {
			int l = g->vs[p][v].sk.lines;
			if (pt->lines_hi && (l < pt->lines_lo || l > pt->lines_hi))
				warn("%s: variant %d has %d lines, outside @lines %d %d", pt->path, v, l,
				     pt->lines_lo, pt->lines_hi);
		}
		if (check) {
			g->ms[p] = xcalloc((size_t)pt->variants, sizeof(**g->ms));
			check_pattern(g->vs[p], pt->variants, &g->gp, g->templates_dir, g->ms[p]);
			progress(g, "patterns checked", (uint64_t)p + 1, (uint64_t)g->np);
		}
	}
	if (check && !only)
		check_signatures(g);
}

/* verify's options. --clone-report may be given once per clone part: the table takes it
 * as a flag handed to verify_take_report each time (cli.h's fwd), not as a field. */
struct verify_args {
	const char *lib, *manifest, *out;
	char **reports;
	int nreports;
};

#define FL_CLI_OBJ struct verify_args
static const struct fl_cli_opt verify_opts[] = {
	FL_OPT_STR("lib", lib, "SO[,SO...]", NULL, "the extractor library to check, or the "
		"parts of a split one, comma-separated (required)"),
	FL_OPT_STR("manifest", manifest, "IN", NULL, "manifest.gen.json from generate "
		"(required)"),
	FL_OPT_STR("out", out, "OUT", NULL, "the verified manifest to write (required)"),
};
#undef FL_CLI_OBJ

/* A table of one repeatable flag: only its name and value syntax are used. */
struct verify_report {
	const char *path;
};
#define FL_CLI_OBJ struct verify_report
static const struct fl_cli_opt verify_repeat_opts[] = {
	FL_OPT_STR("clone-report", path, "F", NULL, "a clone part's report, merged into the "
		"manifest first"),
};
#undef FL_CLI_OBJ
static const struct fl_cli verify_repeat_cli = { .opts = verify_repeat_opts, .nopts = 1 };

static int verify_take_report(void *obj, const struct fl_cli_opt *o, const char *val,
	char *err, size_t errlen)
{
	struct verify_args *v = obj;

	(void)o, (void)err, (void)errlen;
	v->reports = xrealloc(v->reports, (size_t)(v->nreports + 1) * sizeof(*v->reports));
	v->reports[v->nreports++] = (char *)val;
	return 0;
}

static const struct fl_cli verify_cli = {
	.opts = verify_opts, .nopts = sizeof(verify_opts) / sizeof(verify_opts[0]),
	.fwd = &verify_repeat_cli, .fwd_title = "repeatable",
	.fwd_take = verify_take_report,
};

static int cmd_verify(int argc, char **argv)
{
	struct verify_args v;
	char err[512];

	memset(&v, 0, sizeof(v));
	int prc = fl_cli_parse(&verify_cli, argc, argv, &v, err, sizeof(err));
	if (prc == FL_CLI_HELP) {
		usage(stdout);
		return 0;
	}
	if (prc != 0)
		usage_error("verify: %s", err);
	if (!v.lib || !v.manifest || !v.out)
		usage_error("verify: --lib, --manifest and --out are required");
	const char *src = v.manifest;
	struct buf tmp = {0};
	if (v.nreports) {
		buf_printf(&tmp, "%s.clone.tmp", v.out);
		manifest_merge_clone(v.manifest, v.reports, v.nreports, tmp.p);
		src = tmp.p;
	}
	int rc = verify_library(v.lib, src, v.out, err, sizeof(err));
	if (tmp.p)
		remove(tmp.p);
	if (rc < 0)
		fatal("verify: %s", err);
	if (rc > 0)
		fprintf(stderr, "frontload-gen: verify: duplicate functions in %s (see %s)\n",
			v.lib, v.out);
	free(v.reports);
	buf_free(&tmp);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (strcmp(cmd, "generate") && strcmp(cmd, "clone")) {
		fprintf(stderr, "frontload-gen: unknown command \"%s\"\n", cmd);
		usage(stderr);
		return 2;
	}

	/* argv[1] is the command: the table parses what follows it. */
	struct gen_args a;
	char err[512];
	memset(&a, 0, sizeof(a));
	int prc = fl_cli_parse(&gen_cli, argc - 1, argv + 1, &a, err, sizeof(err));
	if (prc == FL_CLI_HELP) {
		usage(stdout);
		return 0;
	}
	if (prc != 0)
		usage_error("%s", err);
	if (strcmp(a.mode, "asm") && strcmp(a.mode, "c"))
		usage_error("--mode: expected asm or c, got \"%s\"", a.mode);
	int cover = 0;
	if (a.sample_cover) {
		if (!strcmp(a.sample_cover, "variants"))
			cover = SAMPLE_COVER_VARIANTS;
		else if (!strcmp(a.sample_cover, "ends"))
			cover = SAMPLE_COVER_ENDS;
		else if (!strcmp(a.sample_cover, "edges"))
			cover = SAMPLE_COVER_EDGES;
		else
			usage_error("--sample-cover: expected variants, ends or edges, got \"%s\"",
				    a.sample_cover);
	}
	if (!a.patterns || !a.templates || !a.out)
		usage_error("--patterns, --templates and --out are required");
	if (a.part >= a.parts)
		usage_error("--part %u must be below --parts %u", a.part, a.parts);
	if (!strcmp(cmd, "clone") && !a.probes_s)
		usage_error("clone: --probes-s is required");

	struct gen g = {
		.gp = {.seed = a.seed, .copies = a.copies, .line_directives = !a.no_line},
		.patterns_dir = a.patterns, .templates_dir = a.templates, .out_dir = a.out,
		.mode = a.mode, .quiet = a.quiet, .sample = a.sample, .sample_cover = cover,
	};
	struct buf command = {0};
	for (int i = 0; i < argc; i++)
		buf_printf(&command, "%s%s", i ? " " : "", i ? argv[i] : "frontload-gen");
	g.command = command.p;
	char *cfg_text = NULL;
	if (a.config) {
		cfg_text = read_file(a.config, NULL);
		if (!cfg_text)
			fatal("cannot read --config %s:", a.config);
	}
	g.config_json = cfg_text ? cfg_text : "{}";
	make_dirs(g.out_dir);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!strcmp(cmd, "clone")) {
		/* The clone step re-expands (cheap) but needs no libclang pass: generate did it. */
		load_all(&g, a.only, 0);
		emit_clone(&g, a.probes_s, (int)a.shards, (int)a.part, (int)a.parts,
			   (int)a.fallback, a.objects, a.probe_cc, a.profile_dir);
	} else {
		load_all(&g, a.only, !a.no_check);
		struct buf path = {0};
		buf_printf(&path, "%s/manifest.gen.json", g.out_dir);
		manifest_write(&g, path.p);
		emit_registry(&g);
		if (!strcmp(g.mode, "c"))
			emit_c_shards(&g, (int)a.shards);
		else
			emit_probes(&g);
		buf_free(&path);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!g.quiet) {
		uint64_t nfn = 0;
		for (int p = 0; p < g.np; p++)
			nfn += (uint64_t)g.ps[p]->variants * g.gp.copies;
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		fprintf(stderr, "frontload-gen %s: %d patterns, %llu functions, %.2f s\n", cmd, g.np,
			(unsigned long long)nfn, s);
	}
	free(cfg_text);
	buf_free(&command);
	return 0;
}
