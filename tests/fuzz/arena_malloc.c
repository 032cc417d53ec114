/* arena_malloc.c - a stand-in for src/ir/arena.c in the fuzz build when
 * FUZZ_ARENA=malloc (see run.sh): every arena allocation is its own
 * exact-size malloc, so AddressSanitizer sees its bounds.  The real arena
 * carves allocations out of 64 KiB chunks, where an overflow into the
 * neighbouring allocation goes unnoticed.  Same API and contracts (ir.h):
 * ir_arena_alloc zeroes, everything is 16-aligned, all dies together. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/ir_internal.h"

struct ir_arena {
    void **ptrs;
    size_t n, cap;
};

ir_arena *ir_arena_new(void)
{
    ir_arena *a = calloc(1, sizeof *a);
    if (!a)
        abort();
    return a;
}

void ir_arena_free(ir_arena *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->ptrs[i]);
    free(a->ptrs);
    free(a);
}

void *ir_arena_alloc_raw(ir_arena *a, size_t size)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        void **q = realloc(a->ptrs, cap * sizeof *q);
        if (!q)
            abort();
        a->ptrs = q;
        a->cap = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, 16, size ? size : 1) != 0)
        abort();
    a->ptrs[a->n++] = p;
    return p;
}

void *ir_arena_alloc(ir_arena *a, size_t size)
{
    void *p = ir_arena_alloc_raw(a, size);
    memset(p, 0, size);
    return p;
}

void *ir_arena_dup(ir_arena *a, const void *p, size_t size)
{
    void *q = ir_arena_alloc(a, size + 1);
    if (size)
        memcpy(q, p, size);
    return q;
}

/* Every allocation is its own block here: nothing grows in place. */
bool ir_arena_extend(ir_arena *a, void *p, size_t old, size_t size)
{
    (void)a, (void)p, (void)old, (void)size;
    return false;
}
