/* intern.c - one process-wide table of names, so names compare by pointer.
 *
 * Every IR setter interns what it is given, and most callers already hold
 * an interned pointer.  Recognising those without hashing the string is
 * what keeps the IR API cheap, so the canonical copies live in a few large
 * chunks owned by this file, packed as "\0name\0name\0...": a pointer is
 * interned iff it lies inside a chunk's used part right after a NUL.  (The
 * stored copies hold no NUL of their own, so no pointer into the middle of
 * a name passes.)  Chunks double in size, so there are only a handful. */
#include "ir.h"

#include <glib.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "util.h"

typedef struct ichunk {
    struct ichunk *next;
    size_t used, size;
    char data[];
} ichunk;

static GHashTable *table;
/* Bumped by ir_intern_shutdown, so IR_NAME caches notice. */
static unsigned generation = 1;
static ichunk *chunks;      /* newest first */

enum { FIRST_CHUNK = 1 << 20 };

bool ir_is_interned(const char *s)
{
    uintptr_t p = (uintptr_t)s;
    for (const ichunk *c = chunks; c; c = c->next) {
        uintptr_t lo = (uintptr_t)c->data;
        if (p > lo && p < lo + c->used)
            return s[-1] == '\0';
    }
    return false;
}

static const char *store(const char *s, size_t n)
{
    if (!chunks || chunks->size - chunks->used < n + 1) {
        size_t size = chunks ? chunks->size * 2 : FIRST_CHUNK;
        while (size < n + 2)
            size *= 2;
        ichunk *c = xmalloc(sizeof *c + size);
        c->size = size;
        c->data[0] = '\0';  /* the NUL before the first name */
        c->used = 1;
        c->next = chunks;
        chunks = c;
    }
    char *copy = chunks->data + chunks->used;
    memcpy(copy, s, n);
    copy[n] = '\0';
    chunks->used += n + 1;
    return copy;
}

const char *ir_intern_n(const char *s, size_t n)
{
    if (!s)
        return NULL;
    /* A name ends at its first NUL, as the hash table sees it. */
    const char *nul = memchr(s, '\0', n);
    if (nul)
        n = (size_t)(nul - s);
    /* s[n] is safe to read here: an interned s without a NUL in its first
     * n bytes is at least n long. */
    if (ir_is_interned(s) && s[n] == '\0')
        return s;
    if (!table)
        table = g_hash_table_new(g_str_hash, g_str_equal);
    char stackbuf[256];
    char *key = n < sizeof stackbuf ? stackbuf : xmalloc(n + 1);
    memcpy(key, s, n);
    key[n] = '\0';
    const char *found = g_hash_table_lookup(table, key);
    if (!found) {
        found = store(key, n);
        g_hash_table_insert(table, (void *)found, (void *)found);
    }
    if (key != stackbuf)
        free(key);
    return found;
}

const char *ir_intern(const char *s)
{
    if (!s)
        return NULL;
    if (ir_is_interned(s))
        return s;
    if (!table)
        table = g_hash_table_new(g_str_hash, g_str_equal);
    const char *found = g_hash_table_lookup(table, s);
    if (!found) {
        found = store(s, strlen(s));
        g_hash_table_insert(table, (void *)found, (void *)found);
    }
    return found;
}

const char *ir_internf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof buf)
        return ir_intern_n(buf, (size_t)n);
    va_start(ap, fmt);
    char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    const char *r = ir_intern(s);
    g_free(s);
    return r;
}

unsigned ir_intern_generation(void)
{
    return generation;
}

const char *ir_intern_cached(const char *lit, const char **cache, unsigned *gen)
{
    if (*gen != generation) {
        *cache = ir_intern(lit);
        *gen = generation;
    }
    return *cache;
}

void ir_intern_shutdown(void)
{
    ir_op_shapes_reset();
    generation++;
    if (table)
        g_hash_table_destroy(table);
    table = NULL;
    while (chunks) {
        ichunk *next = chunks->next;
        free(chunks);
        chunks = next;
    }
}
