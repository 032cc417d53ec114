/* transpile_cli.h - the transpile command's options, shared by its files:
 * transpile.c (parsing, pipeline, output), transpile_env.c (--from-env) and
 * transpile_check.c (usage checks before anything is read). */
#ifndef PDT_TRANSPILE_CLI_H
#define PDT_TRANSPILE_CLI_H

#include <stdbool.h>

#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

#define TCLI_CMD "transpile"

typedef struct {
    pdt_ctx *ctx;
    cli_run run;
    cli_common common;      /* -s, -o, --text as parsed */
    const char *startup_path, *out_dir, *passes, *trainers_arg;
    bool text, from_env;
    /* Which settings came from flags (they win over --from-env). */
    bool has_role, has_pservers, has_trainers, has_trainer_id, has_endpoint;
    bool has_rpc_send, has_rpc_get, has_rpc_prefetch;
    bool has_gpus, has_fuse, has_loss_scale;
    bool has_nccl_flags;    /* any nccl2-only flag */
    const char *sync_flag;  /* the --sync, --async or --half-async given */
    bool has_hierarchical;  /* --hierarchical-*: nccl2 only, not collective */
    /* Where each setting came from, for messages: the flag, or the
     * environment variable(s) under --from-env. */
    const char *src_role, *src_pservers, *src_trainers, *src_trainer_id, *src_endpoint;
} tcli_opts;

/* transpile_env.c: fills what flags left unset from the variables Paddle's
 * launchers export.  Usage errors (exit 2) name the variables. */
int tcli_from_env(tcli_opts *o);

/* transpile_check.c: the usage checks (exit 2) on the resolved settings. */
int tcli_check_usage(tcli_opts *o);

#endif
