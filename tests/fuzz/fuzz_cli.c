/* fuzz_cli.c: argv through fl_cli_parse (one table of every option type) and each argument
 * through the value syntaxes (integers, byte counts, rate lists, HOST:PORT). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

#define FZ_MAX_ARGS 64

struct fz_opts {
	const char *name;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	int64_t s64;
	uint64_t bytes;
	uint32_t bytes32;
	double real, pct;
	int flag, quick;
};

#define FL_CLI_OBJ struct fz_opts
static const struct fl_cli_opt fz_opts[] = {
	FL_OPT_STR("name", name, "NAME", "x", "a string"),
	FL_OPT_UINT("u8", u8, 0, 255, "N", "7", "a byte"),
	FL_OPT_UINT("port", u16, 1, 65535, "PORT", "80", "a port"),
	FL_OPT_UINT("u32", u32, 10, 100000, "N", "10", "a bounded count", .alt = "20"),
	FL_OPT_UINT("u64", u64, 0, UINT64_MAX, "N", "0", "any count"),
	FL_OPT_UINT("s64", s64, 0, INT64_MAX, "N", NULL, "a signed field"),
	FL_OPT_BYTES("bytes", bytes, 4096, 1ull << 40, "BYTES", "64M", "a size"),
	FL_OPT_BYTES("b32", bytes32, 0, UINT32_MAX, "BYTES", "1k", "a 32-bit size"),
	FL_OPT_REAL("real", real, -1e6, 1e6, "X", "1.5", "a number"),
	FL_OPT_REAL("pct", pct, 0.1, 1000, "PCT", "5", "a percentage", .div = 100,
		.alt = "10"),
	FL_OPT_FLAG("flag", flag, "a flag"),
	FL_OPT_FLAG("quick", quick, "the alternative defaults"),
};
#undef FL_CLI_OBJ

static const struct fl_cli fz_cli = {
	.opts = fz_opts, .nopts = sizeof fz_opts / sizeof fz_opts[0], .alt_flag = "quick",
};

static FILE *fz_null;

static void fz_die(const char *what, const char *arg)
{
	fprintf(stderr, "fuzz_cli: %s (\"%s\")\n", what, arg);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_null = fopen("/dev/null", "w");
	return 0;
}

/* A parsed struct must hold values inside the table's ranges. */
static void fz_check_opts(const struct fz_opts *o)
{
	if (o->name == NULL || o->name[0] == 0)
		fz_die("empty string value", "");
	if (o->u16 < 1 || o->u32 < 10 || o->u32 > 100000 || o->s64 < 0)
		fz_die("integer outside its range", "");
	if (o->bytes < 4096 || o->bytes > (1ull << 40))
		fz_die("byte count outside its range", "");
	if (!(o->real >= -1e6 && o->real <= 1e6) || !(o->pct >= 0.001 && o->pct <= 10))
		fz_die("number outside its range", "");
	if ((o->flag != 0 && o->flag != 1) || (o->quick != 0 && o->quick != 1))
		fz_die("flag not 0 or 1", "");
}

/* The value syntaxes on one argument, each against what it promises. */
static void fz_check_value(const char *a)
{
	uint64_t v, w;
	double rates[8];
	char host[64], back[32];
	uint16_t port = 0;
	int n;

	if (fl_cli_parse_uint(a, &v) == 0) {
		const char *d = a;
		while (d[0] == '0' && d[1] != 0)
			d++;
		snprintf(back, sizeof back, "%llu", (unsigned long long)v);
		if (strcmp(back, d) != 0)
			fz_die("integer does not print back", a);
		if (fl_cli_parse_bytes(a, &w) != 0 || w != v)
			fz_die("byte count differs from the plain integer", a);
	}
	n = fl_cli_rates(a, rates, 8);
	if (n == 0 || n > 8)
		fz_die("rates: count outside 1..max", a);
	for (int i = 0; i < n; i++)
		if (!isfinite(rates[i]) || rates[i] <= 0)
			fz_die("rates: a rate not finite and > 0", a);
	if (fl_cli_hostport(a, host, sizeof host, &port) == 0 &&
	    (host[0] == 0 || strlen(host) >= sizeof host || port == 0))
		fz_die("hostport: empty host or port 0", a);
}

/* Arguments are the input's lines, each in its own exact-size allocation (ASan sees
 * overreads); argv[0] is the program name. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FZ_MAX_ARGS + 1];
	int argc = 1;
	size_t at = 0;
	struct fz_opts o;
	char err[256];
	int rc;

	argv[0] = strdup("fuzz");
	while (at < size && argc < FZ_MAX_ARGS) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		char *a = malloc(len + 1);

		if (a == NULL)
			abort();
		memcpy(a, data + at, len);
		a[len] = 0;  /* an embedded NUL ends the argument early, as exec would */
		argv[argc++] = a;
		at += len + 1;
	}
	argv[argc] = NULL;
	memset(&o, 0, sizeof o);
	err[0] = 0;
	rc = fl_cli_parse(&fz_cli, argc, argv, &o, err, sizeof err);
	if (rc == 0)
		fz_check_opts(&o);
	else if (rc == FL_CLI_HELP)
		fl_cli_help(fz_null, &fz_cli);
	else if (rc != -1 || err[0] == 0)
		fz_die("refused without a message", argc > 1 ? argv[1] : "");
	for (int i = 1; i < argc; i++)
		fz_check_value(argv[i]);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
