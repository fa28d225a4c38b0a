/* profile.h: the leaf's CPU profile in production's categories (perf record -e cpu-clock).
 *
 * DCPerf compares FeedSim with production by sorting hot functions into categories
 * (feature extraction, ranking/prediction, compression, encryption, ...). This does the
 * same for samples of the running leaf: `perf record -e cpu-clock` (a software event, so
 * it works without hardware counters) over the measured window, then `perf script`, and
 * each sample's symbol, object (dso) and thread name go through the rules of a data file
 * (runtime/data/profile_categories.txt): the first rule whose conditions all match names
 * the category; no match is "other". Kernel samples are included when perf may see them
 * (root, or kernel.perf_event_paranoid <= 1); whether they were is reported.
 *
 * Rules file: one rule a line, "CATEGORY COND..."; each COND is sym=GLOB, dso=GLOB (the
 * object's basename; "[kernel.kallsyms]" for the kernel) or comm=GLOB (thread name),
 * fnmatch(3) globs; '#' starts a comment. Errors name the file and line.
 */
#ifndef FL_PROFILE_H
#define FL_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum fm_prof_cat {
	FM_PROF_EXTRACT,   /* feature extraction */
	FM_PROF_STORY,     /* story processing */
	FM_PROF_RANK,      /* ranking/prediction */
	FM_PROF_CRYPTO,    /* encryption */
	FM_PROF_COMPRESS,  /* compression */
	FM_PROF_RPC,       /* RPC IO and framing */
	FM_PROF_DECODE,    /* decode */
	FM_PROF_REPLY,     /* reply */
	FM_PROF_KNET,      /* kernel network stack */
	FM_PROF_OTHER,     /* everything else */
	FM_PROF_N
};

/* "feature_extraction", ... (the rules file's names) and "feature extraction", ... */
const char *fm_prof_cat_id(enum fm_prof_cat c);
const char *fm_prof_cat_label(enum fm_prof_cat c);

/* The 95% interval of a share of k samples in n, in percent (Wilson score interval: the
 * samples taken as independent draws, which periodic sampling of a steady load roughly
 * is). *lo = *hi = NAN when n is 0. */
void fm_prof_share_ci95(uint64_t k, uint64_t n, double *lo, double *hi);

#define FM_PROF_PAT 96     /* bytes of one glob */
#define FM_PROF_CONDS 3    /* conditions of one rule */

struct fm_prof_rule {
	enum fm_prof_cat cat;
	int ncond;
	char field[FM_PROF_CONDS];           /* 's' sym, 'd' dso, 'c' comm */
	char pat[FM_PROF_CONDS][FM_PROF_PAT];
};

struct fm_prof_rules {
	struct fm_prof_rule *r;
	size_t n;
};

/* Parse rules (name labels errors "name:LINE: problem"). 0, or -1 with err. */
int fm_prof_rules_parse(FILE *in, const char *name, struct fm_prof_rules *rs, char *err,
	size_t errlen);
int fm_prof_rules_load(const char *path, struct fm_prof_rules *rs, char *err,
	size_t errlen);
void fm_prof_rules_free(struct fm_prof_rules *rs);

/* The category of one sample (dso may be a path: its basename is matched). */
enum fm_prof_cat fm_prof_classify(const struct fm_prof_rules *rs, const char *sym,
	const char *dso, const char *comm);

struct fm_prof_sym {
	char name[128];        /* "sym (dso basename)" */
	enum fm_prof_cat cat;
	uint64_t samples;
};

/* The leaf's thread pools by thread name (leaf-rank-N, leaf-io-N, leaf-fanout-N). */
enum fm_prof_pool { FM_PPOOL_RANKER, FM_PPOOL_IO, FM_PPOOL_FANOUT, FM_PPOOL_OTHER,
	FM_PPOOL_N };

/* "ranker", "io", "fanout", "other"; the pool of thread name comm. */
const char *fm_prof_pool_name(enum fm_prof_pool p);
enum fm_prof_pool fm_prof_pool_of(const char *comm);

struct fm_profile {
	uint64_t samples[FM_PROF_N];
	uint64_t pool[FM_PPOOL_N][FM_PROF_N]; /* the same split by the thread's pool */
	uint64_t total;
	uint64_t kernel;       /* samples in the kernel */
	struct fm_prof_sym *syms; /* every sampled symbol; most samples first after a parse */
	size_t nsyms, cap;
};

/* Add the samples of `perf script -F comm,tid,ip,sym,dso` text to p (zeroed first, or
 * holding an earlier parse). 0, or -1 with err on out of memory. Lines that are not
 * samples are skipped. */
int fm_prof_parse_script(FILE *in, const struct fm_prof_rules *rs, struct fm_profile *p,
	char *err, size_t errlen);

/* Free p's symbols; p is zeroed. */
void fm_prof_free(struct fm_profile *p);

/* Start `perf record -e cpu-clock -F hz -p pid -o out` (stderr to log). Returns the
 * perf PID, or -1 with err (perf missing, or it exited at once: the log says why). */
pid_t fm_prof_record_start(pid_t pid, unsigned hz, const char *out, const char *log,
	char *err, size_t errlen);

/* Stop perf (SIGINT: it writes the data) and wait. 0, or -1 with err when it failed. */
int fm_prof_record_stop(pid_t perf, const char *log, char *err, size_t errlen);

/* Run `perf script` on data and classify every sample into p. 0, or -1 with err. */
int fm_prof_report(const char *data, const struct fm_prof_rules *rs, struct fm_profile *p,
	char *err, size_t errlen);

#endif
