/* exec_fixture.h - builds small nets for the executor suites:
 *   net_new();  net_var("x", IR_FP32, "-1,5", DATA);  net_op("mul", "X=x Y=w", "Out=h");
 * Slot specs are "SLOT=a,b SLOT2=c"; dims are comma-separated. */
#ifndef PDT_EXEC_FIXTURE_H
#define PDT_EXEC_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "ir/ir.h"

enum { TMP = 0, DATA = 1, PARAM = 2, LOD = 4, PERSIST = 8 };

static ir_program *net_prog;

static inline ir_block *net_new(void)
{
    if (net_prog)
        ir_program_free(net_prog);
    net_prog = ir_program_new();
    return ir_program_add_block(net_prog, -1);
}

static inline ir_var *net_var(const char *name, int dtype, const char *dims, unsigned flags)
{
    ir_var *v = ir_block_var(net_prog->blocks[0], name);
    v->dtype = dtype;
    v->tensor_slot = IR_TD_LOD_TENSOR;
    int64_t d[8];
    size_t n = 0;
    for (const char *s = dims; s && *s && n < 8;) {
        char *end;
        d[n++] = strtoll(s, &end, 10);
        s = *end ? end + 1 : end;
    }
    ir_var_set_dims(net_prog, v, d, n);
    v->has_stop_gradient = true;
    v->stop_gradient = (flags & DATA) != 0;
    v->has_is_parameter = true;
    v->is_parameter = (flags & PARAM) != 0;
    v->persistable = (flags & (PARAM | PERSIST)) != 0;
    v->has_lod_level = true;
    v->lod_level = (flags & LOD) ? 1 : 0;
    return v;
}

static inline void net_slots(ir_op *op, const char *spec, bool out)
{
    char *copy = strdup(spec ? spec : "");
    for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        const char *args[16];
        size_t n = 0;
        for (char *s2 = NULL, *a = strtok_r(eq + 1, ",", &s2); a && n < 16; a = strtok_r(NULL, ",", &s2))
            args[n++] = a;
        if (out)
            ir_op_set_output(op, tok, args, n);
        else
            ir_op_set_input(op, tok, args, n);
    }
    free(copy);
}

static inline ir_op *net_op(const char *type, const char *ins, const char *outs)
{
    ir_op *op = ir_block_append_op(net_prog->blocks[0], type);
    net_slots(op, ins, false);
    net_slots(op, outs, true);
    ir_op_set_role(op, IR_ROLE_FORWARD);
    return op;
}

static inline void net_free(void)
{
    ir_program_free(net_prog);
    net_prog = NULL;
}

#endif
