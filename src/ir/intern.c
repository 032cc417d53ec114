/* intern.c - one process-wide table of names, so names compare by pointer. */
#include "ir.h"

#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static GHashTable *table;
static ir_arena *storage;

const char *ir_intern_n(const char *s, size_t n)
{
    if (!s)
        return NULL;
    if (!table) {
        table = g_hash_table_new(g_str_hash, g_str_equal);
        storage = ir_arena_new();
    }
    char stackbuf[256];
    char *key = n < sizeof stackbuf ? stackbuf : g_malloc(n + 1);
    memcpy(key, s, n);
    key[n] = '\0';
    const char *found = g_hash_table_lookup(table, key);
    if (!found) {
        char *copy = ir_arena_dup(storage, key, n);
        g_hash_table_insert(table, copy, copy);
        found = copy;
    }
    if (key != stackbuf)
        g_free(key);
    return found;
}

const char *ir_intern(const char *s)
{
    return s ? ir_intern_n(s, strlen(s)) : NULL;
}

const char *ir_internf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    const char *r = ir_intern(s);
    g_free(s);
    return r;
}

void ir_intern_shutdown(void)
{
    if (table)
        g_hash_table_destroy(table);
    ir_arena_free(storage);
    table = NULL;
    storage = NULL;
}
