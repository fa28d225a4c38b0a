/* check.h: libclang checks of expanded variants and their structural metrics. */
#include <stddef.h>

struct variant;
struct gen_params;

/* Structural metrics of one variant, from its AST. */
struct metrics {
	int ifs;             /* if statements */
	int elses;           /* if statements with an else arm */
	int switches;        /* switch statements */
	int cases;           /* case + default labels */
	int loops;           /* for, while and do statements */
	int max_loop_depth;  /* deepest loop nesting, 0 without loops */
	int calls;           /* call expressions (inline helpers included) */
	int helper_calls;    /* calls to the shared out-of-line helpers (fl_hmap_find ...) */
	int breaks;          /* break statements outside switch arms' ends included */
	int continues;       /* continue statements */
	int returns;         /* return statements (the body gate's included) */
	int stmts;           /* statements of every kind */
	int lines;           /* C lines of one copy */
	char *signature;     /* control-flow signature (see check.c) */
};

/* Parse every variant of one pattern (copy 0) with libclang, with include directory
 * templates_dir. Any diagnostic of error severity is fatal and names the pattern file, the
 * variant and the line; warnings are printed (at most a few per pattern). Fills m[i] for
 * variant i. */
void check_pattern(const struct variant *vs, int nvariants, const struct gen_params *gp,
		   const char *templates_dir, struct metrics *m);
