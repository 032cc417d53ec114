/* test_hash_order_geo.c - the attr order of the ops GeoSgdTranspiler
 * builds, 1.6-2.3 (src/passes/era/hash_order_geo.c, research-2x-3x.md
 * 4z3).  Each op is made with Paddle's attrs in name order (pdtrans's
 * own), ordered for one version, and compared with g++ 12's
 * std::unordered_map<std::string, int> m(11) fed the op's insertion
 * history (the dict's attrs in proto order, op_role, op_namescope,
 * op_callstack, then check_attrs's defaults in proto order, op_role_var
 * and the later framework attrs among them), with gcc 4.8's growth forced
 * (m.rehash(23) before the 11th key), op_callstack left out of the
 * printed list as pdtrans writes none.
 * The 2.3 arrays (NAME23) are HT_GCC8_LIB5's orders of the same histories
 * (research 4z8; 3 -> 7 -> 17 buckets), from a model of that policy fed
 * the histories hash_order_dist.c/geo.c insert (traced), each history's
 * gcc 4.8 order checked equal to the array it replaces.
 * The histories:
 *   send 1.6-1.8: send_varnames op_role op_namescope op_callstack
 *     trainer_id epmap sections num merge_add use_send_handler op_role_var
 *     [op_device 1.8];
 *   send 2.0-2.3 (pscore): send_varnames op_role op_namescope op_callstack
 *     table_id is_sparse op_role_var op_device [with_quant_attr 2.2];
 *   sum: op_role op_namescope op_callstack use_mkldnn [mkldnn_data_type
 *     2.0] op_role_var [op_device 1.8] [with_quant_attr 2.2];
 *   listen_and_serv: endpoint grad_to_block_id sync_mode|distributed_mode
 *     optimize_blocks sparse_grad_to_param Fanin [rpc_get, send, prefetch
 *     thread_num 1.7] op_role op_namescope op_callstack pserver_id dc_asgd
 *     prefetch_var_name_to_block_id checkpint_block_id lr_decay_block_id
 *     op_role_var [op_device 1.8] [with_quant_attr 2.2]. */
#include "unit.h"

#include "passes/era/era.h"
#include "passes/era/hash_table.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* A made op of TYPE with the attrs of WANT set in name order: op_role
 * ROLE, op_role_var two names when RV (else empty), every other an INT. */
static ir_op *made_op(ir_block *b, const char *type, const char *const *want, size_t n, int role,
                      bool rv)
{
    ir_op *op = ir_block_append_op(b, type);
    op->made = true;
    const char **sorted = g_new(const char *, n);
    memcpy(sorted, want, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, unit_by_str);
    static const char *const vars[] = {"w", "w@GRAD"};
    for (size_t i = 0; i < n; i++)
        if (!strcmp(sorted[i], "op_role"))
            ir_op_set_int(op, sorted[i], role);
        else if (!strcmp(sorted[i], "op_role_var"))
            ir_op_set_strings(op, sorted[i], vars, rv ? 2 : 0);
        else
            ir_op_set_int(op, sorted[i], 0);
    g_free(sorted);
    return op;
}

#define N(a) (sizeof(a) / sizeof *(a))

static const char *const send16[] = {"op_role_var", "send_varnames", "op_role", "epmap",
                                     "op_namescope", "trainer_id", "sections", "merge_add", "num",
                                     "use_send_handler"};
static const char *const send18[] = {"op_role_var", "send_varnames", "op_role", "epmap",
                                     "op_namescope", "trainer_id", "sections", "merge_add", "num",
                                     "op_device", "use_send_handler"};
static const char *const send20[] = {"op_device", "is_sparse", "table_id", "op_role_var",
                                     "op_namescope", "op_role", "send_varnames"};
static const char *const send23[] = {"with_quant_attr", "op_device", "op_role_var", "table_id", "op_role", "send_varnames", "op_namescope", "is_sparse"};

/* The trainer's sends (the main program's and the startup's: one call
 * shape), 1.6, 1.8, 2.0, 2.3; a grad send (op_role_var, RPC) is not
 * GEO's: left to hash_order_dist.c, here untouched. */
START_TEST(trainer_send_takes_paddle_order)
{
    static const struct {
        int era;
        const char *const *want;
        size_t n;
    } cases[] = {{106, send16, N(send16)}, {107, send16, N(send16)}, {108, send18, N(send18)},
                 {200, send20, N(send20)}, {203, send23, N(send23)}};
    for (size_t i = 0; i < N(cases); i++) {
        ir_program *p = ir_program_new();
        ir_block *b = ir_program_add_block(p, -1);
        ir_op *send = made_op(b, "send", cases[i].want, cases[i].n, 0, false);
        ir_op *grad = made_op(b, "send", cases[i].want, cases[i].n, 4, true);
        pdt_hash_order_geo(NULL, p, cases[i].era);
        unit_assert_attr_order(send, cases[i].want, cases[i].n);
        ck_assert_str_eq(ir_op_attrs(grad)[0].name, cases[i].era < 200 ? "epmap" : "is_sparse");
        ir_program_free(p);
    }
}
END_TEST

static const char *const sum16[] = {"use_mkldnn", "op_role_var", "op_namescope", "op_role"};
static const char *const sum18[] = {"op_device", "use_mkldnn", "op_role_var", "op_namescope",
                                    "op_role"};
static const char *const sum20[] = {"op_device", "mkldnn_data_type", "use_mkldnn", "op_role_var",
                                    "op_namescope", "op_role"};
static const char *const sum23[] = {"with_quant_attr", "op_device", "use_mkldnn", "op_role",
                                    "op_namescope", "mkldnn_data_type", "op_role_var"};
static const char *const listen16[] = {
    "op_role_var", "checkpint_block_id", "prefetch_var_name_to_block_id", "dc_asgd", "pserver_id",
    "grad_to_block_id", "optimize_blocks", "Fanin", "endpoint", "sparse_grad_to_param", "op_role",
    "lr_decay_block_id", "sync_mode", "op_namescope"};
static const char *const listen17[] = {
    "op_role_var", "checkpint_block_id", "prefetch_var_name_to_block_id", "dc_asgd", "pserver_id",
    "lr_decay_block_id", "op_namescope", "grad_to_block_id", "distributed_mode", "optimize_blocks",
    "rpc_get_thread_num", "op_role", "Fanin", "rpc_send_thread_num", "endpoint",
    "sparse_grad_to_param", "rpc_prefetch_thread_num"};
static const char *const listen18[] = {
    "op_device", "op_role_var", "checkpint_block_id", "prefetch_var_name_to_block_id", "dc_asgd",
    "pserver_id", "lr_decay_block_id", "op_namescope", "grad_to_block_id", "distributed_mode",
    "optimize_blocks", "rpc_get_thread_num", "op_role", "Fanin", "rpc_send_thread_num", "endpoint",
    "sparse_grad_to_param", "rpc_prefetch_thread_num"};
static const char *const listen23[] = {"with_quant_attr", "lr_decay_block_id", "op_role_var", "Fanin", "endpoint", "prefetch_var_name_to_block_id", "distributed_mode", "op_namescope", "rpc_get_thread_num", "rpc_send_thread_num", "op_device", "rpc_prefetch_thread_num", "op_role", "optimize_blocks", "grad_to_block_id", "pserver_id", "sparse_grad_to_param", "checkpint_block_id", "dc_asgd"};

/* A GEO pserver: listen_and_serv and one block's sum, after the whole
 * program's pass (pdt_hash_order_program, whose pserver transpiler rule
 * takes the sum for a gradient-merge one, use_mkldnn given) and the GEO
 * one; 2.0's listen_and_serv is 1.8's (no with_quant_attr before 2.2). */
START_TEST(pserver_ops_take_paddle_order)
{
    static const struct {
        int era;
        const char *const *listen, *const *sum;
        size_t n_listen, n_sum;
    } cases[] = {{106, listen16, sum16, N(listen16), N(sum16)},
                 {107, listen17, sum16, N(listen17), N(sum16)},
                 {108, listen18, sum18, N(listen18), N(sum18)},
                 {200, listen18, sum20, N(listen18), N(sum20)},
                 {203, listen23, sum23, N(listen23), N(sum23)}};
    for (size_t i = 0; i < N(cases); i++) {
        ir_program *p = ir_program_new();
        ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
        ir_op *ls = made_op(b0, "listen_and_serv", cases[i].listen, cases[i].n_listen, 0, false);
        ir_op *sum = made_op(b1, "sum", cases[i].sum, cases[i].n_sum, 0, false);
        pdt_hash_order_program(p, cases[i].era);
        pdt_hash_order_geo(NULL, p, cases[i].era);
        unit_assert_attr_order(ls, cases[i].listen, cases[i].n_listen);
        unit_assert_attr_order(sum, cases[i].sum, cases[i].n_sum);
        ir_program_free(p);
    }
}
END_TEST

static const char *const src_fill[] = {"dtype", "shape", "value", "force_cpu", "op_role",
                                       "op_namescope"};
static const char *const src_uniform[] = {"shape", "min", "max", "seed", "dtype", "op_role",
                                          "op_namescope"};
static const char *const fill18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                     "force_cpu", "str_value", "value", "shape", "dtype"};
static const char *const fill23[] = {"with_quant_attr", "op_role_var", "str_value", "place_type", "dtype", "op_device", "value", "shape", "force_cpu", "op_role", "op_namescope"};
static const char *const uniform16[] = {"op_role_var", "diag_val", "shape", "max", "seed", "dtype",
                                        "op_role", "min", "op_namescope", "diag_num", "diag_step"};
static const char *const uniform18[] = {"op_device", "op_role_var", "diag_val", "shape", "max",
                                        "seed", "dtype", "op_role", "min", "op_namescope",
                                        "diag_num", "diag_step"};

/* A GEO pserver's startup: get_startup_program's all_attrs() copies of
 * the origin startup's fill_constant (of fc_b) and uniform_random (of
 * fc_w, whose slice fc_w.block1 the copy writes).  The origin ops lack
 * the attrs a later proto added (str_value, diag_*, op_device ...), so
 * those are check_attrs defaults after the given ones; the histories:
 * the origin's attrs in proto order, op_callstack, then the rest. */
START_TEST(pserver_startup_copies_take_paddle_order)
{
    static const struct {
        int era;
        const char *type, *out, *const *want;
        size_t n;
    } cases[] = {{108, "fill_constant", "fc_b", fill18, N(fill18)},
                 {203, "fill_constant", "fc_b", fill23, N(fill23)},
                 {106, "uniform_random", "fc_w.block1", uniform16, N(uniform16)},
                 {108, "uniform_random", "fc_w.block1", uniform18, N(uniform18)}};
    ir_program *src = ir_program_new();
    ir_block *sb = ir_program_add_block(src, -1);
    ir_op *f = made_op(sb, "fill_constant", src_fill, N(src_fill), 0, false);
    ir_op *u = made_op(sb, "uniform_random", src_uniform, N(src_uniform), 0, false);
    f->made = u->made = false;
    ir_op_set_output1(f, "Out", "fc_b");
    ir_op_set_output1(u, "Out", "fc_w");
    for (size_t i = 0; i < N(cases); i++) {
        ir_program *p = ir_program_new();
        ir_block *b = ir_program_add_block(p, -1);
        ir_op *op = made_op(b, cases[i].type, cases[i].want, cases[i].n, 0, false);
        ir_op_set_output1(op, "Out", cases[i].out);
        pdt_hash_order_copies(p, src, cases[i].era);
        unit_assert_attr_order(op, cases[i].want, cases[i].n);
        ir_program_free(p);
    }
    ir_program_free(src);
}
END_TEST

/* Outside 1.6-2.3 nothing is reordered (no GeoSgdTranspiler before 1.6;
 * 2.4 on OpDesc::Flush sorts). */
START_TEST(other_versions_untouched)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *send = made_op(b, "send", send18, N(send18), 0, false);
    pdt_hash_order_geo(NULL, p, 105);
    pdt_hash_order_geo(NULL, p, 204);
    ck_assert_str_eq(ir_op_attrs(send)[0].name, "epmap");
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order_geo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, trainer_send_takes_paddle_order);
    tcase_add_test(tc, pserver_ops_take_paddle_order);
    tcase_add_test(tc, pserver_startup_copies_take_paddle_order);
    tcase_add_test(tc, other_versions_untouched);
    suite_add_tcase(s, tc);
    return s;
}
