/*
 * connector.c: the zarr side of the connector's class (the class table itself is in route.c):
 * initialization and termination (the error class: vol/err.c; the hook the node cache runs on each
 * loaded node: the earlier form of reserved fields, vol/reserved_legacy.c), capability flags and the
 * token callbacks (compare, to and from text).
 *
 * Tokens: an object's token is the 128-bit XXH3 hash of the path it had when this open first met it
 * (vol/util.c: h5zv_token_from_path; vol/moves.c), so tokens of unmoved objects are stable across opens
 * and processes; a token is turned back into a path through the node cache's token index or by walking
 * the hierarchy (vol/node.c: h5zv_token_to_path).
 */
#include "h5zv.h"
#include "reserved.h"
#include "pointer.h"

#include <stdio.h>
#include <string.h>

/* HDF5 registers the class again whenever no application id of an earlier registration is left (each
 * H5Pset_fapl_zarr closes its id) and calls init/term per registration: the shared state (error class,
 * memos) lives until the last registration goes, or errors pushed after closing one fapl would be lost. */
static int h5zv_nregs;

herr_t
h5zv_init(hid_t vipl_id)
{
    (void)vipl_id;
    h5zv_nregs++;
    h5zv_err_init();
    h5zv_node_set_load_hook(h5zv_reserved_upgrade); /* the earlier form of _h5zarr, when allowed */
    return 0;
}

herr_t
h5zv_term(void)
{
    if (h5zv_nregs > 0 && --h5zv_nregs > 0)
        return 0;
    h5zv_plist_memo_clear();
    h5zv_plist_defaults_clear();
    h5zv_pointer_sweep_renamed(); /* a program's temporary names renamed by now: their replaced stores */
    /* no pool thread outlives the library (H5close, or HDF5's atexit handler): the engine's jobs are
     * synchronous, so none is running; pools restart their threads if HDF5 is used again */
    zarr_pool_stop_all();
    zarr_store_clear_wait(); /* the trash of truncated stores deleted, its thread joined (FORMAT.md "Trash")
                              */
    h5zv_pointer_term();
    h5zv_err_term();
    return 0;
}

/* ---- info: vol/config.c (h5zv_info_copy/cmp/free/to_str/from_str) ------------------------------- */

/* ---- introspection ------------------------------------------------------------------------------- */
uint64_t
h5zv_cap_flags(const void *info)
{
    (void)info;
    return H5ZV_CAP_FLAGS;
}

/* ---- tokens -------------------------------------------------------------------------------------- */
herr_t
h5zv_token_cmp(void *obj, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp_value)
{
    (void)obj;
    *cmp_value = memcmp(t1, t2, sizeof *t1);
    return 0;
}

herr_t
h5zv_token_to_str(void *obj, H5I_type_t obj_type, const H5O_token_t *token, char **token_str)
{
    char *s = H5allocate_memory(2 * H5O_MAX_TOKEN_SIZE + 1, false);
    (void)obj;
    (void)obj_type;
    if (!s)
        return -1;
    for (int i = 0; i < H5O_MAX_TOKEN_SIZE; i++)
        sprintf(s + 2 * i, "%02x", token->__data[i]);
    *token_str = s;
    return 0;
}

herr_t
h5zv_token_from_str(void *obj, H5I_type_t obj_type, const char *token_str, H5O_token_t *token)
{
    (void)obj;
    (void)obj_type;
    if (!token_str || strlen(token_str) != 2 * H5O_MAX_TOKEN_SIZE) {
        h5zv_err_push(__func__, __LINE__, "token string '%s' is not %d hex digits",
                      token_str ? token_str : "", 2 * H5O_MAX_TOKEN_SIZE);
        return -1;
    }
    for (int i = 0; i < H5O_MAX_TOKEN_SIZE; i++) {
        unsigned v;
        if (sscanf(token_str + 2 * i, "%2x", &v) != 1) {
            h5zv_err_push(__func__, __LINE__, "token string '%s' is not hex", token_str);
            return -1;
        }
        token->__data[i] = (uint8_t)v;
    }
    return 0;
}
