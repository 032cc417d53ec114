/* params.c - Paddle's LoDTensor / SelectedRows records and the two file
 * layouts (see params.h and README.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../ir/util.h"
#include "framework.pb-c.h"
#include "params.h"

typedef Paddle__Framework__Proto__VarType__TensorDesc tensor_desc;

/* A bounds-checked cursor over one file; every read names what it wanted. */
typedef struct {
    const char *file, *var;
    const uint8_t *data;
    size_t len, off;
    const ir_var *v;    /* what the program declares */
} cursor;

static bool need(cursor *c, uint64_t n, const char *what)
{
    if (n <= c->len - c->off)
        return true;
    pdt_error("%s: var '%s': truncated record: %s needs %llu bytes at offset %zu, "
              "%zu left", c->file, c->var, what, (unsigned long long)n, c->off,
              c->len - c->off);
    return false;
}

static uint64_t load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool read_u32(cursor *c, const char *what, uint32_t *v)
{
    if (!need(c, 4, what))
        return false;
    *v = (uint32_t)load_le(c->data + c->off, 4);
    c->off += 4;
    return true;
}

static bool read_u64(cursor *c, const char *what, uint64_t *v)
{
    if (!need(c, 8, what))
        return false;
    *v = load_le(c->data + c->off, 8);
    c->off += 8;
    return true;
}

static bool read_version(cursor *c, const char *what)
{
    uint32_t v;
    if (!read_u32(c, what, &v))
        return false;
    if (v != 0) {
        pdt_error("%s: var '%s': %s is %u at offset %zu; Paddle writes and accepts "
                  "only 0", c->file, c->var, what, v, c->off - 4);
        return false;
    }
    return true;
}

static bool read_lod(cursor *c, ir_tensor *t)
{
    uint64_t levels;
    if (!read_u64(c, "the LoD level count", &levels))
        return false;
    if (!need(c, levels <= UINT64_MAX / 8 ? levels * 8 : UINT64_MAX, "the LoD levels"))
        return false;
    t->n_lod = (size_t)levels;
    t->lod_len = xcalloc(levels ? levels : 1, sizeof *t->lod_len);
    t->lod = xcalloc(levels ? levels : 1, sizeof *t->lod);
    for (size_t i = 0; i < t->n_lod; i++) {
        uint64_t size;
        if (!read_u64(c, "a LoD level's byte size", &size))
            return false;
        if (size % 8) {
            pdt_error("%s: var '%s': LoD level %zu has %llu bytes, not a multiple of 8",
                      c->file, c->var, i, (unsigned long long)size);
            return false;
        }
        if (!need(c, size, "a LoD level"))
            return false;
        t->lod_len[i] = (size_t)(size / 8);
        t->lod[i] = xmalloc(size ? size : 1);
        for (size_t k = 0; k < t->lod_len[i]; k++)
            t->lod[i][k] = load_le(c->data + c->off + 8 * k, 8);
        c->off += (size_t)size;
    }
    return true;
}

static bool check_desc(cursor *c, const tensor_desc *d, uint64_t *nbytes)
{
    size_t elem = ir_dtype_size(d->data_type);
    if (!elem) {
        pdt_error("%s: var '%s': unknown data type %d in the tensor desc", c->file,
                  c->var, (int)d->data_type);
        return false;
    }
    uint64_t n = elem;
    for (size_t i = 0; i < d->n_dims; i++) {
        if (d->dims[i] < 0) {
            pdt_error("%s: var '%s': dim %zu is %lld in the tensor desc", c->file,
                      c->var, i, (long long)d->dims[i]);
            return false;
        }
        if (d->dims[i] && n > UINT64_MAX / (uint64_t)d->dims[i]) {
            pdt_error("%s: var '%s': the tensor desc's dims overflow", c->file, c->var);
            return false;
        }
        n *= (uint64_t)d->dims[i];
    }
    *nbytes = n;
    return true;
}

static void format_dims(char *buf, size_t n, const int64_t *dims, size_t rank)
{
    size_t used = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? ", " : "",
                                 (long long)dims[i]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

/* The record must be what the program declares: the fold reads it as such.
 * Asked of the tensor desc, before the data is read or copied: a record
 * whose header is wrong costs no more than its header. */
static bool matches_var(cursor *c, int dtype, const int64_t *dims, size_t n_dims, bool rows)
{
    const ir_var *v = c->v;
    bool same = dtype == v->dtype;
    if (same && !rows && v->n_dims) {
        same = n_dims == v->n_dims;
        for (size_t i = 0; same && i < n_dims; i++)
            same = v->dims[i] < 0 || v->dims[i] == dims[i];
    }
    if (same)
        return true;
    char have[256], want[256];
    format_dims(have, sizeof have, dims, n_dims);
    format_dims(want, sizeof want, v->dims, v->n_dims);
    const char *hn = ir_dtype_name(dtype), *wn = ir_dtype_name(v->dtype);
    pdt_error("%s: var '%s': the record holds %s %s but the program declares %s %s",
              c->file, c->var, hn ? hn : "?", have, wn ? wn : "?", want);
    return false;
}

/* Fields 4-7 of the record: version, desc length, TensorDesc, data. */
static bool read_tensor(cursor *c, ir_tensor *t)
{
    uint32_t desc_len;
    if (!read_version(c, "the tensor version") ||
        !read_u32(c, "the tensor desc length", &desc_len))
        return false;
    if ((int32_t)desc_len < 0) {
        pdt_error("%s: var '%s': negative tensor desc length %d", c->file, c->var,
                  (int32_t)desc_len);
        return false;
    }
    if (!need(c, desc_len, "the tensor desc"))
        return false;
    tensor_desc *d = (tensor_desc *)protobuf_c_message_unpack(
        &paddle__framework__proto__var_type__tensor_desc__descriptor, NULL, desc_len,
        c->data + c->off);
    if (!d) {
        pdt_error("%s: var '%s': the tensor desc at offset %zu is not a valid "
                  "VarType.TensorDesc", c->file, c->var, c->off);
        return false;
    }
    c->off += desc_len;
    uint64_t nbytes = 0;
    bool ok = check_desc(c, d, &nbytes) &&
              matches_var(c, d->data_type, d->dims, d->n_dims, t->selected_rows) &&
              need(c, nbytes, "the tensor data");
    if (ok) {
        t->dtype = d->data_type;
        t->n_dims = d->n_dims;
        t->dims = xmalloc((d->n_dims ? d->n_dims : 1) * sizeof *t->dims);
        if (d->n_dims)
            memcpy(t->dims, d->dims, d->n_dims * sizeof *t->dims);
        t->nbytes = (size_t)nbytes;
        t->data = xmalloc(nbytes ? nbytes : 1);
        if (nbytes)
            memcpy(t->data, c->data + c->off, (size_t)nbytes);
        c->off += (size_t)nbytes;
    }
    protobuf_c_message_free_unpacked(&d->base, NULL);
    return ok;
}

static bool read_selected_rows(cursor *c, ir_tensor *t)
{
    uint64_t n_rows, height;
    if (!read_version(c, "the SelectedRows version") ||
        !read_u64(c, "the row count", &n_rows))
        return false;
    if (!need(c, n_rows <= UINT64_MAX / 8 ? n_rows * 8 : UINT64_MAX, "the row ids"))
        return false;
    t->selected_rows = true;
    t->n_rows = (size_t)n_rows;
    t->rows = xmalloc(n_rows ? n_rows * 8 : 1);
    for (size_t i = 0; i < t->n_rows; i++)
        t->rows[i] = (int64_t)load_le(c->data + c->off + 8 * i, 8);
    c->off += t->n_rows * 8;
    if (!read_u64(c, "the height", &height))
        return false;
    t->height = (int64_t)height;
    return read_tensor(c, t);
}

int params_decode_record(const char *file, const ir_var *v, const uint8_t *data,
                         size_t len, size_t *off, ir_tensor *t)
{
    cursor c = {file, v->name, data, len, *off, v};
    bool ok;
    if (v->type != IR_LOD_TENSOR && v->type != IR_SELECTED_ROWS) {
        pdt_error("%s: var '%s': its type (%d) has no tensor record pdtrans reads (LoD "
                  "tensors and SelectedRows only)", file, v->name, v->type);
        ok = false;
    } else if (v->type == IR_SELECTED_ROWS) {
        ok = read_selected_rows(&c, t);
    } else {
        ok = read_version(&c, "the LoDTensor version") && read_lod(&c, t) &&
             read_tensor(&c, t);
    }
    *off = c.off;
    return ok ? PDT_OK : PDT_EBADINPUT;
}

static void put_le(GByteArray *out, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    g_byte_array_append(out, b, (guint)n);
}

/* GByteArray lengths are guint; tensors may be larger. */
static void append_bytes(GByteArray *out, const uint8_t *p, size_t n)
{
    while (n) {
        guint step = n > (1u << 30) ? (1u << 30) : (guint)n;
        g_byte_array_append(out, p, step);
        p += step;
        n -= step;
    }
}

static void encode_tensor(const ir_tensor *t, GByteArray *out)
{
    tensor_desc d = PADDLE__FRAMEWORK__PROTO__VAR_TYPE__TENSOR_DESC__INIT;
    d.data_type = t->dtype;
    d.n_dims = t->n_dims;
    d.dims = t->dims;
    size_t n = protobuf_c_message_get_packed_size(&d.base);
    uint8_t *buf = xmalloc(n ? n : 1);
    protobuf_c_message_pack(&d.base, buf);
    put_le(out, 0, 4);
    put_le(out, (uint32_t)n, 4);
    g_byte_array_append(out, buf, (guint)n);
    free(buf);
    append_bytes(out, t->data, t->nbytes);
}

void params_encode_record(const ir_tensor *t, GByteArray *out)
{
    put_le(out, 0, 4);
    if (t->selected_rows) {
        put_le(out, t->n_rows, 8);
        for (size_t i = 0; i < t->n_rows; i++)
            put_le(out, (uint64_t)t->rows[i], 8);
        put_le(out, (uint64_t)t->height, 8);
    } else {
        put_le(out, t->n_lod, 8);
        for (size_t i = 0; i < t->n_lod; i++) {
            put_le(out, (uint64_t)t->lod_len[i] * 8, 8);
            for (size_t k = 0; k < t->lod_len[i]; k++)
                put_le(out, t->lod[i][k], 8);
        }
    }
    encode_tensor(t, out);
}
