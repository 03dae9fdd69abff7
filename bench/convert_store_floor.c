/*
 * convert_store_floor.c: the file floor under h5zarr-convert's writing of a store (issue 30's convert rows;
 * bench/README.md "Converter against cp and its floor"). A single-file cp is no floor for a store of 10,000
 * arrays (a folder, a document and a chunk file each): this program writes exactly the folders and files,
 * of the same sizes, that a store the converter made holds, the way the directory store writes a new key
 * (an unnamed O_TMPFILE in the key's folder, one write, linkat under the key's name), after reading the
 * source file once sequentially (what cp reads). No fsync, no HDF5, one thread.
 *
 *   convert_store_floor STORE SOURCE OUT
 *       walks STORE (untimed: folders and regular files, sizes), then, timed, reads SOURCE in 1 MiB reads
 *       and makes OUT with the same tree: mkdir of each folder before its contents, each file written from
 *       a buffer of zeros. Prints the timed seconds on stdout; OUT is left for the caller to compare
 *       (`diff -r` of the names and sizes) and remove.
 *
 * The process start (a few milliseconds) is not in the seconds printed; bench/convert_bench.py adds the
 * measured start of an empty run of this program (argument count 0) to compare with the tools it times
 * from outside.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE, AT_EMPTY_PATH */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHECK(c, what)                                                                                       \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fprintf(stderr, "convert_store_floor: %s: %s\n", what, strerror(errno));                         \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

typedef struct entry {
    char *rel;  /* path under the store, "" for the root */
    off_t size; /* -1 for a folder */
} entry;

static entry *ents;
static size_t nents, cap;
static off_t  maxsize;

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
add(const char *rel, off_t size)
{
    if (nents == cap) {
        cap  = cap ? 2 * cap : 1024;
        ents = realloc(ents, cap * sizeof *ents);
        CHECK(ents, "realloc");
    }
    ents[nents].rel  = strdup(rel);
    ents[nents].size = size;
    CHECK(ents[nents].rel, "strdup");
    nents++;
    if (size > maxsize)
        maxsize = size;
}

/* Depth first, a folder before its contents (the order a writer must keep). */
static void
walk(const char *root, const char *rel)
{
    char           p[4096], r[4096];
    struct stat    st;
    struct dirent *e;
    DIR           *d;
    snprintf(p, sizeof p, "%s%s%s", root, *rel ? "/" : "", rel);
    CHECK((d = opendir(p)) != NULL, p);
    add(rel, -1);
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        snprintf(p, sizeof p, "%s/%s", root, r);
        CHECK(lstat(p, &st) == 0, p);
        if (S_ISDIR(st.st_mode))
            walk(root, r);
        else if (S_ISREG(st.st_mode))
            add(r, st.st_size);
    }
    closedir(d);
}

/* One new file of n bytes: unnamed in its folder, written, linked under its name (the store's new key). */
static void
put(const char *out, const char *rel, const char *buf, size_t n)
{
    char        dir[4096], p[4096];
    const char *slash = strrchr(rel, '/');
    snprintf(dir, sizeof dir, "%s%s%.*s", out, slash ? "/" : "", slash ? (int)(slash - rel) : 0, rel);
    snprintf(p, sizeof p, "%s/%s", out, rel);
    int fd = open(dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0666);
    CHECK(fd >= 0, "O_TMPFILE");
    CHECK(n == 0 || write(fd, buf, n) == (ssize_t)n, "write");
    CHECK(linkat(fd, "", AT_FDCWD, p, AT_EMPTY_PATH) == 0, "linkat");
    close(fd);
}

int
main(int argc, char **argv)
{
    static char rbuf[1 << 20];
    char        p[4096];
    char       *buf;
    double      t0;
    ssize_t     k;
    int         fd;

    if (argc == 1)
        return 0; /* the empty run: process start only */
    if (argc != 4) {
        fprintf(stderr, "usage: convert_store_floor STORE SOURCE OUT\n");
        return 2;
    }
    walk(argv[1], "");
    CHECK((buf = calloc(1, (size_t)maxsize + 1)) != NULL, "calloc");
    t0 = now();
    CHECK((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) >= 0, argv[2]);
    while ((k = read(fd, rbuf, sizeof rbuf)) > 0)
        ;
    CHECK(k == 0, "read");
    close(fd);
    for (size_t i = 0; i < nents; i++) {
        if (ents[i].size < 0) {
            snprintf(p, sizeof p, "%s%s%s", argv[3], *ents[i].rel ? "/" : "", ents[i].rel);
            CHECK(mkdir(p, 0777) == 0, p);
        }
        else
            put(argv[3], ents[i].rel, buf, (size_t)ents[i].size);
    }
    printf("%.6f\n", now() - t0);
    for (size_t i = 0; i < nents; i++)
        free(ents[i].rel);
    free(ents);
    free(buf);
    return 0;
}
