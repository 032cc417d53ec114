/* transpile_cli.h - the transpile command's own options, shared by its
 * files: transpile.c (parsing, pipeline, output) and transpile_env.c
 * (--from-env).  The family's options are in ctx->transpile. */
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
    const char *startup_path, *out_dir, *passes;
    bool text, from_env;
} tcli_opts;

/* transpile_env.c: fills what flags left unset from the variables Paddle's
 * launchers export, noting in ctx->transpile.src where each came from.
 * Usage errors (exit 2) name the variables.  The family's validate()
 * (src/passes/transpile/validate.c) then checks the result. */
int tcli_from_env(tcli_opts *o);

#endif
