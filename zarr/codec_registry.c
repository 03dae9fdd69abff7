/*
 * codec_registry.c: the codecs this build reads and writes, one line each (as c-blosc2 keeps its
 * codecs-registry.c): the class `zarr__codec_<name>` is defined in zarr/codecs/<name>.c. Lookup by v3
 * name, "numcodecs.<id>" or numcodecs id, and the codecs numcodecs has that no build can read, with
 * the reason. To add a codec see docs/HACKING.md "How to add a codec".
 */
#include "codec_class.h"

#include <string.h>

/* The order is the one `h5zarr-config --codecs` lists (cmake/h5zarr_config_codecs.cmake reads it);
 * it matters for lookup only where two classes could answer one name (none do). */
#define ZARR__CODECS(X)                                                                                      \
    X(transpose)                                                                                             \
    X(bytes)                                                                                                 \
    X(vlen_utf8)                                                                                             \
    X(vlen_bytes)                                                                                            \
    X(gzip)                                                                                                  \
    X(zlib)                                                                                                  \
    X(zstd)                                                                                                  \
    X(blosc)                                                                                                 \
    X(shuffle)                                                                                               \
    X(crc32c)                                                                                                \
    X(lz4)                                                                                                   \
    X(bz2)                                                                                                   \
    X(fletcher32)                                                                                            \
    X(hdf5_lz4)                                                                                              \
    X(hdf5_szip)                                                                                             \
    X(hdf5_scaleoffset)                                                                                      \
    X(delta)                                                                                                 \
    X(sharding)                                                                                              \
    X(crc32)                                                                                                 \
    X(adler32)                                                                                               \
    X(lzma)                                                                                                  \
    X(fixedscaleoffset)                                                                                      \
    X(quantize)                                                                                              \
    X(bitround)                                                                                              \
    X(astype)                                                                                                \
    X(packbits)                                                                                              \
    X(categorize)                                                                                            \
    X(zfpy)                                                                                                  \
    X(lzf)                                                                                                   \
    X(hdf5_zfp)

#define DECLARE(name) extern const zarr__codec_class zarr__codec_##name;
#define ENTRY(name)   &zarr__codec_##name,
ZARR__CODECS(DECLARE)
static const zarr__codec_class *const registry[] = {ZARR__CODECS(ENTRY)};
#define NREGISTRY (sizeof registry / sizeof registry[0])

/* numcodecs codecs that hold Python objects: no chunk of theirs means anything outside Python. */
static const struct {
    const char *id, *why;
} refused[] = {
    {"pickle", "it stores Python pickles, which only Python can decode (and decoding one runs code)"},
    {"json2", "it stores numpy object arrays as Python-specific JSON; store strings with vlen-utf8"},
    {"vlen-array", "it stores numpy object arrays of arrays, which no HDF5 type maps to"},
    {"msgpack2", "it stores numpy object arrays as Python-specific msgpack; store strings with vlen-utf8"},
    {"jsonb", "it stores Python objects as JSON bytes"},
};

const zarr__codec_class *
zarr__codec_lookup(const char *name, bool *v2style)
{
    const char *id = name;
    bool        prefixed;
    if (!name)
        return NULL;
    prefixed = strncmp(name, "numcodecs.", 10) == 0;
    if (prefixed) {
        id       = name + 10;
        *v2style = true;
    }
    for (size_t i = 0; i < NREGISTRY; i++) {
        const zarr__codec_class *cls = registry[i];
        if (cls->v2id && strcmp(id, cls->v2id) == 0) {
            if (prefixed && (cls->flags & ZARR__CODEC_NO_ALIAS))
                return NULL;
            return cls;
        }
        if (!*v2style &&
            (strcmp(name, cls->v3name) == 0 || (cls->v3alias && strcmp(name, cls->v3alias) == 0)))
            return cls;
    }
    return NULL;
}

const char *
zarr__codec_refusal(const char *name)
{
    const char *id = name && strncmp(name, "numcodecs.", 10) == 0 ? name + 10 : name;
    for (size_t i = 0; id && i < sizeof refused / sizeof refused[0]; i++)
        if (strcmp(id, refused[i].id) == 0)
            return refused[i].why;
    return NULL;
}

const zarr__codec_class *
zarr__codec_class_at(size_t i)
{
    return i < NREGISTRY ? registry[i] : NULL;
}
