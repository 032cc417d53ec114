/* optimizer_util.h - what the lr_schedule, gradient_clip, regularization
 * and optimizer passes share: SPEC parsing, Paddle-style unique names,
 * the (param, grad) list, op and var builders, and startup initialisers.
 *
 * The passes reproduce Paddle 1.8's fluid `Optimizer.minimize` (the era of
 * the transpiler tests: initializers prepend their startup ops, optimizer
 * ops live in name scopes "/optimizer/", "/optimizer_1/", ..., clip ops in
 * "/gradient_clip/").  README.md (minimize section) lists what differs and why. */
#ifndef PDT_OPTIMIZER_UTIL_H
#define PDT_OPTIMIZER_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "../pass.h"

/* ---- SPEC parsing: "kind:key=value,key=value" --------------------------
 * A list value continues over bare comma-separated items
 * ("boundaries=100,200,values=1,0.5,0.1").  Every getter marks its key as
 * used; opt_spec_finish reports the first key nobody asked for.  All
 * errors are usage errors naming the flag and key; `cmd` is the command for
 * the "try --help" hint (NULL inside a pass).  They return PDT_EUSAGE. */
typedef struct {
    const char *cmd;
    const char *flag;       /* "--optimizer", for messages */
    char *kind;
    size_t n;
    char **keys;
    char **vals;            /* comma-joined when a list */
    bool *used;
    /* The keys the getters asked for (static strings), for "did you mean"
     * when opt_spec_finish meets a key nobody asked for. */
    const char *asked[32];
    size_t n_asked;
} opt_spec;

int opt_spec_parse(const char *cmd, const char *flag, const char *text, opt_spec *out);
void opt_spec_free(opt_spec *s);
/* `alias` may be NULL ("lr" for "learning_rate"). */
int opt_spec_double(opt_spec *s, const char *key, const char *alias, double dflt, double *out);
int opt_spec_bool(opt_spec *s, const char *key, bool dflt, bool *out);
int opt_spec_long(opt_spec *s, const char *key, long dflt, long *out);
/* A string value (NULL when absent). */
int opt_spec_string(opt_spec *s, const char *key, const char **out);
/* A required list of numbers; *out is malloc'd. */
int opt_spec_doubles(opt_spec *s, const char *key, double **out, size_t *n);
int opt_spec_finish(opt_spec *s);

/* Checks an --optimizer SPEC; *lr (when non-NULL) receives its
 * learning_rate (or the default), the base rate of LR schedules.
 * Defined in optimizer.c, next to the optimizer table. */
int opt_optimizer_check(const char *cmd, const char *spec, double *lr);
/* Checks an --lr-schedule SPEC (lr_schedule.c). */
int opt_lr_schedule_check(const char *cmd, const char *spec, const char *optimizer_spec);
/* Checks --lr-schedule (SPEC, may be NULL) with --lr-warmup (WARMUP). */
int opt_lr_warmup_check(const char *cmd, const char *spec, const char *warmup,
                        const char *optimizer_spec);

/* Validates every SPEC in ctx (optimizer, regularization, clip,
 * lr_schedule) without touching the programs: the CLI calls this first so
 * that a bad flag is a usage error before any file is read. */
int opt_validate_specs(const char *cmd, const pdt_ctx *ctx);

/* The parsed forms, shared by the CLI check and the passes. */
typedef enum { OPT_CLIP_VALUE, OPT_CLIP_NORM, OPT_CLIP_GLOBAL_NORM } opt_clip_kind;
int opt_parse_clip(const char *cmd, const char *text, opt_clip_kind *kind, double *max, double *min);
typedef enum { OPT_REG_L1, OPT_REG_L2 } opt_reg_kind;
int opt_parse_regularization(const char *cmd, const char *text, opt_reg_kind *kind, double *coeff);
/* A per-parameter spec "KIND:COEFF@P1,P2,...": *params points into text. */
int opt_parse_param_regularization(const char *cmd, const char *text, opt_reg_kind *kind,
                                   double *coeff, const char **params);

/* ---- unique names (Paddle's unique_name.generate) -----------------------
 * Counters per key, started past every name the programs already hold, so
 * "learning_rate" gives learning_rate_0 in a fresh program and never a
 * name in use. */
typedef struct opt_namer opt_namer;
opt_namer *opt_namer_new(const ir_program *main, const ir_program *startup);
void opt_namer_free(opt_namer *n);
const char *opt_namer_gen(opt_namer *n, const char *key);           /* key_N */
/* LayerHelper(type) + create_variable_for_type_inference: "type_N.tmp_0". */
const char *opt_namer_layer_tmp(opt_namer *n, const char *type);
/* Name scopes: "/scope/", then "/scope_1/", ... (framework.name_scope). */
const char *opt_namer_scope(opt_namer *n, const char *scope);

/* ---- the (param, grad) list --------------------------------------------
 * Fills ctx->bw_params/bw_grads from the op_role_var attrs of backward ops
 * when append_backward has not filled them, then sorts both by parameter
 * name (apply_gradients sorts params_grads).  Checks every name is a var
 * of block 0.  Fails when the program has no parameter gradients. */
int opt_prepare_pairs(pdt_ctx *ctx);
/* Points *pos at the first op of block 0 that is already an optimizer
 * update op (op_role Optimize, inputs Param and LearningRate); false if
 * none. */
bool opt_find_update_op(const ir_block *b, size_t *pos);
/* Error + PDT_EBADINPUT when the program already holds optimizer ops. */
int opt_refuse_optimized(const pdt_ctx *ctx, const char *pass);
/* A pass re-parses the SPEC of OPTION, which the family's validate()
 * accepted before any file was read: RC is PDT_OK, or the parse failed
 * now, which is pdtrans's bug (a BUG report, PDT_EINTERNAL), never a usage
 * error. */
int opt_spec_reparsed(int rc, const char *pass, const char *option);

/* ---- builders ------------------------------------------------------------ */
/* A detached op with the framework attrs Python's Operator gives every op:
 * op_role, op_role_var ([param, grad] when param is non-NULL, else empty),
 * op_namescope, op_callstack (empty) and op_device (`device` or ""). */
ir_op *opt_op_new(ir_program *p, const char *type, int role, const char *scope,
                  const char *param, const char *grad, const char *device);
/* A var in block b shaped like `like` (dims, dtype) or [1] FP32 when NULL.
 * Flags as Paddle's helpers leave them: persistable is written only when
 * `set_persistable` (create_variable_for_type_inference sets it false). */
ir_var *opt_var_like(ir_block *b, const char *name, const ir_var *like,
                     bool set_persistable, bool persistable);
ir_var *opt_var_1(ir_block *b, const char *name, int dtype, bool set_persistable);

/* A growable list of detached ops, inserted with one splice so that a
 * pass adding k ops to a block of n costs O(n + k). */
typedef struct {
    size_t n, cap;
    ir_op **ops;
} opt_ops;
void opt_ops_push(opt_ops *l, ir_op *op);
/* Inserts the ops at pos (reversed when `reverse`) and empties the list. */
void opt_ops_splice(opt_ops *l, ir_block *b, size_t pos, bool reverse);
void opt_ops_free(opt_ops *l);

/* Startup initialisers.  fluid's initializers up to v2.0.2 prepend their
 * op to the startup block, so the last one created runs first; from
 * v2.1.0 (initializer.py) they append theirs, in creation order after the
 * input's startup ops.  A pass queues them in creation order and
 * opt_inits_flush puts them all in one splice: appended for a 2.1 or later
 * target (ERA, ctx->settings.era), prepended for older and native ones. */
typedef struct {
    ir_program *startup;
    opt_ops ops;
    bool append;
} opt_inits;
void opt_inits_begin(opt_inits *q, ir_program *startup, int era);
/* Declares the persistable global var `name` in main block 0 and the
 * startup block (same dtype/dims) and queues fill_constant(value). */
ir_var *opt_global_var(pdt_ctx *ctx, opt_inits *q, const char *name, int dtype,
                       const int64_t *dims, size_t n_dims, double value,
                       bool force_cpu, const char *device);
void opt_inits_flush(opt_inits *q);

/* fill_constant(shape [1]) -> Out=out.  `layer` selects the form
 * layers.fill_constant builds (str_value attr, empty ShapeTensor and
 * ShapeTensorList inputs); otherwise the initializer / math-op form. */
ir_op *opt_fill_constant_op(ir_program *p, const char *out, int dtype, double value,
                            bool force_cpu, bool layer, int role, const char *scope,
                            const char *param, const char *grad);

/* scale(X=x) -> Out=out with Paddle's attrs (scale, bias 0,
 * bias_after_scale true) and the empty ScaleTensor input Python adds. */
ir_op *opt_scale_op(ir_program *p, const char *x, const char *out, double scale, int role,
                    const char *scope, const char *param, const char *grad);

/* The dtype `backward()` records for the learning rate: the loss var's
 * dtype when known, else FP32. */
int opt_loss_dtype(const pdt_ctx *ctx);

/* The LR var the lr_schedule pass produced: first output of the last
 * LRSched-role op in block 0, or NULL. */
const char *opt_scheduled_lr(const ir_block *b);

/* Python's str(float(v)) (shortest round-trip repr), e.g. "0.1", "1e-08". */
void opt_py_float_str(double v, char *buf, size_t size);

#endif
