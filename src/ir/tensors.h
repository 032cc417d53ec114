/* tensors.h - parameter values: what Paddle keeps in a Scope next to a
 * program.
 *
 * A tensor set maps var names to dense tensors (or SelectedRows).  The
 * layout in memory is Paddle's: row-major data in the file's byte order
 * (little-endian, as Paddle writes on x86 and ARM).  Passes that compute
 * with values (fuse_batch_norm) read and write through this header only;
 * the file formats live in src/io/params.c. */
#ifndef PDT_IR_TENSORS_H
#define PDT_IR_TENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ir_tensor {
    const char *name;       /* interned */
    int dtype;              /* VarType.Type, e.g. IR_FP32 */
    size_t n_dims;
    int64_t *dims;
    /* LoD: n_lod levels, level i holds lod_len[i] offsets. */
    size_t n_lod;
    size_t *lod_len;
    uint64_t **lod;
    /* SelectedRows records carry row ids and a height before the tensor. */
    bool selected_rows;
    size_t n_rows;
    int64_t *rows;
    int64_t height;
    size_t nbytes;
    uint8_t *data;
} ir_tensor;

typedef struct ir_tensors ir_tensors;

ir_tensors *ir_tensors_new(void);
void ir_tensors_free(ir_tensors *s);
/* NULL when absent. */
ir_tensor *ir_tensors_find(const ir_tensors *s, const char *name);
/* A fresh empty tensor named `name`, replacing any earlier one. */
ir_tensor *ir_tensors_put(ir_tensors *s, const char *name);
size_t ir_tensors_count(const ir_tensors *s);

/* Bytes per element of a dense dtype; 0 for types that are not element
 * types (LOD_TENSOR, RAW...) or unknown values. */
size_t ir_dtype_size(int dtype);
/* Upper-case VarType name ("FP32"), or NULL when unknown. */
const char *ir_dtype_name(int dtype);

/* Sets dims (copied) and allocates zeroed data for them; false when the
 * element count overflows or a dim is negative. */
bool ir_tensor_alloc(ir_tensor *t, int dtype, const int64_t *dims, size_t n_dims);
/* Product of dims (1 for rank 0). */
int64_t ir_tensor_numel(const ir_tensor *t);

/* float32 element access in the stored (little-endian) byte order. */
float ir_tensor_get_f32(const ir_tensor *t, size_t i);
void ir_tensor_set_f32(ir_tensor *t, size_t i, float v);

#endif
