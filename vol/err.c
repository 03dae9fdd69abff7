/*
 * err.c: the connector's errors on HDF5's error stack: its error class, pushing a message (under the
 * connector's own codes, or HDF5's major and minor codes where a program tells errors apart by them), and
 * keeping the pending errors across the HDF5 calls that cleanup makes (every HDF5 API call clears the
 * stack on entry). Depends on HDF5 only; every other vol/ file uses it.
 */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hid_t h5zv_err_class = H5I_INVALID_HID;
hid_t h5zv_err_major = H5I_INVALID_HID;
hid_t h5zv_err_minor = H5I_INVALID_HID;

/* HDF5 1.14.5 pushes its major code H5E_VOL as a minor code when it refuses a 1.10-style call on a file
 * of another connector (H5Odeprec.c:426, H5Rdeprec.c:432 and their neighbours: h5py's object comparison
 * and references), and every clear of the error stack then drops a reference to that message as if an
 * application held it. After the first refusal the message is freed; each later clear fails half-way and
 * fills the stack with empty entries (h5py: "Failed to extract top-level error description";
 * H5Eget_current_stack: a crash). The connector holds references on H5E_VOL, so many refusals take
 * from them instead: `n` more now (at init, and a few at each file open or create). They are application
 * references: at library close HDF5 frees the message all the same (H5I__mark_node counts count minus
 * app_count). */
void
h5zv_err_guard(int n)
{
    h5zv_errs *es = h5zv_err_save(); /* H5Iinc_ref clears the stack */
    for (int i = 0; i < n && H5Iinc_ref(H5E_VOL) >= 0; i++)
        ;
    h5zv_err_restore(es);
    if (!es)
        H5Eclear2(H5E_DEFAULT);
}

/* The class is registered by the connector's init; HDF5 API calls clear the error stack on entry, and
 * init runs inside other calls (HDF5 probing plugins for a file native HDF5 failed to open): what is
 * pending is kept. */
void
h5zv_err_init(void)
{
    h5zv_errs *es;
    if (h5zv_err_class >= 0)
        return;
    es             = h5zv_err_save();
    h5zv_err_class = H5Eregister_class("h5zarr", "h5zarr (zarr VOL connector)", "0.1.0");
    h5zv_err_major = H5Ecreate_msg(h5zv_err_class, H5E_MAJOR, "zarr VOL connector");
    h5zv_err_minor = H5Ecreate_msg(h5zv_err_class, H5E_MINOR, "zarr operation failed");
    h5zv_err_restore(es);
    h5zv_err_guard(1024);
}

void
h5zv_err_term(void)
{
    h5zv_errs *es;
    if (h5zv_err_class < 0)
        return;
    es = h5zv_err_save();
    H5Eclose_msg(h5zv_err_minor);
    H5Eclose_msg(h5zv_err_major);
    H5Eunregister_class(h5zv_err_class);
    h5zv_err_class = h5zv_err_major = h5zv_err_minor = H5I_INVALID_HID;
    h5zv_err_restore(es);
}

static void
err_vpush(const char *file, const char *func, int line, hid_t maj, hid_t min, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (h5zv_err_class < 0) {
        fprintf(stderr, "h5zarr: %s\n", msg);
        return;
    }
    H5Epush2(H5E_DEFAULT, file, func, (unsigned)line, h5zv_err_class, maj, min, "%s", msg);
}

void
h5zv_err_push_at(const char *file, const char *func, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vpush(file, func, line, h5zv_err_major, h5zv_err_minor, fmt, ap);
    va_end(ap);
}

void
h5zv_err_push_code_at(const char *file, const char *func, int line, hid_t maj, hid_t min, const char *fmt,
                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vpush(file, func, line, maj, min, fmt, ap);
    va_end(ap);
}

/* A saved error stack: its entries copied out by walking it. HDF5's own H5Eget_current_stack copies the
 * stack entry by entry and crashes on an entry without a description, which HDF5 1.14.5 itself leaves
 * behind: H5Rcreate pushes the major code H5E_VOL as a minor one (H5Rdeprec.c:432), each clear of the
 * stack then drops a reference to that message until it is gone, and the clears that fail after that
 * leave the stack full of empty entries. A walk skips what it cannot copy, and a restore pushes each
 * entry again (one whose message ids are gone is left out). */
typedef struct h5zv_err_entry {
    hid_t    cls, maj, min;
    unsigned line;
    char    *file, *func, *desc;
} h5zv_err_entry;
struct h5zv_errs {
    size_t         n;
    h5zv_err_entry e[32]; /* H5E_MAX_ENTRIES: HDF5 keeps no more */
};

static herr_t
err_copy_cb(unsigned n, const H5E_error2_t *err, void *ud)
{
    h5zv_errs      *s = ud;
    h5zv_err_entry *e;
    (void)n;
    if (!err->desc || s->n == sizeof s->e / sizeof s->e[0])
        return 0;
    e = &s->e[s->n];
    if (!(e->desc = strdup(err->desc)) || !(e->file = strdup(err->file_name ? err->file_name : "?")) ||
        !(e->func = strdup(err->func_name ? err->func_name : "?"))) {
        free(e->desc), free(e->file), free(e->func);
        return 0;
    }
    e->cls = err->cls_id, e->maj = err->maj_num, e->min = err->min_num, e->line = err->line;
    s->n++;
    return 0;
}

h5zv_errs *
h5zv_err_save(void)
{
    h5zv_errs *s;
    if (H5Eget_num(H5E_DEFAULT) <= 0 || !(s = calloc(1, sizeof *s)))
        return NULL;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, err_copy_cb, s);
    H5Eclear2(H5E_DEFAULT);
    return s;
}

void
h5zv_err_drop(h5zv_errs *saved)
{
    if (!saved)
        return;
    for (size_t i = 0; i < saved->n; i++)
        free(saved->e[i].desc), free(saved->e[i].file), free(saved->e[i].func);
    free(saved);
}

void
h5zv_err_restore(h5zv_errs *saved)
{
    if (!saved)
        return;
    H5Eclear2(H5E_DEFAULT);
    for (size_t i = 0; i < saved->n; i++) {
        h5zv_err_entry *e = &saved->e[i];
        H5Epush2(H5E_DEFAULT, e->file, e->func, e->line, e->cls, e->maj, e->min, "%s", e->desc);
    }
    h5zv_err_drop(saved);
}

void
h5zv_close(hid_t id)
{
    h5zv_errs *es;
    if (id < 0)
        return;
    es = h5zv_err_save();
    H5Idec_ref(id);
    h5zv_err_restore(es);
}
