/* backward_program_stats.c - the seed's ProgramStats and the recompute
 * steps that only read it: dropout seeds, checkpoint order, segments and
 * held vars (../shared/seeds/backward.py.txt). */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "backward_program_stats.h"

void bw_stats_init(prog_stats *s, bw_run *r, ir_block *b, GPtrArray *path)
{
    s->r = r;
    s->block = b;
    s->ops = path;
    s->deps = pmap_new();
    s->order = g_ptr_array_new();
}

static var_deps *deps_of(prog_stats *s, const char *name)
{
    var_deps *d = pmap_get(s->deps, name);
    if (!d) {
        d = xcalloc(1, sizeof(var_deps));
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

void bw_stats_build(prog_stats *s)
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

bool bw_persistable(const ir_block *b, const char *name)
{
    const ir_var *v = ir_block_find_var(b, name);
    return v && v->persistable;
}

/* modify_forward_desc_for_recompute: a dropout without a Seed input gets a
 * `seed` op right before it, so that the forward run and the recomputation
 * draw the same mask.  An absent Seed slot counts as empty (Python's
 * Operator creates the slot empty; a loaded program may lack it). */
void bw_stats_add_dropout_seeds(prog_stats *s)
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

GPtrArray *bw_stats_sort_checkpoints(prog_stats *s, const pdt_list *names)
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
            !bw_persistable(s->block, buf->pdata[0]))
            break;
        updated = i;
    }
    g_ptr_array_free(buf, TRUE);
    return updated;
}

/* 1): the segments between consecutive checkpoints, then the recompute
 * segments (with [0, first start) in front). */
GArray *bw_stats_segments(prog_stats *s, GPtrArray *ckpts)
{
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
void bw_stats_held_vars(prog_stats *s, GArray *segs, pmap *hold)
{
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = 0; i < segs->len; i++) {
        segment seg = g_array_index(segs, segment, i);
        for (size_t o = seg.begin; o < seg.end; o++) {
            const ir_op *op = s->ops->pdata[o];
            bw_arg_names(op, true, buf);
            for (size_t k = 0; k < buf->len; k++) {
                var_deps *d = pmap_get(s->deps, buf->pdata[k]);
                if (d->n_readers && d->max_reader >= seg.end)
                    pmap_add(hold, buf->pdata[k]);
            }
            bw_arg_names(op, false, buf);
            for (size_t k = 0; k < buf->len; k++) {
                var_deps *d = pmap_get(s->deps, buf->pdata[k]);
                if (d->n_writers && d->min_writer < seg.begin)
                    pmap_add(hold, buf->pdata[k]);
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
            pmap_add(hold, buf->pdata[k]);
    }
    for (size_t i = 0; i < s->order->len; i++) {
        const var_deps *d = s->order->pdata[i];
        if (!d->n_writers && d->n_readers && !bw_persistable(s->block, d->name))
            pmap_add(hold, d->name);
    }
    g_ptr_array_free(buf, TRUE);
}

void bw_stats_free(prog_stats *s)
{
    PMAP_FOR(s->deps, e)
        free(e->val);
    pmap_destroy(s->deps);
    g_ptr_array_free(s->order, TRUE);
}
