/* test_params.c - Paddle's parameter files: byte-exact round trips of the
 * three real models (both layouts), and every truncation and corruption
 * refused with an error instead of a crash. */
#include <glib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/params.h"
#include "io/pdio.h"
#include "ir/tensors.h"
#include "unit.h"

#define PARAMS "../shared/testdata-real/params/"

static uint8_t *slurp(const char *path, size_t *len)
{
    gchar *data = NULL;
    gsize n = 0;
    if (!g_file_get_contents(path, &data, &n, NULL))
        return NULL;
    *len = n;
    return (uint8_t *)data;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    uint8_t *x = slurp(a, &la), *y = slurp(b, &lb);
    ck_assert_msg(x && y, "cannot read %s or %s", a, b);
    ck_assert_msg(la == lb && memcmp(x, y, la) == 0, "%s differs from %s", b, a);
    g_free(x);
    g_free(y);
}

static char *scratch_dir(void)
{
    char tmpl[] = "/tmp/pdt-params-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    return g_strdup(tmpl);
}

static void remove_tree(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, e, NULL);
        unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    rmdir(dir);
}

/* Per-var folder: every file written again is the file read. */
static void round_trip_dir(const char *model, size_t want_vars)
{
    char *src = g_strconcat(PARAMS, model, NULL);
    char *prog = g_strconcat(src, "/__model__", NULL);
    ir_program *p = pdio_read(prog);
    ck_assert_ptr_nonnull(p);
    ir_tensors *t = params_read_dir(p, src);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(ir_tensors_count(t), want_vars);
    char *out = scratch_dir();
    pdio_batch *b = pdio_batch_new(false);
    ck_assert_int_eq(params_add_dir(b, p, t, out), PDT_OK);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_OK);
    pdio_batch_free(b);
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    ck_assert_uint_eq(n, want_vars);
    for (size_t i = 0; i < n; i++) {
        char *a = g_build_filename(src, vars[i]->name, NULL);
        char *c = g_build_filename(out, vars[i]->name, NULL);
        assert_same_file(a, c);
        g_free(a);
        g_free(c);
    }
    g_free(vars);
    remove_tree(out);
    g_free(out);
    ir_tensors_free(t);
    ir_program_free(p);
    g_free(prog);
    g_free(src);
}

START_TEST(resnet_per_var_files_round_trip_byte_exact)
{
    if (!unit_shared_dir())
        return;
    round_trip_dir("resnet_cifar10_book", 167);
}
END_TEST

START_TEST(gesture_per_var_files_round_trip_byte_exact)
{
    if (!unit_shared_dir())
        return;
    round_trip_dir("gesiannet_gesture", 66);
}
END_TEST

START_TEST(ocr_combined_file_round_trips_byte_exact)
{
    if (!unit_shared_dir())
        return;
    const char *src = PARAMS "ppocr_mobile_v2_cls/inference.pdiparams";
    ir_program *p = pdio_read(PARAMS "ppocr_mobile_v2_cls/inference.pdmodel");
    ck_assert_ptr_nonnull(p);
    ir_tensors *t = params_read_combined(p, src);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(ir_tensors_count(t), 213);
    char *out = scratch_dir();
    char *file = g_build_filename(out, "params", NULL);
    pdio_batch *b = pdio_batch_new(false);
    ck_assert_int_eq(params_add_combined(b, p, t, file), PDT_OK);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_OK);
    pdio_batch_free(b);
    assert_same_file(src, file);
    /* ... and the per-var layout holds the same records, one per file. */
    b = pdio_batch_new(false);
    ck_assert_int_eq(params_add_dir(b, p, t, out), PDT_OK);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_OK);
    pdio_batch_free(b);
    unlink(file);
    ir_tensors *again = params_read_dir(p, out);
    ck_assert_ptr_nonnull(again);
    ck_assert_uint_eq(ir_tensors_count(again), 213);
    ir_tensors_free(again);
    g_free(file);
    remove_tree(out);
    g_free(out);
    ir_tensors_free(t);
    ir_program_free(p);
}
END_TEST

static ir_program *one_var_program(int type, int dtype, const int64_t *dims, size_t n)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_var *v = ir_block_var(b, "w");
    v->type = type;
    v->tensor_slot = type == IR_SELECTED_ROWS ? IR_TD_SELECTED_ROWS : IR_TD_LOD_TENSOR;
    v->dtype = dtype;
    v->persistable = true;
    ir_var_set_dims(p, v, dims, n);
    return p;
}

/* The worked example of the note's §8: FP32 [2, 3], 50 bytes. */
START_TEST(record_layout_is_the_notes_worked_example)
{
    int64_t dims[] = {2, 3};
    ir_program *p = one_var_program(IR_LOD_TENSOR, IR_FP32, dims, 2);
    ir_tensors *s = ir_tensors_new();
    ir_tensor *t = ir_tensors_put(s, "w");
    ck_assert(ir_tensor_alloc(t, IR_FP32, dims, 2));
    for (size_t i = 0; i < 6; i++)
        ir_tensor_set_f32(t, i, (float)i);
    GByteArray *rec = g_byte_array_new();
    params_encode_record(t, rec);
    static const uint8_t head[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   6, 0, 0, 0, 0x08, 0x05, 0x10, 0x02, 0x10, 0x03};
    ck_assert_uint_eq(rec->len, 50);
    ck_assert_mem_eq(rec->data, head, sizeof head);
    ir_tensor back = {0};
    size_t off = 0;
    ck_assert_int_eq(params_decode_record("m", ir_block_find_var(p->blocks[0], "w"),
                                          rec->data, rec->len, &off, &back), PDT_OK);
    ck_assert_uint_eq(off, 50);
    ck_assert_mem_eq(back.data, t->data, 24);
    free(back.dims);
    free(back.data);
    free(back.lod);
    free(back.lod_len);
    g_byte_array_free(rec, TRUE);
    ir_tensors_free(s);
    ir_program_free(p);
}
END_TEST

static int decode_bytes(const ir_program *p, const uint8_t *data, size_t len)
{
    ir_tensors *s = ir_tensors_new();
    size_t off = 0;
    int rc = params_decode_record("f", ir_block_find_var(p->blocks[0], "w"), data, len,
                                  &off, ir_tensors_put(s, "w"));
    ir_tensors_free(s);
    return rc;
}

/* Every prefix of a record with LoD, and of a SelectedRows record, is refused. */
START_TEST(every_truncation_is_refused)
{
    int64_t dims[] = {3, 2};
    for (int sr = 0; sr < 2; sr++) {
        ir_program *p = one_var_program(sr ? IR_SELECTED_ROWS : IR_LOD_TENSOR, IR_INT64,
                                        dims, 2);
        ir_tensors *s = ir_tensors_new();
        ir_tensor *t = ir_tensors_put(s, "w");
        ck_assert(ir_tensor_alloc(t, IR_INT64, dims, 2));
        if (sr) {
            t->selected_rows = true;
            t->n_rows = 3;
            t->rows = malloc(3 * sizeof *t->rows);
            for (int i = 0; i < 3; i++)
                t->rows[i] = 7 * i;
            t->height = 40;
        } else {
            t->n_lod = 1;
            t->lod_len = malloc(sizeof *t->lod_len);
            t->lod = malloc(sizeof *t->lod);
            t->lod_len[0] = 3;
            t->lod[0] = malloc(3 * sizeof **t->lod);
            t->lod[0][0] = 0, t->lod[0][1] = 1, t->lod[0][2] = 3;
        }
        GByteArray *rec = g_byte_array_new();
        params_encode_record(t, rec);
        ck_assert_int_eq(decode_bytes(p, rec->data, rec->len), PDT_OK);
        for (size_t cut = 0; cut < rec->len; cut++)
            ck_assert_int_eq(decode_bytes(p, rec->data, cut), PDT_EBADINPUT);
        g_byte_array_free(rec, TRUE);
        ir_tensors_free(s);
        ir_program_free(p);
    }
}
END_TEST

START_TEST(corrupt_fields_are_refused)
{
    int64_t dims[] = {2, 3};
    ir_program *p = one_var_program(IR_LOD_TENSOR, IR_FP32, dims, 2);
    uint8_t good[50] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                        6, 0, 0, 0, 0x08, 0x05, 0x10, 0x02, 0x10, 0x03};
    ck_assert_int_eq(decode_bytes(p, good, 50), PDT_OK);
    uint8_t bad[50];
    struct { size_t at; uint8_t v; } cases[] = {
        {0, 1},      /* LoDTensor version 1 */
        {12, 1},     /* tensor version 1 */
        {19, 0x80},  /* negative desc length */
        {16, 40},    /* desc longer than the record */
        {21, 0x04},  /* FP16: not what the program declares */
        {21, 0x63},  /* an unknown data type */
        {25, 0x04},  /* dims [2, 4]: data too short, and not the declared shape */
        {20, 0xff},  /* not a TensorDesc */
        {4, 0x02},   /* two LoD levels that are not there */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(bad, good, 50);
        bad[cases[i].at] = cases[i].v;
        ck_assert_msg(decode_bytes(p, bad, 50) == PDT_EBADINPUT, "case %zu accepted", i);
    }
    /* A var of a type without a tensor record (a Vocab) is refused, not misread. */
    ir_block_find_var(p->blocks[0], "w")->type = IR_VOCAB;
    ck_assert_int_eq(decode_bytes(p, good, 50), PDT_EBADINPUT);
    ir_program_free(p);
}
END_TEST

START_TEST(combined_file_with_trailing_bytes_is_refused)
{
    int64_t dims[] = {2, 3};
    ir_program *p = one_var_program(IR_LOD_TENSOR, IR_FP32, dims, 2);
    char *dir = scratch_dir();
    char *file = g_build_filename(dir, "params", NULL);
    uint8_t rec[51] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                       6, 0, 0, 0, 0x08, 0x05, 0x10, 0x02, 0x10, 0x03};
    ck_assert(g_file_set_contents(file, (const char *)rec, 50, NULL));
    ir_tensors *t = params_read_combined(p, file);
    ck_assert_ptr_nonnull(t);
    ir_tensors_free(t);
    ck_assert(g_file_set_contents(file, (const char *)rec, 51, NULL));
    ck_assert_ptr_null(params_read_combined(p, file));
    unlink(file);
    ck_assert_ptr_null(params_read_combined(p, file));
    ck_assert_ptr_null(params_read_dir(p, dir));
    g_free(file);
    remove_tree(dir);
    g_free(dir);
    ir_program_free(p);
}
END_TEST

/* Every dtype Paddle writes survives encode and decode, with its element size. */
START_TEST(every_dtype_round_trips)
{
    static const int dtypes[] = {0, 1, 2, 3, 4, 5, 6, 19, 20, 21, 22, 23, 24, 32, 33, 37, 38};
    int64_t dims[] = {3, 5};
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++) {
        ir_program *p = one_var_program(IR_LOD_TENSOR, dtypes[i], dims, 2);
        ir_tensors *s = ir_tensors_new();
        ir_tensor *t = ir_tensors_put(s, "w");
        ck_assert(ir_tensor_alloc(t, dtypes[i], dims, 2));
        ck_assert_uint_eq(t->nbytes, 15 * ir_dtype_size(dtypes[i]));
        for (size_t k = 0; k < t->nbytes; k++)
            t->data[k] = (uint8_t)(k * 7 + i);
        GByteArray *rec = g_byte_array_new();
        params_encode_record(t, rec);
        ir_tensor back = {0};
        size_t off = 0;
        ck_assert_int_eq(params_decode_record("m", ir_block_find_var(p->blocks[0], "w"),
                                              rec->data, rec->len, &off, &back), PDT_OK);
        ck_assert_uint_eq(off, rec->len);
        ck_assert_int_eq(back.dtype, dtypes[i]);
        ck_assert_uint_eq(back.nbytes, t->nbytes);
        ck_assert_mem_eq(back.data, t->data, t->nbytes);
        GByteArray *again = g_byte_array_new();
        params_encode_record(&back, again);
        ck_assert_uint_eq(again->len, rec->len);
        ck_assert_mem_eq(again->data, rec->data, rec->len);
        free(back.dims);
        free(back.data);
        free(back.lod);
        free(back.lod_len);
        g_byte_array_free(again, TRUE);
        g_byte_array_free(rec, TRUE);
        ir_tensors_free(s);
        ir_program_free(p);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("params");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, resnet_per_var_files_round_trip_byte_exact);
    tcase_add_test(tc, gesture_per_var_files_round_trip_byte_exact);
    tcase_add_test(tc, ocr_combined_file_round_trips_byte_exact);
    tcase_add_test(tc, record_layout_is_the_notes_worked_example);
    tcase_add_test(tc, every_truncation_is_refused);
    tcase_add_test(tc, every_dtype_round_trips);
    tcase_add_test(tc, corrupt_fields_are_refused);
    tcase_add_test(tc, combined_file_with_trailing_bytes_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
