/* test_sym_remote.c - remote prefetch in verify job
 * (src/sym/remote_prefetch.c): the slices a distributed_lookup_table
 * fetches, put together by its height_sections, are the param exactly
 * when each section is its slice's rows and the slices come in row order;
 * the pservers' row-wise updates of the slices put together are the
 * update of the whole param. */
#include "sym/remote_prefetch.h"
#include "unit.h"

static sym_store *st;

static void setup(void)
{
    st = sym_store_new();
}

static void teardown(void)
{
    sym_store_free(st);
}

static sym_term *sgd(sym_term *p, sym_term *g, sym_term *lr)
{
    sym_term *args[] = {g, lr, p};
    const char *slots[] = {ir_intern("Grad"), ir_intern("LearningRate"), ir_intern("Param")};
    sym_term *app = sym_app(st, ir_intern("sgd"), ir_intern("Grad:1,LearningRate:1,Param:1 | "),
                            args, slots, 3, -1);
    return sym_proj(st, app, "ParamOut", 0, p->rows);
}

START_TEST(slices_by_their_sections_are_the_param)
{
    sym_term *w = sym_leaf(st, "w", 1000);
    sym_term *parts[] = {sym_slice(st, w, 0, 334), sym_slice(st, w, 334, 334),
                         sym_slice(st, w, 668, 332)};
    int64_t rows[] = {334, 334, 332}, heights[] = {334, 334, 332};
    ck_assert_ptr_eq(sym_sections(st, parts, rows, heights, 3), w);
    ck_assert_ptr_eq(sym_sections(st, parts, rows, heights, 1), parts[0]);
    /* a section that is not its slice's rows: ids would read other rows */
    int64_t wrong[] = {400, 268, 332}, unknown[] = {-1, 334, 332};
    ck_assert_ptr_null(sym_sections(st, parts, rows, wrong, 3));
    ck_assert_ptr_null(sym_sections(st, parts, unknown, heights, 3));
    /* slices out of row order (endpoints swapped with their sections) are
     * another table */
    sym_term *swapped[] = {parts[1], parts[0], parts[2]};
    ck_assert_ptr_ne(sym_sections(st, swapped, rows, heights, 3), w);
}
END_TEST

START_TEST(slice_updates_put_together_are_the_update)
{
    sym_term *w = sym_leaf(st, "w", 1000), *g = sym_leaf(st, "g", 1000);
    sym_term *lr = sym_leaf(st, "lr", 1);
    sym_term *parts[] = {sgd(sym_slice(st, w, 0, 500), sym_slice(st, g, 0, 500), lr),
                         sgd(sym_slice(st, w, 500, 500), sym_slice(st, g, 500, 500), lr)};
    int64_t rows[] = {500, 500};
    ck_assert_ptr_eq(sym_sections(st, parts, rows, rows, 2), sgd(w, g, lr));
    /* a slice updated with another grad is not */
    parts[1] = sgd(sym_slice(st, w, 500, 500), sym_leaf(st, "other", 500), lr);
    ck_assert_ptr_ne(sym_sections(st, parts, rows, rows, 2), sgd(w, g, lr));
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym_remote");
    TCase *tc = tcase_create("sections");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, slices_by_their_sections_are_the_param);
    tcase_add_test(tc, slice_updates_put_together_are_the_update);
    suite_add_tcase(s, tc);
    return s;
}
