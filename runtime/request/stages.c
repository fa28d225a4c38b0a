/* stages.c: names of the leaf's stages. */
#include "stages.h"

const char *fl_stage_name(enum fl_stage s)
{
	static const char *const names[FL_STAGE_COUNT] = {
		"decode", "overheads", "extract", "stories", "rank", "fanout", "compress", "reply",
	};
	return (unsigned)s < FL_STAGE_COUNT ? names[s] : "unknown";
}
