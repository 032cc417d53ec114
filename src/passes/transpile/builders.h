/* builders.h - the transpile passes' private interface (README.md): the
 * plan they share, the placement's producers and the builders.  Only
 * src/passes/transpile (and unit tests) include it; placement.h is the
 * public part.
 *
 * 'find_optimize' and 'split_vars' read ctx->main and ctx->startup and
 * record every decision (optimize ops, slices, endpoints) in the plan, the
 * analysis transpile_plan (passes.def); the pservers' programs are then built from scratch
 * out of the plan and the untouched inputs, and last 'insert_send_recv'
 * takes ctx->main and ctx->startup over (ctx->main is left an empty
 * program) and rewrites them into the trainer's.  So one role's output
 * never depends on which other roles were requested (seed defect 3).
 * 'nccl2' and 'collective' take ctx->main and ctx->startup over too. */
#ifndef PDT_TRANSPILE_BUILDERS_H
#define PDT_TRANSPILE_BUILDERS_H

#include "placement.h"

/* A set of ops (tp_input_ops): a sorted array of pointers. */
typedef struct {
    const ir_op **ops;
    size_t n;
} tp_op_set;

/* What a builder reads besides the placement: the input programs as
 * find_optimize saw them, the options, and a scratch arena.  The plan
 * fills it once (pass 'find_optimize'); the builders take it const.  The
 * programs are valid until the trainer's builder takes them over
 * (tp_plan_need_inputs). */
typedef struct tp_inputs {
    const pdt_transpile_opts *o;        /* ctx->transpile, as validate() left it */
    const char *main_path;              /* the main program's file, for messages */
    const ir_program *main, *startup;   /* the unmodified inputs */
    const ir_block *b0;                 /* main's block 0 */
    ir_op *const *ops0;     /* b0's ops as find_optimize saw them (op_kind order) */
    size_t n_ops0;
    ir_arena *arena;        /* the builders' scratch, freed with the plan */
    /* pdt_run_settings.drop_input_pages: the trainer's builder gives the
     * main input's pages back between its steps (NULL: never). */
    void (*drop_input)(const ir_program *p);
} tp_inputs;

/* The analysis transpile_plan: the placement, the inputs the builders
 * read, and the pass manager's record of the staged outputs (README.md,
 * "What tp_plan holds").  The builders read the placement through `pl`
 * (const); only find_optimize and split_vars write it, through `draft`,
 * which split_vars clears once the placement is complete. */
typedef struct tp_plan {
    const tp_placement *pl;
    tp_placement *draft;    /* NULL once split_vars has made the placement */
    /* While drafting, writable pointers to two arrays the placement
     * declares const (the same memory), which several of the writers'
     * steps fill in turn; cleared with draft. */
    tp_pair *draft_pairs;
    uint8_t *draft_op_kind;
    tp_lookup *draft_lookup;    /* pl->lookup, which find_optimize fills */
    pdt_ctx *ctx;
    tp_inputs in;

    /* The outputs staged in ctx (owned there), per role. */
    tp_op_set *input_ops;   /* tp_input_ops of the inputs, before any pass */
    ir_program **pserver_main;  /* n_eps: built by 'build_pserver', or NULL */
    ir_program **pserver_startup;   /* n_eps: built by 'build_pserver_startup' */
    bool *pserver_written;      /* n_eps: main and startup built */
    ir_program *trainer_main, *trainer_startup;   /* 'insert_send_recv' */
    bool trainer_written;
    bool manifest_stale;    /* outputs changed since ctx->manifest was made */
    size_t narrow;          /* the one pserver the SHARDED_PASS passes build, or -1: all */
} tp_plan;

/* ---- transpile.c: the plan ---- */
/* The plan is the analysis transpile_plan of passes.def; its hooks
 * (tp_plan_ops, transpile.c) are these.  Each takes a tp_plan. */
/* find_optimize.c: a new plan with the settings resolved from ctx; the
 * plan as 'find_optimize' makes it (the create hook). */
void *tp_plan_create(pdt_ctx *ctx);
int tp_plan_build(pdt_ctx *ctx, void **plan);
void tp_plan_free(void *plan);
/* manifest.json made again from the plan if a pass changed the outputs
 * since it was last made (NULL is fine): the pass manager calls it when
 * it drops the plan or ends the run (after writing the outputs it writes
 * itself: the manifest reads the placement, which holds its own copies
 * of the var descs), rather than every such pass making it
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
/* The pipeline is about to free output p (written): the plan forgets it. */
void tp_plan_output_freed(void *plan, const ir_program *p);
/* split_vars.c, --print-after: the plan's slices and endpoints, once
 * 'split_vars' made them (nothing before). */
void tp_plan_print(const void *plan, FILE *out, const char *pass);
/* The order of the passes is the pipeline's to check, before any pass
 * runs (tp_check_order, the plan's check_order hook): a --passes list in the wrong order is a
 * usage error of the command, naming the pass to run first.  A pass that
 * still finds what it needs missing was called around the pipeline: a bug,
 * which these report (BUG message, PDT_EINTERNAL). */
int tp_order_bug(const char *pass);
/* ctx's plan when it has reached `stage`; otherwise tp_order_bug(pass)
 * and NULL: the caller returns PDT_EINTERNAL. */
tp_plan *tp_plan_need(pdt_ctx *ctx, const char *pass, int stage);
/* PDT_OK while ctx->main and ctx->startup are still the inputs the plan
 * was made from; after 'insert_send_recv' took them over, tp_order_bug. */
int tp_plan_need_inputs(const tp_plan *st, const char *pass);
/* After a pass that built or extended programs: their framework attrs,
 * the staged outputs in the order they are written (trainer, then each
 * pserver's main and startup), and manifest.json marked stale: the
 * pipeline makes it again (tp_plan_make_manifest) before it frees the
 * plan. */
void tp_plan_outputs_changed(tp_plan *st, ir_program *const *progs, size_t n);
/* Whether the pserver passes build pserver e now: --role and --endpoint
 * ask for it, and the plan is not narrowed to another one. */
bool tp_pserver_wanted(const tp_plan *st, size_t e);


/* ---- placement_lookup.c: the writers of the placement's lookups ---- */
tp_lookup *tp_lookup_new(void);
void tp_lookup_free(tp_lookup *lk);
/* The optimize op at POS has op_role_var[0] PARAM (positions in order). */
void tp_lookup_add_opt(tp_lookup *lk, const char *param, size_t pos);
/* pl->pairs[i] is (PARAM, GRAD). */
void tp_lookup_set_pair(tp_lookup *lk, const char *param, const char *grad, size_t i);

/* ---- find_optimize.c ---- */
/* Fills op_kind, opt_pos, the lookups, pairs (without slices).
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
 * `anchor` (-1: first of all); call with anchors in increasing order,
 * *next (the cursor in the prefetch tables) starting at 0. */
void tp_prefetch_emit(const tp_placement *pl, const tp_inputs *in, ir_program *p, long anchor,
                      GPtrArray *ops, size_t *next);

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
/* Cuts every pair's param and grad into slices and names them. */
int tp_split_vars(tp_plan *st);

/* ---- transpile_dispatch.c ---- */
/* Decides send order (numpy shuffle with --no-slice) and the endpoint of
 * every slice; fills st->epl. */
int tp_dispatch(tp_plan *st);

/* ---- transpile_util.c ---- */
const char *tp_control_var(ir_block *b, unsigned *counter);
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
void tp_rename_role_var(const tp_placement *pl, ir_op *op);
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


/* ---- transpile_dcasgd.c (--dc-asgd) ---- */
/* The per-trainer backups `SLICE.trainer_<i>_bak` of the params on ep. */
void tp_dc_declare_baks(const tp_placement *pl, const tp_inputs *in, ir_block *g, size_t ep);
/* _append_dc_asgd_ops into blk for param slice s of p; returns the
 * corrected grad the optimizer op reads instead of `grad`. */
const char *tp_dc_append(const tp_inputs *in, ir_block *blk, const tp_pair *p, const tp_slice *s,
                         const char *grad, unsigned *tmp_counter);
/* get_startup_program's `assign` of each slice to its backups, into ops. */
void tp_dc_startup_assigns(const tp_placement *pl, const tp_inputs *in, size_t ep, GPtrArray *ops,
                           ir_program *s);

/* ---- transpile_table.c: the distributed lookup table ---- */
/* find_distributed_lookup_table and _update_dist_lookup_table_vars: sets
 * st->table and takes the table's pair out of st->pairs. */
int tp_table_find(tp_plan *st);
/* The table's send dummy, made right after send_barrier's output; NULL
 * when there is no table.  The trainer's builder keeps it for: */
const char *tp_table_send_dummy(const tp_placement *pl, ir_block *b, unsigned *ctl);
/* The prefetch ops and the table grad's split_ids + send (its output the
 * dummy above) in the trainer's block 0 (after the other sends are in
 * place). */
void tp_table_trainer(const tp_placement *pl, const tp_inputs *in, ir_block *b,
                      const char *table_dummy);
/* _get_sparse_table_names in param order (caller frees the array). */
GPtrArray *tp_sparse_table_names(const tp_placement *pl, const tp_inputs *in);
typedef struct {
    int32_t checkpoint_block;
    const char *prefetch;       /* prefetch_var_name_to_block_id entry */
} tp_table_ps;
/* The table, prefetch and checkpoint blocks of one pserver; `pre` is the
 * parent of its optimize blocks. */
int tp_table_pserver(const tp_placement *pl, const tp_inputs *in, size_t ep, ir_program *p,
                     int32_t pre, GArray *blocks, GPtrArray *grad_to_block, tp_table_ps *out);
void tp_table_serv_attrs(const tp_placement *pl, ir_op *serv, const tp_table_ps *tps);
/* The manifest's "distributed_table" object (a jansson json_t *). */
const pdt_manifest_table *tp_table_manifest(tp_plan *st, pdt_manifest *m);
/* The placement's copy of v (find_optimize.c): the desc with its own dims
 * and no rare part (nothing the placement's readers look at), in arena a,
 * detached from any block, so it stays as find_optimize saw it whatever
 * becomes of v's program. */
const ir_var *tp_desc_copy(ir_arena *a, const ir_var *v);

/* ---- geo_pserver.c, geo_trainer.c (--geo) ---- */
/* NAME.delta, the change of param (slice) NAME a GEO trainer pushes. */
const char *tp_geo_delta_name(const char *var);
/* Declares a delta of param p's slice in b: SELECTED_ROWS when p is
 * sparse, else p's type; persistable False, no lod_level. */
void tp_geo_declare_delta(ir_block *b, const tp_pair *p, const char *name,
                          const int64_t *dims, size_t n_dims);
ir_program *tp_build_geo_pserver(const tp_placement *pl, const tp_inputs *in, size_t ep);
/* Rewrites the inputs taken over into the trainer's, as insert_send_recv
 * does; on bad input (message printed) it changes nothing but the
 * remote_prefetch attrs it turned off. */
int tp_build_geo_trainer(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                         ir_program *startup);

/* ---- builders ----
 * Each takes the placement and the inputs it reads.  A pserver builder
 * returns the new program it made from them (NULL on bad input, message
 * printed); a trainer builder rewrites the inputs its pass took over from
 * ctx (tp_build_trainer) or the trainer built before (delete_optimizer).
 * The passes' entry points, pass_NAME(ctx), fetch the plan and call them. */
/* insert_send_recv.c: _get_trainer_startup_program's recv of every param
 * but the sparse tables, fetch_barrier and concat, appended to sb (the
 * trainer's startup block 0); *ctl counts the control vars. */
void tp_trainer_startup_recvs(const tp_placement *pl, const tp_inputs *in, ir_block *sb,
                              unsigned *ctl);
/* insert_send_recv.c: transpile()'s trainer part, on main and startup (the
 * inputs, which tp_build_trainer took over from ctx). */
int tp_insert_send_recv(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                        ir_program *startup);
/* Takes ctx->main and ctx->startup over (leaving empty programs there),
 * rewrites them into the trainer's with one of the two builders
 * (insert_send_recv's or GEO's) and stages them as trainer_<id>; when
 * the builder refuses, ctx gets them back. */
typedef int (*tp_trainer_builder)(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                                  ir_program *startup);
int tp_build_trainer(pdt_ctx *ctx, const char *pass, tp_trainer_builder build);

/* ---- era_check.c: the target version and pserver mode ---- */
/* PDT_EUSAGE (said) when --paddle-version names a target that had no
 * such mode: --geo and --mode=collective before 1.6, --half-async before
 * 1.7 (a warning when the version was read off the input); PDT_OK
 * otherwise. */
int tp_era_check_modes(const pdt_ctx *ctx);
/* The first remote_prefetch table (its param TABLE, read by ops of TYPE):
 * refused (exit 2) for a 1.4/1.5 target named by --paddle-version, whose
 * transpiler had no distributed_lookup_table; a warning when the version
 * was read off the input (research-2x-3x.md 4z7). */
int tp_era_check_remote(const pdt_ctx *ctx, const char *table, const char *type);
/* Does the target's transpiler prefetch a remote_prefetch lookup_table_v2
 * (v1.8.3 on; true for native output)? */
bool tp_era_remote_v2(const pdt_ctx *ctx);
/* Does the target's transpiler count a remote_prefetch hierarchical_sigmoid
 * as a remote op (v1.4.0-v1.6.3; false for native output)? */
bool tp_era_remote_hsigmoid(const pdt_ctx *ctx);
/* Whether the target rewrites the LR counter for async modes (per-trainer
 * counters the trainers send: from 1.6). */
bool tp_era_async_lr_counters(const pdt_ctx *ctx);
/* One warning naming the op types of the trainer's made ops that the
 * target does not register (recv, split_byref from 2.0). */
void tp_era_warn_unregistered(const pdt_ctx *ctx, const ir_program *main,
                              const ir_program *startup);
/* delete_optimizer.c: get_trainer_program's deletions, in place. */
int tp_delete_optimizer(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                        ir_program *startup);
/* build_pserver.c, build_pserver_startup.c: pserver ep's programs, new,
 * from the placement and the unchanged inputs (which they only read). */
ir_program *tp_build_pserver(const tp_placement *pl, const tp_inputs *in, size_t ep);
/* Builds each wanted pserver's main with one of the two builders above and
 * stages them as pserver_<K> (build_pserver and geo_pserver). */
typedef ir_program *(*tp_pserver_builder)(const tp_placement *pl, const tp_inputs *in,
                                          size_t ep);
int tp_build_pservers(pdt_ctx *ctx, const char *pass, tp_pserver_builder build);
/* The startup of pserver ep, whose main program is pmain; never fails. */
ir_program *tp_build_pserver_startup(const tp_placement *pl, const tp_inputs *in, size_t ep,
                                     const ir_program *pmain);
/* ---- nccl2.c, collective.c (--mode=nccl2, --mode=collective) ----
 * Those modes have no placement; their builders read only the options.
 * What Paddle's SingleProcessMultiThread reads from the environment: the
 * count of FLAGS_selected_gpus items, PADDLE_FUSE_ALLREDUCE and
 * PADDLE_LOSS_SCALE (taken from ctx->transpile.runtime). */
typedef struct {
    int gpus, fuse_allreduce, loss_scale;
} tp_spmt_env;
/* What the nccl2 and collective builders read besides the programs, made
 * once by their pass (tp_stage_trainer_rewrite, transpile.c) from the
 * options validate() accepted; the builders take it const and never see
 * ctx. */
typedef struct {
    const pdt_transpile_opts *o;    /* ctx->transpile */
    const char *main_path;          /* the main program's file, for messages */
    const char *endpoint;           /* o->endpoint, interned */
    tp_spmt_env spmt;               /* o->runtime's part SingleProcessMultiThread reads */
} tp_collective_plan;
/* Rewrite main and startup (the inputs, which the pass took over from ctx)
 * into the trainer's.  On bad input (collective: the ops it reads;
 * message printed) they change nothing and the pass gives the programs
 * back to ctx. */
typedef int (*tp_collective_builder)(const tp_collective_plan *cp, ir_program *main,
                                     ir_program *startup);
int tp_build_nccl2(const tp_collective_plan *cp, ir_program *main, ir_program *startup);
int tp_build_collective(const tp_collective_plan *cp, ir_program *main, ir_program *startup);
/* transpile.c: passes 'nccl2' and 'collective' (for --mode=MODE only; the
 * pipeline checks it): makes the builders' tp_collective_plan from ctx,
 * takes ctx->main and ctx->startup over, has `build` rewrite them (ctx
 * gets them back when it refuses), stages them as trainer_<id> and
 * trainer_<id>.startup and makes the manifest. */
int tp_stage_trainer_rewrite(pdt_ctx *ctx, const char *pass, pdt_dist_mode mode,
                             tp_collective_builder build);
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
/* The manifest (src/job/manifest.h) describing what was written; the
 * nccl2 and collective ones replace ctx->manifest. */
pdt_manifest *tp_manifest(tp_plan *st, const bool *pserver_written, bool trainer_written);
void tp_manifest_nccl2(pdt_ctx *ctx);
void tp_manifest_collective(pdt_ctx *ctx, const tp_spmt_env *spmt);

#endif
