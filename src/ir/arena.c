/* arena.c - bump allocator; everything in an arena dies together. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

#include "env_internal.h"
#include "ir_internal.h"
#include "util.h"

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, size;
    bool huge;      /* a whole 2 MB page from xmalloc_huge */
    _Alignas(16) unsigned char data[];
} chunk;

struct ir_arena {
    chunk *head;
    size_t held;    /* bytes of all chunks */
    size_t expect;  /* bytes it will surely hold (ir_arena_expect) */
};

/* Once an arena holds 32 MB (a program of some hundred thousand ops),
 * its chunks are whole 2 MB pages (util.h's xmalloc_huge): one page fault
 * per 2 MB instead of 512.  Smaller programs and scratch arenas keep 64 KB
 * chunks: a huge page is resident whole once touched, so an arena's newest
 * chunk costs up to 2 MB it does not use, at most a sixteenth past 32 MB.
 * At 8 MB (issue 14) that was 1.5 MB of the bench nets' 40 and 34 MiB
 * peaks (issue 33 point 4; src/io/HISTORY.md). */
enum { CHUNK_MIN = 64 * 1024, HUGE_AFTER = 16 * PDT_HUGE_PAGE };

/* Huge chunks of freed arenas, kept for the next arenas: a run that builds,
 * writes and frees one big program after another (transpile --role=all's
 * pservers) would otherwise have each one's pages unmapped and fresh ones
 * zeroed by the kernel for the next: at 1M ops 1.7 GB zeroed for a peak
 * of 0.8 GB.  The list is the env's (env_internal.h: kept when the env
 * ends, as the arenas outlive the names). */
#define spare (pdt_env_current->arena_spare)

static chunk *chunk_new(ir_arena *a, size_t size)
{
    size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
    chunk *c;
    if ((a->held >= HUGE_AFTER || a->held + PDT_HUGE_PAGE <= a->expect) &&
        sizeof(chunk) + want <= PDT_HUGE_PAGE) {
        if (spare)
            c = spare, spare = spare->next;
        else
            c = xmalloc_huge(PDT_HUGE_PAGE);
        c->huge = true;
        want = PDT_HUGE_PAGE - sizeof(chunk);
    } else {
        c = xmalloc(sizeof(chunk) + want);
        c->huge = false;
    }
    c->size = want;
    c->used = 0;
    c->next = a->head;
    a->head = c;
    a->held += want;
    return c;
}

/* Sizes are multiples of 8, the IR's largest alignment (pointers, int64,
 * double): most argument lists hold one name and most dims two or three,
 * and rounding them to 16 wasted a third of those arrays (5 MB of
 * backward's 150 at 100k ops). */
static size_t round_up(size_t size)
{
    size = (size + 7) & ~(size_t)7;
    return size ? size : 8;
}

ir_arena *ir_arena_new(void)
{
    return xcalloc(1, sizeof(ir_arena));
}

/* Below HUGE_AFTER, a chunk is a huge page only when the arena is known to
 * fill it: an arena told it will hold BYTES (a program decoded from a file
 * of so many bytes, a backward pass about to add as much again) takes
 * whole 2 MB pages while a whole page more still fits under BYTES, and
 * 64 KB chunks for the rest.  Faults are then as few as with issue 14's 8
 * MB threshold (one per 2 MB) without its cost in RSS (up to 2 MB of the
 * newest chunk resident and unused): a wrong guess costs at most that one
 * page.  Issue 28's bench, src/io/HISTORY.md. */
void ir_arena_expect(ir_arena *a, size_t bytes)
{
    if (bytes > a->expect)
        a->expect = bytes;
}

size_t ir_arena_held(const ir_arena *a)
{
    return a->held;
}

void ir_program_expect_next(size_t bytes)
{
    pdt_env_current->program_expect = bytes;
}

void ir_arena_free(ir_arena *a)
{
    if (!a)
        return;
    chunk *c = a->head;
    while (c) {
        chunk *next = c->next;
        if (c->huge)
            c->next = spare, spare = c;
        else
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
    size = round_up(size);
    chunk *c = a->head;
    if (!c || c->size - c->used < size)
        c = chunk_new(a, size);
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

bool ir_arena_extend(ir_arena *a, void *p, size_t old, size_t size)
{
    chunk *c = a->head;
    old = round_up(old);
    size = round_up(size);
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
