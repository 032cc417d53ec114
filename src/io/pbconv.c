/* pbconv.c - copies between protobuf-c messages and the IR.
 *
 * Write order follows Paddle's C++ Flush: ops in order; a dirty op's slots
 * and attrs sorted by name (OpDesc::Flush); vars read from the input in
 * their order, then added vars sorted by name (BlockDesc::Flush). */
#include "pbconv.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"

/* ---- unknown fields <-> bytes ---------------------------------------- */

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        out[n++] = b | (v ? 0x80 : 0);
    } while (v);
    return n;
}

/* Stores each unknown field as tag + protobuf-c's data (value bytes,
 * including any length prefix), back to back. */
ir_bytes pbconv_unknown_to_bytes(ir_arena *a, const ProtobufCMessage *m)
{
    ir_bytes r = {NULL, 0};
    if (!m->n_unknown_fields)
        return r;
    size_t total = 0;
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        total += 10 + m->unknown_fields[i].len;
    uint8_t *buf = ir_arena_alloc(a, total + 1);
    size_t n = 0;
    for (unsigned i = 0; i < m->n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
        n += put_varint(buf + n, ((uint64_t)u->tag << 3) | u->wire_type);
        memcpy(buf + n, u->data, u->len);
        n += u->len;
    }
    r.data = buf;
    r.len = n;
    return r;
}

static bool get_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; *pos < len && shift < 64; shift += 7) {
        uint8_t b = p[(*pos)++];
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

void pbconv_bytes_to_unknown(ir_arena *a, ir_bytes b, ProtobufCMessage *m)
{
    if (!b.len)
        return;
    size_t count = 0, cap = 4;
    ProtobufCMessageUnknownField *f = ir_arena_alloc(a, cap * sizeof *f);
    size_t pos = 0;
    while (pos < b.len) {
        uint64_t key, v;
        if (!get_varint(b.data, b.len, &pos, &key))
            break;
        size_t start = pos;
        switch (key & 7) {
        case 0: if (!get_varint(b.data, b.len, &pos, &v)) pos = b.len; break;
        case 1: pos += 8; break;
        case 5: pos += 4; break;
        case 2:
            if (!get_varint(b.data, b.len, &pos, &v)) { pos = b.len; break; }
            pos += (size_t)v;
            break;
        default: pos = b.len; break;  /* groups never reach here */
        }
        if (pos > b.len)
            pos = b.len;
        if (count == cap) {
            ProtobufCMessageUnknownField *nf = ir_arena_alloc(a, 2 * cap * sizeof *nf);
            memcpy(nf, f, cap * sizeof *f);
            f = nf;
            cap *= 2;
        }
        f[count].tag = (uint32_t)(key >> 3);
        f[count].wire_type = (ProtobufCWireType)(key & 7);
        f[count].len = pos - start;
        f[count].data = (uint8_t *)(uintptr_t)(b.data + start);
        count++;
    }
    m->n_unknown_fields = (unsigned)count;
    m->unknown_fields = f;
}

/* protobuf-c accepts field number 0 in an overlong tag and numbers above
 * protobuf's maximum (2^29 - 1); protoc rejects both, and such fields could
 * not be written back faithfully, so they are refused here. */
bool pbconv_field_numbers_valid(const ProtobufCMessage *m)
{
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        if (m->unknown_fields[i].tag == 0 || m->unknown_fields[i].tag > 536870911u)
            return false;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *base = (const char *)m;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(const void *)(base + f->quantifier_offset);
            ProtobufCMessage *const *sub = *(ProtobufCMessage *const *const *)(const void *)(base + f->offset);
            for (size_t k = 0; k < n; k++)
                if (!pbconv_field_numbers_valid(sub[k]))
                    return false;
        } else {
            const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)(const void *)(base + f->offset);
            if (sub && !pbconv_field_numbers_valid(sub))
                return false;
        }
    }
    return true;
}
