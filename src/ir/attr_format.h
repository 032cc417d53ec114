/* attr_format.h - an attr's value as one short line of text, for people
 * (dump --ops --attrs, pdtrans diff).  Not a file format: nothing reads
 * it back; the protobuf text form is src/io's. */
#ifndef PDT_IR_ATTR_FORMAT_H
#define PDT_IR_ATTR_FORMAT_H

#include <glib.h>
#include <stdbool.h>

#include "ir.h"

/* Appends the value: 1, 0.5, true, "text" (C escapes), [1, 2],
 * ["a", "b"], block 3, blocks [1, 2], var x, vars [x, y], scalar 1.
 * A float is printed so that it reads back to the same bits (%.9g,
 * doubles %.17g), so two values print alike iff they are alike. */
void ir_attr_format(GString *g, const ir_attr *a);
/* "INT", "STRINGS", ... (AttrType's names); "TYPE_<n>" for others. */
const char *ir_attr_type_name(ir_attr_type t);
/* Attrs every op gets from Paddle's OpProtoAndCheckerMaker (op_role,
 * op_role_var, op_namescope, op_callstack, op_device, with_quant_attr). */
bool ir_attr_is_framework(const char *name);
/* An attr at the default Python's check_attrs gives it that only picks a
 * kernel (use_mkldnn false, mkldnn_data_type "float32", use_quantizer
 * false, use_cudnn false, Scale_x/Scale_y/Scale_out 1, x/y_data_format
 * ""): the era rows
 * add them to created ops for one Paddle version and not the input's, so
 * the symbolic verifier must not tell two ops apart by them. */
bool ir_attr_is_default_kernel_choice(const ir_attr *a);
/* A string as "text" with C escapes (also for var fields and JSON-free
 * output). */
void ir_format_quoted(GString *g, const uint8_t *s, size_t n);

#endif
