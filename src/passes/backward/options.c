/* backward/options.c - the options of the backward family (append_backward,
 * calc_gradient), filling pdt_backward_opts; each option is declared here and
 * nowhere else. */
#include "../options.h"
#include "../pass.h"

#define FIELD(f) offsetof(pdt_backward_opts, f)

static const pdt_option backward_options[] = {
    {.name = "loss", .type = PDT_OPT_STRING, .meta = "VAR", .passes = "append_backward",
     .help = "the loss var (block 0)", .offset = FIELD(loss)},
    {.name = "params", .type = PDT_OPT_LIST, .meta = "P,...", .passes = "append_backward",
     .help = "parameter_list: the parameters to train (default: every parameter of block 0 "
             "that is not stop_gradient, by name)",
     .offset = FIELD(params)},
    {.name = "no-grad", .type = PDT_OPT_LIST, .meta = "V,...",
     .passes = "append_backward calc_gradient",
     .help = "no_grad_set: vars whose gradients are not wanted", .offset = FIELD(no_grad)},
    {.name = "checkpoints", .type = PDT_OPT_LIST, .meta = "V,...", .passes = "append_backward",
     .help = "recompute checkpoints (forward recomputation)", .offset = FIELD(checkpoints)},
    {.name = "targets", .type = PDT_OPT_LIST, .meta = "T,...", .passes = "calc_gradient",
     .help = "target vars (block 0)", .offset = FIELD(targets)},
    {.name = "inputs", .type = PDT_OPT_LIST, .meta = "X,...", .passes = "calc_gradient",
     .help = "input vars (block 0)", .offset = FIELD(inputs)},
    {.name = "target-grads", .type = PDT_OPT_LIST, .meta = "G,...", .passes = "calc_gradient",
     .help = "given gradients of the targets (default: ones)", .offset = FIELD(target_grads)},
};

const pdt_option_family pdt_family_backward = {
    "backward", backward_options, sizeof backward_options / sizeof *backward_options,
    offsetof(pdt_ctx, backward), NULL};
