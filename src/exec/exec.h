/*
 * exec.h - the reference executor: runs a program in float64 on the CPU.
 *
 * It exists to check pdtrans's rewrites numerically (`pdtrans verify`); it
 * is not a training runtime and no other command links to it at run time.
 * Every tensor holds doubles whatever its declared dtype (integer dtypes
 * keep integral values, bool 0/1), so a program and its rewrite can be
 * compared to 1e-9.  Random ops draw from ex_rng (tensor.c), a documented
 * PRNG of our own, so runs are reproducible bit for bit.
 *
 * Contracts:
 * - A scope maps interned var names to tensors and owns them.  Its names
 *   are kept in insertion order, so any walk over a scope is deterministic.
 * - A kernel reads its inputs, builds its outputs as new tensors and only
 *   then stores them (ex_put), so in-place ops (X and Out the same var)
 *   read the old value.
 * - Failure: a kernel returns false after ex_fail(); ex_run_block prefixes
 *   the message with "block B, op I 'TYPE'" and stops.
 */
#ifndef PDT_EXEC_H
#define PDT_EXEC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../ir/ir.h"
#include "../ir/pmap.h"
#include "../ir/util.h"

#define EX_MAX_DIMS 8

typedef enum { EX_DENSE = 0, EX_ROWS } ex_kind;

typedef struct ex_tensor {
    ex_kind kind;
    int dtype;                  /* IR_FP32, IR_INT64, ... (informational) */
    int nd;
    int64_t dims[EX_MAX_DIMS];  /* EX_ROWS: dims[0] = number of rows */
    size_t numel;
    double *data;
    /* level-1 LoD offsets (n_lod = sequences + 1), or none */
    size_t n_lod;
    int64_t *lod;
    /* EX_ROWS (SELECTED_ROWS): row indexes into a table of `height` rows */
    int64_t height;
    int64_t *rows;
} ex_tensor;

ex_tensor *ex_tensor_new(int dtype, int nd, const int64_t *dims); /* zeroed */
ex_tensor *ex_tensor_like(const ex_tensor *t);                   /* zeroed, same shape */
ex_tensor *ex_tensor_copy(const ex_tensor *t);
void ex_tensor_free(ex_tensor *t);
/* A SELECTED_ROWS value: n rows of width `width`, table height h. */
ex_tensor *ex_rows_new(int dtype, size_t n, const int64_t *rows, int64_t width_nd,
                       const int64_t *width_dims, int64_t height);
/* Dense form of a SELECTED_ROWS value (duplicate rows summed); a copy of a
 * dense tensor. */
ex_tensor *ex_densify(const ex_tensor *t);
/* The slot of each id among a SELECTED_ROWS table's rows (its first, if
 * repeated), SIZE_MAX when absent; free() it.  One hash, O(rows + n). */
size_t *ex_rows_locate(const ex_tensor *table, const int64_t *ids, size_t n);
bool ex_same_shape(const ex_tensor *a, const ex_tensor *b);
void ex_tensor_set_lod(ex_tensor *t, const int64_t *lod, size_t n);
/* "[2, 3]" into buf. */
const char *ex_dims_str(const ex_tensor *t, char *buf, size_t len);

/* ---- memory budget (tensor.c) ----------------------------------------- */

/* The most bytes of tensor data the executor holds at once (--max-memory;
 * 0 restores the default, half the machine's physical memory).  Every
 * tensor is built through ex_tensor_new, which checks its element count
 * (each dim >= 0, the product of the nonzero dims within int64) and the
 * budget, and otherwise ends the run: one message naming what it was
 * building (ex_where_*), the cleanups of src/ir/alloc.h, exit 1. */
void ex_set_max_memory(uint64_t bytes);
uint64_t ex_max_memory(void);
/* What is being built: ex_run_block sets the op before each kernel;
 * callers outside an op (feeds, parameters) name their phase and var. */
void ex_where_op(int block, size_t op_idx, const char *type);
/* Forgets the tensors counted alive: for a fuzz harness that abandoned a
 * run (longjmp out of the refusal's cleanup) and leaked its tensors. */
void ex_memory_reset(void);
void ex_where_var(const char *what, const char *name);

/* The work budget (--max-work, issue 27, fuzz finding E): the executor
 * counts element operations, never the clock, so a hostile program (a
 * chain of 1000x1000 matmuls, a while loop of big ops) ends the same way
 * on every machine: one message naming the op, the cleanups, exit 1.
 * Counted: each op run (1), each element of every tensor built (its
 * fill), and the inner products of gemm and conv (m x n x k).  0 restores
 * the default, EX_DEFAULT_MAX_WORK (about a minute of plain-build work). */
#define EX_DEFAULT_MAX_WORK ((uint64_t)1 << 36)
void ex_set_max_work(uint64_t ops);
uint64_t ex_max_work(void);
uint64_t ex_work_done(void);
void ex_work(uint64_t ops);
/* ex_work(a * b * c), a product past 2^64 counting as 2^64 - 1. */
void ex_work3(uint64_t a, uint64_t b, uint64_t c);

/* ---- scope ------------------------------------------------------------ */

/* coalesce_tensor's fused buffer: its members are views into it. */
typedef struct ex_fusion ex_fusion;
typedef struct {
    ex_fusion *fusion;
    size_t k;           /* members[k] */
} ex_view;
struct ex_fusion {
    const char *fused;
    size_t n;
    const char **members;
    size_t *offsets;    /* element offset of each member in the buffer */
    ex_view *views;     /* one per member */
};

typedef struct ex_scope {
    pmap map;           /* interned name -> ex_tensor* */
    size_t n, cap;
    const char **names; /* insertion order (may hold removed names) */
    pmap fusions;       /* fused buffer name -> ex_fusion* */
    pmap views;         /* member name -> its ex_view */
} ex_scope;

ex_scope *ex_scope_new(void);
void ex_scope_free(ex_scope *s);
ex_scope *ex_scope_clone(const ex_scope *s);
ex_tensor *ex_scope_get(const ex_scope *s, const char *name);
/* Takes ownership of t; frees the previous tensor of that name.  Putting
 * a fused buffer rewrites its members; putting a member rewrites its part
 * of the buffer (a member whose size changes leaves the buffer, as a
 * resized tensor gets memory of its own in Paddle). */
void ex_scope_put(ex_scope *s, const char *name, ex_tensor *t);
/* Makes members[i] a view of `fused` from offsets[i] on (coalesce_tensor);
 * replaces an earlier fusion of the same buffer or of a member. */
void ex_scope_fuse(ex_scope *s, const char *fused, const char *const *members,
                   const size_t *offsets, size_t n);
void ex_scope_remove(ex_scope *s, const char *name);
/* Removes `name` from s and gives its tensor to the caller; NULL (and s
 * unchanged) when absent or part of a coalesce_tensor fusion. */
ex_tensor *ex_scope_take(ex_scope *s, const char *name);
/* Names holding a tensor, in insertion order; returns the count.  The
 * array is the caller's (free() it). */
size_t ex_scope_names(const ex_scope *s, const char ***out);
/* a's pointers as a NULL-terminated array of the caller's (free() it);
 * frees a.  src/exec hands out only x* memory (src/ir/README.md). */
const char **ex_names_take(GPtrArray *a);

/* ---- random numbers (tensor.c) ---------------------------------------- */

typedef struct { uint64_t s[4]; } ex_rng;
void ex_rng_seed(ex_rng *r, uint64_t seed);
uint64_t ex_rng_next(ex_rng *r);
double ex_rng_uniform(ex_rng *r);       /* [0, 1) with 53 random bits */
double ex_rng_normal(ex_rng *r);        /* N(0, 1), Box-Muller */

/* ---- running ---------------------------------------------------------- */

typedef struct ex_ctx ex_ctx;

/* Distributed ops (send, recv, barriers, listen_and_serv...) call out to
 * whoever runs the cluster (dist.c); NULL when running a single program. */
typedef struct ex_dist_hooks {
    void *user;
    bool (*op)(ex_ctx *x, const ir_op *op, void *user);
} ex_dist_hooks;

struct ex_ctx {
    const ir_program *prog;
    ex_scope *scope;
    ex_rng rng;
    const ex_dist_hooks *dist;
    /* where we are, for messages */
    const ir_block *block;
    size_t op_idx;
    char err[512];
    int depth;          /* nested sub-block runs, bounded */
};

typedef bool (*ex_kernel_fn)(ex_ctx *x, const ir_op *op);
typedef struct {
    const char *type;
    ex_kernel_fn fn;
} ex_kernel;

/* The kernel registered for `type`, or NULL. */
ex_kernel_fn ex_kernel_find(const char *type);

void ex_ctx_init(ex_ctx *x, const ir_program *prog, ex_scope *scope, uint64_t seed);
/* Runs ops [0, n) of block `idx` whose op_role passes `filter` (NULL: all).
 * On failure prints nothing; x->err holds "block B, op I 'TYPE': ...". */
typedef bool (*ex_op_filter)(const ir_op *op);
bool ex_run_block(ex_ctx *x, int32_t idx, ex_op_filter filter);
/* Runs one op (the kernel or the dist hook). */
bool ex_run_op(ex_ctx *x, const ir_op *op);

/* Role filters. */
bool ex_is_forward_op(const ir_op *op);    /* role Forward or Forward|Loss */
bool ex_is_not_optimize_op(const ir_op *op);
/* feed and fetch: a verifier puts seeded values in the feed targets itself
 * and reads results from the scope, so it skips them. */
bool ex_is_feed_fetch(const ir_op *op);

/* ---- kernel helpers (kernel.c) ---------------------------------------- */

bool ex_fail(ex_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* First argument of an input slot as a tensor; fails naming the slot or
 * the var when absent. */
const ex_tensor *ex_in(ex_ctx *x, const ir_op *op, const char *slot);
/* NULL without failing when the slot is absent or empty; fails when it
 * names a var with no value. */
const ex_tensor *ex_in_opt(ex_ctx *x, const ir_op *op, const char *slot, bool *ok);
/* i-th argument of a slot. */
const ex_tensor *ex_in_at(ex_ctx *x, const ir_op *op, const char *slot, size_t i);
size_t ex_n_in(const ir_op *op, const char *slot);
size_t ex_n_out(const ir_op *op, const char *slot);
/* Output var name (first argument), or NULL when the slot is absent, empty
 * or @EMPTY@. */
const char *ex_out_name(const ir_op *op, const char *slot, size_t i);
/* Stores t as the output (frees t when the slot names no var). */
void ex_put(ex_ctx *x, const ir_op *op, const char *slot, size_t i, ex_tensor *t);
/* Attribute lists as int64 (INTS or LONGS); n = 0 when absent. */
size_t ex_attr_ints(const ir_op *op, const char *name, int64_t *out, size_t max);
size_t ex_attr_floats(const ir_op *op, const char *name, double *out, size_t max);
/* Reads the int attr `name` (default `def`) as an axis of a tensor of nd
 * dims: a negative one counts from the end; fails naming the attr when it
 * is outside [-nd, nd) (ends <= nd when `end_ok`: an insertion point). */
bool ex_attr_axis(ex_ctx *x, const ir_op *op, const char *name, int64_t def, int nd,
                  bool end_ok, int *axis);
/* Values of integer dtypes are rounded toward zero, as a cast would. */
bool ex_dtype_is_int(int dtype);

/* Kernel tables, one per op family (k_*.c). */
extern const ex_kernel ex_kernels_math[], ex_kernels_act[], ex_kernels_misc[],
    ex_kernels_table[], ex_kernels_optim[], ex_kernels_nn[], ex_kernels_loss[], ex_kernels_nce[],
    ex_kernels_while[], ex_kernels_coalesce[];

#endif
