/* test_pbenc.c - the direct encoder (src/io/pbenc.c) against protobuf-c,
 * the reference: for every program among the golden tests' inputs and
 * expected outputs, the fuzz reproducers and ../shared/testdata-real, the
 * bytes of pbconv_encode must equal protobuf_c_message_pack of the message
 * pbconv_from_ir builds; as read, and again with every op dirty and every
 * var counted as added (so the sorted orders are compared too). */
#include <glib.h>
#include <sys/stat.h>

#include "io/pbconv.h"
#include "io/pdio.h"
#include "unit.h"

static uint8_t *reference_pack(const ir_program *p, size_t *len)
{
    pbconv_out out = {ir_arena_new(), 0, 0, NULL};
    PbProgram *msg = pbconv_from_ir(p, &out);
    *len = protobuf_c_message_get_packed_size(&msg->base);
    uint8_t *buf = malloc(*len + 1);
    protobuf_c_message_pack(&msg->base, buf);
    pbconv_release(&out);
    ir_arena_free(out.scratch);
    return buf;
}

/* Which file and which variant differ, and where. */
static void assert_same_bytes(const ir_program *p, const char *path, const char *variant)
{
    size_t nr = 0, ne = 0;
    uint8_t *ref = reference_pack(p, &nr);
    uint8_t *enc = pbconv_encode(p, &ne);
    size_t at = 0;
    while (at < nr && at < ne && ref[at] == enc[at])
        at++;
    ck_assert_msg(nr == ne && at == nr,
                  "%s (%s): protobuf-c packs %zu bytes, pbconv_encode %zu; first difference "
                  "at byte %zu", path, variant, nr, ne, at);
    free(ref);
    free(enc);
}

static void mark_all_edited(ir_program *p)
{
    for (size_t b = 0; b < p->n_blocks; b++) {
        ir_block *blk = p->blocks[b];
        for (size_t i = 0; i < blk->n_ops; i++)
            blk->ops[i]->dirty = true;
        for (size_t i = 0; i < blk->n_vars; i++)
            blk->vars[i]->from_input = false;
    }
}

/* Compares one file if it holds a program; returns 1 if it did. */
static int compare_file(const char *path)
{
    ir_program *p = pdio_read(path);
    if (!p)
        return 0;
    assert_same_bytes(p, path, "as read");
    mark_all_edited(p);
    assert_same_bytes(p, path, "every op dirty, every var added");
    ir_program_free(p);
    return 1;
}

static int walk(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return 0;
    int n = 0;
    const char *name;
    while ((name = g_dir_read_name(d))) {
        gchar *path = g_build_filename(dir, name, NULL);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                n += walk(path);
            else if (S_ISREG(st.st_mode) && st.st_size < (64 << 20))
                n += compare_file(path);
        }
        g_free(path);
    }
    g_dir_close(d);
    return n;
}

START_TEST(golden_programs_encode_as_protobuf_c_packs)
{
    int n = walk("tests/golden");
    /* 33 binary inputs and about 300 text files are programs. */
    ck_assert_int_ge(n, 250);
}
END_TEST

START_TEST(fuzz_reproducers_encode_as_protobuf_c_packs)
{
    /* Most reproducers are refused on purpose; one binary one is a program. */
    int n = walk("tests/fuzz/crashes");
    ck_assert_int_ge(n, 1);
}
END_TEST

START_TEST(real_programs_encode_as_protobuf_c_packs)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    ck_assert_int_ge(walk(dir), 18);
}
END_TEST

/* Values whose encoding has a catch: negative int32 and enum (ten bytes),
 * field numbers above 15 (two-byte keys), a non-ASCII byte, NaN, unknown
 * fields at every level, an attr holding a second kind of value. */
static const char edge_program[] =
    "blocks {\n"
    "  idx: 0\n  parent_idx: -1\n  forward_block_idx: -7\n"
    "  vars { name: \"x\" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: -1 "
    "dims: 9223372036854775807 99: 5 } lod_level: -3 98: \"u\" } 97: 1 } persistable: true "
    "attrs { name: \"a\" type: INT i: -2 ints: -5 } 96: 2 }\n"
    "  ops { type: \"t\" inputs { parameter: \"X\" arguments: \"x\" 95: 3 } "
    "attrs { name: \"neg\" type: INT i: -1 } "
    "attrs { name: \"f\" type: FLOAT f: nan } "
    "attrs { name: \"s\" type: STRING s: \"a\\377b\" } "
    "attrs { name: \"l\" type: LONG l: -9223372036854775808 } "
    "attrs { name: \"v\" type: VARS vars_name: \"x\" vars_name: \"\" } "
    "attrs { name: \"d\" type: FLOAT64 float64: -0.0 i: 4 } "
    "attrs { name: \"sc\" type: SCALAR scalar { type: COMPLEX128 c { r: 1 i: -1 } 94: 4 } } "
    "attrs { name: \"e\" type: SCALARS scalars { type: LONG i: -1 } scalars { type: BOOLEAN b: true } } "
    "attrs { name: \"bad\" type: 1000 bools: true float64s: 2.5 93: \"z\" } "
    "is_target: false 92: 6 }\n"
    "  91: 7\n"
    "}\n"
    "version { version: -1 90: 8 }\n"
    "89: 9\n";

START_TEST(edge_values_encode_as_protobuf_c_packs)
{
    ir_program *p = pdio_parse("edge.pbtxt", (const uint8_t *)edge_program,
                               strlen(edge_program));
    ck_assert_ptr_nonnull(p);
    assert_same_bytes(p, "edge.pbtxt", "as read");
    /* A pass's edits: a new op with a negative attr, a new var. */
    ir_op *op = ir_block_append_op(p->blocks[0], "new");
    ir_op_set_int(op, "z", -4);
    ir_op_set_string(op, "a", "");
    ir_op_set_input1(op, "Y", "x");
    ir_op_set_input1(op, "B", "x");
    ir_block_var(p->blocks[0], "added");
    assert_same_bytes(p, "edge.pbtxt", "after edits");
    mark_all_edited(p);
    assert_same_bytes(p, "edge.pbtxt", "every op dirty, every var added");
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pbenc");
    TCase *tc = tcase_create("encode");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, edge_values_encode_as_protobuf_c_packs);
    tcase_add_test(tc, golden_programs_encode_as_protobuf_c_packs);
    tcase_add_test(tc, fuzz_reproducers_encode_as_protobuf_c_packs);
    tcase_add_test(tc, real_programs_encode_as_protobuf_c_packs);
    suite_add_tcase(s, tc);
    return s;
}
