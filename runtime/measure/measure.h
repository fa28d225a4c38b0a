/* measure.h: frontload-measure's subcommands, called by main (measure_main.c) with argv[0]
 * the subcommand's name. Each returns the process exit status (mutil.h). */
#ifndef FL_MEASURE_H
#define FL_MEASURE_H

int fm_validate_main(int argc, char **argv);      /* --harness: frontload-simreq */
int fm_validate_leaf_main(int argc, char **argv); /* default: the running leaf */
int fm_mix_main(int argc, char **argv);
int fm_calibrate_main(int argc, char **argv);
int fm_calibrate_leaf_main(int argc, char **argv); /* calibrate --leaf */
int fm_study_main(int argc, char **argv);
int fm_scale_main(int argc, char **argv);

#endif
