/*
 * main.c: h5zarr-convert, an HDF5 or netCDF-4 file into a zarr store in one command (docs/CONVERT.md).
 *
 *   h5zarr-convert [options] in.h5|in.nc out.zarr|s3://bucket/out.zarr
 *
 * The source is read with HDF5's native connector (a netCDF-4 file is an HDF5 file), the store written
 * through the zarr connector (H5Pset_fapl_zarr_opts). Here: the options, the order of the passes (scan,
 * refusals, structure, data, scales, close, --verify), the resume record, the progress meter, and the
 * removal of a store this run made when it fails. `--refs` is handed to h5zarr_refs_main
 * (tools/convert_refs.c, kerchunk reference JSON) when that file is built in.
 */
#include "convert.h"

#include "h5zarr/h5zarr.h"

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef H5ZARR_CONVERT_HAVE_REFS
int h5zarr_refs_main(int argc, char **argv);
#endif

#define RECORD_NAME "/.h5zarr_convert"

static void
usage(FILE *f)
{
    fprintf(
        f,
        "usage: h5zarr-convert [options] SOURCE TARGET\n"
        "  SOURCE  an HDF5 or netCDF-4 file (read with HDF5's native connector)\n"
        "  TARGET  a zarr store: a directory (out.zarr) or s3://bucket/path.zarr\n"
        "options:\n"
        "  -z, --zarr-version 2|3   zarr format of the store (default 3)\n"
        "  -s, --shard-bytes N      shard the store's arrays (v3) at about N bytes a shard (K/M/G suffixes)\n"
        "  -c, --codec SPEC         re-encode every dataset with this codec instead of its filters:\n"
        "                           none, zstd[:level], zlib[:level], gzip[:level], "
        "blosc[:cname[:clevel[:shuffle]]]\n"
        "  -C, --consolidated       write consolidated metadata\n"
        "  -t, --threads N          the connector's encoding threads (default: the cores)\n"
        "      --verify             after converting, compare every chunk (raw copies) or value with the "
        "source\n"
        "      --verify-only        compare an existing store with the source, write nothing\n"
        "  -f, --force              replace an existing TARGET\n"
        "  -q, --quiet              no progress bar and no summary\n"
        "  -v, --verbose            say how each dataset's data goes over\n"
        "      --refs SOURCE OUT.json  kerchunk reference JSON instead of a copy (tools/convert_refs.c%s)\n"
        "  -h, --help\n"
        "Refused before anything is written (each object listed with the reason, exit 3): filters without a\n"
        "zarr codec (n-bit, user-defined), region references, references out of the file, user-defined "
        "links.\n"
        "An interrupted run resumes when run again with the same arguments (docs/CONVERT.md).\n",
#ifdef H5ZARR_CONVERT_HAVE_REFS
        ""
#else
        "; not built in"
#endif
    );
}

/* ---- progress ---------------------------------------------------------------------------------------- */

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
meter_draw(cv_meter *m, bool last)
{
    double t = now(), el = t - m->t0, rate = el > 0 ? (double)m->bytes / el : 0, frac;
    char   eta[32] = "--";
    int    w       = 30, fill;
    frac           = m->nbytes ? (double)m->bytes / (double)m->nbytes
                               : (m->nobjs ? (double)m->objs / (double)m->nobjs : 1);
    if (frac > 1)
        frac = 1;
    fill = (int)(frac * w);
    if (rate > 0 && m->nbytes > m->bytes)
        snprintf(eta, sizeof eta, "%.0fs", (double)(m->nbytes - m->bytes) / rate);
    else if (last || m->bytes >= m->nbytes)
        snprintf(eta, sizeof eta, "0s");
    fprintf(stderr, "\r[%.*s%*s] %zu/%zu objects  %.1f/%.1f MiB  %.1f MiB/s  ETA %s ", fill,
            "##############################", w - fill, "", m->objs, m->nobjs, (double)m->bytes / 1048576.0,
            (double)m->nbytes / 1048576.0, rate / 1048576.0, eta);
    if (last)
        fputc('\n', stderr);
    m->last = t;
}

void
cv_meter_add(cv_meter *m, size_t objs, hsize_t bytes)
{
    if (!m)
        return;
    m->objs += objs;
    m->bytes += bytes;
    if (m->on && now() - m->last > 0.1)
        meter_draw(m, false);
}

void
cv_meter_done(cv_meter *m)
{
    if (m && m->on)
        meter_draw(m, true);
}

/* ---- the resume record (convert_resume.c) ---------------------------------------------------------- */

/* The record's identity line: the source (absolute path, size, mtime) and the options that shape the
 * store; a record of another source or other options is not resumed. */
static char *
record_identity(const cv_opts *o)
{
    struct stat st;
    char        abs[PATH_MAX], *s = NULL;
    if (stat(o->src, &st) < 0 || !realpath(o->src, abs))
        return NULL;
    if (asprintf(&s, "source %s size %lld mtime %lld.%09ld version %d shard %lld codec %s", abs,
                 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, o->version,
                 o->shard_bytes, o->codec ? o->codec : "-") < 0)
        return NULL;
    return s;
}

/* ---- stores ----------------------------------------------------------------------------------------- */

static bool
is_url(const char *p)
{
    return strstr(p, "://") != NULL;
}

static int
rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* Removes a store this run made (a directory tree, or through the connector for a URL). */
static void
remove_store(const char *dst, hid_t fapl)
{
    if (!is_url(dst))
        nftw(dst, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    else
        H5E_BEGIN_TRY { H5Fdelete(dst, fapl); }
    H5E_END_TRY
}

static hid_t
zarr_fapl(const cv_opts *o)
{
    char  opts[512];
    int   n    = 0;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    n += snprintf(opts + n, sizeof opts - (size_t)n, "codec=%s", o->codec ? o->codec : "none");
    if (o->shard_bytes)
        n += snprintf(opts + n, sizeof opts - (size_t)n, " shard_bytes=%lld", o->shard_bytes);
    if (o->consolidated)
        n += snprintf(opts + n, sizeof opts - (size_t)n, " consolidated=1");
    if (o->threads)
        n += snprintf(opts + n, sizeof opts - (size_t)n, " threads=%d", o->threads);
    if (fapl < 0 || H5Pset_fapl_zarr_opts(fapl, o->version, opts) < 0) {
        fprintf(stderr, "h5zarr-convert: the zarr connector can't be loaded (HDF5_PLUGIN_PATH: %s)\n",
                getenv("HDF5_PLUGIN_PATH") ? getenv("HDF5_PLUGIN_PATH") : "unset");
        if (fapl >= 0)
            H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

/* The plugin folders next to this program (installed: ../lib/h5zarr/plugin; the build tree's), after
 * HDF5_PLUGIN_PATH's, so the connector loads without setting it. */
static void
add_plugin_paths(void)
{
    char        exe[PATH_MAX], dir[PATH_MAX + 64];
    ssize_t     n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;
    if (n > 0) {
        exe[n]      = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(dir, sizeof dir, "%s/../lib/h5zarr/plugin", exe);
        if (stat(dir, &st) == 0)
            H5PLappend(dir);
    }
#ifdef H5ZARR_CONVERT_PLUGIN_DIR
    if (stat(H5ZARR_CONVERT_PLUGIN_DIR, &st) == 0)
        H5PLappend(H5ZARR_CONVERT_PLUGIN_DIR);
#endif
}

static long long
parse_bytes(const char *s)
{
    char     *e;
    long long v = strtoll(s, &e, 10);
    if (*e == 'K' || *e == 'k')
        v <<= 10, e++;
    else if (*e == 'M' || *e == 'm')
        v <<= 20, e++;
    else if (*e == 'G' || *e == 'g')
        v <<= 30, e++;
    return *e || v <= 0 ? -1 : v;
}

static int
parse_args(int argc, char **argv, cv_opts *o)
{
    static const struct option lo[] = {
        {"zarr-version", 1, 0, 'z'}, {"shard-bytes", 1, 0, 's'}, {"codec", 1, 0, 'c'},
        {"consolidated", 0, 0, 'C'}, {"threads", 1, 0, 't'},     {"verify", 0, 0, 'V'},
        {"verify-only", 0, 0, 'O'},  {"force", 0, 0, 'f'},       {"quiet", 0, 0, 'q'},
        {"verbose", 0, 0, 'v'},      {"help", 0, 0, 'h'},        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "z:s:c:Ct:fqvh", lo, NULL)) != -1) {
        switch (c) {
            case 'z':
                o->version = atoi(optarg);
                if (o->version != 2 && o->version != 3)
                    return fprintf(stderr, "h5zarr-convert: --zarr-version: 2 or 3, not '%s'\n", optarg), -1;
                break;
            case 's':
                if ((o->shard_bytes = parse_bytes(optarg)) < 0)
                    return fprintf(stderr, "h5zarr-convert: --shard-bytes: a size, not '%s'\n", optarg), -1;
                break;
            case 'c':
                o->codec = optarg;
                break;
            case 'C':
                o->consolidated = 1;
                break;
            case 't':
                o->threads = atoi(optarg);
                if (o->threads <= 0)
                    return fprintf(stderr, "h5zarr-convert: --threads: a positive number, not '%s'\n",
                                   optarg),
                           -1;
                break;
            case 'V':
                o->verify = 1;
                break;
            case 'O':
                o->verify = 2;
                break;
            case 'f':
                o->force = 1;
                break;
            case 'q':
                o->quiet = 1;
                break;
            case 'v':
                o->verbose = 1;
                break;
            case 'h':
                usage(stdout);
                exit(0);
            default:
                usage(stderr);
                return -1;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return -1;
    }
    o->src = argv[optind];
    o->dst = argv[optind + 1];
    if (o->shard_bytes && o->version == 2)
        return fprintf(stderr, "h5zarr-convert: --shard-bytes needs zarr v3 (v2 has no sharding)\n"), -1;
    return 0;
}

/* ---- the source ------------------------------------------------------------------------------------- */

static herr_t
err_walk(unsigned n, const H5E_error2_t *e, void *op)
{
    char *msg = op;
    (void)n;
    if (!*msg && e->desc && *e->desc)
        snprintf(msg, 512, "%s", e->desc);
    return 0;
}

static hid_t
open_source(const char *path)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    char  msg[512] = "", head[4] = "";
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "h5zarr-convert: %s: %s\n", path, strerror(errno));
        goto done;
    }
    if (fread(head, 1, 3, fp) == 3 && !memcmp(head, "CDF", 3)) {
        fclose(fp);
        fprintf(stderr,
                "h5zarr-convert: %s: a classic netCDF file, not netCDF-4: make it netCDF-4 first "
                "(nccopy -k nc4 %s in4.nc)\n",
                path, path);
        goto done;
    }
    fclose(fp);
    H5Pset_vol(fapl, H5VL_NATIVE, NULL);
    H5E_BEGIN_TRY { f = H5Fopen(path, H5F_ACC_RDONLY, fapl); }
    H5E_END_TRY
    if (f < 0) {
        H5Fopen(path, H5F_ACC_RDONLY, fapl) < 0 ? (void)0
                                                : (void)0; /* the stack of a second try, for its message */
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, err_walk, msg);
        H5Eclear2(H5E_DEFAULT);
        fprintf(stderr,
                "h5zarr-convert: %s: not an HDF5 or netCDF-4 file, or a damaged one (HDF5: %s); nothing "
                "written\n",
                path, *msg ? msg : "unable to open the file");
    }
done:
    H5Pclose(fapl);
    return f;
}

/* A file-creation plist with the source root's creation-order tracking (netCDF's order of variables and
 * attributes). */
static hid_t
dst_fcpl(hid_t src)
{
    hid_t g = H5Gopen2(src, "/", H5P_DEFAULT), s = g < 0 ? -1 : H5Gget_create_plist(g),
          d     = H5Pcreate(H5P_FILE_CREATE);
    unsigned lf = 0, af = 0;
    if (g >= 0)
        H5Gclose(g);
    if (s >= 0) { /* the root group's, which the file's creation plist does not report */
        if (H5Pget_link_creation_order(s, &lf) >= 0 && lf)
            H5Pset_link_creation_order(d, lf);
        if (H5Pget_attr_creation_order(s, &af) >= 0 && af)
            H5Pset_attr_creation_order(d, af);
        H5Pclose(s);
    }
    return d;
}

/* ---- the passes ------------------------------------------------------------------------------------- */

typedef struct run {
    cv_opts   o;
    cv_list   l;
    cv_resume r;
    cv_meter  m;
    hid_t     src, dst, fapl;
    bool      fresh; /* this run made the store */
    size_t    nraw, nvalues;
} run;

/* Decides between a fresh store and resuming one; creates or opens the store. 0 or -1. */
static int
open_target(run *u)
{
    struct stat st;
    char       *ident = record_identity(&u->o);
    int         rc    = -1;
    if (!ident)
        return -1;
    if (is_url(u->o.dst))
        u->r.url = u->o.dst;
    else if (asprintf(&u->r.path, "%s%s", u->o.dst, RECORD_NAME) < 0)
        goto done;
    {
        /* a local store that exists, or a URL store (its record key, if any) */
        bool there = u->r.url || lstat(u->o.dst, &st) == 0;
        int  k     = there ? cv_record_read(&u->r, ident, u->l.n) : 0;
        if (there && (k != 0 || !u->r.url)) { /* a URL store without a record: H5Fcreate decides */
            if (k == 1 && u->r.structure && !u->o.force) {
                if ((u->dst = H5Fopen(u->o.dst, H5F_ACC_RDWR, u->fapl)) < 0 ||
                    cv_record_start(&u->r, ident, true) < 0)
                    goto done;
                size_t nd = 0;
                for (size_t i = 0; i < u->l.n; i++)
                    nd += u->l.v[i].kind == CV_DATASET && u->r.done[i] == 1;
                fprintf(
                    stderr,
                    "h5zarr-convert: resuming the unfinished conversion in %s (%zu of %zu datasets done)\n",
                    u->o.dst, nd, u->l.ndatasets);
                rc = 0;
                goto done;
            }
            if (k == 0 && !u->o.force) {
                fprintf(stderr, "h5zarr-convert: %s exists (use --force to replace it)\n", u->o.dst);
                goto done;
            }
            if (k < 0 && !u->o.force) {
                fprintf(stderr,
                        "h5zarr-convert: %s holds an unfinished conversion of another source or with other "
                        "options (%s); use --force to replace it\n",
                        u->o.dst, u->r.path ? u->r.path : "its key .h5zarr_convert");
                goto done;
            }
            /* --force, or a run killed before its structure was made: start again */
            remove_store(u->o.dst, u->fapl);
            free(u->r.done);
            u->r.done      = NULL;
            u->r.structure = u->r.scales = false;
        }
    }
    unsigned mode = u->o.force ? H5F_ACC_TRUNC : H5F_ACC_EXCL;
    if (u->r.url && !u->o.force) {
        int held = cv_store_occupied(&u->r);
        if (held != 0) {
            fprintf(stderr, "h5zarr-convert: %s %s\n", u->o.dst,
                    held == 1   ? "exists (use --force to replace it)"
                    : held == 2 ? "holds other objects, no zarr store (use --force to replace them)"
                                : "can't be reached");
            goto done;
        }
        mode = H5F_ACC_TRUNC; /* no store there (H5F_ACC_EXCL fails on any prefix of a bucket) */
    }
    hid_t fcpl = dst_fcpl(u->src);
    u->dst     = H5Fcreate(u->o.dst, mode, fcpl, u->fapl);
    H5Pclose(fcpl);
    if (u->dst < 0) {
        fprintf(stderr, "h5zarr-convert: %s: the store can't be created\n", u->o.dst);
        goto done;
    }
    u->fresh = true;
    if (!u->r.done && !(u->r.done = calloc(u->l.n ? u->l.n : 1, sizeof *u->r.done)))
        goto done;
    u->r.nobj = u->l.n;
    if (cv_record_start(&u->r, ident, false) < 0) {
        fprintf(stderr, "h5zarr-convert: %s: can't write the resume record\n",
                u->r.path ? u->r.path : u->o.dst);
        goto done;
    }
    rc = 0;
done:
    free(ident);
    return rc;
}

/* The data of every dataset not done yet; small datasets are recorded done in batches. */
static int
data_pass(run *u)
{
    size_t  pend[1024], np = 0;
    hsize_t pbytes = 0;
    for (size_t i = 0; i < u->l.n; i++) {
        cv_obj *o = &u->l.v[i];
        if (o->kind != CV_DATASET)
            continue;
        u->nraw += o->mode == CV_DATA_RAW;
        u->nvalues += o->mode == CV_DATA_VALUES || o->mode == CV_DATA_REFS;
        if (u->r.done[i] == 1) {
            cv_meter_add(&u->m, 1, o->bytes);
            continue;
        }
        cv_say_mode(&u->o, o);
        if (cv_copy_data(u->src, u->dst, &u->o, &u->l, i, &u->r, &u->m) < 0)
            return -1;
        cv_meter_add(&u->m, 1, o->mode == CV_DATA_RAW || o->mode == CV_DATA_VALUES ? 0 : o->bytes);
        pend[np++] = i;
        pbytes += o->bytes;
        if (np == 1024 || pbytes >= ((hsize_t)64 << 20) || i + 1 == u->l.n) {
            for (size_t k = 0; k + 1 < np; k++)
                u->r.done[pend[k]] = 1, (void)cv_record_add(&u->r, "obj %zu 1\n", pend[k]);
            if (cv_resume_note(&u->r, u->dst, pend[np - 1], 1) < 0)
                return -1;
            np     = 0;
            pbytes = 0;
        }
    }
    if (np) {
        for (size_t k = 0; k + 1 < np; k++)
            u->r.done[pend[k]] = 1, (void)cv_record_add(&u->r, "obj %zu 1\n", pend[k]);
        if (cv_resume_note(&u->r, u->dst, pend[np - 1], 1) < 0)
            return -1;
    }
    return 0;
}

/* The datasets whose data went with the structure (cv_data_early), recorded done with it. */
static int
record_early(run *u)
{
    for (size_t i = 0; i < u->l.n; i++)
        if (u->r.done[i] == 1 && cv_record_add(&u->r, "obj %zu 1\n", i) < 0)
            return -1;
    return 0;
}

static int
convert(run *u)
{
    size_t nother = 0;
    if (open_target(u) < 0)
        return -1;
    for (size_t i = 0; i < u->l.n; i++)
        nother += u->l.v[i].kind != CV_DATASET;
    if (!u->r.structure) {
        /* the scales with the structure: every document is written once, at this flush (the connector
         * defers them), not again when the scales' dimension names change them after the data; the small
         * datasets' data went with the structure and is recorded done with it */
        if (cv_copy_structure(u->src, u->dst, &u->o, &u->l, u->r.done) < 0 ||
            cv_copy_scales(u->dst, &u->l) < 0 || H5Fflush(u->dst, H5F_SCOPE_GLOBAL) < 0 ||
            cv_record_add(&u->r, "structure\nscales\n") < 0 || record_early(u) < 0 ||
            cv_record_commit(&u->r) < 0)
            return -1;
        u->r.scales = true;
    }
    cv_meter_add(&u->m, nother, 0);
    if (data_pass(u) < 0)
        return -1;
    if (!u->r.scales && (cv_copy_scales(u->dst, &u->l) < 0 || H5Fflush(u->dst, H5F_SCOPE_GLOBAL) < 0 ||
                         cv_record_add(&u->r, "scales\n") < 0 || cv_record_commit(&u->r) < 0))
        return -1;
    cv_meter_done(&u->m);
    hid_t d = u->dst;
    u->dst  = -1;
    if (H5Fclose(d) < 0) {
        fprintf(stderr, "h5zarr-convert: %s: closing the store failed\n", u->o.dst);
        return -1;
    }
    return 0;
}

static int
verify(run *u)
{
    hid_t d = -1, fapl = H5Pcreate(H5P_FILE_ACCESS);
    long  bad;
    if (H5Pset_fapl_zarr(fapl, 0) < 0 || (d = H5Fopen(u->o.dst, H5F_ACC_RDONLY, fapl)) < 0) {
        fprintf(stderr, "h5zarr-convert: verify: %s can't be opened as a zarr store\n", u->o.dst);
        H5Pclose(fapl);
        return -1;
    }
    H5Pclose(fapl);
    bad = cv_verify(u->src, d, &u->l);
    H5Fclose(d);
    if (bad)
        fprintf(stderr, "h5zarr-convert: verify: %ld object(s) of %s differ from %s\n", bad, u->o.dst,
                u->o.src);
    else if (!u->o.quiet && (u->m.on || u->o.verbose))
        fprintf(stderr, "h5zarr-convert: verify: every chunk and value of %zu objects equal\n", u->l.n);
    return bad ? 1 : 0;
}

int
main(int argc, char **argv)
{
    run         u   = {.src = -1, .dst = -1, .fapl = -1};
    int         ret = 1;
    const char *ka  = getenv("H5ZARR_CONVERT_KILL_AFTER");

    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--refs")) {
#ifdef H5ZARR_CONVERT_HAVE_REFS
            return h5zarr_refs_main(argc, argv);
#else
            fprintf(stderr,
                    "h5zarr-convert: --refs is not built into this h5zarr-convert (tools/convert_refs.c)\n");
            return 2;
#endif
        }
    if (parse_args(argc, argv, &u.o) < 0)
        return 2;
    if (ka)
        cv_kill_arm(atoll(ka));
    if (!getenv("H5ZARR_CONVERT_ERROR_STACK")) /* HDF5's own stack on stderr: for debugging */
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    add_plugin_paths();
    if ((u.src = open_source(u.o.src)) < 0)
        goto done;
    if (cv_scan(u.src, &u.o, &u.l) < 0) {
        fprintf(stderr, "h5zarr-convert: %s: reading its objects failed; nothing written\n", u.o.src);
        goto done;
    }
    if (u.l.nwhy) {
        fprintf(stderr,
                "h5zarr-convert: %s can't be carried into zarr whole; nothing written. %zu reason(s):\n",
                u.o.src, u.l.nwhy);
        for (size_t i = 0; i < u.l.nwhy; i++)
            fprintf(stderr, "  %s\n", u.l.why[i]);
        ret = 3;
        goto done;
    }
    if ((u.fapl = zarr_fapl(&u.o)) < 0)
        goto done;
    if (u.o.verify == 2) {
        ret = verify(&u) == 0 ? 0 : 1;
        goto done;
    }
    u.m = (cv_meter){isatty(2) && !u.o.quiet, now(), 0, 0, u.l.n, 0, u.l.total_bytes};
    if (convert(&u) < 0) {
        if (u.dst >= 0)
            H5E_BEGIN_TRY { H5Fclose(u.dst); }
        H5E_END_TRY
        u.dst = -1;
        if (u.fresh) {
            remove_store(u.o.dst, u.fapl);
            fprintf(stderr, "h5zarr-convert: %s -> %s failed; the store was removed\n", u.o.src, u.o.dst);
        }
        else
            fprintf(stderr, "h5zarr-convert: %s -> %s failed; run again to resume (%s)\n", u.o.src, u.o.dst,
                    u.r.path ? u.r.path : "the record is the store's key .h5zarr_convert");
        goto done;
    }
    if (u.o.verify && verify(&u) != 0)
        goto done;
    if (cv_record_remove(&u.r) < 0)
        goto done;
    if (!u.o.quiet && (u.m.on || u.o.verbose))
        fprintf(stderr,
                "h5zarr-convert: %s -> %s: %zu objects, %zu datasets (%zu raw chunks, %zu values), %.1f MiB "
                "in %.2f s\n",
                u.o.src, u.o.dst, u.l.n, u.l.ndatasets, u.nraw, u.nvalues,
                (double)u.l.total_bytes / 1048576.0, now() - u.m.t0);
    ret = 0;
done:
    cv_record_close(&u.r);
    free(u.r.path);
    free(u.r.done);
    if (u.dst >= 0)
        H5Fclose(u.dst);
    if (u.src >= 0)
        H5Fclose(u.src);
    if (u.fapl >= 0)
        H5Pclose(u.fapl);
    cv_list_free(&u.l);
    return ret;
}
