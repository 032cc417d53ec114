/* transpile_gen.c - a large trained program for the transpile benchmark.
 *   transpile_gen PARAMS MAIN STARTUP
 * writes PARAMS/2 fc layers of width 128 (mul, elementwise_add, relu, scale,
 * tanh, sigmoid, assign), a mean loss, their backward ops, and per param an
 * L2 decay (scale + sum) and a momentum op, as fluid's minimize leaves them:
 * 20 ops per layer, so 10000 params give about 100000 ops.  Weights hold
 * 16384 elements, so each is cut into two slices; biases stay whole. */
#include <stdio.h>
#include <stdlib.h>

#include "io/pdio.h"
#include "ir/ir.h"

enum { H = 128 };

static void attrs(ir_op *op, int role)
{
    ir_op_set_int(op, "op_role", role);
    ir_op_set_string(op, "op_namescope", "/");
    const char *stack[] = {"  File \"train.py\", line 42, in <module>",
                           "    out = fluid.layers.fc(input=x, size=128)"};
    ir_op_set_strings(op, "op_callstack", stack, 2);
    ir_op_set_string(op, "op_device", "");
}

static void var(ir_block *b, const char *name, int64_t d0, int64_t d1, bool persistable)
{
    ir_var *v = ir_block_var(b, name);
    int64_t dims[] = {d0, d1};
    ir_var_set_dims(b->program, v, dims, d1 ? 2 : 1);
    v->persistable = persistable;
}

static ir_op *op1(ir_block *b, const char *type, const char *x, const char *out, int role)
{
    ir_op *op = ir_block_append_op(b, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    attrs(op, role);
    return op;
}

static ir_op *grad_op(ir_block *b, const char *type, const char *out, const char *x)
{
    ir_op *op = ir_block_append_op(b, type);
    ir_op_set_input1(op, "Out", out);
    ir_op_set_input1(op, "Out@GRAD", ir_internf("%s@GRAD", out));
    ir_op_set_output1(op, "X@GRAD", ir_internf("%s@GRAD", x));
    attrs(op, 1);
    return op;
}

#define N(...) ir_internf(__VA_ARGS__)

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: transpile_gen PARAMS MAIN STARTUP\n");
        return 2;
    }
    long layers = atol(argv[1]) / 2;
    ir_program *p = ir_program_new(), *s = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1), *sb = ir_program_add_block(s, -1);
    var(b, "a_0", -1, H, false);
    for (long i = 1; i <= layers; i++) {
        const char *names[] = {"h", "z", "r", "s", "t", "u", "a"};
        for (int k = 0; k < 7; k++) {
            var(b, N("%s_%ld", names[k], i), -1, H, false);
            var(b, N("%s_%ld@GRAD", names[k], i), -1, H, false);
        }
        var(b, N("fc_%ld.w_0", i), H, H, true);
        var(b, N("fc_%ld.b_0", i), H, 0, true);
        var(b, N("fc_%ld.w_0@GRAD", i), H, H, false);
        var(b, N("fc_%ld.b_0@GRAD", i), H, 0, false);
        op1(b, "mul", N("a_%ld", i - 1), N("h_%ld", i), 0);
        ir_op_set_input1(b->ops[b->n_ops - 1], "Y", N("fc_%ld.w_0", i));
        op1(b, "elementwise_add", N("h_%ld", i), N("z_%ld", i), 0);
        ir_op_set_input1(b->ops[b->n_ops - 1], "Y", N("fc_%ld.b_0", i));
        op1(b, "relu", N("z_%ld", i), N("r_%ld", i), 0);
        ir_op_set_float(op1(b, "scale", N("r_%ld", i), N("s_%ld", i), 0), "scale", 0.5f);
        op1(b, "tanh", N("s_%ld", i), N("t_%ld", i), 0);
        op1(b, "sigmoid", N("t_%ld", i), N("u_%ld", i), 0);
        op1(b, "assign", N("u_%ld", i), N("a_%ld", i), 0);
    }
    var(b, "loss", 1, 0, false);
    var(b, "loss@GRAD", 1, 0, false);
    var(b, "a_0@GRAD", -1, H, false);
    op1(b, "mean", N("a_%ld", layers), "loss", 256);
    ir_op *fill = ir_block_append_op(b, "fill_constant");
    ir_op_set_output1(fill, "Out", "loss@GRAD");
    ir_op_set_float(fill, "value", 1.0f);
    attrs(fill, 257);
    ir_op *mg = grad_op(b, "mean_grad", "loss", N("a_%ld", layers));
    ir_op_set_input1(mg, "X", N("a_%ld", layers));
    for (long i = layers; i >= 1; i--) {
        op1(b, "assign", N("a_%ld@GRAD", i), N("u_%ld@GRAD", i), 1);
        grad_op(b, "sigmoid_grad", N("u_%ld", i), N("t_%ld", i));
        grad_op(b, "tanh_grad", N("t_%ld", i), N("s_%ld", i));
        ir_op_set_float(op1(b, "scale", N("s_%ld@GRAD", i), N("r_%ld@GRAD", i), 1), "scale", 0.5f);
        grad_op(b, "relu_grad", N("r_%ld", i), N("z_%ld", i));
        const char *w = N("fc_%ld.w_0", i), *bias = N("fc_%ld.b_0", i);
        ir_op *ag = ir_block_append_op(b, "elementwise_add_grad");
        ir_op_set_input1(ag, "X", N("h_%ld", i));
        ir_op_set_input1(ag, "Y", bias);
        ir_op_set_input1(ag, "Out@GRAD", N("z_%ld@GRAD", i));
        ir_op_set_output1(ag, "X@GRAD", N("h_%ld@GRAD", i));
        ir_op_set_output1(ag, "Y@GRAD", N("%s@GRAD", bias));
        attrs(ag, 1);
        const char *rvb[] = {bias, N("%s@GRAD", bias)};
        ir_op_set_strings(ag, "op_role_var", rvb, 2);
        ir_op *mg2 = ir_block_append_op(b, "mul_grad");
        ir_op_set_input1(mg2, "X", N("a_%ld", i - 1));
        ir_op_set_input1(mg2, "Y", w);
        ir_op_set_input1(mg2, "Out@GRAD", N("h_%ld@GRAD", i));
        ir_op_set_output1(mg2, "X@GRAD", N("a_%ld@GRAD", i - 1));
        ir_op_set_output1(mg2, "Y@GRAD", N("%s@GRAD", w));
        attrs(mg2, 1);
        const char *rvw[] = {w, N("%s@GRAD", w)};
        ir_op_set_strings(mg2, "op_role_var", rvw, 2);
    }
    var(b, "learning_rate_0", 1, 0, true);
    var(sb, "learning_rate_0", 1, 0, true);
    ir_op *lr = ir_block_append_op(sb, "fill_constant");
    ir_op_set_output1(lr, "Out", "learning_rate_0");
    ir_op_set_float(lr, "value", 0.1f);
    attrs(lr, 0);
    for (long i = 1; i <= layers; i++)
        for (int k = 0; k < 2; k++) {
            const char *prm = N(k ? "fc_%ld.w_0" : "fc_%ld.b_0", i);
            const char *g = N("%s@GRAD", prm), *vel = N("%s_velocity_0", prm);
            const char *decay = N("%s_decay", prm);
            int64_t d1 = k ? H : 0;
            var(b, vel, H, d1, true);
            var(b, decay, H, d1, false);
            const char *rv[] = {prm, g};
            ir_op *sc = op1(b, "scale", prm, decay, 2);
            ir_op_set_float(sc, "scale", 0.0001f);
            ir_op_set_strings(sc, "op_role_var", rv, 2);
            ir_op *sum = ir_block_append_op(b, "sum");
            const char *xs[] = {g, decay};
            ir_op_set_input(sum, "X", xs, 2);
            ir_op_set_output1(sum, "Out", g);
            attrs(sum, 2);
            ir_op_set_strings(sum, "op_role_var", rv, 2);
            ir_op *m = ir_block_append_op(b, "momentum");
            ir_op_set_input1(m, "Param", prm);
            ir_op_set_input1(m, "Grad", g);
            ir_op_set_input1(m, "Velocity", vel);
            ir_op_set_input1(m, "LearningRate", "learning_rate_0");
            ir_op_set_output1(m, "ParamOut", prm);
            ir_op_set_output1(m, "VelocityOut", vel);
            ir_op_set_float(m, "mu", 0.9f);
            attrs(m, 2);
            ir_op_set_strings(m, "op_role_var", rv, 2);
            /* startup: the param and its velocity */
            var(sb, prm, H, d1, true);
            var(sb, vel, H, d1, true);
            int64_t shape[] = {H, H};
            ir_op *init = ir_block_append_op(sb, k ? "uniform_random" : "fill_constant");
            ir_op_set_output1(init, "Out", prm);
            ir_op_set_longs(init, "shape", shape, k ? 2 : 1);
            attrs(init, 0);
            ir_op *vi = ir_block_append_op(sb, "fill_constant");
            ir_op_set_output1(vi, "Out", vel);
            ir_op_set_longs(vi, "shape", shape, k ? 2 : 1);
            attrs(vi, 0);
        }
    int rc = pdio_write(p, argv[2], false, true) || pdio_write(s, argv[3], false, true);
    printf("%zu ops, %ld params\n", b->n_ops, layers * 2);
    ir_program_free(p);
    ir_program_free(s);
    ir_intern_shutdown();
    return rc;
}
