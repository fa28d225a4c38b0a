/* expr.h: integer expressions of the pattern template language. */
#include <stdint.h>

struct expr;

/* Names an expression can read: a chain of scopes, innermost first. */
struct scope {
	const struct scope *up;  /* enclosing scope, NULL at the top */
	const char **names;      /* nnames names */
	const int64_t *values;   /* their values */
	int nnames;
};

/* Parse s as an expression. On error returns NULL and writes the reason to err. */
struct expr *expr_parse(const char *s, char *err, size_t errlen);

/* Evaluate e over scope. Unknown names, division by zero and shifts out of range are errors:
 * returns -1 with the reason in err; 0 and *out on success. */
int expr_eval(const struct expr *e, const struct scope *sc, int64_t *out, char *err,
	      size_t errlen);

void expr_free(struct expr *e);
