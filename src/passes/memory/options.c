/* memory/options.c - the options of the memory family (memory_optimize,
 * release_memory), filling pdt_memory_opts; each option is declared here
 * and nowhere else. */
#include "../options.h"
#include "../pass.h"

#define FIELD(f) offsetof(pdt_memory_opts, f)

static const pdt_option memory_options[] = {
    {.name = "level", .type = PDT_OPT_INT, .meta = "0|1", .min = 0, .max = 1, .def = "0",
     .passes = "memory_optimize",
     .help = "0: reuse only a var of exactly the same shape; 1: the smallest dead var at "
             "least as large",
     .offset = FIELD(level)},
    {.name = "skip", .type = PDT_OPT_LIST, .meta = "VAR,...",
     .passes = "memory_optimize release_memory",
     .help = "skip_opt_set: vars never renamed, reused nor deleted", .offset = FIELD(skip)},
    {.name = "skip-grads", .type = PDT_OPT_FLAG, .passes = "memory_optimize",
     .help = "also skip the gradients the optimizer ops read", .offset = FIELD(skip_grads)},
    {.name = "print-log", .type = PDT_OPT_FLAG, .passes = "memory_optimize",
     .help = "print Paddle's print_log lines: to standard output, or to standard error when "
             "the program goes to standard output",
     .offset = FIELD(print_log)},
};

const pdt_option_family pdt_family_memory = {
    "memory", memory_options, sizeof memory_options / sizeof *memory_options,
    offsetof(pdt_ctx, memory), NULL};
