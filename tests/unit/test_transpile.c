/* test_transpile.c - the transpile pass: slicing arithmetic, numpy's shuffle,
 * the stable hash, and the pass on the TestBasicModel programs (one test per
 * seed defect the pass must not copy, plus the error paths). */
#include <glib.h>
#include <jansson.h>

#include "io/pdio.h"
#include "io/pdio_job.h"
#include "cli/cli.h"
#include "passes/pass.h"
#include "passes/transpile/placement.h"
#include "unit.h"
#include "transpile_fixture.h"

static const char *BASIC = "tests/golden/transpile_basic/in/main.pbtxt";
static const char *BASIC_STARTUP = "tests/golden/transpile_basic/in/startup.pbtxt";

/* ---- slice_variable ---- */

static size_t sizes(const int64_t *dims, size_t n, size_t count, int64_t min_block,
                    int64_t *out, size_t cap)
{
    int64_t *s = NULL;
    size_t k = tp_slice_sizes(dims, n, count, min_block, &s);
    for (size_t i = 0; i < k && i < cap; i++)
        out[i] = s[i];
    free(s);
    return k;
}

START_TEST(slice_two_pservers_halves_rows)
{
    int64_t d[] = {1000, 1000}, s[8];
    ck_assert_uint_eq(sizes(d, 2, 2, 8192, s, 8), 2);
    ck_assert_int_eq(s[0], 500000);
    ck_assert_int_eq(s[1], 500000);
}
END_TEST

START_TEST(slice_rounds_up_to_whole_rows)
{
    /* ceil(1e6 / 3) = 333334 -> 334 rows of 1000 -> 334, 334, 332 rows. */
    int64_t d[] = {1000, 1000}, s[8];
    ck_assert_uint_eq(sizes(d, 2, 3, 8192, s, 8), 3);
    ck_assert_int_eq(s[0], 334000);
    ck_assert_int_eq(s[1], 334000);
    ck_assert_int_eq(s[2], 332000);
    /* 7 rows of 10000: blocks of 23334 round up to 3 rows -> 3, 3, 1 rows. */
    int64_t d2[] = {7, 10000};
    ck_assert_uint_eq(sizes(d2, 2, 3, 8192, s, 8), 3);
    ck_assert_int_eq(s[0], 30000);
    ck_assert_int_eq(s[2], 10000);
}
END_TEST

START_TEST(slice_one_dim_and_small_vars)
{
    int64_t s[8];
    int64_t d1[] = {100000};
    ck_assert_uint_eq(sizes(d1, 1, 3, 8192, s, 8), 3);
    ck_assert_int_eq(s[0], 33334);
    ck_assert_int_eq(s[1], 33334);
    ck_assert_int_eq(s[2], 33332);
    int64_t d2[] = {1000};          /* below min_block_size: one block */
    ck_assert_uint_eq(sizes(d2, 1, 4, 8192, s, 8), 1);
    ck_assert_int_eq(s[0], 1000);
    int64_t d3[] = {20000};         /* room for 2 blocks only, not 4 */
    ck_assert_uint_eq(sizes(d3, 1, 4, 8192, s, 8), 2);
    int64_t d4[] = {1000, 1000};    /* min_block_size 1048576: whole */
    ck_assert_uint_eq(sizes(d4, 2, 2, 1048576, s, 8), 1);
    ck_assert_uint_eq(sizes(NULL, 0, 2, 8192, s, 8), 1); /* a scalar */
}
END_TEST

/* ---- numpy and FNV ---- */

START_TEST(numpy_shuffle_matches_numpy)
{
    /* np.random.seed(s); np.random.permutation(10) */
    size_t p[10];
    static const size_t seed0[] = {2, 8, 4, 9, 1, 6, 7, 3, 0, 5};
    static const size_t seed42[] = {8, 1, 5, 0, 7, 2, 9, 4, 3, 6};
    tp_numpy_shuffle(0, 10, p);
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq(p[i], seed0[i]);
    tp_numpy_shuffle(42, 10, p);
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq(p[i], seed42[i]);
    tp_numpy_shuffle(7, 1, p);
    ck_assert_uint_eq(p[0], 0);
}
END_TEST

START_TEST(fnv1a_known_vectors)
{
    ck_assert_uint_eq(tp_fnv1a64(""), 0xcbf29ce484222325ull);
    ck_assert_uint_eq(tp_fnv1a64("a"), 0xaf63dc4c8601ec8cull);
    ck_assert_uint_eq(tp_fnv1a64("foobar"), 0x85944171f73967e8ull);
}
END_TEST

/* ---- the pass ---- */


static char *text_of(const ir_program *p)
{
    size_t len;
    return (char *)pdio_serialize(p, true, &len);
}

static bool same_text(const ir_program *a, const ir_program *b)
{
    char *x = text_of(a), *y = text_of(b);
    bool same = strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

START_TEST(inputs_untouched_and_roles_independent)
{
    /* Seed defect 3: the seed edits the programs it is given, so its output
     * depends on call order.  pdtrans builds the pservers from the
     * untouched inputs (only the trainer, built last, takes them over), and
     * each role's output is the same whether or not the others are built. */
    pdt_ctx all, ps, tr;
    tpf_load(&all, BASIC, BASIC_STARTUP);
    ck_assert_int_eq(pass_transpile(&all), PDT_OK);
    ck_assert_uint_eq(all.n_outputs, 6);

    tpf_load(&ps, BASIC, BASIC_STARTUP);
    ps.transpile.role = PDT_ROLE_PSERVER;
    ps.transpile.endpoint = ir_intern("127.0.0.1:6175");
    char *before_main = text_of(ps.main), *before_startup = text_of(ps.startup);
    ck_assert_int_eq(pass_transpile(&ps), PDT_OK);
    ck_assert_uint_eq(ps.n_outputs, 2);
    char *after_main = text_of(ps.main), *after_startup = text_of(ps.startup);
    ck_assert_int_eq(strcmp(before_main, after_main), 0);
    ck_assert_int_eq(strcmp(before_startup, after_startup), 0);
    ck_assert(same_text(tpf_output(&all, "pserver_1"), tpf_output(&ps, "pserver_1")));
    ck_assert(same_text(tpf_output(&all, "pserver_1.startup"),
                        tpf_output(&ps, "pserver_1.startup")));

    tpf_load(&tr, BASIC, BASIC_STARTUP);
    tr.transpile.role = PDT_ROLE_TRAINER;
    ck_assert_int_eq(pass_transpile(&tr), PDT_OK);
    ck_assert_uint_eq(tr.n_outputs, 2);
    ck_assert(same_text(tpf_output(&all, "trainer_0"), tpf_output(&tr, "trainer_0")));
    ck_assert(same_text(tpf_output(&all, "trainer_0.startup"),
                        tpf_output(&tr, "trainer_0.startup")));

    /* The trainer startup keeps fc_w's full shape. */
    const ir_block *ts = tpf_output(&all, "trainer_0.startup")->blocks[0];
    const ir_attr *shape = ir_op_attr(tpf_find_op(ts, "uniform_random", 0), "shape");
    ck_assert_uint_eq(shape->n_longs, 2);
    ck_assert_int_eq(shape->longs[0], 1000);
    free(before_main);
    free(before_startup);
    free(after_main);
    free(after_startup);
    pdt_ctx_free(&all);
    pdt_ctx_free(&ps);
    pdt_ctx_free(&tr);
}
END_TEST

START_TEST(copied_ops_get_the_top_name_scope)
{
    /* The seed copies optimize ops with append_op(attrs=op.all_attrs()),
     * and Python's Operator() then sets op_namescope to the current name
     * scope ("/"): the sgd ops minimize made under "/optimizer/" lose it on
     * the pservers, while the trainer's own ops keep theirs. */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ir_op *in_sgd = tpf_find_op(ctx.main->blocks[0], "sgd", 0);
    ck_assert_str_eq(ir_op_get_string(in_sgd, "op_namescope"), "/optimizer/");
    ir_op_set_string(tpf_find_op(ctx.startup->blocks[0], "uniform_random", 0), "op_namescope",
                     "/fc_0/");
    ir_op *mul = tpf_find_op(ctx.main->blocks[0], "mul", 0);
    ir_op_set_string(mul, "op_namescope", "/fc_0/");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    for (int e = 0; e < 2; e++) {
        const ir_program *ps = tpf_output(&ctx, e ? "pserver_1" : "pserver_0");
        ir_op *sgd = tpf_find_op(ps->blocks[1], "sgd", 0);
        ck_assert_ptr_nonnull(sgd);
        ck_assert_str_eq(ir_op_get_string(sgd, "op_namescope"), "/");
    }
    ir_op *init =
        tpf_find_op(tpf_output(&ctx, "pserver_1.startup")->blocks[0], "uniform_random", 0);
    ck_assert_ptr_nonnull(init);
    ck_assert_str_eq(ir_op_get_string(init, "op_namescope"), "/");
    ir_op *tmul = tpf_find_op(tpf_output(&ctx, "trainer_0")->blocks[0], "mul", 0);
    ck_assert_str_eq(ir_op_get_string(tmul, "op_namescope"), "/fc_0/");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(renamed_grad_stays_on_trainer)
{
    /* Seed defect 2: fc_b@GRAD (unsplit, 2 trainers) becomes
     * fc_b@GRAD.trainer_0; the trainer still writes and sends it, so it
     * must not be deleted as "optimizer-only". */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *b = tpf_output(&ctx, "trainer_0")->blocks[0];
    ck_assert_ptr_nonnull(ir_block_find_var(b, "fc_b@GRAD.trainer_0"));
    ck_assert_ptr_null(ir_block_find_var(b, "fc_b@GRAD"));
    ck_assert_ptr_null(ir_block_find_var(b, "learning_rate_0"));
    ir_op *send = tpf_find_op(b, "send", 0);
    ck_assert_str_eq(ir_op_input1(send, "X"), "fc_b@GRAD.trainer_0");
    ck_assert_ptr_null(tpf_find_op(b, "sgd", 0));
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(grad_to_block_id_in_block_order)
{
    /* Seed defect 4: list(set(...)) order.  pdtrans: first occurrence. */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    ir_op *ls = tpf_find_op(tpf_output(&ctx, "pserver_0")->blocks[0], "listen_and_serv", 0);
    const ir_attr *g = ir_op_attr(ls, "grad_to_block_id");
    ck_assert_uint_eq(g->n_strings, 2);
    unit_assert_bytes_eq(g->strings[0].data, g->strings[0].len, "fc_b@GRAD:1");
    unit_assert_bytes_eq(g->strings[1].data, g->strings[1].len, "fc_w@GRAD.block1:2");
    pdt_ctx_free(&ctx);
}
END_TEST

/* Which pserver's listen_and_serv receives `grad` (merged slice name). */
static int pserver_of(const pdt_ctx *ctx, const char *merged)
{
    for (int e = 0; e < 3; e++) {
        ir_program *p = tpf_output(ctx, ir_internf("pserver_%d", e));
        if (!p)
            continue;
        const ir_slot *x = ir_op_input(tpf_find_op(p->blocks[0], "listen_and_serv", 0), "X");
        for (size_t i = 0; i < x->n_args; i++)
            if (g_str_has_prefix(x->args[i], merged))
                return e;
    }
    return -1;
}

static void check_send_matches_pservers(pdt_split_method m, size_t n_eps)
{
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    pdt_list_free(&ctx.transpile.pservers);
    ctx.transpile.pservers = pdt_list_split(n_eps == 3 ? "h:1,h:2,h:3" : "h:1,h:2");
    ctx.transpile.split_method = m;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *b = tpf_output(&ctx, "trainer_0")->blocks[0];
    for (size_t nth = 0; nth < 2; nth++) {
        ir_op *send = tpf_find_op(b, "send", nth);
        const ir_slot *x = ir_op_input(send, "X");
        const ir_attr *epmap = ir_op_attr(send, "epmap");
        ck_assert_uint_eq(epmap->n_strings, x->n_args);
        for (size_t i = 0; i < x->n_args; i++) {
            /* trainer name NAME.trainer_0 -> pserver name NAME */
            char *merged = g_strndup(x->args[i], strlen(x->args[i]) - strlen(".trainer_0"));
            int e = pserver_of(&ctx, merged);
            ck_assert_int_ge(e, 0);
            unit_assert_bytes_eq(epmap->strings[i].data, epmap->strings[i].len,
                                 ctx.transpile.pservers.items[e]);
            g_free(merged);
        }
    }
    pdt_ctx_free(&ctx);
}

START_TEST(hash_placement_agrees_everywhere)
{
    /* Seed defect 5: hashing grad and param slice names separately would
     * send a grad to one pserver and optimize its param on another. */
    check_send_matches_pservers(PDT_SPLIT_HASH, 2);
    check_send_matches_pservers(PDT_SPLIT_HASH, 3);
    check_send_matches_pservers(PDT_SPLIT_ROUND_ROBIN, 3);
    check_send_matches_pservers(PDT_SPLIT_BALANCED, 3);
}
END_TEST

START_TEST(rmsprop_mean_grad_is_sliced)
{
    /* Seed defect 6: MeanGrad keeps the full shape next to a sliced param. */
    pdt_ctx ctx;
    tpf_load(&ctx, "tests/golden/transpile_rmsprop/in/main.pbtxt",
              "tests/golden/transpile_rmsprop/in/startup.pbtxt");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_var *v =
        ir_block_find_var(tpf_output(&ctx, "pserver_0")->blocks[0], "fc_w_mean_grad_0");
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(v->n_dims, 2);
    ck_assert_int_eq(v->dims[0], 500);
    pdt_ctx_free(&ctx);
}
END_TEST

/* Marks the op at `pos` of main block 0 as an optimize-role clip op. */
static void make_clip(ir_program *p, size_t pos, const char *scope)
{
    ir_op *op = p->blocks[0]->ops[pos];
    ir_op_set_role(op, IR_ROLE_OPTIMIZE);
    ir_op_set_string(op, "op_namescope", scope);
}

START_TEST(clip_ops_stay_on_trainer_both_spellings)
{
    /* Seed defect 7: only "@CLIP" was recognised; Paddle 2.x uses the name
     * scope "gradient_clip".  Both must become Backward trainer ops. */
    static const char *const scopes[] = {"/gradient_clip/", "/clip_@CLIP/", "/optimizer/"};
    for (int i = 0; i < 3; i++) {
        pdt_ctx ctx;
        tpf_load(&ctx, "tests/golden/transpile_l2_clip/in/main.pbtxt",
                  "tests/golden/transpile_l2_clip/in/startup.pbtxt");
        make_clip(ctx.main, 11, scopes[i]);
        make_clip(ctx.main, 12, scopes[i]);
        ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
        const ir_block *b = tpf_output(&ctx, "trainer_0")->blocks[0];
        ir_op *clip = tpf_find_op(b, "clip", 1);
        ir_op *ps_clip = tpf_find_op(tpf_output(&ctx, "pserver_0")->blocks[1], "clip", 0);
        if (i < 2) {
            ck_assert_ptr_nonnull(clip);
            ck_assert_int_eq(ir_op_role(clip), IR_ROLE_BACKWARD);
            ck_assert_ptr_null(ps_clip);
        } else {
            /* Any other scope: an ordinary optimize op, run on the pserver. */
            ck_assert_ptr_null(tpf_find_op(b, "clip", 0));
            ck_assert_ptr_nonnull(ps_clip);
        }
        pdt_ctx_free(&ctx);
    }
}
END_TEST

START_TEST(errors_leave_no_outputs)
{
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    /* Options the passes cannot use are the family's validate()'s to
     * refuse, before any pass runs. */
    ctx.transpile.trainers_arg = "2";
    ck_assert_int_eq(pdt_family_transpile.validate(&ctx, "t"), PDT_OK);
    ctx.transpile.role = PDT_ROLE_PSERVER;
    ctx.transpile.endpoint = ir_intern("127.0.0.1:1");
    ck_assert_int_eq(pdt_family_transpile.validate(&ctx, "t"), PDT_EUSAGE);
    ctx.transpile.endpoint = NULL;
    ctx.transpile.trainer_id = 2;
    ck_assert_int_eq(pdt_family_transpile.validate(&ctx, "t"), PDT_EUSAGE);
    pdt_ctx_free(&ctx);

    /* A pass called around the pipeline without the plan it needs: a bug
     * (exit 3), not the user's; nothing is written. */
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ck_assert_int_eq(pass_build_pserver(&ctx), PDT_EINTERNAL);
    ck_assert_uint_eq(ctx.n_outputs + ctx.n_staged, 0);
    ck_assert_ptr_null(ctx.manifest);
    pdt_ctx_free(&ctx);

    tpf_load(&ctx, "tests/golden/transpile_errors/in/no_optimize.pbtxt", BASIC_STARTUP);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);

    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ir_op_set_input1(tpf_find_op(ctx.main->blocks[0], "sgd", 1), "LearningRate", "lr_9");
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(balanced_never_doubles_a_var)
{
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    pdt_list_free(&ctx.transpile.pservers);
    ctx.transpile.pservers = pdt_list_split("h:1,h:2,h:3,h:4");
    ctx.transpile.split_method = PDT_SPLIT_BALANCED;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    /* fc_w's 4 slices of 250 rows go to 4 different pservers. */
    for (int e = 0; e < 4; e++) {
        const ir_block *b = tpf_output(&ctx, ir_internf("pserver_%d", e))->blocks[0];
        int n = 0;
        for (int k = 0; k < 4; k++)
            n += ir_block_find_var(b, ir_internf("fc_w.block%d", k)) != NULL;
        ck_assert_int_eq(n, 1);
    }
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(sparse_table_uses_selected_rows_ops)
{
    /* An is_sparse lookup_table weight: its SELECTED_ROWS grad is cut with
     * split_selected_rows (_insert_split_op), the trainer startup replaces
     * its init op with fake_init and skips its recv/concat
     * (_fake_init_sparsetable), and the pserver records it in
     * sparse_grad_to_param. */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ir_op *op = ctx.main->blocks[0]->ops[0];   /* mul(X=x, Y=fc_w) */
    op->type = ir_intern("lookup_table");
    const char *w = "fc_w";
    ir_op_set_input(op, "W", &w, 1);
    ir_op_set_bool(op, "is_sparse", true);
    ir_var *g = ir_block_find_var(ctx.main->blocks[0], "fc_w@GRAD");
    g->type = IR_SELECTED_ROWS;
    g->tensor_slot = IR_TD_SELECTED_ROWS;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *t = tpf_output(&ctx, "trainer_0")->blocks[0];
    ir_op *split = tpf_find_op(t, "split_selected_rows", 0);
    ck_assert_ptr_nonnull(split);
    const ir_attr *h = ir_op_attr(split, "height_sections");
    ck_assert_uint_eq(h->n_longs, 2);
    ck_assert_int_eq(h->longs[0], 500);
    const ir_block *ts = tpf_output(&ctx, "trainer_0.startup")->blocks[0];
    ck_assert_ptr_null(tpf_find_op(ts, "uniform_random", 0));
    ck_assert_ptr_nonnull(tpf_find_op(ts, "fake_init", 0));
    ck_assert_ptr_null(tpf_find_op(ts, "concat", 0));
    ck_assert_ptr_nonnull(tpf_find_op(ts, "recv", 0));     /* fc_b's */
    ck_assert_ptr_null(tpf_find_op(ts, "recv", 1));
    ir_op *ls = tpf_find_op(tpf_output(&ctx, "pserver_0")->blocks[0], "listen_and_serv", 0);
    const ir_attr *sp = ir_op_attr(ls, "sparse_grad_to_param");
    ck_assert_uint_eq(sp->n_strings, 1);
    unit_assert_bytes_eq(sp->strings[0].data, sp->strings[0].len, "fc_w@GRAD.block1:fc_w.block1");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(frozen_sparse_table_is_fake_init)
{
    /* _get_sparse_table_names lists the W of every is_sparse lookup_table,
     * optimized or not; _fake_init_sparsetable then replaces the init op of
     * a frozen embedding too (it is no param, so nothing else changes). */
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    int64_t dims[2] = {100, 8};
    ir_block *b = ctx.main->blocks[0], *sb = ctx.startup->blocks[0];
    ir_var *v = ir_block_var(b, "frozen");
    ir_var_set_dims(ctx.main, v, dims, 2);
    ir_var_set_dims(ctx.main, ir_block_var(b, "frozen_out"), dims, 2);
    ir_op *look = ir_block_append_op(b, "lookup_table");
    ir_op_set_input1(look, "Ids", "x");
    ir_op_set_input1(look, "W", "frozen");
    ir_op_set_output1(look, "Out", "frozen_out");
    ir_op_set_bool(look, "is_sparse", true);
    ir_var_set_dims(ctx.startup, ir_block_var(sb, "frozen"), dims, 2);
    ir_op *init = ir_block_append_op(sb, "gaussian_random");
    ir_op_set_output1(init, "Out", "frozen");
    ir_op_set_longs(init, "shape", dims, 2);
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    const ir_block *ts = tpf_output(&ctx, "trainer_0.startup")->blocks[0];
    ck_assert_ptr_null(tpf_find_op(ts, "gaussian_random", 0));
    ir_op *fi = tpf_find_op(ts, "fake_init", 0);
    ck_assert_ptr_nonnull(fi);
    ck_assert_str_eq(ir_op_output1(fi, "Out"), "frozen");
    ck_assert_int_eq(ir_op_attr(fi, "shape")->longs[1], 8);
    ck_assert_ptr_nonnull(tpf_find_op(tpf_output(&ctx, "trainer_0")->blocks[0], "lookup_table", 0));
    pdt_ctx_free(&ctx);

    /* The seed requires exactly one init op for it (ValueError). */
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    b = ctx.main->blocks[0];
    ir_var_set_dims(ctx.main, ir_block_var(b, "frozen"), dims, 2);
    ir_var_set_dims(ctx.main, ir_block_var(b, "frozen_out"), dims, 2);
    look = ir_block_append_op(b, "lookup_table");
    ir_op_set_input1(look, "Ids", "x");
    ir_op_set_input1(look, "W", "frozen");
    ir_op_set_output1(look, "Out", "frozen_out");
    ir_op_set_bool(look, "is_sparse", true);
    pdt_quiet = true;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    pdt_quiet = false;
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(manifest_is_valid_json_with_odd_names)
{
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ir_block_rename_var(ctx.main->blocks[0], "fc_b", "b\"q\\s\x01");
    ir_block_rename_var(ctx.startup->blocks[0], "fc_b", "b\"q\\s\x01");
    /* op_role_var entries are plain strings: rename them too. */
    for (size_t k = 0; k < ctx.main->blocks[0]->n_ops; k++) {
        ir_op *op = ctx.main->blocks[0]->ops[k];
        const ir_attr *rv = ir_op_attr(op, "op_role_var");
        if (rv && rv->type == IR_ATTR_STRINGS && rv->n_strings && rv->strings[0].len == 4 &&
            !memcmp(rv->strings[0].data, "fc_b", 4)) {
            const char *v[] = {"b\"q\\s\x01", "fc_b@GRAD"};
            ir_op_set_strings(op, "op_role_var", v, 2);
        }
    }
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    json_error_t err;
    char *text = cli_manifest_json(ctx.manifest, NULL);
    json_t *m = json_loads(text, 0, &err);
    g_free(text);
    ck_assert_ptr_nonnull(m);
    /* params: one row per param (manifest_version 2), name first */
    json_t *p0 = json_array_get(json_object_get(m, "params"), 0);
    ck_assert_str_eq(json_string_value(json_array_get(p0, 0)), "b\"q\\s\x01");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_array_get(json_object_get(m, "pservers"), 0), "param_bytes")),
                     2004000);
    /* read back as an object per slice: names, shapes, offsets, endpoints */
    ck_assert(pdio_manifest_expand(m));
    ck_assert_ptr_null(json_object_get(m, "params_columns"));
    json_t *w = json_array_get(json_object_get(m, "params"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(w, "name")), "fc_w");
    json_t *s1 = json_array_get(json_object_get(w, "slices"), 1);
    json_t *g0 = json_array_get(json_object_get(w, "grad_slices"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(s1, "name")), "fc_w.block1");
    ck_assert_str_eq(json_string_value(json_object_get(g0, "name")), "fc_w@GRAD.block0");
    ck_assert_int_eq(json_integer_value(json_object_get(s1, "offset")), 500000);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(s1, "shape"), 0)), 500);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(s1, "shape"), 1)), 1000);
    json_int_t ps = json_integer_value(json_object_get(s1, "pserver"));
    ck_assert_str_eq(json_string_value(json_object_get(s1, "endpoint")),
                     json_string_value(json_object_get(
                         json_array_get(json_object_get(m, "pservers"), (size_t)ps), "endpoint")));
    ck_assert(json_is_true(json_object_get(w, "grad_trainer_suffix")));
    json_decref(m);
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("transpile");
    TCase *t = tcase_create("core");
    tcase_add_test(t, slice_two_pservers_halves_rows);
    tcase_add_test(t, slice_rounds_up_to_whole_rows);
    tcase_add_test(t, slice_one_dim_and_small_vars);
    tcase_add_test(t, numpy_shuffle_matches_numpy);
    tcase_add_test(t, fnv1a_known_vectors);
    tcase_add_test(t, inputs_untouched_and_roles_independent);
    tcase_add_test(t, copied_ops_get_the_top_name_scope);
    tcase_add_test(t, renamed_grad_stays_on_trainer);
    tcase_add_test(t, grad_to_block_id_in_block_order);
    tcase_add_test(t, hash_placement_agrees_everywhere);
    tcase_add_test(t, rmsprop_mean_grad_is_sliced);
    tcase_add_test(t, clip_ops_stay_on_trainer_both_spellings);
    tcase_add_test(t, errors_leave_no_outputs);
    tcase_add_test(t, balanced_never_doubles_a_var);
    tcase_add_test(t, sparse_table_uses_selected_rows_ops);
    tcase_add_test(t, frozen_sparse_table_is_fake_init);
    tcase_add_test(t, manifest_is_valid_json_with_odd_names);
    suite_add_tcase(s, t);
    return s;
}
