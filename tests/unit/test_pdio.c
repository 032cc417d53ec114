/* test_pdio.c - reading and writing programs: round trips, canonical
 * order, and every error path (missing, empty, truncated, corrupt, text
 * syntax errors, missing required fields, unwritable outputs). */
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_codec.h"
#include "io/pdio.h"
#include "unit.h"

static const char *SMALL =
    "blocks {\n"
    "  idx: 0\n"
    "  parent_idx: -1\n"
    "  vars {\n"
    "    name: \"x\"\n"
    "    type {\n"
    "      type: LOD_TENSOR\n"
    "      lod_tensor {\n"
    "        tensor {\n"
    "          data_type: FP32\n"
    "          dims: -1\n"
    "          dims: 4\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "  ops {\n"
    "    inputs {\n"
    "      parameter: \"X\"\n"
    "      arguments: \"x\"\n"
    "    }\n"
    "    outputs {\n"
    "      parameter: \"Out\"\n"
    "      arguments: \"x\"\n"
    "    }\n"
    "    type: \"relu\"\n"
    "    attrs {\n"
    "      name: \"z\"\n"
    "      type: INT\n"
    "      i: 1\n"
    "    }\n"
    "    attrs {\n"
    "      name: \"a\"\n"
    "      type: FLOAT\n"
    "      f: 0.5\n"
    "    }\n"
    "  }\n"
    "}\n";

static ir_program *parse_text(const char *text)
{
    return pdio_parse("t.pbtxt", (const uint8_t *)text, strlen(text));
}

static char *serialize_text(const ir_program *p)
{
    size_t len;
    return (char *)pdio_serialize(p, true, &len);
}

START_TEST(text_round_trip_is_identical)
{
    ir_program *p = parse_text(SMALL);
    ck_assert_ptr_nonnull(p);
    char *out = serialize_text(p);
    ck_assert_str_eq(out, SMALL);
    free(out);
    ir_program_free(p);
}
END_TEST

START_TEST(binary_round_trip_is_identical)
{
    ir_program *p = parse_text(SMALL);
    size_t len1, len2;
    uint8_t *bin = pdio_serialize(p, false, &len1);
    ir_program *q = pdio_parse("t.pb", bin, len1);
    ck_assert_ptr_nonnull(q);
    uint8_t *bin2 = pdio_serialize(q, false, &len2);
    ck_assert_uint_eq(len1, len2);
    ck_assert(memcmp(bin, bin2, len1) == 0);
    free(bin);
    free(bin2);
    ir_program_free(p);
    ir_program_free(q);
}
END_TEST

START_TEST(dirty_op_is_flushed_sorted)
{
    ir_program *p = parse_text(SMALL);
    ir_op *op = p->blocks[0]->ops[0];
    ck_assert(!op->enc_dirty_);
    ir_op_set_int(op, "m", 3);
    char *out = serialize_text(p);
    /* Paddle's OpDesc::Flush sorts attrs by name: a, m, z. */
    const char *a = strstr(out, "name: \"a\""), *m = strstr(out, "name: \"m\""),
               *z = strstr(out, "name: \"z\"");
    ck_assert(a && m && z && a < m && m < z);
    free(out);
    ir_program_free(p);
}
END_TEST

START_TEST(new_vars_follow_sorted)
{
    ir_program *p = parse_text(SMALL);
    ir_block_var(p->blocks[0], "c");
    ir_block_var(p->blocks[0], "b");
    char *out = serialize_text(p);
    const char *x = strstr(out, "name: \"x\""), *b = strstr(out, "name: \"b\""),
               *c = strstr(out, "name: \"c\"");
    ck_assert(x && b && c && x < b && b < c);
    free(out);
    ir_program_free(p);
}
END_TEST

START_TEST(rejects_empty_and_garbage)
{
    ck_assert_ptr_null(pdio_parse("e.pb", (const uint8_t *)"", 0));
    const uint8_t garbage[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08};
    ck_assert_ptr_null(pdio_parse("g.pb", garbage, sizeof garbage));
    const uint8_t bad_wire[] = {0x0f, 0x01};
    ck_assert_ptr_null(pdio_parse("w.pb", bad_wire, sizeof bad_wire));
    /* blocks { idx: 0 } without the required parent_idx */
    const uint8_t no_parent[] = {0x0a, 0x02, 0x08, 0x00};
    ck_assert_ptr_null(pdio_parse("r.pb", no_parent, sizeof no_parent));
    /* the same with parent_idx: -1 is a valid program */
    const uint8_t ok[] = {0x0a, 0x0d, 0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ir_program *p = pdio_parse("ok.pb", ok, sizeof ok);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->blocks[0]->parent_idx, -1);
    ir_program_free(p);
}
END_TEST

START_TEST(rejects_truncated_binary)
{
    ir_program *p = parse_text(SMALL);
    size_t len;
    uint8_t *bin = pdio_serialize(p, false, &len);
    for (size_t cut = 1; cut < len; cut += 3) {
        ir_program *q = pdio_parse("cut.pb", bin, cut);
        /* Any cut inside the single block message leaves it incomplete. */
        ck_assert_msg(q == NULL, "cut at %zu accepted", cut);
    }
    free(bin);
    ir_program_free(p);
}
END_TEST

START_TEST(rejects_text_errors)
{
    ck_assert_ptr_null(parse_text("blocks { idx: 0 parent_idx: -1 "));
    ck_assert_ptr_null(parse_text("blocks { idx: zero parent_idx: -1 }"));
    ck_assert_ptr_null(parse_text("blokcs { idx: 0 parent_idx: -1 }"));
    /* required parent_idx missing */
    ck_assert_ptr_null(parse_text("blocks { idx: 0 }"));
    /* a program needs at least one block */
    ck_assert_ptr_null(parse_text("# nothing\n"));
}
END_TEST

START_TEST(missing_file_fails)
{
    ck_assert_ptr_null(pdio_read("/nonexistent/dir/x.pb"));
}
END_TEST

START_TEST(failed_write_leaves_nothing)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char good[256], bad[256];
    snprintf(good, sizeof good, "%s/a.pb", dir);
    snprintf(bad, sizeof bad, "%s/missing/b.pb", dir);
    ir_program *p = parse_text(SMALL);
    pdio_batch *b = pdio_batch_new(true);
    ck_assert_int_eq(pdio_batch_add_program(b, good, p, false), 0);
    ck_assert_int_eq(pdio_batch_add_program(b, bad, p, false), 0);
    ck_assert_int_ne(pdio_batch_commit(b), 0);
    pdio_batch_free(b);
    /* The folder must be empty again: no a.pb, no temporaries. */
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
}
END_TEST

START_TEST(batch_writes_all)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[256], t[256];
    snprintf(a, sizeof a, "%s/a.pb", dir);
    snprintf(t, sizeof t, "%s/a.pbtxt", dir);
    ir_program *p = parse_text(SMALL);
    ck_assert_int_eq(pdio_write(p, a, false, true), 0);
    ck_assert_int_eq(pdio_write(p, t, true, true), 0);
    ir_program *q = pdio_read(a);
    ir_program *r = pdio_read(t);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(q->blocks[0]->n_ops, 1);
    ck_assert_uint_eq(r->blocks[0]->n_vars, 1);
    unlink(a);
    unlink(t);
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
    ir_program_free(q);
    ir_program_free(r);
}
END_TEST

/* Fields the schema does not know survive a round trip at every level the
 * IR carries them: program, block, var, var type, op, slot, attr. */
static const char *UNKNOWNS =
    "blocks {\n"
    "  idx: 0\n"
    "  parent_idx: -1\n"
    "  vars {\n"
    "    name: \"x\"\n"
    "    type {\n"
    "      type: READER\n"
    "      reader {\n"
    "        lod_tensor {\n"
    "          tensor {\n"
    "            data_type: FP32\n"
    "            dims: 3\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "      tuple {\n"
    "        element_type: INT64\n"
    "      }\n"
    "      99: 5\n"
    "    }\n"
    "    98: \"v\"\n"
    "  }\n"
    "  ops {\n"
    "    inputs {\n"
    "      parameter: \"X\"\n"
    "      arguments: \"x\"\n"
    "      9: 1\n"
    "    }\n"
    "    type: \"noop\"\n"
    "    attrs {\n"
    "      name: \"a\"\n"
    "      type: INT\n"
    "      i: 1\n"
    "      77: 0x00000001\n"
    "    }\n"
    "    66 {\n"
    "      1: 2\n"
    "    }\n"
    "  }\n"
    "  55: 7\n"
    "}\n"
    "version {\n"
    "  version: 0\n"
    "}\n"
    "3 {\n"
    "  1: \"old\"\n"
    "}\n";

START_TEST(unknown_fields_survive)
{
    ir_program *p = parse_text(UNKNOWNS);
    ck_assert_ptr_nonnull(p);
    char *out = serialize_text(p);
    ck_assert_str_eq(out, UNKNOWNS);
    free(out);
    /* ... also when the op is rewritten and the program cloned */
    ir_program *q = ir_program_clone(p);
    ir_op_set_int(q->blocks[0]->ops[0], "b", 2);
    out = serialize_text(q);
    ck_assert_ptr_nonnull(strstr(out, "      77: 0x00000001\n"));
    ck_assert_ptr_nonnull(strstr(out, "    66 {\n"));
    ck_assert_ptr_nonnull(strstr(out, "      99: 5\n"));
    free(out);
    ir_program_free(p);
    ir_program_free(q);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pdio");
    TCase *tc = tcase_create("io");
    tcase_add_test(tc, text_round_trip_is_identical);
    tcase_add_test(tc, binary_round_trip_is_identical);
    tcase_add_test(tc, dirty_op_is_flushed_sorted);
    tcase_add_test(tc, new_vars_follow_sorted);
    tcase_add_test(tc, rejects_empty_and_garbage);
    tcase_add_test(tc, rejects_truncated_binary);
    tcase_add_test(tc, rejects_text_errors);
    tcase_add_test(tc, missing_file_fails);
    tcase_add_test(tc, failed_write_leaves_nothing);
    tcase_add_test(tc, batch_writes_all);
    tcase_add_test(tc, unknown_fields_survive);
    suite_add_tcase(s, tc);
    return s;
}
