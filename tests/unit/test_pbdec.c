/* test_pbdec.c - the direct decoder (src/io/pbdec.c) against protobuf-c,
 * the reference: whenever pbconv_decode accepts bytes, protobuf-c must
 * accept them too (unpack, field numbers, at least one block: pdio_parse's
 * rules) and pbconv_to_ir of its message must be the same program: the
 * same binary and text form.  Checked on every program among the golden
 * tests (text ones converted to binary), the fuzz reproducers and
 * ../shared/testdata-real, on every prefix of the small ones and on every
 * one-byte change of a few.  The binary form compared is the encoder's,
 * which writes a clean op kept as read (pbdec_canon.c) as its bytes: so
 * every op the decoder keeps is checked against protobuf-c's packing; the
 * text form, made after it, decodes the attrs such an op kept as bytes. */
#include <glib.h>
#include <sys/stat.h>

#include "ir/ir_codec.h"
#include "io/pbconv.h"
#include "io/pdio.h"
#include "unit.h"

/* What pdio_parse's protobuf-c path builds, or NULL where it refuses. */
static ir_program *reference_decode(const uint8_t *data, size_t len)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(
        &paddle__framework__proto__program_desc__descriptor, NULL, len, data);
    if (!m)
        return NULL;
    ir_program *p = NULL;
    if (pbconv_field_numbers_valid(m) && ((PbProgram *)m)->n_blocks)
        p = pbconv_to_ir((PbProgram *)m);
    protobuf_c_message_free_unpacked(m, NULL);
    return p;
}

static void assert_same_form(const ir_program *a, const ir_program *b, bool text,
                             const char *what)
{
    size_t na = 0, nb = 0;
    uint8_t *sa = pdio_serialize(a, text, &na);
    uint8_t *sb = pdio_serialize(b, text, &nb);
    ck_assert_msg(na == nb && memcmp(sa, sb, na) == 0,
                  "%s: the decoders' programs differ in %s form (%zu vs %zu bytes)", what,
                  text ? "text" : "binary", na, nb);
    free(sa);
    free(sb);
}

/* Ops the fast decoder kept as their bytes (written back verbatim while
 * clean) and ops it did not (bytes the encoder would write otherwise); the
 * binary form compared below covers both. */
static size_t ops_kept, ops_not_kept, ops_pending;

/* Returns 1 when the fast decoder accepted the bytes. */
static int compare_bytes(const uint8_t *data, size_t len, const char *what)
{
    ir_program *fast = pbconv_decode(data, len);
    if (!fast)
        return 0;
    for (size_t b = 0; b < fast->n_blocks; b++)
        for (size_t i = 0; i < fast->blocks[b]->n_ops; i++) {
            bool kept = ir_enc(fast->blocks[b]->ops[i])->wire != NULL;
            ops_kept += kept;
            ops_not_kept += !kept;
            ops_pending += fast->blocks[b]->ops[i]->enc_attrs_pending_;
        }
    ir_program *ref = reference_decode(data, len);
    ck_assert_msg(ref != NULL, "%s: pbconv_decode accepts what protobuf-c refuses", what);
    assert_same_form(fast, ref, false, what);
    assert_same_form(fast, ref, true, what);
    ir_program_free(fast);
    ir_program_free(ref);
    return 1;
}

static uint8_t *binary_of(const char *path, size_t *len)
{
    ir_program *p = pdio_read(path);
    if (!p)
        return NULL;
    uint8_t *b = pdio_serialize(p, false, len);
    ir_program_free(p);
    return b;
}

static void every_prefix(const uint8_t *data, size_t len, const char *path)
{
    for (size_t n = 0; n < len; n++)
        compare_bytes(data, n, path);
}

static void every_byte_changed(const uint8_t *data, size_t len, const char *path)
{
    static const uint8_t flips[] = {0x01, 0x80, 0xff, 0x08};
    uint8_t *copy = malloc(len);
    for (size_t i = 0; i < len; i++)
        for (size_t k = 0; k < sizeof flips; k++) {
            memcpy(copy, data, len);
            copy[i] ^= flips[k];
            compare_bytes(copy, len, path);
        }
    free(copy);
}

typedef struct {
    int accepted, files;
    size_t small_budget;   /* bytes of prefixes and changes still to try */
} tally;

static void compare_file(const char *path, tally *t)
{
    size_t len = 0;
    uint8_t *b = binary_of(path, &len);
    if (!b)
        return;
    t->files++;
    t->accepted += compare_bytes(b, len, path);
    if (len < 2048 && t->small_budget >= len) {
        t->small_budget -= len;
        every_prefix(b, len, path);
        every_byte_changed(b, len, path);
    }
    free(b);
}

static void walk(const char *dir, tally *t)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    const char *name;
    while ((name = g_dir_read_name(d))) {
        gchar *path = g_build_filename(dir, name, NULL);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                walk(path, t);
            else if (S_ISREG(st.st_mode) && st.st_size < (64 << 20))
                compare_file(path, t);
        }
        g_free(path);
    }
    g_dir_close(d);
}

START_TEST(golden_programs_decode_as_protobuf_c_unpacks)
{
    tally t = {0, 0, 8000};
    ops_kept = ops_not_kept = ops_pending = 0;
    walk("tests/golden", &t);
    ck_assert_int_ge(t.files, 250);
    /* pdtrans's own output is plain protobuf: the fast path takes it all. */
    ck_assert_int_eq(t.accepted, t.files);
    /* Canonical files, and one-byte changes that make an op read back
     * differently from its bytes (a longer varint, fields swapped): both
     * kinds of op were compared with protobuf-c. */
    ck_assert_uint_ge(ops_kept, 1000);
    ck_assert_uint_ge(ops_not_kept, 10);
    /* Most kept ops kept their attrs as bytes too: the binary form wrote
     * them verbatim, the text form then decoded them (ir_op_attrs). */
    ck_assert_uint_ge(ops_pending, 500);
}
END_TEST

START_TEST(fuzz_inputs_decode_as_protobuf_c_unpacks)
{
    tally t = {0, 0, 8000};
    walk("tests/fuzz/crashes", &t);
    walk("tests/golden/fuzz_regressions", &t);
    walk("tests/golden/gate_crash_classes", &t);
    ck_assert_int_ge(t.files, 5);
}
END_TEST

/* The files as they are (not re-encoded): real files put fields in other
 * orders and carry retired fields. */
START_TEST(real_programs_decode_as_protobuf_c_unpacks)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    static const char *const names[] = {
        "ctr_dnn_selected_rows.pdmodel", "dqn_pong.pdmodel", "fit_a_line.pdmodel",
        "lac_gru_crf.pdmodel", "mobilenet_v1_int8_qat_slim.pdmodel", "ocr_db_det.pdmodel",
        "rec_join_startup.pdmodel", "ssd_mobilenet_det.pdmodel",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        gchar *path = g_build_filename(dir, names[i], NULL);
        gchar *data = NULL;
        gsize len = 0;
        ck_assert_msg(g_file_get_contents(path, &data, &len, NULL), "cannot read %s", path);
        ck_assert_msg(compare_bytes((const uint8_t *)data, len, path),
                      "%s: the fast path declines a real program", path);
        g_free(data);
        g_free(path);
    }
}
END_TEST

/* Inputs the fast path must leave to protobuf-c (which then decides). */
START_TEST(unusual_bytes_are_left_to_protobuf_c)
{
    /* blocks { idx: 0 parent_idx: -1 } with, in turn: idx twice; a packed
     * repeated field; an overlong key; a bool of two bytes; a group. */
    static const uint8_t twice[] = {0x0a, 0x0f, 0x08, 0x00, 0x08, 0x00, 0x10, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t overlong_key[] = {0x0a, 0x0e, 0x88, 0x00, 0x00, 0x10, 0xff, 0xff,
                                           0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t group[] = {0x0a, 0x0f, 0x08, 0x00, 0x10, 0x00, 0x1b, 0x1c};
    static const uint8_t no_blocks[] = {0x22, 0x00};
    /* blocks { idx: 0 parent_idx: 0 vars { name: "x" type { type: 7 } } },
     * the VarType's type as a 32-bit field: protobuf-c refuses it. */
    static const uint8_t type_fixed32[] = {0x0a, 0x10, 0x08, 0x00, 0x10, 0x00, 0x1a, 0x0a, 0x0a,
                                           0x01, 0x78, 0x12, 0x05, 0x0d, 0x07, 0x00, 0x00, 0x00};
    static const uint8_t type_varint[] = {0x0a, 0x0d, 0x08, 0x00, 0x10, 0x00, 0x1a, 0x07, 0x0a,
                                          0x01, 0x78, 0x12, 0x02, 0x08, 0x07};
    ck_assert_ptr_null(pbconv_decode(type_fixed32, sizeof type_fixed32));
    ck_assert_int_eq(compare_bytes(type_varint, sizeof type_varint, "type varint"), 1);
    ck_assert_ptr_null(pbconv_decode(twice, sizeof twice));
    ck_assert_ptr_null(pbconv_decode(overlong_key, sizeof overlong_key));
    ck_assert_ptr_null(pbconv_decode(group, sizeof group));
    ck_assert_ptr_null(pbconv_decode(no_blocks, sizeof no_blocks));
    /* The plain form of the first is taken. */
    static const uint8_t plain[] = {0x0a, 0x0d, 0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ck_assert_int_eq(compare_bytes(plain, sizeof plain, "plain"), 1);
}
END_TEST

/* A file read in place gives the pages of its VarDescs back once it is
 * decoded (nothing points into them: only ops keep their bytes), and only
 * then: bytes the fast decoder refuses go to protobuf-c whole. */
static uint8_t *many_vars_program(size_t *len)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    for (int i = 0; i < 400; i++) {
        char name[96];
        snprintf(name, sizeof name, "var_%04d_with_a_name_long_enough_to_fill_pages", i);
        ir_block_var(b, name);
        if (i % 2) {
            ir_op *op = ir_block_append_op(b, "relu");
            ir_op_set_input1(op, "X", name);
            ir_op_add_output_arg(op, "Out", name);
        }
    }
    uint8_t *bytes = pbconv_encode(p, len);
    ir_program_free(p);
    return bytes;
}

static bool has_zero_page(const uint8_t *data, size_t len)
{
    for (size_t at = 0; at + 4096 <= len; at++) {
        if (((uintptr_t)(data + at) & 4095) != 0)
            continue;
        size_t k = 0;
        while (k < 4096 && data[at + k] == 0)
            k++;
        if (k == 4096)
            return true;
    }
    return false;
}

START_TEST(decoding_in_place_gives_back_the_vars_pages)
{
    size_t len = 0;
    uint8_t *bytes = many_vars_program(&len);
    ck_assert(!has_zero_page(bytes, len));
    /* an aligned copy, as large buffers are */
    uint8_t *owned = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
    memcpy(owned, bytes, len);
    ir_program *p = pbconv_decode_owned(owned, len);
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(has_zero_page(owned, len), "no page of the vars was given back");
    size_t again_len = 0;
    uint8_t *again = pbconv_encode(p, &again_len);
    ck_assert_uint_eq(again_len, len);
    ck_assert_mem_eq(again, bytes, len);
    free(again);
    ir_program_free(p);     /* frees owned */

    /* a second block whose var has no type: refused after the first block
     * was decoded, and the bytes are left as they were */
    static const uint8_t bad_block[] = {0x0a, 0x09, 0x08, 0x01, 0x10, 0x00,
                                        0x1a, 0x03, 0x0a, 0x01, 0x78};
    size_t n = len + sizeof bad_block;
    uint8_t *refused = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    memcpy(refused, bytes, len);
    memcpy(refused + len, bad_block, sizeof bad_block);
    ck_assert_ptr_null(pbconv_decode_owned(refused, n));
    ck_assert_mem_eq(refused, bytes, len);
    free(refused);
    free(bytes);
}
END_TEST

/* Lookups in attrs kept as bytes (issue 33 point 2): on an op whose attr
 * names strictly increase the walk stops at the first name past the one
 * asked for; names before, between and after the kept ones are absent,
 * and each kept one is found, on a sorted op and on an unsorted one. */
static const char sorted_program[] =
    "blocks { idx: 0 parent_idx: -1\n"
    "  ops { type: \"s\" attrs { name: \"b\" type: INT i: 2 } "
    "attrs { name: \"d\" type: INT i: 4 } attrs { name: \"f\" type: INT i: 6 } }\n"
    "  ops { type: \"u\" attrs { name: \"f\" type: INT i: 6 } "
    "attrs { name: \"b\" type: INT i: 2 } attrs { name: \"d\" type: INT i: 4 } }\n"
    "}\n";

START_TEST(lookups_in_sorted_kept_attrs_stop_past_the_name)
{
    ir_program *t = pdio_parse("t.pbtxt", (const uint8_t *)sorted_program,
                               strlen(sorted_program));
    ck_assert_ptr_nonnull(t);
    size_t len = 0;
    uint8_t *bin = pdio_serialize(t, false, &len);
    ir_program_free(t);
    ir_program *p = pbconv_decode(bin, len);
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < 2; i++) {
        ir_op *op = p->blocks[0]->ops[i];
        ck_assert(op->enc_attrs_pending_);
        ck_assert_int_eq(op->enc_attrs_sorted_, i == 0);
        ck_assert(!ir_op_has_attr(op, "a") && !ir_op_has_attr(op, "c"));
        ck_assert(!ir_op_has_attr(op, "e") && !ir_op_has_attr(op, "g"));
        ck_assert(!ir_op_has_attr(op, "bb") && !ir_op_has_attr(op, ""));
        ck_assert(ir_op_has_attr(op, "b") && ir_op_has_attr(op, "d") && ir_op_has_attr(op, "f"));
        ck_assert_int_eq(ir_op_get_int(op, "b", 0), 2);
        ck_assert_int_eq(ir_op_get_int(op, "d", 0), 4);
        ck_assert_int_eq(ir_op_get_int(op, "f", 0), 6);
        ck_assert_int_eq(ir_op_get_int(op, "c", 9), 9);
        ck_assert_int_eq(ir_op_get_int(op, "g", 9), 9);
    }
    ir_program_free(p);
    free(bin);
}
END_TEST

/* Slots kept as bytes (issue 33 point 2): an op read from canonical bytes
 * has its slots built on first access, both lists at once; an op never
 * asked is written as its bytes with its slots never decoded; an edit
 * decodes them first.  A slot without a parameter is refused at read, as
 * protobuf-c refuses it, not left to fail later. */
static const char slots_program[] =
    "blocks { idx: 0 parent_idx: -1\n"
    "  vars { name: \"x\" type { type: LOD_TENSOR } }\n"
    "  vars { name: \"y\" type { type: LOD_TENSOR } }\n"
    "  ops { type: \"relu\" inputs { parameter: \"X\" arguments: \"x\" } "
    "outputs { parameter: \"Out\" arguments: \"y\" } }\n"
    "  ops { type: \"sum\" inputs { parameter: \"X\" arguments: \"x\" arguments: \"y\" } "
    "outputs { parameter: \"Out\" arguments: \"y\" } }\n"
    "}\n";

START_TEST(slots_stay_bytes_until_asked)
{
    ir_program *t = pdio_parse("t.pbtxt", (const uint8_t *)slots_program,
                               strlen(slots_program));
    ck_assert_ptr_nonnull(t);
    size_t len = 0;
    uint8_t *bin = pdio_serialize(t, false, &len);
    ir_program_free(t);
    ir_program *p = pbconv_decode(bin, len);
    ck_assert_ptr_nonnull(p);
    ir_op *relu = p->blocks[0]->ops[0], *sum = p->blocks[0]->ops[1];
    ck_assert(relu->enc_slots_pending_ && sum->enc_slots_pending_);
    ck_assert_uint_eq(sum->n_inputs, 1);
    ck_assert_uint_eq(sum->n_outputs, 1);
    const ir_slot *in = ir_op_ins(sum);
    ck_assert(!sum->enc_slots_pending_ && relu->enc_slots_pending_);
    ck_assert_str_eq(in[0].name, "X");
    ck_assert_uint_eq(in[0].n_args, 2);
    ck_assert_str_eq(in[0].args[0], "x");
    ck_assert_str_eq(in[0].args[1], "y");
    ck_assert_str_eq(ir_op_outs(sum)[0].args[0], "y");
    size_t n2 = 0;
    uint8_t *again = pdio_serialize(p, false, &n2);
    ck_assert(n2 == len && memcmp(again, bin, len) == 0);
    ck_assert(relu->enc_slots_pending_);   /* written from its bytes */
    free(again);
    ck_assert(ir_op_rename_output(relu, "y", "z"));
    ck_assert(!relu->enc_slots_pending_);
    ck_assert_str_eq(ir_op_output1(relu, "Out"), "z");
    ck_assert_str_eq(ir_op_input1(relu, "X"), "x");
    ir_program_free(p);
    free(bin);
    /* blocks { idx: 0 parent_idx: -1 ops { inputs { arguments: "x" } type: "t" } } */
    static const uint8_t no_param[] = {
        0x0a, 0x17, 0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x01, 0x22, 0x08, 0x0a, 0x03, 0x12, 0x01, 'x', 0x1a, 0x01, 't'};
    ck_assert_ptr_null(reference_decode(no_param, sizeof no_param));
    ck_assert_ptr_null(pbconv_decode(no_param, sizeof no_param));
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pbdec");
    TCase *tc = tcase_create("decode");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, unusual_bytes_are_left_to_protobuf_c);
    tcase_add_test(tc, decoding_in_place_gives_back_the_vars_pages);
    tcase_add_test(tc, lookups_in_sorted_kept_attrs_stop_past_the_name);
    tcase_add_test(tc, slots_stay_bytes_until_asked);
    tcase_add_test(tc, golden_programs_decode_as_protobuf_c_unpacks);
    tcase_add_test(tc, fuzz_inputs_decode_as_protobuf_c_unpacks);
    tcase_add_test(tc, real_programs_decode_as_protobuf_c_unpacks);
    suite_add_tcase(s, tc);
    return s;
}
