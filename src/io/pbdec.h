/* pbdec.h - the wire reader shared by pbdec.c (program, blocks, vars) and
 * pbdec_op.c (ops, attrs).  Private to the I/O layer. */
#ifndef PDT_PBDEC_H
#define PDT_PBDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../ir/ir.h"

enum { WT_VARINT = 0, WT_64BIT = 1, WT_LEN = 2, WT_32BIT = 5 };

/* One field as read: its number, wire type, where it starts (its key) and
 * its value (a varint's or fixed value in `v`; a length-delimited value's
 * bytes in data/len). */
typedef struct {
    uint32_t num;
    unsigned wt;
    const uint8_t *key;
    uint64_t v;
    int vbytes;                 /* a varint's length */
    const uint8_t *data;
    size_t len;
} pbd_field;

/* A message's bytes, read field by field. */
typedef struct {
    const uint8_t *at, *end;
} pbd_msg;

/* The next field of m into f; false at the end of m (with *bad false) or
 * on anything the fast reader leaves to protobuf-c (with *bad true).
 * pbd_next_slow reads any field; pbd_next (below) reads the common one
 * inline and hands the rest to it. */
bool pbd_next_slow(pbd_msg *m, pbd_field *f, bool *bad);

/* Nearly every field of a Paddle program has a one-byte key and a one-byte
 * varint or length (names, slots, small attrs): read those here, without a
 * call.  The walks over an op's bytes (the canonical check, the scans, the
 * lazy attr lookups) were a sixth of a transpile's instructions in
 * pbd_next_slow (issue 33 point 2).  Reads exactly what pbd_next_slow
 * reads for such a field: a key byte of 8 or more has a non-zero field
 * number and no continuation, so none of its refusals apply. */
static inline bool pbd_next(pbd_msg *m, pbd_field *f, bool *bad)
{
    const uint8_t *p = m->at;
    if (m->end - p >= 2 && p[0] >= 8 && p[0] < 0x80 && p[1] < 0x80) {
        unsigned wt = p[0] & 7u;
        if (wt == WT_VARINT) {
            f->key = p;
            f->num = p[0] >> 3;
            f->wt = WT_VARINT;
            f->v = p[1];
            f->vbytes = 1;
            m->at = p + 2;
            *bad = false;
            return true;
        }
        if (wt == WT_LEN && p[1] <= m->end - (p + 2)) {
            f->key = p;
            f->num = p[0] >> 3;
            f->wt = WT_LEN;
            f->data = p + 2;
            f->len = p[1];
            m->at = p + 2 + p[1];
            *bad = false;
            return true;
        }
    }
    return pbd_next_slow(m, f, bad);
}
/* The field's value as each type reads it; false: leave it to protobuf-c. */
bool pbd_int32(const pbd_field *f, int32_t *out);
bool pbd_int64(const pbd_field *f, int64_t *out);
bool pbd_bool(const pbd_field *f, bool *out);
bool pbd_float(const pbd_field *f, float *out);
bool pbd_double(const pbd_field *f, double *out);
bool pbd_len(const pbd_field *f);
/* A string as protobuf-c hands it on: up to its first NUL. */
const char *pbd_name(const pbd_field *f);
ir_bytes pbd_string(ir_arena *a, const pbd_field *f);
/* The unknown fields of the message data[0..len): the fields whose number
 * is not set in `known` (bit n: field n), copied back to back. */
ir_bytes pbd_unknown(ir_arena *a, const uint8_t *data, size_t len, uint32_t known);
/* Bytes of v as a minimal varint.  One definition for the encoder and for
 * the check that an op's bytes are what the encoder writes (pbdec_canon.c):
 * the two must agree exactly for a kept op to be copied verbatim. */
static inline size_t pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* A singular field seen a second time (protobuf-c merges or overwrites). */
static inline bool pbd_once(uint32_t *seen, uint32_t num)
{
    if (num < 32 && (*seen >> num & 1))
        return false;
    if (num < 32)
        *seen |= 1u << num;
    return true;
}

/* pbdec_op.c: one OpDesc, appended to nothing (the caller places it).  When
 * its bytes are canonical (pbd_op_canonical) the op keeps them as `wire`:
 * pointing into data when `in_place` (data lives as long as p), else a
 * copy in p's arena. */
ir_op *pbd_op(ir_program *p, const uint8_t *data, size_t len, bool in_place);
/* pbdec_op.c: a hint ahead of a block field (3 VarDesc, 4 OpDesc): loads
 * the intern table's slots for the names it holds. */
void pbd_prefetch_names(const pbd_field *f);
/* pbdec_canon.c: the OpDesc's bytes are what pbenc.c writes for the op
 * pbd_op builds from them (and its attrs decode).  *peek tells whether an
 * attr has type BLOCK, BLOCKS, VAR or VARS, and where the first attr named
 * op_role is (data NULL: none). */
typedef struct {
    bool names_blocks;
    ir_bytes role;
    bool attrs_sorted;          /* attr names strictly increase */
} pbd_op_peek;
bool pbd_op_canonical(const uint8_t *data, size_t len, pbd_op_peek *peek);
/* strcmp's order of two names given as bytes without a NUL (a canonical
 * op's attr names, pbdec_canon.c, and interned names). */
static inline int pbd_name_cmp(const void *a, size_t a_len, const void *b, size_t b_len)
{
    int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
    return c ? c : (a_len > b_len) - (a_len < b_len);
}
/* pbdec_op.c: one OpDesc.Attr or VarDesc.Attr into d. */
bool pbd_attr(ir_arena *a, ir_attr *d, const uint8_t *data, size_t len, bool var_attr);

#endif
