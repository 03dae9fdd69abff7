/*
 * json.h: the core's JSON layer (internal), a thin layer over json-c.
 *
 * Parsing checks the whole document (trailing garbage is an error), accepts the bare NaN/Infinity
 * literals Python's json module writes, and refuses integers outside int64/uint64 instead of clamping
 * them. Dumping prints zarr-python's layout (2-space indent), doubles in the shortest form that reads
 * back exactly and integers exactly. The getters check a key's type and fail with a message naming the
 * document and the key ("'temp/zarr.json': 'shape' must be a list of non-negative integers").
 */
#ifndef H5ZARR_ZARR_JSON_H
#define H5ZARR_ZARR_JSON_H

#include "h5zarr/zarr.h"

#include <json-c/json.h>

/* Parses `n` bytes of `text` (need not be NUL-terminated) into a new tree (`*out`, caller puts).
 * Errors (ZARR_EMETA) name `where` and the byte position. */
int zarr__json_parse(const char *text, size_t n, const char *where, struct json_object **out);
/* Runs `n` tasks of `fn` on `job` as one job (a pool's zarr_pool_run, whose tasks never fail here). */
typedef void (*zarr__json_runner)(zarr_task_fn fn, void *job, size_t n);
/* zarr__json_parse of a document whose bulk is one object at the key path `keys[nkeys]` (1 to 4 keys from
 * the root: a root zarr.json's consolidated_metadata.metadata), that object's member values parsed as
 * one job of `run` (NULL: one after another on the caller) when it has at least `min_members` members:
 * the same tree, answer and message (json.c, "A wide document"; fuzz_consolidated compares the two). */
int zarr__json_parse_wide(const char *text, size_t n, const char *where, const char *const *keys, int nkeys,
                          size_t min_members, zarr__json_runner run, struct json_object **out);
/* One member of an object in a text: its key (between its quotes, no escape in it) and its value, as
 * byte offsets and lengths. */
typedef struct {
    size_t ks, kn, vs, vn;
} zarr__json_span;
/* The scan of zarr__json_parse_wide without the members' parse: the spans of the members of the object at
 * the key path (`*members`, malloc'ed, `*nm` of them, in the text's order; names may repeat) and the rest
 * of the document parsed with that object left empty (`*rest`, caller puts). ZARR_EMETA without a message
 * when the text is not what the scanner knows, or the rest does not parse: the caller parses the whole
 * text (zarr__json_parse gives the answer and the message). The members' values are not checked. */
int zarr__json_split_wide(const char *text, size_t n, const char *where, const char *const *keys, int nkeys,
                          size_t min_members, zarr__json_span **members, size_t *nm,
                          struct json_object **rest);
/* Documents this large that may hold consolidated metadata go through zarr__json_parse_wide (their
 * scan and the job's wake-up are then a small share of the parse). */
#define ZARR_JSON_WIDE_BYTES (256u << 10)
/* A zarr.json (`format` 3: consolidated_metadata.metadata) or .zmetadata (2: metadata): zarr__json_parse,
 * or from ZARR_JSON_WIDE_BYTES on zarr__json_parse_wide on the default pool. Defined in zarr/node.c (the
 * layer that may run the pool). */
int zarr__json_parse_doc(const char *text, size_t n, const char *where, int format, struct json_object **out);

/* Pretty text of `j` (borrowed; NULL prints "null"), malloc'ed, or NULL when out of memory. Non-finite
 * doubles print as the bare literals NaN, Infinity, -Infinity. */
char *zarr__json_dump(struct json_object *j);

/* Writing a document piece by piece in zarr__json_dump's layout, without building its tree: the bytes
 * are those of dumping the tree the same calls describe (tests/core/test_meta.c compares them). Each
 * appends to `b` and returns ZARR_OK or an error; `level` is the nesting of the value (0: the document).
 * An object is "{", per member zarr__json_w_key (`first` for the first member) then its value written at
 * level + 1, then zarr__json_w_close(b, level, '}'); an empty one is the raw "{}". A list is "[", per
 * element zarr__json_w_item then the value at level + 1, then zarr__json_w_close(b, level, ']'); an empty
 * one "[]". */
int zarr__json_w_raw(zarr_buf *b, const char *s);
/* "," unless `first`, a line break and the indent of a member or element of the object or list at
 * `level`. */
int zarr__json_w_item(zarr_buf *b, int level, bool first);
/* zarr__json_w_item, then `key` as a string and ": ". */
int zarr__json_w_key(zarr_buf *b, int level, bool first, const char *key);
/* zarr__json_w_key of a key of `n` bytes that needs no escaping (a literal of the writers: no strlen, no
 * scan; ZARR__W_KEY passes a string literal). */
int zarr__json_w_key_n(zarr_buf *b, int level, bool first, const char *key, size_t n);
#define ZARR__W_KEY(b, level, first, lit) zarr__json_w_key_n((b), (level), (first), "" lit, sizeof(lit) - 1)
/* A line break, the indent of `level` and `close`. */
int zarr__json_w_close(zarr_buf *b, int level, char close);
/* A tree's value (borrowed; NULL: null) as zarr__json_dump prints it at `level`. */
int zarr__json_w_value(zarr_buf *b, struct json_object *j, int level);
/* A JSON string (NULL: null). */
int zarr__json_w_string(zarr_buf *b, const char *s);
int zarr__json_w_u64(zarr_buf *b, uint64_t u);
/* A list of `n` unsigned integers at `level` ("[]" when empty), as zarr__json_new_uint_list dumps. */
int zarr__json_w_u64_list(zarr_buf *b, const uint64_t *vals, int n, int level);

/* Integers: json-c keeps values above INT64_MAX as uint64. These read a JSON integer exactly: they fail
 * (return false) when `j` is not an integer or the value does not fit the target type. */
bool zarr__json_get_i64(struct json_object *j, int64_t *out);
bool zarr__json_get_u64(struct json_object *j, uint64_t *out);
/* True if `j` is a JSON integer that is negative (only meaningful for integers). */
bool zarr__json_is_negative_int(struct json_object *j);
/* True for JSON ints and doubles. */
bool zarr__json_is_number(struct json_object *j);

/* Semantic equality: objects ignore key order, numbers compare by value (1 == 1.0, NaN == NaN),
 * integers exactly. */
bool zarr__json_equal(struct json_object *a, struct json_object *b);

/* Key getters. `obj` must be an object. A missing key: ZARR_EMETA "'where': missing required key 'key'"
 * when `required`, else ZARR_OK with *out NULL (json null counts as present: check with `*out == NULL`
 * after a successful call only for absent keys; use zarr__json_has to tell null from absent). */
bool zarr__json_has(struct json_object *obj, const char *key);
int  zarr__json_get_key(struct json_object *obj, const char *key, json_type type, bool required,
                        const char *where, const char *what, struct json_object **out);
/* A string value (borrowed from the tree). */
int zarr__json_get_str(struct json_object *obj, const char *key, bool required, const char *where,
                       const char **out);
/* A list of unsigned integers (each >= `min`), at most `max` entries; *n is the count. */
int zarr__json_get_uint_list(struct json_object *obj, const char *key, uint64_t min, const char *where,
                             uint64_t *vals, int max, int *n);
/* The same for a list value already in hand (`name` names it in messages). */
int zarr__json_uint_list(struct json_object *list, const char *name, uint64_t min, const char *where,
                         uint64_t *vals, int max, int *n);

/* New JSON for a uint64 list. NULL when out of memory. */
struct json_object *zarr__json_new_uint_list(const uint64_t *vals, int n);

/* Adds `val` (taken; NULL = json null) under `key`, replacing an old value. ZARR_ENOMEM on failure. */
int zarr__json_add(struct json_object *obj, const char *key, struct json_object *val);

#endif
