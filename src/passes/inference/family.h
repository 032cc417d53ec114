/* family.h - the inference family's results in pdt_ctx (families.def):
 * the parameter values (src/ir/tensors.h) the fold reads and extends, owned
 * by the context. */
#ifndef PDT_INFERENCE_FAMILY_H
#define PDT_INFERENCE_FAMILY_H

#include "../../ir/tensors.h"

#define PDT_INFERENCE_RESULTS struct ir_tensors *param_values;
#define pdt_inference_release(ctx) ir_tensors_free((ctx)->param_values)

#endif
