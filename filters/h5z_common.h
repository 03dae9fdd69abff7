/*
 * h5z_common.h: what the H5Z filter plugins in filters/ share (header-only: every h5z_*.c is its own
 * loadable module, so each gets its own copy).
 *
 *  - A per-thread zarr_codec_ctx (reused compressor states; freed when the thread exits).
 *  - Error reporting: the kernels' message is pushed on HDF5's error stack, so H5Dwrite/H5Dread
 *    failures say what went wrong in the filter, not only "filter returned failure".
 *  - Handing a result back to HDF5: the output buffer must come from H5allocate_memory (HDF5 frees
 *    it with H5free_memory), so results are built in a zarr_buf and copied out once.
 *
 * Ownership: filter callbacks follow the H5Z contract: `*buf` (HDF5's, H5allocate_memory) is replaced
 * on success and left to HDF5 on failure; the zarr_buf scratch is the plugin's and freed here.
 */
#ifndef H5ZARR_H5Z_COMMON_H
#define H5ZARR_H5Z_COMMON_H

#include <hdf5.h>
#include <H5PLextern.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"

#define H5Z_EXPORT __attribute__((visibility("default")))

static pthread_key_t  h5z_ctx_key;
static pthread_once_t h5z_ctx_once = PTHREAD_ONCE_INIT;

static void
h5z_ctx_destroy(void *p)
{
    zarr_codec_ctx_free(p);
}

static void
h5z_ctx_key_make(void)
{
    (void)pthread_key_create(&h5z_ctx_key, h5z_ctx_destroy);
}

/* The calling thread's codec context (created on first use); NULL (a temporary state per call) if
 * that fails. */
static __attribute__((unused)) zarr_codec_ctx *
h5z_ctx(void)
{
    zarr_codec_ctx *ctx;
    pthread_once(&h5z_ctx_once, h5z_ctx_key_make);
    if (!(ctx = pthread_getspecific(h5z_ctx_key)) && (ctx = zarr_codec_ctx_new()) != NULL)
        pthread_setspecific(h5z_ctx_key, ctx);
    return ctx;
}

/* Pushes "<filter>: <message>" on HDF5's error stack (pipeline error). Always returns 0, the H5Z
 * filter failure value. */
static size_t __attribute__((format(printf, 3, 4))) h5z_fail(const char *func, int line, const char *fmt, ...)
{
    char    msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    H5Epush2(H5E_DEFAULT, __FILE__, func, (unsigned)line, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "%s", msg);
    return 0;
}
#define H5Z_FAIL(...) h5z_fail(__func__, __LINE__, __VA_ARGS__)

/* Replaces HDF5's buffer with the contents of `out` (which is freed). Returns the new data size, or 0
 * (failure, HDF5's buffer untouched) when memory runs out. */
static __attribute__((unused)) size_t
h5z_hand_back(zarr_buf *out, size_t *buf_size, void **buf)
{
    size_t n = out->size;
    void  *p = H5allocate_memory(n ? n : 1, false);
    if (!p) {
        zarr_buf_free(out);
        return H5Z_FAIL("out of memory (%zu bytes)", n);
    }
    memcpy(p, out->data, n);
    zarr_buf_free(out);
    H5free_memory(*buf);
    *buf      = p;
    *buf_size = n ? n : 1;
    return n;
}

/* Size in bytes of one chunk of the dataset being created (type size x chunk dims), for set_local
 * callbacks; 0 when the dcpl has no chunk shape. */
static __attribute__((unused)) size_t
h5z_chunk_bytes(hid_t dcpl, hid_t type)
{
    hsize_t dims[H5S_MAX_RANK];
    int     nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims);
    size_t  n  = H5Tget_size(type);
    if (nd <= 0)
        return 0;
    for (int i = 0; i < nd; i++)
        n *= (size_t)dims[i];
    return n;
}

#endif
