/* geo.h - GEO-SGD in `verify job` (geo.c: the structure, the terms;
 * geo_run.c: the communicator's push and pull, the reference, the
 * comparison).  README.md in this folder, "GEO-SGD". */
#ifndef PDT_SYM_GEO_H
#define PDT_SYM_GEO_H

#include "job.h"

struct sym_geo {
    const sym_geo_var *vars;    /* vars_info */
    size_t n;
    pmap *old, *rold;           /* per trainer: the job's and the reference's old copies */
    bool *inited;               /* per trainer: param_init sent */
    GPtrArray **ids, **rids;    /* [trainer * n + v]: the ids terms of this round */
    pmap server;                /* the reference's pserver value, by param */
    GString **bad;              /* per var: the first structural difference */
    const sym_site **push_site; /* per trainer: its last push (for reports) */
    bool sparse_init;           /* a sparse table: pservers and trainers init their own */
};

/* The block listen_and_serv's grad_to_block_id names for `name`, or -1. */
int sym_geo_delta_block(sym_proc *ps, const char *name);
/* Adds an ids term to a set (sorted by id, once each). */
void sym_geo_add_ids(GPtrArray *a, sym_term *t);
/* The rows of x the ids name (an uninterpreted restriction). */
sym_term *sym_geo_rows(sym_store *st, sym_term *x, GPtrArray *ids);
/* float(1/n) * (param - old), the communicator's delta. */
sym_term *sym_geo_delta(sym_job *j, sym_term *param, sym_term *old);
/* a + (b - c), the pull's param += pserver - old. */
sym_term *sym_geo_plus_minus(sym_store *st, sym_term *a, sym_term *b, sym_term *c);

#endif
