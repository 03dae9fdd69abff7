/*
 * plist.c: creation property lists in their earlier binary form (H5Pencode2 as base64), read only from
 * stores the user trusts (vol/reserved_legacy.c, legacy_reserved=1) and written by nothing new. Decoded
 * lists are remembered by their text (a copy per caller), and a fill value whose type holds pointers
 * never reaches H5Pdecode as it was stored. The memo is cleared by the connector's last term
 * (vol/connector.c: h5zv_plist_memo_clear).
 */
#include "h5zv.h"

#include <stdlib.h>
#include <string.h>

char *
h5zv_plist_encode(hid_t plist)
{
    return h5zv_encode_b64(plist, h5zv_pencode);
}

/* Decoded property lists, by their base64 text: every dataset of a file usually carries the same
 * dcpl, and H5Pdecode costs ~3x an H5Pcopy (W4 opens 1000 datasets). Callers get a copy, never the
 * kept list. Cleared when the connector is terminated (before HDF5 closes its ids). */
#define PLIST_MEMO 8
static struct {
    char *b64;
    hid_t id;
} plist_memo[PLIST_MEMO];
static unsigned plist_memo_next;

void
h5zv_plist_memo_clear(void)
{
    for (unsigned i = 0; i < PLIST_MEMO; i++) {
        if (plist_memo[i].b64 && H5Iis_valid(plist_memo[i].id))
            H5Pclose(plist_memo[i].id);
        free(plist_memo[i].b64);
        plist_memo[i].b64 = NULL;
        plist_memo[i].id  = H5I_INVALID_HID;
    }
}

/* Stores written before the fix of issue 12 hold dcpls whose fill value is of a type with pointers
 * (a vlen string: H5Pencode copies the fill buffer, i.e. a pointer of the writing process). HDF5
 * follows such a pointer whenever it copies, converts or frees the fill value (H5Pcopy, H5Pclose,
 * H5Pget_fill_value), so those bytes must never reach H5Pdecode as they are. This zeroes them in the
 * encoded list `buf` (`n` bytes): NULL pointers and zero lengths, which HDF5 copies and frees safely.
 * The property is H5P__dcrt_fill_value_enc's: "fill_value\0", alloc time and fill time (1 byte each),
 * the fill size (int64 LE; <= 0: no buffer follows), the buffer, a 1-byte length L, the encoded type's
 * size (L bytes LE), the type (H5Tencode: 0x03 0x00 ...). Returns -1 (nothing pushed) when a
 * "fill_value" property is there but does not parse, so its bytes can't be made safe: the caller then
 * does without the list. */
static int
plist_clear_pointer_fill(uint8_t *buf, size_t n)
{
    static const char name[] = "fill_value"; /* with its NUL: 11 bytes */
    int               bad = 0, ok = 0;

    for (size_t i = 2; i + sizeof name <= n; i++) {
        size_t   j = i + sizeof name, k, t, dts = 0;
        int64_t  size = 0;
        unsigned L;
        hid_t    ft;
        bool     ptrs;

        if (memcmp(buf + i, name, sizeof name) != 0)
            continue;
        if (j + 10 > n) {
            bad++;
            continue;
        }
        for (int b = 7; b >= 0; b--)
            size = (int64_t)(((uint64_t)size << 8) | buf[j + 2 + (size_t)b]);
        if (size <= 0) { /* default (0) or undefined (-1): no buffer */
            ok++;
            continue;
        }
        k = j + 10;
        if ((uint64_t)size > n - k || n - k - (size_t)size < 1) {
            bad++;
            continue;
        }
        t = k + (size_t)size;
        L = buf[t++];
        if (L < 1 || L > 8 || L > n - t) {
            bad++;
            continue;
        }
        for (unsigned b = L; b-- > 0;)
            dts = (dts << 8) | buf[t + b];
        t += L;
        /* the type, then at least the list's terminating byte */
        if (dts < 2 || dts >= n - t || buf[t] != 0x03 || buf[t + 1] != 0x00) {
            bad++;
            continue;
        }
        H5E_BEGIN_TRY { ft = H5Tdecode(buf + t); }
        H5E_END_TRY
        if (ft < 0 || H5Tget_size(ft) != (size_t)size) {
            h5zv_close(ft);
            bad++;
            continue;
        }
        ptrs = h5zv_type_has_pointers(ft);
        h5zv_close(ft);
        if (ptrs)
            memset(buf + k, 0, (size_t)size);
        ok++;
        i = t + dts - 1;
    }
    return bad && !ok ? -1 : 0;
}

hid_t
h5zv_plist_decode(const char *b64)
{
    hid_t  id, keep;
    size_t n = 0;
    void  *buf;
    if (!b64)
        return H5I_INVALID_HID;
    for (unsigned i = 0; i < PLIST_MEMO; i++)
        if (plist_memo[i].b64 && strcmp(plist_memo[i].b64, b64) == 0 &&
            H5Iget_type(plist_memo[i].id) == H5I_GENPROP_LST)
            return H5Pcopy(plist_memo[i].id);
    if (!(buf = h5zv_b64_decode(b64, &n)))
        return H5I_INVALID_HID;
    id = plist_clear_pointer_fill(buf, n) < 0 ? H5I_INVALID_HID : H5Pdecode(buf);
    free(buf);
    if (id < 0)
        return id;
    if ((keep = H5Pcopy(id)) >= 0) {
        unsigned i = plist_memo_next++ % PLIST_MEMO;
        char    *t = strdup(b64);
        if (!t) {
            H5Pclose(keep);
            return id;
        }
        if (plist_memo[i].b64 && H5Iis_valid(plist_memo[i].id))
            H5Pclose(plist_memo[i].id);
        free(plist_memo[i].b64);
        plist_memo[i].b64 = t;
        plist_memo[i].id  = keep;
    }
    return id;
}
