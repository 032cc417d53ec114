/* hash_table.c - libstdc++'s std::unordered_map as gcc 4.8 builds it,
 * enough of it to tell the list (iteration) order after an insertion
 * history (research-2x-3x.md 4o; the histories are hash_order.c's). */
#include "hash_table.h"

#include <string.h>

#include "era.h"

/* std::hash<std::string> of libstdc++ (libsupc++/hash_bytes.cc,
 * _Hash_bytes for an 8-byte size_t, seed 0xc70f6907). */
static uint64_t shift_mix(uint64_t v)
{
    return v ^ (v >> 47);
}

uint64_t pdt_hash_bytes(const void *ptr, size_t len)
{
    const uint64_t mul = ((uint64_t)0xc6a4a793u << 32) + 0x5bd1e995u;
    const unsigned char *buf = ptr;
    size_t aligned = len & ~(size_t)7;
    uint64_t hash = 0xc70f6907u ^ ((uint64_t)len * mul);
    for (size_t i = 0; i < aligned; i += 8) {
        uint64_t d = 0;
        for (int b = 7; b >= 0; b--)
            d = (d << 8) | buf[i + (size_t)b];
        hash ^= shift_mix(d * mul) * mul;
        hash *= mul;
    }
    if (len & 7) {
        uint64_t d = 0;
        for (size_t b = len & 7; b-- > 0;)
            d = (d << 8) | buf[aligned + b];
        hash ^= d;
        hash *= mul;
    }
    hash = shift_mix(hash) * mul;
    return shift_mix(hash);
}

/* The head of libstdc++'s __prime_list (enough for any op's attrs). */
static const unsigned primes[] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,  31,
                                  37,  41,  43,  47,  53,  59,  61,  67,  71,  73,  79,
                                  83,  89,  97,  103, 109, 113, 127, 137, 139, 149, 157,
                                  167, 179, 193, 197, 199, 211, 227, 241, 257};
#define N_PRIMES (sizeof primes / sizeof *primes)

/* _M_next_bkt of gcc 4.8 (max load factor 1). */
static size_t next_bkt(ht *t, size_t n)
{
    static const unsigned char fast[12] = {2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11};
    size_t p = primes[N_PRIMES - 1];
    if (n <= 11)
        p = fast[n];
    else
        for (size_t i = 5; i < N_PRIMES; i++)
            if (primes[i] >= n) {
                p = primes[i];
                break;
            }
    t->next_resize = p;
    return p;
}

/* A default-constructed map: gcc 4.8 asks for 10 buckets and gets 11. */
void ht_init(ht *t)
{
    t->n = 0;
    t->nb = next_bkt(t, 10);
}

/* A node goes before the first node of its bucket, or to the list's front
 * when the bucket is empty (_M_insert_bucket_begin; a rehash relinks the
 * nodes in list order by the same rule). */
static void place(ht *t, const char *key, uint64_t h)
{
    size_t at = 0, b = h % t->nb;
    for (size_t i = 0; i < t->n; i++)
        if (t->hash[i] % t->nb == b) {
            at = i;
            break;
        }
    memmove(t->keys + at + 1, t->keys + at, (t->n - at) * sizeof *t->keys);
    memmove(t->hash + at + 1, t->hash + at, (t->n - at) * sizeof *t->hash);
    t->keys[at] = key;
    t->hash[at] = h;
    t->n++;
}

/* operator[] of a key (interned) not in the map: _M_need_rehash of gcc 4.8
 * ("n_elt + n_ins >= _M_next_resize"), then the insert. */
bool ht_insert(ht *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->keys[i] == key)
            return true;
    if (t->n + 1 >= HT_MAX)
        return false;
    if (t->n + 1 >= t->next_resize) {
        size_t want = t->n + 1;
        if (want >= t->nb) {
            size_t grow = t->nb * 2 > want + 1 ? t->nb * 2 : want + 1;
            ht old = *t;
            t->nb = next_bkt(t, grow);
            t->n = 0;
            for (size_t i = 0; i < old.n; i++)
                place(t, old.keys[i], old.hash[i]);
        } else
            t->next_resize = t->nb;
    }
    place(t, key, pdt_hash_bytes(key, strlen(key)));
    return true;
}

/* A copy of a map that holds NAMES in this list order after n inserts
 * (no erase): the copy keeps the list and the bucket count. */
bool ht_copy_of(ht *t, const ir_attr *attrs, size_t n)
{
    if (n + 1 >= HT_MAX)
        return false;
    ht_init(t);
    for (size_t i = 0; i < n; i++)
        if (i + 1 >= t->next_resize) {
            if (i + 1 >= t->nb)
                t->nb = next_bkt(t, t->nb * 2 > i + 2 ? t->nb * 2 : i + 2);
            else
                t->next_resize = t->nb;
        }
    for (size_t i = 0; i < n; i++) {
        t->keys[i] = attrs[i].name;
        t->hash[i] = pdt_hash_bytes(attrs[i].name, strlen(attrs[i].name));
    }
    t->n = n;
    return true;
}

