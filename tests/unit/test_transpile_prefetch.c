/* test_transpile_prefetch.c - remote_prefetch tables in the transpile pass
 * (transpile_prefetch.c): which params count, the distributed_lookup_table
 * that replaces the lookups, its position, and the refusals. */
#include <glib.h>
#include <string.h>

#include "io/pdio.h"
#include "passes/pass.h"
#include "passes/era/era.h"
#include "passes/transpile/builders.h"
#include "unit.h"
#include "transpile_fixture.h"

/* ops 0 and 2: lookup_table on shared_w (title_ids, brand_ids); op 4: cast
 * writing profile_ids; op 5: lookup_table on profile_emb. */
static const char *NET = "tests/golden/transpile_remote_prefetch/in/main.pbtxt";
static const char *NET_STARTUP = "tests/golden/transpile_remote_prefetch/in/startup.pbtxt";

static void ctx_net(pdt_ctx *ctx)
{
    tpf_load(ctx, NET, NET_STARTUP);
}


static long find_op(const ir_block *b, const char *type, size_t nth)
{
    for (size_t k = 0; k < b->n_ops; k++)
        if (b->ops[k]->type == ir_intern(type) && nth-- == 0)
            return (long)k;
    return -1;
}

/* Does any recv of block b write `name`? */
static bool recv_writes(const ir_block *b, const char *name)
{
    for (size_t k = 0; k < b->n_ops; k++)
        if (b->ops[k]->type == ir_intern("recv") && ir_op_writes(b->ops[k], name))
            return true;
    return false;
}

static bool strings_are(const ir_attr *a, const char *const *want, size_t n)
{
    if (!a || a->type != IR_ATTR_STRINGS || a->n_strings != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (a->strings[i].len != strlen(want[i]) ||
            memcmp(a->strings[i].data, want[i], a->strings[i].len) != 0)
            return false;
    return true;
}

START_TEST(lookups_become_one_distributed_lookup_table)
{
    pdt_ctx ctx;
    ctx_net(&ctx);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_uint_eq(tpf_count_ops(t, "lookup_table"), 0);
    ck_assert_uint_eq(tpf_count_ops(t, "distributed_lookup_table"), 2);
    /* shared_w: no op writes its Ids, so the op goes first. */
    const ir_op *op = t->ops[0];
    ck_assert_ptr_eq(op->type, ir_intern("distributed_lookup_table"));
    const ir_slot *ids = ir_op_input(op, "Ids");
    ck_assert_uint_eq(ids->n_args, 2);
    ck_assert_ptr_eq(ids->args[0], ir_intern("title_ids"));
    ck_assert_ptr_eq(ids->args[1], ir_intern("brand_ids"));
    ck_assert_ptr_eq(ir_op_input1(op, "W"), ir_intern("shared_w"));
    const ir_slot *outs = ir_op_output(op, "Outputs");
    ck_assert_uint_eq(outs->n_args, 2);
    ck_assert_ptr_eq(outs->args[1], ir_intern("embedding_1.tmp_0"));
    static const char *const names[] = {"shared_w.block0", "shared_w.block1"};
    static const char *const eps[] = {"127.0.0.1:6174", "127.0.0.1:6175"};
    ck_assert(strings_are(ir_op_attr(op, "table_names"), names, 2));
    ck_assert(strings_are(ir_op_attr(op, "endpoints"), eps, 2));
    const ir_attr *h = ir_op_attr(op, "height_sections");
    ck_assert_int_eq(h->type, IR_ATTR_LONGS);
    ck_assert_uint_eq(h->n_longs, 2);
    ck_assert_int_eq(h->longs[0] + h->longs[1], 1000);
    ck_assert_int_eq(ir_op_attr(op, "padding_idx")->type, IR_ATTR_LONG);
    ck_assert_int_eq(ir_op_get_int(op, "padding_idx", 0), -1);
    ck_assert_str_eq(ir_op_get_string(op, "lookup_table_version"), "lookup_table");
    ck_assert_int_eq(ir_op_role(op), IR_ROLE_FORWARD);
    /* profile_emb: right after the cast that writes profile_ids. */
    long cast = find_op(t, "cast", 0);
    ck_assert_int_eq(find_op(t, "distributed_lookup_table", 1), cast + 1);
    /* Grads still go out; the tables never come back. */
    ck_assert_uint_eq(tpf_count_ops(t, "split_selected_rows"), 2);
    ck_assert(!recv_writes(t, "shared_w") && !recv_writes(t, "profile_emb"));
    ck_assert(recv_writes(t, "fc_w"));
    const ir_op *fb = t->ops[find_op(t, "fetch_barrier", 0)];
    ck_assert_uint_eq(ir_op_output(fb, "Out")->n_args, 2);
    ck_assert_uint_eq(tpf_count_ops(t, "concat"), 1);     /* the net's own */
    const ir_block *s = tpf_output(&ctx, "trainer_0.startup")->blocks[0];
    ck_assert_uint_eq(tpf_count_ops(s, "fake_init"), 2);
    ck_assert(!recv_writes(s, "shared_w") && recv_writes(s, "fc_b"));
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(lookup_table_v2_keeps_its_version)
{
    pdt_ctx ctx;
    ctx_net(&ctx);
    ir_block *b = ctx.main->blocks[0];
    b->ops[0]->type = ir_intern("lookup_table_v2");
    b->ops[2]->type = ir_intern("lookup_table_v2");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_str_eq(ir_op_get_string(t->ops[0], "lookup_table_version"), "lookup_table_v2");
    ck_assert_uint_eq(tpf_count_ops(t, "lookup_table_v2"), 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(target_versions_before_distributed_lookup_table)
{
    /* 1.5 named by --paddle-version: v1.4.0-v1.5.1 keep the remote ops
     * (research 4z7), refused; read off the input: a warning, written. */
    pdt_ctx ctx;
    ctx_net(&ctx);
    ctx.settings.era = 105;
    ctx.settings.paddle_version = "1.5";
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EUSAGE);
    pdt_ctx_free(&ctx);
    ctx_net(&ctx);
    ctx.settings.era = 105;
    ctx.settings.paddle_version = "auto";
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    ck_assert_uint_eq(tpf_count_ops(tpf_output(&ctx, "trainer_0")->blocks[0],
                                    "distributed_lookup_table"), 2);
    pdt_ctx_free(&ctx);
    /* 1.8 (v1.8.0-v1.8.2 of six): a remote lookup_table_v2 is an ordinary
     * lookup, its table received; profile_emb's lookup_table is replaced. */
    ctx_net(&ctx);
    ctx.settings.era = 108;
    ctx.settings.paddle_version = "1.8";
    ir_block *b = ctx.main->blocks[0];
    b->ops[0]->type = ir_intern("lookup_table_v2");
    b->ops[2]->type = ir_intern("lookup_table_v2");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_uint_eq(tpf_count_ops(t, "distributed_lookup_table"), 1);
    ck_assert_uint_eq(tpf_count_ops(t, "lookup_table_v2"), 2);
    ck_assert(recv_writes(t, "shared_w.block0") && !recv_writes(t, "profile_emb.block0"));
    pdt_ctx_free(&ctx);
}
END_TEST

/* ctx_net with op 5 retyped hierarchical_sigmoid (its W profile_emb,
 * SELECTED_ROWS grad), shared_w's lookups remote or not (REMOTE_SHARED). */
static void ctx_hsigmoid(pdt_ctx *ctx, int era, const char *version, bool remote_shared)
{
    ctx_net(ctx);
    ctx->settings.era = era;
    ctx->settings.paddle_version = version;
    ir_block *b = ctx->main->blocks[0];
    b->ops[5]->type = ir_intern("hierarchical_sigmoid");
    for (size_t k = 0; k < 3 && !remote_shared; k += 2)
        ir_op_set_bool(b->ops[k], "remote_prefetch", false);
}

START_TEST(hsigmoid_counts_until_16_and_keeps_its_recv)
{
    /* distribute_transpiler.py v1.4.0-v1.6.3 list hierarchical_sigmoid
     * among the remote types (research 4z11): a 1.5 target named is
     * refused for it alone, as for a remote lookup (4z7). */
    pdt_ctx ctx;
    ctx_hsigmoid(&ctx, 105, "1.5", false);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EUSAGE);
    pdt_ctx_free(&ctx);
    /* 1.6: v1.5.2-v1.6.3 would drop its recv and leave the op without an
     * epmap; pdtrans keeps receiving profile_emb (README deviations),
     * while shared_w's lookups become the distributed_lookup_table. */
    static const int eras[] = {106, 107, PDT_ERA_NATIVE};
    static const char *const versions[] = {"1.6", "1.7", "auto"};
    for (size_t e = 0; e < 3; e++) {
        ctx_hsigmoid(&ctx, eras[e], versions[e], true);
        ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
        const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
        ck_assert_uint_eq(tpf_count_ops(t, "hierarchical_sigmoid"), 1);
        ck_assert_uint_eq(tpf_count_ops(t, "distributed_lookup_table"), 1);
        ck_assert(recv_writes(t, "profile_emb.block0") && !recv_writes(t, "shared_w.block0"));
        const ir_attr *ep = ir_op_attr(t->ops[find_op(t, "hierarchical_sigmoid", 0)], "epmap");
        ck_assert(!ep);
        pdt_ctx_free(&ctx);
    }
}
END_TEST

START_TEST(only_a_boolean_true_counts)
{
    /* Missing, false or INT 1 (`1 is True` is false in Python): shared_w is
     * an ordinary param again, received and concatenated. */
    for (int variant = 0; variant < 3; variant++) {
        pdt_ctx ctx;
        ctx_net(&ctx);
        ir_block *b = ctx.main->blocks[0];
        for (size_t k = 0; k < 3; k += 2) {
            if (variant == 0)
                ir_op_remove_attr(b->ops[k], "remote_prefetch");
            else if (variant == 1)
                ir_op_set_bool(b->ops[k], "remote_prefetch", false);
            else
                ir_op_set_int(b->ops[k], "remote_prefetch", 1);
        }
        ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
        const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
        ck_assert_uint_eq(tpf_count_ops(t, "lookup_table"), 2);
        ck_assert_uint_eq(tpf_count_ops(t, "distributed_lookup_table"), 1);
        ck_assert(recv_writes(t, "shared_w.block0") && !recv_writes(t, "profile_emb"));
        pdt_ctx_free(&ctx);
    }
}
END_TEST

START_TEST(dense_grad_is_no_remote_table)
{
    /* sparse_param_to_height_sections needs a SELECTED_ROWS grad. */
    pdt_ctx ctx;
    ctx_net(&ctx);
    ir_var *g = ir_block_find_var(ctx.main->blocks[0], "profile_emb@GRAD");
    g->type = IR_LOD_TENSOR;
    g->tensor_slot = IR_TD_LOD_TENSOR;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_uint_eq(tpf_count_ops(t, "lookup_table"), 1);
    ck_assert_uint_eq(tpf_count_ops(t, "distributed_lookup_table"), 1);
    ck_assert(recv_writes(t, "profile_emb.block0"));
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(output_without_reader_is_fine)
{
    /* The seed's min(outputs_idxs) is -1 for an output nobody reads and it
     * raises; nothing needs to follow such an op, so pdtrans places it. */
    pdt_ctx ctx;
    ctx_net(&ctx);
    ir_block *b = ctx.main->blocks[0];
    const char *other = ir_intern("embedding_1.tmp_0"), *lonely = ir_intern("embedding_0.tmp_0");
    for (size_t k = 0; k < b->n_ops; k++)
        ir_op_rename_input(b->ops[k], lonely, other);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_ptr_eq(ir_op_output(t->ops[0], "Outputs")->args[0], lonely);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(output_read_before_ids_written_is_refused)
{
    /* brand_ids's lookup (op 2) now reads profile_ids, written by the cast
     * at op 4, while its output is read at op 3: one op after the cast
     * would come too late for op 3 (the seed's check looks at the last
     * reader and lets this through). */
    pdt_ctx ctx;
    ctx_net(&ctx);
    ir_block *b = ctx.main->blocks[0];
    ir_op_set_input1(b->ops[2], "Ids", "profile_ids");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(mixed_op_types_on_one_table_are_refused)
{
    pdt_ctx ctx;
    ctx_net(&ctx);
    ctx.main->blocks[0]->ops[2]->type = ir_intern("lookup_table_v2");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(distributed_wins_over_remote_prefetch)
{
    /* PaddleRec's CTR-DNN sets is_distributed and remote_prefetch on one
     * lookup.  The seed takes the table out of params_grads first, so its
     * remote path never sees it: the result is the distributed table's,
     * op for op, whatever remote_prefetch says. */
    pdt_ctx both, dist;
    ctx_net(&both);
    ctx_net(&dist);
    for (size_t k = 0; k < 3; k += 2) {
        ir_op_set_bool(both.main->blocks[0]->ops[k], "is_distributed", true);
        ir_op_set_bool(dist.main->blocks[0]->ops[k], "is_distributed", true);
        ir_op_set_bool(dist.main->blocks[0]->ops[k], "remote_prefetch", false);
    }
    ck_assert_int_eq(pass_transpile(&both), PDT_OK);
    ck_assert_int_eq(pass_transpile(&dist), PDT_OK);
    const ir_block *a = tpf_output(&both, "trainer_0")->blocks[0];
    const ir_block *b = tpf_output(&dist, "trainer_0")->blocks[0];
    ck_assert_uint_eq(tpf_count_ops(a, "prefetch"), 1);
    /* profile_emb stays a remote table in both. */
    ck_assert_uint_eq(tpf_count_ops(a, "distributed_lookup_table"), 1);
    ck_assert_uint_eq(a->n_ops, b->n_ops);
    for (size_t k = 0; k < a->n_ops; k++)
        ck_assert_ptr_eq(a->ops[k]->type, b->ops[k]->type);
    pdt_ctx_free(&both);
    pdt_ctx_free(&dist);
}
END_TEST

START_TEST(roles_do_not_change_the_trainer)
{
    /* Building the pservers first must not change what the trainer gets. */
    pdt_ctx a, t;
    ctx_net(&a);
    ctx_net(&t);
    t.transpile.role = PDT_ROLE_TRAINER;
    ck_assert_int_eq(pass_transpile(&a), PDT_OK);
    ck_assert_int_eq(pass_transpile(&t), PDT_OK);
    size_t la, lt;
    char *x = (char *)pdio_serialize(tpf_output(&a, "trainer_0"), true, &la);
    char *y = (char *)pdio_serialize(tpf_output(&t, "trainer_0"), true, &lt);
    ck_assert_uint_eq(la, lt);
    ck_assert_int_eq(memcmp(x, y, la), 0);
    free(x);
    free(y);
    pdt_ctx_free(&a);
    pdt_ctx_free(&t);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("transpile_prefetch");
    TCase *t = tcase_create("core");
    tcase_add_test(t, lookups_become_one_distributed_lookup_table);
    tcase_add_test(t, target_versions_before_distributed_lookup_table);
    tcase_add_test(t, hsigmoid_counts_until_16_and_keeps_its_recv);
    tcase_add_test(t, lookup_table_v2_keeps_its_version);
    tcase_add_test(t, only_a_boolean_true_counts);
    tcase_add_test(t, dense_grad_is_no_remote_table);
    tcase_add_test(t, output_without_reader_is_fine);
    tcase_add_test(t, output_read_before_ids_written_is_refused);
    tcase_add_test(t, mixed_op_types_on_one_table_are_refused);
    tcase_add_test(t, distributed_wins_over_remote_prefetch);
    tcase_add_test(t, roles_do_not_change_the_trainer);
    suite_add_tcase(s, t);
    return s;
}
