/* intern.c - the env's table of names (env_internal.h), so names compare by pointer.
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

#include "env.h"
#include "env_internal.h"
#include "ir_internal.h"
#include "util.h"

struct ichunk {
    struct ichunk *next;
    size_t used, size;
    uint32_t start;         /* where data[0] lies in the names' offsets */
    char data[];
};

/* The table (its fields are in the env, env_internal.h): open addressing
 * over the stored copies, each slot a name's hash and its offset (below),
 * so a probe compares an integer before any bytes, and a name given with
 * its length (ir_intern_n, most calls: the decoder's names) is looked up
 * where it lies, without a NUL-terminated copy.  It replaced a GHashTable
 * (g_str_hash, strcmp): 9% of a backward run.  Eight bytes a slot, not a
 * pointer and a length in sixteen: the table was 80 of backward's 1300 MiB
 * at 1M ops.  Every function takes the env's table once (one pointer load
 * more than a file-scope table, the price of the env). */
#define IN (&pdt_env_current->intern)
enum { MAX_CHUNKS = INTERN_MAX_CHUNKS };

enum { FIRST_CHUNK = 1 << 20 };

/* The well-known names (names.def), laid out as a chunk is: offsets
 * [0, IR_WK_SIZE_) are theirs and the first chunk starts after them, so
 * the table finds them as it finds any stored name. */
const char ir_wk_names[IR_WK_SIZE_] = "\0"
#define X(id, s) s "\0"
#include "names.def"
#undef X
    ;

bool ir_is_interned(const char *s)
{
    uintptr_t p = (uintptr_t)s;
    if (p > (uintptr_t)ir_wk_names && p < (uintptr_t)ir_wk_names + IR_WK_SIZE_)
        return s[-1] == '\0';
    for (const ichunk *c = IN->chunks; c; c = c->next) {
        uintptr_t lo = (uintptr_t)c->data;
        if (p > lo && p < lo + c->used)
            return s[-1] == '\0';
    }
    return false;
}

/* The stored name at offset `at` (most are in the newest chunks). */
static const char *name_at(const pdt_intern *in, uint32_t at)
{
    if (at < IR_WK_SIZE_)
        return ir_wk_names + at;
    size_t k = in->n_chunks;
    while (k-- > 1 && at < in->by_age[k]->start)
        ;
    return in->by_age[k]->data + (at - in->by_age[k]->start);
}


/* Stores s[0..n) and returns its offset. */
static uint32_t store(const char *s, size_t n)
{
    pdt_intern *in = IN;
    ichunk *chunks = in->chunks;
    if (!chunks || chunks->size - chunks->used < n + 1) {
        size_t size = chunks ? chunks->size * 2 : FIRST_CHUNK;
        while (size < n + 2)
            size *= 2;
        uint64_t start = chunks ? (uint64_t)chunks->start + chunks->size : IR_WK_SIZE_;
        /* Offsets are 32-bit: over 4 GiB of names ends the run the way
         * running out of memory does (alloc.h: one message, exit 1). */
        if (start + size > UINT32_MAX || in->n_chunks == MAX_CHUNKS)
            pdt_out_of_memory();
        ichunk *c = xmalloc(sizeof *c + size);
        c->size = size;
        c->start = (uint32_t)start;
        c->data[0] = '\0';  /* the NUL before the first name */
        c->used = 1;
        c->next = chunks;
        in->chunks = chunks = c;
        in->by_age[in->n_chunks++] = c;
    }
    char *copy = chunks->data + chunks->used;
    memcpy(copy, s, n);
    copy[n] = '\0';
    uint32_t at = chunks->start + (uint32_t)chunks->used;
    chunks->used += n + 1;
    return at;
}

/* FNV-1a; home_of takes its high bits. */
static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* Where a hash starts probing: its high bits scaled to the capacity, which
 * need not be a power of two (below). */
static size_t home_of(uint32_t hash, size_t cap)
{
    return (size_t)(((uint64_t)hash * cap) >> 32);
}

static size_t next_slot(size_t i, size_t cap)
{
    return i + 1 == cap ? 0 : i + 1;
}

/* e into the first empty slot from its home (its name is not there). */
static void place(islot *slots, size_t cap, islot e)
{
    size_t i = home_of(e.hash, cap);
    while (slots[i].at)
        i = next_slot(i, cap);
    slots[i] = e;
}

/* A new table starts with the well-known names in it. */
static void place_well_known(pdt_intern *in)
{
    for (size_t at = 1; at < IR_WK_SIZE_;) {
        size_t n = strlen(ir_wk_names + at);
        place(in->table, in->table_cap, (islot){hash_name(ir_wk_names + at, n), (uint32_t)at});
        in->table_n++;
        at += n + 1;
    }
}

static void table_resize(size_t cap)
{
    pdt_intern *in = IN;
    islot *fresh = xcalloc(cap, sizeof *fresh);
    bool is_new = !in->table;
    for (size_t i = 0; i < in->table_cap; i++)
        if (in->table[i].at)
            place(fresh, cap, in->table[i]);
    free(in->table);
    in->table = fresh;
    in->table_cap = cap;
    if (is_new)
        place_well_known(in);
}

/* At most three quarters full.  Capacities are not powers of two: from
 * powers of two, a 3.3M-name table (backward at 1M ops) was 40% full,
 * 128 MiB of which 50 were empty.  Room reserved (a block's vars) is sized
 * exactly, and the table grows by half from there (doubling, it reached
 * 8.9M slots for backward's 3.4M names: the grad names outnumber the
 * vars reserved for). */
static size_t cap_for(size_t n)
{
    return (n * 4 + 2) / 3 + 1;
}

enum { FIRST_TABLE = 4096 };

void ir_intern_reserve(size_t n)
{
    size_t cap = cap_for(IN->table_n + n);
    if (cap < FIRST_TABLE)
        cap = FIRST_TABLE;
    if (cap > IN->table_cap)
        table_resize(cap);
}

/* ir_intern_drop_table: the names stay, the table goes until the next
 * lookup, which puts every stored name back (they are unique). */
void ir_intern_drop_table(void)
{
    pdt_intern *in = IN;
    free(in->table);
    in->table = NULL;
    in->table_cap = 0;
    in->dropped_n += in->table_n;
    in->table_n = 0;
}

static void rebuild_table(void)
{
    pdt_intern *in = IN;
    ir_intern_reserve(in->dropped_n);
    in->table_n = in->dropped_n;
    in->dropped_n = 0;
    for (size_t c = 0; c < in->n_chunks; c++) {
        const ichunk *ch = in->by_age[c];
        for (size_t at = 1; at < ch->used;) {
            const char *name = ch->data + at;
            size_t n = strlen(name);
            place(in->table, in->table_cap, (islot){hash_name(name, n), ch->start + (uint32_t)at});
            at += n + 1;
        }
    }
}

/* The stored copy of s[0..n) (which holds no NUL), stored now if new. */
static const char *lookup(const char *s, size_t n)
{
    pdt_intern *in = IN;
    if (in->dropped_n)
        rebuild_table();
    if (n > UINT32_MAX)
        pdt_out_of_memory();    /* as store() does past 4 GiB of names */
    if ((in->table_n + 1) * 4 > in->table_cap * 3)
        table_resize(in->table_cap < FIRST_TABLE ? FIRST_TABLE : in->table_cap + in->table_cap / 2);
    uint32_t h = hash_name(s, n);
    islot *table = in->table;
    size_t cap = in->table_cap;
    for (size_t i = home_of(h, cap);; i = next_slot(i, cap)) {
        islot *e = &table[i];
        if (!e->at) {
            e->at = store(s, n);
            e->hash = h;
            in->table_n++;
            return name_at(in, e->at);
        }
        if (e->hash != h)
            continue;
        /* stored names hold no NUL: equal n bytes and a NUL after them */
        const char *name = name_at(in, e->at);
        if (strncmp(name, s, n) == 0 && name[n] == '\0')
            return name;
    }
}

void ir_intern_prefetch(const char *s, size_t n)
{
    const pdt_intern *in = IN;
    if (in->table_cap && n <= UINT32_MAX)
        __builtin_prefetch(&in->table[home_of(hash_name(s, n), in->table_cap)]);
}

/* A name ends at its first NUL. */
static size_t name_len(const char *s, size_t n)
{
    const char *nul = memchr(s, '\0', n);
    return nul ? (size_t)(nul - s) : n;
}

const char *ir_intern_n(const char *s, size_t n)
{
    if (!s)
        return NULL;
    n = name_len(s, n);
    /* s[n] is safe to read here: an interned s without a NUL in its first
     * n bytes is at least n long. */
    if (ir_is_interned(s) && s[n] == '\0')
        return s;
    return lookup(s, n);
}

/* An interned s is found by lookup too (its stored copy is itself). */
const char *ir_intern_bytes(const char *s, size_t n)
{
    return s ? lookup(s, name_len(s, n)) : NULL;
}

const char *ir_intern(const char *s)
{
    if (!s)
        return NULL;
    if (ir_is_interned(s))
        return s;
    return lookup(s, strlen(s));
}

const char *ir_internf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof buf)
        return ir_intern_bytes(buf, (size_t)n);
    va_start(ap, fmt);
    char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    const char *r = ir_intern(s);
    g_free(s);
    return r;
}



void ir_intern_shutdown(void)
{
    pdt_env_end();      /* its caches hold the names freed here */
    pdt_intern *in = IN;
    free(in->table);
    in->table = NULL;
    in->table_cap = in->table_n = 0;
    while (in->chunks) {
        ichunk *next = in->chunks->next;
        free(in->chunks);
        in->chunks = next;
    }
    in->n_chunks = 0;
    in->dropped_n = 0;
}
