/* sym.h - `pdtrans verify job`: a transpiled job checked against its
 * main program symbolically, without kernels (README.md in this folder). */
#ifndef PDT_SYM_H
#define PDT_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../ir/ir.h"

typedef struct {
    const char *label, *startup_label;  /* file names for reports */
    ir_program *main, *startup;         /* NULL main: a trainer the folder lacks */
    const char *endpoint;               /* pservers */
} sym_role;

/* GEO (distributed_mode 3): one param of the communicator's vars_info
 * (geo.c): its split vars, each one's rows and pserver endpoint. */
typedef struct sym_geo_var {
    const char *name;
    const char **slices, **eps;
    const int64_t *sections;
    size_t n_slices;
    bool sparse;
} sym_geo_var;

enum { SYM_PSERVER = 0, SYM_NCCL2 = 1, SYM_COLLECTIVE = 2 };
/* collective_mode; single_process_multi_thread's devices are trainers of
 * their own (the caller gives each endpoint's programs once per device) */
enum { SYM_GRAD_ALLREDUCE = 0, SYM_LOCAL_SGD = 1, SYM_SPMT = 2 };

typedef struct {
    const char *main_label;
    ir_program *main, *startup;         /* the single-process program (startup may be NULL) */
    sym_role *trainers;                 /* by trainer id; one must be present */
    size_t n_trainers;
    sym_role *pservers;
    size_t n_pservers;
    int dist_mode;                      /* 0 sync, 1 half-async, 2 async */
    int mode;                           /* SYM_PSERVER, SYM_NCCL2, SYM_COLLECTIVE */
    int coll_mode;                      /* SYM_COLLECTIVE: SYM_GRAD_ALLREDUCE, ... */
    int steps;
    const sym_geo_var *geo;             /* GEO: vars_info (NULL: the manifest has none) */
    size_t n_geo;
    long geo_push_nums;
    /* out, when note_len > 0: what equal assumed of Paddle's runtime (an
     * async LR schedule's counter offset, lr_decay.c), or "" */
    char *note;
    size_t note_len;
} sym_job_in;

/* Prints one line per parameter to out ("PARAM: equal (N steps)" or its
 * first difference).  Returns the number of parameters that differ, or -1
 * with a message in err when the job cannot be run. */
long sym_verify_job(const sym_job_in *in, FILE *out, char *err, size_t errlen);

#endif
