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
} ex_proc;

typedef struct ex_cluster {
    ex_cluster_mode mode;
    int dist_mode;                  /* 0 sync, 1 half-async, 2 async */
    size_t n_trainers, n_pservers;
    ex_proc *trainers, *pservers;
    ex_dist_hooks hooks;
    /* grad names averaged by simulated allreduce (nccl2) */
    size_t cur_trainer;             /* the trainer running now */
    size_t n_grads;
    const char **grads;
    char err[700];
} ex_cluster;

typedef struct {
    uint64_t seed;
    int64_t batch;
    int steps;
    double tolerance;
} ex_transpile_opts;

typedef struct {
    const char *param;
    double worst_rel;
    bool finite;
} ex_param_result;

/* Runs `steps` steps of the cluster (programs already set in c->trainers /
 * c->pservers) and of single-process training of `main`/`startup`, and
 * compares each parameter of main's optimizer ops held by trainer 0.  The
 * results array is g_malloc'd. */
bool ex_transpile_check(ex_cluster *c, const ir_program *main, const ir_program *startup,
                        const ex_transpile_opts *o, ex_param_result **res, size_t *n);

/* Runs the pservers' and then the trainers' startup programs. */
bool ex_cluster_startup(ex_cluster *c, uint64_t seed);
/* Runs every trainer's main program once (one step), with the pservers. */
bool ex_cluster_step(ex_cluster *c);
void ex_cluster_free(ex_cluster *c);

#endif
