/* test_sym_geo.c - the terms verify job's GEO model builds (src/sym/geo.c):
 * no new axiom, but the communicator's delta and its row restriction must
 * meet the existing ones as geo_run.c relies on: a delta's slices put
 * together are the delta (so a param's pull reassembles what was pushed),
 * a sparse delta's ids are a set, and one trainer's delta is unscaled
 * (Paddle's SCAL by 1/float(1) is exact). */
#include <string.h>

#include "sym/geo.h"
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

static sym_term *delta_of(size_t trainers, sym_term *param, sym_term *old)
{
    sym_job j;
    memset(&j, 0, sizeof j);
    j.c.st = st;
    j.n_tr = trainers;
    return sym_geo_delta(&j, param, old);
}

START_TEST(delta_is_scaled_difference)
{
    sym_term *p = sym_leaf(st, "p", 10), *o = sym_leaf(st, "o", 10);
    sym_term *neg = sym_scale(st, o, -1, 0, true), *d[2] = {p, neg};
    sym_term *diff = sym_sum(st, d, 2);
    /* one trainer: the scale by 1 is the term */
    ck_assert_ptr_eq(delta_of(1, p, o), diff);
    /* two: float(1/2), the job's float32 factor */
    ck_assert_ptr_eq(delta_of(2, p, o), sym_scale(st, diff, 0.5, 0, true));
    /* three: float(1/3) rounded to float32, not the double */
    sym_term *d3 = delta_of(3, p, o);
    ck_assert(d3->kind == SYM_SCALE && d3->scale == (double)(float)(1.0 / 3.0));
    ck_assert_int_eq(d3->rows, 10);
}
END_TEST

START_TEST(sliced_delta_put_together_is_the_delta)
{
    sym_term *d = delta_of(2, sym_leaf(st, "p", 10), sym_leaf(st, "o", 10));
    sym_term *parts[2] = {sym_slice(st, d, 0, 4), sym_slice(st, d, 4, 6)};
    ck_assert_ptr_eq(sym_concat(st, parts, 2), d);
    /* and a pserver slice's sum of two deltas, put together, is the sum */
    sym_term *e = delta_of(2, sym_leaf(st, "q", 10), sym_leaf(st, "o", 10));
    sym_term *a[2] = {sym_slice(st, d, 0, 4), sym_slice(st, e, 0, 4)};
    sym_term *b[2] = {sym_slice(st, d, 4, 6), sym_slice(st, e, 4, 6)};
    sym_term *s[2] = {sym_sum(st, a, 2), sym_sum(st, b, 2)}, *w[2] = {d, e};
    ck_assert_ptr_eq(sym_concat(st, s, 2), sym_sum(st, w, 2));
}
END_TEST

START_TEST(sparse_rows_take_a_set_of_ids)
{
    sym_term *d = delta_of(2, sym_leaf(st, "w", 8), sym_leaf(st, "wo", 8));
    sym_term *x = sym_leaf(st, "x@t0.s1", 3), *y = sym_leaf(st, "y@t0.s1", 3);
    GPtrArray *a = g_ptr_array_new(), *b = g_ptr_array_new();
    sym_geo_add_ids(a, x);
    sym_geo_add_ids(a, y);
    sym_geo_add_ids(b, y);
    sym_geo_add_ids(b, x);
    sym_geo_add_ids(b, y);      /* the GEO send may list an ids var twice */
    ck_assert_int_eq(b->len, 2);
    sym_term *ra = sym_geo_rows(st, d, a);
    ck_assert_ptr_eq(ra, sym_geo_rows(st, d, b));
    ck_assert_int_eq(ra->rows, 8);
    sym_term *parts[2] = {sym_slice(st, ra, 0, 4), sym_slice(st, ra, 4, 4)};
    ck_assert_ptr_eq(sym_concat(st, parts, 2), ra);
    g_ptr_array_set_size(b, 1);
    ck_assert_ptr_ne(ra, sym_geo_rows(st, d, b));
    g_ptr_array_free(a, TRUE);
    g_ptr_array_free(b, TRUE);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym_geo");
    TCase *tc = tcase_create("geo");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, delta_is_scaled_difference);
    tcase_add_test(tc, sliced_delta_put_together_is_the_delta);
    tcase_add_test(tc, sparse_rows_take_a_set_of_ids);
    suite_add_tcase(s, tc);
    return s;
}
