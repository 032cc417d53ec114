/* pbtext.h - protobuf text format and wire-format diagnosis for any
 * protobuf-c message, driven only by the descriptors.
 *
 * The printer reproduces `protoc --decode=TYPE` (protobuf 3.21) byte for
 * byte; the parser reads that output back (and the usual hand-written
 * variations) so that print -> parse -> pack gives the bytes that packing
 * the original message gives.  Numbers are formatted and read with the C
 * library, so the "C" LC_NUMERIC locale is assumed.
 *
 * Known differences from protoc (none occur in ProgramDesc files read by
 * protobuf-c):
 * - protoc moves a closed enum's unnamed value into the unknown fields;
 *   we print it as `N: value` after the known fields and before the
 *   unknown fields, and the parser puts such a `N: value` back into the
 *   enum field.  If a message has both, their relative order can differ.
 * - Strings stop at an embedded NUL, as protobuf-c stores them.
 * - An unknown length-delimited field printed as `N { ... }` is re-encoded
 *   from the text, so it comes back byte-identical only if it was encoded
 *   canonically (shortest varints; a non-empty group comes back as a
 *   length-delimited field, an empty one as a group).  In a numbered field, `0x`
 *   with exactly 8 hex digits is a fixed32, with exactly 16 a fixed64.
 */
#ifndef PDT_PBTEXT_H
#define PDT_PBTEXT_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Prints msg exactly as `protoc --decode=<type> proto/framework.proto`
 * (protobuf 3.21) prints it.  Returns 0, or -1 on write error. */
int pbtext_print(FILE *out, const ProtobufCMessage *msg);

/* Same, into a malloc'd buffer (NUL-terminated); *len gets the length
 * (len may be NULL).  NULL if out of memory. */
char *pbtext_print_to_string(const ProtobufCMessage *msg, size_t *len);

/* Parses text format into a new message of type desc (free with
 * protobuf_c_message_free_unpacked(msg, NULL)).  On error returns NULL and
 * writes "NAME:LINE:COL: what is wrong" (1-based line and byte column) into
 * err (errlen bytes; err may be NULL).  Missing required fields are checked
 * after a successful parse: "NAME: missing required field
 * 'blocks[0].vars[3].type'" (plus "(and N more)" when there are several). */
ProtobufCMessage *pbtext_parse(const ProtobufCMessageDescriptor *desc,
                               const char *name, const char *text, size_t len,
                               char *err, size_t errlen);

/* Explains why protobuf_c_message_unpack fails for these bytes, walking the
 * wire format the way protobuf-c 1.4 does and reporting the first problem
 * it would hit, e.g. "truncated at byte 1234 (inside
 * blocks[0].ops[17].attrs[2])", "field 2 of blocks[0].vars[0] ('type') has
 * wire type varint, expected length-delimited (byte 37)", "missing required
 * field 'blocks[0].vars[0].type'", "invalid wire type 7 at byte 5",
 * "length 33000000000000 at byte 1 exceeds the 4 bytes left".  Returns 0
 * (and writes nothing) if it finds no problem, 1 otherwise. */
int pbwire_diagnose(const ProtobufCMessageDescriptor *desc,
                    const uint8_t *data, size_t len, char *err, size_t errlen);

/* Size of one element of a repeated field of type t in a protobuf-c
 * struct (shared by the printer and the parser). */
size_t pbtext_elt_size(ProtobufCType t);

#endif
