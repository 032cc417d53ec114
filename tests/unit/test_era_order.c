/* test_era_order.c - the runtime (extra) attrs' position per target
 * version (src/passes/era/era_order.c, era.def's ERA_RUNTIME_* rows;
 * research-2x-3x.md 4k): which attrs are runtime ones, the grad types'
 * lookup through their forward type, and the order a made op is left in. */
#include <glib.h>
#include <string.h>

#include "unit.h"

#include "passes/era/era.h"
#include "passes/era/era_rows.h"

START_TEST(rank_per_version)
{
    /* OpDesc::Flush: no runtime group before 2.4; after the sorted
     * attrs_ in v2.4.x; before them in v2.5.x and develop 2024-10. */
    ck_assert_int_eq(pdt_era_runtime_rank(PDT_ERA_NATIVE), 0);
    ck_assert_int_eq(pdt_era_runtime_rank(108), 0);
    ck_assert_int_eq(pdt_era_runtime_rank(203), 0);
    ck_assert_int_eq(pdt_era_runtime_rank(204), 1);
    ck_assert_int_eq(pdt_era_runtime_rank(205), -1);
    ck_assert_int_eq(pdt_era_runtime_rank(206), -1);
    ck_assert_int_eq(pdt_era_runtime_rank(300), -1);
}
END_TEST

START_TEST(runtime_attrs_per_version_and_grad_type)
{
    /* full (fill_constant): use_mkldnn from v2.4.0 */
    ck_assert(pdt_era_is_runtime_attr(204, "fill_constant", "use_mkldnn"));
    ck_assert(!pdt_era_is_runtime_attr(203, "fill_constant", "use_mkldnn"));
    ck_assert(!pdt_era_is_runtime_attr(204, "fill_constant", "value"));
    /* add_n (sum): no extras in v2.4.x/v2.5.x, two in develop */
    ck_assert(!pdt_era_is_runtime_attr(205, "sum", "use_mkldnn"));
    ck_assert(pdt_era_is_runtime_attr(300, "sum", "mkldnn_data_type"));
    /* x_data_format: an elementwise_add extra in 2.4 only */
    ck_assert(pdt_era_is_runtime_attr(204, "elementwise_add", "x_data_format"));
    ck_assert(!pdt_era_is_runtime_attr(205, "elementwise_add", "x_data_format"));
    /* a grad type takes its forward type's list, at any depth */
    ck_assert(pdt_era_is_runtime_attr(205, "elementwise_add_grad", "Scale_x"));
    ck_assert(pdt_era_is_runtime_attr(300, "elementwise_add_grad_grad", "use_mkldnn"));
    ck_assert(!pdt_era_is_runtime_attr(205, "elementwise_add_grad", "axis"));
    ck_assert(!pdt_era_is_runtime_attr(205, "_grad", "use_mkldnn"));
    /* a type without rows of its own at the first step (square has
     * none of its grad), and a deep one: a loop, not a recursion */
    ck_assert(pdt_era_is_runtime_attr(300, "square_grad_grad_grad", "use_mkldnn"));
    GString *deep = g_string_new("square");
    for (int i = 0; i < 200000; i++)
        g_string_append(deep, "_grad");
    ck_assert(pdt_era_is_runtime_attr(300, deep->str, "use_mkldnn"));
    g_string_free(deep, TRUE);
    ck_assert(!pdt_era_is_runtime_attr(205, "no_such_op_grad", "use_mkldnn"));
    /* the bound runtime_rows skips longer names by */
    for (size_t i = 0; i < era_n_rows(); i++)
        ck_assert_uint_le(strlen(era_row_at(i)->op), ERA_TYPE_MAX);
}
END_TEST

/* The names of OP's attrs that two_ops set, in order, joined by spaces
 * (the era step's other rows add more). */
static void attr_names(ir_op *op, char *buf, size_t cap)
{
    static const char *const set[] = {"use_mkldnn", "axis", "Scale_x", "op_role"};
    const ir_attr *a = ir_op_attrs(op);
    buf[0] = '\0';
    for (size_t i = 0; i < op->n_attrs; i++)
        for (size_t k = 0; k < 4; k++)
            if (!strcmp(a[i].name, set[k])) {
                if (buf[0])
                    g_strlcat(buf, " ", cap);
                g_strlcat(buf, a[i].name, cap);
            }
}

/* An attr's place in its op's array: settling by it keeps the order. */
static int in_place(const ir_attr *attr, void *ctx)
{
    return (int)(attr - (const ir_attr *)ctx);
}

/* elementwise_max made by a pass (its attrs set unsorted), the same op as
 * if read and left alone (not made, clean, in the order set), and as if
 * read and changed by a pass (not made, changed). */
static ir_program *two_ops(void)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    for (int k = 0; k < 3; k++) {
        ir_op *op = ir_block_append_op(b, "elementwise_max");
        ir_op_set_bool(op, "use_mkldnn", false);
        ir_op_set_int(op, "axis", -1);
        ir_op_set_float(op, "Scale_x", 1.0f);
        ir_op_set_int(op, "op_role", 2);
        op->made = k == 0;
        if (k == 1)
            ir_op_settle_ranked(op, in_place, ir_op_attrs(op));
    }
    return p;
}

START_TEST(made_ops_take_the_version_order)
{
    static const struct {
        int era;
        const char *made;
    } want[] = {
        {204, "axis op_role Scale_x use_mkldnn"},
        {205, "Scale_x use_mkldnn axis op_role"},
        {300, "Scale_x use_mkldnn axis op_role"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ir_program *p = two_ops();
        ir_block *b = p->blocks[0];
        char input[256];
        attr_names(b->ops[1], input, sizeof input);
        pdt_era_apply_program(NULL, p, want[i].era);
        pdt_era_apply_program(NULL, p, want[i].era); /* twice: nothing more */
        char got[256];
        attr_names(b->ops[0], got, sizeof got);
        ck_assert_str_eq(got, want[i].made);
        /* the input's op left alone is never touched */
        attr_names(b->ops[1], got, sizeof got);
        ck_assert_str_eq(got, input);
        ck_assert(!ir_op_changed(b->ops[1]));
        /* one a pass changed is re-flushed as a made one (OpDesc(proto)
         * of v2.4.2 and v2.5.2 routes a file's extra attrs to
         * runtime_attrs_; research 4q) */
        attr_names(b->ops[2], got, sizeof got);
        ck_assert_str_eq(got, want[i].made);
        ir_program_free(p);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("era_order");
    TCase *tc = tcase_create("era_order");
    tcase_add_test(tc, rank_per_version);
    tcase_add_test(tc, runtime_attrs_per_version_and_grad_type);
    tcase_add_test(tc, made_ops_take_the_version_order);
    suite_add_tcase(s, tc);
    return s;
}
