/* job.h - the simulated job of `verify job` (job.c), its single-process
 * reference (ref.c) and the reports (report.c). */
#ifndef PDT_SYM_JOB_H
#define PDT_SYM_JOB_H

#include <glib.h>

#include "run.h"
#include "sym.h"

typedef struct {
    sym_ctx c;
    const sym_job_in *in;
    sym_proc *tr, *ps;
    size_t n_tr, n_ps;
    bool async;
    bool half;                          /* half-async: grad blocks at each send, recv after all */
    /* the reference: R holds the shared state (params, optimizer state),
     * view[t] what trainer t computes its forward and backward on */
    sym_proc ref, *view;
    GPtrArray *params, *grads;          /* MAIN's optimizer (param, grad) pairs, by param */
    GPtrArray *shared;                  /* names the reference's update writes, or adopted */
    pmap shared_set;                    /* the same, as a set */
    struct sym_lr *lr;                  /* async LR-decay blocks (lr_decay.c), or NULL */
    struct sym_dc *dc;                  /* DC-ASGD (dcasgd.c), or NULL */
    pmap *remote;                       /* remote-prefetch params (remote_prefetch.c), or NULL */
    struct sym_geo *geo;                /* GEO-SGD (geo.c), or NULL */
} sym_job;
typedef struct sym_geo sym_geo;

/* job.c */
bool sym_job_setup(sym_job *j, const sym_job_in *in);
void sym_job_free(sym_job *j);
bool sym_job_startups(sym_job *j);
/* One step of the job; trainer t's whole step alone when `only` >= 0 (async). */
bool sym_job_step(sym_job *j, int step, int only);

/* job.c: the pserver at an endpoint, or NULL; the name trainer p gives
 * var v on the wire; a pserver's listen_and_serv op. */
sym_proc *sym_pserver_at(sym_job *j, const char *ep);
const char *sym_wire_name(sym_proc *p, const char *v);
ir_op *sym_listen_op(sym_proc *ps);
int sym_listen_block(sym_proc *ps, const char *attr, const char *name);

/* lr_decay.c: an async or half-async job's LR-decay blocks */
bool sym_lr_setup(sym_job *j);
void sym_lr_free(sym_job *j);
bool sym_lr_startup(sym_job *j);
/* A send with use_send_handler false (Paddle's notify RPC). */
int sym_lr_notify(sym_job *j, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);
void sym_lr_ref_setup(sym_job *j);
void sym_lr_ref_view(sym_job *j, size_t t);
/* What the check assumed of the counters, for the report ("" when none). */
void sym_lr_note(sym_job *j, GString *g);

/* dcasgd.c: DC-ASGD's runtime and its reference */
bool sym_dc_setup(sym_job *j);
void sym_dc_free(sym_job *j);
void sym_dc_deliver(sym_job *j, sym_proc *p, sym_proc *ps, const sym_site *site);
void sym_dc_recv(sym_job *j, sym_proc *p, sym_proc *ps, const char *w, sym_term *t,
                 const sym_site *site);
void sym_dc_ref_trainer(sym_job *j, size_t t);
/* MAIN's update op i on the reference, an optimizer on the corrected grad. */
bool sym_dc_ref_op(sym_job *j, size_t i);

/* geo.c, geo_run.c: GEO-SGD's communicator, its reference and report */
bool sym_geo_setup(sym_job *j);
void sym_geo_free(sym_job *j);
/* A trainer's send (param_init, or the push after the step's sends). */
int sym_geo_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);
/* One step of the job and the reference, then the comparison into diff. */
bool sym_geo_steps(sym_job *j, int step, GString **diff);
void sym_geo_note(sym_job *j, GString *g);

/* collective.c: a step of an nccl2 or collective job, and its ops */
bool sym_coll_step(sym_job *j, int step);
int sym_coll_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);

/* local_sgd.c: collective local_sgd (assign is a copy; the reference
 * averages each trainer's own step) */
bool sym_lsgd_active(const sym_job *j);
int sym_lsgd_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);
bool sym_lsgd_ref_step(sym_job *j, int step);

/* spmt.c: single_process_multi_thread's coalesce_tensor, and the
 * allreduce of X[k] when it is such a fused buffer (true: done) */
int sym_spmt_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);
bool sym_spmt_fused(sym_job *j, ir_op **ops, size_t at, uint32_t k);

/* dcasgd.c: an elementwise op of X and Y as the transpiler writes it (no
 * attrs), Out's term */
sym_term *sym_ew(sym_store *st, const char *type, sym_term *x, sym_term *y, int64_t rows);

/* ref.c */
bool sym_ref_setup(sym_job *j);
/* One reference step over the trainers in [t0, t1) (all in sync; one in async). */
bool sym_ref_step(sym_job *j, int step, size_t t0, size_t t1);
/* Every view takes the reference's shared state (half-async: after all updates). */
void sym_ref_sync_views(sym_job *j);

/* report.c: explains why job's `name` (a param) differs from the reference. */
void sym_explain(sym_job *j, GString *g, sym_proc *p, const char *name, sym_term *want);
/* A term in at most `depth` levels, for reports. */
void sym_short(GString *g, const sym_term *t, int depth);

#endif
