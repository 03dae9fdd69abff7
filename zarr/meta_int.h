/*
 * meta_int.h: internal declarations shared by the metadata layer: what the codec chain (codec.c)
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
/* True when the chain's array->bytes codec is sharding_indexed. */
bool zarr__chain_has_sharding(const zarr_chain *c);

/* The text of document `name` (".zarray", ".zgroup", ".zattrs" or "zarr.json") of the node at `path`
 * as an ancestor's consolidated metadata holds it (nearest ancestor first; for v2 the node's own
 * .zmetadata counts too). `out` is reset and filled. ZARR_ENOTFOUND (no message) when none has it. */
int zarr__consolidated_doc(zarr_store *s, const char *path, const char *name, zarr_buf *out);

#endif
