/* backward_rename.c - _rename_grad_: a grad op writing a grad var that
 * already exists (from an earlier backward pass, or a given target grad)
 * writes NAME_<n> instead (unique_name.generate), and later readers follow
 * (../shared/seeds/backward.py.txt). */
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"

static void merge_into(pmap *dst, pmap *src)
{
    PMAP_FOR(src, e)
        pmap_put(dst, e->key, e->val);
}

/* Does any output of op name an existing grad var (a rename to do)? */
static bool renames_output(const ir_op *op, const ir_block *b)
{
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
            if (grad_is_grad_name(ir_op_outs(op)[s].args[k]) &&
                ir_block_find_var(b, ir_op_outs(op)[s].args[k]))
                return true;
    return false;
}

void bw_rename_grad(bw_run *r, ir_block *b, size_t start, pmap *target_grad_map,
                    pmap *skip)
{
    pmap *var_map = pmap_new();
    if (target_grad_map)
        merge_into(var_map, target_grad_map);
    /* Renames happen only for grads that already have a var, i.e. from an
     * earlier backward pass; a block without any "@GRAD" var (the usual
     * case) has nothing to rename. */
    bool any_grad_var = false;
    for (size_t i = 0; i < b->n_vars && !any_grad_var; i++)
        any_grad_var = !b->vars[i]->removed && grad_is_grad_name(b->vars[i]->name);
    if (!any_grad_var && !var_map->n)
        start = b->n_ops;
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = start; i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        if (!var_map->n && !renames_output(op, b))
            continue;
        bw_arg_names(op, false, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *to = pmap_get(var_map, buf->pdata[k]);
            if (to)
                ir_op_rename_input(op, buf->pdata[k], to);
        }
        bw_arg_names(op, true, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *n = buf->pdata[k];
            if (!grad_is_grad_name(n) || !ir_block_find_var(b, n))
                continue;
            if (skip && pmap_has(skip, n))
                continue;
            /* unique_name.generate(name): name + "_" + per-key counter. */
            size_t cnt = GPOINTER_TO_SIZE(pmap_get(r->unique, n));
            pmap_put(r->unique, n, GSIZE_TO_POINTER(cnt + 1));
            const char *fresh = ir_internf("%s_%zu", n, cnt);
            ir_op_rename_output(op, n, fresh);
            pmap_put(var_map, n, (void *)fresh);
        }
    }
    g_ptr_array_free(buf, TRUE);
    PMAP_FOR(var_map, e) {
        void *fwd = pmap_get(r->grad_to_var, e->key);
        if (fwd) {
            pmap_put(r->grad_to_var, e->val, fwd);
            pmap_remove(r->grad_to_var, e->key);
        }
    }
    pmap_destroy(var_map);
}
