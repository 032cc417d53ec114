/* params_files.c - the two layouts of Paddle's parameter files: one file
 * per var in a folder, or one combined file in sorted name order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../ir/pmap.h"
#include "../ir/util.h"
#include "params.h"

static bool saved_type(int type)
{
    return type != IR_FEED_MINIBATCH && type != IR_FETCH_LIST && type != IR_READER &&
           type != IR_RAW;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    const ir_var *x = *(ir_var *const *)a, *y = *(ir_var *const *)b;
    return strcmp(x->name, y->name);
}

size_t params_list_vars(const ir_program *p, ir_var ***out)
{
    GPtrArray *list = g_ptr_array_new();
    pmap seen = PMAP_INIT;
    for (size_t b = 0; b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t i = 0; i < blk->n_vars; i++) {
            ir_var *v = blk->vars[i];
            if (v->removed || !v->persistable || !saved_type(v->type) ||
                !pmap_add(&seen, v->name))
                continue;
            g_ptr_array_add(list, v);
        }
    }
    pmap_free(&seen);
    g_ptr_array_sort(list, by_name);
    size_t n = list->len;
    *out = (ir_var **)g_ptr_array_free(list, FALSE);
    return n;
}

static bool read_whole(const char *path, const char *var, uint8_t **data, size_t *len)
{
    char what[300] = "";
    if (*var)
        snprintf(what, sizeof what, "var '%.200s': ", var);
    *len = 0;
    *data = pdio_read_input(path, what, len);
    return *data != NULL;
}

/* A var name becomes a path component only if it is a plain file name;
 * Paddle would create subfolders for '/', pdtrans refuses. */
static bool plain_file_name(const char *dir, const char *name)
{
    if (*name && strcmp(name, ".") && strcmp(name, "..") && !strchr(name, '/'))
        return true;
    pdt_error("%s: var '%s': the name cannot be a file name in the folder", dir, name);
    return false;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = xmalloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

ir_tensors *params_read_dir(const ir_program *p, const char *dir)
{
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    ir_tensors *set = ir_tensors_new();
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        ok = plain_file_name(dir, vars[i]->name);
        if (!ok)
            break;
        char *path = join(dir, vars[i]->name);
        uint8_t *data = NULL;
        size_t len = 0, off = 0;
        ok = read_whole(path, vars[i]->name, &data, &len) &&
             params_decode_record(path, vars[i], data, len, &off,
                                  ir_tensors_put(set, vars[i]->name)) == PDT_OK;
        if (ok && off != len) {
            pdt_error("%s: var '%s': %zu bytes after the record", path, vars[i]->name,
                      len - off);
            ok = false;
        }
        pdio_release_input(data);
        free(path);
    }
    g_free(vars);
    if (!ok) {
        ir_tensors_free(set);
        return NULL;
    }
    return set;
}

ir_tensors *params_read_combined(const ir_program *p, const char *path)
{
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    uint8_t *data = NULL;
    size_t len = 0, off = 0;
    bool ok = read_whole(path, n ? vars[0]->name : "", &data, &len);
    ir_tensors *set = ir_tensors_new();
    for (size_t i = 0; ok && i < n; i++) {
        if (vars[i]->type == IR_SELECTED_ROWS) {
            pdt_error("%s: var '%s': a SelectedRows var cannot be in a combined file "
                      "(Paddle's save_combine writes only LoD tensors)", path,
                      vars[i]->name);
            ok = false;
            break;
        }
        ok = params_decode_record(path, vars[i], data, len, &off,
                                  ir_tensors_put(set, vars[i]->name)) == PDT_OK;
    }
    if (ok && off != len) {
        if (n)
            pdt_error("%s: %zu bytes after the record of the last var '%s' (the "
                      "program's %zu persistable vars are read in name order)", path,
                      len - off, vars[n - 1]->name, n);
        else
            pdt_error("%s: the program has no persistable vars but the file holds "
                      "%zu bytes", path, len);
        ok = false;
    }
    pdio_release_input(data);
    g_free(vars);
    if (!ok) {
        ir_tensors_free(set);
        return NULL;
    }
    return set;
}

static const ir_tensor *value_of(const ir_tensors *t, const char *where, const ir_var *v)
{
    const ir_tensor *x = ir_tensors_find(t, v->name);
    if (!x)
        pdt_error("%s: var '%s': no value to write (the parameters read do not hold "
                  "it)", where, v->name);
    return x;
}

int params_add_dir(pdio_batch *b, const ir_program *p, const ir_tensors *t, const char *dir)
{
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    int rc = PDT_OK;
    for (size_t i = 0; rc == PDT_OK && i < n; i++) {
        const ir_tensor *x = value_of(t, dir, vars[i]);
        if (!x || !plain_file_name(dir, vars[i]->name)) {
            rc = PDT_EBADINPUT;
            break;
        }
        GByteArray *rec = g_byte_array_new();
        params_encode_record(x, rec);
        char *path = join(dir, vars[i]->name);
        pdio_batch_add_bytes(b, path, rec->data, rec->len, true);
        free(path);
        g_byte_array_free(rec, TRUE);
    }
    g_free(vars);
    return rc;
}

int params_add_combined(pdio_batch *b, const ir_program *p, const ir_tensors *t,
                        const char *path)
{
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    GByteArray *all = g_byte_array_new();
    int rc = PDT_OK;
    for (size_t i = 0; rc == PDT_OK && i < n; i++) {
        const ir_tensor *x = value_of(t, path, vars[i]);
        if (!x)
            rc = PDT_EBADINPUT;
        else
            params_encode_record(x, all);
    }
    if (rc == PDT_OK)
        pdio_batch_add_bytes(b, path, all->data, all->len, true);
    g_byte_array_free(all, TRUE);
    g_free(vars);
    return rc;
}
