/*
 * store_probe: drives one store through the core's store interface for the network-store tests
 * (tests/scripts/http_store.sh, s3_store.sh), which compare its output with the files it should see.
 *
 *   store_probe URL get KEY                value bytes to stdout
 *   store_probe URL range KEY OFF LEN      LEN bytes from OFF (LEN "end" = to the end) to stdout
 *   store_probe URL suffix KEY LEN         the last LEN bytes to stdout
 *   store_probe URL size KEY | exists KEY  the size / "yes" or "no"
 *   store_probe URL many ITEM...           one zarr_store_get_many of the items KEY, KEY@OFF+LEN (LEN "end"
 *                                          = to the end) or KEY@-LEN (suffix): one line per item,
 *                                          "<result> <total or -> <bytes> <FNV-1a 64 of the bytes>"
 *   store_probe URL list PREFIX            the children, "d NAME" or "v NAME", one a line
 *   store_probe URL keys PREFIX            every key below PREFIX with its size, "KEY SIZE", one a line
 *   store_probe URL put KEY FILE | del KEY | delprefix PREFIX | putmany N PREFIX
 *                                          writes (putmany: one zarr_store_set_many of N keys
 *                                          PREFIX/<i> holding "value <i>\n" repeated i+1 times)
 * Exit status 0, or 1 with the core's message on stderr (2: a missing key for get/range/suffix/size).
 */
#define _POSIX_C_SOURCE 200809L
#include "h5zarr/zarr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
fail(const char *what)
{
    fprintf(stderr, "store_probe: %s: %s\n", what, zarr_errmsg());
    return 1;
}

static uint64_t
fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static int
print_child(const char *name, bool is_dir, void *ud)
{
    printf("%c %s\n", is_dir ? 'd' : 'v', name);
    return 0;
}

static int
print_key(const char *key, uint64_t size, void *ud)
{
    printf("%s %llu\n", key, (unsigned long long)size);
    return 0;
}

static uint64_t
num(const char *s)
{
    return strcmp(s, "end") == 0 ? UINT64_MAX : strtoull(s, NULL, 10);
}

int
main(int argc, char **argv)
{
    zarr_store *s = NULL;
    zarr_buf    b = ZARR_BUF_INIT;
    const char *op;
    int         rc = 0, w;

    if (argc < 4) {
        fprintf(stderr, "usage: store_probe URL OP ARGS... (see the source)\n");
        return 2;
    }
    op = argv[2];
    w  = !strcmp(op, "put") || !strcmp(op, "del") || !strcmp(op, "delprefix") || !strcmp(op, "putmany");
    if (zarr_store_open(argv[1], w ? ZARR_STORE_RDWR | ZARR_STORE_CREATE : ZARR_STORE_RDONLY, &s) != ZARR_OK)
        return fail(argv[1]);
    if (!strcmp(op, "get") || !strcmp(op, "range") || !strcmp(op, "suffix") || !strcmp(op, "size")) {
        int r;
        if (!strcmp(op, "get"))
            r = zarr_store_get(s, argv[3], &b);
        else if (!strcmp(op, "range") && argc == 6)
            r = zarr_store_get_range(s, argv[3], num(argv[4]), num(argv[5]), &b);
        else if (!strcmp(op, "suffix") && argc == 5) {
            zarr_store_req q = {argv[3], 0, num(argv[4]), true, &b, 0, 0};
            r                = zarr_store_get_many(s, 1, &q);
        }
        else if (!strcmp(op, "size")) {
            uint64_t n = 0;
            if ((r = zarr_store_size(s, argv[3], &n)) == ZARR_OK)
                printf("%llu\n", (unsigned long long)n);
        }
        else
            r = ZARR_EINVAL;
        if (r == ZARR_ENOTFOUND)
            rc = 2, fprintf(stderr, "store_probe: %s\n", zarr_errmsg());
        else if (r != ZARR_OK)
            rc = fail(argv[3]);
        else if (b.size)
            fwrite(b.data, 1, b.size, stdout);
    }
    else if (!strcmp(op, "exists"))
        printf("%s\n", zarr_store_exists(s, argv[3]) == ZARR_OK ? "yes" : "no");
    else if (!strcmp(op, "many")) {
        size_t          n = (size_t)argc - 3;
        zarr_store_req *q = calloc(n, sizeof *q);
        zarr_buf       *o = calloc(n, sizeof *o);
        char          **k = calloc(n, sizeof *k);
        for (size_t i = 0; i < n; i++) {
            char *at;
            k[i]     = strdup(argv[3 + i]);
            q[i].key = k[i];
            q[i].len = UINT64_MAX;
            q[i].out = &o[i];
            if ((at = strchr(k[i], '@'))) {
                *at = '\0';
                if (at[1] == '-') {
                    q[i].suffix = true;
                    q[i].len    = num(at + 2);
                }
                else {
                    char *plus = strchr(at + 1, '+');
                    q[i].off   = strtoull(at + 1, NULL, 10);
                    q[i].len   = plus ? num(plus + 1) : UINT64_MAX;
                }
            }
        }
        (void)zarr_store_get_many(s, n, q);
        for (size_t i = 0; i < n; i++) {
            if (q[i].total == UINT64_MAX)
                printf("%d - %zu %016llx\n", q[i].result, o[i].size,
                       (unsigned long long)fnv(o[i].data, o[i].size));
            else
                printf("%d %llu %zu %016llx\n", q[i].result, (unsigned long long)q[i].total, o[i].size,
                       (unsigned long long)fnv(o[i].data, o[i].size));
            zarr_buf_free(&o[i]);
            free(k[i]);
        }
        free(q), free(o), free(k);
    }
    else if (!strcmp(op, "list")) {
        if (zarr_store_list(s, argv[3], print_child, NULL) != ZARR_OK)
            rc = fail(argv[3]);
    }
    else if (!strcmp(op, "keys")) {
        if (zarr_store_list_keys(s, argv[3], print_key, NULL) != ZARR_OK)
            rc = fail(argv[3]);
    }
    else if (!strcmp(op, "put") && argc == 5) {
        FILE  *fp = fopen(argv[4], "rb");
        char   tmp[65536];
        size_t got;
        if (!fp)
            return perror(argv[4]), 1;
        while ((got = fread(tmp, 1, sizeof tmp, fp)) > 0)
            zarr_buf_append(&b, tmp, got);
        fclose(fp);
        if (zarr_store_set(s, argv[3], b.data, b.size) != ZARR_OK)
            rc = fail(argv[3]);
    }
    else if (!strcmp(op, "del")) {
        if (zarr_store_del(s, argv[3]) != ZARR_OK)
            rc = fail(argv[3]);
    }
    else if (!strcmp(op, "delprefix")) {
        if (zarr_store_del_prefix(s, argv[3]) != ZARR_OK)
            rc = fail(argv[3]);
    }
    else if (!strcmp(op, "putmany") && argc == 5) {
        size_t       n = strtoull(argv[3], NULL, 10);
        char       **k = calloc(n, sizeof *k);
        zarr_buf    *v = calloc(n, sizeof *v);
        const void **d = calloc(n, sizeof *d);
        size_t      *z = calloc(n, sizeof *z);
        int         *r = calloc(n, sizeof *r);
        for (size_t i = 0; i < n; i++) {
            char line[64];
            int  m = snprintf(line, sizeof line, "value %zu\n", i);
            k[i]   = malloc(strlen(argv[4]) + 32);
            sprintf(k[i], "%s/%zu", argv[4], i);
            for (size_t j = 0; j <= i; j++)
                zarr_buf_append(&v[i], line, (size_t)m);
            d[i] = v[i].data;
            z[i] = v[i].size;
        }
        if (zarr_store_set_many(s, n, (const char *const *)k, d, z, r) != ZARR_OK)
            rc = fail("set_many");
        for (size_t i = 0; i < n; i++)
            free(k[i]), zarr_buf_free(&v[i]);
        free(k), free(v), free(d), free(z), free(r);
    }
    else {
        fprintf(stderr, "store_probe: unknown operation '%s'\n", op);
        rc = 2;
    }
    zarr_buf_free(&b);
    zarr_store_close(s);
    return rc;
}
