/* backward_run.c - the state of one backward run (bw_run): its per-block
 * tables, _get_stop_gradients_, and its lifetime. */
#include <glib.h>
#include <string.h>

#include "../../grad/grad.h"
#include "../../ir/unique.h"
#include "../../ir/util.h"
#include "backward_internal.h"

void bw_sync_blocks(bw_run *r)
{
    size_t n = r->prog->n_blocks;
    if (n > r->n_no_grad) {
        r->no_grad = xrealloc(r->no_grad, n * sizeof *r->no_grad);
        for (size_t i = r->n_no_grad; i < n; i++)
            r->no_grad[i] = pmap_new();
        r->n_no_grad = n;
    }
    if (n > r->n_op_path) {
        r->op_path = xrealloc(r->op_path, n * sizeof *r->op_path);
        for (size_t i = r->n_op_path; i < n; i++)
            r->op_path[i] = NULL;
        r->n_op_path = n;
    }
}

/* ir_unique_fn into r->unique (keys interned): only the keys backward
 * generates from (grad names for _rename_grad_, "seed" and "seed_N.tmp"
 * for dropout's seed op), so that a large input interns no more. */
static void seed_unique(void *ud, const char *key, size_t klen, size_t next)
{
    pmap *m = ud;
    if (!(klen >= 4 && !strncmp(key, "seed", 4)) && !g_strstr_len(key, (gssize)klen, "@GRAD"))
        return;
    const char *k = ir_intern_n(key, klen);
    if (GPOINTER_TO_SIZE(pmap_get(m, k)) < next)
        pmap_put(m, k, GSIZE_TO_POINTER(next));
}

void bw_init(bw_run *r, ir_program *p, const char *path)
{
    memset(r, 0, sizeof *r);
    r->prog = p;
    r->path = path ? path : "main program";
    /* The backward part is about as big as the forward (one grad op per
     * op, 2.3x held on the bench MLP): its arena may take whole 2 MB pages
     * up to twice what it holds (ir_arena_expect: fewer page faults). */
    ir_arena_expect(p->arena, 2 * ir_arena_held(p->arena));
    r->grad_to_var = pmap_new();
    r->grad_info = pmap_new();
    r->unique = pmap_new();
    /* unique_name.generate continues past the names the input holds
     * (x@GRAD_0 of an earlier backward makes the next rename x@GRAD_1) */
    ir_unique_vars(p, seed_unique, r->unique);
    bw_sync_blocks(r);
}

/* 16 384 ops: about 4 MB of an MLP's forward ops; one madvise each. */
enum { BW_SWEEP_DROP = 16384 };

void bw_swept(bw_run *r)
{
    if (r->drop_input && ++r->n_swept % BW_SWEEP_DROP == 0)
        r->drop_input(r->prog);
}

void bw_free(bw_run *r)
{
    for (size_t i = 0; i < r->n_no_grad; i++)
        pmap_destroy(r->no_grad[i]);
    for (size_t i = 0; i < r->n_op_path; i++)
        if (r->op_path[i])
            g_ptr_array_free(r->op_path[i], TRUE);
    free(r->no_grad);
    free(r->op_path);
    pmap_destroy(r->grad_to_var);
    pmap_destroy(r->grad_info);
    pmap_destroy(r->unique);
    memset(r, 0, sizeof *r);
}

void bw_stop_gradients(bw_run *r)
{
    for (size_t i = 0; i < r->prog->n_blocks; i++) {
        const ir_block *b = r->prog->blocks[i];
        for (size_t k = 0; k < b->n_vars; k++)
            if (!b->vars[k]->removed && b->vars[k]->stop_gradient)
                pmap_add(r->no_grad[i], grad_name(b->vars[k]->name));
    }
}
