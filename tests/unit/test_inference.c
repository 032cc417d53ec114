/* test_inference.c - fuse_batch_norm and is_test on the real models: the
 * folded tensors are bit for bit what Paddle's numpy arithmetic gives (the
 * note's §3 and §11, restated here independently of fold.c), within 1e-5
 * of a float64 evaluation, and the folded conv computes what conv then
 * batch_norm computes; the other real inference programs fold with seeded
 * parameters and still pass the verifier. */
#include <glib.h>
#include <math.h>

#include "cli/cli.h"
#include "io/params.h"
#include "io/pdio.h"
#include "ir/tensors.h"
#include "passes/pass.h"
#include "passes/verify.h"
#include "unit.h"

#define REAL "../shared/testdata-real/"

typedef struct {
    const ir_op *conv, *add, *bn;   /* add NULL for pattern A */
} site;

/* The sites Paddle's scan visits (§2): adjacent conv2d, batch_norm or
 * conv2d, elementwise_add, batch_norm in block 0, i < len - 2. */
static size_t find_sites(const ir_program *p, site *out, size_t cap)
{
    const ir_block *b = p->blocks[0];
    size_t n = 0;
    for (size_t i = 0; i + 2 < b->n_ops && n < cap; i++) {
        const ir_op *o = b->ops[i], *x = b->ops[i + 1], *y = b->ops[i + 2];
        if (strcmp(o->type, "conv2d"))
            continue;
        if (!strcmp(x->type, "batch_norm")) {
            out[n++] = (site){o, NULL, x};
            i += 1;
        } else if (!strcmp(x->type, "elementwise_add") && !strcmp(y->type, "batch_norm")) {
            out[n++] = (site){o, x, y};
            i += 2;
        }
    }
    return n;
}

static const ir_tensor *val(const ir_tensors *t, const ir_op *op, const char *slot)
{
    const ir_tensor *x = ir_tensors_find(t, ir_op_input1(op, slot));
    ck_assert_msg(x != NULL, "no value for %s of %s", slot, op->type);
    return x;
}

static bool same_bits(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y;
}

/* Compares one site's folded values (in `after`) with numpy's float32
 * arithmetic and with float64; returns the worst relative float64 error. */
static double check_site(const site *s, const ir_tensors *before, const ir_tensors *after)
{
    const ir_tensor *w = val(before, s->conv, "Filter");
    const ir_tensor *scale = val(before, s->bn, "Scale"), *bias = val(before, s->bn, "Bias");
    const ir_tensor *mean = val(before, s->bn, "Mean"), *var = val(before, s->bn, "Variance");
    const ir_tensor *b = s->add ? val(before, s->add, "Y") : NULL;
    const char *bias_name = s->add ? ir_op_input1(s->add, "Y") : ir_op_input1(s->bn, "Bias");
    const ir_tensor *w2 = ir_tensors_find(after, ir_internf("%s_fuse_bn", ir_op_input1(s->conv, "Filter")));
    const ir_tensor *b2 = ir_tensors_find(after, ir_internf("%s_fuse_bn", bias_name));
    ck_assert_ptr_nonnull(w2);
    ck_assert_ptr_nonnull(b2);
    size_t c = (size_t)w->dims[0], k = (size_t)(ir_tensor_numel(w) / w->dims[0]);
    ck_assert_int_eq(ir_tensor_numel(b2), (int64_t)c);
    double worst = 0;
    for (size_t ch = 0; ch < c; ch++) {
        volatile float v = ir_tensor_get_f32(var, ch), eps = 1e-5f;
        volatile float std32 = sqrtf(v + eps);
        volatile float t = ir_tensor_get_f32(scale, ch) / std32;
        volatile float m = ir_tensor_get_f32(mean, ch), bb = ir_tensor_get_f32(bias, ch);
        float want_b;
        if (b) {
            volatile float d = ir_tensor_get_f32(b, ch) - m;
            volatile float e = d * t;
            want_b = e + bb;
        } else {
            volatile double d = 0.0 - (double)m;
            volatile double e = d * (double)t;
            want_b = (float)(e + (double)bb);
        }
        float got_b = ir_tensor_get_f32(b2, ch);
        if (!same_bits(got_b, want_b))
            ck_abort_msg("bias %s[%zu]: %.9g, numpy gives %.9g", bias_name, ch, got_b, want_b);
        double t64 = ir_tensor_get_f32(scale, ch) / sqrt((double)ir_tensor_get_f32(var, ch) + 1e-5);
        double b64 = ((b ? ir_tensor_get_f32(b, ch) : 0.0) - m) * t64 + bb;
        /* Relative to the terms' size: random values may cancel. */
        double terms = fabs(((b ? ir_tensor_get_f32(b, ch) : 0.0) - m) * t64) + fabs(bb);
        worst = fmax(worst, fabs(got_b - b64) / fmax(terms, 1e-3));
        for (size_t j = 0; j < k; j++) {
            volatile float x = ir_tensor_get_f32(w, ch * k + j);
            float want = x * t, got = ir_tensor_get_f32(w2, ch * k + j);
            if (!same_bits(got, want))
                ck_abort_msg("filter %s[%zu]: %.9g, numpy gives %.9g",
                             ir_op_input1(s->conv, "Filter"), ch * k + j, got, want);
            double w64 = x * t64;
            worst = fmax(worst, fabs(got - w64) / fmax(fabs(w64), 1e-3));
        }
    }
    return worst;
}

static int attr2(const ir_op *op, const char *name, int i, int dflt)
{
    const ir_attr *a = ir_op_attr(op, name);
    return a && a->type == IR_ATTR_INTS && a->n_ints > (size_t)i ? a->ints[i] : dflt;
}

static uint64_t rng_state;
static double rnd(void)    /* uniform [-1, 1), seeded, platform-independent */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

/* A conv2d's geometry on an input of IN x IN: Paddle's
 * UpdatePaddingAndDilation (conv_op.h): 2 paddings mean {h, h, w, w}, 4 mean
 * {top, bottom, left, right}; SAME pads to ceil(in / stride) outputs (half
 * the padding before, the rest after) with dilation 1, VALID pads nothing. */
typedef struct {
    int stride[2], pad0[2], pad1[2], dil[2], out[2];
} conv_geom;

static conv_geom conv_geometry(const ir_op *conv, const ir_tensor *w, int in)
{
    conv_geom g;
    const ir_attr *pads = ir_op_attr(conv, "paddings");
    size_t np = pads && pads->type == IR_ATTR_INTS ? pads->n_ints : 0;
    ck_assert_msg(np == 0 || np == 2 || np == 4, "conv %s: %zu paddings",
                  ir_op_input1(conv, "Filter"), np);
    const char *algo = ir_op_get_string(conv, "padding_algorithm");
    ck_assert_msg(!algo || !strcmp(algo, "EXPLICIT") || !strcmp(algo, "SAME") ||
                      !strcmp(algo, "VALID"), "conv %s: padding_algorithm %s",
                  ir_op_input1(conv, "Filter"), algo);
    for (int d = 0; d < 2; d++) {
        int k = (int)w->dims[2 + d];
        g.stride[d] = attr2(conv, "strides", d, 1);
        g.dil[d] = attr2(conv, "dilations", d, 1);
        g.pad0[d] = np == 4 ? pads->ints[2 * d] : np == 2 ? pads->ints[d] : 0;
        g.pad1[d] = np == 4 ? pads->ints[2 * d + 1] : g.pad0[d];
        if (algo && !strcmp(algo, "SAME")) {
            int out = (in + g.stride[d] - 1) / g.stride[d];
            int sum = (out - 1) * g.stride[d] + k - in;
            sum = sum > 0 ? sum : 0;
            g.pad0[d] = sum / 2;
            g.pad1[d] = sum - sum / 2;
            g.dil[d] = 1;
        } else if (algo && !strcmp(algo, "VALID")) {
            g.pad0[d] = g.pad1[d] = 0;
        }
        g.out[d] = (in + g.pad0[d] + g.pad1[d] - (g.dil[d] * (k - 1) + 1)) / g.stride[d] + 1;
        ck_assert_int_gt(g.out[d], 0);
    }
    return g;
}

/* conv2d (any groups, paddings and padding_algorithm; the filter is OIHW
 * whatever the data_format) of a random 1 x Cin x 9 x 9 input, then
 * batch_norm, in float64, against the folded conv plus bias: equal within
 * float32 rounding of the folded weights.  Every site is checked: none is
 * passed over for its attributes. */
static void check_conv_equivalence(const site *s, const ir_tensors *before,
                                   const ir_tensors *after)
{
    const ir_tensor *w = val(before, s->conv, "Filter");
    const char *bias_name = s->add ? ir_op_input1(s->add, "Y") : ir_op_input1(s->bn, "Bias");
    const ir_tensor *w2 = ir_tensors_find(after, ir_internf("%s_fuse_bn", ir_op_input1(s->conv, "Filter")));
    const ir_tensor *b2 = ir_tensors_find(after, ir_internf("%s_fuse_bn", bias_name));
    ck_assert_int_eq(w->n_dims, 4);
    int co = (int)w->dims[0], ci = (int)w->dims[1], kh = (int)w->dims[2], kw = (int)w->dims[3];
    const ir_attr *ga = ir_op_attr(s->conv, "groups");
    int groups = ga && ga->type == IR_ATTR_INT ? (int)ga->i : 1;
    ck_assert_msg(groups >= 1 && co % groups == 0, "conv %s: groups %d, %d filters",
                  ir_op_input1(s->conv, "Filter"), groups, co);
    int h = 9, wd = 9;
    conv_geom g = conv_geometry(s->conv, w, h);
    int sh = g.stride[0], sw = g.stride[1], ph = g.pad0[0], pw = g.pad0[1];
    int dh = g.dil[0], dw = g.dil[1], oh = g.out[0], ow = g.out[1];
    int cin = ci * groups;      /* the input's channels; group k reads ci of them */
    double *x = g_new(double, (size_t)cin * h * wd);
    for (int i = 0; i < cin * h * wd; i++)
        x[i] = rnd();
    for (int o = 0; o < co; o++) {
        int first = o / (co / groups) * ci;     /* the group's first input channel */
        double sc = ir_tensor_get_f32(val(before, s->bn, "Scale"), (size_t)o);
        double bb = ir_tensor_get_f32(val(before, s->bn, "Bias"), (size_t)o);
        double mu = ir_tensor_get_f32(val(before, s->bn, "Mean"), (size_t)o);
        double vr = ir_tensor_get_f32(val(before, s->bn, "Variance"), (size_t)o);
        double add = s->add ? ir_tensor_get_f32(val(before, s->add, "Y"), (size_t)o) : 0;
        for (int y = 0; y < oh; y++)
            for (int xx = 0; xx < ow; xx++) {
                double ref = 0, fold = 0, mag = 0;
                for (int c = 0; c < ci; c++)
                    for (int u = 0; u < kh; u++)
                        for (int v = 0; v < kw; v++) {
                            int iy = y * sh - ph + u * dh, ix = xx * sw - pw + v * dw;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                                continue;
                            size_t wi = (((size_t)o * ci + c) * kh + u) * kw + v;
                            double in = x[((size_t)(first + c) * h + iy) * wd + ix];
                            ref += ir_tensor_get_f32(w, wi) * in;
                            fold += ir_tensor_get_f32(w2, wi) * in;
                            mag += fabs(ir_tensor_get_f32(w2, wi) * in);
                        }
                ref = (ref + add - mu) / sqrt(vr + 1e-5) * sc + bb;
                fold += ir_tensor_get_f32(b2, (size_t)o);
                mag += fabs(ir_tensor_get_f32(b2, (size_t)o));
                /* ck_assert costs a system call: test first. */
                if (!(fabs(fold - ref) <= 1e-6 * mag + 1e-7))
                    ck_abort_msg("site %s channel %d: folded %.9g, conv then batch_norm %.9g",
                                 ir_op_input1(s->conv, "Filter"), o, fold, ref);
            }
    }
    g_free(x);
}

typedef struct {
    const char *model, *params;
    bool combined;
    size_t sites, ops_after, params_after, int_is_test;
} real_model;

static const real_model MODELS[] = {
    {"resnet_cifar10_book/__model__", "resnet_cifar10_book", false, 33, 118, 68, 31 + 1},
    {"ppocr_mobile_v2_cls/inference.pdmodel", "ppocr_mobile_v2_cls/inference.pdiparams", true,
     24, 186, 141, 0},
    {"gesiannet_gesture/__model__", "gesiannet_gesture", false, 10, 47, 26, 0},
};

static size_t count_int_is_test(const ir_program *p)
{
    size_t n = 0;
    const ir_block *b = p->blocks[0];
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_attr *a = ir_op_attr(b->ops[i], "is_test");
        ck_assert_msg(!a || (a->type == IR_ATTR_INT && a->i == 1), "op %zu '%s': is_test "
                      "is not INT 1", i, b->ops[i]->type);
        n += a != NULL;
    }
    return n;
}

static ir_tensors *load(const ir_program *p, const real_model *m)
{
    char *path = g_strconcat(REAL "params/", m->params, NULL);
    ir_tensors *t = m->combined ? params_read_combined(p, path) : params_read_dir(p, path);
    g_free(path);
    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(real_models_fold_as_paddle_computes)
{
    if (!unit_shared_dir())
        return;
    const real_model *m = &MODELS[_i];
    char *path = g_strconcat(REAL "params/", m->model, NULL);
    pdt_ctx ctx;
    ck_assert(cli_load_main(&ctx, path));
    ir_program *orig = pdio_read(path);
    ir_tensors *before = load(orig, m);
    ctx.param_values = load(ctx.main, m);
    site sites[64];
    size_t n = find_sites(orig, sites, 64);
    ck_assert_uint_eq(n, m->sites);
    const char *pipeline[] = {"fuse_batch_norm", "is_test"};
    ck_assert_int_eq(pdt_run_pipeline(&ctx, pipeline, 2), PDT_OK);
    ck_assert_uint_eq(pdt_verify(ctx.main, path, stderr), 0);
    ck_assert_uint_eq(ctx.main->blocks[0]->n_ops, m->ops_after);
    ir_var **vars;
    ck_assert_uint_eq(params_list_vars(ctx.main, &vars), m->params_after);
    g_free(vars);
    double worst = 0;
    rng_state = 42;
    for (size_t i = 0; i < n; i++) {
        worst = fmax(worst, check_site(&sites[i], before, ctx.param_values));
        check_conv_equivalence(&sites[i], before, ctx.param_values);
    }
    ck_assert_msg(worst < 1e-5, "%s: float64 cross-check off by %g", m->model, worst);
    ck_assert_uint_gt(count_int_is_test(ctx.main), 0);
    ir_tensors_free(before);
    ir_program_free(orig);
    pdt_ctx_free(&ctx);
    g_free(path);
}
END_TEST

/* Seeded values for every parameter the program declares: uniform in
 * [-1, 1), and in [0.1, 1.1) for batch_norm variances. */
static ir_tensors *generate_params(const ir_program *p)
{
    GHashTable *variances = g_hash_table_new(g_direct_hash, g_direct_equal);
    const ir_block *b0 = p->blocks[0];
    for (size_t i = 0; i < b0->n_ops; i++)
        if (!strcmp(b0->ops[i]->type, "batch_norm"))
            g_hash_table_add(variances, (gpointer)ir_op_input1(b0->ops[i], "Variance"));
    ir_tensors *t = ir_tensors_new();
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    for (size_t i = 0; i < n; i++) {
        int64_t dims[16];
        size_t rank = vars[i]->n_dims < 16 ? vars[i]->n_dims : 16;
        for (size_t d = 0; d < rank; d++)
            dims[d] = vars[i]->dims[d] < 0 ? 1 : vars[i]->dims[d];
        ir_tensor *x = ir_tensors_put(t, vars[i]->name);
        ck_assert(ir_tensor_alloc(x, vars[i]->dtype, dims, rank));
        bool var = g_hash_table_contains(variances, vars[i]->name);
        for (size_t k = 0; vars[i]->dtype == IR_FP32 && k < x->nbytes / 4; k++)
            ir_tensor_set_f32(x, k, (float)(var ? 0.6 + rnd() / 2 : rnd()));
    }
    g_free(vars);
    g_hash_table_destroy(variances);
    return t;
}

static ir_tensors *copy_params(const ir_program *p, const ir_tensors *src)
{
    GByteArray *all = g_byte_array_new();
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    for (size_t i = 0; i < n; i++)
        params_encode_record(ir_tensors_find(src, vars[i]->name), all);
    ir_tensors *t = ir_tensors_new();
    size_t off = 0;
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(params_decode_record("copy", vars[i], all->data, all->len, &off,
                                              ir_tensors_put(t, vars[i]->name)), PDT_OK);
    ck_assert_uint_eq(off, all->len);
    g_free(vars);
    g_byte_array_free(all, TRUE);
    return t;
}

/* How many ops of the program read NAME (each op once). */
static size_t readers(const ir_program *p, const char *name)
{
    size_t n = 0;
    for (size_t b = 0; b < p->n_blocks; b++)
        for (size_t i = 0; i < p->blocks[b]->n_ops; i++) {
            const ir_op *op = p->blocks[b]->ops[i];
            bool reads = false;
            for (size_t k = 0; k < op->n_inputs && !reads; k++)
                for (size_t a = 0; a < ir_op_ins(op)[k].n_args && !reads; a++)
                    reads = !strcmp(ir_op_ins(op)[k].args[a], name);
            n += reads;
        }
    return n;
}

static bool feeds_only(const ir_program *p, const ir_op *from, const char *out,
                       const ir_op *to)
{
    const char *v = ir_op_output1(from, out), *x = ir_op_input1(to, "X");
    return v && x && !strcmp(v, x) && readers(p, v) == 1;
}

/* Whether pdtrans must fold a site whose parameters all have values
 * (src/passes/inference/README.md): each op's output is the next op's X and
 * nothing else reads it, and no earlier fold took the filter or bias name
 * (FOLDED: the names of the sites folded so far). */
static bool must_fold(const ir_program *p, const site *s, GHashTable *folded)
{
    const char *filter = ir_op_input1(s->conv, "Filter");
    const char *bias = s->add ? ir_op_input1(s->add, "Y") : ir_op_input1(s->bn, "Bias");
    if (g_hash_table_contains(folded, filter) || g_hash_table_contains(folded, bias))
        return false;
    if (s->add ? !feeds_only(p, s->conv, "Output", s->add) || !feeds_only(p, s->add, "Out", s->bn)
               : !feeds_only(p, s->conv, "Output", s->bn))
        return false;
    g_hash_table_add(folded, (gpointer)filter);
    g_hash_table_add(folded, (gpointer)bias);
    return true;
}

/* The other real inference programs have no parameter files: fold them
 * with seeded values; every site of Paddle's scan is folded (bit-exactly)
 * or left exactly when must_fold says so, the counts per program are the
 * ones recorded here (sites of Paddle's scan, sites folded), and the
 * result passes the verifier. */
static const struct { const char *file; size_t sites, folded; } PROGRAMS[] = {
    {"mobilenet_v1_fp32.pdmodel", 14, 14}, {"mnasnet_x2paddle_tf.pdmodel", 33, 33},
    {"ocr_db_det.pdmodel", 34, 34}, {"ssd_mobilenet_det.pdmodel", 22, 22},
    {"picodet_v2_s_320_pedestrian.pdmodel", 49, 49},
};

START_TEST(other_real_programs_fold_with_seeded_params)
{
    if (!unit_shared_dir())
        return;
    char *path = g_strconcat(REAL, PROGRAMS[_i].file, NULL);
    pdt_ctx ctx;
    ck_assert(cli_load_main(&ctx, path));
    ir_program *orig = pdio_read(path);
    rng_state = 1234 + (uint64_t)_i;
    ir_tensors *before = generate_params(orig);
    ctx.param_values = copy_params(orig, before);
    site sites[256];
    size_t n = find_sites(orig, sites, 256);
    const char *pipeline[] = {"fuse_batch_norm", "is_test"};
    ck_assert_int_eq(pdt_run_pipeline(&ctx, pipeline, 2), PDT_OK);
    ck_assert_uint_eq(pdt_verify(ctx.main, path, stderr), 0);
    ck_assert_uint_eq(n, PROGRAMS[_i].sites);
    size_t folded = 0;
    GHashTable *taken = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; i < n; i++) {
        const char *f = ir_internf("%s_fuse_bn", ir_op_input1(sites[i].conv, "Filter"));
        bool want = must_fold(orig, &sites[i], taken);
        bool got = ir_block_find_var(ctx.main->blocks[0], f) != NULL;
        ck_assert_msg(got == want, "%s: site %zu (filter %s): %s, expected %s",
                      PROGRAMS[_i].file, i, ir_op_input1(sites[i].conv, "Filter"),
                      got ? "folded" : "left", want ? "folded" : "left");
        if (!got)
            continue;
        folded++;
        ck_assert_double_lt(check_site(&sites[i], before, ctx.param_values), 1e-5);
        if (folded <= 4)    /* the direct conv is slow; the real models run it all */
            check_conv_equivalence(&sites[i], before, ctx.param_values);
    }
    g_hash_table_destroy(taken);
    printf("%s: %zu of %zu sites folded\n", PROGRAMS[_i].file, folded, n);
    ck_assert_uint_eq(folded, PROGRAMS[_i].folded);
    ir_tensors_free(before);
    ir_program_free(orig);
    pdt_ctx_free(&ctx);
    g_free(path);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("inference");
    TCase *tc = tcase_create("inference");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, real_models_fold_as_paddle_computes, 0, 3);
    tcase_add_loop_test(tc, other_real_programs_fold_with_seeded_params, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}
