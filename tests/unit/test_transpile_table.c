/* test_transpile_table.c - the distributed lookup table in the transpile
 * pass (transpile_table.c): seed defect 1 fixed, and the inputs the seed
 * refuses.  The golden cases transpile_dist_table* hold the full outputs;
 * these tests pin the decisions on small edits of TestBasicModel. */
#include <glib.h>
#include <jansson.h>

#include "io/pdio.h"
#include "cli/cli.h"
#include "passes/pass.h"
#include "passes/transpile/builders.h"
#include "unit.h"
#include "transpile_fixture.h"

static const char *BASIC = "tests/golden/transpile_basic/in/main.pbtxt";
static const char *BASIC_STARTUP = "tests/golden/transpile_basic/in/startup.pbtxt";
static const char *TABLE = "tests/golden/transpile_dist_table/in/main.pbtxt";
static const char *TABLE_STARTUP = "tests/golden/transpile_dist_table/in/startup.pbtxt";


/* TestBasicModel with its mul turned into a distributed lookup of fc_w. */
static void make_lookup(pdt_ctx *ctx, const char *type, bool distributed)
{
    ir_op *op = ctx->main->blocks[0]->ops[0];   /* mul(X=x, Y=fc_w) */
    op->type = ir_intern(type);
    ir_op_set_input1(op, "Ids", "x");
    ir_op_set_input1(op, "W", "fc_w");
    ir_op_set_bool(op, "is_distributed", distributed);
}

static bool has_string(const ir_attr *a, const char *s)
{
    for (size_t i = 0; a && a->type == IR_ATTR_STRINGS && i < a->n_strings; i++)
        if (a->strings[i].len == strlen(s) && !memcmp(a->strings[i].data, s, a->strings[i].len))
            return true;
    return false;
}

START_TEST(lookup_ops_of_the_table_are_replaced)
{
    /* Seed defect 1: `op.type == LOOKUP_TABLE_TYPE` never matched, so the
     * seed crashed.  Both spellings of the op must be replaced. */
    static const char *const types[] = {"lookup_table", "lookup_table_v2"};
    for (int i = 0; i < 2; i++) {
        pdt_ctx ctx;
        tpf_load(&ctx, BASIC, BASIC_STARTUP);
        make_lookup(&ctx, types[i], true);
        ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
        const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
        ck_assert_uint_eq(tpf_count_ops(t, types[i]), 0);
        ck_assert_str_eq(t->ops[0]->type, "split_ids");
        ck_assert_str_eq(t->ops[1]->type, "prefetch");
        ck_assert_str_eq(t->ops[2]->type, "merge_ids");
        ck_assert_str_eq(ir_op_output1(t->ops[2], "Out"), "fc_0.tmp_0");
        /* fc_w is no longer sliced: no split_byref, no recv or concat of it. */
        ck_assert_ptr_null(tpf_find_op(t, "split_byref", 0));
        ck_assert_ptr_null(tpf_find_op(t, "concat", 0));
        ck_assert_uint_eq(tpf_count_ops(t, "recv"), 1);
        /* Its grad goes out through split_ids + send after mul_grad. */
        ir_op *split = tpf_find_op(t, "split_ids", 1);
        ck_assert_ptr_nonnull(split);
        ck_assert_str_eq(ir_op_input1(split, "Ids"), "fc_w@GRAD");
        ck_assert_str_eq(ir_op_output(split, "Out")->args[1],
                         "fc_w@GRAD.trainer_0.pserver_1");
        /* Every pserver holds half the rows as SELECTED_ROWS. */
        for (int e = 0; e < 2; e++) {
            const ir_program *ps = tpf_output(&ctx, e ? "pserver_1" : "pserver_0");
            const ir_var *w = ir_block_find_var(ps->blocks[0], ir_intern("fc_w"));
            ck_assert_ptr_nonnull(w);
            ck_assert_int_eq(w->type, IR_SELECTED_ROWS);
            ck_assert_int_eq(w->dims[0], 500);
            /* pserver_0 optimizes fc_b in block 1; pserver_1 has no param
             * left, so the table block is its first (and no empty block). */
            ir_op *ls = tpf_find_op(ps->blocks[0], "listen_and_serv", 0);
            ck_assert(has_string(ir_op_attr(ls, "prefetch_var_name_to_block_id"),
                                 e ? "prefetch_compress_in_tmp_1:2" : "prefetch_compress_in_tmp_0:3"));
            ck_assert_int_eq(ir_op_get_int(ls, "checkpint_block_id", -1), e ? 3 : 4);
            ck_assert_uint_eq(ps->n_blocks, e ? 4 : 5);
        }
        pdt_ctx_free(&ctx);
    }
}
END_TEST

START_TEST(table_startup_is_fake_init)
{
    /* _fake_init_sparsetable on the table, and get_startup_program's
     * uniform_random of the pserver's rows. */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    make_lookup(&ctx, "lookup_table", true);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *ts = tpf_output(&ctx, "trainer_0.startup")->blocks[0];
    ck_assert_ptr_null(tpf_find_op(ts, "uniform_random", 0));
    ir_op *fi = tpf_find_op(ts, "fake_init", 0);
    ck_assert_ptr_nonnull(fi);
    ck_assert_int_eq(ir_op_attr(fi, "shape")->longs[0], 1000);
    const ir_block *ps = tpf_output(&ctx, "pserver_1.startup")->blocks[0];
    ir_op *init = tpf_find_op(ps, "uniform_random", 0);
    ck_assert_ptr_nonnull(init);
    ck_assert_str_eq(ir_op_output1(init, "Out"), "fc_w");
    ck_assert_int_eq(ir_op_attr(init, "shape")->longs[0], 500);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(fake_init_shape_is_longs)
{
    /* fake_init declares shape as vector<int64_t>, so Paddle writes LONGS
     * even when the table's init op has an INTS shape
     * (truncated_gaussian_random); the pserver's own init op keeps INTS. */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    make_lookup(&ctx, "lookup_table", true);
    ir_op *init = NULL;
    for (size_t k = 0; k < ctx.startup->blocks[0]->n_ops && !init; k++)
        if (ir_op_output1(ctx.startup->blocks[0]->ops[k], "Out") == ir_intern("fc_w"))
            init = ctx.startup->blocks[0]->ops[k];
    ck_assert_ptr_nonnull(init);
    const ir_attr *old = ir_op_attr(init, "shape");
    ck_assert_uint_eq(old->n_longs, 2);
    int32_t dims[2] = {(int32_t)old->longs[0], (int32_t)old->longs[1]};
    init->type = ir_intern("truncated_gaussian_random");
    ir_op_set_ints(init, "shape", dims, 2);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    ir_op *fi = tpf_find_op(tpf_output(&ctx, "trainer_0.startup")->blocks[0], "fake_init", 0);
    ck_assert_ptr_nonnull(fi);
    const ir_attr *shape = ir_op_attr(fi, "shape");
    ck_assert_int_eq(shape->type, IR_ATTR_LONGS);
    ck_assert_uint_eq(shape->n_longs, 2);
    ck_assert_int_eq(shape->longs[0], dims[0]);
    ck_assert_int_eq(shape->longs[1], dims[1]);
    ir_op *ps = tpf_find_op(tpf_output(&ctx, "pserver_1.startup")->blocks[0],
                        "truncated_gaussian_random", 0);
    ck_assert_ptr_nonnull(ps);
    ck_assert_int_eq(ir_op_attr(ps, "shape")->type, IR_ATTR_INTS);
    ck_assert_int_eq(ir_op_attr(ps, "shape")->ints[0], (dims[0] + 1) / 2);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(table_grad_vars_without_writer)
{
    /* _update_dist_lookup_table_vars declares the trainer's table grads
     * before anything looks for the op writing the grad; with no such op
     * the seed adds no split_ids/send, but the vars are there. */
    pdt_ctx ctx;
    tpf_load(&ctx, TABLE, TABLE_STARTUP);
    ir_op *sum = NULL;
    for (size_t k = 0; k < ctx.main->blocks[0]->n_ops && !sum; k++)
        if (ir_op_output1(ctx.main->blocks[0]->ops[k], "Out") == ir_intern("shared_w@GRAD"))
            sum = ctx.main->blocks[0]->ops[k];
    ck_assert_ptr_nonnull(sum);
    ck_assert(ir_op_rename_output(sum, ir_intern("shared_w@GRAD"),
                                  ir_intern("shared_w@GRAD@RENAME@block0@0")));
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_uint_eq(tpf_count_ops(t, "split_ids"), 1);   /* the prefetch one only */
    ck_assert_ptr_nonnull(ir_block_find_var(t, "shared_w@GRAD.trainer_0.pserver_0"));
    ck_assert_ptr_nonnull(ir_block_find_var(t, "shared_w@GRAD.trainer_0.pserver_1"));
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(lookup_sparse_table_attrs_as_its_proto)
{
    /* _create_prefetch_block passes is_sparse, is_distributed and
     * padding_idx; Python's Operator keeps only the attrs the op proto
     * declares, and lookup_sparse_table declares padding_idx as int64. */
    pdt_ctx ctx;
    tpf_load(&ctx, TABLE, TABLE_STARTUP);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_program *ps = tpf_output(&ctx, "pserver_0");
    ir_op *look = tpf_find_op(ps->blocks[3], "lookup_sparse_table", 0);
    ck_assert_ptr_nonnull(look);
    ck_assert(!ir_op_has_attr(look, "is_sparse"));
    ck_assert(!ir_op_has_attr(look, "is_distributed"));
    const ir_attr *pad = ir_op_attr(look, "padding_idx");
    ck_assert_ptr_nonnull(pad);
    ck_assert_int_eq(pad->type, IR_ATTR_LONG);
    ck_assert_int_eq(pad->l, -1);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(roles_alone_match_all)
{
    static const int roles[] = {PDT_ROLE_TRAINER, PDT_ROLE_PSERVER};
    static const char *const stems[] = {"trainer_0", "trainer_0.startup", "pserver_1",
                                        "pserver_1.startup"};
    pdt_ctx all;
    tpf_load(&all, TABLE, TABLE_STARTUP);
    ck_assert_int_eq(pass_transpile(&all), PDT_OK);
    /* The manifest names the table apart from the sliced params. */
    json_error_t err;
    char *text = cli_manifest_json(all.manifest, NULL);
    json_t *m = json_loads(text, 0, &err);
    g_free(text);
    ck_assert_ptr_nonnull(m);
    json_t *t = json_object_get(m, "distributed_table");
    ck_assert_str_eq(json_string_value(json_object_get(t, "name")), "shared_w");
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(t, "pserver_shape"), 0)),
                     500);
    ck_assert_uint_eq(json_array_size(json_object_get(m, "params")), 2);
    json_decref(m);
    for (int r = 0; r < 2; r++) {
        pdt_ctx one;
        tpf_load(&one, TABLE, TABLE_STARTUP);
        one.transpile.role = roles[r];
        if (r)
            one.transpile.endpoint = ir_intern("127.0.0.1:6175");
        ck_assert_int_eq(pass_transpile(&one), PDT_OK);
        for (int s = 2 * r; s < 2 * r + 2; s++) {
            size_t la, lo;
            char *a = (char *)pdio_serialize(tpf_output(&all, stems[s]), true, &la);
            char *o = (char *)pdio_serialize(tpf_output(&one, stems[s]), true, &lo);
            ck_assert_uint_eq(la, lo);
            ck_assert_int_eq(memcmp(a, o, la), 0);
            free(a);
            free(o);
        }
        pdt_ctx_free(&one);
    }
    pdt_ctx_free(&all);
}
END_TEST

START_TEST(refused_inputs_write_nothing)
{
    pdt_ctx ctx;
    /* A lookup of the table without is_distributed, after the first
     * distributed one (the seed's assert) or before it (its RuntimeError in
     * _replace_lookup_table_op_with_prefetch). */
    for (size_t nth = 0; nth < 2; nth++) {
        tpf_load(&ctx, TABLE, TABLE_STARTUP);
        ir_op_set_bool(tpf_find_op(ctx.main->blocks[0], "lookup_table", 1 - nth), "is_distributed",
                       false);
        ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
        ck_assert_uint_eq(ctx.n_outputs, 0);
        pdt_ctx_free(&ctx);
    }

    /* Two distributed tables. */
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    make_lookup(&ctx, "lookup_table", true);
    ir_op *add = tpf_find_op(ctx.main->blocks[0], "elementwise_add", 0);
    add->type = ir_intern("lookup_table_v2");
    ir_op_set_input1(add, "W", "fc_b");
    ir_op_set_input1(add, "Ids", "x");
    ir_op_set_bool(add, "is_distributed", true);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);

    /* A table no optimizer updates (the seed's next() has nothing to find). */
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    make_lookup(&ctx, "lookup_table", true);
    ir_op *sgd = tpf_find_op(ctx.main->blocks[0], "sgd", 1);
    ck_assert_str_eq(ir_op_input1(sgd, "Param"), "fc_w");
    ir_op_set_role(sgd, IR_ROLE_BACKWARD);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);

    /* An Ids slot that names no var of block 0. */
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    make_lookup(&ctx, "lookup_table", true);
    ir_op_set_input1(ctx.main->blocks[0]->ops[0], "Ids", "nowhere");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("transpile_table");
    TCase *t = tcase_create("core");
    tcase_add_test(t, lookup_ops_of_the_table_are_replaced);
    tcase_add_test(t, table_startup_is_fake_init);
    tcase_add_test(t, fake_init_shape_is_longs);
    tcase_add_test(t, table_grad_vars_without_writer);
    tcase_add_test(t, lookup_sparse_table_attrs_as_its_proto);
    tcase_add_test(t, roles_alone_match_all);
    tcase_add_test(t, refused_inputs_write_nothing);
    suite_add_tcase(s, t);
    return s;
}
