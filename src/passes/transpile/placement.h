/* placement.h - the transpile family's public face: the placement that
 * 'find_optimize' and 'split_vars' make (which params and grads move, how
 * each is cut into slices and which pserver holds each slice), and the
 * helpers other code uses (the endpoint grammar, option validation, file
 * names, the job id).  The builders' own interface is builders.h, which
 * only src/passes/transpile includes (and unit tests).
 *
 * They follow DistributeTranspiler (seeds/distribute_transpiler.py.txt).
 * Names: "param" and "grad" are the names in the input program.  A slice
 * ("block" in the seed) of a split var is `NAME.blockN`; on the trainer, grads
 * carry `.trainer_<id>` in sync mode with more than one trainer. */
#ifndef PDT_TRANSPILE_PLACEMENT_H
#define PDT_TRANSPILE_PLACEMENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../ir/pmap.h"
#include "../../ir/util.h"
#include "../pass.h"
#include "../../job/manifest.h"

/* Seed values of DistributedMode (listen_and_serv's distributed_mode). */
enum { TP_DM_SYNC = 0, TP_DM_ASYNC = 1, TP_DM_HALF_ASYNC = 2, TP_DM_GEO = 3 };

/* What tp_analyze found out about each op of the input's block 0. */
enum {
    TP_OP_OTHER = 0,
    TP_OP_OPTIMIZE,     /* op_role == Optimize: moves to the pservers */
    TP_OP_CLIP,         /* optimize-role clip op: stays on the trainer as Backward */
    TP_OP_LR,           /* LRSched (or LRSched|Optimize): learning-rate schedule */
    TP_OP_PREFETCHED    /* remote_prefetch lookup, replaced on the trainer */
};

/* One slice of a var, in the order slice_variable makes them. */
typedef struct {
    const char *name;       /* trainer-side name (interned) */
    const char *merged;     /* pserver-side name, no .trainer_ suffix */
    int64_t offset;         /* first element of the slice in the whole var */
    int64_t numel;
    size_t n_dims;
    const int64_t *dims;    /* slice shape: dim 0 cut, the rest as the var */
} tp_slice;

typedef struct {
    const char *name;       /* in the input program */
    const ir_var *var;      /* a copy of its VarDesc in the input's block 0 */
    size_t n_slices;        /* 1: not split */
    const tp_slice *slices;
} tp_dvar;

/* One (param, grad) pair of params_grads, with its placement. */
typedef struct {
    tp_dvar param, grad;
    const int *ep;          /* endpoint index of slice i (param and grad alike) */
    bool sparse_table;      /* is_sparse lookup_table / nce weight */
    /* From an op's distribute_update_vars attr: a param updated by backward
     * ops, not by an optimizer.  It is its own grad: sent and received
     * under its own (slice) names, with no optimize block on the pserver. */
    bool update_var;
    bool remote;            /* remote_prefetch table: never received */
    /* --geo: its grad is SELECTED_ROWS (an is_sparse lookup), so its
     * deltas are too (GeoSgdTranspiler's sparse_var_list). */
    bool sparse_grad;
} tp_pair;

/* One slice placed on an endpoint: pairs[pair].param.slices[slice]. */
typedef struct {
    size_t pair, slice;
} tp_ref;

typedef struct {
    size_t n, cap;
    const tp_ref *refs;     /* in send order (seed: param_grad_ep_mapping) */
    int64_t bytes;          /* param bytes placed here */
} tp_endpoint;

typedef struct tp_table tp_table;     /* transpile_table.c */
typedef struct tp_lookup tp_lookup;   /* placement_lookup.c */

/* How far the plan is: after 'find_optimize', after 'split_vars'. */
enum { TP_PLAN_FOUND = 1, TP_PLAN_SPLIT = 2 };

struct tp_prefetch;                   /* transpile_prefetch.c */

/* The placement: what 'find_optimize' found (stage TP_PLAN_FOUND) and
 * where 'split_vars' put each slice (TP_PLAN_SPLIT).  Those two passes and
 * their helpers write it (builders.h: tp_plan.draft); from then on it is
 * only read: every builder takes it as `const tp_placement *`, and its
 * arrays' elements are const too, so the compiler refuses a builder's
 * write (the writers fill them through their own writable pointers, such
 * as builders.h's tp_plan.draft_pairs).  It holds its own copies of what
 * it needs (the settings, the endpoint list, the params' and grads' var
 * descs, the LR counters), all in `arena`, so it never aliases the input
 * programs that 'insert_send_recv' takes over and rewrites: op positions
 * (op_kind, opt_pos, tp_opt_ops_of) count ops of the input's block 0 as
 * find_optimize saw it. */
typedef struct tp_placement {
    int stage;              /* TP_PLAN_* */
    ir_arena *arena;        /* everything below lives here */

    /* Options resolved from ctx. */
    bool sync;              /* the seed's self.sync_mode */
    bool runtime_split;     /* config.runtime_split_send_recv (half-async) */
    bool half_async;
    bool trainer_suffix;    /* grads get .trainer_<id>: sync and trainers > 1 */
    int dist_mode;          /* TP_DM_* */
    bool geo;               /* --geo: GeoSgdTranspiler (only params are cut and placed) */
    size_t n_eps;
    const char *const *eps; /* --pservers (interned) */

    /* Optimize pass discovery. */
    const uint8_t *op_kind; /* TP_OP_* per op of b0 */
    size_t n_opt;
    const size_t *opt_pos;  /* positions of TP_OP_OPTIMIZE ops, in order */

    size_t n_pairs;
    const tp_pair *pairs;   /* params_grads order; var descs are copies */
    /* The name lookups (pair of a param or grad, optimize ops of a param):
     * opaque, read through tp_pair_of_param, tp_pair_of_grad and
     * tp_opt_ops_of, so nothing reached from a const placement is
     * writable. */
    const tp_lookup *lookup;

    /* _get_lr_ops, sync_mode=False: this trainer's step counters
     * (COUNTER.trainer_<id>, one per LRSched increment), which the trainer
     * sends; none without increments. */
    const char *const *lr_counters;
    size_t n_lr_counters;

    /* The distributed lookup table, NULL when none; it is not in pairs. */
    const tp_table *table;
    const struct tp_prefetch *prefetch;     /* NULL: none */

    /* Dispatch. */
    const size_t *send_order;   /* pair indices in the order grads are sent */
    const tp_endpoint *epl;     /* n_eps of them */
} tp_placement;

/* ---- placement_lookup.c ---- */
/* The pair whose param (grad) is NAME, or NULL; its index is the pointer
 * minus pl->pairs. */
const tp_pair *tp_pair_of_param(const tp_placement *pl, const char *name);
const tp_pair *tp_pair_of_grad(const tp_placement *pl, const char *name);
/* The positions in the input's block 0 of the optimize ops whose
 * op_role_var[0] is PARAM, in op order; *n gets their count (NULL, 0:
 * none). */
const size_t *tp_opt_ops_of(const tp_placement *pl, const char *param, size_t *n);

/* ---- endpoints.c ---- */
/* The one endpoint grammar (HOST:PORT, HOST an RFC 1123 hostname, dotted
 * IPv4 or [IPv6], PORT 1-65535; lists comma-separated, no empty item, no
 * duplicate).  Each returns NULL, or the problem as a message quoting the
 * bad item (g_free it); the caller names the flag or variable. */
char *tp_endpoint_problem(const char *endpoint);
/* TEXT as a list of endpoints, or of hosts (PADDLE_PSERVER_IPS) when HOSTS. */
char *tp_list_problem(const char *text, bool hosts);
char *tp_host_problem(const char *host);
char *tp_port_problem(const char *port);
/* 'S' with control bytes escaped, at most 200 bytes of it (g_free it). */
char *tp_quote(const char *s, size_t len);

/* ---- validate.c ---- */
/* The family's validate(): the cross-option rules (usage errors for CMD
 * naming each setting as ctx->transpile.src says) and --trainers resolved
 * into `trainers` and `trainer_endpoints`.  Every pass relies on it. */
int tp_validate(pdt_ctx *ctx, const char *cmd);

/* slice_variable for one var: the blocks' element counts.  Returns the
 * count; sizes[] gets the counts (caller frees with free). */
size_t tp_slice_sizes(const int64_t *dims, size_t n_dims, size_t slice_count,
                      int64_t min_block_size, int64_t **sizes);
/* numpy's legacy RandomState(seed).shuffle on n items: the permutation it
 * applies, as perm[i] = index of the item that ends at position i. */
void tp_numpy_shuffle(uint32_t seed, size_t n, size_t *perm);
uint64_t tp_fnv1a64(const char *s);
/* The file an output is written to: STEM.pbtxt under
 * ctx->settings.text_output, STEM.pb otherwise (manifest.json names it). */
const char *tp_file_name(const pdt_ctx *ctx, const char *stem);
/* The manifest's "flags": the transpile options that shaped the outputs,
 * in the order written (NCCL2: those of --mode=nccl2 or collective); the
 * command's job id hashes them too (src/cli/manifest_json.c). */
void tp_manifest_flags(pdt_manifest *m, const pdt_ctx *ctx, bool nccl2);

#endif
