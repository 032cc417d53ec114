/* family.h - the transpile family's options and results in pdt_ctx (families.def). */
#ifndef PDT_TRANSPILE_FAMILY_H
#define PDT_TRANSPILE_FAMILY_H

#include <stdbool.h>
#include <glib.h>
#include "../list.h"
#include "../../job/manifest.h"

typedef enum { PDT_SYNC = 0, PDT_ASYNC, PDT_HALF_ASYNC } pdt_sync_mode;
typedef enum { PDT_MODE_PSERVER = 0, PDT_MODE_NCCL2, PDT_MODE_COLLECTIVE } pdt_dist_mode;
typedef enum { PDT_SPLIT_ROUND_ROBIN = 0, PDT_SPLIT_HASH, PDT_SPLIT_BALANCED } pdt_split_method;
typedef enum { PDT_ROLE_ALL = 0, PDT_ROLE_TRAINER, PDT_ROLE_PSERVER } pdt_role;
/* --lr-ops: what to do with a learning rate the trainer computes with
 * forward-role ops (transpile/lr_move.c): keep them there, as Paddle does
 * (and warn), or move them to the pservers as LR-decay ops. */
typedef enum { PDT_LR_OPS_KEEP = 0, PDT_LR_OPS_MOVE } pdt_lr_ops;
/* DistributeTranspilerConfig.collective_mode (--mode=collective). */
typedef enum {
    PDT_COLL_NONE = 0, PDT_COLL_GRAD_ALLREDUCE, PDT_COLL_LOCAL_SGD, PDT_COLL_SPMT
} pdt_collective_mode;

/* Settings Paddle takes from the environment (ServerRuntimeConfig and
 * SingleProcessMultiThread).  The passes read them only from here; the
 * command fills them from options, or from the environment under
 * --from-env, so that a stray variable never changes an output. */
typedef struct {
    int rpc_send_threads;       /* FLAGS_rpc_send_thread_num */
    int rpc_get_threads;        /* FLAGS_rpc_get_thread_num */
    int rpc_prefetch_threads;   /* FLAGS_rpc_prefetch_thread_num */
    int selected_gpus;          /* items of FLAGS_selected_gpus */
    int fuse_allreduce;         /* PADDLE_FUSE_ALLREDUCE */
    int loss_scale;             /* PADDLE_LOSS_SCALE */
} pdt_runtime;

/* The transpile family's options (transpile/options.c): what
 * DistributeTranspiler.transpile and DistributeTranspilerConfig take, and
 * the settings Paddle reads from the environment.  The family's validate()
 * (transpile/validate.c) checks them before any file is read and resolves
 * `trainers` and `trainer_endpoints` from --trainers; the passes rely on
 * both. */
typedef struct {
    pdt_list pservers;          /* endpoints, in --pservers order */
    const char *pservers_arg;   /* --pservers as given (validate() checks its grammar) */
    const char *trainers_arg;   /* --trainers as given: a count or endpoints, per mode */
    int trainers;               /* count; resolved from trainers_arg (default 1) */
    pdt_list trainer_endpoints; /* nccl2, collective: --trainers as an endpoint list */
    int trainer_id;
    pdt_role role;
    const char *endpoint;       /* --endpoint */
    pdt_dist_mode mode;
    pdt_collective_mode collective_mode;    /* --collective-mode */
    int nccl_comm_num;          /* DistributeTranspilerConfig.nccl_comm_num */
    bool hierarchical_allreduce;
    int hierarchical_inter_nranks;
    pdt_sync_mode sync_mode;
    bool dc_asgd;               /* --dc-asgd: enable_dc_asgd (not sync) */
    bool slice_var_up;          /* false with --no-slice */
    long min_block_size;
    pdt_split_method split_method;
    unsigned long random_seed;
    /* --geo[=N] or --a-sync-k-steps=N: GEO-SGD (GeoSgdTranspiler), the
     * trainers pushing their params' deltas every N steps; 0: not GEO. */
    int geo_push_nums;
    pdt_lr_ops lr_ops;          /* --lr-ops */
    pdt_runtime runtime;
    /* Set by the command: --role=all writes trainer_0 .. trainer_{trainers-1}
     * (the manifest lists them all); false: trainer_id's alone. */
    bool every_trainer;
    /* Set by the command for validate(): how its messages name a setting
     * (the flag, or under --from-env the variable(s) it came from; NULL:
     * the flag), and which options the user gave (flags win over the
     * environment; some options are refused in modes that ignore them). */
    struct {
        const char *role, *pservers, *trainers, *trainer_id, *endpoint;
    } src;
    struct {
        bool role, pservers, trainers, trainer_id, endpoint;
        bool rpc_send, rpc_get, rpc_prefetch, gpus, fuse, loss_scale;
        bool hierarchical;      /* --hierarchical-*: nccl2 only */
        bool nccl_flags;        /* any nccl2-only option */
        const char *sync_flag;  /* the --sync, --async or --half-async given */
        const char *geo_flag;   /* "--geo" or "--a-sync-k-steps" when given */
    } given;
} pdt_transpile_opts;

/* Its result: the manifest (src/job/manifest.h; the command writes it as
 * manifest.json), made when the pass manager finishes the plan, or by the
 * nccl2 and collective passes. */
#define PDT_TRANSPILE_RESULTS struct pdt_manifest *manifest;
/* What --trainers resolves to when not given. */
#define pdt_transpile_init(ctx) ((void)((ctx)->transpile.trainers = 1))
#define pdt_transpile_release(ctx)                                                  \
    (pdt_list_free(&(ctx)->transpile.pservers),                                     \
     pdt_list_free(&(ctx)->transpile.trainer_endpoints), pdt_manifest_free((ctx)->manifest))

#endif
