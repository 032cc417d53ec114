/* grow.c - arrays and byte strings in an arena (the arena itself is
 * arena.c, which the fuzz build may replace; see tests/fuzz/run.sh). */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ckd.h"
#include "ir_internal.h"

void *ir_grow(ir_arena *a, void *arr, size_t elem, size_t n, size_t *cap,
              size_t need)
{
    if (need <= *cap)
        return arr;
    size_t ncap = *cap ? *cap : 4, bytes;
    while (ncap < need)
        if (ckd_mul_size(&ncap, ncap, 2))
            ncap = need;
    if (ckd_mul_size(&bytes, ncap, elem)) {
        fprintf(stderr, "pdtrans: fatal: array of %zu elements of %zu bytes is too large\n",
                ncap, elem);
        abort();
    }
    /* An array built last (an op a pass is filling in) grows where it is,
     * leaving no copy behind. */
    if (arr && *cap && ir_arena_extend(a, arr, *cap * elem, bytes)) {
        *cap = ncap;
        return arr;
    }
    /* Not zeroed: only the first n elements are ever read until the
     * caller fills more, and zeroing the spare capacity (ops' attr arrays
     * are large) costs time and touches memory. */
    void *fresh = ir_arena_alloc_raw(a, bytes);
    if (n)
        memcpy(fresh, arr, n * elem);
    *cap = ncap;
    return fresh;
}

void *ir_arena_memdup(ir_arena *a, const void *p, size_t size)
{
    void *q = ir_arena_alloc_raw(a, size);
    if (size)
        memcpy(q, p, size);
    return q;
}

ir_bytes ir_bytes_copy(ir_arena *a, ir_bytes b)
{
    ir_bytes r = {NULL, b.len};
    if (b.data)
        r.data = ir_arena_dup(a, b.data, b.len);
    return r;
}

uint32_t ir_count32(size_t n)
{
    if (n > UINT32_MAX) {
        fprintf(stderr, "pdtrans: fatal: count %zu does not fit in 32 bits\n", n);
        abort();
    }
    return (uint32_t)n;
}

void *ir_grow32(ir_arena *a, void *arr, size_t elem, size_t n, uint32_t *cap,
                size_t need)
{
    size_t wide = *cap;
    arr = ir_grow(a, arr, elem, n, &wide, ir_count32(need));
    /* Doubling may pass UINT32_MAX; the room past it is never used. */
    *cap = wide > UINT32_MAX ? UINT32_MAX : (uint32_t)wide;
    return arr;
}
