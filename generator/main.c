/* main.c: frontload-gen's command line: generate, clone, verify. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "expand.h"
#include "gen.h"
#include "pattern.h"
#include "probes.h"
#include "util.h"
#include "verify.h"

static const char usage[] =
"usage: frontload-gen generate [options]   expand patterns into C shards or probes\n"
"       frontload-gen clone [options]      clone probe assembly into assembly shards\n"
"       frontload-gen verify --lib SO --manifest IN --out OUT [--clone-report F ...]\n"
"       frontload-gen --help\n"
"\n"
"frontload-gen expands extractor pattern templates (patterns/*.tpl) into structural\n"
"variants x copies of unique C functions, checks every variant with libclang, and writes\n"
"a registry and manifest.json. The 27-pattern taxonomy and its variant weights come from\n"
"the public DCPerf FeedSim v2 study (PR #704); see patterns/README.md.\n"
"\n"
"options of generate and clone:\n"
"  --patterns DIR     pattern files, *.tpl, read in name order (required)\n"
"  --templates DIR    directory holding fl_extract.h (required)\n"
"  --out DIR          output directory (required); writes DIR/registry.c,\n"
"                     DIR/manifest.gen.json and DIR/shards/ or DIR/probes/\n"
"  --copies N         copies of each variant, 1..99999 (default 1000)\n"
"  --seed S           seed of every per-copy constant (default 1); the same seed gives\n"
"                     byte-identical output, another seed other constants\n"
"  --mode asm|c       asm: write " FL_NPROBES_STR " probes per variant (DIR/probes/*.c) for the\n"
"                     build to compile and the clone step to clone; c: write every copy as C\n"
"                     shards (DIR/shards/shard_NNNN.c). Default asm.\n"
"  --shards N         number of shards, balanced by bytes (default 8)\n"
"  --config FILE      JSON object recorded by ./configure, embedded in the library\n"
"  --only IDS         comma-separated pattern ids to keep (e.g. P01,P13)\n"
"  --no-check         skip the libclang parse (no metrics in the manifest)\n"
"  --no-line          no #line directives in generated C\n"
"  --quiet            no progress line\n"
"  --sample K         with --mode c: shards hold only K copies chosen at random (seeded)\n"
"                     from the whole table, for the clone-versus-C test\n"
"  --sample-cover L   with --mode c: shards hold, besides any --sample K, the copies\n"
"                     that cover every variant at level L: variants (copy 0 of each),\n"
"                     ends (and for each per-copy constant the copies at its smallest\n"
"                     and largest value) or edges (and the copies on each side of every\n"
"                     value-class edge the assembly cloner checks: sign, |v| < 128,\n"
"                     int32, uint32, 0/+-1, 2^n, 2^n-1); at --copies 2 ends is every copy\n"
"options of clone only:\n"
"  --probes-s DIR     assembly of the probes (PNN_vVVV_pI.s), compiled by the build\n"
"  --part I --parts P write assembly shards [I*N/P, (I+1)*N/P) of --shards N\n"
"  --fallback N       C fallback shards per part for copies that cannot be cloned (2)\n"
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
"file:line and the variant; exit status 1. verify exits 1 when two generated functions\n"
"have identical code (relocations masked), 2 on a usage error.\n";

static long parse_num(const char *flag, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (errno || *end || end == s || v < lo || v > hi)
		fatal("%s: expected an integer in %ld..%ld, got \"%s\"", flag, lo, hi, s);
	return v;
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

static int cmd_verify(int argc, char **argv)
{
	const char *lib = NULL, *in = NULL, *out = NULL;
	char **reports = NULL;
	int nreports = 0;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			fatal("verify: %s needs a value", argv[i]);
		if (!strcmp(argv[i], "--lib"))
			lib = argv[++i];
		else if (!strcmp(argv[i], "--manifest"))
			in = argv[++i];
		else if (!strcmp(argv[i], "--out"))
			out = argv[++i];
		else if (!strcmp(argv[i], "--clone-report")) {
			reports = xrealloc(reports, (size_t)(nreports + 1) * sizeof(*reports));
			reports[nreports++] = argv[++i];
		} else
			fatal("verify: unknown option %s (see --help)", argv[i]);
	}
	if (!lib || !in || !out)
		fatal("verify: --lib, --manifest and --out are required");
	const char *src = in;
	struct buf tmp = {0};
	if (nreports) {
		buf_printf(&tmp, "%s.clone.tmp", out);
		manifest_merge_clone(in, reports, nreports, tmp.p);
		src = tmp.p;
	}
	char err[512];
	int rc = verify_library(lib, src, out, err, sizeof(err));
	if (tmp.p)
		remove(tmp.p);
	if (rc < 0)
		fatal("verify: %s", err);
	if (rc > 0)
		fprintf(stderr, "frontload-gen: verify: duplicate functions in %s (see %s)\n", lib, out);
	free(reports);
	buf_free(&tmp);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (strcmp(cmd, "generate") && strcmp(cmd, "clone")) {
		fprintf(stderr, "frontload-gen: unknown command \"%s\"\n%s", cmd, usage);
		return 2;
	}

	struct gen g = {.gp = {.seed = 1, .copies = 1000, .line_directives = 1}, .mode = "asm"};
	const char *only = NULL, *config = NULL, *probes_s = NULL;
	int check = 1, shards = 8, part = 0, parts = 1, fallback = 2;
	static const struct option opts[] = {
		{"patterns", required_argument, 0, 'p'}, {"templates", required_argument, 0, 't'},
		{"out", required_argument, 0, 'o'}, {"copies", required_argument, 0, 'n'},
		{"seed", required_argument, 0, 's'}, {"mode", required_argument, 0, 'm'},
		{"shards", required_argument, 0, 'S'}, {"config", required_argument, 0, 'c'},
		{"only", required_argument, 0, 'O'}, {"no-check", no_argument, 0, 'C'},
		{"no-line", no_argument, 0, 'L'}, {"quiet", no_argument, 0, 'q'},
		{"probes-s", required_argument, 0, 'P'}, {"part", required_argument, 0, 'i'},
		{"parts", required_argument, 0, 'I'}, {"fallback", required_argument, 0, 'F'},
		{"sample", required_argument, 0, 'k'}, {"sample-cover", required_argument, 0, 'K'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	struct buf command = {0};
	for (int i = 0; i < argc; i++)
		buf_printf(&command, "%s%s", i ? " " : "", i ? argv[i] : "frontload-gen");
	g.command = command.p;
	optind = 2;
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		switch (c) {
		case 'p': g.patterns_dir = optarg; break;
		case 't': g.templates_dir = optarg; break;
		case 'o': g.out_dir = optarg; break;
		case 'n': g.gp.copies = (uint32_t)parse_num("--copies", optarg, 1, 99999); break;
		case 's': {
			char *end;
			errno = 0;
			g.gp.seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg)
				fatal("--seed: expected an unsigned integer, got \"%s\"", optarg);
			break;
		}
		case 'm':
			if (strcmp(optarg, "asm") && strcmp(optarg, "c"))
				fatal("--mode: expected asm or c, got \"%s\"", optarg);
			g.mode = optarg;
			break;
		case 'S': shards = (int)parse_num("--shards", optarg, 1, 100000); break;
		case 'c': config = optarg; break;
		case 'O': only = optarg; break;
		case 'C': check = 0; break;
		case 'L': g.gp.line_directives = 0; break;
		case 'q': g.quiet = 1; break;
		case 'P': probes_s = optarg; break;
		case 'i': part = (int)parse_num("--part", optarg, 0, 9999); break;
		case 'I': parts = (int)parse_num("--parts", optarg, 1, 10000); break;
		case 'F': fallback = (int)parse_num("--fallback", optarg, 1, 1000); break;
		case 'k': g.sample = (uint32_t)parse_num("--sample", optarg, 1, 1000000); break;
		case 'K':
			if (!strcmp(optarg, "variants"))
				g.sample_cover = SAMPLE_COVER_VARIANTS;
			else if (!strcmp(optarg, "ends"))
				g.sample_cover = SAMPLE_COVER_ENDS;
			else if (!strcmp(optarg, "edges"))
				g.sample_cover = SAMPLE_COVER_EDGES;
			else
				fatal("--sample-cover: expected variants, ends or edges, got \"%s\"", optarg);
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fprintf(stderr, "%s", usage); return 2;
		}
	}
	if (optind < argc)
		fatal("unexpected argument \"%s\" (see --help)", argv[optind]);
	if (!g.patterns_dir || !g.templates_dir || !g.out_dir)
		fatal("--patterns, --templates and --out are required (see --help)");
	if (part >= parts)
		fatal("--part %d must be below --parts %d", part, parts);
	char *cfg_text = NULL;
	if (config) {
		cfg_text = read_file(config, NULL);
		if (!cfg_text)
			fatal("cannot read --config %s:", config);
	}
	g.config_json = cfg_text ? cfg_text : "{}";
	make_dirs(g.out_dir);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!strcmp(cmd, "clone")) {
		if (!probes_s)
			fatal("clone: --probes-s is required");
		/* The clone step re-expands (cheap) but needs no libclang pass: generate did it. */
		load_all(&g, only, 0);
		emit_clone(&g, probes_s, shards, part, parts, fallback);
	} else {
		load_all(&g, only, check);
		struct buf path = {0};
		buf_printf(&path, "%s/manifest.gen.json", g.out_dir);
		manifest_write(&g, path.p);
		emit_registry(&g);
		if (!strcmp(g.mode, "c"))
			emit_c_shards(&g, shards);
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
