/*
 * nczarr_codecs.c: the NCZarr codec table of libh5zarr_vol.so, so that netCDF's NCZarr and the zarr
 * connector share one HDF5_PLUGIN_PATH.
 *
 * NCZarr (netCDF-C 4.9.3, libnczarr/zplugins.c) dlopens every file on HDF5_PLUGIN_PATH. A library that
 * exports H5PLget_plugin_type must say H5PL_TYPE_FILTER, or NCZarr gives up with NC_EPLUGIN
 * ("Unclassified failure in accessing a dynamically loaded plugin") - and this library says
 * H5PL_TYPE_VOL. A library that exports NCZ_codec_info_defaults instead takes NCZarr's "codec
 * defaults" branch, where the HDF5 type is never asked: its NULL-terminated table of NCZ_codec_t
 * entries supplies the zarr side (codec JSON <-> HDF5 parameters) for HDF5 filters that another
 * library on the path implements. So the connector exports a real table:
 *
 *   hdf5_lz4 <-> HDF5's lz4 filter (32004): {"id": "hdf5_lz4", "blocksize": N} <-> cd_values {N}.
 *
 * The filter itself is h5zarr's libh5zarr_lz4.so beside this library (or any other 32004 plugin on the
 * path); its chunks are the hdf5_lz4 codec's bytes (zarr/codecs/hdf5_lz4.c, docs/FORMAT.md), so NCZarr writes
 * lz4-filtered variables that the core and the connector read, and reads the hdf5_lz4 arrays they write.
 *
 * NCZarr's constraints on the table, from zplugins.c: it must not be empty (an empty table is freed
 * twice: once at the end of NCZ_load_plugin, once at finalize from gs->zarr.default_libs), it must not
 * be NULL (then NCZ_plugin_save(0) fails and loading stops), and every entry's hdf5id must be at most
 * the largest filter id loaded from the path (else NC_EFILTER for every NCZarr open). The last holds
 * while the lz4 filter plugin sits in the same folder: keep the connector beside the filter plugins.
 *
 * netCDF's headers are not needed to build this: NCZ_codec_t below is netcdf_filter_build.h's struct,
 * version NCZ_CODEC_CLASS_VER 1, which NCZarr checks before using it. The connector does not depend on
 * netCDF; nothing here runs unless NCZarr loads the library.
 *
 * Ownership: the table and its strings are static. NCZ_codec_to_hdf5 and NCZ_hdf5_to_codec return
 * malloc'ed results that NCZarr frees with free().
 */
#include "h5zarr/zarr_filters.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* netcdf.h error codes used here. */
#define NCZC_NOERR   0
#define NCZC_EINVAL  (-36)  /* NC_EINVAL */
#define NCZC_ENOMEM  (-61)  /* NC_ENOMEM */
#define NCZC_EFILTER (-132) /* NC_EFILTER: bad filter (codec) parameters */

/* netcdf_filter_build.h */
#define NCZC_CODEC_CLASS_VER 1
#define NCZC_CODEC_HDF5      1

typedef struct nczc_codec_t {
    int          version;
    int          sort;
    const char  *codecid;
    unsigned int hdf5id;
    void (*NCZ_codec_initialize)(void);
    void (*NCZ_codec_finalize)(void);
    int (*NCZ_codec_to_hdf5)(const char *codec, size_t *nparamsp, unsigned **paramsp);
    int (*NCZ_hdf5_to_codec)(size_t nparams, const unsigned *params, char **codecp);
    int (*NCZ_modify_parameters)(int ncid, int varid, size_t *vnparamsp, unsigned **vparamsp,
                                 size_t *wnparamsp, unsigned **wparamsp);
} nczc_codec_t;

/* {"id": "hdf5_lz4"[, "blocksize": N]} -> {N} (N = 0, the filter's default, when absent). Other keys
 * are refused so that no setting is silently dropped; the blocksize is an integer 0..UINT32_MAX (or
 * such an integer as a string, the way NCZarr spells its own codecs' numbers). */
static int
lz4_codec_to_hdf5(const char *codec, size_t *nparamsp, unsigned **paramsp)
{
    struct json_object *j         = NULL, *v;
    unsigned           *params    = NULL;
    long long           blocksize = 0;
    int                 rc        = NCZC_EFILTER;

    if (!codec || !nparamsp || !paramsp)
        return NCZC_EINVAL;
    if (!(j = json_tokener_parse(codec)) || !json_object_is_type(j, json_type_object))
        goto done;
    if (!json_object_object_get_ex(j, "id", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "hdf5_lz4") != 0)
        goto done;
    json_object_object_foreach(j, key, val)
    {
        if (strcmp(key, "id") == 0)
            continue;
        if (strcmp(key, "blocksize") != 0)
            goto done;
        if (json_object_is_type(val, json_type_int)) {
            errno     = 0;
            blocksize = json_object_get_int64(val);
            if (errno)
                goto done;
        }
        else if (json_object_is_type(val, json_type_string)) {
            const char *s = json_object_get_string(val);
            char       *end;
            if (!*s || *s == '-')
                goto done;
            errno     = 0;
            blocksize = strtoll(s, &end, 10);
            if (errno || *end)
                goto done;
        }
        else
            goto done;
        if (blocksize < 0 || blocksize > (long long)UINT32_MAX)
            goto done;
    }
    if (!(params = malloc(sizeof *params))) {
        rc = NCZC_ENOMEM;
        goto done;
    }
    params[0] = (unsigned)blocksize;
    *nparamsp = 1;
    *paramsp  = params;
    rc        = NCZC_NOERR;
done:
    json_object_put(j);
    return rc;
}

/* {} or {N} -> {"id": "hdf5_lz4", "blocksize": N}, the form the core (zarr/codecs/hdf5_lz4.c) writes for v2.
 * HDF5's lz4 filter reads only cd_values[0], so more parameters are refused rather than lost. */
static int
lz4_hdf5_to_codec(size_t nparams, const unsigned *params, char **codecp)
{
    char     json[64];
    unsigned blocksize = 0;

    if (!codecp || (nparams > 0 && !params))
        return NCZC_EINVAL;
    if (nparams > 1)
        return NCZC_EFILTER;
    if (nparams == 1)
        blocksize = params[0];
    snprintf(json, sizeof json, "{\"id\": \"hdf5_lz4\", \"blocksize\": %u}", blocksize);
    if (!(*codecp = strdup(json)))
        return NCZC_ENOMEM;
    return NCZC_NOERR;
}

static const nczc_codec_t lz4_codec = {
    NCZC_CODEC_CLASS_VER, NCZC_CODEC_HDF5,   "hdf5_lz4", ZARR_H5Z_LZ4, NULL, NULL,
    lz4_codec_to_hdf5,    lz4_hdf5_to_codec, NULL, /* working parameters = visible ones */
};

static const nczc_codec_t *const codec_defaults[] = {&lz4_codec, NULL};

/* NCZarr's discovery entry point: the NULL-terminated table above (static; never empty). */
__attribute__((visibility("default"))) const void *
NCZ_codec_info_defaults(void)
{
    return codec_defaults;
}
