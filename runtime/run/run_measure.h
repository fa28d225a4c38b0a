/* run_measure.h: `frontload validate|mix|calibrate|study`, served by frontload-measure. */
#ifndef FL_RUN_MEASURE_H
#define FL_RUN_MEASURE_H

/* Replace this process with `frontload-measure SUB args...` (argv[0] is SUB), found next
 * to the frontload executable. Returns only on failure: 1 after printing why. */
int fl_cmd_measure(int argc, char **argv);

#endif
