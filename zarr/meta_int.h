/*
 * meta_int.h: internal declarations shared by the metadata layer: what the codec chain (chain.c, codecs/)
 * offers meta.c beyond zarr.h, and the consolidated-metadata lookup (consolidated.c) that node.c uses.
 * Not part of the public interface.
 */
#ifndef H5ZARR_ZARR_META_INT_H
#define H5ZARR_ZARR_META_INT_H

#include "h5zarr/zarr.h"

/* Gives the chain (and the inner chains of sharding_indexed) the array's fill value: one element in
 * memory form (borrowed, copied; NULL = zeros). Sharding reads missing inner chunks as it and does not
 * store inner chunks equal to it. Writes nothing when the value is unchanged. */
int zarr__chain_set_fill(zarr_chain *c, const void *fill);
/* zarr_chain_to_v3_json's list appended to `b` as text, printed at level `lv` as zarr__json_w_value
 * prints that list (the same bytes), without the list and the codecs' objects made. */
int zarr__chain_v3_text(const zarr_chain *c, int lv, zarr_buf *b);
/* zarr_group_children, the documents of the children read with one batch on a store that prefers
 * batches (`format` 3: zarr.json; 2: the v2 documents too; 0: what a probe reads). With `docs`, the
 * view answering them (a new reference, store_prefetch.c; `s` itself when nothing was read ahead) for
 * the caller's reads of those documents; NULL on failure. */
int zarr__group_children_docs(zarr_store *s, const char *path, int format, zarr_list_cb cb, void *ud,
                              zarr_store **docs);
/* Looks the node at `path` up in the consolidated metadata of its ancestors (nearest first; for v2
 * documents the node's own .zmetadata counts too, unless it has a zarr.json). `names` lists the
 * documents wanted (".zarray", ".zgroup", ".zattrs", "zarr.json"), at most
 * ZARR__CONSOLIDATED_MAX_NAMES, in order of precedence: the first name found at any level wins, at
 * its nearest level. Each level's consolidated metadata is read once for all names; a level without
 * any costs no message. `no_zarr_json`: the caller knows the node has no zarr.json of its own.
 * On success `*which` indexes `names` and `*doc` is a new reference to that document (caller puts).
 * ZARR_ENOTFOUND (no message) when none is there. */
#define ZARR__CONSOLIDATED_MAX_NAMES 4
int zarr__consolidated_find(zarr_store *s, const char *path, const char *const *names, int nnames,
                            bool no_zarr_json, int *which, struct json_object **doc);

/* The text of document `name` of the node at `path` as zarr__consolidated_find finds it. `out` is
 * reset and filled. ZARR_ENOTFOUND (no message) when none has it. */
int zarr__consolidated_doc(zarr_store *s, const char *path, const char *name, zarr_buf *out);

/* Metadata from a parsed v3 zarr.json (`root` borrowed; `where` names it in messages): what
 * zarr_array_meta_parse_v3 / zarr_group_meta_parse_v3 give from its text. `*out` is new. */
int zarr__array_meta_from_v3(struct json_object *root, const char *where, zarr_array_meta **out);
int zarr__group_meta_from_v3(struct json_object *root, const char *where, zarr_group_meta **out);

/* The group's zarr.json text (NUL-terminated) appended to `out` with consolidated metadata whose
 * "metadata" object is `md_text` (`md_n` bytes, printed at level 2 as the document's layout has it) and
 * whose hidden arrays are m->consolidated_hidden (m->consolidated is not looked at): the bytes
 * zarr_group_meta_to_v3 writes for the group holding that object as m->consolidated. */
int zarr__group_meta_v3_text_md(const zarr_group_meta *m, const char *md_text, size_t md_n, zarr_buf *out);

#endif
