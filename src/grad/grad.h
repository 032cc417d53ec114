/* grad.h - gradient op makers: what Paddle's C++ `get_grad_op_desc` returns
 * for one forward op.
 *
 * One registry (table.c) maps every forward op type pdtrans knows to a
 * maker.  A maker is either a table row (slots described by a short spec,
 * see grad.c) or a small function grouped by op family.  Three outcomes:
 *  - the type is unknown: grad_maker_find() returns NULL, and the backward
 *    pass stops with an error naming the op (never skipped silently);
 *  - the type has no gradient (Paddle's EmptyGradOpMaker): kind GM_NONE;
 *  - otherwise the maker appends zero or more detached grad ops.
 *
 * Facts come from ../shared/reference/grad-ops.md and Paddle's operator
 * sources; each row says which maker it mirrors. */
#ifndef PDT_GRAD_H
#define PDT_GRAD_H

#include <glib.h>
#include <stdbool.h>

#include "../ir/ir.h"
#include "../ir/pmap.h"

#define GRAD_SUFFIX "@GRAD"
#define EMPTY_VAR "@EMPTY@"

/* Everything a maker may look at, and where it records its results. */
typedef struct grad_ctx {
    ir_program *prog;
    const ir_op *fwd;
    /* Grad names (interned "x@GRAD") that must not be produced. */
    const pmap *no_grad;
    /* Output: grad name -> forward name for every grad the maker names
     * (Paddle's grad_to_var). */
    pmap *grad_to_var;
    /* Grad sub-blocks already built for an op with a sub_block attr. */
    const ir_block *const *sub_blocks;
    size_t n_sub_blocks;
    /* Output: the grad ops, detached, in the maker's order. */
    GPtrArray *out;
    /* Set by a maker that cannot proceed (message in err). */
    char err[256];
} grad_ctx;

typedef enum {
    GM_NONE = 0,    /* no gradient: never on a gradient path */
    GM_SPEC,        /* table row: grad_type + ins/outs spec */
    GM_DEFAULT,     /* Paddle's DefaultGradOpMaker<..., true> */
    GM_FN           /* custom function */
} grad_kind;

enum {
    GF_NO_ATTRS = 1u << 0,  /* the maker copies no forward attrs */
    GF_MKLDNN_X = 1u << 1,  /* activation rule: add X when use_mkldnn */
};

typedef struct grad_maker {
    const char *type;       /* forward type */
    grad_kind kind;
    const char *grad_type;  /* GM_SPEC: NULL means type + "_grad" */
    const char *ins, *outs; /* GM_SPEC slot specs (grad.c) */
    unsigned flags;
    bool (*fn)(grad_ctx *c);/* GM_FN: false on error (c->err set) */
} grad_maker;

/* The maker registered for `type`, or NULL when pdtrans does not know it. */
const grad_maker *grad_maker_find(const char *type);
/* The whole table, for tests and documentation. */
const grad_maker *grad_makers(size_t *n);

/* Runs the maker: appends grad ops to c->out.  Returns false with c->err
 * set when the forward op breaks the maker's assumptions. */
bool grad_make(const grad_maker *m, grad_ctx *c);

/* ---- helpers for makers (grad.c) ------------------------------------- */

/* "x" -> "x@GRAD", interned. */
const char *grad_name(const char *fwd);
/* Paddle's _strip_grad_suffix_, interned. */
const char *grad_strip_suffix(const char *name);
bool grad_is_grad_name(const char *name);   /* contains "@GRAD" */

/* A new detached grad op of the given type in c->prog, appended to c->out. */
ir_op *grad_new_op(grad_ctx *c, const char *type);
/* Forward op's slot lists (empty when absent). */
const ir_slot *grad_fwd_in(grad_ctx *c, const char *slot);
const ir_slot *grad_fwd_out(grad_ctx *c, const char *slot);
bool grad_has_in(grad_ctx *c, const char *slot);
bool grad_has_out(grad_ctx *c, const char *slot);
/* Sets op slot `dst` to the forward input / output list of `src`. */
void grad_set_in(grad_ctx *c, ir_op *op, const char *dst, const char *src);
void grad_set_out_as_in(grad_ctx *c, ir_op *op, const char *dst, const char *src);
/* op input `dst` = OutputGrad(src) (records grad_to_var). */
void grad_set_og(grad_ctx *c, ir_op *op, bool as_output, const char *dst, const char *src);
/* op output `dst` = InputGrad(src, drop).  Returns false (c->err set) for
 * drop mode on a slot holding several vars, as Paddle aborts there. */
bool grad_set_ig(grad_ctx *c, ir_op *op, bool as_input, const char *dst, const char *src,
                 bool drop);

/* Family makers (custom functions), in grad_*.c. */
bool grad_fn_sum(grad_ctx *c);
bool grad_fn_scale(grad_ctx *c);
bool grad_fn_split(grad_ctx *c);
bool grad_fn_cast(grad_ctx *c);
bool grad_fn_assign(grad_ctx *c);
bool grad_fn_increment(grad_ctx *c);
bool grad_fn_batch_norm(grad_ctx *c);
bool grad_fn_sequence_pool(grad_ctx *c);
bool grad_fn_sequence_conv(grad_ctx *c);
bool grad_fn_data_norm(grad_ctx *c);
bool grad_fn_conditional_block(grad_ctx *c);
bool grad_fn_while(grad_ctx *c);

/* Which var a grad op's compile-time InferShape shares its LoD from
 * (ShareLoD) for the grad vars it writes: the forward var of the grad (most
 * grad ops), the op's first input (sum, scale, cast, assign: forward ops
 * serving as grad ops), or
 * none (the op only sets dims, so the new var has no lod_level). */
typedef enum { GRAD_LOD_FORWARD = 0, GRAD_LOD_FIRST_INPUT, GRAD_LOD_NONE } grad_lod;
grad_lod grad_lod_rule(const char *grad_type);

/* Var-type rule of a grad op for a new grad var (Paddle's InferVarType):
 * the VarType.type for `grad` written by `op`, or -1 for "dense tensor". */
int grad_var_type(const ir_block *b, const ir_op *op, const char *grad);

#endif
