/* pdio_job.c - folders of transpile outputs (pdio_job.h): stale files of
 * another job, and `pdtrans check DIR`. */
#include "pdio_job.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../ir/util.h"
#include "pdio.h"

static bool digits(const char **s)
{
    const char *start = *s;
    while (**s >= '0' && **s <= '9')
        (*s)++;
    return *s > start;
}

bool pdio_job_output_name(const char *name)
{
    size_t n = strlen(name);
    if (strncmp(name, "manifest.", 9) == 0)
        return n >= 13 && strcmp(name + n - 5, ".json") == 0 && !strchr(name, '/');
    const char *s = name;
    if (strncmp(s, "pserver_", 8) == 0)
        s += 8;
    else if (strncmp(s, "trainer_", 8) == 0)
        s += 8;
    else
        return false;
    if (!digits(&s))
        return false;
    if (strncmp(s, ".startup", 8) == 0)
        s += 8;
    return strcmp(s, ".pb") == 0 || strcmp(s, ".pbtxt") == 0;
}

static bool is_manifest(const char *name)
{
    return strncmp(name, "manifest.", 9) == 0;
}

/* The keys a manifest ends with ("job", "sha256"), parsed from the last
 * "job" line on: a manifest can be megabytes of params before them. */
static json_t *manifest_tail(const char *path)
{
    gchar *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL))
        return NULL;
    const char *key = "\n  \"job\": ";
    const char *at = NULL;
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key))
        at = p;
    json_t *tail = NULL;
    if (at) {
        GString *obj = g_string_new("{");
        g_string_append_len(obj, at, (gssize)(text + len - at));
        tail = json_loads(obj->str, 0, NULL);
        g_string_free(obj, TRUE);
    }
    g_free(text);
    if (tail && (!json_is_string(json_object_get(tail, "job")) ||
                 !json_is_object(json_object_get(tail, "sha256")))) {
        json_decref(tail);
        tail = NULL;
    }
    return tail;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static GPtrArray *output_names(const char *dir)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    DIR *d = opendir(dir);
    if (!d)
        return names;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (pdio_job_output_name(e->d_name))
            g_ptr_array_add(names, g_strdup(e->d_name));
    closedir(d);
    g_ptr_array_sort(names, by_name);
    return names;
}

GPtrArray *pdio_job_stale(const char *dir, const char *job)
{
    GPtrArray *names = output_names(dir);
    GPtrArray *stale = g_ptr_array_new_with_free_func(g_free);
    GHashTable *owned = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        if (!is_manifest(name))
            continue;
        char *path = g_build_filename(dir, name, NULL);
        json_t *tail = manifest_tail(path);
        g_free(path);
        if (tail && strcmp(json_string_value(json_object_get(tail, "job")), job) == 0) {
            const char *file;
            json_t *v;
            json_object_foreach(json_object_get(tail, "sha256"), file, v)
                g_hash_table_add(owned, g_strdup(file));
            g_hash_table_add(owned, g_strdup(name));
        }
        json_decref(tail);
    }
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        if (!g_hash_table_contains(owned, name))
            g_ptr_array_add(stale, g_strdup(name));
    }
    g_hash_table_destroy(owned);
    g_ptr_array_unref(names);
    return stale;
}

static bool file_sha256(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    struct sha256_ctx c;
    sha256_init(&c);
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sha256_update(&c, n, buf);
    bool ok = !ferror(f);
    fclose(f);
    uint8_t md[SHA256_DIGEST_SIZE];
    sha256_digest(&c, sizeof md, md);
    for (size_t i = 0; i < sizeof md; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return ok;
}

static long check_manifest(const char *dir, const char *name, FILE *out)
{
    char *path = g_build_filename(dir, name, NULL);
    json_t *tail = manifest_tail(path);
    long problems = 0;
    if (!tail) {
        fprintf(out, "%s: names no job and no file hashes (written by an older pdtrans?)\n",
                path);
        problems++;
    }
    const char *file;
    json_t *v;
    json_object_foreach(json_object_get(tail, "sha256"), file, v) {
        char *fp = g_build_filename(dir, file, NULL);
        char hex[65];
        if (!file_sha256(fp, hex)) {
            fprintf(out, "%s: listed in %s, but cannot be read: %s\n", fp, name,
                    strerror(errno));
            problems++;
        } else if (!json_is_string(v) || strcmp(hex, json_string_value(v)) != 0) {
            fprintf(out, "%s: does not match %s (sha256 %s, the manifest says %s)\n", fp,
                    name, hex, json_is_string(v) ? json_string_value(v) : "nothing");
            problems++;
        }
        g_free(fp);
    }
    json_decref(tail);
    g_free(path);
    return problems;
}

long pdio_job_check(const char *dir, FILE *out)
{
    DIR *d = opendir(dir);
    if (!d) {
        pdt_error("%s: cannot read the folder: %s", dir, strerror(errno));
        return -1;
    }
    closedir(d);
    long problems = 0;
    if (pdio_folder_interrupted(dir)) {
        fprintf(out, "%s: a run was killed while putting its files in place; the next run "
                "into the folder puts back the set before it\n", dir);
        problems++;
    }
    GPtrArray *names = output_names(dir);
    size_t manifests = 0;
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        if (!is_manifest(name))
            continue;
        manifests++;
        problems += check_manifest(dir, name, out);
    }
    if (!manifests && names->len) {
        fprintf(out, "%s: holds pdtrans outputs but no manifest\n", dir);
        problems++;
    }
    g_ptr_array_unref(names);
    return problems;
}

/* ---- the params table (manifest_version 2) read back as objects ---- */

static json_t *shape_with_rows(const json_t *shape, json_int_t rows, bool whole)
{
    if (whole)
        return json_deep_copy(shape);
    json_t *s = json_array();
    json_array_append_new(s, json_integer(rows));
    for (size_t d = 1; d < json_array_size(shape); d++)
        json_array_append_new(s, json_deep_copy(json_array_get(shape, d)));
    return s;
}

static json_int_t width_of(const json_t *shape)
{
    json_int_t w = 1;
    for (size_t d = 1; d < json_array_size(shape); d++)
        w *= json_integer_value(json_array_get(shape, d));
    return w;
}

/* The slices of var NAME (shape SHAPE) cut as the param's slices ROWS are:
 * a var in one slice keeps its name and shape; in N > 1, slice k is
 * NAME.block<k>, dim 0 cut.  A grad's slices hold the elements of its
 * param's (same offsets), so their rows are counted in elements. */
static json_t *expand_slices(const char *name, const json_t *shape, const json_t *slices,
                             json_int_t pwidth, const json_t *pservers)
{
    json_t *out = json_array();
    size_t n = json_array_size(slices);
    json_int_t width = width_of(shape), offset = 0;
    for (size_t k = 0; k < n; k++) {
        const json_t *s = json_array_get(slices, k);
        json_int_t prow = json_integer_value(json_array_get(s, 0));
        json_int_t ps = json_integer_value(json_array_get(s, 1));
        json_int_t numel = prow * pwidth;
        json_int_t rows = json_array_size(shape) > 1 && width ? numel / width : numel;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(n == 1 ? name
                                                   : ir_internf("%s.block%zu", name, k)));
        json_object_set_new(o, "shape", shape_with_rows(shape, rows, n == 1));
        json_object_set_new(o, "offset", json_integer(n == 1 ? 0 : offset));
        json_object_set_new(o, "pserver", json_integer(ps));
        json_t *ep = NULL;
        for (size_t e = 0; e < json_array_size(pservers); e++)
            if (json_integer_value(json_object_get(json_array_get(pservers, e), "pserver")) == ps)
                ep = json_object_get(json_array_get(pservers, e), "endpoint");
        json_object_set_new(o, "endpoint", ep ? json_incref(ep) : json_null());
        json_array_append_new(out, o);
        offset += numel;
    }
    return out;
}

static json_t *expand_row(const json_t *row, const json_t *pservers)
{
    const char *name = json_string_value(json_array_get(row, 0));
    const char *grad = json_string_value(json_array_get(row, 3));
    const json_t *shape = json_array_get(row, 2), *gshape = json_array_get(row, 4);
    const json_t *slices = json_array_get(row, 6), *flags = json_array_get(row, 8);
    if (!name || !grad || !json_is_array(shape) || !json_is_array(slices))
        return NULL;
    if (!json_is_array(gshape))
        gshape = shape;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "dtype", json_deep_copy(json_array_get(row, 1)));
    json_object_set_new(o, "shape", json_deep_copy(shape));
    json_int_t pwidth = width_of(shape);
    if (json_array_size(shape) < 2)
        pwidth = 1;
    json_object_set_new(o, "slices", expand_slices(name, shape, slices, pwidth, pservers));
    json_object_set_new(o, "grad", json_string(grad));
    json_object_set_new(o, "grad_trainer_suffix", json_deep_copy(json_array_get(row, 5)));
    json_object_set_new(o, "grad_slices",
                        json_is_true(json_array_get(row, 7))
                            ? expand_slices(grad, gshape, slices, pwidth, pservers)
                            : json_array());
    for (size_t f = 0; f < json_array_size(flags); f++) {
        const char *flag = json_string_value(json_array_get(flags, f));
        if (flag)
            json_object_set_new(o, flag, json_true());
    }
    return o;
}

bool pdio_manifest_expand(json_t *m)
{
    json_t *params = json_object_get(m, "params");
    if (!json_object_get(m, "params_columns") || !json_is_array(params))
        return true;
    const json_t *pservers = json_object_get(m, "pservers");
    json_t *objects = json_array();
    for (size_t i = 0; i < json_array_size(params); i++) {
        json_t *o = expand_row(json_array_get(params, i), pservers);
        if (!o) {
            json_decref(objects);
            return false;
        }
        json_array_append_new(objects, o);
    }
    json_object_set_new(m, "params", objects);
    json_object_del(m, "params_columns");
    return true;
}
