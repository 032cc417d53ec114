/* pbconv.h - protobuf-c structs <-> IR.  Private to the I/O layer. */
#ifndef PDT_PBCONV_H
#define PDT_PBCONV_H

#include "framework.pb-c.h"
#include "../ir/ir.h"

typedef Paddle__Framework__Proto__ProgramDesc PbProgram;
typedef Paddle__Framework__Proto__BlockDesc PbBlock;
typedef Paddle__Framework__Proto__VarDesc PbVar;
typedef Paddle__Framework__Proto__VarDesc__Attr PbVarAttr;
typedef Paddle__Framework__Proto__VarType PbVarType;
typedef Paddle__Framework__Proto__VarType__TensorDesc PbTensor;
typedef Paddle__Framework__Proto__VarType__LoDTensorDesc PbLod;
typedef Paddle__Framework__Proto__OpDesc PbOp;
typedef Paddle__Framework__Proto__OpDesc__Var PbSlot;
typedef Paddle__Framework__Proto__OpDesc__Attr PbAttr;
typedef Paddle__Framework__Proto__Scalar PbScalar;

/* A message's unknown fields as wire bytes in arena a, and back (pbconv.c);
 * pbconv_to_ir is in pbconv_in.c, pbconv_from_ir in pbconv_out.c. */
ir_bytes pbconv_unknown_to_bytes(ir_arena *a, const ProtobufCMessage *m);
void pbconv_bytes_to_unknown(ir_arena *a, ir_bytes b, ProtobufCMessage *m);

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

/* The binary form of p straight from the IR (pbenc.c): the bytes
 * protobuf_c_message_pack writes for pbconv_from_ir(p), without building
 * that message.  A malloc'd buffer of *len bytes (plus one spare). */
uint8_t *pbconv_encode(const ir_program *p, size_t *len);
/* The same bytes handed to SINK in pieces, through one buffer of CHUNK
 * bytes (e.g. PBCONV_CHUNK), so the output is never whole in
 * memory: every piece but the last fills the buffer, and no call has zero
 * bytes.  A sink returning false gets no more calls.  Returns 0,
 * PBCONV_SINK_FAILED, or PBCONV_TOO_LARGE (a block, var or op of 4 GiB or
 * more, whose size the encoder does not keep; protobuf refuses messages
 * over 2 GiB anyway) before any byte is handed over.  *len (may be NULL)
 * is the total size.  pbconv_encode returns NULL for PBCONV_TOO_LARGE. */
enum { PBCONV_CHUNK = 64 * 1024, PBCONV_SINK_FAILED = 1, PBCONV_TOO_LARGE = 2 };
typedef bool (*pbconv_sink)(void *arg, const uint8_t *data, size_t len);
int pbconv_encode_to(const ir_program *p, size_t chunk, pbconv_sink sink, void *arg,
                     uint64_t *len);
/* The same (no *len); when DROP is p, gives p's input pages back
 * (pdio_drop_input_pages) every 16 384 ops of the first walk, which reads
 * every borrower's source bytes before the first byte is handed over (the
 * sink drops them during the second: pdio_drop_input_behind).  For a
 * program written once. */
int pbconv_encode_sweep(const ir_program *p, size_t chunk, pbconv_sink sink, void *arg,
                        const ir_program *drop);

/* The IR of binary ProgramDesc bytes straight from the wire (pbdec.c), the
 * program pbconv_to_ir builds from protobuf-c's unpacking of them; NULL
 * (nothing printed) when the bytes need more than plain reading, and then
 * pdio_parse goes through protobuf-c, which accepts or refuses them. */
ir_program *pbconv_decode(const uint8_t *data, size_t len);
/* The same, for a malloc'd buffer the program then owns (freed with it):
 * its clean ops' `wire` bytes point into it instead of being copied.  On
 * NULL the buffer stays the caller's. */
ir_program *pbconv_decode_owned(uint8_t *data, size_t len);
/* Every field number of m and its sub-messages is in 1..2^29-1 (pbconv.c). */
bool pbconv_field_numbers_valid(const ProtobufCMessage *m);

#endif
