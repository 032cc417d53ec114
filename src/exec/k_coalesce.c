/* k_coalesce.c - coalesce_tensor (paddle/fluid/operators/coalesce_tensor_op.cc):
 * one buffer FusedOutput holding every Input, each in a slot rounded up to
 * the place's alignment, with the Outputs made views of their slots. */
#include <glib.h>
#include <string.h>

#include "../ir/tensors.h"
#include "exec.h"

/* platform::Alignment on a CPU place: CpuMinChunkSize(), 4 KiB. */
#define EX_CPU_ALIGNMENT 4096

/* Elements of `dtype_size` bytes a slot of `numel` elements takes. */
static size_t aligned_len(size_t numel, size_t dtype_size)
{
    size_t bytes = numel * dtype_size, rem = bytes % EX_CPU_ALIGNMENT;
    return (rem ? bytes + EX_CPU_ALIGNMENT - rem : bytes) / dtype_size;
}

static bool check_inputs(ex_ctx *x, const ir_op *op, size_t n)
{
    if (!n)
        return ex_fail(x, "no Input");
    if (ex_n_out(op, "Output") != n)
        return ex_fail(x, "%zu Input but %zu Output vars", n, ex_n_out(op, "Output"));
    bool same = ir_op_get_bool(op, "check_name", false);
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *t = ex_in_at(x, op, "Input", i);
        if (!t)
            return false;
        const char *in = ir_op_input(op, "Input")->args[i];
        if (t->kind != EX_DENSE)
            return ex_fail(x, "Input '%s' is not a LoDTensor", in);
        if (!t->numel)
            return ex_fail(x, "Input '%s' is empty", in);
        if (same && strcmp(in, ir_op_output(op, "Output")->args[i]))
            return ex_fail(x, "check_name: Input '%s' and Output '%s' differ", in,
                           ir_op_output(op, "Output")->args[i]);
    }
    return true;
}

static bool k_coalesce_tensor(ex_ctx *x, const ir_op *op)
{
    size_t n = ex_n_in(op, "Input");
    if (!check_inputs(x, op, n))
        return false;
    int dtype = (int)ir_op_get_int(op, "dtype", IR_FP32);
    size_t dsize = ir_dtype_size(dtype);
    if (!dsize)
        return ex_fail(x, "attr 'dtype' %d is not a tensor type", dtype);
    const char *fused = ex_out_name(op, "FusedOutput", 0);
    if (!fused)
        return ex_fail(x, "no FusedOutput");
    size_t *offsets = xmalloc_n(n + 1, sizeof(size_t)), total = 0;
    for (size_t i = 0; i < n; i++) {
        offsets[i] = total;
        total += aligned_len(ex_in_at(x, op, "Input", i)->numel, dsize);
    }
    int64_t len = (int64_t)total;
    ex_tensor *buf = ex_tensor_new(dtype, 1, &len);    /* Paddle leaves it unset */
    bool copy = ir_op_get_bool(op, "copy_data", false);
    double constant = ir_op_get_float(op, "constant", 0);
    if (!copy && ir_op_get_bool(op, "set_constant", false))
        for (size_t k = 0; k < buf->numel; k++)
            buf->data[k] = constant;
    ex_tensor **outs = xcalloc(n + 1, sizeof(ex_tensor *));
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *in = ex_in_at(x, op, "Input", i);
        if (copy)
            memcpy(buf->data + offsets[i], in->data, in->numel * sizeof *in->data);
        outs[i] = ex_tensor_new(in->dtype, in->nd, in->dims);
    }
    for (size_t i = 0; i < n; i++)
        memcpy(outs[i]->data, buf->data + offsets[i], outs[i]->numel * sizeof *buf->data);
    const char **members = xmalloc_n(n + 1, sizeof(const char *));
    for (size_t i = 0; i < n; i++)
        members[i] = ir_op_output(op, "Output")->args[i];
    /* the new slots first, so that an earlier fusion's cannot apply */
    ex_scope_fuse(x->scope, fused, members, offsets, n);
    ex_put(x, op, "FusedOutput", 0, buf);
    for (size_t i = 0; i < n; i++)
        ex_put(x, op, "Output", i, outs[i]);
    free(members);
    free(outs);
    free(offsets);
    return true;
}

const ex_kernel ex_kernels_coalesce[] = {
    {"coalesce_tensor", k_coalesce_tensor},
    {NULL, NULL},
};
