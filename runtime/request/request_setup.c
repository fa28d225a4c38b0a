/* request_setup.c: the request pipeline's one setup (request_setup.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "paths.h"
#include "request_setup.h"

/* A percentage as the 16.16 fraction the dispatch knobs take. */
static uint32_t pct_q16(double pct)
{
	return (uint32_t)lround(pct * 65536.0 / 100.0);
}

int fl_request_base_open(struct fl_request_base *b, const char *lib,
	const struct fl_plan_knobs *k, int want_reuse, char *err, size_t errlen)
{
	char path[4096], why[1024];

	memset(b, 0, sizeof(*b));
	if (fl_data_path("feed_aggregator_resp_sizes.json", path, sizeof(path), why,
	    sizeof(why)) != 0 ||
	    fl_size_table_load(path, "resp_size_", &b->resp_sizes, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (fl_lib_open(&b->lib, lib, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (fl_plan_from_knobs(&b->plan, &b->lib, k, why, sizeof(why)) != 0) {
		fl_lib_close(&b->lib);
		snprintf(err, errlen, "plan: %s", why);
		return -1;
	}
	b->open = 1;
	if (fl_plan_report_json(&b->plan, &b->lib, want_reuse, b->plan_json,
	    sizeof(b->plan_json), why, sizeof(why)) != 0) {
		fl_request_base_close(b);
		snprintf(err, errlen, "plan: %s", why);
		return -1;
	}
	return 0;
}

void fl_request_base_close(struct fl_request_base *b)
{
	if (!b->open)
		return;
	fl_plan_free(&b->plan);
	fl_lib_close(&b->lib);
	b->open = 0;
}

void fl_pipeline_config_init(struct fl_pipeline_config *pc, const struct fl_request_base *b,
	const struct fl_pipeline_knobs *k, uint64_t seed)
{
	*pc = (struct fl_pipeline_config){
		.plan = &b->plan,
		.resp_bytes = &b->resp_sizes,
		.extract_per_story = (uint32_t)k->extractors_per_story,
		.max_stories = (uint32_t)k->max_stories,
		.body_q16 = pct_q16(k->body),
		.hit_q16 = pct_q16(k->hit),
		.score_passes = (uint32_t)k->score_passes,
		.topk = (uint32_t)k->topk,
		.blend_passes = (uint32_t)k->blend_passes,
		.serialize_passes = (uint32_t)k->serialize_passes,
		.emb_rows = (uint32_t)k->emb_rows,
		.rank_passes = (uint32_t)k->rank_passes,
		.max_reply_bytes = (uint32_t)k->max_reply_bytes,
		.zstd_level = (int)k->zstd_level,
		.seed = seed,
	};
}
