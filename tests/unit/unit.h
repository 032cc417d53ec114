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

/* Path to ../shared/testdata-real relative to the repo root (tests run from
 * the root), or NULL with a visible note when absent. */
static inline const char *unit_shared_dir(void)
{
    static const char *dir = "../shared/testdata-real";
    FILE *f = fopen("../shared/testdata-real/README.md", "r");
    if (!f) {
        printf("note: ../shared absent; tests on real programs skipped\n");
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
