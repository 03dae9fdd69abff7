/*
 * fuzz_common.h: helpers shared by the fuzz harnesses (fuzz/fuzz_*.c).
 *
 * Each harness defines LLVMFuzzerTestOneInput. Under -DH5ZARR_FUZZ=ON it is linked with libFuzzer;
 * in every build it is also linked with fuzz/replay.c, which runs it over seed and regression files
 * (ctest fuzz.replay_<harness>). A harness reports a broken invariant (a round trip that does not
 * hold, an encoder whose output its own decoder refuses) with FUZZ_CHECK, which prints the reason and
 * aborts, so libFuzzer saves the input and the replay test fails.
 */
#ifndef H5ZARR_FUZZ_COMMON_H
#define H5ZARR_FUZZ_COMMON_H

#include "h5zarr/zarr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                                \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz invariant failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n  last core error: %s\n", zarr_errmsg());                                     \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

/* Largest input a harness looks at: keeps every run fast (metadata documents are small). */
#define FUZZ_MAX_INPUT ((size_t)1 << 16)

#endif
