/* pbconv.h - protobuf-c structs <-> IR.  Private to the I/O layer. */
#ifndef PDT_PBCONV_H
#define PDT_PBCONV_H

#include "framework.pb-c.h"
#include "../ir/ir.h"

typedef Paddle__Framework__Proto__ProgramDesc PbProgram;

/* Builds an IR program from an unpacked (or parsed) message.  Copies all
 * data; msg may be freed afterwards.  Every var is marked from_input. */
ir_program *pbconv_to_ir(const PbProgram *msg);

/* Builds a message that points into p's memory and into `scratch`.  The
 * result is valid until p or scratch is freed; never free_unpacked it.
 * Sub-messages the IR keeps as wire bytes are unpacked with protobuf-c and
 * recorded in `owned` for pbconv_release. */
typedef struct {
    ir_arena *scratch;
    size_t n_owned, cap_owned;
    ProtobufCMessage **owned;
} pbconv_out;
PbProgram *pbconv_from_ir(const ir_program *p, pbconv_out *out);
void pbconv_release(pbconv_out *out);

#endif
