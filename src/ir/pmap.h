/* pmap.h - a hash map keyed by pointer (interned names, ops), for the hot
 * paths of the IR and the passes.
 *
 * Why not GHashTable: GLib keeps hashes, keys and values in three arrays
 * and calls the hash function through a pointer, so a lookup in a large
 * table costs up to three cache misses and an indirect call.  Here a key
 * and its value share one slot of an open-addressing table (linear
 * probing, at most three quarters full), and the hash is inlined.
 *
 * Keys are non-NULL pointers (a NULL key is never stored or found).  Values are any pointer; pmap_get returns
 * NULL for an absent key, so maps whose values may be NULL use pmap_has.
 * Slot order is not insertion order: never let it reach the output. */
#ifndef PDT_PMAP_H
#define PDT_PMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const void *key;
    void *val;
} pmap_slot;

typedef struct {
    pmap_slot *slots;
    size_t cap;     /* 0, or at least 16 (any number: pmap_home_) */
    size_t n;
} pmap;

#define PMAP_INIT {NULL, 0, 0}

/* Visits every entry (slot order): PMAP_FOR(m, s) { use s->key, s->val }.
 * The map must not change during the walk. */
#define PMAP_FOR(m, s)                                                   \
    for (pmap_slot *s = (m)->slots; s && s < (m)->slots + (m)->cap; s++) \
        if (s->key)

void pmap_free(pmap *m);            /* frees the slots; m stays usable */
pmap *pmap_new(void);                /* heap-allocated, empty */
void pmap_destroy(pmap *m);          /* pmap_free + free(m); NULL is fine */
/* Inserts or replaces. */
void pmap_put(pmap *m, const void *key, void *val);
/* Set use: adds key (value = key); true if it was not there. */
bool pmap_add(pmap *m, const void *key);
bool pmap_remove(pmap *m, const void *key);
/* Makes room for n more entries without growing step by step. */
void pmap_reserve(pmap *m, size_t n);
void pmap_clear(pmap *m);

/* Where key's probe starts.  Capacities are not powers of two, so that a
 * table reserved for what it will hold (pmap_reserve) is three quarters
 * full when it does: powers of two left backward's var map at 1M ops 40%
 * full (128 MiB, 50 of them empty).
 *
 * The home keeps locality: keys in one 128-byte stretch of memory (names
 * stored one after another by intern.c, vars and ops side by side in the
 * arena) start in one window of 16 slots, at their 8-byte offset in the
 * stretch, and only the stretch is placed at random (the mixed high bits
 * scaled to the capacity).  Passes look up the names of one op, or of ops
 * next to each other, together, and names are stored in the order the
 * program declares them: a fully random home cost a cache miss for each,
 * about 1 s of backward's 8 s of user time at 1M ops (none at 10k, where the
 * tables fit in the cache).  Keys at least 8 bytes apart (every pointer
 * but names under 7 bytes) never share a home, so no window starts more
 * full than a random home would.  Needs cap >= 16 (pmap's least). */
static inline size_t pmap_home_(const void *key, size_t cap)
{
    uint64_t p = (uint64_t)(uintptr_t)key;
    uint64_t x = p >> 7;
    x ^= x >> 29;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 32;
    size_t home = (size_t)(((x >> 32) * (uint64_t)cap) >> 32) + (size_t)((p >> 3) & 15);
    return home >= cap ? home - cap : home;
}

static inline size_t pmap_next_(size_t i, size_t cap)
{
    return i + 1 == cap ? 0 : i + 1;
}

static inline pmap_slot *pmap_find_(const pmap *m, const void *key)
{
    if (!m->n || !key)
        return NULL;
    for (size_t i = pmap_home_(key, m->cap);; i = pmap_next_(i, m->cap)) {
        pmap_slot *s = &m->slots[i];
        if (s->key == key)
            return s;
        if (!s->key)
            return NULL;
    }
}

/* A hint for a loop that knows its next keys: starts loading the slot
 * where key's probe will start (a big table's probe is a cache miss).
 * always_inline: GCC 12 found a plain inline one free of side effects and
 * deleted its calls before inlining them (no prefetch was left). */
static inline __attribute__((always_inline)) void pmap_prefetch(const pmap *m, const void *key)
{
    if (m->n && key)
        __builtin_prefetch(&m->slots[pmap_home_(key, m->cap)]);
}

static inline void *pmap_get(const pmap *m, const void *key)
{
    pmap_slot *s = pmap_find_(m, key);
    return s ? s->val : NULL;
}

static inline bool pmap_has(const pmap *m, const void *key)
{
    return pmap_find_(m, key) != NULL;
}

#endif
