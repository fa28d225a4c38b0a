/* cli.h: table-driven long-option parsing and --help for the frontload programs.
 *
 * A program describes its flags once, as an array of struct fl_cli_opt: the flag's name, the
 * type of its value, the field of the program's options struct it fills, the accepted range,
 * the default (as it would be typed) and the help text. fl_cli_parse fills the struct from
 * the defaults and then argv; fl_cli_help prints the option list; the program keeps the
 * usage text around it, the checks between flags and the decision to exit.
 *
 * Command line: `--name VALUE` or `--name=VALUE` for a value, `--name` alone for a flag;
 * names match exactly (no abbreviations); `--help` and `-h` ask for help. Anything not
 * starting with "-" is an error (no positional arguments). A later flag overrides an earlier
 * one. Values are not copied: string fields point into argv or at the table's text.
 *
 * Errors: every function that can fail returns -1 and writes one line into err (size errlen,
 * may be NULL) naming the flag, e.g. `--port: expected an integer in 0..65535, got "x"`.
 * Nothing here prints to stderr or exits: the caller prints "PROG: <err>" and exits 2.
 *
 * Table fields come from FL_CLI_OBJ, which the program defines as its options struct type
 * around the table:
 *
 *   #define FL_CLI_OBJ struct leaf_config
 *   static const struct fl_cli_opt leaf_opts[] = {
 *           FL_OPT_UINT("port", port, 0, 65535, "PORT", "0", "port to listen on"),
 *           FL_OPT_REAL("tolerance", search.tolerance, 0.1, 1000, "PCT", "5", "...",
 *                   .div = 100, .alt = "10"),
 *           FL_OPT_FLAG("tls", tls, "serve TLS"),
 *   };
 *   #undef FL_CLI_OBJ
 *
 * Trailing arguments of the FL_OPT_* macros are more designated initializers (.alt, .div).
 */
#ifndef FL_CLI_H
#define FL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FL_CLI_MAX_OPTS 128    /* options in one table at most */
#define FL_CLI_HELP 1          /* fl_cli_parse: --help or -h was given */

enum fl_cli_type {
	FL_CLI_STR,    /* const char *; an empty value is refused */
	FL_CLI_UINT,   /* decimal digits only, in [lo, hi]; into an integer field of 1, 2, 4 or
	                * 8 bytes (signed fields too, when hi fits) */
	FL_CLI_BYTES,  /* as FL_CLI_UINT, plus an optional k, M or G suffix (x 1024, 1024^2,
	                * 1024^3), optionally followed by B or iB ("4M", "64KiB"); lo and hi
	                * bound the byte count */
	FL_CLI_REAL,   /* a finite strtod number in [rlo, rhi]; stored / div into a double */
	FL_CLI_FLAG    /* no value; sets an int to 1 */
};

/* One flag. */
struct fl_cli_opt {
	const char *name;       /* long flag without "--" */
	enum fl_cli_type type;
	size_t off, size;       /* the field in the options struct, and its size */
	uint64_t lo, hi;        /* FL_CLI_UINT, FL_CLI_BYTES: accepted values */
	double rlo, rhi;        /* FL_CLI_REAL: accepted values, as given (before div) */
	double div;             /* FL_CLI_REAL: the field gets value / div (100: a percentage
	                         * stored as a fraction); 0 means 1 */
	const char *metavar;    /* the value's name in --help and messages (NULL for flags) */
	const char *def;        /* default, as typed on the command line; NULL: none here (the
	                         * program sets the field itself before parsing) */
	const char *alt;        /* default under the alternative profile (struct fl_cli);
	                         * NULL: def */
	const char *help;       /* one paragraph; fl_cli_help wraps it and appends [def] */
	const char *section;    /* --help: a heading ("run") printed before this option; NULL:
	                         * none */
};

/* A program's flags. */
struct fl_cli {
	const struct fl_cli_opt *opts;
	size_t nopts;           /* at most FL_CLI_MAX_OPTS */
	const char *alt_flag;   /* name of the FL_CLI_FLAG option that selects the .alt
	                         * defaults (frontload run's "quick"); NULL: none */
	/* Flags another program takes, forwarded to it (frontload-measure's simreq knobs): a
	 * flag not in opts but in fwd->opts is checked against that table's type and range,
	 * then handed to fwd_take as typed (val NULL for a flag), which stores it in obj or
	 * refuses it (-1 with err). Their defaults are the other program's: none is applied
	 * here. fl_cli_help lists them after opts, under the heading fwd_title. NULL: none. */
	const struct fl_cli *fwd;
	const char *fwd_title;
	int (*fwd_take)(void *obj, const struct fl_cli_opt *o, const char *val, char *err,
		size_t errlen);
};

#define FL_CLI_FIELD(f) .off = offsetof(FL_CLI_OBJ, f), .size = sizeof(((FL_CLI_OBJ *)0)->f)
#define FL_OPT_STR(n, f, mv, d, h, ...) { .name = (n), .type = FL_CLI_STR, FL_CLI_FIELD(f), \
	.metavar = (mv), .def = (d), .help = (h), __VA_ARGS__ }
#define FL_OPT_UINT(n, f, l, u, mv, d, h, ...) { .name = (n), .type = FL_CLI_UINT, \
	FL_CLI_FIELD(f), .lo = (l), .hi = (u), .metavar = (mv), .def = (d), .help = (h), \
	__VA_ARGS__ }
#define FL_OPT_BYTES(n, f, l, u, mv, d, h, ...) { .name = (n), .type = FL_CLI_BYTES, \
	FL_CLI_FIELD(f), .lo = (l), .hi = (u), .metavar = (mv), .def = (d), .help = (h), \
	__VA_ARGS__ }
#define FL_OPT_REAL(n, f, l, u, mv, d, h, ...) { .name = (n), .type = FL_CLI_REAL, \
	FL_CLI_FIELD(f), .rlo = (l), .rhi = (u), .metavar = (mv), .def = (d), .help = (h), \
	__VA_ARGS__ }
#define FL_OPT_FLAG(n, f, h, ...) { .name = (n), .type = FL_CLI_FLAG, FL_CLI_FIELD(f), \
	.help = (h), __VA_ARGS__ }

/* Fill obj: first every option's default (def), then argv[1..argc-1] in order (forwarded
 * flags through fwd_take), then, when
 * the alt_flag option is set, the alt default of every option argv did not give. Fields
 * whose option has no def, and fields not in the table, are left as the caller set them.
 * Returns 0; FL_CLI_HELP as soon as --help or -h is seen (flags before it are applied and
 * checked, the rest ignored); -1 with err on an unknown flag, a missing or unexpected value,
 * a value out of range, or a bad table (a default that does not parse, a field size that
 * does not fit the type). */
int fl_cli_parse(const struct fl_cli *cli, int argc, char **argv, void *obj, char *err,
	size_t errlen);

/* Parse text as o's value and store it in obj (a flag is set whatever text is). Returns 0
 * or -1 (err names the flag; obj unchanged). */
int fl_cli_set(const struct fl_cli_opt *o, const char *text, void *obj, char *err,
	size_t errlen);

/* The option called name (without "--"), or NULL. */
const struct fl_cli_opt *fl_cli_find(const struct fl_cli *cli, const char *name);

/* Operands for the few test tools that take them (fl_cli_parse refuses them): move the
 * arguments that are neither a flag nor the value after "--name" of an option that takes
 * one out of argv[1..], keeping the rest in order for fl_cli_parse (*argc updated, argv
 * NULL-terminated again). The first max of them go to out[] (NULL where fewer). Returns
 * how many there were. */
int fl_cli_take_operands(const struct fl_cli *cli, int *argc, char **argv, const char **out,
	int max);

/* The option list for --help, one entry per option (a section's heading before its first),
 * then the forwarded ones under fwd_title, then --help itself:
 *   "  --name METAVAR   help text, wrapped to 90 columns [def; --ALT alt]"
 * The program prints its usage line and notes before and after it. */
void fl_cli_help(FILE *fp, const struct fl_cli *cli);

/* o's current value in obj: an integer (FL_CLI_UINT, FL_CLI_BYTES; a flag as 0 or 1), the
 * stored double (FL_CLI_REAL), the string (FL_CLI_STR; may be NULL). */
uint64_t fl_cli_uint(const struct fl_cli_opt *o, const void *obj);
double fl_cli_real(const struct fl_cli_opt *o, const void *obj);
const char *fl_cli_str(const struct fl_cli_opt *o, const void *obj);

/* Value syntaxes, for values the table types do not cover ("sampled|BYTES", a port file).
 * fl_cli_parse_uint: decimal digits only, no sign or spaces, up to UINT64_MAX.
 * fl_cli_parse_bytes: the same with FL_CLI_BYTES's suffixes. 0 or -1. */
int fl_cli_parse_uint(const char *text, uint64_t *v);
int fl_cli_parse_bytes(const char *text, uint64_t *v);

/* "500", "2.5k", "100,200,400" (k: x 1000; empty items skipped) into out[0..max-1], each
 * finite and > 0. Returns how many (>= 1), or -1 when an item is bad, there are more than
 * max or none. */
int fl_cli_rates(const char *text, double *out, size_t max);

/* "HOST:PORT" or "[V6ADDR]:PORT" (the last colon splits; brackets dropped) into host (a
 * string of fewer than hostlen bytes, not empty) and port (1..65535). 0 or -1. */
int fl_cli_hostport(const char *text, char *host, size_t hostlen, uint16_t *port);

#endif
