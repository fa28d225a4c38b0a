/* pattern.h: a pattern file parsed into its header and a tree of template nodes. */
#include <stddef.h>
#include <stdint.h>

struct expr;

struct knob {
	char *name;      /* knob name, usable in expressions */
	int64_t lo, hi;  /* inclusive range */
};

enum part_kind {
	PART_TEXT,   /* literal text */
	PART_EXPR,   /* {{E}}: value of E */
	PART_K,      /* $K(lo, hi[, odd]): per-copy constant */
	PART_S,      /* $S(lo, hi): per-variant constant */
};

/* One piece of a body text line. */
struct part {
	enum part_kind kind;
	char *text;             /* PART_TEXT */
	struct expr *e;         /* PART_EXPR; PART_K/PART_S: lo */
	struct expr *hi;        /* PART_K/PART_S: hi */
	int odd;                /* PART_K: odd values only */
};

enum node_kind { NODE_TEXT, NODE_FOR, NODE_IF, NODE_LET };

struct node;
/* One arm of an @if: cond NULL means @else. */
struct branch {
	struct expr *cond;
	struct node *body;
	int nbody;
};

struct node {
	enum node_kind kind;
	int line;                /* line in the pattern file */
	struct part *parts;      /* NODE_TEXT: the line's pieces */
	int nparts;
	char *var;               /* NODE_FOR, NODE_LET: the bound name */
	struct expr *e;          /* NODE_FOR: lo; NODE_LET: value */
	struct expr *hi;         /* NODE_FOR: hi (exclusive) */
	struct node *body;       /* NODE_FOR: repeated lines */
	int nbody;
	struct branch *br;       /* NODE_IF: arms in order */
	int nbr;
};

struct pattern {
	char *path;              /* file it came from, as given (error messages) */
	char *display;           /* "patterns/NAME.tpl": the name in #line, location-independent */
	char *id;                /* "P01" */
	char *name;              /* "minimal_field_read" */
	char *title;             /* one-line description */
	int index;               /* 0-based position in the loaded set */
	int variants;            /* @variants */
	int lines_lo, lines_hi;  /* @lines: expected C lines per copy (0 0 = unchecked) */
	struct knob *knobs;
	int nknobs;
	struct expr **requires;  /* @require expressions */
	int *require_lines;
	int nrequires;
	struct node *body;       /* the body template */
	int nbody;
	int body_line;           /* line of @body */
};

/* Parse the pattern file at path. On error, fatal() with "path:line: reason". */
struct pattern *pattern_load(const char *path);

/* The same from len bytes of text in memory (need not be NUL-terminated); path names the
 * pattern in messages and in p->path. pattern_load reads the file and calls this. */
struct pattern *pattern_parse(const char *path, const char *text, size_t len);

/* Load every *.tpl file of dir in name order; only (if not NULL) is a comma-separated list of
 * pattern ids to keep. Sets each pattern's index. Fatal on error or duplicate ids. */
struct pattern **pattern_load_dir(const char *dir, const char *only, int *npatterns);
