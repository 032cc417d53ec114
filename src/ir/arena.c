/* arena.c - bump allocator; everything in an arena dies together. */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ckd.h"
#include "ir_internal.h"
#include "util.h"

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} chunk;

struct ir_arena {
    chunk *head;
};

enum { CHUNK_MIN = 64 * 1024 };

ir_arena *ir_arena_new(void)
{
    return xcalloc(1, sizeof(ir_arena));
}

void ir_arena_free(ir_arena *a)
{
    if (!a)
        return;
    chunk *c = a->head;
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

void *ir_arena_alloc(ir_arena *a, size_t size)
{
    void *p = ir_arena_alloc_raw(a, size);
    memset(p, 0, size);
    return p;
}

void *ir_arena_alloc_raw(ir_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
        c = xmalloc(sizeof(chunk) + want);
        c->size = want;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

/* Grows the arena's last allocation p from old to size bytes where it lies,
 * when it is the top of the newest chunk and the chunk has room. */
static bool extend_top(ir_arena *a, void *p, size_t old, size_t size)
{
    chunk *c = a->head;
    old = (old + 15) & ~(size_t)15;
    size = (size + 15) & ~(size_t)15;
    if (!c || !p || (unsigned char *)p + old != c->data + c->used)
        return false;
    size_t base = c->used - old;
    if (size > c->size - base)
        return false;
    c->used = base + size;
    return true;
}

void *ir_arena_dup(ir_arena *a, const void *p, size_t size)
{
    unsigned char *q = ir_arena_alloc_raw(a, size + 1);
    if (size)
        memcpy(q, p, size);
    q[size] = 0;    /* duplicated strings stay NUL-terminated */
    return q;
}

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
    if (arr && *cap && extend_top(a, arr, *cap * elem, bytes)) {
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

ir_bytes ir_bytes_copy(ir_arena *a, ir_bytes b)
{
    ir_bytes r = {NULL, b.len};
    if (b.data)
        r.data = ir_arena_dup(a, b.data, b.len);
    return r;
}
