/* rewrite_check.c - a program and its rewrite on the same inputs.
 *
 * One seeded base scope: BEFORE's parameters (from files, or seeded values
 * for every persistable var block 0 reads before writing it) and its feeds
 * (feed ops' targets, or vars read before any op writes them).  BEFORE
 * runs on a copy; AFTER runs on another copy, from which BEFORE's
 * persistable vars are dropped and AFTER's own parameter files loaded when
 * it has them (fuse_batch_norm renames and folds parameters).
 *
 * Fetch targets are BEFORE's fetch ops' inputs, or, without fetch ops, the
 * vars of BEFORE's block 0 that some op writes and no op reads.  AFTER's
 * name for a target: the input of AFTER's fetch op with the same `col`;
 * else, when both blocks hold the same op types in the same order (besides
 * delete_var), the same output of the same op (memory_optimize renames the
 * var that holds it); else the same name. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "../sym/rewrite.h"
#include "feed.h"
#include "rewrite_check.h"

typedef struct {
    const char *name;       /* in BEFORE */
    int64_t col;            /* fetch op column, -1 without fetch ops */
    /* the last op writing it, among the ops that are not skipped_op() */
    int64_t writer;
    const char *slot;
    size_t arg;
} rw_target;

static bool is_type(const ir_op *op, const char *t)
{
    return !strcmp(op->type, t);
}

/* Ops that take no part in the op-by-op pairing of the two programs. */
static bool skipped_op(const ir_op *op)
{
    return is_type(op, "delete_var") || is_type(op, "feed") || is_type(op, "fetch");
}

/* ---- parameters ------------------------------------------------------- */

static ex_tensor *tensor_from_ir(const ir_tensor *it, char *err, size_t errlen)
{
    if (it->selected_rows || it->n_dims > EX_MAX_DIMS) {
        g_snprintf(err, errlen, "parameter '%s': %s are not supported", it->name,
                   it->selected_rows ? "SelectedRows values" : "more than 8 dims");
        return NULL;
    }
    size_t es = ir_dtype_size(it->dtype);
    int64_t numel = ir_tensor_numel(it);
    if (!es || it->dtype == IR_FP16 || numel < 0 || (size_t)numel * es != it->nbytes) {
        g_snprintf(err, errlen, "parameter '%s': dtype %s is not supported", it->name,
                   ir_dtype_name(it->dtype) ? ir_dtype_name(it->dtype) : "?");
        return NULL;
    }
    int64_t one = 1;
    ex_where_var("loading parameter", it->name);
    ex_tensor *t = it->n_dims ? ex_tensor_new(it->dtype, (int)it->n_dims, it->dims)
                              : ex_tensor_new(it->dtype, 1, &one);
    for (size_t i = 0; i < t->numel; i++) {
        const uint8_t *p = it->data + i * es;
        uint64_t u = 0;
        for (size_t b = 0; b < es; b++)     /* the files are little-endian */
            u |= (uint64_t)p[b] << (8 * b);
        double v;
        switch (it->dtype) {
        case IR_FP32: v = ir_tensor_get_f32(it, i); break;
        case IR_FP64: { double d; memcpy(&d, &u, sizeof d); v = d; break; }
        case IR_INT16: v = (int16_t)u; break;
        case IR_INT32: v = (int32_t)u; break;
        case IR_INT64: v = (double)(int64_t)u; break;
        case IR_INT8: v = (int8_t)u; break;
        default: v = (double)u; break;      /* BOOL, UINT8, SIZE_T */
        }
        t->data[i] = v;
    }
    return t;
}

/* Puts the value `vals` holds for every persistable var of `p` into `s`. */
static bool load_params(ex_scope *s, const ir_program *p, const ir_tensors *vals, char *err,
                        size_t errlen)
{
    for (size_t b = 0; b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t i = 0; i < blk->n_vars; i++) {
            const ir_var *v = blk->vars[i];
            const ir_tensor *it = v->removed || !v->persistable ? NULL
                                                                : ir_tensors_find(vals, v->name);
            if (!it || ex_scope_get(s, v->name))
                continue;
            ex_tensor *t = tensor_from_ir(it, err, errlen);
            if (!t)
                return false;
            ex_scope_put(s, v->name, t);
        }
    }
    return true;
}

/* ---- fetch targets ---------------------------------------------------- */

static GArray *fetch_op_targets(const ir_block *b)
{
    GArray *t = g_array_new(FALSE, TRUE, sizeof(rw_target));
    int64_t k = 0;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        const char *x = is_type(op, "fetch") ? ir_op_input1(op, "X") : NULL;
        if (!x)
            continue;
        rw_target r = {.name = x, .col = ir_op_get_int(op, "col", k), .writer = -1};
        g_array_append_val(t, r);
        k++;
    }
    return t;
}

/* Written by an op of block 0, read by none, in declaration order. */
static GArray *unread_targets(const ir_block *b)
{
    GArray *t = g_array_new(FALSE, TRUE, sizeof(rw_target));
    pmap read = PMAP_INIT, written = PMAP_INIT;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        for (size_t k = 0; k < op->n_inputs; k++)
            for (size_t j = 0; j < ir_op_ins(op)[k].n_args; j++)
                pmap_add(&read, ir_op_ins(op)[k].args[j]);
        for (size_t k = 0; k < op->n_outputs; k++)
            for (size_t j = 0; j < ir_op_outs(op)[k].n_args; j++)
                pmap_add(&written, ir_op_outs(op)[k].args[j]);
    }
    for (size_t i = 0; i < b->n_vars; i++) {
        const ir_var *v = b->vars[i];
        /* Scope, reader, feed and fetch list vars hold no tensor to compare
         * (a conditional_block's Scope output is written and never read) */
        if (v->removed || pmap_has(&read, v->name) || !pmap_has(&written, v->name) ||
            !sym_is_tensor_type(v->type))
            continue;
        rw_target r = {.name = v->name, .col = -1, .writer = -1};
        g_array_append_val(t, r);
    }
    pmap_free(&read);
    pmap_free(&written);
    return t;
}

/* The ops that are not skipped_op(), in order. */
static GPtrArray *paired_ops(const ir_block *b)
{
    GPtrArray *a = g_ptr_array_new();
    for (size_t i = 0; i < b->n_ops; i++)
        if (!skipped_op(b->ops[i]))
            g_ptr_array_add(a, b->ops[i]);
    return a;
}

static bool same_op_types(const GPtrArray *a, const GPtrArray *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (((const ir_op *)a->pdata[i])->type != ((const ir_op *)b->pdata[i])->type)
            return false;
    return true;
}

/* Sets each target's last writer (index into ops, output slot, arg). */
static void find_writers(GArray *targets, const GPtrArray *ops)
{
    pmap idx = PMAP_INIT;   /* name -> target index + 1, until its writer is found */
    for (size_t i = 0; i < targets->len; i++)
        pmap_put(&idx, g_array_index(targets, rw_target, i).name, (void *)(uintptr_t)(i + 1));
    for (size_t i = ops->len; i-- > 0;) {
        const ir_op *op = ops->pdata[i];
        for (size_t k = 0; k < op->n_outputs; k++)
            for (size_t j = 0; j < ir_op_outs(op)[k].n_args; j++) {
                uintptr_t t = (uintptr_t)pmap_get(&idx, ir_op_outs(op)[k].args[j]);
                if (!t)
                    continue;
                rw_target *r = &g_array_index(targets, rw_target, t - 1);
                r->writer = (int64_t)i;
                r->slot = ir_op_outs(op)[k].name;
                r->arg = j;
                pmap_put(&idx, r->name, NULL);
            }
    }
    pmap_free(&idx);
}

/* AFTER's name for each target, as the header comment describes. */
static const char **after_names(const ir_block *before, const ir_block *after,
                                GArray *targets)
{
    const char **names = xcalloc(targets->len + 1, sizeof(const char *));
    GArray *fetches = fetch_op_targets(after);
    GPtrArray *bops = paired_ops(before), *aops = paired_ops(after);
    bool aligned = same_op_types(bops, aops);
    if (aligned)
        find_writers(targets, bops);
    GHashTable *by_col = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (size_t k = 0; k < fetches->len; k++) {
        rw_target *f = &g_array_index(fetches, rw_target, k);
        g_hash_table_insert(by_col, &f->col, (void *)f->name);
    }
    for (size_t i = 0; i < targets->len; i++) {
        const rw_target *r = &g_array_index(targets, rw_target, i);
        names[i] = r->name;
        const char *fetched = r->col >= 0 ? g_hash_table_lookup(by_col, &r->col) : NULL;
        if (fetched)
            names[i] = fetched;
        if ((r->col < 0 || !fetches->len) && aligned && r->writer >= 0) {
            const ir_slot *s = ir_op_output(aops->pdata[r->writer], r->slot);
            if (s && r->arg < s->n_args)
                names[i] = s->args[r->arg];
        }
    }
    g_hash_table_destroy(by_col);
    g_array_free(fetches, TRUE);
    g_ptr_array_free(bops, TRUE);
    g_ptr_array_free(aops, TRUE);
    return names;
}

/* ---- running and comparing -------------------------------------------- */

/* Runs block 0; a fetch op stores a copy of its input under its column in
 * `fetched` (a later delete_var may drop the var itself). */
static bool run_program(const ir_program *p, ex_scope *s, uint64_t seed, GHashTable *fetched,
                        const char *what, char *err, size_t errlen)
{
    const ir_block *b = ir_program_block(p, 0);
    ex_ctx x;
    ex_ctx_init(&x, p, s, seed);
    int64_t k = 0;
    for (size_t i = 0; b && i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        bool ok = true;
        x.block = b;
        x.op_idx = i;
        if (is_type(op, "fetch")) {
            const ex_tensor *t = ex_in(&x, op, "X");
            int64_t *col = xmalloc_n(1, sizeof(int64_t));
            *col = ir_op_get_int(op, "col", k++);
            if (t)
                g_hash_table_replace(fetched, col, ex_tensor_copy(t));
            else
                free(col);
            ok = t != NULL;
        } else if (!is_type(op, "feed")) {
            ok = ex_run_op(&x, op);
        }
        if (!ok) {
            /* nested failures already carry their own location */
            if (strncmp(x.err, "block ", 6))
                g_snprintf(err, errlen, "%s: block 0, op %zu '%s': %s", what, i, op->type, x.err);
            else
                g_snprintf(err, errlen, "%s: %s", what, x.err);
            return false;
        }
    }
    return true;
}

/* A dense copy of a target's value: what the fetch op with column `col`
 * saw, or with col < 0 the var's final value; NULL when absent. */
static ex_tensor *target_value(const ex_scope *s, GHashTable *fetched, int64_t col,
                               const char *name)
{
    const ex_tensor *t = col >= 0 ? g_hash_table_lookup(fetched, &col) : ex_scope_get(s, name);
    return t ? ex_densify(t) : NULL;
}

static void compare(ex_rewrite_result *r, const ex_tensor *b, const ex_tensor *a)
{
    if (!b || !a) {
        r->problem = !b ? "BEFORE computes no value" : "AFTER computes no value";
        return;
    }
    if (!ex_same_shape(a, b)) {
        r->problem = "the shapes differ";
        return;
    }
    r->numel = b->numel;
    for (size_t i = 0; i < b->numel; i++) {
        double x = b->data[i], y = a->data[i];
        double d = isnan(x) && isnan(y) ? 0 : fabs(x - y) / fmax(1.0, fabs(x));
        if (isnan(d))
            d = INFINITY;
        if (d > r->worst_diff || i == 0) {
            r->worst_diff = d;
            r->worst_index = i;
            r->before = x;
            r->after = y;
        }
    }
}

static void free_tensor(void *t)
{
    ex_tensor_free(t);
}

/* Drops BEFORE's persistable vars from an AFTER scope that gets its own
 * parameter files. */
static void drop_persistables(ex_scope *s, const ir_program *p)
{
    for (size_t b = 0; b < p->n_blocks; b++)
        for (size_t i = 0; i < p->blocks[b]->n_vars; i++) {
            const ir_var *v = p->blocks[b]->vars[i];
            if (!v->removed && v->persistable)
                ex_scope_remove(s, v->name);
        }
}

static bool has_fetch_op(const ir_block *b)
{
    for (size_t i = 0; i < b->n_ops; i++)
        if (is_type(b->ops[i], "fetch"))
            return true;
    return false;
}

static bool make_scopes(const ir_program *before, const ir_program *after,
                        const ex_rewrite_opts *o, ex_scope **bs, ex_scope **as, char *err,
                        size_t errlen)
{
    ex_scope *base = ex_scope_new();
    ex_rng rng;
    ex_rng_seed(&rng, o->seed);
    ex_feed_opts fo = {.batch = o->batch, .scale = 1.0, .data_only = false};
    bool ok = (!o->before_params || load_params(base, before, o->before_params, err, errlen)) &&
              ex_feed_random(before, base, &fo, &rng, err, errlen);
    *bs = ok ? ex_scope_clone(base) : NULL;
    *as = ok ? ex_scope_clone(base) : NULL;
    if (ok && o->after_params) {
        drop_persistables(*as, before);
        ok = load_params(*as, after, o->after_params, err, errlen);
    }
    ex_scope_free(base);
    return ok;
}

bool ex_rewrite_check(const ir_program *before, const ir_program *after,
                      const ex_rewrite_opts *o, ex_rewrite_result **out, size_t *n,
                      char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    const ir_block *b0 = ir_program_block(before, 0), *a0 = ir_program_block(after, 0);
    if (!b0 || !a0) {
        g_strlcpy(err, !b0 ? "BEFORE has no block 0" : "AFTER has no block 0", errlen);
        return false;
    }
    GArray *targets = has_fetch_op(b0) ? fetch_op_targets(b0) : unread_targets(b0);
    const char **anames = after_names(b0, a0, targets);
    bool after_fetches = has_fetch_op(a0);
    GHashTable *bf = g_hash_table_new_full(g_int64_hash, g_int64_equal, free, free_tensor);
    GHashTable *af = g_hash_table_new_full(g_int64_hash, g_int64_equal, free, free_tensor);
    ex_scope *bs = NULL, *as = NULL;
    bool ok = make_scopes(before, after, o, &bs, &as, err, errlen) &&
              run_program(before, bs, o->seed, bf, "BEFORE", err, errlen) &&
              run_program(after, as, o->seed, af, "AFTER", err, errlen);
    ex_rewrite_result *res = xcalloc(targets->len + 1, sizeof(ex_rewrite_result));
    for (size_t i = 0; ok && i < targets->len; i++) {
        const rw_target *t = &g_array_index(targets, rw_target, i);
        ex_rewrite_result *r = &res[i];
        r->target = t->name;
        r->after_name = anames[i];
        ex_tensor *bv = target_value(bs, bf, t->col, t->name);
        ex_tensor *av = target_value(as, af, after_fetches ? t->col : -1, anames[i]);
        compare(r, bv, av);
        ex_tensor_free(bv);
        ex_tensor_free(av);
    }
    if (ok) {
        *out = res;
        *n = targets->len;
    } else {
        free(res);
    }
    ex_scope_free(bs);
    ex_scope_free(as);
    g_hash_table_destroy(bf);
    g_hash_table_destroy(af);
    free(anames);
    g_array_free(targets, TRUE);
    return ok;
}
