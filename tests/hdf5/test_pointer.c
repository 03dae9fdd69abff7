/*
 * test_pointer.c: pointer files (vol/pointer.h). A configuration rule sends new *.nc paths to zarr: the
 * store is made as <name>.zarr and <name> is a pointer that the connector follows on open,
 * is_accessible and delete. Damaged pointers, pointers to missing stores and pointers out of their
 * directory are clear errors that create nothing. A pointer is a plain HDF5 file (signature at offset
 * 0, the record after HDF5's end of file); pointers of the old form (record in a user block) still
 * open. File-level copies of a pointer read the store they name and copy it before a write; renamed
 * pointers keep their store; NCO's write-to-a-temporary-name-then-rename leaves no orphan store.
 */
#include "runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "h5test.h"

static char dir[400], conf[512];

static int
write_int(const char *path, int value)
{
    hid_t   f, s, d;
    hsize_t n = 1;
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
read_int(const char *path, int *value)
{
    hid_t f, d;
    if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    ASSERT(f >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, value) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* opens `path` for writing and writes `value` to its dataset v */
static int
update_int(const char *path, int value)
{
    hid_t f, d;
    if ((f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    ASSERT(f >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* `cp from to` */
static int
copy_file(const char *from, const char *to)
{
    size_t n = 0;
    char  *b = test_slurp(from, &n);
    FILE  *f;
    ASSERT(b != NULL);
    ASSERT((f = fopen(to, "wb")) != NULL);
    ASSERT(fwrite(b, 1, n, f) == n);
    ASSERT(fclose(f) == 0);
    free(b);
    return 0;
}

/* The number of directories named *.zarr in `d`; the last one's name in `last` (when not NULL). */
static int
count_stores(const char *d, char *last, size_t nlast)
{
    DIR           *dh = opendir(d);
    struct dirent *e;
    int            k = 0;
    if (!dh)
        return -1;
    while ((e = readdir(dh))) {
        size_t n = strlen(e->d_name);
        if (n > 5 && !strcmp(e->d_name + n - 5, ".zarr")) {
            k++;
            if (last)
                snprintf(last, nlast, "%s", e->d_name);
        }
    }
    closedir(dh);
    return k;
}

/* What a reader without the connector sees: the root attribute h5zarr_store of the pointer, read with
 * HDF5's native connector (and so its signature at offset 0, checked as netCDF does). */
static int
native_store_attr(const char *path, char *out, size_t nout)
{
    hid_t fapl, f, a, t;
    ASSERT(h5t_is_native_file(path));
    ASSERT((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0);
    ASSERT(H5Pset_vol(fapl, H5VL_NATIVE, NULL) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((a = H5Aopen(f, "h5zarr_store", H5P_DEFAULT)) >= 0);
    ASSERT((t = H5Aget_type(a)) >= 0 && H5Tget_size(t) < nout);
    memset(out, 0, nout);
    ASSERT(H5Aread(a, t, out) >= 0);
    H5Tclose(t);
    H5Aclose(a);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* a copy of pointer `from` whose store name is replaced by `store` (same length: the block stays whole) */
static int
edited_copy(const char *from, const char *to, const char *store)
{
    size_t n = 0;
    char  *b = test_slurp(from, &n), *p;
    FILE  *f;
    ASSERT(b && (p = memmem(b, n, "store=", 6)) != NULL);
    memcpy(p + 6, store, strlen(store));
    ASSERT((f = fopen(to, "wb")) != NULL);
    ASSERT(fwrite(b, 1, n, f) == n);
    fclose(f);
    free(b);
    return 0;
}

static int
test_setup(void)
{
    FILE *f;
    snprintf(dir, sizeof dir, "%s", test_tmpdir("pointer"));
    snprintf(conf, sizeof conf, "%s/rules.conf", dir);
    ASSERT((f = fopen(conf, "w")) != NULL);
    fputs("[path *.nc]\nformat = zarr\n", f);
    fclose(f);
    setenv("H5ZARR_CONFIG", conf, 1);
    return 0;
}

static int
test_create_reopen_delete(void)
{
    char p[600], st[600];
    int  v = 0;
    snprintf(p, sizeof p, "%s/a.nc", dir);
    snprintf(st, sizeof st, "%s/a.nc.zarr", dir);
    if (write_int(p, 41))
        return 1;
    ASSERT(h5t_is_zarr_store(st));
    {
        size_t n = 0, k = 0;
        char  *b = test_slurp(p, &n), *r, attr[64], rec[700];
        ASSERT(b && n > 512);
        ASSERT(memcmp(b, "\x89HDF\r\n\x1a\n", 8) == 0); /* what netCDF (and any reader) looks for */
        ASSERT(strncmp(b + n - 512, "h5zarr pointer v2\nstore=a.nc.zarr\nid=", 37) == 0);
        ASSERT(b[n - 512 + 37 + 32] == '\n' && b[n - 1] == '\n');
        /* the store records its owner: the pointer's id and name */
        snprintf(rec, sizeof rec, "%s/.h5zarr_pointer", st);
        ASSERT((r = test_slurp(rec, &k)) != NULL);
        ASSERT(memmem(r, k, b + n - 512 + 37, 32) != NULL);
        ASSERT(strstr(r, "\"pointer\":\"a.nc\"") != NULL);
        free(r);
        free(b);
        if (native_store_attr(p, attr, sizeof attr))
            return 1;
        ASSERT_STR(attr, "a.nc.zarr");
    }
    if (read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 41);
    /* created again (truncated): the same store, new contents */
    if (write_int(p, 42) || read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 42);
    ASSERT(H5Fis_accessible(p, H5P_DEFAULT) > 0);
    /* H5F_ACC_EXCL on an existing pointer */
    {
        hid_t f;
        H5E_BEGIN_TRY { f = H5Fcreate(p, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT); }
        H5E_END_TRY
        ASSERT(f < 0);
    }
    ASSERT(H5Fdelete(p, H5P_DEFAULT) >= 0);
    ASSERT(access(p, F_OK) != 0 && access(st, F_OK) != 0);
    return 0;
}

static int
expect_open_error(const char *path, const char *msg)
{
    hid_t f;
    char *t;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT(f < 0);
    ASSERT((t = h5t_error_text()) != NULL);
    if (!strstr(t, msg))
        FAILF("'%s' not in the error stack:\n%s", msg, t);
    ASSERT(strstr(t, "h5zarr-DIAG") != NULL);
    free(t);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}

static int
test_bad_pointers(void)
{
    char p[600], q[600], st[600];
    snprintf(p, sizeof p, "%s/b.nc", dir);
    if (write_int(p, 7))
        return 1;
    /* a store that is not there */
    snprintf(q, sizeof q, "%s/gone.nc", dir);
    if (edited_copy(p, q, "x.nc.zarr") || expect_open_error(q, "that pointer file") ||
        expect_open_error(q, "copy or move the store along with it"))
        return 1;
    snprintf(st, sizeof st, "%s/x.nc.zarr", dir);
    ASSERT(access(st, F_OK) != 0);
    ASSERT(H5Fis_accessible(q, H5P_DEFAULT) <= 0);
    /* out of its directory */
    snprintf(q, sizeof q, "%s/escape.nc", dir);
    if (edited_copy(p, q, "../b.nc.zar") ||
        expect_open_error(q, "may only name a store in its own directory"))
        return 1;
    /* no store line */
    snprintf(q, sizeof q, "%s/broken.nc", dir);
    if (edited_copy(p, q, ""))
        return 1;
    {
        size_t n = 0;
        char  *b = test_slurp(q, &n), *s = memmem(b, n, "store=", 6);
        FILE  *f;
        memcpy(s, "stoXe=", 6);
        f = fopen(q, "wb");
        fwrite(b, 1, n, f);
        fclose(f);
        free(b);
    }
    if (expect_open_error(q, "is damaged"))
        return 1;
    /* a damaged id */
    snprintf(q, sizeof q, "%s/badid.nc", dir);
    if (copy_file(p, q))
        return 1;
    {
        size_t n = 0;
        char  *b = test_slurp(q, &n), *s = memmem(b, n, "\nid=", 4);
        FILE  *f;
        ASSERT(s != NULL);
        s[6] = 'X';
        f    = fopen(q, "wb");
        fwrite(b, 1, n, f);
        fclose(f);
        free(b);
    }
    if (expect_open_error(q, "its id is not 32 lowercase hex digits"))
        return 1;
    return 0;
}

/* A pointer of the form written before (the record in a 512-byte user block, no id, HDF5's signature at
 * 512) still opens, for reading and writing. */
static int
test_old_form(void)
{
    char  p[600], block[512];
    hid_t fcpl, fapl, f;
    int   v = 0, fd, k;
    snprintf(p, sizeof p, "%s/old.nc", dir);
    if (write_int(p, 9))
        return 1;
    /* replace the pointer by the old form, naming the same store */
    ASSERT((fcpl = H5Pcreate(H5P_FILE_CREATE)) >= 0 && H5Pset_userblock(fcpl, 512) >= 0);
    ASSERT((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 && H5Pset_vol(fapl, H5VL_NATIVE, NULL) >= 0);
    ASSERT((f = H5Fcreate(p, H5F_ACC_TRUNC, fcpl, fapl)) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    memset(block, ' ', sizeof block);
    k          = snprintf(block, sizeof block, "h5zarr pointer v1\nstore=old.nc.zarr\n# an old pointer\n");
    block[k]   = ' ';
    block[511] = '\n';
    ASSERT((fd = open(p, O_WRONLY)) >= 0);
    ASSERT(pwrite(fd, block, 512, 0) == 512);
    close(fd);
    ASSERT(!h5t_is_native_file(p));
    if (read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 9);
    if (update_int(p, 10) || read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 10);
    /* created again: the old pointer is replaced by a new one, on the same store */
    if (write_int(p, 11) || read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 11);
    ASSERT(h5t_is_native_file(p));
    ASSERT_EQ_INT(count_stores(dir, NULL, 0) >= 1, 1);
    {
        char s2[700];
        snprintf(s2, sizeof s2, "%s/old.nc.zarr", dir);
        ASSERT(h5t_is_zarr_store(s2));
    }
    return 0;
}

/* `cp in.nc out.nc` in one directory: out.nc reads in.nc's data; opened for writing it first gets a
 * store of its own (copy on write), so in.nc never changes; deleting or creating the copy again leaves
 * in.nc alone; creating in.nc again leaves a copy with the old data. */
static int
test_copy_same_dir(void)
{
    char d[600], in[700], out[700], c2[700], c3[700], c4[700], st[800];
    int  v = 0;
    snprintf(d, sizeof d, "%s/copy", dir);
    ASSERT(mkdir(d, 0777) == 0);
    snprintf(in, sizeof in, "%s/in.nc", d);
    snprintf(out, sizeof out, "%s/out.nc", d);
    if (write_int(in, 1) || copy_file(in, out))
        return 1;
    if (read_int(out, &v))
        return 1;
    ASSERT_EQ_INT(v, 1);
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 1);
    /* the copy edited in place */
    if (update_int(out, 2))
        return 1;
    if (read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 1);
    if (read_int(out, &v))
        return 1;
    ASSERT_EQ_INT(v, 2);
    snprintf(st, sizeof st, "%s/out.nc.zarr", d);
    ASSERT(h5t_is_zarr_store(st));
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2);
    /* the owner itself is written in place */
    if (update_int(in, 3) || read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    if (read_int(out, &v))
        return 1;
    ASSERT_EQ_INT(v, 2);
    /* H5Fdelete of a copy removes the copy only */
    snprintf(c2, sizeof c2, "%s/c2.nc", d);
    if (copy_file(in, c2))
        return 1;
    ASSERT(H5Fdelete(c2, H5P_DEFAULT) >= 0);
    ASSERT(access(c2, F_OK) != 0);
    if (read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    /* H5Fcreate over a copy makes a new store */
    snprintf(c3, sizeof c3, "%s/c3.nc", d);
    if (copy_file(in, c3) || write_int(c3, 5) || read_int(c3, &v))
        return 1;
    ASSERT_EQ_INT(v, 5);
    if (read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    /* H5Fcreate of the original while a copy exists: the copy keeps the old data */
    snprintf(c4, sizeof c4, "%s/c4.nc", d);
    if (copy_file(in, c4) || write_int(in, 6) || read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 6);
    if (read_int(c4, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    /* ... and the copy owns that store now: written in place, no new store */
    {
        int before = count_stores(d, NULL, 0);
        if (update_int(c4, 7) || read_int(c4, &v))
            return 1;
        ASSERT_EQ_INT(v, 7);
        ASSERT_EQ_INT(count_stores(d, NULL, 0), before);
    }
    if (read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 6);
    return 0;
}

/* `cp src.nc other/x.nc`: without a store of that name there the copy is a clear error; with another
 * file's store of that name there, reading reads it and writing copies it first. */
static int
test_copy_other_dir(void)
{
    char  d[600], in[700], x[700], y[700], other[700];
    int   v = 0;
    hid_t f;
    snprintf(d, sizeof d, "%s/other", dir);
    ASSERT(mkdir(d, 0777) == 0);
    snprintf(in, sizeof in, "%s/copy/src.nc", dir);
    snprintf(x, sizeof x, "%s/x.nc", d);
    if (write_int(in, 6) || copy_file(in, x) || expect_open_error(x, "copy or move the store along with it"))
        return 1;
    H5E_BEGIN_TRY { f = H5Fopen(x, H5F_ACC_RDWR, H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(f < 0);
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 0);
    /* other/src.nc, another file with its own store other/src.nc.zarr */
    snprintf(other, sizeof other, "%s/src.nc", d);
    snprintf(y, sizeof y, "%s/y.nc", d);
    if (write_int(other, 70) || copy_file(in, y) || read_int(y, &v))
        return 1;
    ASSERT_EQ_INT(v, 70);
    if (update_int(y, 71) || read_int(y, &v))
        return 1;
    ASSERT_EQ_INT(v, 71);
    if (read_int(other, &v))
        return 1;
    ASSERT_EQ_INT(v, 70);
    if (read_int(in, &v))
        return 1;
    ASSERT_EQ_INT(v, 6);
    return 0;
}

/* A renamed pointer opens its store (named relative to the pointer) and takes it over; the old name,
 * created again, gets a new store. */
static int
test_rename(void)
{
    char d[600], a[700], b[700], rec[800];
    int  v = 0;
    snprintf(d, sizeof d, "%s/ren", dir);
    ASSERT(mkdir(d, 0777) == 0);
    snprintf(a, sizeof a, "%s/r.nc", d);
    snprintf(b, sizeof b, "%s/r2.nc", d);
    if (write_int(a, 3))
        return 1;
    ASSERT(rename(a, b) == 0);
    if (read_int(b, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    if (update_int(b, 4) || read_int(b, &v))
        return 1;
    ASSERT_EQ_INT(v, 4);
    {
        size_t k = 0;
        char  *r;
        snprintf(rec, sizeof rec, "%s/r.nc.zarr/.h5zarr_pointer", d);
        ASSERT((r = test_slurp(rec, &k)) != NULL && strstr(r, "\"pointer\":\"r2.nc\"") != NULL);
        free(r);
    }
    /* the old name again: r.nc.zarr is r2.nc's, so r.nc gets another store */
    if (write_int(a, 5) || read_int(a, &v))
        return 1;
    ASSERT_EQ_INT(v, 5);
    if (read_int(b, &v))
        return 1;
    ASSERT_EQ_INT(v, 4);
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2);
    /* a copy made, then the original renamed: two pointers hold the store; the first written copies */
    {
        char m[700], mc[700], m2[700];
        snprintf(m, sizeof m, "%s/m.nc", d);
        snprintf(mc, sizeof mc, "%s/mc.nc", d);
        snprintf(m2, sizeof m2, "%s/m2.nc", d);
        if (write_int(m, 1) || copy_file(m, mc))
            return 1;
        ASSERT(rename(m, m2) == 0);
        if (update_int(mc, 2) || read_int(m2, &v))
            return 1;
        ASSERT_EQ_INT(v, 1);
        ASSERT_EQ_INT(count_stores(d, NULL, 0), 4);
        if (update_int(m2, 3) || read_int(mc, &v))
            return 1;
        ASSERT_EQ_INT(v, 2);
        if (read_int(m2, &v))
            return 1;
        ASSERT_EQ_INT(v, 3);
        ASSERT_EQ_INT(count_stores(d, NULL, 0), 4);
    }
    return 0;
}

/* NCO writes out.nc.pid<N>.<program>.tmp and renames it to out.nc. The rule for *.nc matches the
 * temporary name; the renamed pointer opens (through the connector, and as a plain HDF5 file without
 * it); overwriting it twice that way leaves no orphan store once a pointer of the directory is created
 * or opened for writing. */
static int
test_temp_rename(void)
{
    char d[600], fin[700], tmp[700], attr[128], last[256];
    int  v = 0;
    snprintf(d, sizeof d, "%s/nco", dir);
    ASSERT(mkdir(d, 0777) == 0);
    snprintf(fin, sizeof fin, "%s/out.nc", d);
    for (int run = 0; run < 3; run++) {
        snprintf(tmp, sizeof tmp, "%s/out.nc.pid%d.ncks.tmp", d, 4100 + run);
        if (write_int(tmp, 100 + run))
            return 1;
        ASSERT(h5t_is_native_file(tmp)); /* a pointer, not a native file with the data */
        ASSERT(rename(tmp, fin) == 0);
        if (read_int(fin, &v))
            return 1;
        ASSERT_EQ_INT(v, 100 + run);
        if (native_store_attr(fin, attr, sizeof attr))
            return 1;
        snprintf(tmp, sizeof tmp, "out.nc.pid%d.ncks.tmp.zarr", 4100 + run);
        ASSERT_STR(attr, tmp);
    }
    /* the replaced stores go when a pointer of the directory is opened for writing */
    if (update_int(fin, 200) || read_int(fin, &v))
        return 1;
    ASSERT_EQ_INT(v, 200);
    ASSERT_EQ_INT(count_stores(d, last, sizeof last), 1);
    ASSERT_STR(last, "out.nc.pid4102.ncks.tmp.zarr");
    /* and when one is created */
    snprintf(tmp, sizeof tmp, "%s/out.nc.pid4200.ncks.tmp", d);
    if (write_int(tmp, 300))
        return 1;
    ASSERT(rename(tmp, fin) == 0);
    snprintf(tmp, sizeof tmp, "%s/other.nc", d);
    if (write_int(tmp, 1))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2);
    if (read_int(fin, &v))
        return 1;
    ASSERT_EQ_INT(v, 300);
    /* a pointer deleted by hand leaves its store (a plain zarr store then), never removed */
    ASSERT(unlink(tmp) == 0);
    if (update_int(fin, 301))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2);
    /* a pointer opened for writing by HDF5 alone loses its record (HDF5 cuts the file at its end of
     * file address): its store is kept */
    {
        hid_t fapl, f;
        char  k[700];
        snprintf(k, sizeof k, "%s/k.nc", d);
        if (write_int(k, 8))
            return 1;
        ASSERT((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 && H5Pset_vol(fapl, H5VL_NATIVE, NULL) >= 0);
        ASSERT((f = H5Fopen(k, H5F_ACC_RDWR, fapl)) >= 0 && H5Fclose(f) >= 0);
        H5Pclose(fapl);
        if (update_int(fin, 302))
            return 1;
        ASSERT_EQ_INT(count_stores(d, NULL, 0), 3);
        ASSERT(h5t_path_exists(d, "k.nc.zarr/zarr.json"));
    }
    return 0;
}

/* A program that renames its temporary name over the final name before it exits (NCO does) leaves no
 * orphan store once it has exited: the connector's term sweeps the directory of each temporary name it
 * wrote that is gone. One that exits before its rename leaves both stores: each still has its pointer. */
static int
test_temp_rename_exit(void)
{
    char  d[600], fin[700], tmp[700], last[256];
    int   v = 0, status = 0;
    pid_t pid;
    snprintf(d, sizeof d, "%s/nco-exit", dir);
    ASSERT(mkdir(d, 0777) == 0);
    snprintf(fin, sizeof fin, "%s/out.nc", d);
    if (write_int(fin, 1))
        return 1;
    for (int run = 0; run < 2; run++) {
        snprintf(tmp, sizeof tmp, "%s/out.nc.pid%d.ncks.tmp", d, 4300 + run);
        fflush(NULL);
        ASSERT((pid = fork()) >= 0);
        if (pid == 0) { /* the program: write the temporary name, rename it (run 0), exit */
            if (write_int(tmp, 10 + run) || (run == 0 && rename(tmp, fin) != 0))
                _exit(2);
            H5close(); /* what HDF5's atexit handler does at exit() */
            _exit(0);
        }
        ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (run == 0) { /* out.nc's first store went at that program's end, before anything else ran */
            ASSERT_EQ_INT(count_stores(d, last, sizeof last), 1);
            ASSERT_STR(last, "out.nc.pid4300.ncks.tmp.zarr");
        }
    }
    /* run 1's temporary name was not renamed: both stores have their pointer */
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2);
    ASSERT(h5t_path_exists(d, "out.nc.pid4300.ncks.tmp.zarr/zarr.json"));
    ASSERT(h5t_path_exists(d, "out.nc.pid4301.ncks.tmp.zarr/zarr.json"));
    ASSERT(!h5t_path_exists(d, "out.nc.zarr"));
    if (read_int(fin, &v))
        return 1;
    ASSERT_EQ_INT(v, 10);
    if (read_int(tmp, &v))
        return 1;
    ASSERT_EQ_INT(v, 11);
    return 0;
}

/* What recognising a pointer costs an open: H5Fopen + H5Fclose of a small native file through the
 * connector (which reads the file's first and last 512 bytes) against HDF5's native connector alone;
 * printed, not checked. */
static int
test_detect_cost(void)
{
    char            p[700];
    hid_t           f, fapl, s;
    struct timespec t0, t1;
    double          tz, tn;
    const int       n = 2000;
    snprintf(p, sizeof p, "%s/native.h5", dir);
    ASSERT((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 && H5Pset_vol(fapl, H5VL_NATIVE, NULL) >= 0);
    ASSERT((f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0 && H5Fclose(f) >= 0);
    for (int pass = 0; pass < 2; pass++) {
        s = pass ? fapl : H5P_DEFAULT;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < n; i++) {
            ASSERT((f = H5Fopen(p, H5F_ACC_RDONLY, s)) >= 0);
            H5Fclose(f);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        *(pass ? &tn : &tz) = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / n;
    }
    H5Pclose(fapl);
    printf("  open+close of a native file: %.1f us through the connector, %.1f us natively\n", tz / 1e3,
           tn / 1e3);
    return 0;
}

/* netCDF opens a store through its pointer with H5Fopen; when the store is corrupt, that H5Fopen fails
 * with the connector's message naming the key (netCDF then clears the stack: tests/scripts/nc_badinput.sh
 * checks the netCDF side) */
static int
test_corrupt_store(void)
{
    char  p[600], doc[700];
    FILE *f;
    snprintf(p, sizeof p, "%s/c.nc", dir);
    if (write_int(p, 5))
        return 1;
    snprintf(doc, sizeof doc, "%s/c.nc.zarr/zarr.json", dir);
    ASSERT((f = fopen(doc, "w")) != NULL);
    fputs("{\"zarr_format\": 3, \"node_type\": \"gro", f);
    fclose(f);
    if (expect_open_error(p, "zarr.json"))
        return 1;
    return 0;
}

/* A pointer copied in place over another one (`cp a.nc b.nc`: b.nc's inode kept, its bytes replaced)
 * leaves b.nc's store an orphan, removed at the next create in the directory, also when this process
 * has swept the directory before (the sweep then checks only what changed: vol/pointer.c); the same
 * after a rename over a pointer, and after a pointer renamed twice. */
static int
test_sweep_changed(void)
{
    char d[600], a[700], b[700], c[700], e[700], f[700], t[700];
    int  v = 0;
    snprintf(d, sizeof d, "%s/changed", dir);
    snprintf(f, sizeof f, "%s/f.nc", d);
    ASSERT(mkdir(d, 0777) == 0);
    snprintf(a, sizeof a, "%s/a.nc", d);
    snprintf(b, sizeof b, "%s/b.nc", d);
    snprintf(c, sizeof c, "%s/c.nc", d);
    snprintf(e, sizeof e, "%s/e.nc", d);
    if (write_int(a, 1) || write_int(b, 2))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2);
    if (copy_file(a, b) || write_int(c, 3))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 2); /* a.nc.zarr, c.nc.zarr: b.nc's went */
    ASSERT(!h5t_path_exists(d, "b.nc.zarr"));
    if (read_int(b, &v))
        return 1;
    ASSERT_EQ_INT(v, 1);
    /* c.nc renamed to t.nc, then t.nc renamed over e.nc: c's store is e.nc's now, e's an orphan */
    snprintf(t, sizeof t, "%s/t.nc", d);
    ASSERT(rename(c, t) == 0);
    if (write_int(e, 4))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 3);
    ASSERT(rename(t, e) == 0);
    if (write_int(f, 5))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 3); /* a.nc.zarr, c.nc.zarr (e.nc's), f.nc.zarr */
    ASSERT(!h5t_path_exists(d, "e.nc.zarr"));
    if (read_int(e, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    if (read_int(f, &v))
        return 1;
    ASSERT_EQ_INT(v, 5);
    /* a pointer copied over by a copy of another (b.nc, a copy of a.nc, written over f.nc): f's went */
    if (copy_file(b, f) || write_int(c, 6))
        return 1;
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 3); /* a.nc.zarr, c.nc.zarr, and c.nc's new one */
    ASSERT(!h5t_path_exists(d, "f.nc.zarr"));
    if (read_int(f, &v))
        return 1;
    ASSERT_EQ_INT(v, 1);
    return 0;
}

/* A pointer created again over itself is the same bytes (the HDF5 part is made by HDF5 once, then
 * written from memory: vol/pointer.c), with or without a user block, and native HDF5 reads its
 * attribute. */
static int
test_same_bytes(void)
{
    char    p[700], q[700], attr[128];
    char   *a = NULL, *b = NULL;
    size_t  na = 0, nb = 0;
    hid_t   fcpl, f;
    hsize_t ub = 0;
    snprintf(p, sizeof p, "%s/same.nc", dir);
    snprintf(q, sizeof q, "%s/same_ub.nc", dir);
    ASSERT((fcpl = H5Pcreate(H5P_FILE_CREATE)) >= 0 && H5Pset_userblock(fcpl, 1024) >= 0);
    for (int round = 0; round < 3; round++) {
        ASSERT((f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Fclose(f) >= 0);
        ASSERT((f = H5Fcreate(q, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) >= 0 && H5Fclose(f) >= 0);
        ASSERT((b = test_slurp(round == 2 ? q : p, &nb)) != NULL);
        if (round == 1)
            ASSERT(na == nb && memcmp(a, b, na) == 0);
        if (round == 2) {
            ASSERT(nb > 1024 + 512 && h5t_is_native_file(p));
            if (native_store_attr(p, attr, sizeof attr))
                return 1;
            ASSERT_STR(attr, "same.nc.zarr");
            ASSERT((f = H5Fopen(q, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
            {
                hid_t c = H5Fget_create_plist(f);
                ASSERT(c >= 0 && H5Pget_userblock(c, &ub) >= 0);
                H5Pclose(c);
            }
            ASSERT(H5Fclose(f) >= 0);
            ASSERT(ub == 1024);
        }
        free(a);
        a  = b;
        na = nb;
        b  = NULL;
    }
    {
        char  *q1 = NULL;
        size_t n1 = 0;
        /* the user-block pointer created again is the same bytes too */
        ASSERT((q1 = test_slurp(q, &n1)) != NULL);
        ASSERT((f = H5Fcreate(q, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) >= 0 && H5Fclose(f) >= 0);
        ASSERT((b = test_slurp(q, &nb)) != NULL && nb == n1 && memcmp(b, q1, n1) == 0);
        free(q1);
    }
    free(a);
    free(b);
    H5Pclose(fcpl);
    return 0;
}

/* Copies the owner record of store `st` into a new directory `trash` (with a root document): what a
 * clear moving the store aside leaves under a trash name (docs/FORMAT.md "Trash"). */
static int
fake_trash(const char *st, const char *trash)
{
    char   rec[700], to[700];
    size_t n = 0;
    char  *b;
    FILE  *f;
    snprintf(rec, sizeof rec, "%s/.h5zarr_pointer", st);
    ASSERT((b = test_slurp(rec, &n)) != NULL);
    ASSERT(mkdir(trash, 0777) == 0);
    snprintf(to, sizeof to, "%s/.h5zarr_pointer", trash);
    ASSERT((f = fopen(to, "wb")) != NULL && fwrite(b, 1, n, f) == n);
    fclose(f);
    free(b);
    snprintf(to, sizeof to, "%s/zarr.json", trash);
    ASSERT((f = fopen(to, "wb")) != NULL);
    fputs("{\"zarr_format\": 3, \"node_type\": \"group\"}", f);
    fclose(f);
    return 0;
}

static int
rm_fake_trash(const char *trash)
{
    char p[700];
    snprintf(p, sizeof p, "%s/.h5zarr_pointer", trash);
    ASSERT(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/zarr.json", trash);
    ASSERT(unlink(p) == 0);
    ASSERT(rmdir(trash) == 0);
    return 0;
}

/* H5Fis_accessible and H5Fopen of names the routing answers from one stat (vol/route.c name_kind): a
 * missing name, plain files that are neither HDF5 nor a pointer (short and long), and the cases still
 * probed (a store folder, an empty folder, a file named *.zip or *.json that is none of them). */
static void
put_file(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < n; i++)
        fputc('a' + (int)(i % 26), f);
    if (f)
        fclose(f);
}

static int
test_accessible_names(void)
{
    char p[600], q[600];
    int  v = 0;
    snprintf(p, sizeof p, "%s/acc.nc", dir);
    if (write_int(p, 5))
        return 1;
    ASSERT_EQ_INT(H5Fis_accessible(p, H5P_DEFAULT), 1); /* a pointer */
    snprintf(q, sizeof q, "%s/acc.nc.zarr", dir);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 1); /* its store */
    snprintf(q, sizeof q, "%s/missing.nc", dir);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    snprintf(q, sizeof q, "%s/no-such-dir/missing.nc", dir);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    snprintf(q, sizeof q, "%s/acc.nc/", dir); /* a file named as a folder */
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    snprintf(q, sizeof q, "%s/short.dat", dir);
    put_file(q, 40);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    snprintf(q, sizeof q, "%s/long.nc", dir);
    put_file(q, 3000);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    {
        hid_t f;
        H5E_BEGIN_TRY { f = H5Fopen(q, H5F_ACC_RDONLY, H5P_DEFAULT); }
        H5E_END_TRY
        ASSERT(f < 0);
    }
    snprintf(q, sizeof q, "%s/junk.zip", dir);
    put_file(q, 700);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    snprintf(q, sizeof q, "%s/junk.json", dir);
    put_file(q, 700);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    snprintf(q, sizeof q, "%s/emptydir", dir);
    ASSERT(mkdir(q, 0755) == 0);
    ASSERT_EQ_INT(H5Fis_accessible(q, H5P_DEFAULT), 0);
    /* the pointer still opens and reads after all that */
    if (read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 5);
    return 0;
}

/* Trash beside a pointer's store (the old content of x.nc.zarr, its owner record naming x.nc) is not an
 * orphan store to the pointer sweeps, full or of the names changed: a live process's trash stays. */
static int
test_trash_not_orphan(void)
{
    char d[600], x[700], st[700], t1[700], t2[700];
    int  v = 0;
    snprintf(d, sizeof d, "%s/trash", dir);
    snprintf(x, sizeof x, "%s/x.nc", d);
    snprintf(st, sizeof st, "%s/x.nc.zarr", d);
    ASSERT(mkdir(d, 0777) == 0);
    if (write_int(x, 1))
        return 1;
    snprintf(t1, sizeof t1, "%s/.h5zarr-trash.%ld.901", d, (long)getppid());
    snprintf(t2, sizeof t2, "%s/.h5zarr-trash.%ld.902", d, (long)getppid());
    if (fake_trash(st, t1)) /* before the first sweep of a new process: read in a full sweep */
        return 1;
    if (write_int(x, 2))
        return 1;
    if (fake_trash(st, t2)) /* after: a name changed since */
        return 1;
    if (write_int(x, 3) || read_int(x, &v))
        return 1;
    ASSERT_EQ_INT(v, 3);
    ASSERT(h5t_path_exists(t1, ".h5zarr_pointer") && h5t_path_exists(t2, ".h5zarr_pointer"));
    ASSERT_EQ_INT(count_stores(d, NULL, 0), 1);
    if (rm_fake_trash(t1) || rm_fake_trash(t2))
        return 1;
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(setup),
    TEST_ENTRY(create_reopen_delete),
    TEST_ENTRY(bad_pointers),
    TEST_ENTRY(corrupt_store),
    TEST_ENTRY(old_form),
    TEST_ENTRY(copy_same_dir),
    TEST_ENTRY(copy_other_dir),
    TEST_ENTRY(rename),
    TEST_ENTRY(temp_rename),
    TEST_ENTRY(temp_rename_exit),
    TEST_ENTRY(sweep_changed),
    TEST_ENTRY(same_bytes),
    TEST_ENTRY(detect_cost),
    TEST_ENTRY(trash_not_orphan),
    TEST_ENTRY(accessible_names),
};

/* `test_pointer --many DIR N K [P]`: H5Fcreate + H5Fclose of N files DIR/fNNNNN.nc (pointers, when the
 * configuration's rule says so), P times over (1 by default), the last K between the markers
 * prctl(PR_SET_NAME, "h5zmark-begin") and "h5zmark-end" (tests/scripts/pointer_sweep.sh counts the
 * system calls between them). */
static int
create_many(const char *d, int n, int k, int passes)
{
    char  p[4096];
    hid_t f;
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < n; i++) {
            if (pass == passes - 1 && i == n - k)
                (void)prctl(PR_SET_NAME, "h5zmark-begin");
            snprintf(p, sizeof p, "%s/f%05d.nc", d, i);
            if ((f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Fclose(f) < 0)
                return 2;
        }
    (void)prctl(PR_SET_NAME, "h5zmark-end");
    return 0;
}

int
main(int argc, char **argv)
{
    setenv("HDF5_VOL_CONNECTOR", "zarr", 0);
    if (argc == 4 && !strcmp(argv[1], "--accessible")) { /* H5Fis_accessible of argv[2], argv[3] times */
        int k = atoi(argv[3]);
        (void)prctl(PR_SET_NAME, "h5zmark-begin");
        for (int i = 0; i < k; i++)
            if (H5Fis_accessible(argv[2], H5P_DEFAULT) <= 0)
                return 2;
        (void)prctl(PR_SET_NAME, "h5zmark-end");
        return 0;
    }
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "--many"))
        return create_many(argv[2], atoi(argv[3]), atoi(argv[4]), argc == 6 ? atoi(argv[5]) : 1);
    return RUN_TESTS(tests);
}
