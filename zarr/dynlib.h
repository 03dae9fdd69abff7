/*
 * dynlib.h: libraries of rarely used codecs and stores (c-blosc, libzip, zfp, liblzma, libbz2, liblzf,
 * ISA-L, libsz), loaded on first use (dynlib.c). Linking them made every process that loads the
 * connector or a filter plugin map them and what they pull in (libcrypto for libzip, libstdc++ and
 * snappy for c-blosc, libgomp for zfp) and relocate them at start-up, for codecs most files never use
 * (bench/README.md, "Process start"). A file that uses one declares its table with ZARR__DYNLIB (the
 * functions it calls, by their own names, with the library's own prototypes from its header), calls
 * zarr__dynlib_load before the first call through the table and then calls `<var>_fn.name(...)`. The
 * library loaded is the one the build linked its headers against: its soname is recorded at configure
 * time (H5ZARR_<LIB>_SONAME, CMakeLists.txt). netlib.c does the same for libcurl and libxml2.
 */
#ifndef H5ZARR_ZARR_DYNLIB_H
#define H5ZARR_ZARR_DYNLIB_H

#include <stddef.h>

/* One library loaded on demand. The table is a struct of function pointers only, filled in the order of
 * `names`; `state` is 0 before the first attempt, 1 loaded, -1 failed (why then says why). */
typedef struct zarr__dynlib {
    const char        *soname;
    const char        *user; /* what needs it, for the message: "the blosc codec" */
    const char *const *names;
    void              *table;
    size_t             n;
    int                state; /* read and written with atomics (dynlib.c) */
    char               why[256];
} zarr__dynlib;

#define ZARR__DYNLIB_MEMBER(f) __typeof__(f) *f;
#define ZARR__DYNLIB_NAME(f)   #f,

/* Declares `static struct {...} var_fn` (one pointer per function of FUNCS, an X-macro list of function
 * names) and `static zarr__dynlib var` for the library `soname`, needed by `user`. */
#define ZARR__DYNLIB(var, FUNCS, soname, user)                                                               \
    static struct {                                                                                          \
        FUNCS(ZARR__DYNLIB_MEMBER)                                                                           \
    } var##_fn;                                                                                              \
    static const char *const var##_names[] = {FUNCS(ZARR__DYNLIB_NAME)};                                     \
    _Static_assert(sizeof var##_fn == sizeof var##_names / sizeof *var##_names * sizeof(void (*)(void)),     \
                   #var ": a table of function pointers only");                                              \
    static zarr__dynlib var = {                                                                              \
        soname, user, var##_names, &var##_fn, sizeof var##_names / sizeof *var##_names, 0, ""}

/* Loads `lib` once per process (thread-safe: later calls cost an atomic load) and fills its table.
 * ZARR_OK, or ZARR_EUNSUPPORTED with a message naming the library, what needs it and why it could not be
 * loaded (the same on each later call). The library stays loaded for the life of the process. */
int zarr__dynlib_load(zarr__dynlib *lib);

#endif
