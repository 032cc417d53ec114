/* split_vars.c - pass 'split_vars': the placement plan.  slice_variable
 * and _create_vars_from_blocklist (how each param and grad is cut into
 * slices, and what the slices are called), then the dispatch of slices to
 * endpoints (transpile_dispatch.c). */
#include <stdio.h>
#include <string.h>

#include "../../ckd.h"
#include "../../diag.h"
#include "builders.h"

/* a / b rounded up, without the a + b - 1 that overflows near INT64_MAX. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* dims are known and their product fits in int64 (check_shape and the
 * input gate); every size below is at most that product: block_size is
 * rounded up to whole rows, and numel is a whole number of rows. */
size_t tp_slice_sizes(const int64_t *dims, size_t n_dims, size_t slice_count,
                      int64_t min_block_size, int64_t **sizes)
{
    int64_t numel = 1;
    for (size_t i = 0; i < n_dims; i++)
        numel *= dims[i];
    int64_t split_count = (int64_t)slice_count;
    int64_t max_pservers = numel / min_block_size;
    if (max_pservers == 0)
        max_pservers = 1;
    if (max_pservers < split_count)
        split_count = max_pservers;
    int64_t block_size = ceil_div(numel, split_count);
    if (n_dims >= 2) {
        /* Align to whole rows so that every slice is a run of dim-0 rows. */
        int64_t width = 1;
        for (size_t i = 1; i < n_dims; i++)
            width *= dims[i];
        int64_t rem = block_size % width;
        if (rem)
            block_size += width - rem;
    }
    split_count = ceil_div(numel, block_size);
    int64_t *out = xmalloc_n((size_t)split_count, sizeof(int64_t));
    for (int64_t i = 0; i < split_count; i++) {
        int64_t left = numel - i * block_size;
        out[i] = left < block_size ? left : block_size;
    }
    *sizes = out;
    return (size_t)split_count;
}

/* slice_variable cuts a param and its grad into runs of rows by their
 * element count: a var whose dims are not all known (-1, or a dim below -1
 * from Paddle's compile-time InferShape) has none, so it is refused,
 * named with its dims, rather than sliced by a made-up count. */
static int check_shape(tp_plan *st, const ir_var *v, bool is_grad)
{
    int64_t numel = ir_var_numel(v), bytes;
    if (numel > 0 && !ckd_mul_i64(&bytes, numel, tp_dtype_size(v->dtype)))
        return PDT_OK;
    char dims[128];
    ir_dims_text(v->dims, v->n_dims, dims, sizeof dims);
    if (numel > 0 || numel == -2)
        pdt_error("%s: block 0: var '%s': its size in bytes overflows int64",
                  st->ctx->main_path, v->name);
    else if (numel < 0)
        pdt_error("%s: block 0: %s '%s' has dims %s, not all known; split_vars needs its "
                  "element count to slice it among the pservers", st->ctx->main_path,
                  is_grad ? "grad" : "param", v->name, dims);
    else
        pdt_error("%s: block 0: %s '%s' has dims %s, an empty shape; split_vars needs a "
                  "non-empty one to slice it among the pservers", st->ctx->main_path,
                  is_grad ? "grad" : "param", v->name, dims);
    return PDT_EBADINPUT;
}

/* split_byref's `sections` attr is an int32 list (Paddle's
 * std::vector<int>): a slice of more rows cannot be described. */
static int check_sections(tp_plan *st, const tp_dvar *d)
{
    tp_placement *pl = st->draft;
    if (d->n_slices < 2 || d->var->type == IR_SELECTED_ROWS || pl->runtime_split)
        return PDT_OK;
    for (size_t k = 0; k < d->n_slices; k++)
        if (d->slices[k].dims[0] > INT32_MAX) {
            pdt_error("%s: block 0: var '%s': slice %zu has %lld rows, more than split_byref's "
                      "int32 'sections' attr holds", st->ctx->main_path, d->name, k,
                      (long long)d->slices[k].dims[0]);
            return PDT_EBADINPUT;
        }
    return PDT_OK;
}

/* Cuts var d into the given sizes; names follow _create_vars_from_blocklist. */
static void make_slices(tp_plan *st, tp_dvar *d, const int64_t *sizes, size_t n,
                        bool is_grad)
{
    tp_placement *pl = st->draft;
    const ir_var *v = d->var;
    int64_t width = 1;
    for (size_t i = 1; i < v->n_dims; i++)
        width *= v->dims[i];
    d->n_slices = n;
    tp_slice *slices = ir_arena_alloc(pl->arena, n * sizeof *slices);
    d->slices = slices;
    bool suffix = is_grad && pl->trainer_suffix;
    int64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        tp_slice *s = &slices[i];
        s->offset = offset;
        s->numel = sizes[i];
        offset += sizes[i];
        s->n_dims = v->n_dims ? v->n_dims : 1;
        int64_t *dims = ir_arena_alloc(pl->arena, s->n_dims * sizeof *dims);
        if (v->n_dims)
            memcpy(dims, v->dims, v->n_dims * sizeof *dims);
        dims[0] = v->n_dims >= 2 ? sizes[i] / width : sizes[i];
        s->dims = dims;
        if (n == 1) {
            /* An unsplit var keeps its desc and its name (plus the trainer
             * suffix for a grad); its shape is the var's own. */
            s->n_dims = v->n_dims;
            s->dims = v->dims;
            s->merged = d->name;
            s->name = suffix ? ir_internf("%s.trainer_%d", d->name, st->ctx->transpile.trainer_id)
                             : d->name;
        } else {
            s->merged = ir_internf("%s.block%zu", d->name, i);
            s->name = suffix ? ir_internf("%s.trainer_%d", s->merged, st->ctx->transpile.trainer_id)
                             : s->merged;
        }
    }
}

/* GeoSgdTranspiler's _init_splited_vars: slice_variable(params,
 * len(pservers), min_block_size) whatever slice_var_up says; the grads
 * stay on the trainer, uncut (no grad slices). */
static int split_geo(tp_plan *st)
{
    tp_placement *pl = st->draft;
    for (size_t i = 0; i < pl->n_pairs; i++) {
        tp_pair *p = &st->draft_pairs[i];
        int rc = check_shape(st, p->param.var, false);
        if (rc)
            return rc;
        int64_t *ps = NULL;
        size_t np = tp_slice_sizes(p->param.var->dims, p->param.var->n_dims, pl->n_eps,
                                   st->ctx->transpile.min_block_size, &ps);
        make_slices(st, &p->param, ps, np, false);
        free(ps);
        p->grad.n_slices = 0;
    }
    return PDT_OK;
}

int tp_split_vars(tp_plan *st)
{
    tp_placement *pl = st->draft;
    if (pl->geo)
        return split_geo(st);
    size_t count = st->ctx->transpile.slice_var_up ? pl->n_eps : 1;
    for (size_t i = 0; i < pl->n_pairs; i++) {
        tp_pair *p = &st->draft_pairs[i];
        int rc = check_shape(st, p->param.var, false);
        if (!rc)
            rc = check_shape(st, p->grad.var, true);
        if (rc)
            return rc;
        int64_t *ps = NULL, *gs = NULL;
        size_t np = tp_slice_sizes(p->param.var->dims, p->param.var->n_dims, count,
                                   st->ctx->transpile.min_block_size, &ps);
        size_t ng = tp_slice_sizes(p->grad.var->dims, p->grad.var->n_dims, count,
                                   st->ctx->transpile.min_block_size, &gs);
        bool same = np == ng && memcmp(ps, gs, np * sizeof *ps) == 0;
        if (same) {
            make_slices(st, &p->param, ps, np, false);
            make_slices(st, &p->grad, gs, ng, !p->update_var);
        }
        free(ps);
        free(gs);
        rc = same ? check_sections(st, &p->grad) : PDT_OK;
        if (rc)
            return rc;
        if (!same) {
            /* The seed pairs grad slice k with param slice k. */
            pdt_error("%s: grad '%s' does not split like its param '%s' (their shapes differ)",
                      st->ctx->main_path, p->grad.name, p->param.name);
            return PDT_EBADINPUT;
        }
    }
    return PDT_OK;
}

/* One line per slice, then one per endpoint: the plan as -v's "block map"
 * notes and --print-after show it. */
static void print_plan(const tp_plan *st, FILE *out, const char *prefix)
{
    for (size_t i = 0; i < st->pl->n_pairs; i++) {
        const tp_pair *p = &st->pl->pairs[i];
        for (size_t k = 0; k < p->param.n_slices; k++) {
            const tp_slice *s = &p->param.slices[k];
            fprintf(out, "%s%s [", prefix, s->name);
            for (size_t d = 0; d < s->n_dims; d++)
                fprintf(out, "%s%lld", d ? ", " : "", (long long)s->dims[d]);
            if (st->pl->geo)
                fprintf(out, "] offset %lld, delta %s.delta -> pserver_%d %s\n",
                        (long long)s->offset, s->name, p->ep[k], st->pl->eps[p->ep[k]]);
            else
                fprintf(out, "] offset %lld, grad %s -> pserver_%d %s\n", (long long)s->offset,
                        p->grad.slices[k].name, p->ep[k], st->pl->eps[p->ep[k]]);
        }
    }
    for (size_t e = 0; e < st->pl->n_eps; e++)
        fprintf(out, "%spserver_%zu %s holds %zu slice%s, %lld param bytes\n", prefix, e,
                st->pl->eps[e], st->pl->epl[e].n, st->pl->epl[e].n == 1 ? "" : "s",
                (long long)st->pl->epl[e].bytes);
}

void tp_plan_print(const void *a, FILE *out, const char *pass)
{
    const tp_plan *st = a;
    if (st->pl->stage < TP_PLAN_SPLIT)
        return;
    fprintf(out, "*** after pass '%s': plan ***\n", pass);
    print_plan(st, out, "");
}

int pass_split_vars(pdt_ctx *ctx)
{
    tp_plan *st = tp_plan_need(ctx, "split_vars", TP_PLAN_FOUND);
    if (!st)
        return PDT_EINTERNAL;
    tp_placement *pl = st->draft;
    if (st->pl->stage >= TP_PLAN_SPLIT)
        return tp_order_bug("split_vars");
    int rc = tp_split_vars(st);
    if (!rc)
        rc = tp_dispatch(st);
    if (rc)
        return rc;
    pl->stage = TP_PLAN_SPLIT;
    st->draft = NULL;       /* complete: from now on only read (st->pl) */
    st->draft_pairs = NULL;
    st->draft_op_kind = NULL;
    st->draft_lookup = NULL;
    if (pdt_verbosity > 0 && !pdt_quiet_warnings && !pdt_quiet)
        print_plan(st, stderr, "pdtrans: block map: ");
    tp_plan_outputs_changed(st, NULL, 0);
    return PDT_OK;
}
