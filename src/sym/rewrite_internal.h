/* rewrite_internal.h - shared by rewrite.c (the op pairing), rewrite_sub.c
 * (sub-blocks) and rewrite_steps.c (the steps and the final comparison). */
#ifndef PDT_SYM_REWRITE_INTERNAL_H
#define PDT_SYM_REWRITE_INTERNAL_H

#include <glib.h>

#include "rewrite.h"
#include "run.h"

typedef struct {
    const sym_rewrite_in *in;
    sym_ctx c;
    sym_proc p[2];          /* BEFORE, AFTER */
    pmap scopes[2];         /* a Scope / StepScopes var -> pmap* of its sub-block's locals */
    pmap after_name;        /* BEFORE's block 0 output -> AFTER's name for it */
    pmap captured;          /* ... -> the term AFTER's op wrote there */
    int step;
    size_t paired;          /* op pairs run */
    int rc;                 /* 0, 1 a difference, -1 cannot pair or run */
    int depth, loops;       /* sub-blocks and while bodies being run */
} rw;

/* One pair of ops: BEFORE's [0] and AFTER's [1]. */
typedef struct {
    const ir_op *op[2];
    int block[2];
    size_t idx[2];
} rw_pos;

/* Runs two blocks op by op in lockstep (delete_var ops unpaired); false
 * with r->rc and r->c.err set at the first difference. */
bool rw_run_blocks(rw *r, int bblock, int ablock);
/* A pair of ops with a sub_block (conditional_block, while, their grads). */
bool rw_run_sub(rw *r, const rw_pos *at);
/* The semantic attrs (no framework or block attrs) as text, sorted. */
void rw_sem_attrs(GString *g, const ir_op *op);
/* What var `name` holds in p, for messages: who wrote it. */
void rw_writer_desc(GString *g, sym_proc *p, const char *name);
bool rw_is_tensor_var(ir_block *b, const char *name);

#endif
