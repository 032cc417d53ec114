/* family.h - the memory family's options and results in pdt_ctx (families.def). */
#ifndef PDT_MEMORY_FAMILY_H
#define PDT_MEMORY_FAMILY_H

#include <stdbool.h>
#include <stdlib.h>
#include "../list.h"

/* memory_optimize / release_memory options (src/passes/memory/). */
typedef struct {
    pdt_list skip;              /* --skip: skip_opt_set */
    int level;                  /* memory_optimize: 0 exact shape, 1 best fit */
    bool skip_grads;            /* memory_optimize: skip_grads=True */
    bool print_log;             /* memory_optimize: collect print_log's lines in `log` */
    char *log;                  /* malloc'd, NUL-terminated; NULL when empty */
    size_t log_len;
} pdt_memory_opts;

/* Its results: memory_optimize's print_log lines are in the options' `log`. */
#define PDT_MEMORY_RESULTS
#define pdt_memory_init(ctx) ((void)(ctx))
#define pdt_memory_release(ctx) (free((ctx)->memory.log), pdt_list_free(&(ctx)->memory.skip))

#endif
