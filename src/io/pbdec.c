/* pbdec.c - ProgramDesc wire bytes straight into the IR (issue 14 point 3).
 *
 * A fast reader for the files pdtrans meets: it builds the IR that
 * protobuf_c_message_unpack followed by pbconv_to_ir builds, without the
 * message tree, or declines.  It declines (returns NULL, nothing printed)
 * on anything whose handling by protobuf-c is more than plain reading: a
 * known field with another wire type or packed, a singular field given
 * twice (protobuf-c merges or overwrites), a missing required field, an
 * overlong key, a bool that is not one byte 0 or 1, a group, a field
 * number that pdio.c refuses, no blocks, or bytes that do not parse.
 * pdio_parse then runs the protobuf-c path, which accepts or refuses with
 * its message as before.  So what is refused, and how, is unchanged by
 * construction; the fast reader only has to be right about what it
 * accepts, which tests/unit/test_pbdec.c and the fuzz targets check
 * against protobuf-c.
 *
 * Every length is checked against the end of the enclosing message; the
 * nesting follows the schema (program > block > var > type > lod > tensor,
 * op > attr > scalar > complex), so no recursion follows the input.  Each
 * message is read twice, the first time to count its repeated fields and
 * check it, the second to fill arrays of exact size; a sub-message's
 * bytes are skipped by length in its parent's walks. */
#include "pbdec.h"

#include <stdlib.h>
#include <string.h>

#include "pbconv.h"
#include "../ir/ir_codec.h"
#include "../ir/util.h"

#define MAX_FIELD 536870911u   /* 2^29 - 1, protobuf's largest field number */

/* A varint of at most `max` bytes; false when cut off or longer. */
static bool get_varint(pbd_msg *m, int max, uint64_t *v, int *used)
{
    uint64_t r = 0;
    for (int i = 0; i < max && m->at + i < m->end; i++) {
        uint8_t c = m->at[i];
        r |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = r;
            *used = i + 1;
            m->at += i + 1;
            return true;
        }
    }
    return false;
}

bool pbd_next_slow(pbd_msg *m, pbd_field *f, bool *bad)
{
    *bad = false;
    if (m->at >= m->end)
        return false;
    *bad = true;
    f->key = m->at;
    uint64_t key, n;
    int used;
    /* A key of more than five bytes, or one with a needless 0x80 byte,
     * is read differently by protobuf-c (field 0, or a number cut to 32
     * bits): leave it to protobuf-c. */
    if (!get_varint(m, 5, &key, &used) || (used > 1 && m->at[-1] == 0))
        return false;
    f->num = (uint32_t)(key >> 3);
    f->wt = (unsigned)(key & 7);
    if (f->num == 0 || key >> 3 > MAX_FIELD)
        return false;
    switch (f->wt) {
    case WT_VARINT:
        if (!get_varint(m, 10, &f->v, &used))
            return false;
        f->vbytes = used;
        break;
    case WT_64BIT:
    case WT_32BIT: {
        size_t w = f->wt == WT_64BIT ? 8 : 4;
        if ((size_t)(m->end - m->at) < w)
            return false;
        f->v = 0;
        for (size_t i = 0; i < w; i++)
            f->v |= (uint64_t)m->at[i] << (8 * i);
        m->at += w;
        break;
    }
    case WT_LEN:
        if (!get_varint(m, 5, &n, &used) || n > 0x7fffffff ||
            n > (uint64_t)(m->end - m->at))
            return false;
        f->data = m->at;
        f->len = (size_t)n;
        m->at += n;
        break;
    default:
        return false;
    }
    *bad = false;
    return true;
}

bool pbd_int32(const pbd_field *f, int32_t *out)
{
    *out = (int32_t)(uint32_t)f->v;
    return f->wt == WT_VARINT;
}

bool pbd_int64(const pbd_field *f, int64_t *out)
{
    *out = (int64_t)f->v;
    return f->wt == WT_VARINT;
}

bool pbd_bool(const pbd_field *f, bool *out)
{
    /* protobuf-c reads any non-zero byte of a longer varint as true,
     * even past the 64 bits kept in v. */
    *out = f->v != 0;
    return f->wt == WT_VARINT && f->vbytes == 1 && f->v <= 1;
}

bool pbd_float(const pbd_field *f, float *out)
{
    uint32_t bits = (uint32_t)f->v;
    memcpy(out, &bits, sizeof bits);
    return f->wt == WT_32BIT;
}

bool pbd_double(const pbd_field *f, double *out)
{
    memcpy(out, &f->v, sizeof *out);
    return f->wt == WT_64BIT;
}

bool pbd_len(const pbd_field *f)
{
    return f->wt == WT_LEN;
}

const char *pbd_name(const pbd_field *f)
{
    return ir_intern_bytes((const char *)f->data, f->len);
}

ir_bytes pbd_string(ir_arena *a, const pbd_field *f)
{
    ir_bytes r;
    r.len = strnlen((const char *)f->data, f->len);
    r.data = ir_arena_dup(a, f->data, r.len);
    return r;
}

ir_bytes pbd_unknown(ir_arena *a, const uint8_t *data, size_t len, uint32_t known)
{
    ir_bytes r = {NULL, 0};
    size_t total = 0;
    pbd_field f;
    bool bad;
    for (int pass = 0; pass < 2; pass++) {
        uint8_t *out = pass ? ir_arena_alloc_raw(a, total + 1) : NULL;
        size_t n = 0;
        pbd_msg m = {data, data + len};
        while (pbd_next(&m, &f, &bad)) {
            if (f.num < 32 && (known >> f.num & 1))
                continue;
            size_t k = (size_t)(m.at - f.key);
            if (pass)
                memcpy(out + n, f.key, k);
            n += k;
        }
        if (!pass && !n)
            return r;
        total = n;
        if (pass) {
            out[n] = 0;
            r.data = out;
            r.len = n;
        }
    }
    return r;
}

/* ---- the program, blocks and vars ---------------------------------------- */

#define BIT(n) (1u << (n))

/* pbd_unknown when the caller's walk saw an unknown field, else none
 * without a walk (they are rare; issue 33 point 2). */
static ir_bytes unknown_if(bool seen, ir_arena *a, const uint8_t *data, size_t len,
                           uint32_t known)
{
    return seen ? pbd_unknown(a, data, len, known) : (ir_bytes){NULL, 0};
}

/* counted like protobuf-c's default allocator, released with free() */
static void *dec_alloc(void *data, size_t size)
{
    (void)data;
    return xmalloc(size);
}

static void dec_free(void *data, void *p)
{
    (void)data;
    free(p);
}

/* A sub-message the IR keeps as wire bytes (ReaderDesc, Tuple,
 * OpVersionMap): as pbconv_in.c keeps it, protobuf-c's packing of it. */
static bool opaque_in(ir_arena *a, const ProtobufCMessageDescriptor *d,
                      const pbd_field *f, ir_bytes *out)
{
    ProtobufCAllocator alloc = {dec_alloc, dec_free, NULL};
    ProtobufCMessage *msg = protobuf_c_message_unpack(d, &alloc, f->len, f->data);
    if (!msg)
        return false;
    bool ok = pbconv_field_numbers_valid(msg);
    if (ok) {
        size_t n = protobuf_c_message_get_packed_size(msg);
        uint8_t *buf = ir_arena_alloc(a, n + 1);
        protobuf_c_message_pack(msg, buf);
        out->data = buf;
        out->len = n;
    }
    protobuf_c_message_free_unpacked(msg, &alloc);
    return ok;
}

static bool tensor_in(ir_arena *a, ir_var *v, ir_var_rare *r, const pbd_field *t,
                      ir_tensor_slot slot)
{
    pbd_msg m = {t->data, t->data + t->len};
    pbd_field f;
    bool bad;
    uint32_t seen = 0;
    int32_t dtype = 0;
    size_t n_dims = 0;
    bool other = false;
    while (pbd_next(&m, &f, &bad)) {
        other |= f.num != 1 && f.num != 2;
        if (f.num == 1 && !(pbd_once(&seen, 1) && pbd_int32(&f, &dtype)))
            return false;
        if (f.num == 2 && f.wt != WT_VARINT)
            return false;
        n_dims += f.num == 2;
    }
    if (bad || !(seen & BIT(1)) || n_dims > UINT32_MAX)
        return false;
    v->tensor_slot = slot;
    v->dtype = dtype;
    v->n_dims = (uint32_t)n_dims;
    v->dims = n_dims ? ir_arena_alloc_raw(a, n_dims * sizeof *v->dims) : NULL;
    size_t k = 0;
    m.at = t->data;
    while (k < n_dims && pbd_next(&m, &f, &bad))
        if (f.num == 2)
            pbd_int64(&f, &v->dims[k++]);
    r->tensor_unknown = unknown_if(other, a, t->data, t->len, BIT(1) | BIT(2));
    return true;
}

/* LoDTensorDesc and LoDTensorArrayDesc share one layout. */
static bool lod_in(ir_arena *a, ir_var *v, ir_var_rare *r, const pbd_field *l,
                   ir_tensor_slot slot)
{
    pbd_msg m = {l->data, l->data + l->len};
    pbd_field f, tensor = {0};
    bool bad;
    uint32_t seen = 0;
    int32_t level = 0;
    bool other = false;
    while (pbd_next(&m, &f, &bad)) {
        other |= f.num != 1 && f.num != 2;
        if (f.num == 1 && !(pbd_once(&seen, 1) && pbd_len(&f)))
            return false;
        if (f.num == 1)
            tensor = f;
        if (f.num == 2 && !(pbd_once(&seen, 2) && pbd_int32(&f, &level)))
            return false;
    }
    if (bad || !(seen & BIT(1)) || !tensor_in(a, v, r, &tensor, slot))
        return false;
    v->has_lod_level = seen & BIT(2);
    v->lod_level = level;
    r->lod_unknown = unknown_if(other, a, l->data, l->len, BIT(1) | BIT(2));
    return true;
}

/* VarType field numbers holding the tensor part, and the slot of each. */
static ir_tensor_slot tensor_slot_of(uint32_t num)
{
    switch (num) {
    case 2: return IR_TD_SELECTED_ROWS;
    case 3: return IR_TD_LOD_TENSOR;
    case 4: return IR_TD_TENSOR_ARRAY;
    case 8: return IR_TD_STRING;
    case 9: return IR_TD_STRINGS;
    case 10: return IR_TD_VOCAB;
    case 11: return IR_TD_SPARSE_COO;
    case 12: return IR_TD_SPARSE_CSR;
    default: return IR_TD_NONE;
    }
}

#define VARTYPE_KNOWN (BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(7) | BIT(8) | \
                       BIT(9) | BIT(10) | BIT(11) | BIT(12))

static bool vartype_in(ir_arena *a, ir_var *v, ir_var_rare *r, const pbd_field *t)
{
    pbd_msg m = {t->data, t->data + t->len};
    pbd_field f, tensor = {0}, reader = {0}, tuple = {0};
    bool bad;
    uint32_t seen = 0;
    int32_t type = 0;
    ir_tensor_slot slot = IR_TD_NONE;
    bool other = false;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num >= 32 || !(VARTYPE_KNOWN >> f.num & 1)) {
            other = true;
            continue;
        }
        if (!pbd_once(&seen, f.num))
            return false;
        if (f.num == 1) {
            if (!pbd_int32(&f, &type))
                return false;
        } else if (!pbd_len(&f)) {
            return false;
        } else if (f.num == 5)
            reader = f;
        else if (f.num == 7)
            tuple = f;
        else if (slot != IR_TD_NONE)
            return false;  /* two tensor parts: pbconv_in.c keeps one */
        else {
            slot = tensor_slot_of(f.num);
            tensor = f;
        }
    }
    if (bad || !(seen & BIT(1)))
        return false;
    v->type = type;
    if (slot == IR_TD_LOD_TENSOR || slot == IR_TD_TENSOR_ARRAY) {
        if (!lod_in(a, v, r, &tensor, slot))
            return false;
    } else if (slot != IR_TD_NONE && !tensor_in(a, v, r, &tensor, slot)) {
        return false;
    }
    if ((seen & BIT(5)) &&
        !opaque_in(a, &paddle__framework__proto__var_type__reader_desc__descriptor, &reader,
                   &r->reader_raw))
        return false;
    if ((seen & BIT(7)) &&
        !opaque_in(a, &paddle__framework__proto__var_type__tuple__descriptor, &tuple,
                   &r->tuple_raw))
        return false;
    r->has_reader = seen & BIT(5);
    r->has_tuple = seen & BIT(7);
    r->type_unknown = unknown_if(other, a, t->data, t->len, VARTYPE_KNOWN);
    return true;
}

/* VarDesc: name 1, type 2, four bools 3-6, attrs 7. */
static bool var_in(ir_block *b, const pbd_field *d)
{
    ir_arena *a = b->program->arena;
    pbd_msg m = {d->data, d->data + d->len};
    pbd_field f, name = {0}, type = {0};
    bool bad, flag[7] = {false};
    uint32_t seen = 0;
    size_t n_attrs = 0;
    bool other = false;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num == 0 || f.num > 7) {
            other = true;
            continue;
        }
        if (f.num != 7 && !pbd_once(&seen, f.num))
            return false;
        if (f.num <= 2 || f.num == 7) {
            if (!pbd_len(&f))
                return false;
            if (f.num == 1)
                name = f;
            else if (f.num == 2)
                type = f;
            n_attrs += f.num == 7;
        } else if (!pbd_bool(&f, &flag[f.num])) {
            return false;
        }
    }
    if (bad || (seen & (BIT(1) | BIT(2))) != (BIT(1) | BIT(2)))
        return false;
    ir_var *v = ir_block_add_var_raw(b, pbd_name(&name));
    ir_var_rare r = {0};
    v->from_input = true;
    if (!vartype_in(a, v, &r, &type))
        return false;
    v->has_persistable = seen & BIT(3); v->persistable = flag[3];
    v->has_need_check_feed = seen & BIT(4); v->need_check_feed = flag[4];
    v->has_is_parameter = seen & BIT(5); v->is_parameter = flag[5];
    v->has_stop_gradient = seen & BIT(6); v->stop_gradient = flag[6];
    r.n_var_attrs = n_attrs;
    r.var_attrs = n_attrs ? ir_arena_alloc(a, n_attrs * sizeof *r.var_attrs) : NULL;
    size_t k = 0;
    m.at = d->data;
    while (k < n_attrs && pbd_next(&m, &f, &bad))
        if (f.num == 7 && !pbd_attr(a, &r.var_attrs[k++], f.data, f.len, true))
            return false;
    r.unknown = unknown_if(other, a, d->data, d->len, 0xfe);
    ir_var_set_rare(a, v, &r);
    return true;
}

/* BlockDesc: idx 1, parent_idx 2, vars 3, ops 4, forward_block_idx 5. */
static bool block_scan(const pbd_field *d, int32_t num[6], uint32_t *seen,
                       size_t *n_vars, size_t *n_ops)
{
    pbd_msg m = {d->data, d->data + d->len};
    pbd_field f;
    bool bad;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num == 3 || f.num == 4) {
            if (!pbd_len(&f))
                return false;
            *(f.num == 3 ? n_vars : n_ops) += 1;
        } else if (f.num >= 1 && f.num <= 5 &&
                   !(pbd_once(seen, f.num) && pbd_int32(&f, &num[f.num]))) {
            return false;
        }
    }
    return !bad && (*seen & (BIT(1) | BIT(2))) == (BIT(1) | BIT(2));
}

/* Byte ranges of a file read in place that nothing points into once it is
 * decoded: its runs of VarDescs (vars are decoded whole, and only ops keep
 * their bytes).  Their pages go back to the system (release_runs). */
typedef struct {
    const uint8_t *lo, *hi;
} var_run;

/* runs: a GArray of var_run; a VarDesc right after the last run extends it. */
static void run_add(GArray *runs, const uint8_t *lo, const uint8_t *hi)
{
    var_run *last = runs->len ? &g_array_index(runs, var_run, runs->len - 1) : NULL;
    if (last && last->hi == lo) {
        last->hi = hi;
        return;
    }
    var_run r = {lo, hi};
    g_array_append_val(runs, r);
}

/* The whole pages inside each run: read again they would be zeros, and
 * nothing reads them.  The vars of the bench programs are a fifth of the
 * input (6 MB at 100k ops), kept to the end before.  MADV_DONTNEED, not
 * MADV_FREE: the pages leave the resident set now, not under pressure. */
static void release_runs(const GArray *runs)
{
    for (guint i = 0; i < runs->len; i++) {
        const var_run *r = &g_array_index(runs, var_run, i);
        pdt_pages_release((void *)(uintptr_t)r->lo, (void *)(uintptr_t)r->hi);
    }
}

enum { PREFETCH_AHEAD = 2 };    /* fields: an op decodes in a microsecond */

/* runs: where the block's VarDescs lie, when its bytes are read in place. */
static bool block_in(ir_program *p, const pbd_field *d, GArray *runs)
{
    int32_t num[6] = {0};
    uint32_t seen = 0;
    size_t n_vars = 0, n_ops = 0;
    if (!block_scan(d, num, &seen, &n_vars, &n_ops))
        return false;
    ir_block *b = ir_program_add_block(p, num[2]);
    b->idx = num[1];
    b->has_forward_block_idx = seen & BIT(5);
    b->forward_block_idx = num[5];
    ir_block_reserve_vars(b, n_vars);
    ir_intern_reserve(n_vars);
    ir_op **ops = n_ops ? xmalloc_n(n_ops, sizeof *ops) : NULL;
    size_t k = 0;
    pbd_msg m = {d->data, d->data + d->len}, ahead = m;
    pbd_field f, next;
    bool bad, ok = true, more = true, ahead_bad, other = false;
    for (int i = 0; i < PREFETCH_AHEAD && more; i++)
        if ((more = pbd_next(&ahead, &next, &ahead_bad)))
            pbd_prefetch_names(&next);
    while (ok && pbd_next(&m, &f, &bad)) {
        if (more && (more = pbd_next(&ahead, &next, &ahead_bad)))
            pbd_prefetch_names(&next);
        if (f.num == 3) {
            ok = var_in(b, &f);
            if (runs)
                run_add(runs, f.key, f.data + f.len);
        } else if (f.num == 4) {
            ok = (ops[k++] = pbd_op(p, f.data, f.len, runs != NULL)) != NULL;
        } else if (f.num > 5) {
            other = true;
        }
    }
    if (ok)
        ir_block_set_ops(b, ops, n_ops);
    free(ops);
    b->unknown = unknown_if(other, p->arena, d->data, d->len, 0x3e);
    return ok;
}

static bool version_in(ir_program *p, const pbd_field *d)
{
    pbd_msg m = {d->data, d->data + d->len};
    pbd_field f;
    bool bad;
    uint32_t seen = 0;
    while (pbd_next(&m, &f, &bad))
        if (f.num == 1 && !(pbd_once(&seen, 1) && pbd_int64(&f, &p->version)))
            return false;
    if (bad)
        return false;
    p->has_version = true;
    p->version_has_value = seen & BIT(1);
    p->version_unknown = pbd_unknown(p->arena, d->data, d->len, BIT(1));
    return true;
}

/* ProgramDesc: blocks 1, version 4, op_version_map 5 (2 and 3 are retired:
 * unknown fields). */
static bool program_scan(const uint8_t *data, size_t len)
{
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad;
    uint32_t seen = 0;
    size_t n_blocks = 0;
    while (pbd_next(&m, &f, &bad)) {
        if ((f.num == 1 || f.num == 4 || f.num == 5) && !pbd_len(&f))
            return false;
        if ((f.num == 4 || f.num == 5) && !pbd_once(&seen, f.num))
            return false;
        n_blocks += f.num == 1;
    }
    return !bad && n_blocks;
}

static ir_program *decode(const uint8_t *data, size_t len, bool in_place)
{
    if (!program_scan(data, len))
        return NULL;
    ir_program *p = ir_program_new();
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad, ok = true;
    GArray *runs = in_place ? g_array_new(FALSE, FALSE, sizeof(var_run)) : NULL;
    while (ok && pbd_next(&m, &f, &bad)) {
        if (f.num == 1)
            ok = block_in(p, &f, runs);
        else if (f.num == 4)
            ok = version_in(p, &f);
        else if (f.num == 5)
            ok = opaque_in(p->arena, &paddle__framework__proto__op_version_map__descriptor, &f,
                           &p->op_version_map);
        p->has_op_version_map |= ok && f.num == 5;
    }
    if (!ok) {
        if (runs)
            g_array_free(runs, TRUE);
        ir_program_free(p);
        return NULL;
    }
    p->unknown = pbd_unknown(p->arena, data, len, BIT(1) | BIT(4) | BIT(5));
    /* Only now: a refused file goes to protobuf-c whole. */
    if (runs) {
        release_runs(runs);
        g_array_free(runs, TRUE);
    }
    return p;
}

ir_program *pbconv_decode(const uint8_t *data, size_t len)
{
    return decode(data, len, false);
}

ir_program *pbconv_decode_owned(uint8_t *data, size_t len)
{
    ir_program *p = decode(data, len, true);
    if (p)
        p->input_bytes = data;
    return p;
}
