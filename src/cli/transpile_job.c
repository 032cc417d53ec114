/* transpile_job.c - what the transpile command does about its output
 * folder: one job per folder (the stale-file check and --clean), the
 * per-role manifest with its job id and file hashes, and --print-files
 * (--role=all's every trainer is the job's: src/job/job.c).  README.md,
 * "Output folders". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../io/pdio_job.h"
#include "../ir/util.h"
#include "../passes/transpile/placement.h"
#include "transpile_cli.h"

const pdt_option tcli_job_options[] = {
    {.name = "clean", .type = PDT_OPT_FLAG, .offset = offsetof(tcli_opts, clean),
     .help = "remove pdtrans outputs of another job from the output folder, in the same "
             "atomic landing (without it such a folder is refused)"},
    {.name = "print-files", .type = PDT_OPT_FLAG, .offset = offsetof(tcli_opts, print_files),
     .help = "print the paths written, one per line, on stdout"},
};
const size_t tcli_n_job_options = sizeof tcli_job_options / sizeof *tcli_job_options;

/* The position of --endpoint in --pservers; -1 when there is none. */
static long pserver_index(const pdt_transpile_opts *t)
{
    for (size_t i = 0; t->endpoint && i < t->pservers.n; i++)
        if (strcmp(t->pservers.items[i], t->endpoint) == 0)
            return (long)i;
    return -1;
}

const char *tcli_manifest_name(const pdt_ctx *ctx)
{
    const pdt_transpile_opts *t = &ctx->transpile;
    if (t->role == PDT_ROLE_ALL)
        return "manifest.json";
    if (t->role == PDT_ROLE_TRAINER)
        return ir_internf("manifest.trainer_%d.json", t->trainer_id);
    long k = pserver_index(t);
    return k < 0 ? "manifest.pserver.json" : ir_internf("manifest.pserver_%ld.json", k);
}

int tcli_check_folder(const tcli_opts *o, const char *job, GPtrArray **stale)
{
    pdio_recover_folder(o->out_dir);
    GPtrArray *found = pdio_job_stale(o->out_dir, job);
    if (!found->len || o->clean) {
        *stale = found;
        return PDT_OK;
    }
    GString *list = g_string_new(NULL);
    for (guint i = 0; i < found->len && i < 8; i++)
        g_string_append_printf(list, "%s%s", i ? ", " : "", (char *)g_ptr_array_index(found, i));
    if (found->len > 8)
        g_string_append_printf(list, " and %u more", found->len - 8);
    pdt_error("%s: holds outputs of another job (%s); give --clean to remove them as this "
              "job's files land, or write into another folder", o->out_dir, list->str);
    g_string_free(list, TRUE);
    g_ptr_array_unref(found);
    return PDT_EBADINPUT;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void tcli_remove_stale(const tcli_opts *o, pdio_batch *b, GPtrArray *stale)
{
    GHashTable *written = g_hash_table_new(g_str_hash, g_str_equal);
    const char *path, *sha;
    bool removed;
    for (size_t i = 0; pdio_batch_file(b, i, &path, &sha, &removed); i++)
        g_hash_table_add(written, (gpointer)base_of(path));
    if (o->ctx->manifest)
        g_hash_table_add(written, (gpointer)tcli_manifest_name(o->ctx));
    for (guint i = 0; stale && i < stale->len; i++) {
        const char *name = g_ptr_array_index(stale, i);
        if (g_hash_table_contains(written, name))
            continue;
        char *p = g_strdup_printf("%s/%s", o->out_dir, name);
        pdio_batch_remove(b, p);
        g_free(p);
    }
    g_hash_table_destroy(written);
}

char *tcli_manifest_final(const char *manifest, const char *job, const pdio_batch *b)
{
    size_t n = strlen(manifest);
    /* The manifest writer ends with "\n}\n" (manifest_json.c). */
    GString *g = g_string_new_len(manifest, n >= 3 ? (gssize)(n - 3) : 0);
    g_string_append_printf(g, ",\n  \"job\": \"%s\",\n  \"sha256\": {", job);
    const char *path, *sha;
    bool removed, first = true;
    for (size_t i = 0; pdio_batch_file(b, i, &path, &sha, &removed); i++) {
        if (removed || !sha)
            continue;
        g_string_append(g, first ? "\n    " : ",\n    ");
        cli_json_string(g, base_of(path));
        g_string_append_printf(g, ": \"%s\"", sha);
        first = false;
    }
    g_string_append(g, first ? "}\n}\n" : "\n  }\n}\n");
    return g_string_free(g, FALSE);
}

int tcli_print_files(const pdio_batch *b)
{
    const char *path, *sha;
    bool removed;
    for (size_t i = 0; pdio_batch_file(b, i, &path, &sha, &removed); i++)
        if (!removed)
            printf("%s\n", path);
    if (fflush(stdout) != 0) {
        pdt_error("cannot write to standard output");
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}
