/* test_env.c - pdt_env's two lifetimes (src/ir/env.h, issue 28 point 4):
 * ending the env frees the caches in its slots and the names, and keeps
 * the settings and parts (main still prints through them after
 * ir_intern_shutdown). */
#include "unit.h"

#include "exec/exec.h"
#include "io/pdio.h"
#include "ir/env.h"
#include "ir/ir_internal.h"
#include "progress.h"

static int freed;

static void count_free(void *p)
{
    freed++;
    free(p);
}

START_TEST(ending_frees_slots_and_keeps_settings)
{
    freed = 0;
    int verbosity = pdt_verbosity;
    pdt_verbosity = 7;
    pdt_time_passes = true;
    pdio_set_max_input_size(12345);
    ex_set_max_memory(4096);
    void *part = pdt_env_part(PDT_ENV_IO_FAULT, 64, NULL);
    const char *name = ir_intern("env_test_name");
    ck_assert_ptr_nonnull(pdt_env_put(PDT_ENV_VERIFY_NOTED, malloc(8), count_free));

    ir_intern_shutdown();
    ck_assert_int_eq(freed, 1);
    ck_assert_ptr_null(pdt_env_get(PDT_ENV_VERIFY_NOTED));
    ck_assert(!ir_is_interned(name));
    ck_assert_int_eq(pdt_verbosity, 7);
    ck_assert(pdt_time_passes);
    ck_assert_uint_eq(pdio_max_input_size(), 12345);
    ck_assert_uint_eq(ex_max_memory(), 4096);
    ck_assert_ptr_eq(pdt_env_part_if_made(PDT_ENV_IO_FAULT), part);
    ck_assert_ptr_eq(pdt_env_part(PDT_ENV_IO_FAULT, 64, NULL), part);
    ck_assert(ir_is_interned(ir_intern("env_test_name")));

    pdt_verbosity = verbosity;
    pdt_time_passes = false;
    pdio_set_max_input_size(PDIO_DEFAULT_MAX_INPUT);
    ex_set_max_memory(0);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("env");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ending_frees_slots_and_keeps_settings);
    suite_add_tcase(s, tc);
    return s;
}
