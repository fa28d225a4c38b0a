/* fuzz.h: the libFuzzer entry points every tests/fuzz target defines (and replay_main.c calls). */
#ifndef FL_FUZZ_H
#define FL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Run one input; always returns 0 (a bug shows as a sanitizer report or an abort). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One-time setup before the first input; optional, returns 0. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
