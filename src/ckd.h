/* ckd.h - checked integer arithmetic for every size, shape and count that
 * comes from an input file (dims, numel, byte totals, slice offsets,
 * allocation sizes).  Each helper stores the result in *r and returns true
 * when it overflowed, as C23's ckd_add / ckd_mul do; callers turn that into
 * an error naming the var or op.  GCC and clang builtins, so no cost on the
 * common path. */
#ifndef PDT_CKD_H
#define PDT_CKD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool ckd_add_i64(int64_t *r, int64_t a, int64_t b)
{
    return __builtin_add_overflow(a, b, r);
}

static inline bool ckd_sub_i64(int64_t *r, int64_t a, int64_t b)
{
    return __builtin_sub_overflow(a, b, r);
}

static inline bool ckd_mul_i64(int64_t *r, int64_t a, int64_t b)
{
    return __builtin_mul_overflow(a, b, r);
}

static inline bool ckd_add_size(size_t *r, size_t a, size_t b)
{
    return __builtin_add_overflow(a, b, r);
}

static inline bool ckd_mul_size(size_t *r, size_t a, size_t b)
{
    return __builtin_mul_overflow(a, b, r);
}

/* Product of dims with each -1 (unknown, the batch dim) counted as 1: the
 * largest numel the shape can have for a batch of one, which is what must
 * fit in int64 for Paddle's product(ddim) not to overflow.  Dims below -1
 * are the caller's to reject first.  Returns true on overflow. */
static inline bool ckd_dims_product(int64_t *r, const int64_t *dims, size_t n)
{
    int64_t p = 1;
    for (size_t i = 0; i < n; i++)
        if (ckd_mul_i64(&p, p, dims[i] < 0 ? 1 : dims[i]))
            return true;
    *r = p;
    return false;
}

#endif
