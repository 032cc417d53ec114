/* placement_lookup.c - the placement's name lookups (issue 28 point 5):
 * which pair a param or grad name belongs to, and which optimize ops
 * update a param.  The maps are opaque outside this file, so code holding
 * a `const tp_placement *` reads them through the accessors below, which
 * return const data, and cannot write them: only find_optimize fills them,
 * through tp_plan.draft_lookup (builders.h), which split_vars clears with
 * the other draft handles. */
#include <glib.h>
#include <stdlib.h>

#include "builders.h"

struct tp_lookup {
    pmap opt_by_param;      /* op_role_var[0] -> GArray of size_t positions */
    pmap pair_of_param;     /* name -> pair index + 1 */
    pmap pair_of_grad;
};

tp_lookup *tp_lookup_new(void)
{
    tp_lookup *lk = xcalloc(1, sizeof *lk);
    lk->opt_by_param = (pmap)PMAP_INIT;
    lk->pair_of_param = (pmap)PMAP_INIT;
    lk->pair_of_grad = (pmap)PMAP_INIT;
    return lk;
}

void tp_lookup_free(tp_lookup *lk)
{
    if (!lk)
        return;
    PMAP_FOR(&lk->opt_by_param, s)
        g_array_free(s->val, TRUE);
    pmap_free(&lk->opt_by_param);
    pmap_free(&lk->pair_of_param);
    pmap_free(&lk->pair_of_grad);
    free(lk);
}

void tp_lookup_add_opt(tp_lookup *lk, const char *param, size_t pos)
{
    GArray *list = pmap_get(&lk->opt_by_param, param);
    if (!list) {
        list = g_array_new(FALSE, FALSE, sizeof(size_t));
        pmap_put(&lk->opt_by_param, param, list);
    }
    g_array_append_val(list, pos);
}

void tp_lookup_set_pair(tp_lookup *lk, const char *param, const char *grad, size_t i)
{
    pmap_put(&lk->pair_of_param, param, GSIZE_TO_POINTER(i + 1));
    pmap_put(&lk->pair_of_grad, grad, GSIZE_TO_POINTER(i + 1));
}

const tp_pair *tp_pair_of_param(const tp_placement *pl, const char *name)
{
    void *k = pmap_get(&pl->lookup->pair_of_param, name);
    return k ? &pl->pairs[GPOINTER_TO_SIZE(k) - 1] : NULL;
}

const tp_pair *tp_pair_of_grad(const tp_placement *pl, const char *name)
{
    void *k = pmap_get(&pl->lookup->pair_of_grad, name);
    return k ? &pl->pairs[GPOINTER_TO_SIZE(k) - 1] : NULL;
}

const size_t *tp_opt_ops_of(const tp_placement *pl, const char *param, size_t *n)
{
    const GArray *list = pmap_get(&pl->lookup->opt_by_param, param);
    *n = list ? list->len : 0;
    return list ? (const size_t *)(const void *)list->data : NULL;
}
