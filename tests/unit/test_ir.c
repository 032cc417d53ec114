/* test_ir.c - IR invariants: interning, vars, ops, splice, rename, clone,
 * def-use. */
#include "unit.h"

#include <stdint.h>
#include <unistd.h>

#include "io/pdio.h"
#include "ir/ir_internal.h"
#include "ir/pmap.h"
#include "ir/util.h"

static ir_program *two_block_program(void)
{
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1);
    ir_program_add_block(p, 0);
    ir_block_var(b0, "x");
    ir_block_var(b0, "y");
    ir_op *op = ir_block_append_op(b0, "relu");
    ir_op_set_input1(op, "X", "x");
    ir_op_set_output1(op, "Out", "y");
    return p;
}

START_TEST(intern_is_pointer_equal)
{
    char buf[8] = "abc";
    ck_assert_ptr_eq(ir_intern("abc"), ir_intern(buf));
    ck_assert_ptr_ne(ir_intern("abc"), ir_intern("abd"));
    ck_assert_ptr_eq(ir_intern_n("abcdef", 3), ir_intern("abc"));
    ck_assert_ptr_eq(ir_internf("%s_%d", "w", 3), ir_intern("w_3"));
    ck_assert_ptr_null(ir_intern(NULL));
}
END_TEST

/* Interned pointers are recognised without hashing; pointers into the
 * middle of an interned name, prefixes and names with embedded NULs must
 * still map to their own canonical copies. */
START_TEST(intern_fast_path_is_exact)
{
    const char *whole = ir_intern("prefix_tail");
    ck_assert_ptr_eq(ir_intern(whole), whole);
    ck_assert_ptr_eq(ir_intern_n(whole, strlen(whole)), whole);
    const char *tail = ir_intern(whole + 7);
    ck_assert_str_eq(tail, "tail");
    ck_assert_ptr_ne(tail, whole + 7);
    ck_assert_ptr_eq(ir_intern("tail"), tail);
    const char *pre = ir_intern_n(whole, 6);
    ck_assert_str_eq(pre, "prefix");
    ck_assert_ptr_eq(ir_intern("prefix"), pre);
    ck_assert_ptr_eq(ir_intern_n("ab\0cd", 5), ir_intern("ab"));
    const char *empty = ir_intern("");
    ck_assert_ptr_eq(ir_intern(empty), empty);
    ck_assert_ptr_eq(ir_intern_n(whole, 0), empty);
    /* Many names (past the first storage chunk, and room reserved for some
     * of them) stay pointer-equal. */
    ir_intern_reserve(30000);
    for (int i = 0; i < 70000; i++) {
        const char *n = ir_internf("name_%d_with_some_length", i);
        ck_assert_ptr_eq(ir_intern(n), n);
    }
    ck_assert_ptr_eq(ir_internf("name_%d_with_some_length", 17),
                     ir_intern("name_17_with_some_length"));
    char big[600];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *b = ir_intern(big);
    ck_assert_ptr_eq(ir_intern_n(big, sizeof big - 1), b);
    ck_assert_ptr_eq(ir_internf("%s", big), b);
}
END_TEST

/* Grown one put at a time, a map is between three eighths and three
 * quarters full (it doubles); reserved, it has room for exactly that many
 * (pmap_matches_model). */
START_TEST(pmap_stays_three_eighths_to_three_quarters_full)
{
    enum { N = 200000 };
    static char keys[N];
    pmap m = PMAP_INIT;
    for (int i = 0; i < N; i++) {
        pmap_put(&m, &keys[i], &keys[i]);
        ck_assert_uint_le(m.n * 4, m.cap * 3);
        if (m.cap > 16)
            ck_assert_uint_gt(m.n * 8, m.cap * 3);
    }
    for (int i = 0; i < N; i += 7)
        ck_assert_ptr_eq(pmap_get(&m, &keys[i]), &keys[i]);
    pmap_free(&m);
}
END_TEST

/* Keys in one 128-byte stretch start in one window of 16 slots (names
 * stored side by side are looked up side by side), keys 8 bytes apart at
 * homes of their own; and the windows' clustering leaves probes short
 * (keys 16 bytes apart, as names of a dozen characters are: about 2). */
START_TEST(pmap_homes_keep_neighbours_together)
{
    enum { N = 100000 };
    static _Alignas(128) char keys[N * 16];
    size_t cap = 1000003;
    size_t first = pmap_home_(&keys[128], cap);
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(pmap_home_(&keys[128 + 8 * i], cap), (first + (size_t)i) % cap);
    pmap m = PMAP_INIT;
    for (int i = 0; i < N; i++)
        pmap_add(&m, &keys[16 * i]);
    size_t steps = 0;
    for (int i = 0; i < N; i++) {
        size_t home = pmap_home_(&keys[16 * i], m.cap);
        size_t at = (size_t)(pmap_find_(&m, &keys[16 * i]) - m.slots);
        steps += at >= home ? at - home : at + m.cap - home;
    }
    ck_assert_uint_lt(steps, 4 * (size_t)N);
    pmap_free(&m);
}
END_TEST

/* The table can go while the names stay: interned pointers keep working,
 * and the next lookup finds every name again (and adds new ones). */
START_TEST(intern_table_dropped_and_rebuilt)
{
    const char *kept[3000];
    for (int i = 0; i < 3000; i++)
        kept[i] = ir_internf("dropped_%d", i);
    ir_intern_drop_table();
    ck_assert(ir_is_interned(kept[5]));
    ck_assert_ptr_eq(ir_intern(kept[7]), kept[7]);     /* no lookup needed */
    char buf[32];
    for (int i = 0; i < 3000; i += 13) {
        snprintf(buf, sizeof buf, "dropped_%d", i);
        ck_assert_ptr_eq(ir_intern(buf), kept[i]);
    }
    const char *fresh = ir_intern("not_before_the_drop");
    ck_assert_str_eq(fresh, "not_before_the_drop");
    ir_intern_drop_table();
    ir_intern_drop_table();
    ck_assert_ptr_eq(ir_intern_n("not_before_the_drop!", 19), fresh);
    ck_assert_ptr_eq(ir_intern("dropped_2999"), kept[2999]);
    /* room for nothing, reserved first (a block without vars): the table
     * still grows (it once stayed at one slot and the next lookup spun) */
    ir_intern_shutdown();
    ir_intern_reserve(0);
    for (int i = 0; i < 100; i++) {
        const char *n = ir_internf("after_%d", i);
        ck_assert_ptr_eq(ir_internf("after_%d", i), n);
    }
}
END_TEST

/* xstrndup stops at n bytes or at the string's end, whichever is first. */
START_TEST(xstrndup_bounds)
{
    char *a = xstrndup("abcdef", 3), *b = xstrndup("ab", 10), *c = xstrndup("abc", 0);
    ck_assert_str_eq(a, "abc");
    ck_assert_str_eq(b, "ab");
    ck_assert_str_eq(c, "");
    free(a);
    free(b);
    free(c);
}
END_TEST

/* pmap against a plain array model: puts, replaces, removals (which
 * shift probe chains back) and growth. */
START_TEST(pmap_matches_model)
{
    enum { N = 5000 };
    static char keys[N];
    static int model[N];
    pmap m = PMAP_INIT;
    ck_assert_ptr_null(pmap_get(&m, &keys[0]));
    unsigned x = 12345;
    for (int step = 0; step < 60000; step++) {
        x = x * 1103515245u + 12345u;
        int k = (int)((x >> 8) % N);
        int op = (int)((x >> 4) % 3);
        if (op < 2) {
            pmap_put(&m, &keys[k], &model[k]);
            model[k] = 1;
        } else {
            ck_assert(pmap_remove(&m, &keys[k]) == (model[k] == 1));
            model[k] = 0;
        }
        if (step % 997 == 0) {
            size_t n = 0;
            for (int i = 0; i < N; i++) {
                ck_assert(pmap_has(&m, &keys[i]) == (model[i] == 1));
                n += model[i] == 1;
            }
            ck_assert_uint_eq(m.n, n);
            size_t seen = 0;
            PMAP_FOR(&m, s) {
                ck_assert_ptr_eq(s->val, &model[(const char *)s->key - keys]);
                seen++;
            }
            ck_assert_uint_eq(seen, n);
        }
    }
    size_t before = m.n;
    pmap_reserve(&m, 100000);
    /* room for exactly that many at three quarters full */
    ck_assert_uint_ge(m.cap * 3, (before + 100000) * 4);
    ck_assert_uint_le(m.cap * 3, (before + 100000) * 4 + 6);
    ck_assert_uint_eq(m.n, before);
    for (int i = 0; i < N; i++)
        ck_assert(pmap_has(&m, &keys[i]) == (model[i] == 1));
    pmap_clear(&m);
    ck_assert_uint_eq(m.n, 0);
    ck_assert(pmap_add(&m, &keys[1]));
    ck_assert(!pmap_add(&m, &keys[1]));
    pmap_free(&m);
}
END_TEST

START_TEST(var_lookup_and_scope)
{
    ir_program *p = two_block_program();
    ir_block *b1 = p->blocks[1];
    ck_assert_ptr_null(ir_block_find_var(b1, "x"));
    ck_assert_ptr_nonnull(ir_block_find_var_recursive(b1, "x"));
    ir_var *v = ir_block_var(b1, "local");
    ck_assert_ptr_eq(ir_block_var(b1, "local"), v);
    ck_assert_int_eq(v->type, IR_LOD_TENSOR);
    ck_assert_uint_eq(ir_block_n_var_names(b1), 1);
    ck_assert_uint_eq(ir_block_n_var_names(p->blocks[0]), 2);
    ir_block_remove_var(b1, "local");
    ck_assert_ptr_null(ir_block_find_var(b1, "local"));
    ck_assert_uint_eq(ir_block_n_var_names(b1), 0);
    ir_block_reserve_vars(b1, 1000);
    ck_assert_uint_ge(b1->cap_vars, b1->n_vars + 1000);
    for (int i = 0; i < 1000; i++)
        ir_block_var(b1, ir_internf("r%d", i));
    ck_assert_ptr_nonnull(ir_block_find_var(b1, "r999"));
    ck_assert_ptr_nonnull(ir_block_find_var_recursive(b1, "x"));
    ir_program_free(p);
}
END_TEST

/* Block 0 is not in the scope index: a name no closer enclosing block
 * declares comes from block 0's own map, whatever the depth. */
START_TEST(scope_answers_from_block_0)
{
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1), *b1 = ir_program_add_block(p, 0);
    ir_block *b2 = ir_program_add_block(p, 1), *b3 = ir_program_add_block(p, 0);
    ir_var *x0 = ir_block_var(b0, "x"), *x1 = ir_block_var(b1, "x");
    ir_var *only0 = ir_block_var(b0, "only0"), *in3 = ir_block_var(b3, "in3");
    ck_assert_ptr_eq(ir_block_find_var_recursive(b2, "x"), x1);
    ck_assert_ptr_eq(ir_block_find_var_recursive(b3, "x"), x0);
    ck_assert_ptr_eq(ir_block_find_var_recursive(b0, "x"), x0);
    ck_assert_ptr_eq(ir_block_find_var_recursive(b2, "only0"), only0);
    ck_assert_ptr_eq(ir_block_find_var_recursive(b3, "in3"), in3);
    ck_assert_ptr_null(ir_block_find_var_recursive(b2, "in3"));
    ck_assert_ptr_null(ir_block_find_var_recursive(b0, "in3"));
    ir_block_remove_var(b1, "x");
    ck_assert_ptr_eq(ir_block_find_var_recursive(b2, "x"), x0);
    ir_block_remove_var(b0, "only0");
    ck_assert_ptr_null(ir_block_find_var_recursive(b2, "only0"));
    /* a name declared in many blocks: still the nearest */
    for (int i = 0; i < 20; i++)
        ir_block_var(ir_program_add_block(p, 0), "many");
    ir_var *m2 = ir_block_var(b2, "many"), *m0 = ir_block_var(b0, "many");
    ck_assert_ptr_eq(ir_block_find_var_recursive(b2, "many"), m2);
    ck_assert_ptr_eq(ir_block_find_var_recursive(b3, "many"), m0);
    ir_program_free(p);
}
END_TEST

START_TEST(parent_cycle_terminates)
{
    ir_program *p = ir_program_new();
    ir_program_add_block(p, -1);
    ir_program_add_block(p, 2);
    ir_program_add_block(p, 1);
    ck_assert_ptr_null(ir_block_find_var_recursive(p->blocks[1], "nope"));
    ir_program_free(p);
}
END_TEST

START_TEST(attrs_replace_in_place)
{
    ir_program *p = two_block_program();
    ir_op *op = p->blocks[0]->ops[0];
    op->enc_dirty_ = false;
    ir_op_set_int(op, "a", 1);
    ck_assert(op->enc_dirty_);
    ir_op_set_float(op, "b", 2.5f);
    ir_op_set_int(op, "a", 7);
    ck_assert_uint_eq(op->n_attrs, 2);
    ck_assert_ptr_eq(op->attrs[0].name, ir_intern("a"));
    ck_assert_int_eq(ir_op_get_int(op, "a", 0), 7);
    ck_assert(ir_op_get_float(op, "b", 0) == 2.5);
    ck_assert_int_eq(ir_op_get_int(op, "missing", -3), -3);
    const char *names[] = {"p", "g"};
    ir_op_set_strings(op, "op_role_var", names, 2);
    ck_assert_uint_eq(ir_op_attr(op, "op_role_var")->n_strings, 2);
    ir_op_set_string(op, "s", "hello");
    ck_assert_ptr_eq(ir_op_get_string(op, "s"), ir_intern("hello"));
    ir_op_remove_attr(op, "a");
    ck_assert(!ir_op_has_attr(op, "a"));
    ir_op_set_role(op, IR_ROLE_BACKWARD);
    ck_assert_int_eq(ir_op_role(op), 1);
    ir_program_free(p);
}
END_TEST

START_TEST(slots_absent_vs_empty)
{
    ir_program *p = two_block_program();
    ir_op *op = p->blocks[0]->ops[0];
    ck_assert_ptr_null(ir_op_input(op, "Y"));
    ir_op_set_input(op, "Y", NULL, 0);
    ck_assert_ptr_nonnull(ir_op_input(op, "Y"));
    ck_assert_uint_eq(ir_op_input(op, "Y")->n_args, 0);
    ir_op_add_input_arg(op, "Y", "a");
    ir_op_add_input_arg(op, "Y", "b");
    ck_assert_uint_eq(ir_op_input(op, "Y")->n_args, 2);
    ck_assert(ir_op_reads(op, "b"));
    ck_assert(!ir_op_writes(op, "b"));
    ir_op_remove_input(op, "Y");
    ck_assert_ptr_null(ir_op_input(op, "Y"));
    ir_program_free(p);
}
END_TEST

START_TEST(splice_inserts_and_removes)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    for (int i = 0; i < 5; i++)
        ir_block_append_op(b, ir_internf("op%d", i));
    ir_op *fresh[3];
    for (int i = 0; i < 3; i++)
        fresh[i] = ir_op_new(p, ir_internf("new%d", i));
    ir_block_splice(b, 1, 2, fresh, 3);   /* op0 new0 new1 new2 op3 op4 */
    ck_assert_uint_eq(b->n_ops, 6);
    ck_assert_str_eq(b->ops[0]->type, "op0");
    ck_assert_str_eq(b->ops[1]->type, "new0");
    ck_assert_str_eq(b->ops[3]->type, "new2");
    ck_assert_str_eq(b->ops[4]->type, "op3");
    ck_assert_ptr_eq(b->ops[2]->block, b);
    ir_block_splice(b, 0, 4, NULL, 0);     /* op3 op4 */
    ck_assert_uint_eq(b->n_ops, 2);
    ck_assert_str_eq(b->ops[0]->type, "op3");
    ir_block_insert_op(b, 1, "mid");
    ck_assert_str_eq(b->ops[1]->type, "mid");
    ir_block_remove_op(b, 0);
    ck_assert_str_eq(b->ops[0]->type, "mid");
    ir_program_free(p);
}
END_TEST

START_TEST(rename_reaches_sub_blocks)
{
    ir_program *p = two_block_program();
    ir_op *inner = ir_block_append_op(p->blocks[1], "scale");
    ir_op_set_input1(inner, "X", "x");
    ir_op_set_output1(inner, "Out", "x");
    ir_block_rename_var(p->blocks[0], "x", "x2");
    ck_assert_ptr_null(ir_block_find_var(p->blocks[0], "x"));
    ir_var *v = ir_block_find_var(p->blocks[0], "x2");
    ck_assert_ptr_nonnull(v);
    ck_assert(!v->from_input);
    ck_assert_str_eq(ir_op_input1(p->blocks[0]->ops[0], "X"), "x2");
    ck_assert_str_eq(ir_op_input1(inner, "X"), "x2");
    ck_assert_str_eq(ir_op_output1(inner, "Out"), "x2");
    ir_program_free(p);
}
END_TEST

START_TEST(clone_is_deep)
{
    ir_program *p = two_block_program();
    ir_op_set_int(p->blocks[0]->ops[0], "k", 1);
    int64_t dims[] = {-1, 3};
    ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "x"), dims, 2);
    ir_program *q = ir_program_clone(p);
    ir_op_set_int(q->blocks[0]->ops[0], "k", 2);
    ir_block_find_var(q->blocks[0], "x")->dims[1] = 9;
    ck_assert_int_eq(ir_op_get_int(p->blocks[0]->ops[0], "k", 0), 1);
    ck_assert_int_eq(ir_block_find_var(p->blocks[0], "x")->dims[1], 3);
    ck_assert_uint_eq(q->n_blocks, 2);
    ck_assert_ptr_eq(q->blocks[0]->ops[0]->block, q->blocks[0]);
    ck_assert_int_eq(ir_var_numel(ir_block_find_var(q->blocks[0], "x")), -1);
    ir_program_free(p);
    ir_program_free(q);
}
END_TEST

START_TEST(defuse_lists_positions)
{
    ir_program *p = two_block_program();
    ir_block *b = p->blocks[0];
    ir_op *op = ir_block_append_op(b, "scale");
    ir_op_set_input1(op, "X", "y");
    ir_op_set_output1(op, "Out", "y");
    ir_defuse *d = ir_defuse_build(b);
    size_t n;
    const size_t *w = ir_defuse_writers(d, "y", &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(w[0], 0);
    ck_assert_uint_eq(w[1], 1);
    const size_t *r = ir_defuse_readers(d, "y", &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(r[0], 1);
    ir_defuse_readers(d, "unused", &n);
    ck_assert_uint_eq(n, 0);
    ir_defuse_free(d);
    ir_program_free(p);
}
END_TEST

/* An attr of type INT that also holds a string, a list and an unknown field
 * (an unusual file): the compact attr keeps the INT value where passes read
 * it and the rest aside, and writing gives back the same bytes, also after
 * a clone and an in-place edit (marked dirty); a setter drops the rest. */
static const uint8_t irregular_attr[] = {
    0x0a, 0x25, 0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    0x22, 0x16, 0x1a, 0x01, 0x74, 0x22, 0x11, 0x0a, 0x01, 0x61, 0x10, 0x00, 0x18, 0x03,
    0x2a, 0x01, 0x78, 0x30, 0x01, 0x30, 0x02, 0x98, 0x06, 0x07,
};

static void expect_bytes(const ir_program *p, const uint8_t *want, size_t n)
{
    size_t len = 0;
    uint8_t *got = pdio_serialize(p, false, &len);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(len, n);
    ck_assert_mem_eq(got, want, n);
    free(got);
}

START_TEST(irregular_attr_round_trips)
{
    ck_assert_uint_le(sizeof(ir_attr), 40);
    ir_program *p = pdio_parse("irregular", irregular_attr, sizeof irregular_attr);
    ck_assert_ptr_nonnull(p);
    ir_op *op = p->blocks[0]->ops[0];
    ir_attr *at = ir_op_attr(op, "a");
    ck_assert(at && at->type == IR_ATTR_INT && at->has_i && at->i == 3);
    ck_assert(!at->has_s && at->more);
    ck_assert_int_eq(ir_op_get_int(op, "a", -1), 3);
    expect_bytes(p, irregular_attr, sizeof irregular_attr);
    ir_program *q = ir_program_clone(p);
    expect_bytes(q, irregular_attr, sizeof irregular_attr);
    ir_program_free(q);
    uint8_t edited[sizeof irregular_attr];
    memcpy(edited, irregular_attr, sizeof edited);
    edited[28] = 0x05;      /* the value of i */
    at->i = 5;
    ir_op_mark_dirty(op);   /* a direct edit says so (ir.h), or it is lost */
    expect_bytes(p, edited, sizeof edited);
    ir_op_set_int(op, "a", 4);
    static const uint8_t plain[] = {
        0x0a, 0x1b, 0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0x22, 0x0c, 0x1a, 0x01, 0x74, 0x22, 0x07, 0x0a, 0x01, 0x61, 0x10, 0x00, 0x18, 0x04,
    };
    expect_bytes(p, plain, sizeof plain);
    ir_program_free(p);
}
END_TEST

/* A var's rare parts (here an unknown VarDesc field) live out of line: an
 * ordinary var read from a file has none, the other keeps its bytes
 * through a write, a read, a clone and ir_block_clone_var. */
START_TEST(rare_var_parts_round_trip)
{
    ir_program *p = two_block_program();
    ir_var *y = ir_block_find_var(p->blocks[0], "y");
    ck_assert_ptr_null(y->rare);
    ck_assert_uint_eq(ir_var_rare_of(y)->unknown.len, 0);
    static const uint8_t field15[] = {0x78, 0x07};   /* field 15, varint 7 */
    ir_var_rare_mut(p, y)->unknown = (ir_bytes){field15, sizeof field15};
    size_t len = 0;
    uint8_t *bytes = pdio_serialize(p, false, &len);
    ir_program *q = pdio_parse("rare", bytes, len);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_null(ir_block_find_var(q->blocks[0], "x")->rare);
    const ir_var *qy = ir_block_find_var(q->blocks[0], "y");
    ck_assert_ptr_nonnull(qy->rare);
    ck_assert_uint_eq(qy->rare->unknown.len, 2);
    ck_assert_mem_eq(qy->rare->unknown.data, field15, 2);
    expect_bytes(q, bytes, len);
    ir_program *c = ir_program_clone(q);
    expect_bytes(c, bytes, len);
    ir_var *copy = ir_block_clone_var(c->blocks[0], qy, "z");
    ck_assert(copy->rare && copy->rare != qy->rare && copy->rare->unknown.len == 2);
    ck_assert_ptr_ne(copy->rare->unknown.data, qy->rare->unknown.data);
    free(bytes);
    ir_program_free(c);
    ir_program_free(q);
    ir_program_free(p);
}
END_TEST

/* An op's and its slots' unknown fields are out of line (ir_op_rare):
 * nothing for the ordinary ones read back, kept byte for byte (and copied
 * by a clone) for the others, and following their slot when slots before
 * it go. */
START_TEST(op_and_slot_unknown_round_trip)
{
    ir_program *p = two_block_program();
    ir_op *op = p->blocks[0]->ops[0];
    ir_op_mark_dirty(op);
    ck_assert_ptr_null(op->rare);
    static const uint8_t field9[] = {0x48, 0x01};    /* field 9, varint 1 */
    ir_op_set_unknown(op, (ir_bytes){field9, sizeof field9});
    ir_op_set_slot_unknown(op, true, 0, (ir_bytes){field9, sizeof field9});
    ck_assert_uint_eq(ir_slot_unknown(op, false, 0).len, 0);
    ck_assert_uint_eq(ir_slot_unknown(op, true, 7).len, 0);
    ir_op *plain = ir_block_append_op(p->blocks[0], "scale");
    ir_op_set_slot_unknown(plain, false, 0, (ir_bytes){field9, 0});
    ck_assert_ptr_null(plain->rare);    /* empty bytes make nothing */
    ir_op_set_input1(plain, "X", "y");
    size_t len = 0;
    uint8_t *bytes = pdio_serialize(p, false, &len);
    ir_program *q = pdio_parse("unknown", bytes, len);
    ck_assert_ptr_nonnull(q);
    const ir_op *qop = q->blocks[0]->ops[0], *qplain = q->blocks[0]->ops[1];
    ck_assert_uint_eq(ir_op_unknown(qop).len, 2);
    ck_assert_mem_eq(ir_op_unknown(qop).data, field9, 2);
    ck_assert_uint_eq(ir_slot_unknown(qop, false, 0).len, 0);
    ck_assert_uint_eq(ir_slot_unknown(qop, true, 0).len, 2);
    ck_assert_ptr_null(qplain->rare);
    ck_assert_uint_eq(ir_op_unknown(qplain).len, 0);
    expect_bytes(q, bytes, len);
    ir_program *c = ir_program_clone(q);
    ck_assert_ptr_ne(c->blocks[0]->ops[0]->rare, qop->rare);
    ck_assert_ptr_ne(ir_slot_unknown(c->blocks[0]->ops[0], true, 0).data,
                     ir_slot_unknown(qop, true, 0).data);
    expect_bytes(c, bytes, len);
    /* a slot removed before it: the unknown fields move with their slot */
    ir_op *cop = c->blocks[0]->ops[0];
    ir_op_set_output1(cop, "Extra", "z");
    ir_op_set_slot_unknown(cop, true, 1, (ir_bytes){field9, 1});
    const char *first = ir_op_outs(cop)[0].name;
    ir_op_remove_output(cop, first);
    ck_assert_uint_eq(ir_slot_unknown(cop, true, 0).len, 1);
    ck_assert_uint_eq(ir_slot_unknown(cop, true, 1).len, 0);
    free(bytes);
    ir_program_free(c);
    ir_program_free(q);
    ir_program_free(p);
}
END_TEST

/* An array that is the arena's newest allocation grows where it is; one
 * that is not is copied, with its elements. */
START_TEST(grow_in_place_at_arena_top)
{
    ir_arena *a = ir_arena_new();
    size_t cap = 0;
    int32_t *v = ir_grow(a, NULL, sizeof *v, 0, &cap, 4);
    ck_assert_uint_eq(cap, 4);
    for (int32_t i = 0; i < 4; i++)
        v[i] = i;
    int32_t *w = ir_grow(a, v, sizeof *v, 4, &cap, 5);
    ck_assert_ptr_eq(w, v);
    ck_assert_uint_eq(cap, 8);
    w[4] = 4;
    ir_arena_alloc(a, 16);          /* w is no longer on top */
    int32_t *x = ir_grow(a, w, sizeof *w, 5, &cap, 9);
    ck_assert_ptr_ne(x, w);
    ck_assert_uint_eq(cap, 16);
    for (int32_t i = 0; i < 5; i++)
        ck_assert_int_eq(x[i], i);
    ir_arena_free(a);
}
END_TEST

/* Whether the mapping holding p carries MADV_HUGEPAGE ("hg" in smaps'
 * VmFlags), and its bounds in *lo and *hi (when not NULL); -1 when the
 * kernel has no transparent huge pages to ask for. */
static int vma_asks_huge_in(const void *p, uintptr_t *lo, uintptr_t *hi)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        return -1;
    FILE *f = fopen("/proc/self/smaps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    bool inside = false;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= a && (uintptr_t)p < b;
            if (inside && lo)
                *lo = a, *hi = b;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            found = strstr(line, " hg") != NULL;
        }
    }
    fclose(f);
    return found;
}

static int vma_asks_huge(const void *p)
{
    return vma_asks_huge_in(p, NULL, NULL);
}

/* Blocks of 4 MB and more, and an arena's chunks once it holds 32 MB, ask for
 * 2 MB pages (issue 14, session 12); smaller ones do not. */
START_TEST(big_memory_asks_for_huge_pages)
{
    size_t mb = 1 << 20;
    unsigned char *big = xmalloc(8 * mb), *small = xmalloc(mb);
    unsigned char *aligned = xmalloc_huge(2 * mb);
    ck_assert_uint_eq((uintptr_t)aligned % (2 * mb), 0);
    uintptr_t lo = 0, hi = 0;
    int huge = vma_asks_huge_in(big + 4 * mb, &lo, &hi);
    if (huge >= 0) {
        ck_assert_int_eq(huge, 1);
        /* one mapping for the whole block: a split one is not moved by
         * mremap, and realloc would copy it */
        ck_assert_uint_le(lo, (uintptr_t)big);
        ck_assert_uint_ge(hi, (uintptr_t)big + 8 * mb);
        big = xrealloc(big, 16 * mb);
        ck_assert_int_eq(vma_asks_huge_in(big + 12 * mb, &lo, &hi), 1);
        ck_assert_uint_le(lo, (uintptr_t)big);
        ck_assert_uint_ge(hi, (uintptr_t)big + 16 * mb);
        ck_assert_int_eq(vma_asks_huge(aligned), 1);
        ck_assert_int_eq(vma_asks_huge(small), 0);
    }
    free(big);
    free(small);
    free(aligned);

    /* 36 MB in 1000-byte pieces: every piece keeps its bytes, and the
     * pieces past 32 MB are on huge-page chunks */
    ir_arena *a = ir_arena_new();
    enum { PIECE = 1000, N = 36 * 1048 };
    unsigned char **piece = xmalloc_n(N, sizeof *piece);
    for (size_t i = 0; i < N; i++) {
        piece[i] = ir_arena_alloc_raw(a, PIECE);
        ck_assert_uint_eq((uintptr_t)piece[i] % 8, 0);
        memset(piece[i], (int)(i % 251), PIECE);
    }
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < PIECE; k += 97)
            ck_assert_uint_eq(piece[i][k], i % 251);
    if (huge >= 0) {
        ck_assert_int_eq(vma_asks_huge(piece[N - 1]), 1);
        ck_assert_int_eq(vma_asks_huge(piece[0]), 0);
    }
    size_t cap = 0;     /* growth in place still works on a huge chunk */
    int32_t *v = ir_grow(a, NULL, sizeof *v, 0, &cap, 4);
    ck_assert_ptr_eq(ir_grow(a, v, sizeof *v, 4, &cap, 5), v);
    free(piece);
    ir_arena_free(a);
}
END_TEST

/* The 2 MB chunks of a freed arena go to the next arenas that need them,
 * not back to the kernel (whose fresh pages it would zero again): the next
 * arena's raw pieces there still hold the bytes the freed one wrote. */
static unsigned char *first_huge_piece(ir_arena *a, int fill)
{
    /* Past 32 MB of chunks every chunk is a huge one; before that a 64 KB
     * chunk may start near a 2 MB boundary too, and a freed one may come
     * back zeroed (glibc trims the heap, sbrk gives fresh pages at the same
     * address).  A 64 KB chunk holds 65 pieces of 1000 bytes, so the 512
     * chunks of 32 MB end at piece 33280: look from 34000 on (33000 looked
     * among 64 KB chunks, a rare failure that depended on the heap's
     * layout). */
    for (size_t n = 0;; n++) {
        unsigned char *p = ir_arena_alloc_raw(a, 1000);
        if (n >= 34000 && (uintptr_t)p % PDT_HUGE_PAGE < 64)   /* a chunk's first piece */
            return p;
        if (fill >= 0)
            memset(p, fill, 1000);
    }
}

START_TEST(freed_arenas_lend_their_huge_chunks)
{
    ir_arena *a = ir_arena_new();
    unsigned char *p = first_huge_piece(a, 0);
    memset(p, 0xab, 1000);
    ir_arena_free(a);
    ir_arena *b = ir_arena_new();
    unsigned char *q = first_huge_piece(b, -1);
    ck_assert_ptr_eq(q, p);
    ck_assert_uint_eq(q[0], 0xab);
    ck_assert_uint_eq(q[999], 0xab);
    unsigned char *z = ir_arena_alloc(b, 4096);     /* zeroed, though reused */
    for (size_t i = 0; i < 4096; i++)
        ck_assert_uint_eq(z[i], 0);
    ir_arena_free(b);
}
END_TEST

/* Issue 28's bench: below 32 MB an arena takes 2 MB chunks only when told
 * it will fill them; ir_program_expect_next tells the next program only. */
START_TEST(arena_told_its_size_takes_huge_chunks)
{
    ir_arena *a = ir_arena_new();
    ir_arena_alloc(a, 16);
    ck_assert_uint_eq(ir_arena_held(a), 64 * 1024);
    ir_arena_free(a);
    ir_arena *b = ir_arena_new();
    ir_arena_expect(b, 3 * PDT_HUGE_PAGE);
    ir_arena_alloc(b, 16);
    ck_assert_uint_gt(ir_arena_held(b), PDT_HUGE_PAGE - 4096);
    ir_arena_free(b);
    ir_program_expect_next(4 * PDT_HUGE_PAGE);
    ir_program *p = ir_program_new();
    ck_assert_uint_gt(ir_arena_held(p->arena), PDT_HUGE_PAGE - 4096);
    ir_program *q = ir_program_new();
    ck_assert_uint_eq(ir_arena_held(q->arena), 64 * 1024);
    ir_program_free(p);
    ir_program_free(q);
}
END_TEST

/* Issue 34: messages name a var's dims; any negative dim is unknown. */
START_TEST(dims_text_and_unknown_dims)
{
    char buf[64];
    int64_t d[] = {-1917, 1};
    ck_assert_str_eq(ir_dims_text(d, 2, buf, sizeof buf), "[-1917, 1]");
    ck_assert_str_eq(ir_dims_text(d, 0, buf, sizeof buf), "[]");
    int64_t extremes[] = {INT64_MIN, INT64_MAX};
    ck_assert_str_eq(ir_dims_text(extremes, 2, buf, sizeof buf),
                     "[-9223372036854775808, 9223372036854775807]");
    int64_t many[20];
    for (size_t i = 0; i < 20; i++)
        many[i] = 100000 + (int64_t)i;
    ir_dims_text(many, 20, buf, 32);
    ck_assert_uint_le(strlen(buf), 31);
    ck_assert_str_eq(buf + strlen(buf) - 4, "...]");
    ck_assert_str_eq(ir_dims_text(many, 20, buf, 1), "");
    ir_program *p = ir_program_new();
    ir_var *v = ir_block_var(ir_program_add_block(p, -1), "flatten_25.tmp_0");
    ir_var_set_dims(p, v, d, 2);
    ck_assert(ir_var_has_dims_below_minus_one(v));
    ck_assert_int_eq(ir_var_numel(v), -1);
    d[0] = -1;
    ir_var_set_dims(p, v, d, 2);
    ck_assert(!ir_var_has_dims_below_minus_one(v));
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("ir");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, intern_is_pointer_equal);
    tcase_add_test(tc, dims_text_and_unknown_dims);
    tcase_add_test(tc, intern_fast_path_is_exact);
    tcase_add_test(tc, intern_table_dropped_and_rebuilt);
    tcase_add_test(tc, pmap_matches_model);
    tcase_add_test(tc, pmap_stays_three_eighths_to_three_quarters_full);
    tcase_add_test(tc, pmap_homes_keep_neighbours_together);
    tcase_add_test(tc, var_lookup_and_scope);
    tcase_add_test(tc, scope_answers_from_block_0);
    tcase_add_test(tc, parent_cycle_terminates);
    tcase_add_test(tc, attrs_replace_in_place);
    tcase_add_test(tc, slots_absent_vs_empty);
    tcase_add_test(tc, splice_inserts_and_removes);
    tcase_add_test(tc, rename_reaches_sub_blocks);
    tcase_add_test(tc, clone_is_deep);
    tcase_add_test(tc, irregular_attr_round_trips);
    tcase_add_test(tc, rare_var_parts_round_trip);
    tcase_add_test(tc, op_and_slot_unknown_round_trip);
    tcase_add_test(tc, grow_in_place_at_arena_top);
    tcase_add_test(tc, big_memory_asks_for_huge_pages);
    tcase_add_test(tc, freed_arenas_lend_their_huge_chunks);
    tcase_add_test(tc, arena_told_its_size_takes_huge_chunks);
    tcase_add_test(tc, defuse_lists_positions);
    tcase_add_test(tc, xstrndup_bounds);
    suite_add_tcase(s, tc);
    return s;
}
