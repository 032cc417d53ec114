/* test_pdio_files.c - the file side of src/io: the input size cap, the
 * naming of temporaries, and output sets that are refused or undone
 * without touching the files already there.  Device nodes, FIFOs and the
 * failure-injection sweep are in tests/golden/output_*. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "io/pbconv.h"
#include "io/pdio.h"
#include "io/pdio_fs.h"
#include "io/pdio_map.h"
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

/* The program of text T, which it frees. */
static ir_program *parse_text(GString *t)
{
    ir_program *p = pdio_parse("t", (const uint8_t *)t->str, t->len);
    g_string_free(t, true);
    ck_assert_ptr_nonnull(p);
    return p;
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
    ir_program *p = parse_text(t);
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

/* ---- inputs mapped instead of read (pdio_map.c) ---- */

/* A binary program of about 3 pages, written to PATH. */
static void write_binary_input(const char *path)
{
    GString *t = g_string_new("blocks { idx: 0 parent_idx: -1 ");
    for (int i = 0; i < 300; i++)
        g_string_append_printf(t, "vars { name: \"var_%06d\" type { type: LOD_TENSOR } } ", i);
    for (int i = 0; i < 300; i++)
        g_string_append_printf(t, "ops { type: \"relu\" inputs { parameter: \"X\" arguments: "
                               "\"var_%06d\" } outputs { parameter: \"Out\" arguments: "
                               "\"var_%06d\" } } ", i, i);
    g_string_append(t, "}\n");
    ir_program *p = parse_text(t);
    size_t len = 0;
    uint8_t *bytes = pbconv_encode(p, &len);
    ck_assert_uint_gt(len, 3 * 4096);
    ck_assert(g_file_set_contents(path, (const char *)bytes, (gssize)len, NULL));
    free(bytes);
    ir_program_free(p);
}

/* A new folder DIR (a mkdtemp template) holding such a program as IN. */
static void make_input_dir(char *dir, char in[256])
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(in, 256, "%s/in.pb", dir);
    write_binary_input(in);
}

/* Removes IN and DIR, which must hold nothing else. */
static void remove_input_dir(const char *dir, const char *in)
{
    unlink(in);
    ck_assert_int_eq(rmdir(dir), 0);
}

/* What a child read, kept reachable: it ends by exit or a signal, and
 * valgrind counts what it left as leaked. */
static ir_program *volatile child_program;

/* Runs FN(dir) in a child with stderr going to DIR/err; its wait status,
 * and what it wrote to stderr in ERR. */
static int in_child(void (*fn)(const char *), const char *dir, char *err, size_t cap)
{
    char path[300];
    snprintf(path, sizeof path, "%s/err", dir);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        FILE *f = freopen(path, "w", stderr);
        if (!f)
            _exit(99);
        setvbuf(stderr, NULL, _IONBF, 0);
        pdt_quiet = false;
        fn(dir);
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    gchar *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    snprintf(err, cap, "%s", text);
    g_free(text);
    unlink(path);
    return status;
}

START_TEST(binary_input_is_mapped_until_its_program_goes)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    char in[256];
    make_input_dir(dir, in);
    ir_program *p = pdio_read(in);
    ck_assert_ptr_nonnull(p);
    void *bytes = p->input_bytes;
    ck_assert(bytes && pdio_is_mapped(bytes));
    ck_assert_ptr_eq(pdio_inputs_changed(), NULL);
    ir_program_free(p);
    ck_assert(!pdio_is_mapped(bytes));
    remove_input_dir(dir, in);
}
END_TEST

/* The child: reads DIR/in.pb, rewrites it in place (same bytes, a new
 * modification time), then commits an output: refused. */
static void rewrite_then_commit(const char *dir)
{
    char in[256], out[256];
    snprintf(in, sizeof in, "%s/in.pb", dir);
    snprintf(out, sizeof out, "%s/out.pb", dir);
    ir_program *p = child_program = pdio_read(in);
    if (!p)
        _exit(90);
    gchar *bytes = NULL;
    gsize len = 0;
    if (!g_file_get_contents(in, &bytes, &len, NULL))
        _exit(91);
    FILE *f = fopen(in, "r+b");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
        _exit(92);
    g_free(bytes);
    pdio_batch *b = pdio_batch_new(true);
    pdio_batch_add_program(b, out, p, false);
    int rc = pdio_batch_commit(b);
    pdio_batch_free(b);
    ir_program_free(p);
    _exit(rc);
}

START_TEST(input_rewritten_while_mapped_stops_the_outputs)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    char in[256], err[2048], want[512];
    make_input_dir(dir, in);
    /* An old modification time, so that the rewrite surely changes it. */
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, in, old, 0), 0);
    int status = in_child(rewrite_then_commit, dir, err, sizeof err);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), PDT_EBADINPUT);
    snprintf(want, sizeof want,
             "pdtrans: error: %s: the file changed while pdtrans was using it; "
             "no output written\n", in);
    ck_assert_str_eq(err, want);
    ck_assert_uint_eq(count_entries(dir), 1);   /* in.pb alone */
    remove_input_dir(dir, in);
}
END_TEST

/* The child: a streaming batch writes one output's temporary; the input
 * then shrinks to nothing and the next output reads its bytes. */
static void shrink_while_writing(const char *dir)
{
    char in[256], out1[256], out2[256];
    snprintf(in, sizeof in, "%s/in.pb", dir);
    snprintf(out1, sizeof out1, "%s/one.pb", dir);
    snprintf(out2, sizeof out2, "%s/two.pb", dir);
    ir_program *p = child_program = pdio_read(in);
    if (!p)
        _exit(90);
    pdio_batch *b = pdio_batch_new(true);
    pdio_batch_stream(b);
    if (pdio_batch_add_program(b, out1, p, false) != PDT_OK)
        _exit(91);
    if (truncate(in, 0) != 0)
        _exit(92);
    pdio_batch_add_program(b, out2, p, false);
    _exit(93);  /* not reached: reading the bytes raised SIGBUS */
}

START_TEST(input_shrinking_while_mapped_ends_the_run_cleanly)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    char in[256], err[2048], want[512];
    make_input_dir(dir, in);
    int status = in_child(shrink_while_writing, dir, err, sizeof err);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), PDT_EBADINPUT);
    snprintf(want, sizeof want,
             "pdtrans: error: %s: cannot read: the file shrank while pdtrans was using it "
             "(or the device failed); no output written\n", in);
    ck_assert_str_eq(err, want);
    ck_assert_uint_eq(count_entries(dir), 1);   /* one.pb's temporary is gone */
    remove_input_dir(dir, in);
}
END_TEST

/* The child: maps an input (the handler is set), then gets a SIGBUS that
 * is not about it: the default action, not pdtrans's message. */
static void foreign_sigbus(const char *dir)
{
    char in[256];
    snprintf(in, sizeof in, "%s/in.pb", dir);
    if (!(child_program = pdio_read(in)))
        _exit(90);
    raise(SIGBUS);
    _exit(91);
}

START_TEST(other_sigbus_keeps_the_default_action)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    char in[256], err[2048];
    make_input_dir(dir, in);
    int status = in_child(foreign_sigbus, dir, err, sizeof err);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_eq(WTERMSIG(status), SIGBUS);
    ck_assert_str_eq(err, "");
    remove_input_dir(dir, in);
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
    tcase_add_test(tc, binary_input_is_mapped_until_its_program_goes);
    tcase_add_test(tc, input_rewritten_while_mapped_stops_the_outputs);
    tcase_add_test(tc, input_shrinking_while_mapped_ends_the_run_cleanly);
    tcase_add_test(tc, other_sigbus_keeps_the_default_action);
    suite_add_tcase(s, tc);
    return s;
}
