/* py2_dict.c - the iteration order of a CPython 2.7 dict of string keys,
 * for the ops backward.py builds from a dict (_create_op_desc_ sets the
 * attrs in `six.iteritems(attrs)` order, so the C++ map's insertion
 * history is the dict's order: insertion order under Python 3.6+, slot
 * order under Python 2).  The real 1.5 programs (rec_example, rec_join:
 * the loss grad's fill_constant) and FleetX's 1.8 ResNet-50 (its backward
 * sums), all with python2.7 tracebacks, are written in that order.
 *
 * CPython 2.7 (Objects/stringobject.c string_hash, Objects/dictobject.c
 * lookdict_string, insertdict, dictresize, PyDict_SetItem): the hash of a
 * str is x = s[0] << 7, then x = 1000003 * x ^ c per byte, then x ^= len
 * (-1 becomes -2; the hash secret is 0 unless -R: randomization is off by
 * default in 2.7); a dict starts with 8 slots; a key goes to slot
 * hash & mask, else the probe i = 5 * i + perturb + 1 (perturb = hash,
 * shifted right by 5 after each probe); after an insert that leaves
 * fill * 3 >= slots * 2 the table is rebuilt with the smallest power of 2
 * (from 8) above 4 * used, re-inserting in old slot order.  A dict
 * literal of up to 7 keys starts at 8 slots (_PyDict_NewPresized presizes
 * only above 5 keys, to the same 8).  py2 `unicode` keys (pybind11's
 * strings) hash the same for ASCII. */
#include "era.h"

#include <glib.h>
#include <stdint.h>
#include <string.h>

static uint64_t py2_hash(const char *s)
{
    size_t n = strlen(s);
    if (!n)
        return 0;
    uint64_t x = (uint64_t)(unsigned char)s[0] << 7;
    for (size_t i = 0; i < n; i++)
        x = (1000003u * x) ^ (unsigned char)s[i];
    x ^= n;
    return x == UINT64_MAX ? UINT64_MAX - 1 : x;
}

static void py2_put(const char **slots, size_t size, const char *key)
{
    uint64_t h = py2_hash(key), mask = size - 1, i = h & mask, perturb = h;
    while (slots[i & mask] && strcmp(slots[i & mask], key)) {
        i = (i << 2) + i + perturb + 1;
        perturb >>= 5;
    }
    slots[i & mask] = key;
}

size_t pdt_py2_dict_order(const char *const *keys, size_t n, const char **out)
{
    size_t size = 8, used = 0;
    const char **slots = g_new0(const char *, size);
    for (size_t k = 0; k < n; k++) {
        bool present = false;
        for (size_t i = 0; i < size && !present; i++)
            present = slots[i] && !strcmp(slots[i], keys[k]);
        if (present)
            continue;
        py2_put(slots, size, keys[k]);
        if (++used * 3 < size * 2)
            continue;
        size_t grown = 8;
        while (grown <= 4 * used)
            grown <<= 1;
        const char **next = g_new0(const char *, grown);
        for (size_t i = 0; i < size; i++)
            if (slots[i])
                py2_put(next, grown, slots[i]);
        g_free(slots);
        slots = next;
        size = grown;
    }
    size_t m = 0;
    for (size_t i = 0; i < size; i++)
        if (slots[i])
            out[m++] = slots[i];
    g_free(slots);
    return m;
}
