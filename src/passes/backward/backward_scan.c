/* backward_scan.c - what the three steps after making the grad ops
 * (addup, no-grad removal, pruning) need to know about the list, gathered
 * while each grad op is made and still in cache (see bw_scan in
 * backward_internal.h). */
#include <string.h>

#include "../../grad/grad.h"
#include "backward_internal.h"

void bw_scan_init(bw_scan *s)
{
    memset(s, 0, sizeof *s);
    s->head_cands = g_array_new(FALSE, FALSE, sizeof(size_t));
}

void bw_scan_free(bw_scan *s)
{
    pmap_free(&s->once);
    pmap_free(&s->multi);
    pmap_destroy(s->fwd_args);
    g_array_free(s->head_cands, TRUE);
}

static bool is_arg_of(bw_scan *s, const ir_op *fwd, const char *name)
{
    if (s->fwd_cached != fwd) {
        pmap_destroy(s->fwd_args);
        s->fwd_args = NULL;
        s->fwd_cached = fwd;
        size_t n = 0;
        for (size_t i = 0; i < fwd->n_inputs; i++)
            n += ir_op_ins(fwd)[i].n_args;
        for (size_t i = 0; i < fwd->n_outputs; i++)
            n += ir_op_outs(fwd)[i].n_args;
        if (n > 16) {
            s->fwd_args = pmap_new();
            pmap_reserve(s->fwd_args, n);
            for (size_t i = 0; i < fwd->n_inputs; i++)
                for (size_t k = 0; k < ir_op_ins(fwd)[i].n_args; k++)
                    pmap_add(s->fwd_args, ir_op_ins(fwd)[i].args[k]);
            for (size_t i = 0; i < fwd->n_outputs; i++)
                for (size_t k = 0; k < ir_op_outs(fwd)[i].n_args; k++)
                    pmap_add(s->fwd_args, ir_op_outs(fwd)[i].args[k]);
        }
    }
    if (s->fwd_args)
        return pmap_has(s->fwd_args, name);
    return bw_reads(fwd, name) || ir_op_writes(fwd, name);
}

void bw_scan_grad(bw_scan *s, const ir_op *op, const ir_op *fwd, size_t idx,
                  const pmap *no_grad)
{
    const char *empty = IR_WK(EMPTY);
    /* count_writes */
    size_t n_out = 0, n_out_no = 0;
    pmap *inputs = bw_input_set(op);
    for (size_t i = 0; i < op->n_outputs; i++)
        for (size_t k = 0; k < ir_op_outs(op)[i].n_args; k++) {
            const char *v = ir_op_outs(op)[i].args[k];
            n_out++;
            n_out_no += pmap_has(no_grad, v);
            if (bw_counts_as_write(op, inputs, v, empty) && !pmap_add(&s->once, v))
                pmap_add(&s->multi, v);
        }
    pmap_destroy(inputs);
    /* The tests of bw_remove_no_grad_branch: an op without outputs or with
     * all of them no-grad, grad inputs all no-grad, or any no-grad input
     * (a zero fill).  None met by any op: the step changes nothing. */
    size_t n_gin = 0, n_gin_no = 0;
    bool reads_fwd = false, reads_no_grad = false;
    for (size_t i = 0; i < op->n_inputs; i++)
        for (size_t k = 0; k < ir_op_ins(op)[i].n_args; k++) {
            const char *v = ir_op_ins(op)[i].args[k];
            bool ng = pmap_has(no_grad, v);
            reads_no_grad |= ng;
            if (grad_is_grad_name(v)) {
                n_gin++;
                n_gin_no += ng;
            }
            if (!reads_fwd)
                reads_fwd = is_arg_of(s, fwd, v);
        }
    if (n_out == 0 || n_out_no == n_out || (n_gin && n_gin_no == n_gin) || reads_no_grad)
        s->remove_may_act = true;
    /* A _find_not_need_ops head reads no forward var at all: a grad op
     * reading an argument of its own forward op is none (the usual case);
     * the others are checked against every forward var later. */
    if (!reads_fwd)
        g_array_append_val(s->head_cands, idx);
}
