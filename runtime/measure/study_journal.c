/* study_journal.c: finished study points kept across runs, so an interrupted study resumes.
 *
 * DIR/points/KEYHASH.json holds one finished point: its key and its figures. The key is
 * everything that changes a point's figures: the point (kind, footprint asked, active
 * functions, order, calls per request, I1 size asked; a leaf point's requests and the
 * leaf's build), the run (requests, warm-up, stage,
 * forwarded knobs, the cache geometry) and the build (config.json, and the size and
 * modification time of frontload-simreq and of the extractor library beside it). A point
 * is taken from the journal only when the whole key matches, so changing any knob, the
 * geometry or rebuilding measures it again. Entries are written atomically (osfile.h).
 */
#define _GNU_SOURCE
#include <glob.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "mutil.h"
#include "osfile.h"
#include "study.h"

/* "size:mtime" of a file, "absent" when it cannot be stat'ed. */
static void st_file_id(const char *path, char *buf, size_t len)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		snprintf(buf, len, "absent");
	else
		snprintf(buf, len, "%lld:%lld.%09ld", (long long)sb.st_size,
			(long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
}

static void st_geo_str(const struct fm_cache *c, char *buf, size_t len)
{
	snprintf(buf, len, "%u/%u/%u", c->size, c->assoc, c->line);
}

/* The point's key (see the top); -1 when it does not fit buf. */
static int st_key(const struct st_point *q, const struct fm_run *r0, char *buf, size_t len)
{
	char lib[4300], leaf[4300] = "", simreq_id[64], lib_id[64], leaf_id[64];
	char g1[48], g2[48], g3[48];
	json_t *build = fm_build_json();
	char *bs = build ? json_dumps(build, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	const char *slash = strrchr(r0->simreq, '/');
	size_t n;

	snprintf(lib, sizeof(lib), "%.*s/libfrontload-extract.so",
		slash ? (int)(slash - r0->simreq) : 1, slash ? r0->simreq : ".");
	st_file_id(r0->simreq, simreq_id, sizeof(simreq_id));
	st_file_id(lib, lib_id, sizeof(lib_id));
	st_geo_str(&r0->geo.i1, g1, sizeof(g1));
	st_geo_str(&r0->geo.d1, g2, sizeof(g2));
	st_geo_str(&r0->geo.ll, g3, sizeof(g3));
	/* A leaf point also depends on the leaf's build and its window's requests. */
	if (q->kind == ST_LEAF)
		snprintf(leaf, sizeof(leaf), "%.*s/frontload-leaf", slash ? (int)(slash -
			r0->simreq) : 1, slash ? r0->simreq : ".");
	st_file_id(q->kind == ST_LEAF ? leaf : "", leaf_id, sizeof(leaf_id));
	n = (size_t)snprintf(buf, len, "study-point-v1 kind=%s footprint=%" PRIu64
		" functions=%" PRIu64 " alpha=%.17g calls=%" PRIu64 " i1=%u requests=%" PRIu64
		" warmup=%" PRIu64 " stage=%s mix=%d geo=i1:%s,d1:%s,ll:%s simreq=%s library=%s"
		" leaf=%s leaf_requests=%" PRIu64 " build=%s knobs=", st_kind_str(q->kind),
		q->want_bytes, q->nfuncs, q->alpha, q->calls, q->i1_bytes, r0->requests,
		r0->warmup, r0->stage ? r0->stage : "all", q->kind == ST_SWEEP, g1, g2, g3,
		simreq_id, lib_id, leaf_id, q->lreq,
		bs ? bs : "none");
	free(bs);
	json_decref(build);
	for (int i = 0; i < r0->nknobs && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "",
			r0->knobs[i] ? r0->knobs[i] : "");
	return n < len ? 0 : -1;
}

/* FNV-1a of the key: the entry's file name (the key inside decides). */
static void st_entry_path(const char *dir, const char *key, char *path, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	snprintf(path, len, "%s/points/%016" PRIx64 ".json", dir, h);
}

int st_journal_save(const char *dir, const struct st_point *q, const struct fm_run *r0,
	char *err, size_t errlen)
{
	char key[16384], path[4400], sub[4200];
	json_t *o, *fig;
	char *text;
	int rc;

	if (st_key(q, r0, key, sizeof(key)) != 0) {
		snprintf(err, errlen, "the point's key is too long to journal");
		return -1;
	}
	snprintf(sub, sizeof(sub), "%s/points", dir);
	if (fl_mkdir_p(sub, 0755, err, errlen) != 0)
		return -1;
	fig = json_object();
	for (int c = 0; c < ST_NFIG; c++)
		json_object_set_new(fig, st_fig_name(c), isfinite(q->fig[c]) ?
			json_real(q->fig[c]) : json_null());
	o = json_pack("{s:s,s:o,s:I,s:f,s:s}", "key", key, "figures", fig, "i1_bytes_run",
		(json_int_t)q->i1_bytes, "sim_wall_s", q->sim.wall_s, "command", q->sim.cmd);
	text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	st_entry_path(dir, key, path, sizeof(path));
	rc = fl_write_file_atomic(path, text, strlen(text), err, errlen);
	free(text);
	return rc;
}

int st_journal_load(const char *dir, struct st_point *q, const struct fm_run *r0)
{
	char key[16384], path[4400];
	json_t *o, *fig, *v;

	if (st_key(q, r0, key, sizeof(key)) != 0)
		return 0;
	st_entry_path(dir, key, path, sizeof(path));
	o = json_load_file(path, 0, NULL);
	if (o == NULL)
		return 0;
	/* Another key with the same hash, or an entry this version cannot read: run it. */
	fig = json_object_get(o, "figures");
	if (!json_is_string(json_object_get(o, "key")) ||
	    strcmp(json_string_value(json_object_get(o, "key")), key) != 0 ||
	    !json_is_object(fig) || !json_is_integer(json_object_get(o, "i1_bytes_run"))) {
		json_decref(o);
		return 0;
	}
	for (int c = 0; c < ST_NFIG; c++) {
		v = json_object_get(fig, st_fig_name(c));
		q->fig[c] = json_is_number(v) ? json_number_value(v) : NAN;
	}
	q->i1_bytes = (unsigned)json_integer_value(json_object_get(o, "i1_bytes_run"));
	v = json_object_get(o, "sim_wall_s");
	q->sim.wall_s = json_is_number(v) ? json_number_value(v) : NAN;
	v = json_object_get(o, "command");
	snprintf(q->sim.cmd, sizeof(q->sim.cmd), "%s", json_is_string(v) ?
		json_string_value(v) : "");
	q->done = q->resumed = 1;
	json_decref(o);
	return 1;
}

int st_interrupted_dir(const char *command, char *dir, size_t len)
{
	glob_t g;
	int found = 0;

	if (glob("results/study-*/study.json", 0, NULL, &g) != 0)
		return 0;
	/* Names carry the start time (study-YYYYmmdd-HHMMSS): the last one is the newest. */
	for (size_t i = g.gl_pathc; i-- > 0 && !found;) {
		json_t *o = json_load_file(g.gl_pathv[i], 0, NULL);
		const char *c = json_string_value(json_object_get(o, "command"));
		const char *st = json_string_value(json_object_get(o, "status"));

		if (c && st && strcmp(c, command) == 0 && strcmp(st, "interrupted") == 0) {
			size_t l = strlen(g.gl_pathv[i]) - strlen("/study.json");
			if (l < len) {
				snprintf(dir, len, "%.*s", (int)l, g.gl_pathv[i]);
				found = 1;
			}
		}
		json_decref(o);
	}
	globfree(&g);
	return found;
}
