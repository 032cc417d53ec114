/* verify_job_sha256.c - `verify job DIR` checks that DIR holds what one
 * transpile job wrote, before any semantic check: every manifest names the
 * same "job", every file a manifest's "sha256" map lists is there with
 * that SHA-256, and every program verify job reads is listed by some
 * manifest.  Without it a pserver_0.pb edited by hand (or copied in from
 * another job) that still verifies would pass as the transpile's.
 *
 * The programs are hashed as they are read: cli_vj_load maps the file
 * once, hashes the bytes and parses the same bytes (pdio_parse) only when
 * the hash matches, so an edited file that no longer parses is reported as
 * edited, not as a bad ProgramDesc.  Listed files verify job does not read
 * are hashed by cli_vj_rest before the check runs.
 *
 * Manifests without "job" and "sha256" (manifest_version 1, written by a
 * pdtrans before job ids) cannot be checked: a folder of only such
 * manifests gets one warning and is verified as found; one mixed with
 * manifests that name a job is two jobs' outputs, refused, as transpile
 * refuses such a folder.  A manifest_version 2 manifest always ends with
 * both keys, so one without them was edited, refused too. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "cli.h"

/* One "sha256" entry: which manifest lists the file with which hash. */
typedef struct {
    const char *manifest;               /* interned */
    char hex[65];
} vj_entry;

typedef struct {
    GArray *entries;                    /* vj_entry: more than one manifest may list it */
    bool checked;
} vj_file;

struct cli_vj_sums {
    const char *dir;
    char *job;                          /* of the first manifest naming one */
    const char *job_manifest;           /* that manifest (interned) */
    const char *legacy;                 /* the first manifest naming no job, or NULL */
    GHashTable *files;                  /* name -> vj_file */
};

static void file_free(gpointer p)
{
    vj_file *f = p;
    g_array_free(f->entries, TRUE);
    free(f);
}

cli_vj_sums *cli_vj_sums_new(const char *dir)
{
    cli_vj_sums *s = xcalloc(1, sizeof *s);
    s->dir = dir;
    s->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_free);
    return s;
}

void cli_vj_sums_free(cli_vj_sums *s)
{
    if (!s)
        return;
    g_hash_table_destroy(s->files);
    free(s->job);
    free(s);
}

static bool is_hex64(const char *v)
{
    if (!v || strlen(v) != 64)
        return false;
    for (const char *c = v; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return false;
    return true;
}

/* A file name of the folder: what transpile lists (no folder part), so
 * that a manifest cannot send the check outside DIR. */
static bool plain_name(const char *k)
{
    return *k && !strchr(k, '/') && strcmp(k, ".") && strcmp(k, "..");
}

/* The two keys' shape; NULL when right, else what is wrong. */
static const char *tail_shape(json_t *job, json_t *map, long long version)
{
    if (!job && !map)
        return version >= 2 ? " has no job and no sha256 map, which every manifest_version 2 "
                              "manifest ends with (edited after transpile?)" : NULL;
    if (!json_is_string(job) || !is_hex64(json_string_value(job)))
        return job ? "'s job is not 64 lower-case hex digits" : " has a sha256 map but no job";
    if (!json_is_object(map))
        return map ? "'s sha256 is not an object" : " names a job but has no sha256 map";
    const char *k;
    json_t *v;
    json_object_foreach(map, k, v) {
        if (!plain_name(k))
            return "'s sha256 map lists a name that is not a file of the folder";
        if (!is_hex64(json_string_value(v)))
            return "'s sha256 map has a value that is not 64 lower-case hex digits";
    }
    return NULL;
}

static void add_entries(cli_vj_sums *s, const char *name, json_t *map)
{
    const char *k;
    json_t *v;
    json_object_foreach(map, k, v) {
        vj_file *f = g_hash_table_lookup(s->files, k);
        if (!f) {
            f = xcalloc(1, sizeof *f);
            f->entries = g_array_new(FALSE, TRUE, sizeof(vj_entry));
            g_hash_table_insert(s->files, g_strdup(k), f);
        }
        vj_entry e = {.manifest = name};
        memcpy(e.hex, json_string_value(v), 65);
        g_array_append_val(f->entries, e);
    }
}

bool cli_vj_sums_add(cli_vj_sums *s, const char *name, json_t *m)
{
    name = ir_intern(name);
    json_t *job = json_object_get(m, "job"), *map = json_object_get(m, "sha256");
    json_t *ver = json_object_get(m, "manifest_version");
    const char *bad = tail_shape(job, map, json_is_integer(ver) ? json_integer_value(ver) : 1);
    if (bad) {
        pdt_error("%s/%s: the manifest%s", s->dir, name, bad);
        return false;
    }
    const char *id = json_string_value(job);
    if (!id && !s->legacy)
        s->legacy = name;
    if (id && !s->job) {
        s->job = xstrdup(id);
        s->job_manifest = name;
    }
    if (s->job && s->legacy) {
        pdt_error("%s: %s names job %.12s... but %s names none (written by an older pdtrans): "
                  "outputs of two jobs in one folder", s->dir, s->job_manifest, s->job,
                  s->legacy);
        return false;
    }
    if (id && strcmp(id, s->job)) {
        pdt_error("%s: %s is of job %.12s... but %s of job %.12s...: outputs of two jobs in one "
                  "folder", s->dir, name, id, s->job_manifest, s->job);
        return false;
    }
    if (map)
        add_entries(s, name, map);
    return true;
}

void cli_vj_sums_done(cli_vj_sums *s)
{
    if (s->legacy)
        pdt_warning("%s: the manifests name no job and no sha256 map (written by a pdtrans "
                    "before job ids): the programs are verified as found, not checked against "
                    "what transpile wrote", s->dir);
}

/* NAME's bytes (NULL after a message), checked against F's entries. */
static uint8_t *read_checked(cli_vj_sums *s, const char *name, vj_file *f, size_t *len)
{
    char *path = g_build_filename(s->dir, name, NULL);
    const vj_entry *e0 = &g_array_index(f->entries, vj_entry, 0);
    struct stat st;
    uint8_t *data = NULL;
    if (stat(path, &st) != 0 && errno == ENOENT)
        pdt_error("%s: listed in %s's sha256 map, but missing (removed after transpile?)", path,
                  e0->manifest);
    else
        data = pdio_read_input(path, "", len);
    char hex[65];
    if (data)
        pdio_sha256_hex(data, *len, hex);
    for (guint i = 0; data && i < f->entries->len; i++) {
        const vj_entry *e = &g_array_index(f->entries, vj_entry, i);
        if (strcmp(hex, e->hex)) {
            pdt_error("%s: sha256 differs from %s's entry (edited or replaced after "
                      "transpile?)", path, e->manifest);
            pdio_release_input(data);
            data = NULL;
        }
    }
    f->checked = true;
    g_free(path);
    return data;
}

ir_program *cli_vj_load(void *ctx, const char *name)
{
    cli_vj_sums *s = ctx;
    vj_file *f = g_hash_table_lookup(s->files, name);
    char *path = g_build_filename(s->dir, name, NULL);
    ir_program *p = NULL;
    if (s->legacy) {
        p = pdio_read(path);
    } else if (!f) {
        pdt_error("%s: named in the manifests' files, but no manifest's sha256 map lists it "
                  "(not written by the job's transpile?)", path);
    } else {
        size_t len = 0;
        uint8_t *data = read_checked(s, name, f, &len);
        p = data ? pdio_parse(path, data, len) : NULL;
        pdio_release_input(data);
    }
    g_free(path);
    return p;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool cli_vj_rest(cli_vj_sums *s)
{
    GPtrArray *names = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, s->files);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (!((vj_file *)v)->checked)
            g_ptr_array_add(names, k);
    g_ptr_array_sort(names, by_name);
    bool ok = true;
    for (guint i = 0; ok && i < names->len; i++) {
        const char *name = names->pdata[i];
        size_t len = 0;
        uint8_t *data = read_checked(s, name, g_hash_table_lookup(s->files, name), &len);
        ok = data != NULL;
        pdio_release_input(data);
    }
    g_ptr_array_free(names, TRUE);
    return ok;
}
