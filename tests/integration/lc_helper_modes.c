/* lc_helper_modes.c: leaf-client's modes that print and exit, for the scenario scripts: a
 * field of a JSON file (--get), the fanout the leaf must issue (--expect-fanout), a size
 * table's range (--table-range). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaf_client.h"
#include "paths.h"


/* --get KEY.PATH FILE: print one field of a JSON file. Scalars print bare (strings without
 * quotes); an object prints one "key value" line per member; an array prints compact. */
int lc_get(const char *path, const char *file)
{
	json_error_t je;
	json_t *root = json_load_file(file, 0, &je);
	if (!root) {
		fprintf(stderr, "leaf-client: %s:%d: %s\n", file, je.line, je.text);
		return 2;
	}
	json_t *v = root;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v;
		k = strtok_r(NULL, ".", &save))
		v = json_is_array(v) ? json_array_get(v, strtoul(k, NULL, 10)) : json_object_get(v, k);
	if (!v) {
		fprintf(stderr, "leaf-client: %s: no field %s\n", file, path);
		json_decref(root);
		return 1;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *m;
		json_object_foreach(v, k, m) {
			if (json_is_string(m)) {
				printf("%s %s\n", k, json_string_value(m));
			} else {
				char *s = json_dumps(m, JSON_COMPACT | JSON_ENCODE_ANY);
				printf("%s %s\n", k, s ? s : "?");
				free(s);
			}
		}
	} else if (json_is_string(v)) {
		printf("%s\n", json_string_value(v));
	} else if (json_is_real(v)) {
		printf("%.17g\n", json_real_value(v));
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		printf("%s\n", s ? s : "?");
		free(s);
	}
	json_decref(root);
	return 0;
}

/* --expect-fanout SCALE: outbound calls per leaf request of each method ("name calls"),
 * then "total N", from rpc_dist.json through fl_rpc_calls (what the leaf must issue). */
int lc_expect_fanout(const char *scale_s)
{
	char *end;
	double scale = strtod(scale_s, &end);
	if (*end || !(scale > 0))
		lc_die("--expect-fanout needs a positive scale, got '%s'", scale_s);
	char path[4096], err[512];
	static struct fl_rpc_dist d;
	if (fl_data_path("rpc_dist.json", path, sizeof path, err, sizeof err) ||
		fl_rpc_dist_load(path, &d, err, sizeof err))
		lc_die("%s", err);
	unsigned total = 0;
	for (size_t i = 0; i < FL_RPC_OUTBOUND; i++) {
		unsigned n = fl_rpc_calls(&d, i, scale);
		printf("%s %u\n", d.out[i].name, n);
		total += n;
	}
	printf("total %u\n", total);
	return 0;
}

/* --table-range req|resp: "min max" of the pooled request or reply size table (bytes). */
int lc_table_range(const char *which)
{
	int req = !strcmp(which, "req");
	if (!req && strcmp(which, "resp"))
		lc_die("--table-range takes req or resp, got '%s'", which);
	char path[4096], err[512];
	struct fl_pct t;
	if (fl_data_path(req ? "feed_aggregator_req_sizes.json" : "feed_aggregator_resp_sizes.json",
		path, sizeof path, err, sizeof err) ||
		fl_size_table_load(path, req ? "req_size_" : "resp_size_", &t, err, sizeof err))
		lc_die("%s", err);
	printf("%.0f %.0f\n", t.v[0], t.v[t.n - 1]);
	return 0;
}
