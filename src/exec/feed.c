/* feed.c - seeded inputs for a program: data vars (read in block 0 before
 * any op writes them) get random values shaped by their VarDesc, with -1
 * dims set to the batch size (a dim below -1, from Paddle's compile-time
 * InferShape, has no extent here: refused naming the var); persistable
 * vars that nothing initialised get random values too.  Feed ops count as not writing their targets (the
 * caller skips them).  Values respect what reads them: class labels
 * fall in [0, classes) (nce: num_total_classes), embedding ids in [0, table rows), and a var with
 * lod_level >= 1 gets `batch` sequences of 1 to 3 rows. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "feed.h"

/* Upper bound (exclusive) for an integer feed, from the op reading it; 0
 * when the reader says nothing. */
static int64_t int_range(const ir_block *b, const ir_op *op, const char *slot)
{
    const char *src = NULL;
    bool last_dim = true;
    if (!strcmp(op->type, "nce") && !strcmp(slot, "Label")) {
        int64_t classes = ir_op_get_int(op, "num_total_classes", 0);
        return classes > 0 ? classes : 0;
    }
    if (!strcmp(slot, "Label") && !ir_op_get_bool(op, "soft_label", false))
        src = ir_op_input1(op, !strcmp(op->type, "softmax_with_cross_entropy") ? "Logits" : "X");
    else if (!strcmp(slot, "Ids")) {
        src = ir_op_input1(op, "W");
        last_dim = false;
    }
    const ir_var *v = src ? ir_block_find_var_recursive(b, src) : NULL;
    if (!v || !v->n_dims)
        return 0;
    int64_t d = last_dim ? v->dims[v->n_dims - 1] : v->dims[0];
    return d > 0 ? d : 0;
}

static ex_tensor *make_feed(const ir_var *v, const ir_block *b, const ir_op *reader,
                            const char *slot, const ex_feed_opts *o, ex_rng *r)
{
    int64_t dims[EX_MAX_DIMS];
    int nd = (int)(v->n_dims < EX_MAX_DIMS ? v->n_dims : EX_MAX_DIMS);
    int64_t *lod = NULL;
    size_t n_lod = 0;
    if (v->lod_level >= 1) {
        n_lod = (size_t)o->batch + 1;
        lod = xcalloc(n_lod, sizeof(int64_t));
        for (size_t i = 1; i < n_lod; i++)
            lod[i] = lod[i - 1] + 1 + (int64_t)(ex_rng_next(r) % 3);
    }
    for (int i = 0; i < nd; i++)
        dims[i] = v->dims[i] >= 0 ? v->dims[i] : (lod && i == 0 ? lod[n_lod - 1] : o->batch);
    if (nd == 0) {
        dims[0] = o->batch;
        nd = 1;
    }
    ex_where_var("seeding feed", v->name);
    ex_tensor *t = ex_tensor_new(v->dtype, nd, dims);
    if (lod)
        ex_tensor_set_lod(t, lod, n_lod);
    free(lod);
    int64_t range = reader ? int_range(b, reader, slot) : 0;
    bool is_int = ex_dtype_is_int(v->dtype) || range > 0;
    if (range <= 0)
        range = 2;
    for (size_t i = 0; i < t->numel; i++)
        t->data[i] = is_int ? (double)(ex_rng_next(r) % (uint64_t)range)
                            : o->scale * (2 * ex_rng_uniform(r) - 1);
    return t;
}

bool ex_feed_random(const ir_program *p, ex_scope *s, const ex_feed_opts *o, ex_rng *r,
                    char *err, size_t errlen)
{
    const ir_block *b = ir_program_block(p, 0);
    if (!b)
        return true;
    pmap written = PMAP_INIT;
    bool ok = true;
    for (size_t i = 0; ok && i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        /* A feed op's target is fed here, like a var nothing writes. */
        if (!strcmp(op->type, "feed"))
            continue;
        for (size_t k = 0; k < op->n_inputs; k++) {
            const ir_slot *sl = &ir_op_ins(op)[k];
            for (size_t j = 0; j < sl->n_args; j++) {
                const char *a = sl->args[j];
                if (!*a || !strcmp(a, "@EMPTY@") || pmap_has(&written, a) || ex_scope_get(s, a))
                    continue;
                const ir_var *v = ir_block_find_var_recursive(b, a);
                if (!v) {
                    g_snprintf(err, errlen, "block 0, op %zu '%s': input '%s' names unknown var '%s'",
                               i, op->type, sl->name, a);
                    ok = false;
                    break;
                }
                if ((v->type != IR_LOD_TENSOR && v->type != IR_SELECTED_ROWS) ||
                    (o->data_only && v->persistable))
                    continue;
                if (ir_var_has_dims_below_minus_one(v)) {
                    char dims[128];
                    g_snprintf(err, errlen,
                               "var '%s' has dims %s, not all known; the executor needs a "
                               "concrete extent to make its value (block 0, op %zu '%s' reads "
                               "it; only a -1 is taken as the batch)",
                               a, ir_dims_text(v->dims, v->n_dims, dims, sizeof dims), i,
                               op->type);
                    ok = false;
                    break;
                }
                ex_scope_put(s, a, make_feed(v, b, op, sl->name, o, r));
            }
        }
        for (size_t k = 0; k < op->n_outputs; k++)
            for (size_t j = 0; j < ir_op_outs(op)[k].n_args; j++)
                pmap_add(&written, ir_op_outs(op)[k].args[j]);
    }
    pmap_free(&written);
    return ok;
}
