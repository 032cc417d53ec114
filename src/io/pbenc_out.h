/* pbenc_out.h - the output side of pbenc.c: the state of its two walks
 * (sizing, then writing), the recorded sizes, the buffer and its sink, and
 * the field writers.  Static inline, so that they are inlined into the
 * walks as they were when they lived in pbenc.c, its only user.  Private
 * to src/io. */
#ifndef PDT_PBENC_OUT_H
#define PDT_PBENC_OUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "pbconv.h"
#include "pbdec.h"

/* Program > Block > Var is the deepest nesting of recorded messages; the
 * leaves below them (VarType > LoDTensorDesc > TensorDesc, Attr > Scalar >
 * Complex) are counted without the stack. */
enum { MAX_NEST = 4 };

typedef struct {
    bool writing;
    int in_leaf;                /* leaf bodies being counted or written */
    uint8_t *buf, *out, *end;   /* writing: the buffer, its next byte, its end */
    pbconv_sink sink;           /* NULL: buf holds the whole output */
    void *sink_arg;
    bool sink_failed;           /* the sink said no: the rest is dropped */
    uint64_t handed;            /* bytes given to the sink so far */
    size_t count;               /* sizing: bytes of the open message so far */
    uint32_t *sizes;            /* recorded messages' sizes, in the order they start */
    size_t n_sizes, cap_sizes, next_size;
    bool too_large;             /* a recorded message is 4 GiB or more */
    size_t saved_count[MAX_NEST], saved_index[MAX_NEST];
    int depth;
    const void **order;         /* sorted sequences, in the order they are made */
    size_t n_order, cap_order, next_order;
    /* the slots being written: whose, which side, and the array (a slot's
     * unknown fields are found by its place in it, ir_slot_unknown) */
    const ir_op *slot_op;
    bool slot_out;
    const ir_slot *slot_base;
    /* pbconv_encode_dropping: the program whose input pages go back every
     * few thousand ops of the first walk, and the ops walked so far */
    const ir_program *drop;
    size_t n_swept;
} enc;

/* Hands the filled part of the chunk to the sink and starts it again. */
static inline void flush(enc *e)
{
    size_t n = (size_t)(e->out - e->buf);
    e->out = e->buf;
    if (!n)
        return;
    if (!e->sink)
        abort();   /* the whole-output buffer overflowed: the walks disagree */
    e->handed += n;
    if (!e->sink_failed && !e->sink(e->sink_arg, e->buf, n))
        e->sink_failed = true;
}

static inline void put_raw(enc *e, const void *p, size_t n);

static inline uint8_t *varint_at(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static inline void put_varint(enc *e, uint64_t v)
{
    if (!e->writing) {
        e->count += pb_varint_len(v);
        return;
    }
    if (e->end - e->out >= 10) {
        e->out = varint_at(e->out, v);
        return;
    }
    /* Near the chunk's end: split across chunks like any bytes, so every
     * piece but the last fills the chunk. */
    uint8_t tmp[10];
    put_raw(e, tmp, (size_t)(varint_at(tmp, v) - tmp));
}

static inline void put_raw(enc *e, const void *p, size_t n)
{
    if (!e->writing) {
        e->count += n;
        return;
    }
    const uint8_t *from = p;
    while (n) {
        if (e->out == e->end)
            flush(e);
        size_t k = (size_t)(e->end - e->out);
        if (k > n)
            k = n;
        memcpy(e->out, from, k);
        e->out += k;
        from += k;
        n -= k;
    }
}

static inline void put_key(enc *e, unsigned field, unsigned wt)
{
    put_varint(e, ((uint64_t)field << 3) | wt);
}

static inline void field_varint(enc *e, unsigned field, uint64_t v)
{
    put_key(e, field, WT_VARINT);
    put_varint(e, v);
}

/* int32 and enum: a negative value is sign-extended to ten bytes. */
static inline void field_int32(enc *e, unsigned field, int32_t v)
{
    field_varint(e, field, (uint64_t)(int64_t)v);
}

static inline void field_bool(enc *e, unsigned field, bool v)
{
    field_varint(e, field, v ? 1 : 0);
}

static inline void field_float(enc *e, unsigned field, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
                     (uint8_t)(bits >> 24)};
    put_key(e, field, WT_32BIT);
    put_raw(e, le, 4);
}

static inline void field_double(enc *e, unsigned field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    put_key(e, field, WT_64BIT);
    put_raw(e, le, 8);
}

static inline void field_bytes(enc *e, unsigned field, const void *p, size_t n)
{
    put_key(e, field, WT_LEN);
    put_varint(e, n);
    put_raw(e, p, n);
}

/* A C string, as protobuf-c packs one: NULL as empty. */
static inline void field_str(enc *e, unsigned field, const char *s)
{
    field_bytes(e, field, s, s ? strlen(s) : 0);
}

/* An ir_bytes string: protobuf-c sees it as a C string, so it ends at the
 * first NUL. */
static inline void field_irstr(enc *e, unsigned field, ir_bytes s)
{
    field_bytes(e, field, s.data, s.data ? strnlen((const char *)s.data, s.len) : 0);
}

static inline void put_unknown(enc *e, ir_bytes b)
{
    put_raw(e, b.data, b.len);
}

/* A recorded message (block, var, op): its size comes from the array. */
static inline void msg_begin(enc *e, unsigned field)
{
    if (e->in_leaf)
        abort();   /* a recorded message inside a leaf: a bug here */
    if (e->writing) {
        put_key(e, field, WT_LEN);
        put_varint(e, e->sizes[e->next_size++]);
        return;
    }
    if (e->n_sizes == e->cap_sizes) {   /* only if count_recorded missed one */
        e->cap_sizes = e->cap_sizes ? 2 * e->cap_sizes : 1024;
        e->sizes = xrealloc_n(e->sizes, e->cap_sizes, sizeof *e->sizes);
    }
    e->saved_count[e->depth] = e->count;
    e->saved_index[e->depth] = e->n_sizes++;
    e->depth++;
    e->count = 0;
}

static inline void msg_end(enc *e, unsigned field)
{
    if (e->writing)
        return;
    e->depth--;
    size_t size = e->count;
    if (size > UINT32_MAX)
        e->too_large = true;
    e->sizes[e->saved_index[e->depth]] = (uint32_t)size;
    e->count = e->saved_count[e->depth] + pb_varint_len((uint64_t)field << 3) +
               pb_varint_len(size) + size;
}

/* A leaf message: BODY(e, item) writes its fields, and may hold other
 * leaves.  Its size is counted by running the body in sizing mode, in
 * both walks; then, when writing, the body runs again to write. */
typedef void leaf_body(enc *e, const void *item);

static inline void leaf_msg(enc *e, unsigned field, leaf_body *body, const void *item)
{
    bool writing = e->writing;
    size_t outer = e->count;
    e->writing = false;
    e->count = 0;
    e->in_leaf++;
    body(e, item);
    size_t size = e->count;
    e->count = outer;
    e->writing = writing;
    if (!writing) {
        e->count += pb_varint_len((uint64_t)field << 3) + pb_varint_len(size) + size;
    } else {
        put_key(e, field, WT_LEN);
        put_varint(e, size);
        body(e, item);
    }
    e->in_leaf--;
}

/* A sub-message the IR keeps as wire bytes (protobuf-c's own packing of it,
 * made when it was read, so packing it again gives the same bytes). */
static inline void field_raw_msg(enc *e, unsigned field, ir_bytes b)
{
    field_bytes(e, field, b.data, b.len);
}

/* ---- sorted orders ----------------------------------------------------- */

static inline void order_push(enc *e, const void *item)
{
    if (e->n_order == e->cap_order) {
        e->cap_order = e->cap_order ? 2 * e->cap_order : 1024;
        e->order = xrealloc_n(e->order, e->cap_order, sizeof *e->order);
    }
    e->order[e->n_order++] = item;
}

enum { SORT_STACK = 32 };    /* items an op's slots or attrs sort on the stack */

/* An op's slots or attrs in sorted order: pointers to items[0..n) in `by`
 * (room for n) sorted by cmp, or NULL when the items are already in
 * strictly increasing order (most slot lists): read them in place.  Both
 * walks sort again, and qsort sees the same pointers in the same order
 * with the same comparison as it did on the protobuf-c messages, so ties
 * come out as they did there and the walks agree.  Kept from the first
 * walk to the second (e->order, as before issue 33), these were 1 MB of
 * the bench MLP's transpile peak: 18 000 new ops' attrs. */
static inline const void **sorted(const void *items, size_t elem, size_t n,
                                  int (*cmp)(const void *, const void *), const void **by)
{
    size_t i = 1;
    for (; i < n; i++) {
        const void *a = (const char *)items + (i - 1) * elem, *b = (const char *)items + i * elem;
        if (cmp(&a, &b) >= 0)
            break;
    }
    if (i >= n)
        return NULL;
    for (i = 0; i < n; i++)
        by[i] = (const char *)items + i * elem;
    qsort(by, n, sizeof *by, cmp);
    return by;
}

#endif
