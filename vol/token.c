/*
 * token.c: tokens back to paths (H5Oopen_by_token, H5Ropen_object, netCDF's dimension-scale lookups).
 * A token names the object through the path it had when this open first met it (moves.c); the cached
 * node holding it is found in the node cache's token index, and an object not in the cache by walking
 * the hierarchy through the link table, which is why this sits above it.
 */
#include "h5zv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The path under `path` (depth levels down) of the object whose token is `tok`, or NULL. malloc'ed. */
static char *
walk_for_token(h5zv_file *f, const char *path, const H5O_token_t *tok, int depth)
{
    H5O_token_t t;
    h5zv_link  *l   = NULL;
    size_t      n   = 0;
    char       *res = NULL;

    h5zv_token_of(f, path, &t);
    if (memcmp(&t, tok, sizeof t) == 0)
        return strdup(path);
    if (depth > 64)
        return NULL;
    H5E_BEGIN_TRY
    {
        /* groups only: a probe (remembered) tells, without loading every array met on the way */
        zarr_node_type type = ZARR_NODE_NONE;
        if (h5zv_node_probe(f, path, &type) == 0 && type == ZARR_NODE_GROUP &&
            h5zv_links_list(f, path, &l, &n) == 0) {
            for (size_t i = 0; i < n && !res; i++) {
                char child[4096];
                if (l[i].kind != H5ZV_LINK_HARD)
                    continue;
                snprintf(child, sizeof child, "%s%s%s", path, *path ? "/" : "", l[i].name);
                res = walk_for_token(f, child, tok, depth + 1);
            }
        }
    }
    H5E_END_TRY
    h5zv_links_free(l, n);
    return res;
}

char *
h5zv_token_to_path(h5zv_file *f, const H5O_token_t *tok)
{
    /* Cached nodes first (the token index): the common case, references to objects already visited. */
    h5zv_node *n = h5zv_node_of_token(f, tok);
    if (n)
        return strdup(n->path);
    return walk_for_token(f, "", tok, 0);
}
