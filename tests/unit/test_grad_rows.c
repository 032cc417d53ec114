/* test_grad_rows.c - single maker rows of src/grad/table.c against Paddle's
 * grad op makers (read in PaddlePaddle/Paddle, paddle/fluid/operators/
 * *_op.cc, and paddle/phi/api/yaml for the ops generated from YAML in 3.x).
 * Each test builds one forward op as Python's Operator leaves it (every
 * slot present, dispensable ones possibly empty), runs the maker, and
 * compares the grad op's slots, written as "Slot=a,b" sorted by slot name. */
#include "unit.h"

#include "grad/grad.h"

/* "Slot=arg,arg" tokens separated by spaces; an empty slot as "Slot=". */
static void set_slots(ir_op *op, bool outputs, const char *spec)
{
    gchar **toks = g_strsplit(spec, " ", -1);
    for (gchar **t = toks; *t; t++) {
        if (!**t)
            continue;
        gchar **kv = g_strsplit(*t, "=", 2);
        gchar **args = kv[1] && *kv[1] ? g_strsplit(kv[1], ",", -1) : g_new0(gchar *, 1);
        size_t n = g_strv_length(args);
        if (outputs)
            ir_op_set_output(op, kv[0], (const char *const *)args, n);
        else
            ir_op_set_input(op, kv[0], (const char *const *)args, n);
        g_strfreev(args);
        g_strfreev(kv);
    }
    g_strfreev(toks);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *slots_str(const ir_slot *slots, size_t n)
{
    GPtrArray *parts = g_ptr_array_new_with_free_func(g_free);
    for (size_t i = 0; i < n; i++) {
        GString *s = g_string_new(slots[i].name);
        g_string_append_c(s, '=');
        for (size_t k = 0; k < slots[i].n_args; k++) {
            if (k)
                g_string_append_c(s, ',');
            g_string_append(s, slots[i].args[k]);
        }
        g_ptr_array_add(parts, g_string_free(s, FALSE));
    }
    g_ptr_array_sort(parts, cmp_str);
    g_ptr_array_add(parts, NULL);
    char *r = g_strjoinv(" ", (gchar **)parts->pdata);
    g_ptr_array_free(parts, TRUE);
    return r;
}

typedef struct {
    const char *type;
    const char *ins, *outs;     /* of the forward op */
    const char *no_grad;        /* forward names whose grads are not wanted */
    const char *grad_type;
    const char *grad_ins, *grad_outs;
} row_case;

static void check_row(const row_case *rc)
{
    ir_program *p = ir_program_new();
    ir_program_add_block(p, -1);
    ir_op *fwd = ir_op_new(p, rc->type);
    set_slots(fwd, false, rc->ins);
    set_slots(fwd, true, rc->outs);
    ir_op_set_int(fwd, "some_attr", 7);
    pmap no_grad = PMAP_INIT, to_var = PMAP_INIT;
    if (rc->no_grad) {
        gchar **names = g_strsplit(rc->no_grad, ",", -1);
        for (gchar **n = names; *n; n++)
            pmap_add(&no_grad, grad_name(*n));
        g_strfreev(names);
    }
    const grad_maker *m = grad_maker_find(rc->type);
    ck_assert_msg(m != NULL, "%s: no maker", rc->type);
    GPtrArray *out = g_ptr_array_new();
    grad_ctx c = {0};
    c.prog = p;
    c.fwd = fwd;
    c.no_grad = &no_grad;
    c.grad_to_var = &to_var;
    c.out = out;
    ck_assert_msg(grad_make(m, &c), "%s: %s", rc->type, c.err);
    ck_assert_uint_eq(out->len, 1);
    const ir_op *g = out->pdata[0];
    ck_assert_str_eq(g->type, rc->grad_type);
    char *ins = slots_str(ir_op_ins(g), g->n_inputs), *outs = slots_str(ir_op_outs(g), g->n_outputs);
    ck_assert_msg(strcmp(ins, rc->grad_ins) == 0, "%s inputs: got '%s', want '%s'", rc->type,
                  ins, rc->grad_ins);
    ck_assert_msg(strcmp(outs, rc->grad_outs) == 0, "%s outputs: got '%s', want '%s'",
                  rc->type, outs, rc->grad_outs);
    /* SetAttrMap(Attrs()): the forward attrs come along. */
    ck_assert_int_eq(ir_op_get_int(g, "some_attr", 0), 7);
    /* grad_to_var: every produced grad names its forward var. */
    for (size_t s = 0; s < g->n_outputs; s++)
        for (size_t k = 0; k < ir_op_outs(g)[s].n_args; k++)
            if (strcmp(ir_op_outs(g)[s].args[k], EMPTY_VAR) != 0)
                ck_assert_ptr_eq(grad_name(pmap_get(&to_var, ir_op_outs(g)[s].args[k])),
                                 ir_op_outs(g)[s].args[k]);
    g_free(ins);
    g_free(outs);
    g_ptr_array_free(out, TRUE);
    pmap_free(&no_grad);
    pmap_free(&to_var);
    ir_program_free(p);
}

/* group_norm_op.cc GroupNormGradMaker (2.x): X, Scale, Bias, Y@GRAD,
 * Y = Output(Y), Mean = Output(Mean), Variance = Output(Variance) ->
 * X@GRAD, Bias@GRAD, Scale@GRAD; 3.x generates the same slots from
 * group_norm_grad(x, scale, bias, y, mean, variance, y_grad).  (fluid 1.x
 * read neither X nor, at first, Mean.) */
START_TEST(test_group_norm)
{
    row_case rc = {"group_norm", "X=x Scale=s Bias=b", "Y=y Mean=m Variance=v", NULL,
                   "group_norm_grad",
                   "Bias=b Mean=m Scale=s Variance=v X=x Y=y Y@GRAD=y@GRAD",
                   "Bias@GRAD=b@GRAD Scale@GRAD=s@GRAD X@GRAD=x@GRAD"};
    check_row(&rc);
    /* Without Scale/Bias (empty slots) and with x a no-grad input: the
     * drop-mode InputGrad leaves empty lists. */
    row_case rc2 = {"group_norm", "X=x Scale= Bias=", "Y=y Mean=m Variance=v", "x",
                    "group_norm_grad", "Bias= Mean=m Scale= Variance=v X=x Y=y Y@GRAD=y@GRAD",
                    "Bias@GRAD= Scale@GRAD= X@GRAD="};
    check_row(&rc2);
}
END_TEST

/* instance_norm_op.h InstanceNormGradMaker (2.x): X, Y@GRAD, Scale,
 * SavedMean, SavedVariance -> X@GRAD, Scale@GRAD, Bias@GRAD (Bias is not
 * read; fluid 1.x also passed Bias). */
START_TEST(test_instance_norm)
{
    row_case rc = {"instance_norm", "X=x Scale=s Bias=b", "Y=y SavedMean=sm SavedVariance=sv",
                   NULL, "instance_norm_grad",
                   "SavedMean=sm SavedVariance=sv Scale=s X=x Y@GRAD=y@GRAD",
                   "Bias@GRAD=b@GRAD Scale@GRAD=s@GRAD X@GRAD=x@GRAD"};
    check_row(&rc);
}
END_TEST

/* huber_loss_op.cc HuberLossGradOpMaker: Residual = Output(Residual),
 * Out@GRAD -> X@GRAD, Y@GRAD; a stop_gradient label drops Y@GRAD. */
START_TEST(test_huber_loss)
{
    row_case rc = {"huber_loss", "X=x Y=y", "Out=o Residual=r", NULL, "huber_loss_grad",
                   "Out@GRAD=o@GRAD Residual=r", "X@GRAD=x@GRAD Y@GRAD=y@GRAD"};
    check_row(&rc);
    row_case rc2 = {"huber_loss", "X=x Y=y", "Out=o Residual=r", "y", "huber_loss_grad",
                    "Out@GRAD=o@GRAD Residual=r", "X@GRAD=x@GRAD Y@GRAD="};
    check_row(&rc2);
}
END_TEST

/* expand_op.cc ExpandGradOpMaker: X, Out@GRAD, expand_times_tensor and
 * ExpandTimes as the forward has them -> X@GRAD. */
START_TEST(test_expand)
{
    row_case rc = {"expand", "X=x ExpandTimes= expand_times_tensor=t1,t2", "Out=o", NULL,
                   "expand_grad",
                   "ExpandTimes= Out@GRAD=o@GRAD X=x expand_times_tensor=t1,t2",
                   "X@GRAD=x@GRAD"};
    check_row(&rc);
}
END_TEST

/* tile_op.cc TileGradOpMaker: X, Out@GRAD, repeat_times_tensor,
 * RepeatTimes -> X@GRAD. */
START_TEST(test_tile)
{
    row_case rc = {"tile", "X=x RepeatTimes=rt repeat_times_tensor=", "Out=o", NULL,
                   "tile_grad", "Out@GRAD=o@GRAD RepeatTimes=rt X=x repeat_times_tensor=",
                   "X@GRAD=x@GRAD"};
    check_row(&rc);
}
END_TEST

/* pad: 3.x generates pad_grad(x, out_grad, paddings, pad_value) with X
 * (no_need_buffer); the 2.x PadOpGradMaker read Out@GRAD only.  pdtrans
 * follows 3.x here.  pad2d / pad3d (pad2d_op.cc, pad3d_op.cc): X, Paddings
 * only if the forward has that input, Out@GRAD -> X@GRAD. */
START_TEST(test_pads)
{
    row_case pad = {"pad", "X=x", "Out=o", NULL, "pad_grad", "Out@GRAD=o@GRAD X=x",
                    "X@GRAD=x@GRAD"};
    check_row(&pad);
    row_case p2 = {"pad2d", "X=x Paddings=pd", "Out=o", NULL, "pad2d_grad",
                   "Out@GRAD=o@GRAD Paddings=pd X=x", "X@GRAD=x@GRAD"};
    check_row(&p2);
    row_case p2b = {"pad2d", "X=x", "Out=o", NULL, "pad2d_grad", "Out@GRAD=o@GRAD X=x",
                    "X@GRAD=x@GRAD"};
    check_row(&p2b);
    row_case p3 = {"pad3d", "X=x Paddings=", "Out=o", NULL, "pad3d_grad",
                   "Out@GRAD=o@GRAD Paddings= X=x", "X@GRAD=x@GRAD"};
    check_row(&p3);
    row_case p3b = {"pad3d", "X=x", "Out=o", "x", "pad3d_grad", "Out@GRAD=o@GRAD X=x",
                    "X@GRAD="};
    check_row(&p3b);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("grad_rows");
    TCase *tc = tcase_create("rows");
    tcase_add_test(tc, test_group_norm);
    tcase_add_test(tc, test_instance_norm);
    tcase_add_test(tc, test_huber_loss);
    tcase_add_test(tc, test_expand);
    tcase_add_test(tc, test_tile);
    tcase_add_test(tc, test_pads);
    suite_add_tcase(s, tc);
    return s;
}
