/* test_diff.c - pdtrans diff's op alignment (src/diff/align.c) against a
 * textbook O(n*m) LCS table on small random blocks (the independent truth:
 * the length of a longest common subsequence), its pairs checked for
 * being a common subsequence, and its cost on big mostly-equal blocks. */
#include <time.h>

#include "diff/diff.h"
#include "ir/util.h"
#include "unit.h"

/* A block of n ops whose types come from `alphabet` letters and whose one
 * output is named after the letter too: (type, outputs) keys repeat. */
static ir_block *random_block(ir_program *p, size_t n, unsigned alphabet, unsigned *seed)
{
    ir_block *b = ir_program_add_block(p, -1);
    for (size_t i = 0; i < n; i++) {
        unsigned k = (unsigned)rand_r(seed) % alphabet;
        ir_op *op = ir_block_append_op(b, ir_internf("t%u", k % 3));
        ir_op_set_output1(op, "Out", ir_internf("v%u", k));
    }
    return b;
}

static size_t lcs_table(ir_op *const *a, size_t na, ir_op *const *b, size_t nb)
{
    size_t *t = xcalloc((na + 1) * (nb + 1), sizeof *t);
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            const ir_op *x = a[i - 1], *y = b[j - 1];
            bool eq = x->type == y->type && ir_op_output1(x, "Out") == ir_op_output1(y, "Out");
            size_t up = t[(i - 1) * (nb + 1) + j], left = t[i * (nb + 1) + j - 1];
            t[i * (nb + 1) + j] = eq ? t[(i - 1) * (nb + 1) + j - 1] + 1 : up > left ? up : left;
        }
    size_t r = t[na * (nb + 1) + nb];
    free(t);
    return r;
}

/* The pairs are increasing on both sides and match equal keys. */
static void check_pairs(ir_op *const *a, ir_op *const *b, const pdiff_pair *p, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        ck_assert(a[p[k].a]->type == b[p[k].b]->type);
        ck_assert(ir_op_output1(a[p[k].a], "Out") == ir_op_output1(b[p[k].b], "Out"));
        if (k)
            ck_assert(p[k].a > p[k - 1].a && p[k].b > p[k - 1].b);
    }
}

START_TEST(alignment_is_a_longest_common_subsequence)
{
    unsigned seed = 7;
    for (int round = 0; round < 300; round++) {
        ir_program *p = ir_program_new();
        size_t na = (size_t)rand_r(&seed) % 60, nb = (size_t)rand_r(&seed) % 60;
        unsigned alphabet = 2 + (unsigned)rand_r(&seed) % 12;
        ir_block *x = random_block(p, na, alphabet, &seed);
        ir_block *y = random_block(p, nb, alphabet, &seed);
        pdiff_pair *pairs;
        size_t n = pdiff_align(x->ops, na, y->ops, nb, &pairs);
        check_pairs(x->ops, y->ops, pairs, n);
        ck_assert_uint_eq(n, lcs_table(x->ops, na, y->ops, nb));
        g_free(pairs);
        ir_program_free(p);
    }
}
END_TEST

/* 30 000 ops with unique outputs, a few ops removed from B and a few
 * inserted: every other op is matched (exact), quickly. */
START_TEST(mostly_equal_big_blocks_match_exactly)
{
    ir_program *p = ir_program_new();
    ir_block *x = ir_program_add_block(p, -1), *y = ir_program_add_block(p, -1);
    const size_t n = 30000;
    for (size_t i = 0; i < n; i++) {
        const char *type = i % 2 ? "mul" : "relu", *out = ir_internf("v%zu", i);
        ir_op_set_output1(ir_block_append_op(x, type), "Out", out);
        if (i % 3001 == 5)          /* removed in B */
            continue;
        ir_op_set_output1(ir_block_append_op(y, type), "Out", out);
        if (i % 4999 == 7)          /* inserted in B */
            ir_op_set_output1(ir_block_append_op(y, "scale"), "Out", ir_internf("new%zu", i));
    }
    size_t removed = 0;
    for (size_t i = 0; i < n; i++)
        removed += i % 3001 == 5;
    clock_t t0 = clock();
    pdiff_pair *pairs;
    size_t m = pdiff_align(x->ops, x->n_ops, y->ops, y->n_ops, &pairs);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    check_pairs(x->ops, y->ops, pairs, m);
    ck_assert_uint_eq(m, n - removed);
    ck_assert_msg(secs < 5.0, "aligning 30 000 mostly-equal ops took %.2f s", secs);
    g_free(pairs);
    ir_program_free(p);
}
END_TEST

/* Two unrelated big blocks (more edits than Myers is allowed): the
 * anchors of unique keys still give a valid common subsequence, and the
 * ops both share in one order are all found. */
START_TEST(very_different_blocks_fall_back_to_anchors)
{
    ir_program *p = ir_program_new();
    ir_block *x = ir_program_add_block(p, -1), *y = ir_program_add_block(p, -1);
    for (size_t i = 0; i < 5000; i++) {
        ir_op_set_output1(ir_block_append_op(x, "a"), "Out", ir_internf("x%zu", i));
        ir_op_set_output1(ir_block_append_op(y, "a"), "Out", ir_internf("y%zu", i));
        if (i % 10 == 0) {
            const char *shared = ir_internf("s%zu", i);
            ir_op_set_output1(ir_block_append_op(x, "b"), "Out", shared);
            ir_op_set_output1(ir_block_append_op(y, "b"), "Out", shared);
        }
    }
    pdiff_pair *pairs;
    size_t m = pdiff_align(x->ops, x->n_ops, y->ops, y->n_ops, &pairs);
    check_pairs(x->ops, y->ops, pairs, m);
    ck_assert_uint_eq(m, 500);
    g_free(pairs);
    ir_program_free(p);
}
END_TEST

START_TEST(var_field_names_are_known)
{
    ck_assert_uint_ne(pdiff_var_field_bit("dims"), 0);
    ck_assert_uint_ne(pdiff_var_field_bit("persistable"), 0);
    ck_assert_uint_eq(pdiff_var_field_bit("dim"), 0);
    unsigned all = 0;
    for (size_t i = 0; i < pdiff_n_var_fields; i++) {
        unsigned bit = pdiff_var_field_bit(pdiff_var_fields[i]);
        ck_assert_uint_eq(all & bit, 0);
        all |= bit;
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("align");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, alignment_is_a_longest_common_subsequence);
    tcase_add_test(tc, mostly_equal_big_blocks_match_exactly);
    tcase_add_test(tc, very_different_blocks_fall_back_to_anchors);
    tcase_add_test(tc, var_field_names_are_known);
    suite_add_tcase(s, tc);
    return s;
}
