/*
 * zarr_consolidated.h: consolidated metadata in h5zarr's zarr core (part of the public interface; see
 * zarr.h for the conventions).
 *
 * v2: a `.zmetadata` document at a group, {"zarr_consolidated_format": 1, "metadata": {"<rel>/.zarray":
 * {...}, "<rel>/.zattrs": {...}, ".zgroup": {...}}}, as zarr-python 2 writes it. v3: the group's
 * zarr.json carries "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata":
 * {"<rel path>": <zarr.json of that node>}}, as zarr-python 3 writes it. Hidden arrays (zarr.h,
 * ZARR_HIDDEN_DOC): v2 "<rel>/.h5zarr_array" keys (with their "<rel>/.zattrs"), v3 an object
 * "h5zarr_hidden": {"<rel path>": <document>} beside "metadata" (zarr-python 3 reads "kind" and
 * "metadata" only; every entry of "metadata" is a node to it).
 *
 * Precedence when reading: a node's own documents always win. Consolidated metadata is consulted only
 * for a node whose own document is absent (a store that carries only the consolidated document, e.g. a
 * copy without listing or a remote store): zarr_node_probe, zarr_group_read and zarr_array_meta_read
 * then look in the consolidated metadata of the node's ancestors, nearest first (v3 zarr.json, then v2
 * .zmetadata at each). The core never updates consolidated metadata when it writes a node: call
 * zarr_consolidate again after changing the hierarchy.
 */
#ifndef H5ZARR_ZARR_CONSOLIDATED_H
#define H5ZARR_ZARR_CONSOLIDATED_H

#include "h5zarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Consolidates the hierarchy below the group at `path` ("" = root): v2 writes `<path>/.zmetadata`;
 * v3 rewrites the group's zarr.json with inline consolidated metadata (keys relative to `path`). The
 * format is the group's. Fails with ZARR_ENOTFOUND / ZARR_EINVAL when `path` is not a group. */
int zarr_consolidate(zarr_store *s, const char *path);

/* Documents a caller already holds (consolidating what it wrote, without reading it back). `node`: the
 * node at `path` as the store has it: returns ZARR_OK with `*is_group`, `*format` (2 or 3) and `*doc`
 * (v3 zarr.json, v2 .zgroup or .zarray text) and `*attrs` (v2 .zattrs text, NULL when the node has
 * none), new malloc'ed strings the core frees; 1 when the caller does not hold it (the core reads the
 * store); a ZARR_E* code to fail. `children`: the child nodes of the group at `path` when the caller
 * knows all of them: cb(name, true, cbud) for each in strcmp order of names, returning ZARR_OK or the
 * callback's non-zero return; 1 when it does not know them all (the core lists the store). Either
 * callback may be NULL (never held). The caller answers only for what it knows matches the store.
 * `node_v3` (may be NULL; asked instead of `node` when consolidating v3): as `node`, the zarr.json of a
 * v3 node as a JSON object that shares nothing with the caller's and holds no consolidated metadata
 * (zarr_*_meta_to_v3_copy; `*doc`: a new reference the core takes, NULL when `*format` is 2): no text
 * made and parsed again for what the caller holds as objects. `node_v3_text` (may be NULL; asked before
 * `node_v3` when the core writes the document as text, zarr_consolidate_from without `md_out` and
 * `hidden_out`): as `node_v3`, the zarr.json appended to `out` as zarr_*_meta_write_v3 prints it at
 * `level`, nothing appended when `*format` is 2 (and nothing appended on failure or when answering 1). */
typedef struct zarr_consolidate_source {
    int (*node)(void *ud, const char *path, bool *is_group, int *format, char **doc, char **attrs);
    int (*children)(void *ud, const char *path, zarr_list_cb cb, void *cbud);
    void *ud;
    int (*node_v3)(void *ud, const char *path, bool *is_group, int *format, struct json_object **doc);
    int (*node_v3_text)(void *ud, const char *path, bool *is_group, int *format, int level, zarr_buf *out);
} zarr_consolidate_source;

/* zarr_consolidate taking the documents `src` holds from it (`src` NULL: zarr_consolidate). The
 * result is the same document, byte for byte, when `src` answers as the store would. `*md_out` (may
 * be NULL): a new reference to the "metadata" object written (v3: the group's `consolidated`), caller
 * puts; NULL on failure. `*hidden_out` (may be NULL): v3, a new reference to the group's
 * `consolidated_hidden` written (the hidden arrays, zarr.h ZARR_HIDDEN_DOC), NULL when there are none;
 * caller puts. A hidden array `src` holds is read from the store (its `node` answers 1 for it). v3
 * without `md_out` and `hidden_out`: the document is written as text, each node's zarr.json printed into
 * it (from `src`'s node_v3_text, else its node_v3's object, else the store's document), no tree of the
 * whole "metadata" object made; the same bytes. */
int zarr_consolidate_from(zarr_store *s, const char *path, const zarr_consolidate_source *src,
                          struct json_object **md_out, struct json_object **hidden_out);

/* The consolidated metadata stored at the group `path`: `*out` (new reference, caller puts) is the
 * "metadata" object (v2 keys like "a/.zarray", v3 keys like "a/b"), `*format` 2 or 3.
 * ZARR_ENOTFOUND when the group has none. */
int zarr_consolidated_read(zarr_store *s, const char *path, int *format, struct json_object **out);

/* Array metadata of the node at `path` (v3 zarr.json or v2 .zarray + .zattrs), from its own
 * documents or, when they are absent, from an ancestor's consolidated metadata. `*out` is new. */
int zarr_array_meta_read(zarr_store *s, const char *path, zarr_array_meta **out);

/* ---- a hierarchy opened from its consolidated metadata alone ------------------------------------
 * What zarr-python's open_consolidated does: the consolidated document of the group at `path` is read
 * once (one store get: v3 the group's zarr.json, v2 its .zmetadata) and every node below is then found,
 * listed and opened from it, with no further metadata read and no store listing; chunks are still read
 * from the store. Unlike the lookups above, the consolidated copy is trusted even where a node has
 * documents of its own (they may be newer: a reader that must see changes made since the last
 * zarr_consolidate uses zarr_node_load and zarr_group_children instead). Thread-safe for concurrent
 * reads once open. */
typedef struct zarr_consolidated zarr_consolidated;

/* Opens the view of the group at `path` ("" = root). `format` 2 or 3 reads only that format's document;
 * 0 tries zarr.json, then .zmetadata. The view holds a reference to `s`. ZARR_ENOTFOUND (no message)
 * when the group has no consolidated metadata. */
int  zarr_consolidated_open(zarr_store *s, const char *path, int format, zarr_consolidated **out);
void zarr_consolidated_close(zarr_consolidated *c); /* accepts NULL */
/* The view of a v3 group already read (`g`, borrowed: its inline consolidated metadata is shared, not
 * copied): no store access at all. ZARR_ENOTFOUND (no message) when `g` carries none. */
int zarr_consolidated_from_group(zarr_store *s, const char *path, const zarr_group_meta *g,
                                 zarr_consolidated **out);
/* The view of the v3 group at `path` from its zarr.json's text (`doc`, `n` bytes, copied), for a large
 * document: the members of its consolidated metadata are parsed as one job of the default pool, each
 * made into its node there and its parsed form dropped (the view keeps the text, and each node for the
 * first zarr_consolidated_load asking for it; later loads parse the member's text again). The view's own
 * group (zarr_consolidated_load of `path`) then has an empty `consolidated`. ZARR_ENOTFOUND (no message)
 * when not taken: a document below 256 KiB (the core's ZARR_JSON_WIDE_BYTES), no group with consolidated
 * metadata, a text the split scan does not know, a member that is no JSON, or two members of one name:
 * the caller parses the document as before (zarr_node_load_v3_doc, then zarr_consolidated_from_group),
 * which gives the answer and the message. */
int zarr_consolidated_from_doc(zarr_store *s, const char *path, const void *doc, size_t n,
                               zarr_consolidated **out);
/* The node at `path` (at or below the view's group, paths from the store root) as zarr_node_load gives
 * it, from the consolidated document: *type ZARR_NODE_NONE (and ZARR_OK) when the document does not
 * list it. On success with a node exactly one of `*g` (new) and `*a` (new, reading chunks from the
 * view's store) is set; either pointer may be NULL to get the type only. */
int zarr_consolidated_load(zarr_consolidated *c, const char *path, zarr_node_type *type, int *format,
                           zarr_group_meta **g, zarr_array **a);
/* The child nodes of the group at `path` the document lists, in byte order of their names (`is_dir`
 * true); the callback's non-zero return stops and is returned. ZARR_ENOTFOUND (no message) when
 * `path` is outside the view. */
int zarr_consolidated_children(zarr_consolidated *c, const char *path, zarr_list_cb cb, void *ud);

#ifdef __cplusplus
}
#endif
#endif
