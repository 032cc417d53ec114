/* test_hash_order_pstart_init.c - a pserver startup's copies of 2.3's
 * paddle.nn.initializer Dirac (reshape, scatter) and Orthogonal (qr ...
 * reshape2, transpose2, scale) ops take Paddle 2.2's and 2.3's attr order
 * (hash_order_pstart.c, py_order.def's init22 @pstart rows, research
 * 4z11).  Each source has every proto attr and the framework attrs but
 * op_callstack (as a 2.3-saved program, pdtrans writing no traceback) and
 * an empty op_role_var; Operator.__init__'s history is the given attrs in
 * proto order, op_callstack among them, then op_role_var's default.  The
 * expected orders come from a separate Python model of the two libstdc++
 * policies (gcc 4.8's table for 2.2, HT_GCC8_LIB5 for 2.3; the same model
 * gives test_hash_order_dist's ur18), fed those histories. */
#include "unit.h"
#include "passes/era/era.h"
#include "passes/pass.h"
#include <glib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof *(a))

static const char *const FW[] = {"op_role", "op_role_var", "op_namescope", "op_device",
                                 "with_quant_attr"};

/* An op of TYPE writing OUT with ATTRS (proto) and the framework attrs,
 * each INT 0 but op_role_var (empty STRINGS). */
static ir_op *op_with(ir_block *b, const char *type, const char *proto, const char *out, bool made)
{
    ir_op *op = ir_block_append_op(b, type);
    op->made = made;
    ir_op_set_output1(op, "Out", out);
    gchar **names = g_strsplit(proto, " ", -1);
    for (gchar **n = names; *n; n++)
        if (**n)
            ir_op_set_int(op, *n, 0);
    g_strfreev(names);
    for (size_t i = 0; i < N(FW); i++)
        if (!strcmp(FW[i], "op_role_var"))
            ir_op_set_strings(op, FW[i], NULL, 0);
        else
            ir_op_set_int(op, FW[i], 0);
    return op;
}

typedef struct {
    const char *type, *proto, *o22, *o23;
} case_row;

static const case_row cases[] = {
    {"scale", "scale bias bias_after_scale use_mkldnn",
     "op_device op_role_var with_quant_attr op_namescope op_role use_mkldnn bias_after_scale bias scale",
     "op_role_var with_quant_attr op_device scale bias bias_after_scale op_role use_mkldnn op_namescope"},
    {"reshape", "shape use_mkldnn",
     "op_device op_role_var with_quant_attr op_namescope op_role use_mkldnn shape",
     "op_role_var with_quant_attr use_mkldnn op_namescope shape op_device op_role"},
    {"scatter", "overwrite", "op_device op_role_var with_quant_attr op_namescope op_role overwrite",
     "op_role op_role_var overwrite op_namescope op_device with_quant_attr"},
    {"reshape2", "shape use_mkldnn use_quantizer mkldnn_data_type",
     "op_device op_role_var with_quant_attr op_namescope op_role mkldnn_data_type use_quantizer "
     "use_mkldnn shape",
     "op_role_var with_quant_attr op_device use_mkldnn shape use_quantizer op_namescope "
     "mkldnn_data_type op_role"},
    {"transpose2", "axis use_mkldnn data_format use_quantizer mkldnn_data_type",
     "op_role_var axis data_format use_quantizer mkldnn_data_type op_role op_namescope use_mkldnn "
     "with_quant_attr op_device",
     "op_device use_mkldnn op_role_var axis with_quant_attr data_format use_quantizer op_namescope "
     "mkldnn_data_type op_role"},
    {"elementwise_mul",
     "axis use_mkldnn x_data_format y_data_format use_quantizer mkldnn_data_type Scale_x Scale_y "
     "Scale_out",
     "op_role_var with_quant_attr op_device op_namescope axis use_mkldnn Scale_x y_data_format "
     "x_data_format use_quantizer Scale_y mkldnn_data_type Scale_out op_role",
     "op_device op_role Scale_y with_quant_attr Scale_x use_mkldnn op_role_var Scale_out axis "
     "x_data_format op_namescope mkldnn_data_type y_data_format use_quantizer"},
    {"qr", "mode", "op_role_var with_quant_attr op_namescope op_role op_device mode",
     "op_role_var op_role mode op_namescope op_device with_quant_attr"},
    {"diag_v2", "offset padding_value",
     "op_role_var with_quant_attr op_namescope op_role op_device padding_value offset",
     "with_quant_attr padding_value op_role_var offset op_role op_namescope op_device"},
    {"sign", "", "op_device op_role_var with_quant_attr op_namescope op_role",
     "with_quant_attr op_role_var op_device op_role op_namescope"},
};

static void assert_order(const ir_op *op, const char *want)
{
    gchar **names = g_strsplit(want, " ", -1);
    size_t n = g_strv_length(names);
    ck_assert_msg(op->n_attrs == n, "%s: %zu attrs, want %zu", op->type, (size_t)op->n_attrs, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(!strcmp(ir_op_attrs(op)[i].name, names[i]), "%s: attr %zu is %s, want %s",
                      op->type, i, ir_op_attrs(op)[i].name, names[i]);
    g_strfreev(names);
}

START_TEST(initializer_copies_take_paddle_22_23_order)
{
    static const int eras[] = {202, 203};
    for (size_t e = 0; e < N(eras); e++) {
        ir_program *p = ir_program_new(), *origin = ir_program_new();
        ir_block *b = ir_program_add_block(p, -1), *ob = ir_program_add_block(origin, -1);
        ir_op *copies[N(cases)];
        for (size_t c = 0; c < N(cases); c++) {
            char *out = g_strdup_printf("v%zu", c);
            op_with(ob, cases[c].type, cases[c].proto, out, false);
            copies[c] = op_with(b, cases[c].type, cases[c].proto, out, true);
            g_free(out);
        }
        pdt_ctx ctx;
        pdt_ctx_init(&ctx);
        ctx.startup = origin;
        pdt_output o = {"pserver_0.startup", p, true};
        ctx.staged = &o;
        ctx.n_staged = 1;
        pdt_era_apply_program(&ctx, p, eras[e]);
        ctx.startup = NULL;
        ctx.staged = NULL;
        ctx.n_staged = 0;
        pdt_ctx_free(&ctx);
        for (size_t c = 0; c < N(cases); c++)
            assert_order(copies[c], eras[e] == 202 ? cases[c].o22 : cases[c].o23);
        ir_program_free(p);
        ir_program_free(origin);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order_pstart_init");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, initializer_copies_take_paddle_22_23_order);
    suite_add_tcase(s, tc);
    return s;
}
