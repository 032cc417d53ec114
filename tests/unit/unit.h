/* unit.h - shared helpers for the Check suites.  Each test_*.c defines
 * `Suite *make_suite(void)` and includes this header once, which supplies
 * main(): the suite runs with CK_FORK off under sanitizers/valgrind-friendly
 * settings and exits non-zero on any failure. */
#ifndef PDT_UNIT_H
#define PDT_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ir/ir.h"

Suite *make_suite(void);

/* A test that cannot run here (no ../shared, no protoc, ...) calls
 * unit_skip(REASON) and returns: a skip is never a pass.  The note names
 * the test; the line is appended to $PDT_SKIP_LOG (make check counts them
 * and says why at the end), and under CI=true the test fails instead. */
#define unit_skip(reason) unit_skip_at(__FILE__, __func__, (reason))
static inline void unit_skip_at(const char *file, const char *func, const char *reason)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    printf("note: %s %s skipped: %s\n", base, func, reason);
    const char *log = getenv("PDT_SKIP_LOG");
    FILE *f = log && *log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "unit %s %s: %s\n", base, func, reason);
        fclose(f);
    }
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true"))
        ck_abort_msg("%s %s: skipped under CI=true (a skip is never a pass): %s", base, func,
                     reason);
}

/* A length-counted string (an attribute's bytes) equals WANT whole: the
 * same length and the same bytes.  memcmp with the actual length alone
 * passes on an empty or truncated string. */
#define unit_assert_bytes_eq(data, len, want)                                                  \
    do {                                                                                       \
        const char *unit_w_ = (want);                                                          \
        size_t unit_l_ = (len), unit_wl_ = strlen(unit_w_);                                    \
        ck_assert_msg(unit_l_ == unit_wl_ && memcmp((data), unit_w_, unit_l_) == 0,            \
                      "got \"%.*s\" (%zu bytes), want \"%s\" (%zu bytes)", (int)unit_l_,       \
                      (const char *)(data), unit_l_, unit_w_, unit_wl_);                       \
    } while (0)

/* OP's attrs are exactly NAMES, in that order (the order a serialiser
 * writes them: the era step's hash-order tests). */
static inline void unit_assert_attr_order(const ir_op *op, const char *const *names, size_t n)
{
    const ir_attr *a = ir_op_attrs(op);
    ck_assert_uint_eq(op->n_attrs, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(a[i].name, names[i]);
}

/* qsort comparator of C strings (const char *elements). */
static inline int unit_by_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Path to ../shared/testdata-real relative to the repo root (tests run from
 * the root), or NULL after unit_skip when absent. */
#define unit_shared_dir() unit_shared_dir_at(__FILE__, __func__)
static inline const char *unit_shared_dir_at(const char *file, const char *func)
{
    static const char *dir = "../shared/testdata-real";
    FILE *f = fopen("../shared/testdata-real/README.md", "r");
    if (!f) {
        unit_skip_at(file, func, "../shared absent; this test reads the real programs");
        return NULL;
    }
    fclose(f);
    return dir;
}

int main(void)
{
    pdt_quiet = true;
    SRunner *sr = srunner_create(make_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    ir_intern_shutdown();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
