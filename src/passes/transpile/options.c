/* transpile/options.c - the options of the transpile family (the
 * DistributeTranspiler and its config), filling pdt_transpile_opts
 * (ctx->transpile); each option is declared here and nowhere else.  The
 * cross-option rules are validate.c's. */
#include <string.h>

#include "../../diag.h"
#include "../options.h"
#include "../pass.h"
#include "builders.h"

#define FIELD(f) offsetof(pdt_transpile_opts, f)
/* The passes that read each option: those whose programs (or plan) depend
 * on its value, directly or through the plan find_optimize resolves it into
 * (the manifest, which records every setting, does not count).  The
 * pipeline checks --mode for every pass.  The group 'transpile' takes the
 * options of all of them. */
#define ALL_PASSES "find_optimize split_vars build_pserver build_pserver_startup " \
                   "insert_send_recv delete_optimizer nccl2 collective geo_pserver geo_trainer"
#define PLACEMENT "find_optimize split_vars build_pserver build_pserver_startup insert_send_recv " \
                  "geo_pserver geo_trainer"
#define SYNC_MODE "find_optimize split_vars build_pserver insert_send_recv"
#define ROLES "find_optimize build_pserver build_pserver_startup insert_send_recv delete_optimizer " \
              "geo_pserver geo_trainer"
/* GEO-SGD: every pass of its pipeline but the shared build_pserver_startup. */
#define GEO_PASSES "find_optimize split_vars geo_pserver geo_trainer"

static const char *const roles[] = {"all", "trainer", "pserver", NULL};
static const char *const modes[] = {"pserver", "nccl2", "collective", NULL};
static const char *const lr_ops[] = {"keep", "move", NULL};
static const char *const splits[] = {"round-robin", "hash", "balanced", NULL};
static const char *const collective_modes[] = {"grad_allreduce", "local_sgd",
                                               "single_process_multi_thread", NULL};

/* FLAGS_selected_gpus: the count of its items, as Python's
 * len(s.split(",")) gives it. */
static bool set_gpu_count(void *base, const pdt_option *opt, const char *list, const char *cmd)
{
    (void)cmd;
    int n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    *(int *)((char *)base + opt->offset) = n;
    return true;
}

/* --geo[=N] and its Fleet 2.x spelling --a-sync-k-steps=N: the push
 * interval, default 100 as DistributeTranspilerConfig's
 * geo_sgd_need_push_nums. */
static bool set_geo(void *base, const pdt_option *opt, const char *value, const char *cmd)
{
    pdt_transpile_opts *o = base;
    const char *flag = opt->optional_value ? "--geo" : "--a-sync-k-steps";
    long n = 100;
    if (value && !pdt_parse_long(cmd, flag, value, 1, 0x7fffffff, &n))
        return false;
    if (o->given.geo_flag && strcmp(o->given.geo_flag, flag) != 0) {
        pdt_usage_error(cmd, "%s and %s are two spellings of one setting: give one",
                        o->given.geo_flag, flag);
        return false;
    }
    o->given.geo_flag = flag;
    *(int *)((char *)base + opt->offset) = (int)n;
    return true;
}

/* --pservers: the list, and the text as given, whose empty items and
 * separators validate() checks (tp_list_problem). */
static bool set_pservers(void *base, const pdt_option *opt, const char *text, const char *cmd)
{
    (void)opt, (void)cmd;
    pdt_transpile_opts *t = base;
    pdt_list_free(&t->pservers);
    t->pservers = pdt_list_split(text);
    t->pservers_arg = ir_intern(text);
    return true;
}

static const pdt_option transpile_options[] = {
    {.name = "pservers", .type = PDT_OPT_CUSTOM, .set = set_pservers, .meta = "EP[,EP...]",
     .passes = PLACEMENT, .help = "parameter-server endpoints, HOST:PORT,HOST:PORT,...",
     .offset = FIELD(pservers)},
    {.name = "trainers", .type = PDT_OPT_STRING, .meta = "N",
     .passes = PLACEMENT " nccl2 collective",
     .help = "number of trainers (nccl2, collective: the trainer endpoints)",
     .offset = FIELD(trainers_arg)},
    {.name = "trainer-id", .type = PDT_OPT_INT, .meta = "I", .min = 0, .max = 1L << 30,
     .def = "0",
     .passes = "find_optimize split_vars build_pserver insert_send_recv nccl2 collective "
               "geo_trainer",
     .help = "this trainer", .offset = FIELD(trainer_id)},
    {.name = "role", .type = PDT_OPT_CHOICE, .meta = "ROLE", .choices = roles, .def = "all",
     .passes = ROLES, .help = "trainer, pserver or all", .offset = FIELD(role)},
    {.name = "endpoint", .type = PDT_OPT_STRING, .meta = "EP",
     .passes = "build_pserver build_pserver_startup collective geo_pserver",
     .help = "with --role=pserver: the one pserver to write; nccl2, collective: this "
             "trainer's endpoint",
     .offset = FIELD(endpoint)},
    {.name = "mode", .type = PDT_OPT_CHOICE, .meta = "MODE", .choices = modes,
     .def = "pserver", .passes = ALL_PASSES, .help = "pserver, nccl2 or collective",
     .offset = FIELD(mode)},
    {.name = "collective-mode", .type = PDT_OPT_CHOICE, .meta = "M",
     .choices = collective_modes, .value = PDT_COLL_GRAD_ALLREDUCE, .passes = "collective",
     .help = "collective: grad_allreduce, local_sgd or single_process_multi_thread",
     .offset = FIELD(collective_mode)},
    {.name = "nccl-comm-num", .type = PDT_OPT_INT, .meta = "N", .min = 1, .max = 1024,
     .def = "1", .passes = "nccl2 collective",
     .help = "nccl2: NCCL communicators; collective: rings", .offset = FIELD(nccl_comm_num)},
    {.name = "hierarchical-allreduce", .type = PDT_OPT_FLAG, .passes = "nccl2",
     .help = "nccl2: hierarchical allreduce; needs --hierarchical-inter-nranks",
     .offset = FIELD(hierarchical_allreduce)},
    {.name = "hierarchical-inter-nranks", .type = PDT_OPT_INT, .meta = "N", .min = 2,
     .max = 1L << 20, .passes = "nccl2",
     .help = "ranks per node (> 1, divides the trainers)",
     .offset = FIELD(hierarchical_inter_nranks)},
    {.name = "sync", .type = PDT_OPT_ENUM_FLAG, .value = PDT_SYNC, .passes = SYNC_MODE,
     .help = "synchronous training (the default)", .offset = FIELD(sync_mode)},
    {.name = "async", .type = PDT_OPT_ENUM_FLAG, .value = PDT_ASYNC, .passes = SYNC_MODE,
     .help = "asynchronous training", .offset = FIELD(sync_mode)},
    {.name = "half-async", .type = PDT_OPT_ENUM_FLAG, .value = PDT_HALF_ASYNC,
     .passes = SYNC_MODE, .help = "half-asynchronous training", .offset = FIELD(sync_mode)},
    {.name = "dc-asgd", .type = PDT_OPT_FLAG, .passes = "build_pserver build_pserver_startup",
     .help = "delay-compensated async SGD on the pservers (not with --sync)",
     .offset = FIELD(dc_asgd)},
    {.name = "geo", .type = PDT_OPT_CUSTOM, .meta = "PUSH_NUMS", .optional_value = true,
     .set = set_geo, .passes = GEO_PASSES,
     .help = "GEO-SGD (GeoSgdTranspiler): trainers keep their optimizer and push their "
             "params' deltas every PUSH_NUMS steps (default 100)",
     .offset = FIELD(geo_push_nums)},
    {.name = "a-sync-k-steps", .type = PDT_OPT_CUSTOM, .meta = "K", .set = set_geo,
     .passes = GEO_PASSES, .help = "Fleet 2.x's a_sync_configs k_steps: the same as --geo=K",
     .offset = FIELD(geo_push_nums)},
    /* find_optimize gives the ops the LRSched role: every pass that
     * places, copies or deletes LR ops depends on it. */
    {.name = "lr-ops", .type = PDT_OPT_CHOICE, .meta = "WHAT", .choices = lr_ops, .def = "keep",
     .passes = ROLES,
     .help = "a learning rate the trainer computes with forward ops (PaddleOCR): keep "
             "them on the trainer as Paddle does (warns), or move them to the pservers as "
             "LR-decay ops",
     .offset = FIELD(lr_ops)},
    {.name = "no-slice", .type = PDT_OPT_UNSET, .def = "", .passes = "split_vars",
     .help = "one slice per var (slice_var_up = False)", .offset = FIELD(slice_var_up)},
    /* DistributeTranspiler asserts min_block_size >= 8192. */
    {.name = "min-block-size", .type = PDT_OPT_LONG, .meta = "N", .min = 8192,
     .max = 1L << 40, .def = "8192", .passes = "split_vars",
     .help = "smallest slice, in elements", .offset = FIELD(min_block_size)},
    {.name = "split-method", .type = PDT_OPT_CHOICE, .meta = "M", .choices = splits,
     .def = "round-robin", .passes = "split_vars", .help = "round-robin, hash or balanced",
     .offset = FIELD(split_method)},
    {.name = "random-seed", .type = PDT_OPT_ULONG, .meta = "N", .min = 0, .max = 4294967295L,
     .def = "0", .passes = "split_vars", .help = "Program.random_seed for --no-slice",
     .offset = FIELD(random_seed)},
    {.name = "rpc-send-threads", .type = PDT_OPT_INT, .meta = "N", .min = 0,
     .max = 0x7fffffff, .def = "12", .passes = "build_pserver geo_pserver",
     .help = "pservers' listen_and_serv rpc_send_thread_num (FLAGS_rpc_send_thread_num)",
     .offset = FIELD(runtime.rpc_send_threads)},
    {.name = "rpc-get-threads", .type = PDT_OPT_INT, .meta = "N", .min = 0, .max = 0x7fffffff,
     .def = "12", .passes = "build_pserver geo_pserver",
     .help = "... rpc_get_thread_num (FLAGS_rpc_get_thread_num)",
     .offset = FIELD(runtime.rpc_get_threads)},
    {.name = "rpc-prefetch-threads", .type = PDT_OPT_INT, .meta = "N", .min = 0,
     .max = 0x7fffffff, .def = "12", .passes = "build_pserver geo_pserver",
     .help = "... rpc_prefetch_thread_num (FLAGS_rpc_prefetch_thread_num)",
     .offset = FIELD(runtime.rpc_prefetch_threads)},
    {.name = "selected-gpus", .type = PDT_OPT_CUSTOM, .meta = "LIST", .set = set_gpu_count,
     .def = "0,1,2,3,4,5,6,7", .passes = "collective",
     .help = "single_process_multi_thread: the GPUs of one trainer, as FLAGS_selected_gpus",
     .offset = FIELD(runtime.selected_gpus)},
    {.name = "fuse-allreduce", .type = PDT_OPT_INT, .meta = "N", .min = 0, .max = 0x7fffffff,
     .def = "1", .passes = "collective",
     .help = "single_process_multi_thread: one fused allreduce when N > 0 "
             "(PADDLE_FUSE_ALLREDUCE)",
     .offset = FIELD(runtime.fuse_allreduce)},
    {.name = "loss-scale", .type = PDT_OPT_INT, .meta = "N", .min = 0, .max = 0x7fffffff,
     .def = "1", .passes = "collective",
     .help = "single_process_multi_thread: scale the loss grad unless 0 (PADDLE_LOSS_SCALE)",
     .offset = FIELD(runtime.loss_scale)},
};

const pdt_option_family pdt_family_transpile = {
    "transpile", transpile_options, sizeof transpile_options / sizeof *transpile_options,
    offsetof(pdt_ctx, transpile), tp_validate};
