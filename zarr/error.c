/*
 * error.c: the core's thread-local error message.
 *
 * Every failing core function leaves one message on its thread saying what failed, on which object
 * and why; callers add context with zarr_error_wrap() as the error travels up. Worker threads save
 * their message and the pool restores it on the calling thread, so the HDF5-facing layer always
 * finds the cause where it looks.
 */
#include "h5zarr/zarr.h"

#include <stdio.h>
#include <string.h>

#define ZARR_ERRMSG_MAX 1024

static _Thread_local char tls_msg[ZARR_ERRMSG_MAX];

const char *
zarr_errmsg(void)
{
    return tls_msg;
}

int
zarr_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_msg, sizeof tls_msg, fmt, ap);
    va_end(ap);
    return code;
}

int
zarr_error_wrap(int code, const char *fmt, ...)
{
    char    old[ZARR_ERRMSG_MAX];
    va_list ap;
    size_t  n;

    memcpy(old, tls_msg, sizeof old);
    va_start(ap, fmt);
    vsnprintf(tls_msg, sizeof tls_msg, fmt, ap);
    va_end(ap);
    n = strlen(tls_msg);
    if (n < sizeof tls_msg - 1)
        snprintf(tls_msg + n, sizeof tls_msg - n, "%s", old);
    return code;
}

void
zarr_error_clear(void)
{
    tls_msg[0] = '\0';
}

void
zarr_error_save(char *dst, size_t n)
{
    if (dst && n) {
        strncpy(dst, tls_msg, n - 1);
        dst[n - 1] = '\0';
    }
}

void
zarr_error_restore(int code, const char *msg)
{
    (void)code;
    if (msg != tls_msg)
        snprintf(tls_msg, sizeof tls_msg, "%s", msg ? msg : "");
}
