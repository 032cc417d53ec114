/* pmap.c - see pmap.h. */
/* madvise(MADV_HUGEPAGE) is a Linux extension. */
#define _DEFAULT_SOURCE
#include "pmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

void pmap_free(pmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

pmap *pmap_new(void)
{
    return xcalloc(1, sizeof(pmap));
}

void pmap_destroy(pmap *m)
{
    if (!m)
        return;
    pmap_free(m);
    free(m);
}

void pmap_clear(pmap *m)
{
    if (m->slots)
        memset(m->slots, 0, m->cap * sizeof *m->slots);
    m->n = 0;
}

static void place(pmap_slot *slots, size_t mask, const void *key, void *val)
{
    size_t i = pmap_hash_(key, mask);
    while (slots[i].key)
        i = (i + 1) & mask;
    slots[i].key = key;
    slots[i].val = val;
}

enum { HUGE_PAGE = 2 << 20 };

/* Big tables are probed at random: on 2 MB pages (where the kernel offers
 * them on request) they cost far fewer TLB misses and page faults. */
static pmap_slot *alloc_slots(size_t cap)
{
    size_t bytes = cap * sizeof(pmap_slot);
    if (bytes < HUGE_PAGE)
        return xcalloc(cap, sizeof(pmap_slot));
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
        return xcalloc(cap, sizeof(pmap_slot));
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes);
    return p;
}

static void rehash(pmap *m, size_t cap)
{
    pmap_slot *slots = alloc_slots(cap);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            place(slots, cap - 1, m->slots[i].key, m->slots[i].val);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

static void grow(pmap *m)
{
    rehash(m, m->cap ? m->cap * 2 : 16);
}

void pmap_reserve(pmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 16;
    while ((m->n + n) * 4 > cap * 3)
        cap *= 2;
    if (cap != m->cap)
        rehash(m, cap);
}

/* The slot holding key, or the empty slot where it would go (after making
 * room for one more). */
static pmap_slot *slot_for(pmap *m, const void *key)
{
    if ((m->n + 1) * 4 > m->cap * 3)
        grow(m);
    size_t mask = m->cap - 1;
    size_t i = pmap_hash_(key, mask);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & mask;
    return &m->slots[i];
}

void pmap_put(pmap *m, const void *key, void *val)
{
    if (!key)   /* NULL marks empty slots; a NULL key is never stored */
        return;
    pmap_slot *s = slot_for(m, key);
    if (!s->key) {
        s->key = key;
        m->n++;
    }
    s->val = val;
}

bool pmap_add(pmap *m, const void *key)
{
    if (!key)
        return false;
    pmap_slot *s = slot_for(m, key);
    if (s->key)
        return false;
    s->key = key;
    s->val = (void *)key;
    m->n++;
    return true;
}

/* Backward-shift deletion keeps every probe chain unbroken without
 * tombstones. */
bool pmap_remove(pmap *m, const void *key)
{
    pmap_slot *s = pmap_find_(m, key);
    if (!s)
        return false;
    size_t mask = m->cap - 1;
    size_t hole = (size_t)(s - m->slots);
    for (size_t i = (hole + 1) & mask; m->slots[i].key; i = (i + 1) & mask) {
        size_t home = pmap_hash_(m->slots[i].key, mask);
        /* Move the entry back if its home is not in (hole, i]. */
        bool between = hole < i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (!between) {
            m->slots[hole] = m->slots[i];
            hole = i;
        }
    }
    m->slots[hole].key = NULL;
    m->slots[hole].val = NULL;
    m->n--;
    return true;
}
