/* pmap.c - see pmap.h. */
#include "pmap.h"

#include <stdlib.h>
#include <string.h>

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

static void place(pmap_slot *slots, size_t cap, const void *key, void *val)
{
    size_t i = pmap_home_(key, cap);
    while (slots[i].key)
        i = pmap_next_(i, cap);
    slots[i].key = key;
    slots[i].val = val;
}

/* Big tables are probed at random: on 2 MB pages (where the kernel offers
 * them on request) they cost far fewer TLB misses and page faults. */
static pmap_slot *alloc_slots(size_t cap)
{
    size_t bytes = cap * sizeof(pmap_slot);
    if (bytes < PDT_HUGE_PAGE)
        return xcalloc(cap, sizeof(pmap_slot));
    return memset(xmalloc_huge(bytes), 0, bytes);
}

static void rehash(pmap *m, size_t cap)
{
    pmap_slot *slots = alloc_slots(cap);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            place(slots, cap, m->slots[i].key, m->slots[i].val);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

/* Doubling, as before capacities were free: growing by half kept tables
 * fuller (probes 50% longer in make bench's mapbench) for no memory that
 * mattered, since the big tables are reserved for what they will hold.
 * Past BIG_TABLE slots (1 MiB) by half, though: a block's var map is
 * reserved for the vars it was read with, and the first var a pass adds
 * (transpile's trainer, backward's grads) doubled it, a table half empty
 * at the run's peak (4.7 of 7 MiB of maps at transpile's 100k ops;
 * issue 33, src/io/HISTORY.md).  Every slot is written (calloc/memset),
 * so the capacity is resident whole. */
enum { BIG_TABLE = 1 << 16 };

static void grow(pmap *m)
{
    rehash(m, !m->cap ? 16 : m->cap < BIG_TABLE ? m->cap * 2 : m->cap + m->cap / 2);
}

/* Exactly the room for n more at three quarters full. */
void pmap_reserve(pmap *m, size_t n)
{
    size_t cap = ((m->n + n) * 4 + 2) / 3 + 1;
    if (cap < 16)
        cap = 16;
    if (cap > m->cap)
        rehash(m, cap);
}

/* The slot holding key, or the empty slot where it would go (after making
 * room for one more). */
static pmap_slot *slot_for(pmap *m, const void *key)
{
    if ((m->n + 1) * 4 > m->cap * 3)
        grow(m);
    size_t i = pmap_home_(key, m->cap);
    while (m->slots[i].key && m->slots[i].key != key)
        i = pmap_next_(i, m->cap);
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
    size_t hole = (size_t)(s - m->slots);
    for (size_t i = pmap_next_(hole, m->cap); m->slots[i].key; i = pmap_next_(i, m->cap)) {
        size_t home = pmap_home_(m->slots[i].key, m->cap);
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
