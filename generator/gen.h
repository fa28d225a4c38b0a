/* gen.h: the generator's whole model: loaded patterns, their variants and metrics, options.
 * Include expand.h first (struct gen_params is held by value). */
#include <stdint.h>

struct pattern;
struct metrics;

struct gen {
	struct gen_params gp;        /* seed, copies, #line on/off */
	const char *patterns_dir;    /* --patterns */
	const char *templates_dir;   /* --templates */
	const char *out_dir;         /* --out */
	const char *mode;            /* "asm" (clone from probes) or "c" (every copy from C) */
	const char *config_json;     /* contents of --config, or "{}" */
	const char *command;         /* the command line, for file headers */
	int quiet;                   /* no progress line */
	uint32_t sample;             /* --sample K: C shards hold only K random copies (0: all) */
	int sample_cover;            /* --sample-cover: and every variant's covering copies */
#define SAMPLE_COVER_VARIANTS 1      /* copy 0 of every variant */
#define SAMPLE_COVER_ENDS 2          /* and each constant's smallest and largest value */
#define SAMPLE_COVER_EDGES 3         /* and both sides of every value-class edge */
	struct pattern **ps;         /* patterns in index order */
	int np;
	struct variant **vs;         /* vs[p][v] */
	struct metrics **ms;         /* ms[p][v], NULL when --no-check */
};

/* One generated function: a variant and a copy index. */
struct job {
	const struct variant *v;
	uint32_t copy;
};

/* emit.c; emit_clone is clone.c */
void emit_c_shards(const struct gen *g, int nshards);
void emit_probes(const struct gen *g);
void emit_registry(const struct gen *g);
/* Clone part `part` of `parts`: assembly shards [part*nshards/parts, (part+1)*nshards/parts)
 * from the probe assembly in probes_s_dir, plus nfallback C shards for the copies that
 * cannot be cloned, plus a JSON report clone_PART.json. With objects_cc (a compiler driver)
 * each shard is also an object file written directly (obj_clone.h), and its assembly holds
 * only the copies the object templates cannot take. With probe_cc (a compiler command taking
 * -S IN -o OUT) a copy no template takes is compiled as a targeted probe (clone.c), with
 * profile_dir (or NULL) its variant's training profile beside it (configure --pgo). */
void emit_clone(const struct gen *g, const char *probes_s_dir, int nshards, int part, int parts,
		int nfallback, const char *objects_cc, const char *probe_cc,
		const char *profile_dir);

/* manifest.c */
void manifest_write(const struct gen *g, const char *path);
/* Merge the clone reports into manifest_in and write manifest_out. */
void manifest_merge_clone(const char *manifest_in, char *const *reports, int nreports,
			  const char *manifest_out);

/* progress.c-like helper in emit.c: a terminal progress line. */
void progress(const struct gen *g, const char *what, uint64_t done, uint64_t total);
