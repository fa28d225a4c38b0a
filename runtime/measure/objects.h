/* objects.h: what the leaf's code is made of: object files by kind, threads by pool.
 *
 * The leaf path of validate (validate_leaf.c) reports callgrind's counts per object kind
 * (the generated extractor library, the leaf's own code, libc, ...) and per pool (RANKER,
 * IO, FANOUT, the main thread). Both classifications are tables here, so a new library or
 * pool is one line. Pure functions: nothing here reads a file but fm_pool_of_cg_file.
 */
#ifndef FL_OBJECTS_H
#define FL_OBJECTS_H

#include <stddef.h>

/* Kinds of object, in report order. */
enum fm_obj_kind {
	FM_OBJ_GENERATED,  /* libfrontload-extract*.so: the generated extractors */
	FM_OBJ_LEAF,       /* frontload-leaf itself */
	FM_OBJ_LIBC,       /* glibc: libc, libm, the dynamic loader */
	FM_OBJ_CRYPTO,     /* OpenSSL: libcrypto, libssl */
	FM_OBJ_ZSTD,       /* libzstd */
	FM_OBJ_EVENT,      /* libevent (core, pthreads, openssl) */
	FM_OBJ_BLAS,       /* OpenBLAS (and the reference BLAS it may stand in for) */
	FM_OBJ_PROTOBUF,   /* protobuf-c */
	FM_OBJ_VALGRIND,   /* valgrind's preloaded helpers (simulation only) */
	FM_OBJ_OTHER,      /* anything else (libgcc, libstdc++, libjansson, ...) */
	FM_OBJ_UNKNOWN,    /* cost lines before any ob= (no object named) */
	FM_OBJ_N
};

/* The kind of an object by its path (basename patterns; see objects.c). NULL: unknown. */
enum fm_obj_kind fm_obj_classify(const char *path);

/* "generated", "leaf", "libc", "libcrypto/libssl", "libzstd", "libevent", "OpenBLAS",
 * "protobuf-c", "valgrind", "other", "unknown". */
const char *fm_obj_kind_name(enum fm_obj_kind k);

/* The leaf's thread pools, in report order. */
enum fm_pool { FM_POOL_RANKER, FM_POOL_IO, FM_POOL_FANOUT, FM_POOL_MAIN, FM_POOL_OTHER,
	FM_POOL_N };

/* "ranker", "io", "fanout", "main", "other". */
const char *fm_pool_name(enum fm_pool p);

/* The pool of a thread from the function names it ran (names[0..n-1]): the pool whose
 * marker functions (ranker_*, conn_*_cb and io_*, fo_*) it ran most of; with none, main
 * for valgrind thread 1, else other. */
enum fm_pool fm_pool_of_names(const char *const *names, size_t n, int thread);

/* The same from a callgrind per-thread file (--separate-threads=yes): reads its fn= and
 * cfn= names and its "thread:" header. Returns the pool, or -1 when path cannot be read. */
int fm_pool_of_cg_file(const char *path);

#endif
