/* run.h - one simulated process of `verify job`: its programs and the
 * terms its vars hold, and the op-by-op symbolic run of a block
 * (run.c).  Communication ops are the job's (job.c), through `dist`. */
#ifndef PDT_SYM_RUN_H
#define PDT_SYM_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "../ir/pmap.h"
#include "term.h"

typedef struct sym_proc sym_proc;
typedef struct sym_ctx sym_ctx;

struct sym_proc {
    const char *label, *startup_label;  /* file names, for reports */
    ir_program *main, *startup;
    const char *endpoint;               /* pservers */
    int trainer;                        /* trainer id, -1 for others */
    int emulate_from;                   /* >= 0: that trainer's programs run as this one */
    const char *feed_tag;               /* "t0.s1": a var read unset is a feed; NULL: "unset:" */
    pmap vals;                          /* interned name -> sym_term* */
    pmap sites;                         /* interned name -> const sym_site*, its last writer */
    size_t pc;                          /* next op of the main block 0 (trainers) */
    bool synced;                        /* nccl2: this step's grads are averaged */
    double loss_scale;                  /* collective: the loss grad's scale, kept aside */
};

/* Handles an op of a type the job models (send, recv, ...): returns 1 done,
 * 0 not such an op, -1 failed (message in ctx->err). */
typedef int (*sym_dist_fn)(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                           ir_op *op);

struct sym_ctx {
    sym_store *st;
    sym_dist_fn dist;
    void *job;
    char err[1024];
};

void sym_proc_clear(sym_proc *p);
/* false for an attr the op's identity leaves out: a framework attr, a
 * default kernel choice, an attr at the default some Paddle version
 * writes (pdt_era_extra_at_default), fill_constant's str_value that
 * restates `value`.  So a job written for one version verifies against
 * an input another version wrote. */
bool sym_attr_is_semantic(const ir_op *op, const ir_attr *a);
sym_term *sym_read(sym_ctx *c, sym_proc *p, ir_block *b, const char *name);
void sym_write(sym_proc *p, const char *name, sym_term *t, const sym_site *site);
/* Runs op i of block `block` of prog (labelled `label`) in p's scope. */
bool sym_run_op(sym_ctx *c, sym_proc *p, ir_program *prog, const char *label, int block,
                size_t i);
/* Runs op (of block b of prog) as an uninterpreted function, its outputs
 * written in p's scope with `site` (table.c: MAIN's lookup op for a
 * merge_ids; a lookup_table_grad with its W's dims). */
/* Runs op with its var `w` holding `t` (site t_site) for the op only. */
void sym_run_with(sym_ctx *c, sym_proc *p, ir_program *prog, ir_block *b, ir_op *op,
                  const sym_site *site, const char *w, sym_term *t, const sym_site *t_site);
void sym_run_generic(sym_ctx *c, sym_proc *p, ir_program *prog, ir_block *b, ir_op *op,
                     const sym_site *site);
/* intfold.c: fill_constant, increment and sum of int64 [1] values known
 * exactly, and ref_by_trainer_id by a known id; true when it wrote Out. */
bool sym_fold_int(sym_ctx *c, sym_proc *p, ir_block *b, ir_op *op, const sym_site *site);
/* Runs every op of a block. */
bool sym_run_block(sym_ctx *c, sym_proc *p, ir_program *prog, const char *label, int block);
/* The rows (dim 0) a var is declared with in b or its ancestors, or -1. */
int64_t sym_var_rows(ir_block *b, const char *name);
/* Sets ctx->err to "LABEL block B op I 'TYPE': " + the message. */
void sym_fail(sym_ctx *c, const char *label, int block, size_t i, const ir_op *op,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
