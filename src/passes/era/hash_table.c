/* hash_table.c - libstdc++'s std::unordered_map as gcc 4.8 and gcc 7+
 * build it, enough of it to tell the list (iteration) order after an
 * insertion history (research-2x-3x.md 4o, 4r; the histories are
 * hash_order.c's). */
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

/* The head of libstdc++'s __prime_list (src/shared/hashtable-aux.cc, the
 * same list in every gcc; no 197: g++ 12's rehash(194) gives 199).  It
 * covers any bucket count an HT_MAX map asks for (at most 2 * 127). */
static const unsigned primes[] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,  31,
                                  37,  41,  43,  47,  53,  59,  61,  67,  71,  73,  79,
                                  83,  89,  97,  103, 109, 113, 127, 137, 139, 149, 157,
                                  167, 179, 193, 199, 211, 227, 241, 257};
#define N_PRIMES (sizeof primes / sizeof *primes)

/* The first prime >= n from primes[from] on (std::lower_bound). */
static size_t prime_from(size_t from, size_t n)
{
    for (size_t i = from; i < N_PRIMES; i++)
        if (primes[i] >= n)
            return primes[i];
    return primes[N_PRIMES - 1];
}

/* _Prime_rehash_policy::_M_next_bkt (max load factor 1, so _M_next_resize
 * is the bucket count).  gcc 4.8 (hashtable_c++0x.cc): a 12-entry fast
 * table, then the list from 13.  gcc 7+: a 14-entry one (n 12, 13 give
 * 13), n 0 gives 1 bucket and keeps _M_next_resize, then the list from 17. */
static size_t next_bkt(ht *t, size_t n)
{
    static const unsigned char fast[14] = {2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13};
    /* gcc 5/6's 13-entry table (no second 2): what HT_GCC8_LIB5's 3-bucket
     * start needs; the list from 17 as gcc 7+'s. */
    static const unsigned char fast5[13] = {2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13};
    size_t p;
    if (t->policy == HT_GCC8_LIB5)
        p = n <= 12 ? fast5[n] : prime_from(6, n);
    else if (t->policy != HT_GCC7)
        p = n <= 11 ? fast[n] : prime_from(5, n);
    else if (n == 0)
        return 1;
    else
        p = n < 14 ? fast[n] : prime_from(6, n);
    t->next_resize = p;
    return p;
}

/* _M_need_rehash(nb, n_elt, 1): the new bucket count, or 0 (no rehash).
 * gcc 4.8 (and HT_GCC8_LIB5's gcc 5/6 .so): "n_elt + n_ins >=
 * _M_next_resize"; gcc 7+: ">", and a map not yet allocated
 * (_M_next_resize 0) asks for at least 11. */
static size_t need_rehash(ht *t, size_t n_elt)
{
    size_t want = n_elt + 1;
    if (t->policy != HT_GCC7 ? want < t->next_resize : want <= t->next_resize)
        return 0;
    size_t min = want;
    if (t->policy == HT_GCC7 && t->next_resize == 0 && min < 11)
        min = 11;
    if (min >= t->nb)
        return next_bkt(t, t->nb * 2 > min + 1 ? t->nb * 2 : min + 1);
    t->next_resize = t->nb;
    return 0;
}

/* A default-constructed map.  gcc 4.8's ctor asks _M_next_bkt for 10
 * buckets and gets 11; gcc 7's allocates none (_M_single_bucket), nor does
 * HT_GCC8_LIB5's (its headers are gcc 7+'s).  Any other policy is gcc
 * 4.8's, the one every table had before. */
void ht_init(ht *t)
{
    t->n = 0;
    if (t->policy == HT_GCC48) {
        t->nb = next_bkt(t, 10);
    } else {
        t->nb = 1;
        t->next_resize = 0;
    }
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

/* operator[] of a key (interned) not in the map: _M_need_rehash, then the
 * insert. */
bool ht_insert(ht *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->keys[i] == key)
            return true;
    if (t->n + 1 >= HT_MAX)
        return false;
    size_t nb = need_rehash(t, t->n);
    if (nb) {
        ht old = *t;
        t->nb = nb;
        t->n = 0;
        for (size_t i = 0; i < old.n; i++)
            place(t, old.keys[i], old.hash[i]);
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
    for (size_t i = 0; i < n; i++) {
        size_t nb = need_rehash(t, i);
        if (nb)
            t->nb = nb;
    }
    for (size_t i = 0; i < n; i++) {
        t->keys[i] = attrs[i].name;
        t->hash[i] = pdt_hash_bytes(attrs[i].name, strlen(attrs[i].name));
    }
    t->n = n;
    return true;
}

/* Paddle 2.0-2.2 as 1.5-1.8: the 2.0.0 and 2.2.2 release files list every
 * op's same-bucket attrs together for gcc 4.8's bucket counts, and many
 * not for gcc 7+'s (research 4r).  2.3: the 2.3.0 picodet export's ops are
 * exactly HT_GCC8_LIB5's orders of their Operator.__init__ histories (after
 * the prune's re-read), and no other policy's (research 4z8).  HT_GCC7 is
 * built and tested for a version whose files show it. */
ht_policy ht_policy_of(int version)
{
    return version == 203 ? HT_GCC8_LIB5 : HT_GCC48;
}

bool py_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

int ht_rank(const ir_attr *attr, void *ctx)
{
    const ht *t = ctx;
    for (size_t i = 0; i < t->n; i++)
        if (t->keys[i] == attr->name)
            return (int)i;
    return (int)t->n;
}
