/* manifest.c - the in-memory manifest's storage (manifest.h): an arena
 * for its strings, dims and tables, two growing arrays for the flags and
 * files.  Nothing here knows JSON. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "../ir/ir.h"
#include "manifest.h"

pdt_manifest *pdt_manifest_new(const char *mode, const char *role)
{
    pdt_manifest *m = xcalloc(1, sizeof *m);
    m->arena = ir_arena_new();
    m->mode = pdt_manifest_str(m, mode);
    m->role = pdt_manifest_str(m, role);
    return m;
}

void pdt_manifest_free(pdt_manifest *m)
{
    if (!m)
        return;
    free(m->flags);
    free(m->files);
    ir_arena_free(m->arena);
    free(m);
}

const char *pdt_manifest_str(pdt_manifest *m, const char *s)
{
    return s ? ir_arena_dup(m->arena, s, strlen(s)) : NULL;
}

const int64_t *pdt_manifest_dims(pdt_manifest *m, const int64_t *d, size_t n)
{
    return n ? ir_arena_memdup(m->arena, d, n * sizeof *d) : pdt_manifest_alloc(m, sizeof *d);
}

void *pdt_manifest_alloc(pdt_manifest *m, size_t size)
{
    return ir_arena_alloc(m->arena, size ? size : 1);
}

/* The entry for KEY: the one already there, or a new one at the end. */
static pdt_manifest_flag *flag_slot(pdt_manifest *m, const char *key, pdt_mf_kind kind)
{
    pdt_manifest_flag *f = (pdt_manifest_flag *)pdt_manifest_get_flag(m, key);
    if (!f) {
        if (m->n_flags == m->cap_flags) {
            m->cap_flags = m->cap_flags ? 2 * m->cap_flags : 16;
            m->flags = xrealloc(m->flags, m->cap_flags * sizeof *m->flags);
        }
        f = &m->flags[m->n_flags++];
        f->key = pdt_manifest_str(m, key);
    }
    f->kind = kind;
    f->i = 0;
    f->s = NULL;
    f->list = NULL;
    f->n = 0;
    return f;
}

void pdt_manifest_flag_int(pdt_manifest *m, const char *key, long long v)
{
    flag_slot(m, key, PDT_MF_INT)->i = v;
}

void pdt_manifest_flag_bool(pdt_manifest *m, const char *key, bool v)
{
    flag_slot(m, key, PDT_MF_BOOL)->i = v;
}

void pdt_manifest_flag_str(pdt_manifest *m, const char *key, const char *v)
{
    const char *s = pdt_manifest_str(m, v);
    flag_slot(m, key, v ? PDT_MF_STRING : PDT_MF_NULL)->s = s;
}

void pdt_manifest_flag_strs(pdt_manifest *m, const char *key, const char *const *v, size_t n)
{
    const char **list = pdt_manifest_alloc(m, (n + 1) * sizeof *list);
    for (size_t i = 0; i < n; i++)
        list[i] = pdt_manifest_str(m, v[i]);
    pdt_manifest_flag *f = flag_slot(m, key, PDT_MF_STRINGS);
    f->list = list;
    f->n = n;
}

const pdt_manifest_flag *pdt_manifest_get_flag(const pdt_manifest *m, const char *key)
{
    for (size_t i = 0; i < m->n_flags; i++)
        if (!strcmp(m->flags[i].key, key))
            return &m->flags[i];
    return NULL;
}

void pdt_manifest_drop_flag(pdt_manifest *m, const char *key)
{
    const pdt_manifest_flag *f = pdt_manifest_get_flag(m, key);
    if (!f)
        return;
    size_t at = (size_t)(f - m->flags);
    memmove(m->flags + at, m->flags + at + 1, (m->n_flags - at - 1) * sizeof *m->flags);
    m->n_flags--;
}

void pdt_manifest_add_file(pdt_manifest *m, const pdt_manifest_file *f)
{
    if (m->n_files == m->cap_files) {
        m->cap_files = m->cap_files ? 2 * m->cap_files : 8;
        m->files = xrealloc(m->files, m->cap_files * sizeof *m->files);
    }
    pdt_manifest_file *c = &m->files[m->n_files++];
    c->role = pdt_manifest_str(m, f->role);
    c->id_key = pdt_manifest_str(m, f->id_key);
    c->id = f->id;
    c->endpoint = pdt_manifest_str(m, f->endpoint);
    c->main = pdt_manifest_str(m, f->main);
    c->startup = pdt_manifest_str(m, f->startup);
}

size_t pdt_manifest_trainers(const pdt_manifest *m)
{
    const pdt_manifest_flag *t = pdt_manifest_get_flag(m, "trainers");
    if (t && t->kind == PDT_MF_STRINGS)
        return t->n;
    return t && t->kind == PDT_MF_INT && t->i > 0 ? (size_t)t->i : 1;
}
