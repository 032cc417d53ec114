/* test_sym_table.c - the distributed table's axioms in verify job
 * (src/sym/table.c): shards of one table put together are the table, a
 * shard of a put-together is its part, and the pservers' row-wise updates
 * and grad sums pull out of the put-together; a swapped pair of shards is
 * another term. */
#include "sym/table.h"
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

static sym_term *leaf(const char *n)
{
    return sym_leaf(st, n, -1);
}

static sym_term *sgd(sym_term *p, sym_term *g, sym_term *lr)
{
    sym_term *args[] = {g, lr, p};
    const char *slots[] = {ir_intern("Grad"), ir_intern("LearningRate"), ir_intern("Param")};
    sym_term *app = sym_app(st, ir_intern("sgd"), ir_intern("Grad:1,LearningRate:1,Param:1 | "),
                            args, slots, 3, -1);
    return sym_proj(st, app, "ParamOut", 0, -1);
}

START_TEST(shards_put_together_are_the_table)
{
    sym_term *w = leaf("w");
    sym_term *p3[] = {sym_shard(st, w, 0, 3), sym_shard(st, w, 1, 3), sym_shard(st, w, 2, 3)};
    ck_assert_ptr_eq(sym_modcat(st, p3, 3), w);
    /* in the wrong order, or of two sizes, they are not */
    sym_term *sw[] = {p3[1], p3[0], p3[2]};
    ck_assert_ptr_ne(sym_modcat(st, sw, 3), w);
    sym_term *two[] = {sym_shard(st, w, 0, 2), sym_shard(st, w, 1, 2)};
    ck_assert_ptr_eq(sym_modcat(st, two, 2), w);
    ck_assert_ptr_ne(sym_shard(st, w, 0, 2), sym_shard(st, w, 0, 3));
    /* a shard of a put-together is its part */
    sym_term *a = leaf("a"), *b = leaf("b"), *ab[] = {a, b};
    sym_term *m = sym_modcat(st, ab, 2);
    ck_assert_ptr_eq(sym_shard(st, m, 0, 2), a);
    ck_assert_ptr_eq(sym_shard(st, m, 1, 2), b);
}
END_TEST

START_TEST(rowwise_updates_and_sums_pull_out)
{
    sym_term *w = leaf("w"), *g0 = leaf("g0"), *g1 = leaf("g1"), *lr = leaf("lr");
    sym_term *parts[2];
    for (int k = 0; k < 2; k++) {
        sym_term *gs[] = {sym_shard(st, g0, k, 2), sym_shard(st, g1, k, 2)};
        parts[k] = sgd(sym_shard(st, w, k, 2), sym_sum(st, gs, 2), lr);
    }
    sym_term *g01[] = {g0, g1};
    ck_assert_ptr_eq(sym_modcat(st, parts, 2), sgd(w, sym_sum(st, g01, 2), lr));
    /* a shard's grad sent to the other pserver: another term */
    sym_term *wrong[2];
    for (int k = 0; k < 2; k++)
        wrong[k] = sgd(sym_shard(st, w, k, 2), sym_shard(st, g0, 1 - k, 2), lr);
    ck_assert_ptr_ne(sym_modcat(st, wrong, 2), sgd(w, g0, lr));
    /* the learning rates must be one term */
    sym_term *lr2[] = {sgd(sym_shard(st, w, 0, 2), sym_shard(st, g0, 0, 2), lr),
                       sgd(sym_shard(st, w, 1, 2), sym_shard(st, g0, 1, 2), leaf("lr2"))};
    ck_assert_ptr_ne(sym_modcat(st, lr2, 2), sgd(w, g0, lr));
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym_table");
    TCase *tc = tcase_create("shards");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, shards_put_together_are_the_table);
    tcase_add_test(tc, rowwise_updates_and_sums_pull_out);
    suite_add_tcase(s, tc);
    return s;
}
