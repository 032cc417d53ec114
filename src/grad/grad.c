/* grad.c - the maker helpers (Paddle's GradOpDescMakerBase) and the
 * interpreter of table rows.
 *
 * A row's `ins` / `outs` are space-separated tokens:
 *   S       input slot S = forward input S
 *   O:S     input slot S = forward output S
 *   OG:S    input slot S@GRAD = OutputGrad(S)
 *   IG:S    output slot S@GRAD = InputGrad(S) (drop mode: a no-grad input
 *           leaves an empty list)
 *   IG*:S   the same in keep mode (positional, "@EMPTY@" placeholders)
 * A leading '?' makes a token conditional on the forward op having that
 * slot (HasInput for S and IG, HasOutput for O and OG), as Paddle's makers
 * guard dispensable slots. */
#include "grad.h"
#include "../ir/env.h"
#include "../ir/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const ir_slot empty_slot = {0};

/* grad_name's cache: small and direct-mapped.  A name's grad is asked for
 * by neighbouring ops (the writer's OutputGrad, the reader's InputGrad), so
 * recent names hit; a miss costs one intern lookup, and a big table (one
 * cache miss per lookup) would cost about as much. */
enum { RECENT = 1024 };
typedef struct {
    struct recent_name {
        const char *fwd, *grad;
    } recent[RECENT];
    /* grad_maker* -> its default grad type (type + "_grad"). */
    pmap grad_types;
} grad_caches;

static void free_caches(void *p)
{
    grad_caches *gc = p;
    pmap_free(&gc->grad_types);
    free(gc);
}

/* The caches hold interned pointers: they live in the env, which ends
 * with those (ir_intern_shutdown). */
static grad_caches *caches(void)
{
    grad_caches *gc = pdt_env_get(PDT_ENV_GRAD_NAMES);
    return gc ? gc : pdt_env_put(PDT_ENV_GRAD_NAMES, xcalloc(1, sizeof *gc), free_caches);
}

const char *grad_name(const char *fwd)
{
    struct recent_name *recent = caches()->recent;
    size_t slot = pmap_home_(fwd, RECENT);
    if (recent[slot].fwd == fwd)
        return recent[slot].grad;
    const char *key = fwd;
    fwd = ir_intern(fwd);
    size_t n = strlen(fwd);
    char stackbuf[256];
    char *buf = n + sizeof GRAD_SUFFIX <= sizeof stackbuf ? stackbuf
                                                          : xmalloc(n + sizeof GRAD_SUFFIX);
    memcpy(buf, fwd, n);
    memcpy(buf + n, GRAD_SUFFIX, sizeof GRAD_SUFFIX);
    const char *g = ir_intern_bytes(buf, n + sizeof GRAD_SUFFIX - 1);
    if (buf != stackbuf)
        free(buf);
    /* Only interned keys are cached: a caller's buffer may change. */
    if (key == fwd) {
        recent[slot].fwd = fwd;
        recent[slot].grad = g;
    }
    return g;
}

bool grad_is_grad_name(const char *name)
{
    return strstr(name, GRAD_SUFFIX) != NULL;
}

/* x@GRAD -> x; x@GRAD@GRAD -> x; y@GRAD@RENAME@1 -> y;
 * z@GRAD_slice_0@GRAD -> z@GRAD_slice_0; grad/grad/z@GRAD@RENAME@block0@1@GRAD -> z.
 * The first match of "@GRAD" followed by '@' (regex `@GRAD+@`, where the '+'
 * repeats the final 'D'), else a trailing "@GRAD". */
const char *grad_strip_suffix(const char *name)
{
    size_t len = strlen(name);
    size_t cut = len;
    bool found = false;
    for (const char *p = strstr(name, "@GRA"); p; p = strstr(p + 1, "@GRA")) {
        const char *q = p + 4;
        if (*q != 'D')
            continue;
        while (*q == 'D')
            q++;
        if (*q == '@') {
            cut = (size_t)(p - name);
            found = true;
            break;
        }
    }
    if (!found && len >= 5 && strcmp(name + len - 5, GRAD_SUFFIX) == 0)
        cut = len - 5;
    /* rfind("grad/") over the whole name, then slice the cut name. */
    const char *last = NULL;
    for (const char *p = strstr(name, "grad/"); p; p = strstr(p + 1, "grad/"))
        last = p;
    size_t start = last ? (size_t)(last - name) + 5 : 0;
    if (start > cut)
        return ir_intern("");
    return ir_intern_n(name + start, cut - start);
}

ir_op *grad_new_op(grad_ctx *c, const char *type)
{
    ir_op *op = ir_op_new(c->prog, type);
    g_ptr_array_add(c->out, op);
    return op;
}

/* Slot lookup by interned name: a pointer compare per slot. */
static const ir_slot *find_slot(const ir_slot *slots, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (slots[i].name == name)
            return &slots[i];
    return NULL;
}

const ir_slot *grad_fwd_in(grad_ctx *c, const char *slot)
{
    const ir_slot *s = find_slot(ir_op_ins(c->fwd), c->fwd->n_inputs, ir_intern(slot));
    return s ? s : &empty_slot;
}

const ir_slot *grad_fwd_out(grad_ctx *c, const char *slot)
{
    const ir_slot *s = find_slot(ir_op_outs(c->fwd), c->fwd->n_outputs, ir_intern(slot));
    return s ? s : &empty_slot;
}

bool grad_has_in(grad_ctx *c, const char *slot)
{
    return find_slot(ir_op_ins(c->fwd), c->fwd->n_inputs, ir_intern(slot)) != NULL;
}

bool grad_has_out(grad_ctx *c, const char *slot)
{
    return find_slot(ir_op_outs(c->fwd), c->fwd->n_outputs, ir_intern(slot)) != NULL;
}

void grad_set_in(grad_ctx *c, ir_op *op, const char *dst, const char *src)
{
    const ir_slot *s = grad_fwd_in(c, src);
    ir_op_set_input(op, dst, s->args, s->n_args);
}

void grad_set_out_as_in(grad_ctx *c, ir_op *op, const char *dst, const char *src)
{
    const ir_slot *s = grad_fwd_out(c, src);
    ir_op_set_input(op, dst, s->args, s->n_args);
}

void grad_set_og(grad_ctx *c, ir_op *op, bool as_output, const char *dst, const char *src)
{
    const ir_slot *s = grad_fwd_out(c, src);
    const char **names = g_newa(const char *, s->n_args + 1);
    for (size_t i = 0; i < s->n_args; i++) {
        names[i] = grad_name(s->args[i]);
        pmap_put(c->grad_to_var, names[i], (void *)s->args[i]);
    }
    if (as_output)
        ir_op_set_output(op, dst, names, s->n_args);
    else
        ir_op_set_input(op, dst, names, s->n_args);
}

bool grad_set_ig(grad_ctx *c, ir_op *op, bool as_input, const char *dst, const char *src,
                 bool drop)
{
    const ir_slot *s = grad_fwd_in(c, src);
    if (drop && s->n_args > 1) {
        snprintf(c->err, sizeof c->err,
                 "input '%s' holds %" PRIu32
                 " vars but the gradient maker of '%s' allows at most one",
                 src, s->n_args, c->fwd->type);
        return false;
    }
    const char **names = g_newa(const char *, s->n_args + 1);
    size_t n = 0;
    const char *empty = IR_WK(EMPTY);
    for (size_t i = 0; i < s->n_args; i++) {
        const char *g = grad_name(s->args[i]);
        if (c->no_grad && pmap_has(c->no_grad, g)) {
            if (!drop)
                names[n++] = empty;
            continue;
        }
        pmap_put(c->grad_to_var, g, (void *)s->args[i]);
        names[n++] = g;
    }
    if (as_input)
        ir_op_set_input(op, dst, names, n);
    else
        ir_op_set_output(op, dst, names, n);
    return true;
}

/* ---- table rows ------------------------------------------------------- */

/* A spec token, parsed once per row (see the top of this file). */
typedef struct {
    char kind;              /* 'I' input, 'O' output-as-input, 'G' OutputGrad,
                             * 'D' InputGrad drop, 'K' InputGrad keep */
    bool cond;
    const char *slot, *gslot;   /* interned */
} spec_tok;

typedef struct {
    size_t n;
    spec_tok *t;
} spec;

static spec *parse_spec(const char *text, bool outs)
{
    spec *sp = xcalloc(1, sizeof(spec));
    sp->t = xcalloc(text ? strlen(text) / 2 + 1 : 1, sizeof(spec_tok));
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if (e == p)
            break;
        spec_tok *t = &sp->t[sp->n++];
        const char *q = p;
        if (*q == '?') {
            t->cond = true;
            q++;
        }
        const char *colon = memchr(q, ':', (size_t)(e - q));
        const char *name = colon ? colon + 1 : q;
        size_t klen = colon ? (size_t)(colon - q) : 0;
        if (outs)
            t->kind = klen == 3 && q[2] == '*' ? 'K' : 'D';
        else
            t->kind = !klen ? 'I' : klen == 1 ? 'O' : 'G';
        t->slot = ir_intern_n(name, (size_t)(e - name));
        t->gslot = ir_internf("%s" GRAD_SUFFIX, t->slot);
        p = e;
    }
    return sp;
}

/* Parsed specs by row; built on first use, kept until the interned names
 * they hold go away (ir_intern_shutdown). */
static void free_specs(void *p)   /* the env's row text literal -> spec* */
{
    pmap *parsed_specs = p;
    PMAP_FOR(parsed_specs, slot) {
        spec *sp = slot->val;
        free(sp->t);
        free(sp);
    }
    pmap_free(parsed_specs);
    free(parsed_specs);
}

static const spec *row_spec(const char *text, bool outs)
{
    if (!text)
        return NULL;
    pmap *parsed_specs = pdt_env_get(PDT_ENV_GRAD_SPECS);
    if (!parsed_specs)
        parsed_specs = pdt_env_put(PDT_ENV_GRAD_SPECS, xcalloc(1, sizeof *parsed_specs),
                                   free_specs);
    /* The ins and outs strings of the table are distinct literals, and a
     * literal is only ever used as one of the two. */
    spec *sp = pmap_get(parsed_specs, text);
    if (!sp) {
        sp = parse_spec(text, outs);
        pmap_put(parsed_specs, text, sp);
    }
    return sp;
}

static bool apply_spec(grad_ctx *c, ir_op *op, const char *text, bool outs)
{
    const spec *sp = row_spec(text, outs);
    for (size_t i = 0; sp && i < sp->n; i++) {
        const spec_tok *t = &sp->t[i];
        switch (t->kind) {
        case 'I':
            if (!t->cond || grad_has_in(c, t->slot))
                grad_set_in(c, op, t->slot, t->slot);
            break;
        case 'O':
            if (!t->cond || grad_has_out(c, t->slot))
                grad_set_out_as_in(c, op, t->slot, t->slot);
            break;
        case 'G':
            if (!t->cond || grad_has_out(c, t->slot))
                grad_set_og(c, op, false, t->gslot, t->slot);
            break;
        default:
            if (t->cond && !grad_has_in(c, t->slot))
                break;
            if (!grad_set_ig(c, op, false, t->gslot, t->slot, t->kind == 'D'))
                return false;
        }
    }
    return true;
}

/* Slot names of the forward op, sorted (Paddle's InputNames() iterates a
 * std::map). */
static void sorted_slots(const ir_slot *slots, size_t n, const char **out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = slots[i].name;
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && strcmp(out[k - 1], out[k]) > 0; k--) {
            const char *t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
}

static bool make_default(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, ir_internf("%s_grad", c->fwd->type));
    const char **names = g_newa(const char *, c->fwd->n_inputs + c->fwd->n_outputs + 1);
    sorted_slots(ir_op_ins(c->fwd), c->fwd->n_inputs, names);
    for (size_t i = 0; i < c->fwd->n_inputs; i++) {
        grad_set_in(c, op, names[i], names[i]);
        if (!grad_set_ig(c, op, false, ir_internf("%s" GRAD_SUFFIX, names[i]), names[i], true))
            return false;
    }
    sorted_slots(ir_op_outs(c->fwd), c->fwd->n_outputs, names);
    for (size_t i = 0; i < c->fwd->n_outputs; i++) {
        grad_set_out_as_in(c, op, names[i], names[i]);
        grad_set_og(c, op, false, ir_internf("%s" GRAD_SUFFIX, names[i]), names[i]);
    }
    ir_op_copy_attrs(op, c->fwd);
    return true;
}

bool grad_make(const grad_maker *m, grad_ctx *c)
{
    c->err[0] = '\0';
    switch (m->kind) {
    case GM_NONE:
        return true;
    case GM_DEFAULT:
        return make_default(c);
    case GM_FN:
        return m->fn(c);
    case GM_SPEC:
        break;
    }
    const char *type = m->grad_type;
    if (!type) {
        pmap *grad_types = &caches()->grad_types;
        type = pmap_get(grad_types, m);
        if (!type) {
            type = ir_internf("%s_grad", m->type);
            pmap_put(grad_types, m, (void *)type);
        }
    }
    ir_op *op = grad_new_op(c, type);
    if (!apply_spec(c, op, m->ins, false))
        return false;
    if ((m->flags & GF_MKLDNN_X) && !ir_op_input(op, "X") &&
        ir_op_get_bool(c->fwd, "use_mkldnn", false))
        grad_set_in(c, op, "X", "X");
    if (!apply_spec(c, op, m->outs, true))
        return false;
    if (!(m->flags & GF_NO_ATTRS))
        ir_op_copy_attrs(op, c->fwd);
    return true;
}

/* ---- var types -------------------------------------------------------- */

int grad_var_type(const ir_block *b, const ir_op *op, const char *grad)
{
    const char *lt = IR_WK(lookup_table_grad), *lt2 = IR_WK(lookup_table_v2_grad),
               *sum = IR_WK(sum), *slice = IR_WK(slice_grad), *nce = IR_WK(nce_grad);
    const char *t = op->type;
    if (t == nce) {
        /* NCEOpGradVarTypeInference: only Weight@GRAD follows is_sparse */
        const ir_slot *w = ir_op_output(op, "Weight" GRAD_SUFFIX);
        bool weight = w && w->n_args && w->args[0] == grad;
        return weight && ir_op_get_bool(op, "is_sparse", false) ? IR_SELECTED_ROWS : -1;
    }
    if (t != lt && t != lt2 && t != sum && t != slice)
        return -1;
    if (t == lt || t == lt2)
        return ir_op_get_bool(op, "is_sparse", false) ? IR_SELECTED_ROWS : IR_LOD_TENSOR;
    if (t == sum) {
        /* SumOpVarTypeInference: SELECTED_ROWS only when every input is. */
        const ir_slot *x = ir_op_input(op, "X");
        bool all_sr = x && x->n_args > 0;
        for (size_t i = 0; x && i < x->n_args; i++) {
            const ir_var *v = ir_block_find_var_recursive(b, x->args[i]);
            if (!v || v->type != IR_SELECTED_ROWS)
                all_sr = false;
        }
        bool any_array = false;
        for (size_t i = 0; x && i < x->n_args; i++) {
            const ir_var *v = ir_block_find_var_recursive(b, x->args[i]);
            if (v && v->type == IR_LOD_TENSOR_ARRAY)
                any_array = true;
        }
        if (any_array)
            return IR_LOD_TENSOR_ARRAY;
        return all_sr ? IR_SELECTED_ROWS : IR_LOD_TENSOR;
    }
    if (t == slice) {
        const ir_var *v = ir_block_find_var_recursive(b, grad_strip_suffix(grad));
        return v ? v->type : -1;
    }
    return -1;
}
