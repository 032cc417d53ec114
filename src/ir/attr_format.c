/* attr_format.c - see attr_format.h. */
#include "attr_format.h"

#include <string.h>

const char *ir_attr_type_name(ir_attr_type t)
{
    static const char *const names[] = {
        "INT", "FLOAT", "STRING", "INTS", "FLOATS", "STRINGS", "BOOLEAN", "BOOLEANS",
        "BLOCK", "LONG", "BLOCKS", "LONGS", "FLOAT64S", "VAR", "VARS", "FLOAT64",
        "SCALAR", "SCALARS"};
    if ((unsigned)t < sizeof names / sizeof *names)
        return names[t];
    return "TYPE_?";
}

bool ir_attr_is_framework(const char *name)
{
    static const char *const names[] = {"op_role", "op_role_var", "op_namescope",
                                        "op_callstack", "op_device", "with_quant_attr"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

bool ir_attr_is_default_kernel_choice(const ir_attr *a)
{
    /* use_cudnn false: the plain kernel, not cuDNN's (activations carry
     * it from their op maker; era.def, research-2x-3x.md 4l) */
    static const char *const bools[] = {"use_mkldnn", "use_quantizer", "use_cudnn"};
    static const char *const scales[] = {"Scale_x", "Scale_y", "Scale_out"};
    for (size_t i = 0; i < sizeof bools / sizeof *bools; i++)
        if (!strcmp(a->name, bools[i]))
            return a->type == IR_ATTR_BOOLEAN && !a->b;
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++)
        if (!strcmp(a->name, scales[i]))
            return a->type == IR_ATTR_FLOAT && a->f == 1.0f;
    if (!strcmp(a->name, "x_data_format") || !strcmp(a->name, "y_data_format"))
        return a->type == IR_ATTR_STRING && a->s.len == 0;
    if (!strcmp(a->name, "mkldnn_data_type"))
        return a->type == IR_ATTR_STRING && a->s.len == 7 && !memcmp(a->s.data, "float32", 7);
    return false;
}

void ir_format_quoted(GString *g, const uint8_t *s, size_t n)
{
    g_string_append_c(g, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\')
            g_string_append_printf(g, "\\%c", c);
        else if (c == '\n')
            g_string_append(g, "\\n");
        else if (c == '\t')
            g_string_append(g, "\\t");
        else if (c < 0x20 || c >= 0x7f)
            g_string_append_printf(g, "\\%03o", c);
        else
            g_string_append_c(g, (char)c);
    }
    g_string_append_c(g, '"');
}

static void scalar(GString *g, const ir_scalar *s)
{
    if (s->has_b)
        g_string_append(g, s->b ? "true" : "false");
    else if (s->has_i)
        g_string_append_printf(g, "%" G_GINT64_FORMAT, (gint64)s->i);
    else if (s->has_r)
        g_string_append_printf(g, "%.17g", s->r);
    else if (s->has_c)
        g_string_append_printf(g, "(%.17g, %.17g)", s->c_r, s->c_i);
    else
        g_string_append(g, "(unset)");
}

/* A list: "[" items "]", each printed by ITEM(g, i). */
#define LIST(g, n, ITEM)                         \
    do {                                         \
        g_string_append_c(g, '[');               \
        for (size_t i_ = 0; i_ < (n); i_++) {    \
            if (i_)                              \
                g_string_append(g, ", ");        \
            ITEM(g, i_);                         \
        }                                        \
        g_string_append_c(g, ']');               \
    } while (0)

static void format_list(GString *g, const ir_attr *a)
{
#define INT_(g, i) g_string_append_printf(g, "%d", (int)a->ints[i])
#define FLT_(g, i) g_string_append_printf(g, "%.9g", (double)a->floats[i])
#define STR_(g, i) ir_format_quoted(g, a->strings[i].data, a->strings[i].len)
#define BOOL_(g, i) g_string_append(g, a->bools[i] ? "true" : "false")
#define BLK_(g, i) g_string_append_printf(g, "%d", (int)a->blocks_idx[i])
#define LONG_(g, i) g_string_append_printf(g, "%" G_GINT64_FORMAT, (gint64)a->longs[i])
#define DBL_(g, i) g_string_append_printf(g, "%.17g", a->float64s[i])
#define VAR_(g, i) g_string_append(g, a->vars_name[i] ? a->vars_name[i] : "")
#define SCL_(g, i) scalar(g, &a->scalars[i])
    switch (a->type) {
    case IR_ATTR_INTS: LIST(g, a->n_ints, INT_); break;
    case IR_ATTR_FLOATS: LIST(g, a->n_floats, FLT_); break;
    case IR_ATTR_STRINGS: LIST(g, a->n_strings, STR_); break;
    case IR_ATTR_BOOLEANS: LIST(g, a->n_bools, BOOL_); break;
    case IR_ATTR_BLOCKS: g_string_append(g, "blocks "); LIST(g, a->n_blocks_idx, BLK_); break;
    case IR_ATTR_LONGS: LIST(g, a->n_longs, LONG_); break;
    case IR_ATTR_FLOAT64S: LIST(g, a->n_float64s, DBL_); break;
    case IR_ATTR_VARS: g_string_append(g, "vars "); LIST(g, a->n_vars_name, VAR_); break;
    default: g_string_append(g, "scalars "); LIST(g, a->n_scalars, SCL_); break;
    }
#undef INT_
#undef FLT_
#undef STR_
#undef BOOL_
#undef BLK_
#undef LONG_
#undef DBL_
#undef VAR_
#undef SCL_
}

/* The one value of a single-valued attr, or "(unset)" when its field is
 * absent (a file may hold an INT attr without an i). */
static void format_single(GString *g, const ir_attr *a)
{
    switch (a->type) {
    case IR_ATTR_INT:
        if (a->has_i) { g_string_append_printf(g, "%d", (int)a->i); return; }
        break;
    case IR_ATTR_FLOAT:
        if (a->has_f) { g_string_append_printf(g, "%.9g", (double)a->f); return; }
        break;
    case IR_ATTR_STRING:
        if (a->has_s) { ir_format_quoted(g, a->s.data, a->s.len); return; }
        break;
    case IR_ATTR_BOOLEAN:
        if (a->has_b) { g_string_append(g, a->b ? "true" : "false"); return; }
        break;
    case IR_ATTR_BLOCK:
        if (a->has_block_idx) { g_string_append_printf(g, "block %d", (int)a->block_idx); return; }
        break;
    case IR_ATTR_LONG:
        if (a->has_l) { g_string_append_printf(g, "%" G_GINT64_FORMAT, (gint64)a->l); return; }
        break;
    case IR_ATTR_VAR:
        if (a->has_var_name) { g_string_append_printf(g, "var %s", a->var_name); return; }
        break;
    case IR_ATTR_FLOAT64:
        if (a->has_float64) { g_string_append_printf(g, "%.17g", a->float64); return; }
        break;
    default:
        if (a->has_scalar && a->scalar) {
            g_string_append(g, "scalar ");
            scalar(g, a->scalar);
            return;
        }
        break;
    }
    g_string_append(g, "(unset)");
}

void ir_attr_format(GString *g, const ir_attr *a)
{
    switch (a->type) {
    case IR_ATTR_INTS: case IR_ATTR_FLOATS: case IR_ATTR_STRINGS: case IR_ATTR_BOOLEANS:
    case IR_ATTR_BLOCKS: case IR_ATTR_LONGS: case IR_ATTR_FLOAT64S: case IR_ATTR_VARS:
    case IR_ATTR_SCALARS:
        format_list(g, a);
        return;
    default:
        format_single(g, a);
    }
}
