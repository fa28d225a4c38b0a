/* clone_fit.h: a variant's clone templates, fitted from its probes and the extra probes the
 * clone step compiles (clone_fit.c); clone.c writes the copies from them. */
#ifndef FL_CLONE_FIT_H
#define FL_CLONE_FIT_H

#include <jansson.h>
#include <stdint.h>

#include "probes.h"   /* FL_NPROBES (no guard: include this header once) */

struct asm_clone;
struct obj_tpl;
struct gen;
struct variant;

#define NPROBES FL_NPROBES
#define MAX_TARGETED 4

/* A variant is probed NPROBES times; any three probes whose assembly lines up can serve as
 * a clone template. gcc's code for a variant can take more than one shape depending on the
 * constants (register choice, a branch layout), so up to MAX_FITS templates are kept, each
 * from three probes that line up, and a copy is cloned from the first template whose checks
 * (value classes, orders, overlaps: asm_clone.h) its constants pass. */
#define MAX_FITS 3
#define MAX_TEMPLATES (MAX_FITS + MAX_TARGETED)
#define NTIE 2                   /* tie-break probes (break_ties) */
#define MAX_CHAIN (NTIE + MAX_TARGETED)

struct fitted {
	struct asm_clone *ac[MAX_TEMPLATES]; /* templates; none when no three probes line up */
	struct obj_tpl *ot[MAX_TEMPLATES];   /* --objects: each assembled once, NULL if refused */
	int nfits;
	int fit_done;            /* fit_variant ran (only for variants with a copy here) */
	int ot_made;             /* ot[] was tried for the first nfits_probed */
	int nfits_probed;        /* templates from the build's probes (the rest: targeted) */
	int ntargeted;           /* targeted probes compiled (this part) */
	int ends;                /* the first template spans the hull: probes 0 and 1 in it */
	int set0;                /* the probes the first template lines up (bit i: probe i) */
	int widened;             /* a hull probe widened the first template (widen_ends) */
	char *reason;            /* why the first triple did not line up */
	/* Targeted probes that lined up with every build probe. Each new one is fitted with all
	 * of them, so the chain's one template drops every order and class that the copies
	 * behind them broke, not only the newest copy's (P02's copies break orders the probes
	 * shared, each copy a different pair). */
	char *chain_text[MAX_CHAIN];
	int64_t *chain_k[MAX_CHAIN];
	char chain_name[MAX_CHAIN][64];
	int nchain;
	int chain_idx;           /* the chain's template, valid when nchain > 0 */
	int tie_broken;          /* fitted only with break_ties' probes (the chain's first) */
	int ambiguous;           /* some set of probes failed only on an ambiguous slot */
	char *text[NPROBES];     /* the probes, kept for targeted fits */
	int64_t *k[NPROBES];
	char names[NPROBES][64];
};

/* What the clone step needs beyond struct gen to compile targeted probes. */
struct targeting {
	const char *probe_cc;    /* NULL: no targeted probes */
	const char *objects_cc;  /* NULL: templates stay assembly */
	const char *dir;         /* where their files go */
	const char *profile_dir; /* NULL, or where PNN_vVVV.gcda, the variants' training
	                            profiles, are (configure --pgo) */
	int part;
	size_t probes, templates, failed_compiles;
	size_t hull_compiles;    /* of probes: widen_ends' */
	size_t tie_compiles;     /* of probes: break_ties' */
	json_t *refused;         /* object templates refused, with reasons */
};

/* Fit variant v from its probes' assembly in dir: up to MAX_FITS templates, largest probe
 * sets first. */
struct fitted fit_variant(const struct gen *g, const struct variant *v, const char *dir);
void free_fitted(struct fitted *f);

/* Compile the copy with constants k as a targeted probe and fit a template from it (with
 * the chain, or a subset of the probes). Returns the template's index, or -1. */
int add_targeted(struct targeting *tg, struct fitted *f, const struct variant *v,
		 const int64_t *k);

/* Hull probes: widen a first template whose end probes do not both line up. */
void widen_ends(struct targeting *tg, struct fitted *f, const struct variant *v);

/* Tie-break probes: fit a variant that failed on ambiguous slots. */
void break_ties(struct targeting *tg, struct fitted *f, const struct variant *v);

#endif
