/*
 * chunk_mem.c: the memory of the decoded-chunk cache's entries (chunk_cache.c).
 *
 * On a VM whose host takes freed memory back (this one reports free pages to its host), the first touch
 * of a 4 KiB page costs 5-18 us, so the 64 new 64 KiB entries of a read-modify-write over 64 chunks cost
 * more in page faults than native HDF5's whole section, whose 1 MiB chunk cache recycles its buffers
 * (bench/README.md, "W3: cache entries in huge-page regions"). Entries of SLOT .. REGION bytes are
 * therefore carved, as runs of 64 KiB slots, from 2 MiB-aligned regions that the kernel may back with
 * one transparent huge page each (madvise MADV_HUGEPAGE): one fault maps a whole region, and the slots
 * an entry gives back are used again by the next entries, of this array or another, without a fault.
 * Up to KEEP_FREE wholly free regions stay mapped for reuse (HDF5's free lists keep freed chunk memory
 * likewise); past that a region is unmapped when its last slot is freed. Where the kernel has no huge
 * page to give, a region is backed by small pages as malloc's memory would be.
 *
 * Other sizes, a failed mmap, and builds under AddressSanitizer (which must see each buffer's own
 * bounds) use malloc; zarr__chunk_mem_free tells the two apart by address. All state is under one
 * mutex (one lock per chunk load or eviction, next to a 64 KiB read), and a fork holds it so the child
 * finds it free.
 */
#define _GNU_SOURCE
#include "job.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CHUNK_MEM_REGIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHUNK_MEM_REGIONS 0
#endif
#endif
#if !defined(CHUNK_MEM_REGIONS) && defined(__linux__) && defined(MAP_ANONYMOUS)
#define CHUNK_MEM_REGIONS 1
#endif
#ifndef CHUNK_MEM_REGIONS
#define CHUNK_MEM_REGIONS 0
#endif

#define SLOT      ((size_t)64 << 10)
#define REGION    ((size_t)2 << 20)
#define NSLOTS    32 /* REGION / SLOT: one bit each in `used` */
#define KEEP_FREE 4  /* wholly free regions kept mapped */

typedef struct region {
    struct region *next;
    uint8_t       *base; /* REGION bytes, REGION-aligned */
    uint32_t       used; /* bit i: slot i belongs to an entry */
} region;

static struct {
    pthread_mutex_t mu;
    region         *list;
    unsigned        n, nfree; /* regions mapped; of them wholly free */
} cm = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

#if CHUNK_MEM_REGIONS
/* Whether an entry of `n` bytes comes from the regions; the slots it takes, and their bits from slot 0. */
static bool
in_regions(size_t n)
{
    return n >= SLOT && n <= REGION;
}
static unsigned
slots_of(size_t n)
{
    return (unsigned)((n + SLOT - 1) / SLOT);
}
static uint32_t
run_mask(unsigned k)
{
    return k >= NSLOTS ? UINT32_MAX : ((uint32_t)1 << k) - 1;
}

static void
cm_lock(void)
{
    pthread_mutex_lock(&cm.mu);
}
static void
cm_unlock(void)
{
    pthread_mutex_unlock(&cm.mu);
}
static void
cm_atfork(void)
{
    (void)pthread_atfork(cm_lock, cm_unlock, cm_unlock);
}

/* The first run of `k` free slots in `used`, or -1. */
static int
free_run(uint32_t used, unsigned k)
{
    uint32_t mask = run_mask(k);
    for (unsigned i = 0; i + k <= NSLOTS; i++)
        if (!(used & (mask << i)))
            return (int)i;
    return -1;
}

/* Takes `k` slots from a mapped region (under the lock), or NULL. */
static void *
take_slots(unsigned k)
{
    uint32_t mask = run_mask(k);
    for (region *r = cm.list; r; r = r->next) {
        int i = free_run(r->used, k);
        if (i < 0)
            continue;
        if (r->used == 0)
            cm.nfree--;
        r->used |= mask << i;
        return r->base + (size_t)i * SLOT;
    }
    return NULL;
}

/* Maps a REGION-aligned region and asks for a huge page behind it; NULL when mmap fails. */
static region *
map_region(void)
{
    region  *r = malloc(sizeof *r);
    uint8_t *p =
        r ? mmap(NULL, 2 * REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    uintptr_t a;
    if (p == MAP_FAILED) {
        free(r);
        return NULL;
    }
    a = ((uintptr_t)p + REGION - 1) & ~(uintptr_t)(REGION - 1);
    if (a > (uintptr_t)p)
        (void)munmap(p, a - (uintptr_t)p);
    (void)munmap((void *)(a + REGION), (uintptr_t)p + REGION - a);
#ifdef MADV_HUGEPAGE
    (void)madvise((void *)a, REGION, MADV_HUGEPAGE); /* advisory: small pages where it is refused */
#endif
    r->base = (uint8_t *)a;
    r->used = 0;
    return r;
}
#endif

void *
zarr__chunk_mem_alloc(size_t n)
{
#if CHUNK_MEM_REGIONS
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    unsigned              k    = slots_of(n);
    void                 *p;
    region               *r;
    if (!in_regions(n))
        return malloc(n);
    pthread_once(&once, cm_atfork);
    cm_lock();
    p = take_slots(k);
    cm_unlock();
    if (p)
        return p;
    if (!(r = map_region()))
        return malloc(n);
    cm_lock();
    r->next = cm.list;
    cm.list = r;
    cm.n++;
    cm.nfree++;
    p = take_slots(k); /* the new region has room for k <= NSLOTS */
    cm_unlock();
    return p;
#else
    return malloc(n);
#endif
}

void
zarr__chunk_mem_free(void *p, size_t n)
{
#if CHUNK_MEM_REGIONS
    region **pp, *r = NULL;
    if (!p)
        return;
    if (in_regions(n)) {
        cm_lock();
        for (pp = &cm.list; *pp; pp = &(*pp)->next)
            if ((uint8_t *)p >= (*pp)->base && (uint8_t *)p < (*pp)->base + REGION)
                break;
        if (*pp) {
            unsigned i = (unsigned)(((uint8_t *)p - (*pp)->base) / SLOT);
            (*pp)->used &= ~(run_mask(slots_of(n)) << i);
            if ((*pp)->used == 0 && ++cm.nfree > KEEP_FREE) {
                r   = *pp;
                *pp = r->next;
                cm.n--;
                cm.nfree--;
            }
            cm_unlock();
            if (r) {
                (void)munmap(r->base, REGION);
                free(r);
            }
            return;
        }
        cm_unlock();
    }
#else
    (void)n;
#endif
    free(p);
}

void
zarr__chunk_mem_stats(unsigned *regions, unsigned *free_regions)
{
    pthread_mutex_lock(&cm.mu);
    *regions      = cm.n;
    *free_regions = cm.nfree;
    pthread_mutex_unlock(&cm.mu);
}
