/* test_stream.c - streamed outputs (issue 14 point 4): a streaming
 * pdio_batch writes each file to its temporary when it is added and still
 * lands the set together or not at all; the pipeline hands each output to
 * the command's sink once no later pass reads or prints it, so the
 * pservers are written and freed before the trainer is built. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/pdio.h"
#include "cli/cli.h"
#include "passes/pass.h"
#include "unit.h"
#include "transpile_fixture.h"

static const char *BASIC = "tests/golden/transpile_basic/in/main.pbtxt";
static const char *BASIC_STARTUP = "tests/golden/transpile_basic/in/startup.pbtxt";

static const char *ONE_OP =
    "blocks { idx: 0 parent_idx: -1 vars { name: \"x\" type { type: LOD_TENSOR } }"
    " ops { type: \"relu\" inputs { parameter: \"X\" arguments: \"x\" }"
    " outputs { parameter: \"Out\" arguments: \"x\" } } }\n";

/* Entries of DIR: how many, and how many are pdtrans temporaries. */
static size_t count_entries(const char *dir, size_t *temps)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    *temps = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        *temps += strstr(e->d_name, ".pdtrans-tmp-") != NULL;
    }
    closedir(d);
    return n;
}

static bool file_is(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

START_TEST(streaming_batch_writes_each_file_when_added)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char out[256], a[300], b[300];
    snprintf(out, sizeof out, "%s/x/y", dir);
    snprintf(a, sizeof a, "%s/a.pbtxt", out);
    snprintf(b, sizeof b, "%s/b.pbtxt", out);
    ir_program *p = pdio_parse("t", (const uint8_t *)ONE_OP, strlen(ONE_OP));
    size_t len = 0, temps = 0;
    char *text = (char *)pdio_serialize(p, true, &len);
    pdio_batch *batch = pdio_batch_new(true);
    pdio_batch_stream(batch);
    pdio_batch_create_folder(batch, out);
    char parent[300];
    snprintf(parent, sizeof parent, "%s/x", dir);
    ck_assert_int_eq(pdio_batch_add_program(batch, a, p, true), PDT_OK);
    /* a's temporary is written now, into the new folder being built beside
     * its place (x/.y.pdtrans-dir-*, issue 27 point 5): y itself appears
     * only at the commit, with one rename. */
    ck_assert_int_ne(access(out, F_OK), 0);
    ck_assert_uint_eq(count_entries(parent, &temps), 1);
    ck_assert_int_eq(pdio_batch_add_program(batch, b, p, true), PDT_OK);
    ck_assert_int_ne(access(out, F_OK), 0);
    ck_assert_int_eq(pdio_batch_commit(batch), PDT_OK);
    pdio_batch_free(batch);
    ck_assert_uint_eq(count_entries(parent, &temps), 1);
    ck_assert_uint_eq(count_entries(out, &temps), 2);
    ck_assert_uint_eq(temps, 0);
    ck_assert(file_is(a, text));
    ck_assert(file_is(b, text));

    /* Never committed (a later output failed to build): nothing is left,
     * not even the folders it made. */
    unlink(a);
    unlink(b);
    rmdir(out);
    snprintf(out, sizeof out, "%s/x", dir);
    rmdir(out);
    snprintf(out, sizeof out, "%s/x/y", dir);
    batch = pdio_batch_new(true);
    pdio_batch_stream(batch);
    pdio_batch_create_folder(batch, out);
    ck_assert_int_eq(pdio_batch_add_program(batch, a, p, true), PDT_OK);
    ck_assert_uint_eq(count_entries(parent, &temps), 1);
    pdio_batch_free(batch);
    ck_assert_uint_eq(count_entries(dir, &temps), 0);
    ck_assert_int_eq(rmdir(dir), 0);
    free(text);
    ir_program_free(p);
}
END_TEST

/* A target refused on its add takes back the temporaries written before
 * it: the old file keeps its bytes, and the commit fails too. */
START_TEST(streaming_batch_refusal_takes_back_earlier_files)
{
    char dir[] = "/tmp/pdt_unit_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[256], sub[256];
    snprintf(a, sizeof a, "%s/a.pb", dir);
    snprintf(sub, sizeof sub, "%s/b.pb", dir);
    FILE *f = fopen(a, "w");
    ck_assert_ptr_nonnull(f);
    fputs("old", f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ir_program *p = pdio_parse("t", (const uint8_t *)ONE_OP, strlen(ONE_OP));
    size_t temps = 0;
    pdio_batch *batch = pdio_batch_new(true);
    pdio_batch_stream(batch);
    ck_assert_int_eq(pdio_batch_add_program(batch, a, p, false), PDT_OK);
    ck_assert_uint_eq(count_entries(dir, &temps), 3);
    ck_assert_int_eq(pdio_batch_add_program(batch, sub, p, false), PDT_EBADINPUT);
    ck_assert_uint_eq(count_entries(dir, &temps), 2);
    ck_assert_uint_eq(temps, 0);
    ck_assert_int_eq(pdio_batch_add_program(batch, a, p, false), PDT_EBADINPUT);
    ck_assert_int_eq(pdio_batch_commit(batch), PDT_EBADINPUT);
    pdio_batch_free(batch);
    ck_assert(file_is(a, "old"));
    ck_assert_uint_eq(count_entries(dir, &temps), 2);
    ck_assert_int_eq(rmdir(sub), 0);
    unlink(a);
    ck_assert_int_eq(rmdir(dir), 0);
    ir_program_free(p);
}
END_TEST

/* What the sink saw: each output's stem and text, and whether the input
 * main program still had its ops (the trainer not yet built). */
typedef struct {
    pdt_ctx *ctx;
    size_t n;
    const char *stem[8];
    char *text[8];
    bool before_trainer[8];
    int fail_at;        /* the n-th call (from 1) fails; 0: none */
} sink_log;

static int record(void *arg, const char *stem, const ir_program *p)
{
    sink_log *l = arg;
    ck_assert_uint_lt(l->n, 8);
    const ir_program *m = l->ctx->main;
    size_t len = 0;
    l->stem[l->n] = stem;
    l->text[l->n] = (char *)pdio_serialize(p, true, &len);
    l->before_trainer[l->n] = m->n_blocks && m->blocks[0]->n_ops;
    return ++l->n == (size_t)l->fail_at ? PDT_EBADINPUT : PDT_OK;
}

static void log_free(sink_log *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->text[i]);
}

static int run_transpile(pdt_ctx *ctx, sink_log *log, const char *print_after)
{
    tpf_load(ctx, BASIC, BASIC_STARTUP);
    log->ctx = ctx;
    ctx->settings.write_output = record;
    ctx->settings.write_output_arg = log;
    ctx->settings.print_after = print_after;
    ctx->settings.print_ops = true;
    const char *pass = ir_intern("transpile");
    /* --print-after writes to stderr: kept out of the test's output. */
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    char junk[] = "/tmp/pdt_unit_XXXXXX";
    int fd = mkstemp(junk);
    ck_assert_int_ge(fd, 0);
    dup2(fd, STDERR_FILENO);
    int rc = pdt_run_pipeline(ctx, &pass, 1);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    unlink(junk);
    return rc;
}

/* The pservers are written as they are built, before the trainer exists;
 * the trainer's programs, built last, are written at the end of the run,
 * before manifest.json is made, so that the two are never alive together:
 * nothing is left for the command but the manifest. */
START_TEST(pipeline_streams_pservers_then_the_trainer)
{
    pdt_ctx plain;
    tpf_load(&plain, BASIC, BASIC_STARTUP);
    const char *pass = ir_intern("transpile");
    ck_assert_int_eq(pdt_run_pipeline(&plain, &pass, 1), PDT_OK);
    ck_assert_uint_eq(plain.n_outputs, 6);

    pdt_ctx ctx;
    sink_log log = {0};
    ck_assert_int_eq(run_transpile(&ctx, &log, NULL), PDT_OK);
    const char *want[] = {"pserver_0", "pserver_0.startup", "pserver_1", "pserver_1.startup",
                          "trainer_0", "trainer_0.startup"};
    ck_assert_uint_eq(log.n, 6);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq(log.stem[i], want[i]);
        ck_assert(log.before_trainer[i] == (i < 4));
        size_t len = 0;
        char *same = (char *)pdio_serialize(tpf_output(&plain, want[i]), true, &len);
        ck_assert_str_eq(log.text[i], same);
        free(same);
    }
    ck_assert_uint_eq(ctx.n_outputs, 0);
    ck_assert_ptr_nonnull(ctx.manifest);
    char *streamed = cli_manifest_json(ctx.manifest, NULL);
    char *kept = cli_manifest_json(plain.manifest, NULL);
    ck_assert_str_eq(streamed, kept);
    g_free(streamed);
    g_free(kept);
    log_free(&log);
    pdt_ctx_free(&ctx);
    pdt_ctx_free(&plain);
}
END_TEST

/* A later --print-after shows every output built so far, so nothing is
 * streamed before it (only after the printing pass); a failing sink ends
 * the run with no outputs. */
START_TEST(pipeline_keeps_what_a_later_pass_prints)
{
    pdt_ctx ctx;
    sink_log log = {0};
    ck_assert_int_eq(run_transpile(&ctx, &log, "delete_optimizer"), PDT_OK);
    ck_assert_uint_eq(log.n, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert(!log.before_trainer[i]);
    ck_assert_str_eq(log.stem[4], "trainer_0");
    ck_assert_uint_eq(ctx.n_outputs, 0);
    log_free(&log);
    pdt_ctx_free(&ctx);

    sink_log early = {0};
    ck_assert_int_eq(run_transpile(&ctx, &early, "build_pserver_startup"), PDT_OK);
    ck_assert_uint_eq(early.n, 6);
    ck_assert(early.before_trainer[0] && early.before_trainer[3]);
    log_free(&early);
    pdt_ctx_free(&ctx);

    sink_log failing = {.fail_at = 2};
    ck_assert_int_eq(run_transpile(&ctx, &failing, NULL), PDT_EBADINPUT);
    ck_assert_uint_eq(failing.n, 2);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    log_free(&failing);
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *t = tcase_create("stream");
    tcase_add_test(t, streaming_batch_writes_each_file_when_added);
    tcase_add_test(t, streaming_batch_refusal_takes_back_earlier_files);
    tcase_add_test(t, pipeline_streams_pservers_then_the_trainer);
    tcase_add_test(t, pipeline_keeps_what_a_later_pass_prints);
    suite_add_tcase(s, t);
    return s;
}
