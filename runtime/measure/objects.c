/* objects.c: object kinds by file name and thread pools by the functions they ran. */
#define _GNU_SOURCE
#include "objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Basename prefixes of each kind; the first match wins. */
static const struct { const char *prefix; enum fm_obj_kind kind; } obj_rules[] = {
	{ "libfrontload-extract", FM_OBJ_GENERATED },
	{ "frontload-leaf", FM_OBJ_LEAF },
	{ "libc.so", FM_OBJ_LIBC }, { "libc-", FM_OBJ_LIBC }, { "libm.so", FM_OBJ_LIBC },
	{ "ld-linux", FM_OBJ_LIBC }, { "libpthread", FM_OBJ_LIBC }, { "libdl", FM_OBJ_LIBC },
	{ "libcrypto", FM_OBJ_CRYPTO }, { "libssl", FM_OBJ_CRYPTO },
	{ "libzstd", FM_OBJ_ZSTD },
	{ "libevent", FM_OBJ_EVENT },
	{ "libopenblas", FM_OBJ_BLAS }, { "libblas", FM_OBJ_BLAS },
	{ "libprotobuf-c", FM_OBJ_PROTOBUF },
	{ "vgpreload_", FM_OBJ_VALGRIND }, { "callgrind-", FM_OBJ_VALGRIND },
};

static const char *const obj_names[FM_OBJ_N] = {
	"generated", "leaf", "libc", "libcrypto/libssl", "libzstd", "libevent", "OpenBLAS",
	"protobuf-c", "valgrind", "other", "unknown",
};

enum fm_obj_kind fm_obj_classify(const char *path)
{
	if (path == NULL)
		return FM_OBJ_UNKNOWN;
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	for (size_t i = 0; i < sizeof obj_rules / sizeof obj_rules[0]; i++)
		if (strncmp(b, obj_rules[i].prefix, strlen(obj_rules[i].prefix)) == 0)
			return obj_rules[i].kind;
	return FM_OBJ_OTHER;
}

const char *fm_obj_kind_name(enum fm_obj_kind k)
{
	return (unsigned)k < FM_OBJ_N ? obj_names[k] : "unknown";
}

static const char *const pool_names[FM_POOL_N] = { "ranker", "io", "fanout", "main",
	"other" };

const char *fm_pool_name(enum fm_pool p)
{
	return (unsigned)p < FM_POOL_N ? pool_names[p] : "other";
}

/* Functions only one pool's threads run (runtime/leaf/ranker.c, leaf_io.c, fanout.c).
 * A prefix ends in '*'. */
static const struct { const char *name; enum fm_pool pool; } pool_markers[] = {
	{ "ranker_*", FM_POOL_RANKER },
	{ "io_main", FM_POOL_IO }, { "io_inbox_cb", FM_POOL_IO }, { "io_deliver", FM_POOL_IO },
	{ "io_accept_cb", FM_POOL_IO }, { "conn_read_cb", FM_POOL_IO },
	{ "conn_write_cb", FM_POOL_IO }, { "conn_event_cb", FM_POOL_IO },
	{ "conn_request", FM_POOL_IO }, { "conn_reply", FM_POOL_IO },
	{ "fo_*", FM_POOL_FANOUT },
};

static int marker_match(const char *pat, const char *name)
{
	size_t n = strlen(pat);
	if (n && pat[n - 1] == '*')
		return strncmp(pat, name, n - 1) == 0;
	return strcmp(pat, name) == 0;
}

enum fm_pool fm_pool_of_names(const char *const *names, size_t n, int thread)
{
	unsigned votes[FM_POOL_N] = { 0 };
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof pool_markers / sizeof pool_markers[0]; k++)
			if (marker_match(pool_markers[k].name, names[i])) {
				votes[pool_markers[k].pool]++;
				break;
			}
	enum fm_pool best = FM_POOL_OTHER;
	unsigned most = 0;
	for (int p = 0; p < FM_POOL_N; p++)
		if (votes[p] > most) {
			most = votes[p];
			best = (enum fm_pool)p;
		}
	if (most == 0)
		return thread == 1 ? FM_POOL_MAIN : FM_POOL_OTHER;
	return best;
}

/* The name of a "fn=(id) name" / "cfn=(id) name" definition at p (after '='), or NULL. */
static const char *cg_fn_name(char *p)
{
	if (*p == '(') {
		p = strchr(p, ')');
		if (p == NULL || p[1] != ' ')
			return NULL;
		p += 2;
	}
	p[strcspn(p, "\r\n")] = '\0';
	return *p ? p : NULL;
}

int fm_pool_of_cg_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0, ncap = 0;
	char **names = NULL;
	int thread = 0;

	if (f == NULL)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char *p = NULL;
		if (strncmp(line, "thread: ", 8) == 0)
			thread = atoi(line + 8);
		else if (strncmp(line, "fn=", 3) == 0)
			p = line + 3;
		else if (strncmp(line, "cfn=", 4) == 0)
			p = line + 4;
		const char *name = p ? cg_fn_name(p) : NULL;
		if (name == NULL)
			continue;
		if (n == ncap) {
			char **g = realloc(names, (ncap = ncap ? 2 * ncap : 256) * sizeof *g);
			if (g == NULL)
				break;
			names = g;
		}
		if ((names[n] = strdup(name)) != NULL)
			n++;
	}
	fclose(f);
	free(line);
	enum fm_pool pool = fm_pool_of_names((const char *const *)names, n, thread);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return (int)pool;
}
