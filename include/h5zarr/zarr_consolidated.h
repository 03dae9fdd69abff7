/*
 * zarr_consolidated.h: consolidated metadata in h5zarr's zarr core (part of the public interface; see
 * zarr.h for the conventions).
 *
 * v2: a `.zmetadata` document at a group, {"zarr_consolidated_format": 1, "metadata": {"<rel>/.zarray":
 * {...}, "<rel>/.zattrs": {...}, ".zgroup": {...}}}, as zarr-python 2 writes it. v3: the group's
 * zarr.json carries "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata":
 * {"<rel path>": <zarr.json of that node>}}, as zarr-python 3 writes it.
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

/* The consolidated metadata stored at the group `path`: `*out` (new reference, caller puts) is the
 * "metadata" object (v2 keys like "a/.zarray", v3 keys like "a/b"), `*format` 2 or 3.
 * ZARR_ENOTFOUND when the group has none. */
int zarr_consolidated_read(zarr_store *s, const char *path, int *format, struct json_object **out);

/* Array metadata of the node at `path` (v3 zarr.json or v2 .zarray + .zattrs), from its own
 * documents or, when they are absent, from an ancestor's consolidated metadata. `*out` is new. */
int zarr_array_meta_read(zarr_store *s, const char *path, zarr_array_meta **out);

#ifdef __cplusplus
}
#endif
#endif
