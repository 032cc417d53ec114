/* test_py2_dict.c - Python 2's dict order for the ops backward.py builds
 * from a dict (src/passes/era/py2_dict.c), against Python 2.7's own
 * printed dicts and the real <= 1.5 program written under Python 2. */
#include "unit.h"

#include "io/pdio.h"
#include "passes/era/era.h"

#include <glib.h>
#include <string.h>

static void expect_keys(const char *const *keys, size_t n_keys, const char *const *want, size_t n)
{
    const char *out[8];
    ck_assert_uint_eq(pdt_py2_dict_order(keys, n_keys, out), n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(out[i], want[i]);
}

/* What CPython 2.7 prints: {'a': 1, 'b': 2, 'c': 3} is {'a': 1, 'c': 3,
 * 'b': 2}; dict(one=1, two=2, three=3) is {'three': 3, 'two': 2, 'one': 1}. */
START_TEST(orders_are_python27s)
{
    static const char *const abc[] = {"a", "b", "c"}, *const acb[] = {"a", "c", "b"};
    expect_keys(abc, 3, acb, 3);
    static const char *const one[] = {"one", "two", "three"}, *const three[] = {"three", "two", "one"};
    expect_keys(one, 3, three, 3);
    /* a repeated key is one entry */
    static const char *const rep[] = {"a", "b", "a", "c"};
    expect_keys(rep, 4, acb, 3);
}
END_TEST

static ir_op *loss_grad_fill(ir_program *p)
{
    for (size_t k = 0; k < p->blocks[0]->n_ops; k++) {
        ir_op *op = p->blocks[0]->ops[k];
        if (!strcmp(op->type, "fill_constant") && ir_op_role(op) == 257)
            return op;
    }
    return NULL;
}

static void expect_attrs(const ir_op *op, const char *const *want, size_t n)
{
    ck_assert_uint_eq(op->n_attrs, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(ir_op_attrs(op)[i].name, want[i]);
}

/* rec_example_main_grad_train.pdmodel (<= 1.5, python2.7 tracebacks):
 * backward.py's loss literal {shape, value, dtype, force_cpu, op_role}
 * went into the C++ map in Python 2's dict order.  Sorted and marked
 * made, the op must come back in the file's order; without the
 * tracebacks (no sign of Python 2) pdtrans takes Python 3's insertion
 * order, which gives another. */
START_TEST(loss_grad_takes_python2_order)
{
    if (!unit_shared_dir())
        return;
    ir_program *p = pdio_read("../shared/testdata-real/train/rec_example_main_grad_train.pdmodel");
    ck_assert_ptr_nonnull(p);
    ck_assert(pdt_era_python2(p));
    ir_op *fill = loss_grad_fill(p);
    ck_assert_ptr_nonnull(fill);
    static const char *const want[] = {"op_role", "value", "force_cpu", "shape", "dtype"};
    expect_attrs(fill, want, 5);
    ir_op_settle(fill);
    fill->made = true;
    pdt_hash_order_program(p, 105);
    expect_attrs(fill, want, 5);
    for (size_t k = 0; k < p->blocks[0]->n_ops; k++)
        ir_op_remove_attr(p->blocks[0]->ops[k], "op_callstack");
    ck_assert(!pdt_era_python2(p));
    ir_op_settle(fill);
    pdt_hash_order_program(p, 105);
    static const char *const py3[] = {"op_role", "force_cpu", "dtype", "value", "shape"};
    expect_attrs(fill, py3, 5);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("py2_dict");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, orders_are_python27s);
    tcase_add_test(tc, loss_grad_takes_python2_order);
    suite_add_tcase(s, tc);
    return s;
}
