/* unique.c - the counters of Paddle's unique_name generator and of
 * framework.name_scope that the input's names show (unique.h). */
#include <ctype.h>
#include <string.h>

#include "unique.h"

void ir_unique_name(const char *name, ir_unique_fn fn, void *ud)
{
    for (size_t i = 0; name[i]; i++) {
        if (name[i] != '_' || !isdigit((unsigned char)name[i + 1]))
            continue;
        size_t j = i + 1, n = 0;
        /* a counter too long to be one is no counter (and cannot overflow) */
        while (isdigit((unsigned char)name[j]) && n < ((size_t)-1) / 16)
            n = n * 10 + (size_t)(name[j++] - '0');
        if (name[j] == '\0' || name[j] == '.')
            fn(ud, name, i, n + 1);
    }
}

void ir_unique_vars(const ir_program *p, ir_unique_fn fn, void *ud)
{
    for (size_t b = 0; p && b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t v = 0; v < blk->n_vars; v++)
            if (!blk->vars[v]->removed)
                ir_unique_name(blk->vars[v]->name, fn, ud);
    }
}

/* The root child of one op_namescope: "/S/..." or "/S_N/...". */
static void scope_child(const char *ns, ir_unique_fn fn, void *ud)
{
    if (ns[0] != '/' || ns[1] == '/' || ns[1] == '\0')
        return;
    const char *s = ns + 1, *end = strchr(s, '/');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    size_t k = len;
    while (k > 0 && isdigit((unsigned char)s[k - 1]))
        k--;
    if (k > 1 && k < len && s[k - 1] == '_' && len - k < 16) {
        size_t n = 0;
        for (size_t i = k; i < len; i++)
            n = n * 10 + (size_t)(s[i] - '0');
        fn(ud, s, k - 1, n + 1);
    } else {
        fn(ud, s, len, 1);
    }
}

void ir_unique_scopes(const ir_program *p, ir_unique_fn fn, void *ud)
{
    for (size_t b = 0; p && b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t k = 0; k < blk->n_ops; k++) {
            const char *ns = ir_op_get_string(blk->ops[k], "op_namescope");
            if (ns)
                scope_child(ns, fn, ud);
        }
    }
}

typedef struct {
    const char *key;
    size_t len, next;
} one_key;

static void one_key_fn(void *ud, const char *key, size_t klen, size_t next)
{
    one_key *k = ud;
    if (klen == k->len && !memcmp(key, k->key, klen) && next > k->next)
        k->next = next;
}

size_t ir_unique_next(const ir_program *p, const char *key)
{
    one_key k = {key, strlen(key), 0};
    ir_unique_vars(p, one_key_fn, &k);
    return k.next;
}
