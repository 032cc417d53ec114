/* tensors.c - parameter value sets (see tensors.h). */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "pmap.h"
#include "tensors.h"
#include "util.h"

struct ir_tensors {
    pmap by_name;           /* interned name -> ir_tensor*, lookup only */
};

static void tensor_free(ir_tensor *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_lod; i++)
        free(t->lod[i]);
    free(t->lod);
    free(t->lod_len);
    free(t->dims);
    free(t->rows);
    free(t->data);
    free(t);
}

ir_tensors *ir_tensors_new(void)
{
    return xcalloc(1, sizeof(ir_tensors));
}

void ir_tensors_free(ir_tensors *s)
{
    if (!s)
        return;
    PMAP_FOR(&s->by_name, slot)
        tensor_free(slot->val);
    pmap_free(&s->by_name);
    free(s);
}

ir_tensor *ir_tensors_find(const ir_tensors *s, const char *name)
{
    return pmap_get(&s->by_name, ir_intern(name));
}

ir_tensor *ir_tensors_put(ir_tensors *s, const char *name)
{
    ir_tensor *t = xcalloc(1, sizeof *t);
    t->name = ir_intern(name);
    tensor_free(pmap_get(&s->by_name, t->name));
    pmap_put(&s->by_name, t->name, t);
    return t;
}

size_t ir_tensors_count(const ir_tensors *s)
{
    return s->by_name.n;
}

static const struct { int dtype; size_t size; const char *name; } dtypes[] = {
    {0, 1, "BOOL"}, {1, 2, "INT16"}, {2, 4, "INT32"}, {3, 8, "INT64"},
    {4, 2, "FP16"}, {5, 4, "FP32"}, {6, 8, "FP64"}, {19, 8, "SIZE_T"},
    {20, 1, "UINT8"}, {21, 1, "INT8"}, {22, 2, "BF16"}, {23, 8, "COMPLEX64"},
    {24, 16, "COMPLEX128"}, {32, 1, "FP8_E4M3FN"}, {33, 1, "FP8_E5M2"},
    {37, 4, "UINT32"}, {38, 8, "UINT64"},
};

size_t ir_dtype_size(int dtype)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dtype == dtype)
            return dtypes[i].size;
    return 0;
}

const char *ir_dtype_name(int dtype)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dtype == dtype)
            return dtypes[i].name;
    return NULL;
}

int64_t ir_tensor_numel(const ir_tensor *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        n *= t->dims[i];
    return n;
}

bool ir_tensor_alloc(ir_tensor *t, int dtype, const int64_t *dims, size_t n_dims)
{
    size_t elem = ir_dtype_size(dtype);
    uint64_t numel = 1;
    for (size_t i = 0; i < n_dims; i++) {
        if (dims[i] < 0 || (dims[i] > 0 && numel > UINT64_MAX / (uint64_t)dims[i]))
            return false;
        numel *= (uint64_t)dims[i];
    }
    if (elem == 0 || numel > SIZE_MAX / elem)
        return false;
    free(t->dims);
    free(t->data);
    t->dtype = dtype;
    t->n_dims = n_dims;
    t->dims = xmalloc((n_dims ? n_dims : 1) * sizeof *t->dims);
    if (n_dims)
        memcpy(t->dims, dims, n_dims * sizeof *dims);
    t->nbytes = (size_t)numel * elem;
    t->data = xcalloc(t->nbytes ? t->nbytes : 1, 1);
    return true;
}

static uint32_t to_le32(uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap32(v);
#else
    return v;
#endif
}

float ir_tensor_get_f32(const ir_tensor *t, size_t i)
{
    uint32_t u;
    float f;
    memcpy(&u, t->data + 4 * i, 4);
    u = to_le32(u);
    memcpy(&f, &u, 4);
    return f;
}

void ir_tensor_set_f32(ir_tensor *t, size_t i, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u = to_le32(u);
    memcpy(t->data + 4 * i, &u, 4);
}
