/*
 * util.h: the floor of the connector. What every vol/ file uses and that depends on nothing else in
 * vol/: the connector's errors on HDF5's error stack (vol/err.c), releasing ids, base64, the check of a
 * property-list argument, the hash that makes a path's token and a prefix test on node paths
 * (vol/util.c). Only HDF5 and the core's public header below it; h5zv.h includes it, and err.c and
 * util.c include nothing else of vol/ (tools/layers.txt, checked by tools/depgraph.py).
 */
#ifndef H5ZV_UTIL_H
#define H5ZV_UTIL_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "h5zarr/zarr.h"

/* True on a little-endian host (a constant): where an HDF5 little-endian value is a C value as it is. */
#define H5ZV_HOST_LE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/* ---- errors -------------------------------------------------------------------------------------- */
extern hid_t h5zv_err_class, h5zv_err_major, h5zv_err_minor;

/* vol/err.c. The error class: registered by the connector's init, unregistered by its last term. */
void h5zv_err_init(void);
void h5zv_err_term(void);
/* Holds `n` more references on HDF5's H5E_VOL message, which HDF5 1.14.5 releases wrongly (err.c). */
void h5zv_err_guard(int n);
/* Pushes a message onto the HDF5 error stack under the connector's class and codes. */
void h5zv_err_push_at(const char *file, const char *func, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define h5zv_err_push(func, line, ...) h5zv_err_push_at(__FILE__, func, line, __VA_ARGS__)
/* The same with HDF5's major and minor codes (H5E_FILE, H5E_NOTFOUND, ...), for the errors a program tells
 * apart by code; a missing or existing file also says `errno = N` as HDF5's file drivers do, which h5py
 * turns into FileNotFoundError / FileExistsError. */
void h5zv_err_push_code_at(const char *file, const char *func, int line, hid_t maj, hid_t min,
                           const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define h5zv_err_push_code(maj, min, ...)                                                                    \
    h5zv_err_push_code_at(__FILE__, __func__, __LINE__, maj, min, __VA_ARGS__)
#define H5ZV_GOTO_ERROR_CODE(maj, min, ...)                                                                  \
    do {                                                                                                     \
        h5zv_err_push_code(maj, min, __VA_ARGS__);                                                           \
        goto done;                                                                                           \
    } while (0)

/* Releases an id of any kind (negative: nothing) without clearing the errors pushed so far, which any
 * HDF5 API call does on entry: cleanup after an error uses this. */
void h5zv_close(hid_t id);
/* The same for any cleanup: save (NULL when no error is pending; the stack is then empty), run HDF5
 * calls, restore (what was pushed meanwhile is dropped; frees `saved`), or drop the saved copy instead. */
typedef struct h5zv_errs h5zv_errs;
h5zv_errs               *h5zv_err_save(void);
void                     h5zv_err_restore(h5zv_errs *saved);
void                     h5zv_err_drop(h5zv_errs *saved);

/* Push an error and jump to `done` (single exit); `ret` must be set to the failure value first. */
#define H5ZV_GOTO_ERROR(...)                                                                                 \
    do {                                                                                                     \
        h5zv_err_push(__func__, __LINE__, __VA_ARGS__);                                                      \
        goto done;                                                                                           \
    } while (0)
/* The same, appending the core's message for a failed zarr call. */
#define H5ZV_GOTO_ZERR(...)                                                                                  \
    do {                                                                                                     \
        char _m[768];                                                                                        \
        snprintf(_m, sizeof _m, __VA_ARGS__);                                                                \
        h5zv_err_push(__func__, __LINE__, "%s: %s", _m, zarr_errmsg());                                      \
        goto done;                                                                                           \
    } while (0)

/* ---- vol/util.c --------------------------------------------------------------------------------- */
/* Fails (error pushed) unless `id` is H5P_DEFAULT or a property list of class `cls`; `what` names it. */
int h5zv_check_plist(hid_t id, hid_t cls, const char *what);
/* Base64 of an HDF5 object's binary encoding (`enc`: H5Tencode, or h5zv_pencode for plists),
 * malloc'ed (the caller's); and the object back through `dec` (H5Tdecode, H5Pdecode): a new id (the
 * caller's) or negative. */
char  *h5zv_encode_b64(hid_t id, herr_t (*enc)(hid_t, void *, size_t *));
hid_t  h5zv_decode_b64(const char *b64, hid_t (*dec)(const void *));
herr_t h5zv_pencode(hid_t plist, void *buf, size_t *n);
/* RFC 4648 base64 of `n` bytes (malloc'ed, NUL-terminated) / the bytes back (malloc'ed, *n their
 * count; NULL on a character outside the alphabet or out of memory). Both the caller's to free. */
char *h5zv_b64_encode(const void *p, size_t n);
void *h5zv_b64_decode(const char *s, size_t *n);
/* True if `s` looks like base64 text of at least 9 bytes (length a multiple of 4, padding only at the
 * end): the earlier binary form of reserved fields (vol/reserved.c). */
bool h5zv_b64_like(const char *s);
/* The token of a path as first met: the 128-bit XXH3 hash of `path` (also declared in h5zv.h). */
void h5zv_token_from_path(const char *path, H5O_token_t *tok);
/* True if node path `path` is `top` (its first `n` bytes, n = strlen(top)) or lies below it; every path
 * is below the root ("", n = 0). */
bool h5zv_path_under(const char *path, const char *top, size_t n);
/* The path of child `leaf` of node path `parent` ("parent/leaf", or "leaf" below the root ""), in a new
 * buffer (the caller's: free it); NULL when out of memory. No formatting: listings and walks join a
 * path per child. */
char *h5zv_path_child(const char *parent, const char *leaf);
/* The little-endian 64-bit integer at `p` (8 bytes, any alignment). */
uint64_t h5zv_le64(const unsigned char *p);
/* `a`, `b` and `c` joined into `dst` (`cap` bytes, cap > 0), cut where snprintf(dst, cap, "%s%s%s", a, b,
 * c) cuts, without snprintf's stdio set-up (~900 instructions a call, on the paths of every lookup and
 * iteration step: bench/README.md "The read side at scale"). */
void h5zv_cat3(char *dst, size_t cap, const char *a, const char *b, const char *c);
/* Where node path `path`, at or below a node path of `fl` bytes that moved to `to`, is now: `to` followed
 * by what follows those `fl` bytes, in a new buffer (the caller's); NULL when out of memory. */
char *h5zv_path_moved(const char *path, size_t fl, const char *to);

#endif
