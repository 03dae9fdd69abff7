/*
 * store_writer.c: values written in pieces (zarr_store_writer_*, zarr.h): the public functions and the
 * generic form for stores without writer ops, which gathers the pieces in one buffer (under a lock,
 * since several threads may write one value) and sets it at the commit. A store with its own ops (the
 * directory store writes into the file that the commit names) is called straight through; which of
 * the two a store uses depends on its ops table alone, so a handle always goes back to the form that
 * made it (forwarding stores call the zarr__store_op_writer_* forms on their inner store).
 */
#include "store_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct zarr_store_writer {
    zarr_store *s; /* a reference */
    void       *h; /* the store's handle, or a gathered value (below) */
};

/* The generic form's handle. */
typedef struct gathered {
    pthread_mutex_t mu;
    zarr_buf        b; /* the bytes so far; b.size is the end of the furthest piece */
    char            key[];
} gathered;

int
zarr__store_op_writer_open(zarr_store *s, const char *key, void **h)
{
    size_t    kl = strlen(key);
    gathered *g;
    if (s->ops->writer_open)
        return s->ops->writer_open(s, key, h);
    if (!(g = malloc(sizeof *g + kl + 1)))
        return zarr_error(ZARR_ENOMEM, "out of memory starting a value at '%s'", key);
    pthread_mutex_init(&g->mu, NULL);
    g->b = (zarr_buf)ZARR_BUF_INIT;
    memcpy(g->key, key, kl + 1);
    *h = g;
    return ZARR_OK;
}

int
zarr__store_op_writer_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n)
{
    gathered *g = h;
    uint64_t  end;
    int       rc = ZARR_OK;
    if (s->ops->writer_write)
        return s->ops->writer_write(s, h, off, data, n);
    if (off > SIZE_MAX || n > SIZE_MAX - off)
        return zarr_error(ZARR_EOVERFLOW, "can't write %zu bytes at %llu of '%s': past any size", n,
                          (unsigned long long)off, g->key);
    end = off + n;
    pthread_mutex_lock(&g->mu);
    if (zarr_buf_reserve(&g->b, (size_t)end) != ZARR_OK) /* grows geometrically: pieces come one by one */
        rc = zarr_error(ZARR_ENOMEM, "out of memory gathering %llu bytes of '%s'", (unsigned long long)end,
                        g->key);
    if (rc == ZARR_OK) {
        if (off > g->b.size) /* a gap reads as zero */
            memset(g->b.data + g->b.size, 0, (size_t)off - g->b.size);
        if (n)
            memcpy(g->b.data + off, data, n);
        if (end > g->b.size)
            g->b.size = (size_t)end;
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

int
zarr__store_op_writer_close(zarr_store *s, void *h, bool commit)
{
    gathered *g  = h;
    int       rc = ZARR_OK;
    if (s->ops->writer_close)
        return s->ops->writer_close(s, h, commit);
    if (!g)
        return ZARR_OK;
    if (commit)
        rc = s->ops->set(s, g->key, g->b.data ? (const void *)g->b.data : "", g->b.size);
    pthread_mutex_destroy(&g->mu);
    zarr_buf_free(&g->b);
    free(g);
    return rc;
}

int
zarr_store_writer_open(zarr_store *s, const char *key, zarr_store_writer **out)
{
    zarr_store_writer *w;
    int                rc;
    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_store_writer_open: out is NULL");
    *out = NULL;
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    if ((rc = zarr__store_check_key(key, false)) != ZARR_OK)
        return rc;
    if (s->readonly)
        return zarr_error(ZARR_EREADONLY, "can't write '%s': store '%s' is read-only", key,
                          s->url ? s->url : "");
    if (!(w = malloc(sizeof *w)))
        return zarr_error(ZARR_ENOMEM, "out of memory starting a value at '%s'", key);
    if ((rc = zarr__store_op_writer_open(s, key, &w->h)) != ZARR_OK) {
        free(w);
        return rc;
    }
    zarr_store_ref(s);
    w->s = s;
    *out = w;
    return ZARR_OK;
}

int
zarr_store_writer_write(zarr_store_writer *w, uint64_t off, const void *data, size_t n)
{
    if (!w || (!data && n))
        return zarr_error(ZARR_EINVAL, "zarr_store_writer_write: writer or data is NULL");
    return zarr__store_op_writer_write(w->s, w->h, off, data, n);
}

int
zarr_store_writer_close(zarr_store_writer *w, bool commit)
{
    int rc;
    if (!w)
        return ZARR_OK;
    rc = zarr__store_op_writer_close(w->s, w->h, commit);
    zarr_store_close(w->s);
    free(w);
    return rc;
}
