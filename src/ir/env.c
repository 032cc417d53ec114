/* env.c - the current pdt_env, its slots and parts (env.h). */
#include "env.h"

#include <stdlib.h>

#include "env_internal.h"
#include "pmap.h"
#include "util.h"

/* The process's env.  `first` and the pointer to it are the only mutable
 * file-scope variables of the program (tests/globals.sh allows them):
 * pdtrans runs one command per process and its passes run one after
 * another, so one current env is enough, and passing it down every call
 * would touch every function signature of the tree.  It is static, not
 * made on first use, so it exists before the first allocation (the
 * allocator's count is in it) and `current` is never NULL: the intern
 * lookup loads one pointer and tests nothing. */
static pdt_env first = {
    .alloc = {.doing = "reading the command line"},
};
pdt_env *pdt_env_current = &first;

pdt_diag_settings *pdt_env_diag(void)
{
    return &pdt_env_current->diag;
}

void *pdt_env_get(pdt_env_slot k)
{
    return pdt_env_current->slot[k];
}

void *pdt_env_put(pdt_env_slot k, void *p, void (*free_fn)(void *))
{
    pdt_env_current->slot[k] = p;
    pdt_env_current->free_fn[k] = free_fn ? free_fn : free;
    return p;
}

void pdt_env_free_pmap(void *map)
{
    pmap_free(map);
    free(map);
}

void pdt_env_end(void)
{
    /* Every slot reads as empty while the caches are freed, as when the
     * env itself went away. */
    pdt_env *e = pdt_env_current;
    void *held[PDT_ENV_N_SLOTS];
    for (int k = 0; k < PDT_ENV_N_SLOTS; k++) {
        held[k] = e->slot[k];
        e->slot[k] = NULL;
    }
    for (int k = PDT_ENV_N_SLOTS - 1; k >= 0; k--)
        if (held[k])
            e->free_fn[k](held[k]);
}

void *pdt_env_part(pdt_env_part_kind k, size_t size, void (*init)(void *))
{
    void *p = pdt_env_current->part[k];
    if (p)
        return p;
    p = calloc(1, size);
    if (!p)
        pdt_out_of_memory();
    if (init)
        init(p);
    return pdt_env_current->part[k] = p;
}

void *pdt_env_part_if_made(pdt_env_part_kind k)
{
    return pdt_env_current->part[k];
}
