/* dist.h - `verify transpile`: the trainers and pservers of one transpile
 * run in one process, with send/recv/barriers/collectives moving tensors
 * between their scopes, against single-process training. */
#ifndef PDT_EXEC_DIST_H
#define PDT_EXEC_DIST_H

#include "exec.h"

typedef enum { EX_CL_PSERVER = 0, EX_CL_NCCL2, EX_CL_COLLECTIVE } ex_cluster_mode;

typedef struct {
    ir_program *main, *startup;     /* borrowed */
    const char *endpoint;           /* pservers: where they listen */
    ex_scope *scope;
    ex_ctx ctx;
    size_t pc;                      /* trainers: next op of the running program */
    bool synced;                    /* nccl2: grads already averaged this step */
    size_t average_at;              /* nccl2: the pc they are averaged at, or SIZE_MAX */
    pmap accepts;                   /* pservers: the var names trainers may send */
} ex_proc;

/* A lookup table the trainers never hold: its values live on the pservers. */
typedef enum {
    EX_TABLE_BY_ID = 0, /* distributed table: pserver k holds ids k, k + n, ... (prefetch) */
    EX_TABLE_SLICED     /* remote_prefetch: row slices, as a sliced param */
} ex_table_kind;

typedef struct {
    const char *name;               /* the table param of MAIN */
    ex_table_kind kind;
    int64_t height;
    size_t n_slices;                /* EX_TABLE_SLICED: slice k is var slices[k] at eps[k] */
    const char **slices, **eps;
} ex_table;

/* GEO-SGD (dist_mode 3): one param of the manifest's vars_info. */
typedef struct {
    const char *name;
    size_t n_slices;
    const char **slices, **eps;     /* slice k is var slices[k] at eps[k] */
    int64_t *sections;              /* its rows */
    bool sparse;
} ex_geo_var;

typedef struct ex_geo ex_geo;       /* dist_geo.c */

typedef struct ex_cluster {
    ex_cluster_mode mode;
    int dist_mode;                  /* 0 sync, 1 half-async, 2 async, 3 GEO */
    size_t n_trainers, n_pservers;
    ex_proc *trainers, *pservers;
    ex_dist_hooks hooks;
    /* grad names averaged by simulated allreduce (nccl2) */
    size_t cur_trainer;             /* the trainer running now */
    size_t n_grads;
    const char **grads;
    size_t n_tables;
    ex_table *tables;
    /* GEO: the push interval and vars_info (owned: ex_cluster_free frees
     * them), and the communicator's state */
    int geo_push_nums;
    size_t n_geo_vars;
    ex_geo_var *geo_vars;
    ex_geo *geo;
    char err[700];
} ex_cluster;

typedef struct {
    uint64_t seed;
    int64_t batch;
    int steps;
    double tolerance;
} ex_transpile_opts;

typedef struct {
    const char *param;              /* or a grad, when is_grad */
    double worst_rel;
    bool finite;
    bool is_grad;                   /* MAIN has no optimizer op: grads compared */
    /* GEO: a pserver's slice against its value after the pserver startup
     * plus every delta pushed (always exact) */
    bool pserver_sum;
} ex_param_result;

/* One program a transpile produced, by its output stem ("trainer_0",
 * "pserver_1.startup"): what pdt_job hands over, or what verify read. */
typedef struct {
    const char *stem;               /* interned */
    ir_program *program;            /* borrowed */
} ex_output;

/* What the cluster of a transpile job looks like (the job's options). */
typedef struct {
    ex_cluster_mode mode;
    int dist_mode;                  /* as ex_cluster.dist_mode */
    size_t n_trainers;              /* trainer_0 .. trainer_{n-1} */
    size_t devices;                 /* simulated devices per trainer (0 or 1: one) */
    size_t n_pservers;
    const char *const *endpoints;   /* pserver_K listens at endpoints[K] */
} ex_cluster_shape;

/* Sets c's mode, trainers and pservers (arrays allocated here; free them
 * with ex_cluster_release) from OUTS, the outputs of one or more transpile
 * runs: trainer t runs trainer_<t> and trainer_<t>.startup on each of its
 * devices, pserver K (when built) pserver_<K> and pserver_<K>.startup.
 * The programs stay the caller's.  False with c->err set when a trainer's
 * or a built pserver's programs are missing. */
bool ex_cluster_from_outputs(ex_cluster *c, const ex_cluster_shape *s, const ex_output *outs,
                             size_t n);
/* ex_cluster_free, and the trainer and pserver arrays too. */
void ex_cluster_release(ex_cluster *c);

/* Runs `steps` steps of the cluster (programs already set in c->trainers /
 * c->pservers) and of single-process training of `main`/`startup`, and
 * compares each parameter of main's optimizer ops held by trainer 0.  The
 * results array is the caller's (free() it). */
bool ex_transpile_check(ex_cluster *c, const ir_program *main, const ir_program *startup,
                        const ex_transpile_opts *o, ex_param_result **res, size_t *n);

/* (double)(float)(1 / n): the mean's factor as the job's float32 scale
 * attrs hold it. */
double ex_mean_factor(size_t n);

/* dist_lr.c: an async or half-async job's reference starts each LR step
 * counter the pservers' LR-decay block sums per trainer at n-1, where
 * Paddle's async counter puts it (verify job's criterion). */
void ex_lr_counter_start(ex_cluster *c, ex_scope *R);

/* Runs the pservers' and then the trainers' startup programs. */
bool ex_cluster_startup(ex_cluster *c, uint64_t seed);
/* Runs every trainer's main program once (one step), with the pservers. */
bool ex_cluster_step(ex_cluster *c);
void ex_cluster_free(ex_cluster *c);

/* The table `name` is (or NULL), and its value gathered from the pservers
 * (a dense [height, width] tensor; NULL and c->err set on failure). */
const ex_table *ex_cluster_table(const ex_cluster *c, const char *name);
ex_tensor *ex_table_gather(ex_cluster *c, const ex_table *t);

/* ---- dist_geo.c: GEO-SGD's communicator ---- */
/* A trainer's `send` in GEO mode: param_init (the startup's), or the
 * sparse ids of a step (every geo_push_nums of them: push and pull). */
bool ex_geo_send(ex_ctx *x, ex_cluster *c, const ir_op *op);
/* Whether GEO training equals single-process training here: one trainer,
 * a push every step, no sparse param (whose pserver slices start from
 * other values than the trainer's local table). */
bool ex_geo_exact(const ex_cluster *c);
/* Appends one result per slice: the pserver's value against its start
 * plus the deltas pushed (*res grows; false and c->err when nothing was
 * set up). */
bool ex_geo_check(ex_cluster *c, ex_param_result **res, size_t *n);
void ex_geo_free(ex_cluster *c);

/* Internal to dist.c and dist_table.c. */
/* One tensor from the running trainer to the pserver at `ep`, which must
 * expect `name`; outside sync mode its grad_to_block_id block runs. */
bool ex_pserver_deliver(ex_ctx *x, ex_cluster *c, const char *ep, const char *name,
                        ex_tensor *t);
ex_proc *ex_pserver_at(ex_cluster *c, const char *ep);
const ir_op *ex_listen_op(const ex_proc *p);
bool ex_pserver_run_block(ex_cluster *c, ex_proc *p, int32_t blk);
/* Finds the tables in the programs, before any startup runs. */
void ex_tables_find(ex_cluster *c);
/* After pserver k's startup: its shard of each distributed table becomes a
 * SELECTED_ROWS value whose slot s holds id k + s * pservers. */
void ex_tables_shard(ex_cluster *c, size_t k);
/* The block of `attr` (NAME:BLOCK strings) for name, or -1. */
int32_t ex_named_block(const ir_op *ls, const char *attr, const char *name);
bool ex_dist_prefetch(ex_ctx *x, ex_cluster *c, const ir_op *op);
bool ex_dist_lookup_table(ex_ctx *x, ex_cluster *c, const ir_op *op);
bool ex_dist_nce(ex_ctx *x, ex_cluster *c, const ir_op *op);
/* Param `name` gathered from the slices the transpile put on the pservers
 * (NAME.blockK, or NAME whole); NULL and c->err set when none. */
ex_tensor *ex_param_gather(ex_cluster *c, const char *name);

#endif
