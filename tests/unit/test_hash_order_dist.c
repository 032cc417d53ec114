/* test_hash_order_dist.c - the attr order of the ops the pserver
 * transpiler builds, 1.4-2.3 (src/passes/era/hash_order_dist.c,
 * research-2x-3x.md 4w).  Each op is made with its attrs in name order
 * (pdtrans's own), ordered for one version, and compared with g++ 12's
 * std::unordered_map<std::string, int> m(11) fed the op's insertion
 * history (the caller's attrs in proto order, op_role, a non-empty
 * op_role_var, op_namescope, op_callstack, then check_attrs's defaults in
 * proto order), with gcc 4.8's rehashes forced (m.rehash(23) before the
 * 11th key; g++ 12 does none of its own below 23 keys), op_callstack
 * left out of the printed list as pdtrans writes none.
 * The 2.3 arrays (NAME23) are HT_GCC8_LIB5's orders of the same histories
 * (research 4z8; 3 -> 7 -> 17 buckets), from a model of that policy fed
 * the histories hash_order_dist.c/geo.c insert (traced), each history's
 * gcc 4.8 order checked equal to the array it replaces.
 */
#include "unit.h"

#include "passes/era/era.h"
#include "passes/era/hash_table.h"
#include "passes/pass.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* A made op of TYPE with the attrs of WANT set in name order: op_role
 * ROLE, op_role_var two names when RV (else empty), merge_add BOOL
 * MERGE, every other an INT 0 (a conditional listen_and_serv attr so
 * stays "not passed"). */
static ir_op *made_op(ir_block *b, const char *type, const char *const *want, size_t n, int role,
                      bool rv, bool merge)
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
        else if (!strcmp(sorted[i], "merge_add"))
            ir_op_set_bool(op, sorted[i], merge);
        else
            ir_op_set_int(op, sorted[i], 0);
    g_free(sorted);
    return op;
}

#define N(a) (sizeof(a) / sizeof *(a))

static const char *const send18[] = {"op_device", "use_send_handler", "epmap", "op_role",
                                     "op_role_var", "op_namescope", "merge_add", "send_varnames",
                                     "sections", "trainer_id", "num"};
static const char *const counter18[] = {"num", "epmap", "op_role", "merge_add", "op_role_var",
                                        "op_namescope", "send_varnames", "sections", "trainer_id",
                                        "op_device", "use_send_handler"};
static const char *const recv18[] = {"op_device", "op_role", "trainer_id", "do_not_run",
                                     "recv_varnames", "epmap", "with_barrier", "op_role_var",
                                     "op_namescope", "varnames"};
static const char *const recv_startup18[] = {"op_device", "op_role", "trainer_id", "op_namescope",
                                             "op_role_var", "epmap", "with_barrier", "do_not_run",
                                             "recv_varnames", "varnames"};
static const char *const send_barrier18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                             "endpoints", "half_async", "trainer_id"};
static const char *const fetch_barrier18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                              "endpoints", "trainer_id"};
static const char *const split18[] = {"op_device", "num", "op_role", "op_role_var", "op_namescope",
                                      "sections"};
static const char *const split_rows18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                           "height_sections"};

static const char *const split_ids18[] = {"op_device", "op_role_var", "op_namescope", "op_role"};
static const char *const table18[] = {"op_device", "use_send_handler", "send_varnames", "epmap",
                                      "op_role", "op_role_var", "op_namescope", "trainer_id",
                                      "sections", "merge_add", "num"};

/* The trainer's ops, 1.8 (distribute_transpiler.py v1.8.5), the
 * distributed table's split_ids (Dist) and send among them. */
START_TEST(trainer_rpc_ops_take_paddle_18_order)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *send = made_op(b, "send", send18, N(send18), 4, true, false);
    ir_op *counter = made_op(b, "send", counter18, N(counter18), 4, true, true);
    ir_op *sb = made_op(b, "send_barrier", send_barrier18, N(send_barrier18), 4, false, false);
    ir_op *recv = made_op(b, "recv", recv18, N(recv18), 4, true, false);
    ir_op *rs = made_op(b, "recv", recv_startup18, N(recv_startup18), 4, false, false);
    ir_op *fb = made_op(b, "fetch_barrier", fetch_barrier18, N(fetch_barrier18), 4, false, false);
    ir_op_set_input1(fb, "X", "ctrl");
    ir_op *split = made_op(b, "split_byref", split18, N(split18), 8, false, false);
    ir_op *rows = made_op(b, "split_selected_rows", split_rows18, N(split_rows18), 8, false, false);
    ir_op *ids = made_op(b, "split_ids", split_ids18, N(split_ids18), 8, false, false);
    ir_op *table = made_op(b, "send", table18, N(table18), 4, true, false);
    pdt_hash_order_program(p, 108);
    unit_assert_attr_order(send, send18, N(send18));
    unit_assert_attr_order(counter, counter18, N(counter18));
    unit_assert_attr_order(sb, send_barrier18, N(send_barrier18));
    unit_assert_attr_order(recv, recv18, N(recv18));
    unit_assert_attr_order(rs, recv_startup18, N(recv_startup18));
    unit_assert_attr_order(fb, fetch_barrier18, N(fetch_barrier18));
    unit_assert_attr_order(split, split18, N(split18));
    unit_assert_attr_order(rows, split_rows18, N(split_rows18));
    unit_assert_attr_order(ids, split_ids18, N(split_ids18));
    unit_assert_attr_order(table, table18, N(table18));
    ir_program_free(p);
}
END_TEST

static const char *const table16[] = {"use_send_handler", "send_varnames", "epmap", "op_role",
                                      "op_role_var", "op_namescope", "trainer_id", "sections",
                                      "merge_add", "num"};
static const char *const table15[] = {"num", "sections", "op_namescope", "op_role_var", "op_role",
                                      "epmap", "send_varnames", "trainer_id", "sync_mode"};
static const char *const table14[] = {"op_namescope", "op_role_var", "op_role", "epmap",
                                      "trainer_id", "sync_mode"};
static const char *const prefetch18[] = {"op_device", "trainer_id", "op_role_var", "op_namescope",
                                         "op_role", "epmap"};
static const char *const merge_ids14[] = {"op_role_var", "op_namescope", "op_role"};
static const char *const fake_init18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                          "shape"};
static const char *const fake_init23[] = {"with_quant_attr", "op_role", "shape", "op_role_var", "op_device", "op_namescope"};

/* The distributed table's trainer ops: the send after its split_ids
 * (epmap and trainer_id passed, sync_mode too in v1.4.0-v1.5.1), the
 * lookups' split_ids -> prefetch (epmap passed) -> merge_ids, the
 * startup's fake_init (shape; pscore's in 2.x), histories as above; an
 * op without one of the proto's defaults (a prefetch lacking trainer_id)
 * keeps the others' relative order. */
START_TEST(table_ops_take_paddle_14_23_order)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    static const int eras[] = {104, 105, 106};
    const char *const *want[] = {table14, table15, table16};
    size_t n[] = {N(table14), N(table15), N(table16)};
    for (size_t i = 0; i < 3; i++) {
        made_op(b, "split_ids", merge_ids14, N(merge_ids14), 8, false, false);
        ir_op *send = made_op(b, "send", want[i], n[i], 4, true, false);
        pdt_hash_order_program(p, eras[i]);
        unit_assert_attr_order(send, want[i], n[i]);
    }
    ir_op *ids = made_op(b, "split_ids", merge_ids14, N(merge_ids14), 0, false, false);
    ir_op *merge = made_op(b, "merge_ids", merge_ids14, N(merge_ids14), 0, false, false);
    pdt_hash_order_program(p, 104);
    unit_assert_attr_order(ids, merge_ids14, N(merge_ids14));
    unit_assert_attr_order(merge, merge_ids14, N(merge_ids14));
    ir_program_free(p);
    p = ir_program_new();
    b = ir_program_add_block(p, -1);
    ir_op *fetch = made_op(b, "prefetch", prefetch18, N(prefetch18), 0, false, false);
    static const char *const no_id[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                        "epmap"};
    ir_op *fetch2 = made_op(b, "prefetch", no_id, N(no_id), 0, false, false);
    ir_op *fake = made_op(b, "fake_init", fake_init18, N(fake_init18), 0, false, false);
    pdt_hash_order_program(p, 108);
    unit_assert_attr_order(fetch, prefetch18, N(prefetch18));
    unit_assert_attr_order(fetch2, no_id, N(no_id));
    unit_assert_attr_order(fake, fake_init18, N(fake_init18));
    fake = made_op(b, "fake_init", fake_init23, N(fake_init23), 0, false, false);
    pdt_hash_order_program(p, 203);
    unit_assert_attr_order(fake, fake_init23, N(fake_init23));
    ir_op *ids23 = made_op(b, "split_ids", split_ids18, N(split_ids18), 0, false, false);
    pdt_hash_order_program(p, 203); /* no 2.x split_ids: name order kept */
    ck_assert_str_eq(ir_op_attrs(ids23)[0].name, "op_device");
    ck_assert_str_eq(ir_op_attrs(ids23)[1].name, "op_namescope");
    ir_program_free(p);
}
END_TEST

static const char *const dlt16[] = {"op_role_var", "op_namescope", "op_role", "padding_idx",
                                     "trainer_id", "endpoints", "height_sections", "table_names"};
static const char *const dlt17[] = {"op_role_var", "op_namescope", "op_role", "padding_idx",
                                     "trainer_id", "dtype", "endpoints", "height_sections",
                                     "table_names"};
static const char *const dlt18[] = {"op_device", "endpoints", "dtype", "table_names",
                                     "height_sections", "trainer_id", "padding_idx", "op_role",
                                     "op_namescope", "op_role_var"};

/* The remote-prefetch distributed_lookup_table (research 4z7): the
 * caller's table_names height_sections endpoints padding_idx trainer_id,
 * dtype a default from 1.7; 1.5 is v1.5.2's form (as 1.6); 2.3 keeps
 * the name order (pscore's proto). */
START_TEST(remote_lookup_takes_paddle_15_18_order)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    static const int eras[] = {105, 106, 107, 108};
    const char *const *want[] = {dlt16, dlt16, dlt17, dlt18};
    size_t n[] = {N(dlt16), N(dlt16), N(dlt17), N(dlt18)};
    for (size_t i = 0; i < 4; i++) {
        ir_op *op = made_op(b, "distributed_lookup_table", want[i], n[i], 0, false, false);
        pdt_hash_order_program(p, eras[i]);
        unit_assert_attr_order(op, want[i], n[i]);
    }
    ir_op *op = made_op(b, "distributed_lookup_table", dlt18, N(dlt18), 0, false, false);
    pdt_hash_order_program(p, 203);
    ck_assert_str_eq(ir_op_attrs(op)[0].name, "dtype");
    ck_assert_str_eq(ir_op_attrs(op)[1].name, "endpoints");
    ir_program_free(p);
}
END_TEST

static const char *const listen18[] = {
    "op_device",  "op_role_var",         "checkpint_block_id",
    "prefetch_var_name_to_block_id",      "dc_asgd",
    "op_role",    "pserver_id",          "grad_to_block_id",
    "distributed_mode",                   "optimize_blocks",
    "rpc_get_thread_num",                 "rpc_prefetch_thread_num",
    "endpoint",   "sparse_grad_to_param", "Fanin",
    "rpc_send_thread_num",                "op_namescope",
    "lr_decay_block_id"};
static const char *const adam18[] = {"op_device", "op_namescope", "op_role_var",
                                     "min_row_size_to_use_multithread", "op_role", "lazy_mode",
                                     "epsilon", "beta2", "beta1"};

static const char *const lr_scale18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                         "bias_after_scale", "bias", "scale"};

/* The pserver's listen_and_serv and copies of the trainer's adam and of
 * an LR schedule's scale (attrs=opt_op.all_attrs(): every attr given,
 * but an empty op_role_var is deleted from the dict, so check_attrs
 * inserts it last), 1.8; a GeoSgdTranspiler
 * listen_and_serv (distributed_mode 3) keeps the name order. */
START_TEST(pserver_ops_take_paddle_18_order)
{
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
    ir_op *ls = made_op(b0, "listen_and_serv", listen18, N(listen18), 0, false, false);
    ir_op *adam = made_op(b1, "adam", adam18, N(adam18), 2, true, false);
    ir_op *lr = made_op(b1, "scale", lr_scale18, N(lr_scale18), 16, false, false);
    pdt_hash_order_program(p, 108);
    unit_assert_attr_order(ls, listen18, N(listen18));
    unit_assert_attr_order(adam, adam18, N(adam18));
    unit_assert_attr_order(lr, lr_scale18, N(lr_scale18));
    ir_program_free(p);
    p = ir_program_new();
    b0 = ir_program_add_block(p, -1);
    ls = made_op(b0, "listen_and_serv", listen18, N(listen18), 0, false, false);
    ir_op_set_int(ls, "distributed_mode", 3);
    pdt_hash_order_program(p, 108);
    ck_assert_str_eq(ir_op_attrs(ls)[0].name, "Fanin");
    ir_program_free(p);
}
END_TEST

static const char *const send15[] = {"num", "op_namescope", "op_role_var", "sections", "op_role",
                                     "epmap", "trainer_id", "send_varnames", "sync_mode"};
static const char *const listen16[] = {
    "op_role_var", "checkpint_block_id", "prefetch_var_name_to_block_id", "dc_asgd", "pserver_id",
    "grad_to_block_id", "optimize_blocks", "Fanin", "endpoint", "sparse_grad_to_param",
    "sync_mode", "lr_decay_block_id", "op_namescope", "op_role"};
static const char *const recv_startup14[] = {"varnames", "with_barrier", "sync_mode", "trainer_id",
                                             "op_role_var", "op_namescope", "op_role", "epmap"};
static const char *const fetch_startup14[] = {"trainer_id", "op_role_var", "op_namescope", "op_role",
                                              "endpoints"};
static const char *const counter16[] = {"num", "epmap", "op_role", "merge_add", "op_role_var",
                                        "op_namescope", "send_varnames", "sections", "trainer_id",
                                        "use_send_handler"};

/* 1.4-1.6: 1.5's grad send passes sync_mode (v1.5.0, v1.5.1), 1.6's
 * listen_and_serv sync_mode and pserver_id, 1.4's startup recv epmap
 * only and its startup fetch_barrier endpoints only; 1.6's counter send. */
START_TEST(rpc_ops_take_paddle_14_16_order)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *send = made_op(b, "send", send15, N(send15), 4, true, false);
    pdt_hash_order_program(p, 105);
    unit_assert_attr_order(send, send15, N(send15));
    ir_op *rs = made_op(b, "recv", recv_startup14, N(recv_startup14), 4, false, false);
    ir_op *fb = made_op(b, "fetch_barrier", fetch_startup14, N(fetch_startup14), 4, false, false);
    pdt_hash_order_program(p, 104);
    unit_assert_attr_order(rs, recv_startup14, N(recv_startup14));
    unit_assert_attr_order(fb, fetch_startup14, N(fetch_startup14));
    ir_op *counter = made_op(b, "send", counter16, N(counter16), 4, true, true);
    pdt_hash_order_program(p, 106);
    unit_assert_attr_order(counter, counter16, N(counter16));
    ir_program_free(p);
    p = ir_program_new();
    b = ir_program_add_block(p, -1);
    ir_op *ls = made_op(b, "listen_and_serv", listen16, N(listen16), 0, false, false);
    pdt_hash_order_program(p, 106);
    unit_assert_attr_order(ls, listen16, N(listen16));
    ir_program_free(p);
}
END_TEST

static const char *const sum23[] = {"with_quant_attr", "op_device", "op_role", "use_mkldnn", "op_namescope", "mkldnn_data_type", "op_role_var"};
static const char *const concat23[] = {"with_quant_attr", "op_device", "op_role", "op_role_var", "axis", "mkldnn_data_type", "op_namescope", "use_mkldnn", "use_quantizer"};
static const char *const send_barrier23[] = {"op_device", "op_role_var", "op_namescope", "with_quant_attr", "trainer_id", "half_async", "endpoints", "op_role"};
static const char *const listen23[] = {"with_quant_attr", "checkpint_block_id", "sparse_grad_to_param", "endpoint", "prefetch_var_name_to_block_id", "op_role_var", "Fanin", "lr_decay_block_id", "distributed_mode", "op_namescope", "optimize_blocks", "grad_to_block_id", "pserver_id", "rpc_get_thread_num", "rpc_send_thread_num", "op_device", "rpc_prefetch_thread_num", "op_role", "dc_asgd"};

/* 2.3: the same calls (v2.3.2), sum's and concat's mkldnn_data_type and
 * the proto's with_quant_attr (v2.2.0 on); send keeps the name order (no
 * 2.x history: pscore's send proto has none of its attrs). */
START_TEST(transpiler_ops_take_paddle_23_order)
{
    ir_program *p = ir_program_new(), *tp = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
    ir_op *ls = made_op(b0, "listen_and_serv", listen23, N(listen23), 0, false, false);
    ir_op *sum = made_op(b1, "sum", sum23, N(sum23), 0, false, false);
    ir_block *t = ir_program_add_block(tp, -1);
    ir_op *cat = made_op(t, "concat", concat23, N(concat23), 8, false, false);
    ir_op *sb = made_op(t, "send_barrier", send_barrier23, N(send_barrier23), 4, false, false);
    ir_op *send = made_op(t, "send", send18, N(send18), 4, true, false);
    pdt_hash_order_program(p, 203);
    pdt_hash_order_program(tp, 203);
    unit_assert_attr_order(ls, listen23, N(listen23));
    unit_assert_attr_order(sum, sum23, N(sum23));
    unit_assert_attr_order(cat, concat23, N(concat23));
    unit_assert_attr_order(sb, send_barrier23, N(send_barrier23));
    ck_assert_str_eq(ir_op_attrs(send)[0].name, "epmap");
    ir_program_free(p);
    ir_program_free(tp);
}
END_TEST

/* 2.3's pserver copies (all_attrs(): every attr given, the 2.x protos'
 * extras included, with_quant_attr last of the framework ones; research
 * 4z2); a model of HT_GCC8_LIB5 (research 4z8) fed the proto order. */
static const char *const sgd23[] = {"with_quant_attr", "op_device", "multi_precision", "op_role", "use_mkldnn", "op_namescope", "op_role_var"};
static const char *const adam23[] = {"with_quant_attr", "op_device", "op_namescope", "op_role_var", "use_global_beta_pow", "beta2", "beta1", "epsilon", "min_row_size_to_use_multithread", "op_role", "lazy_mode", "multi_precision"};

START_TEST(pserver_copies_take_paddle_23_order)
{
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
    made_op(b0, "listen_and_serv", listen23, N(listen23), 0, false, false);
    ir_op *sgd = made_op(b1, "sgd", sgd23, N(sgd23), 2, true, false);
    ir_op *adam = made_op(b1, "adam", adam23, N(adam23), 2, true, false);
    pdt_hash_order_program(p, 203);
    unit_assert_attr_order(sgd, sgd23, N(sgd23));
    unit_assert_attr_order(adam, adam23, N(adam23));
    ir_program_free(p);
}
END_TEST

/* A pserver's startup copies (hash_order_pstart.c, research 4z2): each
 * op of SRC (its source's attrs, name order, op_role 0, op_role_var
 * empty) in a program staged as pserver_0.startup; era.def's rows add
 * the defaults the source lacked before the order step. */
static ir_op *startup_copy(ir_block *b, ir_block *ob, const char *type, const char *const *src,
                           size_t n, const char *out)
{
    ir_op *o = made_op(ob, type, src, n, 0, false, false);
    o->made = false;
    ir_op_set_output1(o, "Out", out);
    ir_op *op = made_op(b, type, src, n, 0, false, false);
    ir_op_set_output1(op, "Out", out);
    return op;
}

/* ORIGIN: the origin startup, where each copy's source is looked up. */
static void apply_pserver_startup(ir_program *p, ir_program *origin, int era)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.startup = origin;
    pdt_output o = {"pserver_0.startup", p, true};
    ctx.staged = &o;
    ctx.n_staged = 1;
    pdt_era_apply_program(&ctx, p, era);
    ctx.startup = NULL;
    ctx.staged = NULL;
    ctx.n_staged = 0;
    pdt_ctx_free(&ctx);
}

static const char *const fc_src[] = {"dtype", "shape", "value", "force_cpu", "op_role",
                                     "op_role_var", "op_namescope", "op_device"};
static const char *const ur_src[] = {"shape", "min", "max", "seed", "dtype", "op_role",
                                     "op_role_var", "op_namescope", "op_device"};
static const char *const gauss_src[] = {"shape", "mean", "std", "seed", "dtype", "use_mkldnn",
                                        "op_role", "op_role_var", "op_namescope"};
/* The copy's dict in proto order, then check_attrs's str_value / diag_* /
 * op_role_var (/ with_quant_attr): 1.5-1.8 from g++ 12, m(11), gcc 4.8's
 * rehash; the 2.3 arrays from a model of HT_GCC8_LIB5 (research 4z8). */
static const char *const fc15[] = {"op_role_var", "op_namescope", "op_role", "force_cpu", "value",
                                   "shape", "dtype"};
static const char *const gauss15[] = {"op_role_var", "op_namescope", "op_role", "use_mkldnn",
                                      "dtype", "seed", "std", "mean", "shape"};
static const char *const fc18[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                   "force_cpu", "str_value", "value", "shape", "dtype"};
static const char *const ur18[] = {"op_role_var", "diag_val", "diag_step", "shape", "max",
                                   "op_device", "seed", "dtype", "op_role", "min",
                                   "op_namescope", "diag_num"};
static const char *const fc23[] = {"with_quant_attr", "op_role_var", "str_value", "place_type", "dtype", "op_device", "value", "shape", "force_cpu", "op_role", "op_namescope"};
static const char *const ur23[] = {"with_quant_attr", "op_role_var", "diag_num", "op_device", "op_namescope", "dtype", "min", "shape", "seed", "diag_val", "max", "diag_step", "op_role"};
/* assign_value (NumpyArrayInitializer) as 1.5 wrote it; its 1.8 copy
 * (pstart2, research 4z6): the source's attrs in proto order, then
 * check_attrs's bool_values int64_values op_role_var op_device (checked
 * with a Python model of gcc 4.8's table). */
static const char *const av_src[] = {"shape", "dtype", "fp32_values", "int32_values", "op_role",
                                     "op_namescope"};
static const char *const av18[] = {"op_device", "shape", "dtype", "fp32_values", "op_role",
                                   "op_namescope", "op_role_var", "bool_values", "int32_values",
                                   "int64_values"};
/* DC-ASGD's assign, 1.8: no attrs given; op_device, op_role_var defaults. */
static const char *const assign18[] = {"op_device", "op_role_var", "op_namescope", "op_role"};

START_TEST(pserver_startup_copies_take_paddle_order)
{
    static const int eras[] = {105, 108, 203};
    for (size_t e = 0; e < N(eras); e++) {
        ir_program *p = ir_program_new();
        ir_block *b = ir_program_add_block(p, -1);
        ir_program *origin = ir_program_new();
        ir_block *ob = ir_program_add_block(origin, -1);
        ir_op *fc = startup_copy(b, ob, "fill_constant", fc_src, N(fc_src), "b");
        ir_op *ur = startup_copy(b, ob, "uniform_random", ur_src, N(ur_src), "w.block0");
        ir_op *g = startup_copy(b, ob, "gaussian_random", gauss_src, N(gauss_src), "v");
        /* the copy has op_role_var and op_device (pdtrans's clone), its
         * source not */
        ir_op *av = startup_copy(b, ob, "assign_value", av_src, N(av_src), "c");
        ir_op_set_strings(av, "op_role_var", NULL, 0);
        ir_op_set_string(av, "op_device", "");
        ir_op *as = made_op(b, "assign", assign18, N(assign18), 0, false, false);
        ir_op_set_output1(as, "Out", "w.block0.trainer_0_bak");
        apply_pserver_startup(p, origin, eras[e]);
        if (eras[e] == 105) {
            unit_assert_attr_order(fc, fc15, N(fc15));
            unit_assert_attr_order(g, gauss15, N(gauss15));
        } else if (eras[e] == 108) {
            unit_assert_attr_order(fc, fc18, N(fc18));
            unit_assert_attr_order(ur, ur18, N(ur18));
            unit_assert_attr_order(as, assign18, N(assign18));
            unit_assert_attr_order(av, av18, N(av18));
        } else {
            unit_assert_attr_order(fc, fc23, N(fc23));
            unit_assert_attr_order(ur, ur23, N(ur23));
        }
        ir_program_free(p);
        ir_program_free(origin);
    }
}
END_TEST

/* A pserver's copies (all_attrs()) of sources that lacked attrs of the
 * target's proto (an input written by an older Paddle; build_pserver.c
 * notes the source's attrs, ir_op_note_copy): Operator.__init__ sets the
 * source's attrs in proto order, check_attrs adds the others after
 * (research 4z10).  Each array is the order of a separate Python model of
 * libstdc++'s table (gcc 4.8 for 1.8, HT_GCC8_LIB5 for 2.3) fed that
 * history with op_callstack counted, then left out:
 *   2.3 sgd from {op_namescope op_role op_role_var}: op_role op_role_var
 *     op_namescope op_callstack | use_mkldnn multi_precision op_device
 *     with_quant_attr; the same source made in the run keeps sgd23 (every
 *     attr given);
 *   1.8 LR elementwise_pow from a 1.7 source {axis op_role op_namescope
 *     op_role_var: empty}: axis op_role op_namescope op_callstack |
 *     use_mkldnn x_data_format y_data_format op_role_var op_device (a 1.8
 *     source with op_device: pow18_dev);
 *   1.8 LR floor from a 1.8 source {op_device op_namescope op_role}. */
static const char *const sgd23_src[] = {"op_namescope", "op_role", "op_role_var"};
static const char *const sgd23_of_18[] = {"with_quant_attr", "op_device", "op_role_var", "op_role",
                                            "multi_precision", "op_namescope", "use_mkldnn"};
static const char *const pow_src17[] = {"axis", "op_role", "op_namescope", "op_role_var"};
static const char *const pow18_of_17[] = {"op_device", "y_data_format", "x_data_format", "use_mkldnn",
                                            "op_role_var", "op_namescope", "op_role", "axis"};
static const char *const pow_src18[] = {"axis", "op_role", "op_namescope", "op_role_var",
                                        "op_device"};
static const char *const pow18_dev[] = {"x_data_format", "use_mkldnn", "y_data_format", "op_device",
                                        "op_role_var", "op_namescope", "op_role", "axis"};
static const char *const floor_src18[] = {"op_device", "op_namescope", "op_role"};
static const char *const floor18[] = {"use_cudnn", "use_mkldnn", "op_device", "op_role_var",
                                      "op_namescope", "op_role"};

/* The copy (WANT's attrs) in B of a source with SRC's attrs in ORIGIN. */
static ir_op *noted_copy(ir_block *b, ir_block *ob, const char *type, const char *const *want,
                         size_t n_want, const char *const *src, size_t n_src, int role, bool rv,
                         bool src_made)
{
    ir_op *o = made_op(ob, type, src, n_src, role, rv, false);
    o->made = src_made;
    ir_op *op = made_op(b, type, want, n_want, role, rv, false);
    ir_op_note_copy(op, o);
    return op;
}

START_TEST(pserver_copies_of_older_sources_take_paddle_order)
{
    ir_program *origin = ir_program_new();
    ir_block *ob = ir_program_add_block(origin, -1);
    for (int made = 0; made < 2; made++) {
        ir_program *p = ir_program_new();
        ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
        made_op(b0, "listen_and_serv", listen23, N(listen23), 0, false, false);
        ir_op *sgd = noted_copy(b1, ob, "sgd", sgd23_of_18, N(sgd23_of_18), sgd23_src,
                                N(sgd23_src), 2, true, made);
        pdt_hash_order_program(p, 203);
        if (made)
            unit_assert_attr_order(sgd, sgd23, N(sgd23));
        else
            unit_assert_attr_order(sgd, sgd23_of_18, N(sgd23_of_18));
        ir_program_free(p);
    }
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
    made_op(b0, "listen_and_serv", listen18, N(listen18), 0, false, false);
    ir_op *pow17 = noted_copy(b1, ob, "elementwise_pow", pow18_of_17, N(pow18_of_17),
                              pow_src17, N(pow_src17), 16, false, false);
    ir_op *pow18 = noted_copy(b1, ob, "elementwise_pow", pow18_dev, N(pow18_dev), pow_src18,
                              N(pow_src18), 16, false, false);
    ir_op *fl = noted_copy(b1, ob, "floor", floor18, N(floor18), floor_src18, N(floor_src18), 16,
                           false, false);
    pdt_hash_order_program(p, 108);
    unit_assert_attr_order(pow17, pow18_of_17, N(pow18_of_17));
    unit_assert_attr_order(pow18, pow18_dev, N(pow18_dev));
    unit_assert_attr_order(fl, floor18, N(floor18));
    ir_program_free(p);
    ir_program_free(origin);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order_dist");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, trainer_rpc_ops_take_paddle_18_order);
    tcase_add_test(tc, pserver_ops_take_paddle_18_order);
    tcase_add_test(tc, rpc_ops_take_paddle_14_16_order);
    tcase_add_test(tc, table_ops_take_paddle_14_23_order);
    tcase_add_test(tc, remote_lookup_takes_paddle_15_18_order);
    tcase_add_test(tc, transpiler_ops_take_paddle_23_order);
    tcase_add_test(tc, pserver_startup_copies_take_paddle_order);
    tcase_add_test(tc, pserver_copies_take_paddle_23_order);
    tcase_add_test(tc, pserver_copies_of_older_sources_take_paddle_order);
    suite_add_tcase(s, tc);
    return s;
}
