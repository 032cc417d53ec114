/* test_pdio_files.c - the file side of src/io: the input size cap, the
 * naming of temporaries, and output sets that are refused or undone
 * without touching the files already there.  Device nodes, FIFOs and the
 * failure-injection sweep are in tests/golden/output_*. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "io/pbconv.h"
#include "io/pdio.h"
#include "io/pdio_fs.h"
#include "unit.h"

static const char *ONE_OP =
    "blocks { idx: 0 parent_idx: -1 vars { name: \"x\" type { type: LOD_TENSOR } }"
    " ops { type: \"relu\" inputs { parameter: \"X\" arguments: \"x\" }"
    " outputs { parameter: \"Out\" arguments: \"x\" } } }\n";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static char *read_file(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

START_TEST(size_values_parse)
{
    uint64_t v = 0;
    ck_assert(pdio_parse_size("1", &v) && v == 1);
    ck_assert(pdio_parse_size("4096", &v) && v == 4096);
    ck_assert(pdio_parse_size("3k", &v) && v == 3072);
    ck_assert(pdio_parse_size("2M", &v) && v == 2u << 20);
    ck_assert(pdio_parse_size("2G", &v) && v == UINT64_C(2) << 30);
    ck_assert(pdio_parse_size("4194304G", &v) && v == UINT64_C(1) << 52);
    const char *bad[] = {"", "0", "0K", "-1", "+1", " 1", "1 ", "1KB", "1T", "1.5M", "K",
                         "99999999999999999999", "4294967297G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!pdio_parse_size(bad[i], &v), "'%s' accepted", bad[i]);
    ck_assert(!pdio_parse_size(NULL, &v));
}
END_TEST

START_TEST(input_cap_is_inclusive)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/p.pbtxt", dir);
    write_file(path, ONE_OP);
    uint64_t size = strlen(ONE_OP);
    pdio_set_max_input_size(size - 1);
    ck_assert_ptr_null(pdio_read(path));
    pdio_set_max_input_size(size);
    ir_program *p = pdio_read(path);
    ck_assert_ptr_nonnull(p);
    ir_program_free(p);
    pdio_set_max_input_size(PDIO_DEFAULT_MAX_INPUT);
    ck_assert_uint_eq(pdio_max_input_size(), UINT64_C(2147483648));
    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(temporary_names_are_recognised)
{
    char *t = fs_temp_template("out/pserver_0.pb", "tmp");
    char expect[128];
    snprintf(expect, sizeof expect, "out/.pserver_0.pb.pdtrans-tmp-%ld-XXXXXX", (long)getpid());
    ck_assert_str_eq(t, expect);
    memcpy(t + strlen(t) - 6, "a1B2c3", 6);
    long pid = 0;
    ck_assert(fs_is_own_temp(t + 4, &pid));
    ck_assert_int_eq(pid, (long)getpid());
    char *b = fs_backup_name(t);
    ck_assert_ptr_nonnull(strstr(b, ".pdtrans-bak-"));
    ck_assert(fs_is_own_temp(b + 4, &pid));
    free(b);
    free(t);
    const char *not_ours[] = {"x.pb", ".x.pdtrans-tmp-12-abcde", ".x.pdtrans-tmp-12-abcdefg",
                              ".x.pdtrans-tmp--abcdef", "x.pdtrans-tmp-12-abcdef",
                              ".x.pdtrans-old-12-abcdef", ".x.pdtrans-tmp-12-abc.ef",
                              ".pdtrans-tmp-12-abcdef"};
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++)
        ck_assert_msg(!fs_is_own_temp(not_ours[i], &pid), "'%s' taken as ours", not_ours[i]);
}
END_TEST

START_TEST(folders_of_paths)
{
    const char *cases[][2] = {{"a.pb", "."}, {"/a.pb", "/"}, {"x/y/a.pb", "x/y"}, {"x/", "x"}};
    for (size_t i = 0; i < 4; i++) {
        char *d = fs_folder_of(cases[i][0]);
        ck_assert_str_eq(d, cases[i][1]);
        free(d);
    }
}
END_TEST

/* Links are followed relative to their own folder, in chains; a dangling
 * link and a loop give NULL with the reason in errno. */
START_TEST(links_are_followed)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[256], real[256], a[256], b[256], d[256], l1[256], l2[256];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(real, sizeof real, "%s/sub/real.pb", dir);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/sub/b", dir);
    snprintf(d, sizeof d, "%s/dangling", dir);
    snprintf(l1, sizeof l1, "%s/l1", dir);
    snprintf(l2, sizeof l2, "%s/l2", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    write_file(real, "x");
    ck_assert_int_eq(symlink("sub/b", a), 0);       /* a -> sub/b -> real.pb */
    ck_assert_int_eq(symlink("real.pb", b), 0);
    ck_assert_int_eq(symlink("nowhere", d), 0);
    ck_assert_int_eq(symlink("l2", l1), 0);
    ck_assert_int_eq(symlink("l1", l2), 0);
    char *r = fs_follow_links(a);
    char expect[300];
    snprintf(expect, sizeof expect, "%s/sub/real.pb", dir);
    ck_assert_str_eq(r, expect);
    free(r);
    r = fs_follow_links(real);
    ck_assert_str_eq(r, real);
    free(r);
    errno = 0;
    ck_assert_ptr_null(fs_follow_links(d));
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_null(fs_follow_links(l1));
    ck_assert_int_eq(errno, ELOOP);
    const char *all[] = {a, b, d, l1, l2, real};
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(unlink(all[i]), 0);
    ck_assert_int_eq(rmdir(sub), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A set whose second target is a folder is refused before the first file
 * is touched: the old a.pb keeps its bytes and no temporary appears. */
START_TEST(folder_target_refused_before_any_write)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[256], sub[256];
    snprintf(a, sizeof a, "%s/a.pb", dir);
    snprintf(sub, sizeof sub, "%s/b.pb", dir);
    write_file(a, "old");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ir_program *p = pdio_parse("t", (const uint8_t *)ONE_OP, strlen(ONE_OP));
    ck_assert_ptr_nonnull(p);
    pdio_batch *b = pdio_batch_new(true);
    ck_assert_int_eq(pdio_batch_add_program(b, a, p, false), PDT_OK);
    ck_assert_int_eq(pdio_batch_add_program(b, sub, p, false), PDT_OK);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_EBADINPUT);
    pdio_batch_free(b);
    ck_assert_str_eq(read_file(a), "old");
    ck_assert_uint_eq(count_entries(dir), 2);
    ck_assert_int_eq(rmdir(sub), 0);
    unlink(a);
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
}
END_TEST

/* A replaced file keeps its permissions; a new file gets 0666 & ~umask. */
START_TEST(replacement_keeps_mode)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[256], n[256];
    snprintf(a, sizeof a, "%s/a.pbtxt", dir);
    snprintf(n, sizeof n, "%s/n.pbtxt", dir);
    write_file(a, "old");
    ck_assert_int_eq(chmod(a, 0604), 0);
    ir_program *p = pdio_parse("t", (const uint8_t *)ONE_OP, strlen(ONE_OP));
    mode_t mask = umask(022);
    ck_assert_int_eq(pdio_write(p, a, true, true), PDT_OK);
    ck_assert_int_eq(pdio_write(p, n, true, true), PDT_OK);
    umask(mask);
    struct stat st;
    ck_assert_int_eq(stat(a, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0604);
    ck_assert_int_eq(stat(n, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    ck_assert_ptr_nonnull(strstr(read_file(a), "relu"));
    ck_assert_uint_eq(count_entries(dir), 2);
    unlink(a);
    unlink(n);
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
}
END_TEST

/* A folder the batch was asked to create is gone again after a failure. */
START_TEST(created_folders_removed_on_failure)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char out[256], file[256], clash[256];
    snprintf(out, sizeof out, "%s/x/y", dir);
    snprintf(file, sizeof file, "%s/x/y/a.pb", dir);
    snprintf(clash, sizeof clash, "%s/x/y/a.pb", dir);
    ir_program *p = pdio_parse("t", (const uint8_t *)ONE_OP, strlen(ONE_OP));
    pdio_batch *b = pdio_batch_new(true);
    pdio_batch_create_folder(b, out);
    pdio_batch_add_program(b, file, p, false);
    pdio_batch_add_program(b, clash, p, false);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_EBADINPUT);  /* written twice */
    pdio_batch_free(b);
    ck_assert_uint_eq(count_entries(dir), 0);
    b = pdio_batch_new(true);
    pdio_batch_create_folder(b, "");
    pdio_batch_add_program(b, file, p, false);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_EBADINPUT);
    pdio_batch_free(b);
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
}
END_TEST

/* A plain batch encodes a binary program when it commits, straight into
 * the temporary through the encoder's chunk: nothing is in the folder
 * after the add, and the file then holds pbconv_encode's bytes, here
 * over three chunks. */
START_TEST(plain_batch_encodes_into_the_file_at_commit)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[256];
    snprintf(a, sizeof a, "%s/a.pb", dir);
    GString *t = g_string_new("blocks { idx: 0 parent_idx: -1 ");
    for (int i = 0; i < 8000; i++)
        g_string_append_printf(t, "vars { name: \"var_%06d\" type { type: LOD_TENSOR "
                               "lod_tensor { tensor { data_type: FP32 dims: %d } } } }", i, i);
    g_string_append(t, "}\n");
    ir_program *p = pdio_parse("t", (const uint8_t *)t->str, t->len);
    g_string_free(t, true);
    ck_assert_ptr_nonnull(p);
    size_t len = 0;
    uint8_t *want = pbconv_encode(p, &len);
    ck_assert_uint_gt(len, 3 * PBCONV_CHUNK);
    pdio_batch *b = pdio_batch_new(true);
    ck_assert_int_eq(pdio_batch_add_program(b, a, p, false), PDT_OK);
    ck_assert_uint_eq(count_entries(dir), 0);
    ck_assert_int_eq(pdio_batch_commit(b), PDT_OK);
    pdio_batch_free(b);
    gchar *got = NULL;
    gsize got_len = 0;
    ck_assert(g_file_get_contents(a, &got, &got_len, NULL));
    ck_assert(got_len == len && memcmp(got, want, len) == 0);
    g_free(got);
    free(want);
    unlink(a);
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pdio_files");
    TCase *tc = tcase_create("files");
    tcase_add_test(tc, size_values_parse);
    tcase_add_test(tc, input_cap_is_inclusive);
    tcase_add_test(tc, temporary_names_are_recognised);
    tcase_add_test(tc, folders_of_paths);
    tcase_add_test(tc, links_are_followed);
    tcase_add_test(tc, folder_target_refused_before_any_write);
    tcase_add_test(tc, replacement_keeps_mode);
    tcase_add_test(tc, created_folders_removed_on_failure);
    tcase_add_test(tc, plain_batch_encodes_into_the_file_at_commit);
    suite_add_tcase(s, tc);
    return s;
}
