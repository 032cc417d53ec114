/* vars.c - the vars of two blocks, by name, every VarDesc field
 * (pdiff_compare_vars, diff_internal.h).  The order of the vars is not
 * compared: Paddle looks vars up by name. */
#include <string.h>

#include "../ir/attr_format.h"
#include "../ir/tensors.h"
#include "diff_internal.h"

/* The names --ignore-var-field takes, one bit each in this order. */
const char *const pdiff_var_fields[] = {
    "type", "tensor", "data_type", "dims", "lod_level", "persistable", "need_check_feed",
    "is_parameter", "stop_gradient", "attrs", "reader", "tuple", "unknown"};
const size_t pdiff_n_var_fields = sizeof pdiff_var_fields / sizeof *pdiff_var_fields;

unsigned pdiff_var_field_bit(const char *name)
{
    for (size_t i = 0; i < pdiff_n_var_fields; i++)
        if (!strcmp(name, pdiff_var_fields[i]))
            return 1u << i;
    return 0;
}

static const char *type_name(int t)
{
    static const struct { int t; const char *name; } names[] = {
        {IR_LOD_TENSOR, "LOD_TENSOR"}, {IR_SELECTED_ROWS, "SELECTED_ROWS"},
        {IR_FEED_MINIBATCH, "FEED_MINIBATCH"}, {IR_FETCH_LIST, "FETCH_LIST"},
        {IR_STEP_SCOPES, "STEP_SCOPES"}, {IR_LOD_RANK_TABLE, "LOD_RANK_TABLE"},
        {IR_LOD_TENSOR_ARRAY, "LOD_TENSOR_ARRAY"}, {IR_PLACE_LIST, "PLACE_LIST"},
        {IR_READER, "READER"}, {IR_RAW, "RAW"}, {IR_TUPLE, "TUPLE"}, {IR_STRING_T, "STRING"},
        {IR_STRINGS_T, "STRINGS"}, {IR_VOCAB, "VOCAB"}, {IR_FEED_LIST, "FEED_LIST"},
        {IR_PSTRING, "PSTRING"}, {IR_SPARSE_COO, "SPARSE_COO"}, {IR_SPARSE_CSR, "SPARSE_CSR"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (names[i].t == t)
            return names[i].name;
    const char *d = ir_dtype_name(t);
    return d ? d : "?";
}

static const char *slot_name(ir_tensor_slot s)
{
    static const char *const names[] = {"(none)", "selected_rows", "lod_tensor", "tensor_array",
                                        "string", "strings", "vocab", "sparse_coo", "sparse_csr"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

static void opt_bool(GString *g, bool has, bool v)
{
    g_string_append(g, has ? (v ? "true" : "false") : "(unset)");
}

/* Raw sub-message bytes in hex: equal text iff equal bytes. */
static void bytes(GString *g, bool has, ir_bytes b)
{
    if (!has) {
        g_string_append(g, "(unset)");
        return;
    }
    g_string_append_c(g, '<');
    for (size_t i = 0; i < b.len; i++)
        g_string_append_printf(g, "%02x", b.data[i]);
    g_string_append_c(g, '>');
}

/* Field F of v as text: what is compared and shown. */
static void field(GString *g, const ir_var *v, size_t f)
{
    const ir_var_rare *r = ir_var_rare_of(v);
    bool tensor = v->tensor_slot != IR_TD_NONE;
    g_string_truncate(g, 0);
    switch (f) {
    case 0: g_string_append(g, type_name(v->type)); break;
    case 1: g_string_append(g, slot_name(v->tensor_slot)); break;
    case 2: g_string_append(g, tensor ? type_name(v->dtype) : "(none)"); break;
    case 3:
        g_string_append_c(g, '[');
        for (uint32_t i = 0; i < v->n_dims; i++)
            g_string_append_printf(g, "%s%" G_GINT64_FORMAT, i ? ", " : "", (gint64)v->dims[i]);
        g_string_append_c(g, ']');
        break;
    case 4:
        if (v->has_lod_level) g_string_append_printf(g, "%d", (int)v->lod_level);
        else g_string_append(g, "(unset)");
        break;
    case 5: opt_bool(g, v->has_persistable, v->persistable); break;
    case 6: opt_bool(g, v->has_need_check_feed, v->need_check_feed); break;
    case 7: opt_bool(g, v->has_is_parameter, v->is_parameter); break;
    case 8: opt_bool(g, v->has_stop_gradient, v->stop_gradient); break;
    case 9:
        g_string_append_c(g, '{');
        for (size_t i = 0; i < r->n_var_attrs; i++) {
            g_string_append_printf(g, "%s%s=", i ? ", " : "", r->var_attrs[i].name);
            ir_attr_format(g, &r->var_attrs[i]);
        }
        g_string_append_c(g, '}');
        break;
    case 10: bytes(g, r->has_reader, r->reader_raw); break;
    case 11: bytes(g, r->has_tuple, r->tuple_raw); break;
    default: {
        const ir_bytes parts[] = {r->type_unknown, r->tensor_unknown, r->lod_unknown, r->unknown};
        if (!(parts[0].len + parts[1].len + parts[2].len + parts[3].len)) {
            g_string_append(g, "(none)");
            break;
        }
        for (size_t k = 0; k < 4; k++) {    /* VarType's, TensorDesc's, LoD's, VarDesc's */
            g_string_append_c(g, k ? '|' : '<');
            for (size_t i = 0; i < parts[k].len; i++)
                g_string_append_printf(g, "%02x", parts[k].data[i]);
        }
        g_string_append_c(g, '>');
        break;
    }
    }
}

/* The common case, told without formatting: every inline field alike and
 * neither var has rare parts. */
static bool quick_equal(const ir_var *x, const ir_var *y)
{
    return !x->rare && !y->rare && x->type == y->type && x->dtype == y->dtype &&
           x->n_dims == y->n_dims &&
           (!x->n_dims || !memcmp(x->dims, y->dims, x->n_dims * sizeof *x->dims)) &&
           x->lod_level == y->lod_level && x->tensor_slot == y->tensor_slot &&
           x->has_lod_level == y->has_lod_level && x->has_persistable == y->has_persistable &&
           x->persistable == y->persistable && x->has_need_check_feed == y->has_need_check_feed &&
           x->need_check_feed == y->need_check_feed && x->has_is_parameter == y->has_is_parameter &&
           x->is_parameter == y->is_parameter && x->has_stop_gradient == y->has_stop_gradient &&
           x->stop_gradient == y->stop_gradient;
}

static void compare_var(pdiff_cmp *c, const ir_var *x, const ir_var *y)
{
    if (quick_equal(x, y))
        return;
    for (size_t f = 0; f < pdiff_n_var_fields; f++) {
        if (c->o->ignore_var_fields & (1u << f))
            continue;
        field(c->va, x, f);
        field(c->vb, y, f);
        if (!strcmp(c->va->str, c->vb->str))
            continue;
        g_string_printf(c->what, "var %s: %s", x->name, pdiff_var_fields[f]);
        pdiff_emit(c, PDIFF_VAR, NULL, -1, NULL, -1, c->what->str, c->va->str, c->vb->str);
    }
}

/* "LOD_TENSOR FP32 [784, 256] persistable": a var added or removed. */
static const char *var_text(GString *g, GString *tmp, const ir_var *v)
{
    g_string_assign(g, type_name(v->type));
    if (v->tensor_slot != IR_TD_NONE) {
        field(tmp, v, 3);
        g_string_append_printf(g, " %s %s", type_name(v->dtype), tmp->str);
    }
    if (v->has_lod_level && v->lod_level)
        g_string_append_printf(g, " lod_level %d", (int)v->lod_level);
    static const char *const flags[] = {"persistable", "need_check_feed", "is_parameter",
                                        "stop_gradient"};
    bool set[] = {v->persistable, v->need_check_feed, v->is_parameter, v->stop_gradient};
    for (size_t i = 0; i < 4; i++)
        if (set[i])
            g_string_append_printf(g, " %s", flags[i]);
    return g->str;
}

static void one_side(pdiff_cmp *c, const ir_var *v, bool in_a)
{
    GString *tmp = g_string_new(NULL);
    g_string_printf(c->what, "var %s", v->name);
    const char *t = var_text(in_a ? c->va : c->vb, tmp, v);
    pdiff_emit(c, in_a ? PDIFF_VAR_REMOVED : PDIFF_VAR_ADDED, NULL, -1, NULL, -1, c->what->str,
               in_a ? t : NULL, in_a ? NULL : t);
    g_string_free(tmp, TRUE);
}

/* A block declaring some name twice (check refuses it; diff compares it
 * all the same). */
static bool has_duplicates(const ir_block *b)
{
    size_t live = 0;
    for (size_t i = 0; i < b->n_vars; i++)
        live += !b->vars[i]->removed;
    return ir_block_n_var_names(b) != live;
}

/* Vars matched by name and occurrence: the k-th var named N in x with the
 * k-th var named N in y. */
static void compare_with_duplicates(pdiff_cmp *c, const ir_block *x, const ir_block *y)
{
    GHashTable *in_y = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                             (GDestroyNotify)g_ptr_array_unref);
    GHashTable *seen_x = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *seen_y = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < y->n_vars; i++) {
        const ir_var *w = y->vars[i];
        if (w->removed)
            continue;
        GPtrArray *list = g_hash_table_lookup(in_y, w->name);
        if (!list)
            g_hash_table_insert(in_y, (gpointer)w->name, list = g_ptr_array_new());
        g_ptr_array_add(list, (gpointer)w);
    }
    for (size_t i = 0; i < x->n_vars; i++) {
        const ir_var *v = x->vars[i];
        if (v->removed)
            continue;
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(seen_x, v->name));
        g_hash_table_insert(seen_x, (gpointer)v->name, GUINT_TO_POINTER(k + 1));
        GPtrArray *list = g_hash_table_lookup(in_y, v->name);
        if (list && k < list->len)
            compare_var(c, v, list->pdata[k]);
        else
            one_side(c, v, true);
    }
    for (size_t i = 0; i < y->n_vars; i++) {
        const ir_var *w = y->vars[i];
        if (w->removed)
            continue;
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(seen_y, w->name));
        g_hash_table_insert(seen_y, (gpointer)w->name, GUINT_TO_POINTER(k + 1));
        if (k >= GPOINTER_TO_UINT(g_hash_table_lookup(seen_x, w->name)))
            one_side(c, w, false);
    }
    g_hash_table_destroy(in_y);
    g_hash_table_destroy(seen_x);
    g_hash_table_destroy(seen_y);
}

void pdiff_compare_vars(pdiff_cmp *c, const ir_block *x, const ir_block *y)
{
    if (has_duplicates(x) || has_duplicates(y)) {
        compare_with_duplicates(c, x, y);
        return;
    }
    for (size_t i = 0; i < x->n_vars; i++) {
        const ir_var *v = x->vars[i];
        if (v->removed)
            continue;
        const ir_var *w = ir_block_find_var(y, v->name);
        if (w)
            compare_var(c, v, w);
        else
            one_side(c, v, true);
    }
    for (size_t i = 0; i < y->n_vars; i++) {
        const ir_var *w = y->vars[i];
        if (!w->removed && !ir_block_find_var(x, w->name))
            one_side(c, w, false);
    }
}
