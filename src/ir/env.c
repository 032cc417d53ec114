/* env.c - the current pdt_env and its slots (env.h). */
#include "env.h"

#include <stdlib.h>

#include "pmap.h"
#include "util.h"

typedef struct pdt_env {
    void *slot[PDT_ENV_N_SLOTS];
    void (*free_fn[PDT_ENV_N_SLOTS])(void *);
} pdt_env;

/* The one mutable file-scope variable of the program (tests/globals.sh
 * allows it): pdtrans runs one command per process and its passes run one
 * after another, so one current env is enough, and passing it down every
 * call would touch every function signature of the tree. */
static pdt_env *current;

void *pdt_env_get(pdt_env_slot k)
{
    return current ? current->slot[k] : NULL;
}

void *pdt_env_put(pdt_env_slot k, void *p, void (*free_fn)(void *))
{
    if (!current)
        current = xcalloc(1, sizeof *current);
    current->slot[k] = p;
    current->free_fn[k] = free_fn ? free_fn : free;
    return p;
}

void pdt_env_free_pmap(void *map)
{
    pmap_free(map);
    free(map);
}

void pdt_env_end(void)
{
    pdt_env *e = current;
    if (!e)
        return;
    current = NULL;
    for (int k = PDT_ENV_N_SLOTS - 1; k >= 0; k--)
        if (e->slot[k])
            e->free_fn[k](e->slot[k]);
    free(e);
}
