/* netcdf_config.h: the config.h netCDF-C 4.9.3's own test programs include, for the build that
 * scripts/deps.sh made (its CMake build folder is removed after the install, and config.h with it).
 *
 * Hand-written from netCDF's config.h.cmake.in for what that build enabled: the installed netcdf_meta.h
 * and lib/libnetcdf.settings (netCDF-4/HDF5, CDF5, NCZarr, plugins, szip, zstd, blosc, bz2, quantize,
 * diskless, mmap, ERANGE fill, the v2 API; no DAP, byte-range, S3, HDF4, PnetCDF, parallel I/O or logging)
 * and a Linux x86_64 (glibc) host. tests/peers/netcdf_suite.py copies it to <out>/gen/config.h for the
 * tests' compile. Only what the test programs and the internal headers they include look at matters;
 * the defaults below are CMakeLists.txt's (lines 360-368). The plugin folders (NETCDF_PLUGIN_*) are left
 * out: no test reads them, and they depend on the cache's place.
 */
#ifndef CONFIG_H
#define CONFIG_H

#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS   64
#define _LARGEFILE64_SOURCE 1
#define _LARGEFILE_SOURCE   1
#endif

#define CHUNK_CACHE_NELEMS             1000
#define CHUNK_CACHE_PREEMPTION         0.75
#define CHUNK_CACHE_SIZE               67108864U
#define DEFAULT_CHUNKS_IN_CACHE        1000
#define DEFAULT_CHUNK_CACHE_PREEMPTION 0.75
#define DEFAULT_CHUNK_CACHE_SIZE       67108864U
#define DEFAULT_CHUNK_SIZE             16777216

#define NETCDF_ENABLE_ATEXIT_FINALIZE 1
#define NETCDF_ENABLE_ERANGE_FILL     1
#define ERANGE_FILL                   1
#define NETCDF_ENABLE_HDF5            1
#define NETCDF_ENABLE_CDF5            1
#define NETCDF_ENABLE_NCZARR          1
#define NETCDF_ENABLE_NCZARR_FILTERS  1
#define NETCDF_ENABLE_NCZARR_ZIP      1
#define NETCDF_ENABLE_PLUGINS         1
#define NETCDF_ENABLE_LIBXML2         1
#define NETCDF_ENABLE_LEGACY_MACROS   1
#define NETCDF_ENABLE_MULTIFILTERS    1
#define NETCDF_ENABLE_BLOSC           1

#define HAVE_H5Z_SZIP             1
#define HAVE_SZ                   1
#define HAVE_BZ2                  1
#define HAVE_ZSTD                 1
#define HAVE_BLOSC                1
#define HAVE_H5LITERATE2          1
#define HDF5_SUPPORTS_PAR_FILTERS 1
#define HDF5_UTF8_PATHS           1

#define HAVE_ALLOCA                 1
#define HAVE_ALLOCA_H               1
#define HAVE_ATEXIT                 1
#define HAVE_DECL_ISFINITE          1
#define HAVE_DECL_ISINF             1
#define HAVE_DECL_ISNAN             1
#define HAVE_DIRENT_H               1
#define HAVE_DLFCN_H                1
#define HAVE_FCNTL_H                1
#define HAVE_FILENO                 1
#define HAVE_FSYNC                  1
#define HAVE_GETOPT_H               1
#define HAVE_GETPAGESIZE            1
#define HAVE_GETRLIMIT              1
#define HAVE_GETTIMEOFDAY           1
#define HAVE_CLOCK_GETTIME          1
#define HAVE_STRUCT_TIMESPEC        1
#define HAVE_INTTYPES_H             1
#define HAVE_LIBDL                  1
#define HAVE_LIBM                   1
#define HAVE_LOCALE_H               1
#define HAVE_LONG_LONG_INT          1
#define HAVE_MALLOC_H               1
#define HAVE_MEMMOVE                1
#define HAVE_MKSTEMP                1
#define HAVE_MKTEMP                 1
#define HAVE_MREMAP                 1
#define HAVE_RANDOM                 1
#define HAVE_SNPRINTF               1
#define HAVE_MODE_T                 1
#define HAVE_SSIZE_T                1
#define HAVE_PTRDIFF_T              1
#define HAVE_UINTPTR_T              1
#define HAVE_STDARG_H               1
#define HAVE_STDINT_H               1
#define HAVE_STDIO_H                1
#define HAVE_STDLIB_H               1
#define HAVE_CTYPE_H                1
#define HAVE_STRINGS_H              1
#define HAVE_SIGNAL_H               1
#define HAVE_STRING_H               1
#define HAVE_FTW_H                  1
#define HAVE_LIBGEN_H               1
#define HAVE_STRDUP                 1
#define HAVE_STRNDUP                1
#define HAVE_STRCASECMP             1
#define HAVE_STRLEN                 1
#define HAVE_STRTOLL                1
#define HAVE_STRTOULL               1
#define HAVE_STRUCT_STAT_ST_BLKSIZE 1
#define HAVE_SYSCONF                1
#define HAVE_SYS_PARAM_H            1
#define HAVE_SYS_RESOURCE_H         1
#define HAVE_SYS_STAT_H             1
#define HAVE_SYS_TIME_H             1
#define HAVE_SYS_TYPES_H            1
#define HAVE_TIME_H                 1
#define HAVE_UNISTD_H               1
#define HAVE_UINT                   1
#define HAVE_USHORT                 1
#define HAVE_UINT64_T               1
/* glibc 2.36 (Debian 12) has no strlcat/strlcpy: ncconfigure.h declares netCDF's own. */

#define NC_DISPATCH_VERSION 5
#define BUILD_V2            1
#define USE_NETCDF_2        1
#define USE_HDF5            1
#define USE_NETCDF4         1
#define USE_DISKLESS        1
#define USE_MMAP            1
#define ENABLE_FILEINFO     1

#define PACKAGE           "netcdf"
#define PACKAGE_BUGREPORT "support-netcdf@unidata.ucar.edu"
#define PACKAGE_NAME      "netCDF"
#define PACKAGE_STRING    "netCDF 4.9.3"
#define PACKAGE_TARNAME   "netcdf"
#define PACKAGE_URL       ""
#define PACKAGE_VERSION   "4.9.3"
#define VERSION           "4.9.3"

#define SIZEOF_CHAR               1
#define SIZEOF_UCHAR              1
#define SIZEOF_SHORT              2
#define SIZEOF_USHORT             2
#define SIZEOF_UNSIGNED_SHORT_INT 2
#define SIZEOF_INT                4
#define SIZEOF_UINT               4
#define SIZEOF_UNSIGNED_INT       4
#define SIZEOF_LONG               8
#define SIZEOF_LONG_LONG          8
#define SIZEOF_LONGLONG           8
#define SIZEOF_ULONGLONG          8
#define SIZEOF_UNSIGNED_LONG_LONG 8
#define SIZEOF_FLOAT              4
#define SIZEOF_DOUBLE             8
#define SIZEOF_OFF_T              8
#define SIZEOF_OFF64_T            8
#define SIZEOF_SIZE_T             8
#define SIZEOF_SSIZE_T            8
#define SIZEOF_VOIDSTAR           8
#define SIZEOF_VOIDP              8

#ifndef _DARWIN_USE_64_BIT_INODE
#define _DARWIN_USE_64_BIT_INODE 1
#endif

#include "ncconfigure.h"
#endif
