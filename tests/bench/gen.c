/* gen.c - synthetic programs for `make bench`.
 *   gen mlp LAYERS OUT   fc layers (mul, elementwise_add, relu), then
 *                        square_error_cost-style loss and mean: the
 *                        backward benchmark's input (loss var: 'loss')
 *   gen wide OPS OUT     OPS ops (mul, then an in-place relu) over about
 *                        OPS/2 vars, with 1000 shared weights and
 *                        realistic attrs: the convert benchmark's input */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/pdio.h"
#include "ir/ir.h"

static void add_common_attrs(ir_op *op, int role)
{
    ir_op_set_int(op, "op_role", role);
    ir_op_set_string(op, "op_namescope", "/");
    const char *stack[] = {"  File \"train.py\", line 42, in <module>",
                           "    out = fluid.layers.fc(input=x, size=1000)"};
    ir_op_set_strings(op, "op_callstack", stack, 2);
    ir_op_set_string(op, "op_device", "");
}

static ir_var *tensor(ir_block *b, const char *name, int64_t d0, int64_t d1, bool param)
{
    ir_var *v = ir_block_var(b, name);
    int64_t dims[] = {d0, d1};
    ir_var_set_dims(b->program, v, dims, 2);
    if (param) {
        v->persistable = true;
        v->has_is_parameter = v->is_parameter = true;
    }
    return v;
}

static void gen_mlp(ir_block *b, long layers)
{
    const int width = 16;
    tensor(b, "x", -1, width, false)->has_stop_gradient = true;
    ir_block_find_var(b, "x")->stop_gradient = true;
    const char *prev = ir_intern("x");
    for (long i = 0; i < layers; i++) {
        const char *w = ir_internf("fc_%ld.w_0", i), *bias = ir_internf("fc_%ld.b_0", i);
        const char *t0 = ir_internf("fc_%ld.tmp_0", i), *t1 = ir_internf("fc_%ld.tmp_1", i);
        const char *t2 = ir_internf("fc_%ld.tmp_2", i);
        tensor(b, w, width, width, true);
        tensor(b, bias, width, 1, true);
        tensor(b, t0, -1, width, false);
        tensor(b, t1, -1, width, false);
        tensor(b, t2, -1, width, false);
        ir_op *mul = ir_block_append_op(b, "mul");
        ir_op_set_input1(mul, "X", prev);
        ir_op_set_input1(mul, "Y", w);
        ir_op_set_output1(mul, "Out", t0);
        ir_op_set_int(mul, "x_num_col_dims", 1);
        ir_op_set_int(mul, "y_num_col_dims", 1);
        add_common_attrs(mul, 0);
        ir_op *add = ir_block_append_op(b, "elementwise_add");
        ir_op_set_input1(add, "X", t0);
        ir_op_set_input1(add, "Y", bias);
        ir_op_set_output1(add, "Out", t1);
        ir_op_set_int(add, "axis", 1);
        add_common_attrs(add, 0);
        ir_op *relu = ir_block_append_op(b, "relu");
        ir_op_set_input1(relu, "X", t1);
        ir_op_set_output1(relu, "Out", t2);
        add_common_attrs(relu, 0);
        prev = t2;
    }
    tensor(b, "sq", -1, width, false);
    tensor(b, "loss", 1, 1, false);
    ir_op *sq = ir_block_append_op(b, "square");
    ir_op_set_input1(sq, "X", prev);
    ir_op_set_output1(sq, "Out", "sq");
    add_common_attrs(sq, 0);
    ir_op *mean = ir_block_append_op(b, "mean");
    ir_op_set_input1(mean, "X", "sq");
    ir_op_set_output1(mean, "Out", "loss");
    add_common_attrs(mean, 0);
}

static void gen_wide(ir_block *b, long ops)
{
    const int width = 16, n_weights = 1000;
    tensor(b, "x", -1, width, false);
    for (int i = 0; i < n_weights; i++)
        tensor(b, ir_internf("w_%d", i), width, width, true);
    const char *prev = ir_intern("x");
    for (long i = 0; i < ops / 2; i++) {
        const char *t = ir_internf("t_%ld", i);
        tensor(b, t, -1, width, false);
        ir_op *mul = ir_block_append_op(b, "mul");
        ir_op_set_input1(mul, "X", prev);
        ir_op_set_input1(mul, "Y", ir_internf("w_%ld", i % n_weights));
        ir_op_set_output1(mul, "Out", t);
        ir_op_set_int(mul, "x_num_col_dims", 1);
        ir_op_set_int(mul, "y_num_col_dims", 1);
        add_common_attrs(mul, 0);
        ir_op *relu = ir_block_append_op(b, "relu");
        ir_op_set_input1(relu, "X", t);
        ir_op_set_output1(relu, "Out", t);
        add_common_attrs(relu, 0);
        prev = t;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gen mlp|wide N OUT\n");
        return 2;
    }
    long n = atol(argv[2]);
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    if (strcmp(argv[1], "mlp") == 0)
        gen_mlp(b, n);
    else if (strcmp(argv[1], "wide") == 0)
        gen_wide(b, n);
    else {
        fprintf(stderr, "gen: unknown kind '%s'\n", argv[1]);
        return 2;
    }
    int rc = pdio_write(p, argv[3], false, true);
    ir_program_free(p);
    ir_intern_shutdown();
    return rc;
}
