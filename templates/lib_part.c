/* lib_part.c: the registry rows of one part of a library split over several shared
 * objects (configure --lib-parts, README "Past 2 GB of code"). Built once per part with
 * -DFL_LIB_PART=K (1-based); the head (lib_join.c) finds this part's rows by that name. */
#include "fl_extract.h"

#ifndef FL_LIB_PART
#error "build with -DFL_LIB_PART=K, K the part's 1-based number"
#endif

#define FL_PART_FN_(k) fl_registry_part_##k
#define FL_PART_FN(k) FL_PART_FN_(k)

/* The linker defines these bounds of this part's fl_registry section (every shard of the
 * part put its rows there); hidden, so each part sees only its own. */
extern const struct fl_fn_entry __start_fl_registry[] __attribute__((visibility("hidden")));
extern const struct fl_fn_entry __stop_fl_registry[] __attribute__((visibility("hidden")));

FL_API const struct fl_fn_entry *FL_PART_FN(FL_LIB_PART)(size_t *count);

FL_API const struct fl_fn_entry *FL_PART_FN(FL_LIB_PART)(size_t *count)
{
	*count = (size_t)(__stop_fl_registry - __start_fl_registry);
	return __start_fl_registry;
}
