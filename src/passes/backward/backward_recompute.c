/* backward_recompute.c - recompute: the seed's
 * _append_backward_ops_with_checkpoints_ and the ProgramStats class it uses
 * (../shared/seeds/backward.py.txt).  Function and step names follow the
 * seed; comments say where pdtrans must differ and why. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_recompute.h"

/* ---- ProgramStats -------------------------------------------------------- */

/* var_op_deps of one name.  The seed keeps the full op index lists; every
 * question it asks of them is a min, a max or "is it empty", so those are
 * all that is kept (which also keeps get_out_of_subgraph_vars linear). */
typedef struct {
    const char *name;
    size_t n_readers, n_writers;
    size_t min_reader, max_reader, min_writer, max_writer;
} var_deps;

typedef struct {
    bw_run *r;
    ir_block *block;
    GPtrArray *ops;         /* the op path; seed ops get inserted into it */
    pmap *deps;       /* name -> var_deps* */
    GPtrArray *order;       /* var_deps* in first-seen order */
} prog_stats;

static var_deps *deps_of(prog_stats *s, const char *name)
{
    var_deps *d = pmap_get(s->deps, name);
    if (!d) {
        d = g_new0(var_deps, 1);
        d->name = name;
        pmap_put(s->deps, name, d);
        g_ptr_array_add(s->order, d);
    }
    return d;
}

static void note_use(var_deps *d, size_t i, bool write)
{
    size_t *n = write ? &d->n_writers : &d->n_readers;
    size_t *lo = write ? &d->min_writer : &d->min_reader;
    size_t *hi = write ? &d->max_writer : &d->max_reader;
    if (!*n || i < *lo)
        *lo = i;
    if (!*n || i > *hi)
        *hi = i;
    ++*n;
}

/* build_stats. */
static void build_stats(prog_stats *s)
{
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = 0; i < s->ops->len; i++) {
        const ir_op *op = s->ops->pdata[i];
        bw_arg_names(op, false, buf);
        for (size_t k = 0; k < buf->len; k++)
            note_use(deps_of(s, buf->pdata[k]), i, false);
        bw_arg_names(op, true, buf);
        for (size_t k = 0; k < buf->len; k++)
            note_use(deps_of(s, buf->pdata[k]), i, true);
    }
    g_ptr_array_free(buf, TRUE);
}

static bool persistable(const ir_block *b, const char *name)
{
    const ir_var *v = ir_block_find_var(b, name);
    return v && v->persistable;
}

/* modify_forward_desc_for_recompute: a dropout without a Seed input gets a
 * `seed` op right before it, so that the forward run and the recomputation
 * draw the same mask.  An absent Seed slot counts as empty (Python's
 * Operator creates the slot empty; a loaded program may lack it). */
static void add_dropout_seeds(prog_stats *s)
{
    const char *dropout = ir_intern("dropout");
    ir_block *b = s->block;
    pmap *seed_of = pmap_new();
    GPtrArray *ops = g_ptr_array_sized_new(s->ops->len);
    for (size_t i = 0; i < s->ops->len; i++) {
        ir_op *op = s->ops->pdata[i];
        const ir_slot *seed_in = ir_op_input(op, "Seed");
        if (op->type != dropout || (seed_in && seed_in->n_args == 1)) {
            g_ptr_array_add(ops, op);
            continue;
        }
        /* unique_name.generate("seed"), then
         * generate_with_ignorable_key("seed_<n>.tmp"). */
        size_t n = GPOINTER_TO_SIZE(pmap_get(s->r->unique, ir_intern("seed")));
        pmap_put(s->r->unique, ir_intern("seed"), GSIZE_TO_POINTER(n + 1));
        const char *key = ir_internf("seed_%zu.tmp", n);
        size_t m = GPOINTER_TO_SIZE(pmap_get(s->r->unique, key));
        pmap_put(s->r->unique, key, GSIZE_TO_POINTER(m + 1));
        const char *var = ir_internf("%s_%zu", key, m);

        ir_var *v = ir_block_var(b, var);
        v->dtype = IR_INT32;
        v->has_persistable = true;
        v->persistable = false;
        v->has_stop_gradient = true;
        v->stop_gradient = false;

        /* Attrs as Python's Operator leaves them (the framework attrs as the
         * optimizer passes write them) plus those the seed passes. */
        ir_op *seed = ir_op_new(s->r->prog, "seed");
        ir_op_set_output1(seed, "Out", var);
        int32_t sv = ir_op_get_bool(op, "fix_seed", false) ? (int32_t)ir_op_get_int(op, "seed", 0)
                                                           : 0;
        ir_op_set_int(seed, "seed", sv);
        const char *dev = ir_op_get_string(op, "op_device");
        ir_op_set_string(seed, "op_device", dev ? dev : "");
        ir_op_set_bool(seed, "force_cpu", true);
        ir_op_set_role(seed, IR_ROLE_FORWARD);
        ir_op_set_strings(seed, "op_role_var", NULL, 0);
        ir_op_set_string(seed, "op_namescope", "/");
        ir_op_set_strings(seed, "op_callstack", NULL, 0);
        g_ptr_array_add(ops, seed);
        g_ptr_array_add(ops, op);
        pmap_put(seed_of, op, seed);

        ir_op_set_input1(op, "Seed", var);
        ir_op_remove_attr(op, "fix_seed");
        ir_op_remove_attr(op, "seed");
    }
    if (seed_of->n) {
        /* block._insert_op(op.idx, ...) for each, as one rebuild. */
        GPtrArray *all = g_ptr_array_sized_new((guint)(b->n_ops + seed_of->n));
        for (size_t i = 0; i < b->n_ops; i++) {
            ir_op *seed = pmap_get(seed_of, b->ops[i]);
            if (seed)
                g_ptr_array_add(all, seed);
            g_ptr_array_add(all, b->ops[i]);
        }
        ir_block_set_ops(b, (ir_op *const *)all->pdata, all->len);
        g_ptr_array_free(all, TRUE);
        g_ptr_array_set_size(s->ops, 0);
        for (size_t i = 0; i < ops->len; i++)
            g_ptr_array_add(s->ops, ops->pdata[i]);
    }
    g_ptr_array_free(ops, TRUE);
    pmap_destroy(seed_of);
}

/* sort_checkpoints.  The seed first dedups through list(set(...)), whose
 * order depends on Python's salted string hash; the sort is stable, so that
 * order survives among checkpoints with the same key.  pdtrans dedups in
 * first-occurrence order instead, which is deterministic. */
typedef struct {
    long key;       /* last writer, -1 for an input var */
    size_t pos;     /* first-occurrence position: keeps the sort stable */
    const char *name;
} ckpt_key;

static int cmp_ckpt(const void *a, const void *b)
{
    const ckpt_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static GPtrArray *sort_checkpoints(prog_stats *s, const pdt_list *names)
{
    ckpt_key *keys = xcalloc(names->n + 1, sizeof *keys);
    size_t n = 0;
    pmap *seen = pmap_new();
    for (size_t i = 0; i < names->n; i++) {
        const char *name = ir_intern(names->items[i]);
        if (!pmap_add(seen, name))
            continue;
        var_deps *d = pmap_get(s->deps, name);
        if (!d) {
            pdt_note("recompute: deleted '%s' from checkpoints, because it is not used in "
                     "the program", name);
            continue;
        }
        keys[n].key = d->n_writers ? (long)d->max_writer : -1;
        keys[n].pos = n;
        keys[n].name = name;
        n++;
    }
    qsort(keys, n, sizeof *keys, cmp_ckpt);
    GPtrArray *res = g_ptr_array_sized_new((guint)n);
    for (size_t i = 0; i < n; i++)
        g_ptr_array_add(res, (void *)keys[i].name);
    pmap_destroy(seen);
    free(keys);
    return res;
}

/* is_subgraph([a], [b]): flag, min reader of a, max writer of b. */
static bool is_subgraph(prog_stats *s, const char *a, const char *b, size_t *min_idx,
                        size_t *max_idx)
{
    var_deps *da = pmap_get(s->deps, a), *db = pmap_get(s->deps, b);
    if (!da || !db)
        return false;
    long lo = da->n_readers ? (long)da->min_reader : (long)s->ops->len;
    long hi = db->n_writers ? (long)db->max_writer : -1;
    if (lo >= hi)
        return false;
    *min_idx = (size_t)lo;
    *max_idx = (size_t)hi;
    return true;
}

/* _update_segment_start: AMP casts of persistable vars just before a
 * segment join it.  (The seed always passes -1 as the previous end.) */
static size_t update_segment_start(prog_stats *s, size_t min_idx)
{
    const char *cast = ir_intern("cast");
    size_t updated = min_idx;
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = min_idx; i-- > 0;) {
        const ir_op *op = s->ops->pdata[i];
        if (op->type != cast || !bw_arg_names(op, false, buf) ||
            !persistable(s->block, buf->pdata[0]))
            break;
        updated = i;
    }
    g_ptr_array_free(buf, TRUE);
    return updated;
}

/* ---- the pass ------------------------------------------------------------ */

typedef struct {
    size_t begin, end;
} segment;

typedef struct {
    const char *to;
    size_t order;
} rename_entry;

typedef struct {
    bw_run *r;
    ir_block *block;
    prog_stats stats;
    pmap *ckpt;       /* checkpoint names */
    pmap *hold;       /* vars_should_be_hold */
    pmap *renames;    /* var_name_dict: name -> rename_entry* */
    size_t n_renames;
    GPtrArray *grad_ops;    /* grad_op_descs */
    GPtrArray *local_ops;   /* what Paddle leaves in local_block */
    GPtrArray *buffer_ops;  /* ... and in buffer_block */
} recompute;

/* _rename_arg_ with every var_name_dict entry, applied in insertion order
 * as the seed does (a name renamed to a later key is renamed again). */
static void rename_args(recompute *rc, ir_op *op)
{
    for (int out = 0; out < 2; out++) {
        ir_slot *slots = out ? op->outputs : op->inputs;
        size_t n = out ? op->n_outputs : op->n_inputs;
        for (size_t s = 0; s < n; s++) {
            const char **args = NULL;
            for (size_t k = 0; k < slots[s].n_args; k++) {
                const char *cur = slots[s].args[k];
                long last = -1;
                for (;;) {
                    const rename_entry *e = pmap_get(rc->renames, cur);
                    if (!e || (long)e->order <= last)
                        break;
                    cur = e->to;
                    last = (long)e->order;
                }
                if (cur == slots[s].args[k])
                    continue;
                if (!args) {
                    args = g_newa(const char *, slots[s].n_args + 1);
                    memcpy(args, slots[s].args, slots[s].n_args * sizeof *args);
                }
                args[k] = cur;
            }
            if (!args)
                continue;
            if (out)
                ir_op_set_output(op, slots[s].name, args, slots[s].n_args);
            else
                ir_op_set_input(op, slots[s].name, args, slots[s].n_args);
        }
    }
}

static bool refuse_sub_block(recompute *rc, const ir_op *op)
{
    if (!bw_attr(op, bw_n_sub_block))
        return false;
    pdt_error("%s: block %d, op %d '%s': recompute does not support ops with a sub_block",
              rc->r->path, rc->block->idx, bw_op_index(rc->block, op), op->type);
    return true;
}

/* core.get_grad_op_desc for `op` (fwd: the op of the program, for
 * messages), with op_device copied from op onto the grad ops. */
static bool make_grads(recompute *rc, const ir_op *op, const ir_op *fwd, GPtrArray *out)
{
    bw_run *r = rc->r;
    const grad_maker *m = grad_maker_find(op->type);
    if (!m) {
        pdt_error("%s: block %d, op %d '%s': no gradient maker is known for op type '%s', "
                  "and the op is on the gradient path",
                  r->path, rc->block->idx, bw_op_index(rc->block, fwd), op->type, op->type);
        return false;
    }
    grad_ctx c = {0};
    c.prog = r->prog;
    c.fwd = op;
    c.no_grad = r->no_grad[rc->block->idx];
    c.grad_to_var = r->grad_to_var;
    c.out = out;
    g_ptr_array_set_size(out, 0);
    if (!grad_make(m, &c)) {
        pdt_error("%s: block %d, op %d '%s': %s", r->path, rc->block->idx,
                  bw_op_index(rc->block, fwd), op->type, c.err);
        return false;
    }
    const ir_attr *dev = bw_attr(op, bw_n_op_device);
    for (size_t i = 0; dev && i < out->len; i++)
        ir_op_copy_attr(out->pdata[i], dev);
    return true;
}

/* _add_descs_to_block: a copy with op_role Backward (op_device is copied
 * onto itself, which changes nothing). */
static ir_op *backward_copy(ir_program *p, const ir_op *op)
{
    ir_op *c = ir_op_clone(p, op);
    ir_op_set_role(c, IR_ROLE_BACKWARD);
    return c;
}

/* The grads of ops[begin, end) in reverse order (a "gap"): made, copied
 * into local_block, and the copies join grad_op_descs. */
static bool gap_grads(recompute *rc, size_t begin, size_t end, GPtrArray *tmp)
{
    GPtrArray *ops = rc->stats.ops;
    for (size_t i = end; i-- > begin;) {
        const ir_op *op = ops->pdata[i];
        if (refuse_sub_block(rc, op) || !make_grads(rc, op, op, tmp))
            return false;
        for (size_t k = 0; k < tmp->len; k++) {
            /* The copy is what Paddle keeps using; the maker's op is
             * dropped, so setting the role in place is the same. */
            ir_op_set_role(tmp->pdata[k], IR_ROLE_BACKWARD);
            g_ptr_array_add(rc->local_ops, tmp->pdata[k]);
            g_ptr_array_add(rc->grad_ops, tmp->pdata[k]);
        }
    }
    return true;
}

/* The var `name` + suffix, created in the forward block like the original
 * (Python's create_var: type, shape, dtype, persistable, stop_gradient;
 * no lod_level). */
static void create_renamed_var(recompute *rc, const char *name, const char *to)
{
    ir_block *b = rc->block;
    if (ir_block_find_var(b, to))
        return;
    const ir_var *ref = ir_block_find_var(b, name);
    ir_var *v = ir_block_var(b, to);
    if (!ref)
        return;
    v->type = ref->type;
    v->tensor_slot = ref->type == IR_SELECTED_ROWS      ? IR_TD_SELECTED_ROWS
                     : ref->type == IR_LOD_TENSOR_ARRAY ? IR_TD_TENSOR_ARRAY
                                                        : IR_TD_LOD_TENSOR;
    v->dtype = ref->dtype;
    ir_var_set_dims(rc->r->prog, v, ref->dims, ref->n_dims);
    v->has_persistable = true;
    v->persistable = ref->persistable;
    v->has_stop_gradient = true;
    v->stop_gradient = ref->stop_gradient;
}

static bool run_segment(recompute *rc, const segment *seg, size_t i, GPtrArray *tmp)
{
    GPtrArray *ops = rc->stats.ops;
    const char *suffix = ir_internf(".subprog_%zu", i);
    GPtrArray *names = g_ptr_array_new();
    for (size_t o = seg->begin; o < seg->end; o++) {
        const ir_op *op = ops->pdata[o];
        if (refuse_sub_block(rc, op)) {
            g_ptr_array_free(names, TRUE);
            return false;
        }
        for (int out = 0; out < 2; out++) {
            bw_arg_names(op, out, names);
            for (size_t k = 0; k < names->len; k++) {
                const char *n = names->pdata[k];
                if (persistable(rc->block, n) || pmap_has(rc->ckpt, n) ||
                    pmap_has(rc->hold, n) ||
                    pmap_has(rc->renames, n))
                    continue;
                rename_entry *e = g_new(rename_entry, 1);
                e->to = ir_internf("%s%s", n, suffix);
                e->order = rc->n_renames++;
                pmap_put(rc->renames, n, e);
                create_renamed_var(rc, n, e->to);
            }
        }
    }
    g_ptr_array_free(names, TRUE);

    /* 3.a: _add_needed_descs_to_block (ops with an output that is neither
     * persistable nor in memory are re-run) and _add_descs_to_block. */
    GPtrArray *buffer = g_ptr_array_new(), *added = g_ptr_array_new(), *outs = g_ptr_array_new();
    for (size_t o = seg->begin; o < seg->end; o++) {
        const ir_op *op = ops->pdata[o];
        bool needed = false;
        bw_arg_names(op, true, outs);
        for (size_t k = 0; k < outs->len && !needed; k++) {
            const char *n = outs->pdata[k];
            if (persistable(rc->block, n))
                continue;
            needed = !pmap_has(rc->hold, n) && !pmap_has(rc->ckpt, n);
        }
        if (needed) {
            ir_op *c = backward_copy(rc->r->prog, op);
            g_ptr_array_add(buffer, c);
            g_ptr_array_add(rc->buffer_ops, c);
        }
    }
    for (size_t o = seg->begin; o < seg->end; o++) {
        ir_op *c = backward_copy(rc->r->prog, ops->pdata[o]);
        g_ptr_array_add(added, c);
        g_ptr_array_add(rc->local_ops, c);
    }
    /* 3.b */
    for (size_t k = 0; k < buffer->len; k++) {
        rename_args(rc, buffer->pdata[k]);
        g_ptr_array_add(rc->grad_ops, buffer->pdata[k]);
    }
    /* 3.c: grads of the copies, renamed. */
    bool ok = true;
    for (size_t k = added->len; k-- > 0 && ok;) {
        ok = make_grads(rc, added->pdata[k], ops->pdata[seg->begin + k], tmp);
        for (size_t j = 0; ok && j < tmp->len; j++) {
            rename_args(rc, tmp->pdata[j]);
            g_ptr_array_add(rc->grad_ops, tmp->pdata[j]);
        }
    }
    g_ptr_array_free(buffer, TRUE);
    g_ptr_array_free(added, TRUE);
    g_ptr_array_free(outs, TRUE);
    return ok;
}

/* 1): the segments between consecutive checkpoints, then the recompute
 * segments (with [0, first start) in front). */
static GArray *find_segments(recompute *rc, GPtrArray *ckpts)
{
    prog_stats *s = &rc->stats;
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(segment));
    if (ckpts->len == 1) {
        var_deps *d = pmap_get(s->deps, ckpts->pdata[0]);
        if (d && d->n_writers && d->max_writer > 0) {
            segment seg = {0, d->max_writer + 1};
            g_array_append_val(segs, seg);
        }
    } else {
        for (size_t i = 0; i + 1 < ckpts->len; i++) {
            size_t lo, hi;
            if (is_subgraph(s, ckpts->pdata[i], ckpts->pdata[i + 1], &lo, &hi)) {
                segment seg = {update_segment_start(s, lo), hi + 1};
                g_array_append_val(segs, seg);
            } else {
                pdt_note("recompute: could not recompute the ops between checkpoints '%s' "
                         "and '%s'", (const char *)ckpts->pdata[i],
                         (const char *)ckpts->pdata[i + 1]);
            }
        }
    }
    if (segs->len && g_array_index(segs, segment, 0).begin != 0) {
        segment first = {0, g_array_index(segs, segment, 0).begin};
        g_array_prepend_val(segs, first);
    }
    return segs;
}

/* 2): vars used across segments, seed outputs, and input vars. */
static void find_held_vars(recompute *rc, GArray *segs)
{
    prog_stats *s = &rc->stats;
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = 0; i < segs->len; i++) {
        segment seg = g_array_index(segs, segment, i);
        for (size_t o = seg.begin; o < seg.end; o++) {
            const ir_op *op = s->ops->pdata[o];
            bw_arg_names(op, true, buf);
            for (size_t k = 0; k < buf->len; k++) {
                var_deps *d = pmap_get(s->deps, buf->pdata[k]);
                if (d->n_readers && d->max_reader >= seg.end)
                    pmap_add(rc->hold, buf->pdata[k]);
            }
            bw_arg_names(op, false, buf);
            for (size_t k = 0; k < buf->len; k++) {
                var_deps *d = pmap_get(s->deps, buf->pdata[k]);
                if (d->n_writers && d->min_writer < seg.begin)
                    pmap_add(rc->hold, buf->pdata[k]);
            }
        }
    }
    /* get_reserved_vars and the `read` outputs of get_input_nodes. */
    const char *seed = ir_intern("seed"), *read = ir_intern("read");
    for (size_t o = 0; o < s->ops->len; o++) {
        const ir_op *op = s->ops->pdata[o];
        if (op->type != seed && op->type != read)
            continue;
        bw_arg_names(op, true, buf);
        for (size_t k = 0; k < buf->len; k++)
            pmap_add(rc->hold, buf->pdata[k]);
    }
    for (size_t i = 0; i < s->order->len; i++) {
        const var_deps *d = s->order->pdata[i];
        if (!d->n_writers && d->n_readers && !persistable(rc->block, d->name))
            pmap_add(rc->hold, d->name);
    }
    g_ptr_array_free(buf, TRUE);
}

static void free_stats(prog_stats *s)
{
    PMAP_FOR(s->deps, e)
        g_free(e->val);
    pmap_destroy(s->deps);
    g_ptr_array_free(s->order, TRUE);
}

bool bw_append_backward_ops_with_checkpoints(bw_run *r, ir_block *b, GPtrArray *path,
                                             ir_block *target, const pdt_list *checkpoints)
{
    for (size_t i = 0; i < checkpoints->n; i++)
        if (!ir_block_find_var(b, checkpoints->items[i])) {
            pdt_error("%s: checkpoint '%s' is not a var of block %d", r->path,
                      checkpoints->items[i], b->idx);
            return false;
        }
    /* The seed's local_block and buffer_block: created first, never
     * removed, so they stay in the program (and shift the numbering of
     * blocks created later), holding copies of the ops built here. */
    ir_block *local = ir_program_add_block(r->prog, b->idx);
    ir_block *buffer = ir_program_add_block(r->prog, local->idx);
    bw_sync_blocks(r);
    r->scratch[0] = local->idx;
    r->scratch[1] = buffer->idx;
    r->n_scratch = 2;

    recompute rc = {0};
    rc.r = r;
    rc.block = b;
    rc.stats.r = r;
    rc.stats.block = b;
    rc.stats.ops = path;
    rc.stats.deps = pmap_new();
    rc.stats.order = g_ptr_array_new();
    add_dropout_seeds(&rc.stats);
    build_stats(&rc.stats);

    GPtrArray *ckpts = sort_checkpoints(&rc.stats, checkpoints);
    rc.ckpt = pmap_new();
    for (size_t i = 0; i < ckpts->len; i++)
        pmap_add(rc.ckpt, ckpts->pdata[i]);
    GArray *segs = find_segments(&rc, ckpts);
    rc.hold = pmap_new();
    find_held_vars(&rc, segs);
    for (size_t i = 0; i < segs->len; i++)
        pdt_note("recompute: segment %zu: ops [%zu, %zu) of the op path", i,
                 g_array_index(segs, segment, i).begin, g_array_index(segs, segment, i).end);

    rc.renames = pmap_new();
    rc.grad_ops = g_ptr_array_new();
    rc.local_ops = g_ptr_array_new();
    rc.buffer_ops = g_ptr_array_new();
    GPtrArray *tmp = g_ptr_array_new();
    bool ok = true;
    size_t max_calculated = path->len;
    if (segs->len == 0)
        ok = gap_grads(&rc, 0, max_calculated, tmp);
    for (size_t i = 0; ok && i < segs->len; i++) {
        const segment *seg = &g_array_index(segs, segment, segs->len - 1 - i);
        if (seg->end < max_calculated)
            ok = gap_grads(&rc, seg->end, max_calculated, tmp);
        max_calculated = seg->begin;
        ok = ok && run_segment(&rc, seg, i, tmp);
    }
    g_ptr_array_free(tmp, TRUE);

    if (ok) {
        /* 3.d and 4); no _find_not_need_ops here, as in the seed. */
        GPtrArray *a = bw_addup_repetitive_outputs(r, rc.grad_ops, b->idx);
        GPtrArray *d = bw_remove_no_grad_branch(r, a, r->no_grad[b->idx]);
        g_ptr_array_free(a, TRUE);
        GPtrArray *copies = g_ptr_array_sized_new(d->len);
        for (size_t i = 0; i < d->len; i++)
            g_ptr_array_add(copies, backward_copy(r->prog, d->pdata[i]));
        ir_block_splice(target, target->n_ops, 0, (ir_op *const *)copies->pdata, copies->len);
        g_ptr_array_free(copies, TRUE);
        g_ptr_array_free(d, TRUE);
        ir_block_set_ops(local, (ir_op *const *)rc.local_ops->pdata, rc.local_ops->len);
        ir_block_set_ops(buffer, (ir_op *const *)rc.buffer_ops->pdata, rc.buffer_ops->len);
    }

    g_ptr_array_free(rc.grad_ops, TRUE);
    g_ptr_array_free(rc.local_ops, TRUE);
    g_ptr_array_free(rc.buffer_ops, TRUE);
    PMAP_FOR(rc.renames, e)
        g_free(e->val);
    pmap_destroy(rc.renames);
    pmap_destroy(rc.hold);
    pmap_destroy(rc.ckpt);
    g_array_free(segs, TRUE);
    g_ptr_array_free(ckpts, TRUE);
    free_stats(&rc.stats);
    return ok;
}

/* Paddle's scratch blocks may keep copies of grad ops that the pruning
 * steps later dropped from block 0, naming grad vars that no block
 * declares.  Such copies are dead (no op refers to these blocks) but would
 * fail `pdtrans check`; they are left out. */
void bw_recompute_prune_scratch(bw_run *r)
{
    const char *empty = ir_intern(EMPTY_VAR);
    for (size_t i = 0; i < r->n_scratch; i++) {
        ir_block *b = ir_program_block(r->prog, r->scratch[i]);
        if (!b)
            continue;
        GPtrArray *kept = g_ptr_array_sized_new((guint)b->n_ops);
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_op *op = b->ops[k];
            bool ok = true;
            for (int out = 0; out < 2 && ok; out++) {
                const ir_slot *slots = out ? op->outputs : op->inputs;
                size_t n = out ? op->n_outputs : op->n_inputs;
                for (size_t s = 0; s < n && ok; s++)
                    for (size_t a = 0; a < slots[s].n_args && ok; a++)
                        ok = slots[s].args[a] == empty ||
                             ir_block_find_var_recursive(b, slots[s].args[a]);
            }
            if (ok)
                g_ptr_array_add(kept, op);
            else
                op->block = NULL;
        }
        if (kept->len != b->n_ops)
            ir_block_set_ops(b, (ir_op *const *)kept->pdata, kept->len);
        g_ptr_array_free(kept, TRUE);
    }
}
