/*
 * test_filters_public.c: the core's public interface for HDF5 filter mappings (h5zarr/zarr_filters.h),
 * which the connector (vol/filter.c, vol/config.c), the H5Z plugins and the NCZarr table use instead of
 * core-internal headers and <blosc.h> (issue #28). Checked against the libraries themselves: Blosc's
 * compressor and shuffle codes against c-blosc's BLOSC_* constants and what this c-blosc build has
 * (blosc_compname_to_compcode), the H5Z-ZFP cd_values by reading the zfp header they carry back with
 * libzfp (type, dims in zfp's order, mode and its parameter), and every bad argument refused.
 * This file includes no zarr/ header: only what a program outside the core can include.
 */
#include "h5zarr/zarr.h"
#include "h5zarr/zarr_filters.h"
#include "runner.h"

#include <blosc.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <zfp.h>

/* ---- the registered filter ids (The HDF Group's list of registered filter plugins) ---- */
static int
test_filter_ids(void)
{
    ASSERT_EQ_INT(ZARR_H5Z_BZIP2, 307);
    ASSERT_EQ_INT(ZARR_H5Z_LZF, 32000);
    ASSERT_EQ_INT(ZARR_H5Z_BLOSC, 32001);
    ASSERT_EQ_INT(ZARR_H5Z_LZ4, 32004);
    ASSERT_EQ_INT(ZARR_H5Z_BITSHUFFLE, 32008);
    ASSERT_EQ_INT(ZARR_H5Z_ZFP, 32013);
    ASSERT_EQ_INT(ZARR_H5Z_ZSTD, 32015);
    return 0;
}

/* ---- Blosc: names <-> codes as c-blosc numbers them; limits as c-blosc defines them ---- */
static int
test_blosc_names(void)
{
    static const struct {
        const char *name;
        int         code;
    } comp[] = {{"blosclz", BLOSC_BLOSCLZ}, {"lz4", BLOSC_LZ4},   {"lz4hc", BLOSC_LZ4HC},
                {"snappy", BLOSC_SNAPPY},   {"zlib", BLOSC_ZLIB}, {"zstd", BLOSC_ZSTD}};
    static const struct {
        const char *name;
        int         code;
    } shuf[] = {{"noshuffle", BLOSC_NOSHUFFLE}, {"shuffle", BLOSC_SHUFFLE}, {"bitshuffle", BLOSC_BITSHUFFLE}};

    ASSERT_EQ_INT(ZARR_BLOSC_NCOMP, 6);
    ASSERT_EQ_INT(ZARR_BLOSC_NSHUFFLE, 3);
    ASSERT_EQ_INT(ZARR_BLOSC_MAX_TYPESIZE, BLOSC_MAX_TYPESIZE);
    ASSERT_EQ_INT(ZARR_BLOSC_VERSION_FORMAT, BLOSC_VERSION_FORMAT);
    for (size_t i = 0; i < sizeof comp / sizeof comp[0]; i++) {
        ASSERT_STR(zarr_blosc_compname(comp[i].code), comp[i].name);
        ASSERT_EQ_INT(zarr_blosc_compcode(comp[i].name), comp[i].code);
        /* what c-blosc itself says it has, for every name */
        ASSERT_EQ_INT(zarr_blosc_has_compressor(comp[i].name), blosc_compname_to_compcode(comp[i].name) >= 0);
        if (zarr_blosc_has_compressor(comp[i].name))
            ASSERT_OK(zarr_blosc_check_compressor(comp[i].name));
        else {
            ASSERT_ERR(zarr_blosc_check_compressor(comp[i].name), ZARR_EUNSUPPORTED);
            ASSERT(strstr(zarr_errmsg(), comp[i].name) && strstr(zarr_errmsg(), "not in this c-blosc"));
        }
    }
    for (size_t i = 0; i < sizeof shuf / sizeof shuf[0]; i++) {
        ASSERT_STR(zarr_blosc_shuffle_name(shuf[i].code), shuf[i].name);
        ASSERT_EQ_INT(zarr_blosc_shuffle_code(shuf[i].name), shuf[i].code);
    }
    /* Debian's c-blosc has these (the connector's default configured codec is blosc zstd) */
    ASSERT(zarr_blosc_has_compressor("lz4") && zarr_blosc_has_compressor("zstd"));
    ASSERT(zarr_blosc_has_compressor("zlib") && zarr_blosc_has_compressor("blosclz"));

    /* out of range and unknown: NULL / -1 / false, never a crash */
    ASSERT(zarr_blosc_compname(-1) == NULL && zarr_blosc_compname(6) == NULL);
    ASSERT(zarr_blosc_compname((int)0x80000000u) == NULL);
    ASSERT(zarr_blosc_shuffle_name(-1) == NULL && zarr_blosc_shuffle_name(3) == NULL);
    ASSERT_EQ_INT(zarr_blosc_compcode("nope"), -1);
    ASSERT_EQ_INT(zarr_blosc_compcode("LZ4"), -1);
    ASSERT_EQ_INT(zarr_blosc_compcode(""), -1);
    ASSERT_EQ_INT(zarr_blosc_compcode(NULL), -1);
    ASSERT_EQ_INT(zarr_blosc_shuffle_code("1"), -1); /* numbers are the caller's to parse */
    ASSERT_EQ_INT(zarr_blosc_shuffle_code("byte"), -1);
    ASSERT_EQ_INT(zarr_blosc_shuffle_code(NULL), -1);
    ASSERT(!zarr_blosc_has_compressor("nope") && !zarr_blosc_has_compressor(NULL));
    ASSERT_ERR(zarr_blosc_check_compressor("nope"), ZARR_EINVAL);
    ASSERT(strstr(zarr_errmsg(), "'nope'") && strstr(zarr_errmsg(), "lz4") && strstr(zarr_errmsg(), "zstd"));
    ASSERT_ERR(zarr_blosc_check_compressor(NULL), ZARR_EINVAL);

    /* hdf5-blosc's type size rule */
    ASSERT_EQ_INT(zarr_blosc_typesize(0), 1);
    ASSERT_EQ_INT(zarr_blosc_typesize(1), 1);
    ASSERT_EQ_INT(zarr_blosc_typesize(8), 8);
    ASSERT_EQ_INT(zarr_blosc_typesize(255), 255);
    ASSERT_EQ_INT(zarr_blosc_typesize(256), 1);
    ASSERT_EQ_INT(zarr_blosc_typesize(SIZE_MAX), 1);
    return 0;
}

/* Reads the zfp header H5Z-ZFP's kept form carries in cd[1..ncd) (32-bit words in memory order). */
static int
read_header(const unsigned *cd, size_t ncd, zfp_field *fl, zfp_stream *zs)
{
    uint64_t   words[ZARR_H5ZFP_MAX_CD] = {0};
    bitstream *bs;
    size_t     bits;
    for (size_t i = 1; i < ncd; i++)
        memcpy((uint8_t *)words + 4 * (i - 1), &cd[i], 4);
    if (!(bs = stream_open(words, sizeof words)))
        return -1;
    zfp_stream_set_bit_stream(zs, bs);
    zfp_stream_rewind(zs);
    bits = zfp_read_header(zs, fl, ZFP_HEADER_FULL);
    stream_close(bs);
    return bits ? 0 : -1;
}

/* ---- H5Z-ZFP: generic cd_values -> the kept form (version word + zfp header) ---- */
static int
test_h5zfp_cd(void)
{
    unsigned    cd[ZARR_H5ZFP_MAX_CD + 4], gen[6];
    size_t      ncd = 0;
    double      dv;
    zfp_field  *fl = zfp_field_alloc();
    zfp_stream *zs = zfp_stream_open(NULL);
    ASSERT(fl && zs);

    /* fixed rate 8 on an int32 chunk 4 x 1 x 8: the dim of extent 1 left out, zfp's x the last dim */
    {
        uint64_t shape[3] = {4, 1, 8};
        dv                = 8.0;
        gen[0]            = 1;
        gen[1]            = 0;
        memcpy(&gen[2], &dv, 4);
        memcpy(&gen[3], (uint8_t *)&dv + 4, 4);
        for (size_t i = 0; i < sizeof cd / sizeof cd[0]; i++)
            cd[i] = 0xDEADBEEFu;
        ASSERT_OK(zarr_h5zfp_cd_from_generic(gen, 4, 1 /* int32 */, 3, shape, cd, &ncd));
        ASSERT(ncd >= 2 && ncd <= ZARR_H5ZFP_MAX_CD);
        ASSERT_EQ_INT(cd[0], 0x10005110u);                 /* H5Z-ZFP 1.1.0, zfp 1.0.0, codec 5 */
        ASSERT_EQ_INT(cd[ZARR_H5ZFP_MAX_CD], 0xDEADBEEFu); /* nothing written past the limit */
        ASSERT(read_header(cd, ncd, fl, zs) == 0);
        ASSERT_EQ_INT(zfp_field_type(fl), zfp_type_int32);
        ASSERT_EQ_INT(zfp_field_dimensionality(fl), 2);
        ASSERT_EQ_INT(fl->nx, 8);
        ASSERT_EQ_INT(fl->ny, 4);
        ASSERT_EQ_INT(zfp_stream_compression_mode(zs), zfp_mode_fixed_rate);
        ASSERT(fabs(zfp_stream_rate(zs, 2) - 8.0) < 1e-9);
    }
    /* fixed accuracy 1e-3 on a float64 chunk of 5 x 6 x 7 */
    {
        uint64_t shape[3] = {5, 6, 7};
        dv                = 1e-3;
        gen[0]            = 3;
        memcpy(&gen[2], &dv, 4);
        memcpy(&gen[3], (uint8_t *)&dv + 4, 4);
        ASSERT_OK(zarr_h5zfp_cd_from_generic(gen, 4, 4 /* double */, 3, shape, cd, &ncd));
        ASSERT(read_header(cd, ncd, fl, zs) == 0);
        ASSERT_EQ_INT(zfp_field_type(fl), zfp_type_double);
        ASSERT_EQ_INT(zfp_field_dimensionality(fl), 3);
        ASSERT(fl->nx == 7 && fl->ny == 6 && fl->nz == 5);
        ASSERT_EQ_INT(zfp_stream_compression_mode(zs), zfp_mode_fixed_accuracy);
        ASSERT(zfp_stream_accuracy(zs) > 0 && zfp_stream_accuracy(zs) <= 1e-3); /* zfp rounds down to 2^k */
    }
    /* fixed precision 20 and reversible on float32, 1-D */
    {
        uint64_t shape[1] = {100};
        gen[0]            = 2;
        gen[2]            = 20;
        ASSERT_OK(zarr_h5zfp_cd_from_generic(gen, 3, 3 /* float */, 1, shape, cd, &ncd));
        ASSERT(read_header(cd, ncd, fl, zs) == 0);
        ASSERT_EQ_INT(zfp_field_type(fl), zfp_type_float);
        ASSERT_EQ_INT(fl->nx, 100);
        ASSERT_EQ_INT(zfp_stream_compression_mode(zs), zfp_mode_fixed_precision);
        ASSERT_EQ_INT(zfp_stream_precision(zs), 20);
        gen[0] = 5;
        ASSERT_OK(zarr_h5zfp_cd_from_generic(gen, 1, 3, 1, shape, cd, &ncd));
        ASSERT(read_header(cd, ncd, fl, zs) == 0);
        ASSERT_EQ_INT(zfp_stream_compression_mode(zs), zfp_mode_reversible);
    }
    /* refused: bad mode, missing parameters, bad type, too many dims, NULL arguments */
    {
        uint64_t shape[5] = {2, 2, 2, 2, 2}, one[1] = {10};
        gen[0] = 0;
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, 1, one, cd, &ncd), ZARR_EINVAL);
        ASSERT(strstr(zarr_errmsg(), "mode"));
        gen[0] = 6;
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, 1, one, cd, &ncd), ZARR_EINVAL);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 0, 3, 1, one, cd, &ncd), ZARR_EINVAL);
        gen[0] = 1; /* a rate needs its double in [2..3] */
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 2, 3, 1, one, cd, &ncd), ZARR_EINVAL);
        ASSERT(strstr(zarr_errmsg(), "double"));
        gen[0] = 2;
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 2, 3, 1, one, cd, &ncd), ZARR_EINVAL);
        gen[0] = 5;
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 0, 1, one, cd, &ncd), ZARR_EINVAL);
        ASSERT(strstr(zarr_errmsg(), "zfp type 0"));
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 5, 1, one, cd, &ncd), ZARR_EINVAL);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, 5, shape, cd, &ncd), ZARR_EUNSUPPORTED);
        shape[4] = 1; /* the same chunk with a fifth dim of extent 1: 4 dims left */
        ASSERT_OK(zarr_h5zfp_cd_from_generic(gen, 1, 3, 5, shape, cd, &ncd));
        ASSERT(read_header(cd, ncd, fl, zs) == 0);
        ASSERT_EQ_INT(zfp_field_dimensionality(fl), 4);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(NULL, 1, 3, 1, one, cd, &ncd), ZARR_EINVAL);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, 1, NULL, cd, &ncd), ZARR_EINVAL);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, 1, one, NULL, &ncd), ZARR_EINVAL);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, 1, one, cd, NULL), ZARR_EINVAL);
        ASSERT_ERR(zarr_h5zfp_cd_from_generic(gen, 1, 3, -1, one, cd, &ncd), ZARR_EINVAL);
    }
    zfp_stream_close(zs);
    zfp_field_free(fl);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(filter_ids), TEST_ENTRY(blosc_names), TEST_ENTRY(h5zfp_cd)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
