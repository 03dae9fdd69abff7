/*
 * buf.c: growable byte buffers used for store values and encoded chunks.
 */
#include "h5zarr/zarr.h"

#include <stdlib.h>
#include <string.h>

int
zarr_buf_reserve(zarr_buf *b, size_t cap)
{
    uint8_t *p;
    size_t   ncap;

    if (cap <= b->cap)
        return ZARR_OK;
    ncap = b->cap ? b->cap : 64;
    while (ncap < cap) {
        if (ncap > SIZE_MAX / 2) {
            ncap = cap;
            break;
        }
        ncap *= 2;
    }
    if (!(p = realloc(b->data, ncap)))
        return zarr_error(ZARR_ENOMEM, "out of memory allocating %zu bytes", ncap);
    b->data = p;
    b->cap  = ncap;
    return ZARR_OK;
}

int
zarr_buf_resize(zarr_buf *b, size_t size)
{
    int rc = zarr_buf_reserve(b, size);
    if (rc == ZARR_OK)
        b->size = size;
    return rc;
}

int
zarr_buf_append(zarr_buf *b, const void *p, size_t n)
{
    int rc;
    if (n > SIZE_MAX - b->size)
        return zarr_error(ZARR_EOVERFLOW, "buffer size overflows");
    if ((rc = zarr_buf_reserve(b, b->size + n)) != ZARR_OK)
        return rc;
    if (n)
        memcpy(b->data + b->size, p, n);
    b->size += n;
    return ZARR_OK;
}

void
zarr_buf_free(zarr_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}
