/* transpile.h - the transpile passes (README.md) and the plan they share.
 *
 * They follow DistributeTranspiler (seeds/distribute_transpiler.py.txt).
 * 'find_optimize' and 'split_vars' read ctx->main and ctx->startup and
 * record every decision (optimize ops, slices, endpoints) in the plan, the
 * analysis transpile_plan (passes.def); the pservers' programs are then built from scratch
 * out of the plan and the untouched inputs, and last 'insert_send_recv'
 * takes ctx->main and ctx->startup over (ctx->main is left an empty
 * program) and rewrites them into the trainer's.  So one role's output
 * never depends on which other roles were requested (seed defect 3).
 * 'nccl2' and 'collective' take ctx->main and ctx->startup over too.
 *
 * Names: "param" and "grad" are the names in the input program.  A slice
 * ("block" in the seed) of a split var is `NAME.blockN`; on the trainer, grads
 * carry `.trainer_<id>` in sync mode with more than one trainer. */
#ifndef PDT_TRANSPILE_H
#define PDT_TRANSPILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../ir/pmap.h"
#include "../../ir/util.h"
#include "../pass.h"

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
    int64_t *dims;          /* slice shape: dim 0 cut, the rest as the var */
} tp_slice;

typedef struct {
    const char *name;       /* in the input program */
    const ir_var *var;      /* its VarDesc in the input's block 0 */
    size_t n_slices;        /* 1: not split */
    tp_slice *slices;
} tp_dvar;

/* One (param, grad) pair of params_grads, with its placement. */
typedef struct {
    tp_dvar param, grad;
    int *ep;                /* endpoint index of slice i (param and grad alike) */
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
    tp_ref *refs;           /* in send order (seed: param_grad_ep_mapping) */
    int64_t bytes;          /* param bytes placed here */
} tp_endpoint;

typedef struct tp_table tp_table;     /* transpile_table.c */

/* How far the plan is: after 'find_optimize', after 'split_vars'. */
enum { TP_PLAN_FOUND = 1, TP_PLAN_SPLIT = 2 };

/* A set of ops (tp_input_ops): a sorted array of pointers. */
typedef struct {
    const ir_op **ops;
    size_t n;
} tp_op_set;

typedef struct tp_plan {
    int stage;              /* TP_PLAN_* */
    pdt_ctx *ctx;
    const ir_program *main, *startup;   /* the unmodified inputs */
    const ir_block *b0;                 /* main's block 0 */
    ir_arena *arena;                    /* everything below lives here */

    /* Options resolved from ctx. */
    bool sync;              /* the seed's self.sync_mode */
    bool runtime_split;     /* config.runtime_split_send_recv (half-async) */
    bool half_async;
    bool trainer_suffix;    /* grads get .trainer_<id>: sync and trainers > 1 */
    int dist_mode;          /* TP_DM_* */
    bool geo;               /* --geo: GeoSgdTranspiler (only params are cut and placed) */
    size_t n_eps;
    const char **eps;       /* --pservers */

    /* Optimize pass discovery. */
    uint8_t *op_kind;       /* TP_OP_* per op of b0 */
    size_t n_opt;
    size_t *opt_pos;        /* positions of TP_OP_OPTIMIZE ops, in order */
    pmap opt_by_param;      /* op_role_var[0] -> GArray of size_t positions */

    size_t n_pairs;
    tp_pair *pairs;         /* params_grads order */
    pmap pair_of_param;     /* name -> pair index + 1 */
    pmap pair_of_grad;

    /* _get_lr_ops, sync_mode=False: this trainer's step counters
     * (COUNTER.trainer_<id>, one per LRSched increment), which the trainer
     * sends; none without increments. */
    const char *const *lr_counters;
    size_t n_lr_counters;

    /* The distributed lookup table, NULL when none; it is not in pairs. */
    tp_table *table;
    struct tp_prefetch *prefetch;   /* transpile_prefetch.c; NULL: none */

    /* Dispatch. */
    size_t *send_order;     /* pair indices in the order grads are sent */
    tp_endpoint *epl;       /* n_eps of them */

    /* The builders' progress (programs staged in ctx, owned there). */
    tp_op_set *input_ops;   /* tp_input_ops of the inputs, before any pass */
    GPtrArray *lr_counter_list; /* owns lr_counters' array */
    ir_op **ops0;           /* b0's ops as find_optimize saw them (op_kind order) */
    size_t n_ops0;
    ir_program **pserver_main;  /* n_eps: built by 'build_pserver', or NULL */
    ir_program **pserver_startup;   /* n_eps: built by 'build_pserver_startup' */
    bool *pserver_written;      /* n_eps: main and startup built */
    ir_program *trainer_main, *trainer_startup;   /* 'insert_send_recv' */
    bool trainer_written;
    bool manifest_stale;    /* outputs changed since ctx->manifest_json was made */
    size_t narrow;          /* the one pserver the SHARDED_PASS passes build, or -1: all */
} tp_plan;

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

/* ---- transpile.c: the plan ---- */
/* The plan is the analysis transpile_plan of passes.def; its hooks
 * (tp_plan_ops, transpile.c) are these.  Each takes a tp_plan. */
/* find_optimize.c: a new plan with the settings resolved from ctx. */
void *tp_plan_create(pdt_ctx *ctx);
void tp_plan_free(void *plan);
/* manifest.json made again from the plan if a pass changed the outputs
 * since it was last made (NULL is fine): the pass manager calls it when
 * it drops the plan or ends the run (after writing the outputs it writes
 * itself: the plan keeps copies of what the manifest reads of the
 * trainer, tp_plan_output_freed), rather than every such pass making it
 * (7% of a transpile). */
void tp_plan_make_manifest(void *plan);
/* Before any pass runs (PASSES, the groups replaced by their members):
 * PDT_OK, or PDT_EUSAGE after naming a transpile pass that would run in
 * the wrong --mode, before the pass whose plan or programs it needs, after
 * 'insert_send_recv' rewrote the inputs it reads, or twice on one plan. */
int tp_check_order(const pdt_ctx *ctx, const pdt_pass *const *passes, size_t n);
/* The number of pservers of the plan (0 for NULL), and its narrowing to
 * one of them for the SHARDED_PASS passes: tp_plan_narrow returns false
 * when that pserver is not wanted (--role, --endpoint); e (size_t)-1
 * widens it to all again. */
size_t tp_plan_n_pservers(const void *plan);
bool tp_plan_narrow(void *plan, size_t e);
/* The pipeline is about to free output p (written): the plan forgets it,
 * and keeps copies of the trainer's param descs the manifest reads. */
void tp_plan_output_freed(void *plan, const ir_program *p);
/* split_vars.c, --print-after: the plan's slices and endpoints, once
 * 'split_vars' made them (nothing before). */
void tp_plan_print(const void *plan, FILE *out, const char *pass);
/* The order of the passes is the pipeline's to check, before any pass
 * runs (tp_check_order, the plan's check_order hook): a --passes list in the wrong order is a
 * usage error of the command, naming the pass to run first.  A pass that
 * still finds what it needs missing was called around the pipeline: a bug,
 * which these report (BUG message, PDT_EINTERNAL). */
/* S as a JSON string, escaped as jansson would (the manifest's hand-written
 * lines). */
void tp_json_string(GString *g, const char *s);
int tp_order_bug(const char *pass);
/* ctx's plan when it has reached `stage`; otherwise tp_order_bug(pass)
 * and NULL: the caller returns PDT_EINTERNAL. */
tp_plan *tp_plan_need(pdt_ctx *ctx, const char *pass, int stage);
/* PDT_OK while ctx->main and ctx->startup are still the inputs the plan
 * was made from; after 'insert_send_recv' took them over, tp_order_bug. */
int tp_plan_need_inputs(const tp_plan *st, const char *pass);
/* Passes 'nccl2' and 'collective' (for --mode=MODE only; the pipeline
 * checks it): `build` takes ctx->main and ctx->startup over and rewrites
 * them; they are staged as trainer_<id> and trainer_<id>.startup. */
int tp_stage_trainer_rewrite(pdt_ctx *ctx, const char *pass, pdt_dist_mode mode,
                             int (*build)(pdt_ctx *, ir_program **, ir_program **));
/* After a pass that built or extended programs: their framework attrs,
 * the staged outputs in the order they are written (trainer, then each
 * pserver's main and startup), and manifest.json marked stale: the
 * pipeline makes it again (tp_plan_make_manifest) before it frees the
 * plan. */
void tp_plan_outputs_changed(tp_plan *st, ir_program *const *progs, size_t n);
/* Whether the pserver passes build pserver e now: --role and --endpoint
 * ask for it, and the plan is not narrowed to another one. */
bool tp_pserver_wanted(const tp_plan *st, size_t e);


/* ---- find_optimize.c ---- */
/* Fills op_kind, opt_pos, opt_by_param, pairs (without slices).
 * Fails (message printed) on a program the transpiler cannot handle. */
int tp_find_optimize(tp_plan *st);
/* _get_sparse_table_names' test: the table an is_sparse lookup_table or
 * nce op (its Weight), or a distributed_lookup_table op, reads; or NULL. */
const char *tp_sparse_table_of(const ir_op *op);
/* The position of op `op` among the LR ops etc. is in st->op_kind. */
bool tp_is_optimizer_op(const ir_op *op);   /* has Param and LearningRate */

/* ---- transpile_prefetch.c ---- */
/* Marks remote_prefetch params (remote, sparse_table) and the ops the
 * trainer replaces; fails (message printed) on an impossible program. */
int tp_find_remote_prefetch(tp_plan *st);
/* Appends the distributed_lookup_table ops that go right after op
 * `anchor` (-1: first of all); call with anchors in increasing order. */
void tp_prefetch_emit(tp_plan *st, ir_program *p, long anchor, GPtrArray *ops);

/* The plan's search: tp_find_optimize, then the lookup table and remote
 * prefetch; fills st from ctx (find_optimize.c). */
int tp_plan_find(tp_plan *st, pdt_ctx *ctx);

/* ---- transpile_lr.c ---- */
/* Async-mode LR counter rewrite on ctx->main/startup; `mine` gets this
 * trainer's counter var of each LRSched increment, in op order. */
int tp_async_lr_counters(pdt_ctx *ctx, GPtrArray *mine);

/* ---- lr_move.c ---- */
/* On ctx->main before the plan's search: a var an optimizer reads that the
 * trainer computes with forward-role ops is warned about, or with
 * --lr-ops=move its ops get the LRSched role (refused, message printed,
 * when a pserver cannot run them). */
int tp_lr_trainer_computed(pdt_ctx *ctx);

/* ---- split_vars.c ---- */
/* slice_variable for one var: the blocks' element counts.  Returns the
 * count; sizes[] gets the counts (caller frees with free). */
size_t tp_slice_sizes(const int64_t *dims, size_t n_dims, size_t slice_count,
                      int64_t min_block_size, int64_t **sizes);
/* Cuts every pair's param and grad into slices and names them. */
int tp_split_vars(tp_plan *st);

/* ---- transpile_dispatch.c ---- */
/* Decides send order (numpy shuffle with --no-slice) and the endpoint of
 * every slice; fills st->epl. */
int tp_dispatch(tp_plan *st);
/* numpy's legacy RandomState(seed).shuffle on n items: the permutation it
 * applies, as perm[i] = index of the item that ends at position i. */
void tp_numpy_shuffle(uint32_t seed, size_t n, size_t *perm);
uint64_t tp_fnv1a64(const char *s);

/* ---- transpile_util.c ---- */
const char *tp_control_var(tp_plan *st, ir_block *b, unsigned *counter);
/* A var as Python's Block.create_var makes it: LOD_TENSOR-like type `type`,
 * dims when dims != NULL, lod_level when >= 0, persistable when >= 0. */
ir_var *tp_create_var(ir_block *b, const char *name, int type, int dtype,
                      const int64_t *dims, size_t n_dims, int lod_level,
                      int persistable);
/* An op the seed copies with append_op(..., attrs=op.all_attrs()): Python's
 * Operator() then sets op_namescope to the current name scope, "/" where
 * the transpiler runs, whatever the copied value was. */
void tp_copied_op(ir_op *op);
/* The ops of the input programs (main and startup, every block), as a set
 * of pointers: an op not in it was appended by the transpiler.  A sorted
 * array, not a pmap: 8 bytes an op instead of 26 (4 MB at 100k ops, held
 * to the end of the run), and asked only once per output op. */
tp_op_set *tp_input_ops(const pdt_ctx *ctx);
bool tp_op_set_has(const tp_op_set *s, const ir_op *op);
void tp_op_set_free(tp_op_set *s);
/* Every op of p that the transpiler appended (new or copied) gets the
 * framework attrs Python's Operator.__init__ and check_attrs write: its
 * name scope ("/" where the transpiler runs), and op_device "" and
 * op_role_var [] when not given.  op_callstack, a traceback, is left out. */
void tp_framework_attrs(const tp_op_set *input_ops, ir_program *p);
/* The seed copies optimize ops from the origin program after
 * _init_splited_vars renamed an unsplit grad to NAME.trainer_<id>;
 * OpDesc::RenameInput renames op_role_var entries too, so the pserver copy
 * carries the renamed grad in op_role_var (its slots are mapped apart). */
void tp_rename_role_var(const tp_plan *st, ir_op *op);
/* Block._clone_variable(var, force_persistable=True). */
ir_var *tp_clone_variable(ir_block *b, const ir_var *src, const char *name);
int64_t tp_dtype_size(int dtype);
ir_program *tp_new_program(const ir_program *like);
/* Ops later made in or copied into p start with the framework attrs. */
void tp_expect_framework_attrs(ir_program *p);
/* Takes the program in *slot over (its ops stay the input's, so
 * tp_framework_attrs tells them from appended ones) and leaves an empty
 * program of the same version there. */
ir_program *tp_take_over(ir_program **slot);

/* The file an output is written to: STEM.pbtxt under
 * ctx->settings.text_output, STEM.pb otherwise (manifest.json names it). */
const char *tp_file_name(const pdt_ctx *ctx, const char *stem);
/* The job id that every manifest of a job records: SHA-256 (hex, malloc'd)
 * of the inputs' hashes and the options that shape the programs, without
 * what tells the roles apart (README.md, "Output folders"). */
char *tp_job_id(const pdt_ctx *ctx);

/* ---- transpile_dcasgd.c (--dc-asgd) ---- */
/* The per-trainer backups `SLICE.trainer_<i>_bak` of the params on ep. */
void tp_dc_declare_baks(tp_plan *st, ir_block *g, size_t ep);
/* _append_dc_asgd_ops into blk for param slice s of p; returns the
 * corrected grad the optimizer op reads instead of `grad`. */
const char *tp_dc_append(tp_plan *st, ir_block *blk, const tp_pair *p, const tp_slice *s,
                         const char *grad, unsigned *tmp_counter);
/* get_startup_program's `assign` of each slice to its backups, into ops. */
void tp_dc_startup_assigns(tp_plan *st, size_t ep, GPtrArray *ops, ir_program *s);

/* ---- transpile_table.c: the distributed lookup table ---- */
/* find_distributed_lookup_table and _update_dist_lookup_table_vars: sets
 * st->table and takes the table's pair out of st->pairs. */
int tp_table_find(tp_plan *st);
/* The table's send dummy, made right after send_barrier's output; NULL
 * when there is no table. */
const char *tp_table_send_dummy(tp_plan *st, ir_block *b, unsigned *ctl);
/* The prefetch ops and the table grad's split_ids + send in the trainer's
 * block 0 (after the other sends are in place). */
void tp_table_trainer(tp_plan *st, ir_block *b);
/* _get_sparse_table_names in param order (caller frees the array). */
GPtrArray *tp_sparse_table_names(tp_plan *st);
typedef struct {
    int32_t checkpoint_block;
    const char *prefetch;       /* prefetch_var_name_to_block_id entry */
} tp_table_ps;
/* The table, prefetch and checkpoint blocks of one pserver; `pre` is the
 * parent of its optimize blocks. */
int tp_table_pserver(tp_plan *st, size_t ep, ir_program *p, int32_t pre, GArray *blocks,
                     GPtrArray *grad_to_block, tp_table_ps *out);
void tp_table_serv_attrs(tp_plan *st, ir_op *serv, const tp_table_ps *tps);
/* The manifest's "distributed_table" object (a jansson json_t *). */
void *tp_table_json(tp_plan *st);
/* The program holding the table's var descs is about to be freed: the
 * table keeps a copy of its param's (what the manifest reads) and drops
 * the others. */
void tp_table_keep_descs(tp_plan *st);
/* A copy of v's name, type, dtype and dims in the plan's arena (nothing
 * else: for readers of those only, after v's program is freed). */
ir_var *tp_desc_copy(tp_plan *st, const ir_var *v);

/* ---- geo_pserver.c, geo_trainer.c (--geo) ---- */
/* NAME.delta, the change of param (slice) NAME a GEO trainer pushes. */
const char *tp_geo_delta_name(const char *var);
/* Declares a delta of param p's slice in b: SELECTED_ROWS when p is
 * sparse, else p's type; persistable False, no lod_level. */
void tp_geo_declare_delta(ir_block *b, const tp_pair *p, const char *name,
                          const int64_t *dims, size_t n_dims);
int tp_build_geo_pserver(tp_plan *st, size_t ep, ir_program **main);
/* Takes ctx->main and ctx->startup over, as insert_send_recv does. */
int tp_build_geo_trainer(tp_plan *st, ir_program **main, ir_program **startup);

/* ---- builders ---- */
/* insert_send_recv.c: _get_trainer_startup_program's recv of every param
 * but the sparse tables, fetch_barrier and concat, appended to sb (the
 * trainer's startup block 0); *ctl counts the control vars. */
void tp_trainer_startup_recvs(tp_plan *st, ir_block *sb, unsigned *ctl);
/* insert_send_recv.c: transpile()'s trainer part, on ctx->main and
 * ctx->startup, which it takes over (they are left empty). */
int tp_insert_send_recv(tp_plan *st, ir_program **main, ir_program **startup);
/* Builds the trainer's programs with one of the two builders (insert_send_recv's
 * or GEO's) and stages them as trainer_<id>. */
typedef int (*tp_trainer_builder)(tp_plan *st, ir_program **main, ir_program **startup);
int tp_build_trainer(pdt_ctx *ctx, const char *pass, tp_trainer_builder build);
/* delete_optimizer.c: get_trainer_program's deletions, in place. */
int tp_delete_optimizer(tp_plan *st, ir_program *main, ir_program *startup);
/* build_pserver.c, build_pserver_startup.c: pserver ep's programs, new,
 * from the plan and the unchanged inputs (which they only read). */
int tp_build_pserver(tp_plan *st, size_t ep, ir_program **main);
/* Builds each wanted pserver's main with one of the two builders above and
 * stages them as pserver_<K> (build_pserver and geo_pserver). */
typedef int (*tp_pserver_builder)(tp_plan *st, size_t ep, ir_program **main);
int tp_build_pservers(pdt_ctx *ctx, const char *pass, tp_pserver_builder build);
int tp_build_pserver_startup(tp_plan *st, size_t ep, const ir_program *pmain,
                             ir_program **startup);
/* nccl2.c, collective.c: on options validate() accepted, take ctx->main
 * and ctx->startup over (leaving empty programs there) and rewrite them
 * into *main and *startup.  On bad input (collective: the ops it reads;
 * message printed) ctx is untouched. */
int tp_build_nccl2(pdt_ctx *ctx, ir_program **main, ir_program **startup);
/* ---- collective.c (--mode=collective) ---- */
int tp_build_collective(pdt_ctx *ctx, ir_program **main, ir_program **startup);
/* What Paddle's SingleProcessMultiThread reads from the environment: the
 * count of FLAGS_selected_gpus items, PADDLE_FUSE_ALLREDUCE and
 * PADDLE_LOSS_SCALE (taken from ctx->runtime). */
typedef struct {
    int gpus, fuse_allreduce, loss_scale;
} tp_spmt_env;
/* The steps, on a block already checked (every op_role_var name and update
 * op Param is a var of the block); exposed for the unit tests. */
void tp_coll_scale_loss_grads(ir_block *b, double scale);
/* SingleProcessMultiThread: startup (no broadcast) and main. */
void tp_spmt_startup(ir_block *b, const pdt_list *eps, const char *endpoint, int rank,
                     int *nranks);
void tp_spmt_main(ir_block *b, int nranks, const tp_spmt_env *env);
void tp_coll_insert_allreduce(ir_block *b, int nrings);
void tp_coll_local_sgd_main(ir_block *b, int nranks, int nrings);
/* The startup's parameters in broadcast order (interned names). */
GPtrArray *tp_coll_startup_params(const ir_program *main, const ir_program *startup);
void tp_coll_startup(ir_block *b, const GPtrArray *params, int nranks, int rank, int nrings,
                     const char *endpoint, const char *const *others, size_t n_others,
                     bool local_sgd);
/* manifest.json text (malloc'd) describing what was written. */
char *tp_manifest(tp_plan *st, const bool *pserver_written, bool trainer_written);
char *tp_manifest_nccl2(pdt_ctx *ctx);
char *tp_manifest_collective(pdt_ctx *ctx, const tp_spmt_env *spmt);

#endif
