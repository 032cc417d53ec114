/* backward_internal.h - the machinery shared by the append_backward and
 * calc_gradient passes: one function per function of Paddle's
 * python/paddle/base/backward.py (the seed, ../shared/seeds/backward.py.txt),
 * named after it.  Private to src/passes/backward/backward_*.c, append_backward.c and
 * calc_gradient.c. */
#ifndef PDT_BACKWARD_INTERNAL_H
#define PDT_BACKWARD_INTERNAL_H

#include <glib.h>
#include <stdbool.h>

#include "../../ir/ir.h"
#include "../../ir/pmap.h"

/* One backward run over a program. */
typedef struct bw_run {
    ir_program *prog;
    const char *path;           /* for messages */
    /* no_grad_dict: per block index, a set of interned grad names. */
    pmap **no_grad;
    size_t n_no_grad;
    /* op_path_dict: per block index, the forward op path (GPtrArray of
     * ir_op*), or NULL. */
    GPtrArray **op_path;
    size_t n_op_path;
    pmap *grad_to_var;    /* grad name -> forward name */
    pmap *grad_info;      /* forward name -> the grad name last created */
    const pmap *wanted;   /* the names grad_info is kept for (NULL: all) */
    /* Instead of wanted: the trainable parameters of this block (a live,
     * parameter, not stop_gradient var), when it holds one var per name,
     * so that its var map answers without a table (14 MB at 1M ops). */
    const ir_block *trainable_in;
    size_t n_wanted;      /* how many names either holds */
    bool wanted_are_params; /* wanted holds only vars with is_parameter */
    /* pdt_run_settings.drop_input_pages (NULL: none), called every
     * BW_SWEEP_DROP ops of a walk that reads the forward ops' kept bytes
     * (bw_swept). */
    void (*drop_input)(const ir_program *p);
    size_t n_swept;
    pmap *unique;         /* unique_name.generate counters */
    /* Targets whose grad names `_remove_no_grad_branch_` must keep. */
    const char *const *targets;
    size_t n_targets;
    /* Recompute's local_block and buffer_block (see backward_recompute.c). */
    int32_t scratch[2];
    size_t n_scratch;
} bw_run;

void bw_init(bw_run *r, ir_program *p, const char *path);
/* One more op of a walk that reads the forward ops' kept bytes in program
 * order: every BW_SWEEP_DROP of them the input's pages go back (issue 33:
 * 24 MB of backward's peak at 100k ops), so about that many ops' bytes
 * stay resident, not the whole file. */
void bw_swept(bw_run *r);
void bw_free(bw_run *r);
/* Grows the per-block tables after blocks were added. */
void bw_sync_blocks(bw_run *r);

/* _get_stop_gradients_: fill r->no_grad from stop_gradient vars. */
void bw_stop_gradients(bw_run *r);

/* _find_op_path_.  `targets` / `inputs`: interned names.  `no_grad` is the
 * forward-name set (added to when inputs are given).  Returns the path (a
 * new GPtrArray) or NULL after printing an error for an op type with no
 * known maker. */
GPtrArray *bw_find_op_path(bw_run *r, ir_block *b, pmap *targets,
                           const char *const *inputs, size_t n_inputs,
                           pmap *no_grad, bool is_while);

/* _find_no_grad_vars: adds to `out` (forward names). */
void bw_find_no_grad_vars(bw_run *r, ir_block *b, GPtrArray *path, pmap *targets,
                          pmap *no_grad, pmap *out);

/* The forward names of block block_idx's no-grad set (a new set). */
pmap *bw_forward_no_grad(const bw_run *r, int block_idx);
/* What append_backward and calc_gradient do after finding the path:
 * _find_no_grad_vars adds to block_no_grad (forward names), and the grads
 * of all of them join the run's no-grad set of block b. */
void bw_extend_no_grad(bw_run *r, ir_block *b, GPtrArray *path, pmap *targets,
                       pmap *block_no_grad);

/* _append_backward_ops_: builds, accumulates, prunes and appends the grad
 * ops of `path` (forward ops of block `b`) to `target`.  Returns false after
 * printing an error. */
bool bw_append_backward_ops(bw_run *r, ir_block *b, GPtrArray *path, ir_block *target);

/* _addup_repetitive_outputs_, _remove_no_grad_branch_, _find_not_need_ops:
 * each takes a GPtrArray of detached grad ops and returns a new one. */
GPtrArray *bw_addup_repetitive_outputs(bw_run *r, GPtrArray *ops, int block_idx);
GPtrArray *bw_remove_no_grad_branch(bw_run *r, GPtrArray *ops, pmap *no_grad);
GPtrArray *bw_prune_not_needed(bw_run *r, GPtrArray *grad_ops, GPtrArray *fwd_ops);

/* What the three steps above need to know about a grad op list, gathered
 * while the ops are made (and still in cache), so that each step can tell
 * up front when it has nothing to do.  See bw_append_backward_ops. */
typedef struct bw_scan {
    pmap once, multi;       /* names written once / more than once */
    bool remove_may_act;    /* some op meets a _remove_no_grad_branch_ test */
    GArray *head_cands;     /* ops reading no arg of their own forward op */
    /* The args of the last forward op asked about, as a set when it has
     * many: sum's 1M inputs get 1M grad ops, each asking of its forward
     * op (quadratic when each scanned the op). */
    const ir_op *fwd_cached;
    pmap *fwd_args;
} bw_scan;
void bw_scan_init(bw_scan *s);
void bw_scan_free(bw_scan *s);
/* Scans grad op number idx of the list, made from forward op fwd. */
void bw_scan_grad(bw_scan *s, const ir_op *op, const ir_op *fwd, size_t idx,
                  const pmap *no_grad);
/* The same steps, using a scan of exactly `ops` (scanned: the list is
 * still the one scanned). */
GPtrArray *bw_addup_scanned(bw_run *r, GPtrArray *ops, int block_idx, const bw_scan *s);
GPtrArray *bw_prune_scanned(bw_run *r, GPtrArray *grad_ops, GPtrArray *fwd_ops,
                            const bw_scan *s, bool scanned);

/* _rename_grad_ (target_grad_map: grad name -> given grad name, may be
 * NULL; skip: names never renamed, may be NULL). */
void bw_rename_grad(bw_run *r, ir_block *b, size_t start, pmap *target_grad_map,
                    pmap *skip);
/* _append_backward_vars_.  False after an error naming a grad no op makes. */
bool bw_append_backward_vars(bw_run *r, ir_block *b, size_t start);

/* _create_op_desc_ conveniences: a detached op with op_role = Backward and
 * op_device = "" unless the caller sets them. */
ir_op *bw_new_op(ir_program *p, const char *type);
/* Fills `buf` with an op's input / output argument names in Paddle's order
 * (slots sorted by name, then arguments in order); returns the count. */
size_t bw_arg_names(const ir_op *op, bool outputs, GPtrArray *buf);
/* The op's slots in Paddle's order (sorted by name) as indexes into
 * ir_op_ins(op) / ir_op_outs(op); `idx` must hold n_inputs / n_outputs entries. */
void bw_sorted_slots(const ir_op *op, bool outputs, size_t *idx);
/* A trainable parameter: live, is_parameter, not stop_gradient. */
bool bw_is_trainable(const ir_var *v);
/* Attr lookup by interned name (a pointer compare per attr). */
const ir_attr *bw_attr(const ir_op *op, const char *interned);
/* true if an input argument of op is `name` (interned). */
bool bw_reads(const ir_op *op, const char *name);
/* The seed's write test in _addup_repetitive_outputs_: `v` (an output of
 * op) is a grad name, not `empty` (@EMPTY@), not also read by op (in place). */
bool bw_counts_as_write(const ir_op *op, const pmap *inputs, const char *v, const char *empty);
/* The names op reads, as a set for bw_counts_as_write's `inputs`, when it
 * reads more than a few (an op of 1M inputs asked once per output made
 * backward quadratic); NULL otherwise (the scan is then cheaper).
 * pmap_destroy it. */
pmap *bw_input_set(const ir_op *op);
/* The block an op's "sub_block" attr names, or -1. */
int32_t bw_sub_block_id(const ir_op *op);
/* A BLOCK or BLOCKS attr of an op other than conditional_block and while,
 * or NULL.  Backward refuses such an op on the gradient path: its grad
 * maker copies forward attrs, so the grad op would name the same block
 * (or a forward block from inside a grad block), which the gate refuses;
 * only the control-flow makers point theirs at the grad sub-block. */
const ir_attr *bw_plain_block_attr(const ir_op *op);
/* ops: "block B, op K 'type'" context for messages. */
int bw_op_index(const ir_block *b, const ir_op *op);

#endif
