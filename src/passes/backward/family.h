/* family.h - the backward family's options and results in pdt_ctx (families.def). */
#ifndef PDT_BACKWARD_FAMILY_H
#define PDT_BACKWARD_FAMILY_H

#include <stdbool.h>
#include "../list.h"

/* The backward family's options (backward/options.c): append_backward
 * and calc_gradient. */
typedef struct {
    const char *loss;
    pdt_list params, no_grad, checkpoints;
    pdt_list targets, inputs, target_grads;
} pdt_backward_opts;

/* Its results, filled by append_backward and calc_gradient: parameter i
 * has gradient bw_grads[i]. */
#define PDT_BACKWARD_RESULTS pdt_list bw_params, bw_grads;
#define pdt_backward_init(ctx) ((void)(ctx))
#define pdt_backward_release(ctx)                                                          \
    (pdt_list_free(&(ctx)->backward.params), pdt_list_free(&(ctx)->backward.no_grad),      \
     pdt_list_free(&(ctx)->backward.checkpoints), pdt_list_free(&(ctx)->backward.targets), \
     pdt_list_free(&(ctx)->backward.inputs), pdt_list_free(&(ctx)->backward.target_grads), \
     pdt_list_free(&(ctx)->bw_params), pdt_list_free(&(ctx)->bw_grads))

#endif
