/*
 * internal.h: helpers shared by the core's source files (not part of the public interface).
 */
#ifndef H5ZARR_ZARR_INTERNAL_H
#define H5ZARR_ZARR_INTERNAL_H

#include "h5zarr/zarr.h"

/* Runs `expr`; on a non-zero status stores it in the local `rc` and jumps to `done`. */
#define ZARR_TRY(expr)                                                                                       \
    do {                                                                                                     \
        if ((rc = (expr)) != ZARR_OK)                                                                        \
            goto done;                                                                                       \
    } while (0)

/* Sets `rc` to an error with a message and jumps to `done`. */
#define ZARR_FAIL(code, ...)                                                                                 \
    do {                                                                                                     \
        rc = zarr_error((code), __VA_ARGS__);                                                                \
        goto done;                                                                                           \
    } while (0)

/* zarr_store_get for lookups where absence is an expected answer (probes, consolidated-metadata and
 * optional documents): a missing key gives ZARR_ENOTFOUND and leaves this thread's message as it was
 * (formatting one costs more than the lookup, and creates probe absent paths by the dozen: see
 * bench/README.md, "Figures behind comments in the sources"); any other
 * failure sets a message as zarr_store_get does. `out` as zarr_store_get (reset, then filled). */
int zarr__store_get_quiet(zarr_store *s, const char *key, zarr_buf *out);
/* zarr__store_get_quiet as a one-item zarr_store_get_many, for a caller that wants the value's time too:
 * `*mtime` gets the item's mtime (zarr_store_req.mtime: the directory store's fstat of the read, HTTP
 * and S3 Last-Modified), 0 when the store does not learn it with a read. `mtime` NULL: exactly
 * zarr__store_get_quiet. `s` must answer get_many as it
 * answers get (the connector's stores do; a read-ahead view, store_prefetch.c, does not). */
int zarr__store_get_quiet_timed(zarr_store *s, const char *key, zarr_buf *out, int64_t *mtime);
/* IEEE binary16 bits from a double, rounded to nearest even (overflow to infinity, NaN kept quiet),
 * and back (exact). In software: compilers without _Float16 (clang 14 on x86) build the core too. */
uint16_t zarr__half_from_double(double d);
double   zarr__half_to_double(uint16_t h);
/* `v` rounded to the nearest float16, as a double. A half difference, sum or product is exact in a
 * double and a quotient is rounded there with 53 >= 2 * 11 + 2 bits, so rounding each step of a half
 * computation with this gives what IEEE half arithmetic (numpy's float16) gives. */
double zarr__half_round(double v);

/* Overflow-checked size arithmetic: returns false on overflow. */
static inline bool
zarr__mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool
zarr__add_ok(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* An open array at `path` of store `s` (a reference is taken) with metadata `meta` (taken, also on
 * failure), checked as zarr_array_open checks what it reads. */
int zarr__array_from_meta(zarr_store *s, const char *path, zarr_array_meta *meta, zarr_array **out);
/* The v2 node at `path` from its own documents, the one reader of them (zarr_array_open_format,
 * zarr_group_read_format, zarr_node_load_many): the document of `first` (ZARR_NODE_ARRAY: .zarray,
 * ZARR_NODE_GROUP: .zgroup), then, when it is absent and `other`, the other kind's; the found one with
 * the node's .zattrs (absent: no attributes) parsed into `*m` (an array) or `*g` (a group), new, the
 * caller's. `*type` says which (ZARR_NODE_NONE when neither document is there: ZARR_ENOTFOUND without a
 * message); `mtime` (may be NULL) the found document's time when the store learns it with the read, else 0.
 * `s` and `path` borrowed. */
int zarr__node_read_v2(zarr_store *s, const char *path, zarr_node_type first, bool other,
                       zarr_node_type *type, zarr_array_meta **m, zarr_group_meta **g, int64_t *mtime);
/* The zarr format (2 or 3) of the hidden array document `text` (ZARR_HIDDEN_DOC, `where` names it for
 * messages): ZARR_EMETA when it is neither. */
int zarr__hidden_format(const char *text, size_t n, const char *where, int *format);
/* Parses the hidden array document `text` of the array at `path` (v2: reads its .zattrs too) into
 * `*out` (new, `hidden` set; caller frees); `s`, `text` borrowed. */
int zarr__array_meta_hidden(zarr_store *s, const char *path, const char *text, size_t n,
                            zarr_array_meta **out);
/* The coordinates (into c[ndim]) that `rel`, a key relative to the array, names when it is exactly the
 * key zarr_chunk_key gives for them and each is below lim[d] (meta.c); false for any other key. */
bool zarr__chunk_key_coords(const zarr_array_meta *m, const char *rel, const uint64_t *lim, uint64_t *c);

#endif
