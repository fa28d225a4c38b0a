/* mixneed.h: what one part of a process (the generated library, or everything else) would
 * need to run for the whole process's instruction mix to meet a target, the other part
 * held as measured: the quantitative "what moves it" of validate's mix targets. */
#ifndef FL_MIXNEED_H
#define FL_MIXNEED_H

#include "mix.h"

enum fl_mix_metric {
	FL_MM_COND,     /* conditional branches, % of instructions */
	FL_MM_MEM,      /* loads + stores (a read-modify-write in both), % */
	FL_MM_FP,       /* scalar FP, % */
	FL_MM_CALLRET,  /* near calls and returns, % */
	FL_MM_DIV,      /* integer and FP divides, % */
	FL_MM_IPTB      /* instructions per taken branch */
};

/* The metric's value over mix x (NAN when x classified no instructions or, for IPTB, took
 * no branch). */
double fl_mix_metric_value(const struct fl_mix *x, enum fl_mix_metric m);

/* Part's count of the metric in points of whole's instructions (what it adds to whole's
 * share); NAN for IPTB or when whole classified no instructions. */
double fl_mix_points(const struct fl_mix *whole, const struct fl_mix *part,
	enum fl_mix_metric m);

/* out = a - b over the counts fl_mix_need reads (b a part of a). */
void fl_mix_minus(const struct fl_mix *a, const struct fl_mix *b, struct fl_mix *out);

/* The value part would need for whole (which contains part) to reach bound, the rest of
 * whole held: for the shares, % of part's instructions; for IPTB, part's own instructions
 * per taken branch. NAN when part classified no instructions; +INFINITY when no value
 * reaches the bound (a share past what part's instructions can hold, or taken branches of
 * the rest alone past it); -INFINITY when part needs a share below 0 (the rest alone is
 * past a maximum). */
double fl_mix_need(const struct fl_mix *whole, const struct fl_mix *part,
	enum fl_mix_metric m, double bound);

#endif
