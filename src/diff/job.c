/* job.c - two job folders, role by role through their manifests
 * (pdiff_jobs, diff.h).
 *
 * Every manifest*.json of a folder is read: transpile writes manifest.json,
 * and per-role manifests (manifest.pserver_1.json, ...) may sit beside it.
 * Manifests of the same name are compared field by field; the roles their
 * "files" lists name (trainer_<id>, pserver_<k>, from the union of all of
 * a folder's manifests) are compared program by program; a manifest or a
 * role on one side only is a difference too.  Walks are iterative. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../io/pdio_job.h"
#include "../ir/util.h"
#include "diff_internal.h"

static bool is_manifest_name(const char *n)
{
    size_t len = strlen(n);
    return !strcmp(n, "manifest.json") ||
           (len > strlen("manifest..json") && !strncmp(n, "manifest.", 9) &&
            !strcmp(n + len - 5, ".json"));
}

static gint cmp_str(gconstpointer x, gconstpointer y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The folder's manifest file names, sorted; NULL (message printed) when
 * the folder cannot be read or holds none. */
static GPtrArray *manifest_names(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        pdt_error("%s: cannot read the folder: %s", dir, g_strerror(errno));
        return NULL;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (struct dirent *e; (e = readdir(d));)
        if (is_manifest_name(e->d_name))
            g_ptr_array_add(names, g_strdup(e->d_name));
    closedir(d);
    if (!names->len) {
        pdt_error("%s: no manifest.json (or manifest.ROLE.json): not a job folder that "
                  "transpile wrote", dir);
        g_ptr_array_free(names, TRUE);
        return NULL;
    }
    g_ptr_array_sort(names, cmp_str);
    return names;
}

static json_t *load(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        pdt_error("%s: line %d: not a manifest: %s", path, err.line, err.text);
    /* The params table compared as objects: paths name params and slices
     * ("params[fc_w].slices[fc_w.block1].pserver"), whichever form each
     * side was written in. */
    else if (!pdio_manifest_expand(j)) {
        pdt_error("%s: not a manifest: a row of \"params\" is not [name, dtype, shape, grad, ...]",
                  path);
        json_decref(j);
        j = NULL;
    }
    return j;
}

static char *dump_any(const json_t *v)
{
    return v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
}

typedef struct { char *path; json_t *a, *b; } jwork;

static void manifest_item(pdiff_cmp *c, const char *path, const json_t *a, const json_t *b)
{
    char *ta = dump_any(a), *tb = dump_any(b);
    pdiff_emit(c, PDIFF_MANIFEST, NULL, -1, NULL, -1, *path ? path : "(the whole manifest)", ta,
               tb);
    free(ta);
    free(tb);
}

/* What names an element of a manifest list: its "name" (params,
 * slices), its role and number (files: trainer_0, pserver_1), its pserver
 * number (pservers), its role (inputs); NULL when none does. */
static char *element_id(const json_t *e)
{
    const char *name = json_string_value(json_object_get(e, "name"));
    const char *role = json_string_value(json_object_get(e, "role"));
    const json_t *ps = json_object_get(e, "pserver"), *tr = json_object_get(e, "trainer_id");
    if (name)
        return g_strdup(name);
    if (role && json_is_integer(role && !strcmp(role, "pserver") ? ps : tr))
        return g_strdup_printf("%s_%" JSON_INTEGER_FORMAT, role,
                               json_integer_value(!strcmp(role, "pserver") ? ps : tr));
    if (role)
        return g_strdup(role);
    return json_is_integer(ps) ? g_strdup_printf("pserver_%" JSON_INTEGER_FORMAT,
                                                 json_integer_value(ps))
                               : NULL;
}

/* The ids of a list's elements, or NULL unless every element has one and
 * no two share it.  Lists are short (a job's roles, its params). */
static GPtrArray *element_ids(const json_t *list)
{
    GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
    for (size_t i = 0; i < json_array_size(list); i++) {
        char *id = element_id(json_array_get(list, i));
        for (guint k = 0; id && k < ids->len; k++)
            if (!strcmp(ids->pdata[k], id))
                g_clear_pointer(&id, g_free);
        if (!id) {
            g_ptr_array_free(ids, TRUE);
            return NULL;
        }
        g_ptr_array_add(ids, id);
    }
    return ids;
}

static json_t *element_by_id(const json_t *list, const GPtrArray *ids, const char *id)
{
    for (guint k = 0; k < ids->len; k++)
        if (!strcmp(ids->pdata[k], id))
            return json_array_get(list, k);
    return NULL;
}

/* Two lists: element by element where their elements name themselves
 * (path "files[pserver_1]"), else by position ("flags.pservers[1]"). */
static void list_children(GArray *kids, const char *path, json_t *a, json_t *b)
{
    GPtrArray *ia = element_ids(a), *ib = ia ? element_ids(b) : NULL;
    if (ia && ib) {
        for (guint k = 0; k < ia->len; k++) {
            jwork w = {g_strdup_printf("%s[%s]", path, (char *)ia->pdata[k]),
                       json_array_get(a, k), element_by_id(b, ib, ia->pdata[k])};
            g_array_append_val(kids, w);
        }
        for (guint k = 0; k < ib->len; k++)
            if (!element_by_id(a, ia, ib->pdata[k])) {
                jwork w = {g_strdup_printf("%s[%s]", path, (char *)ib->pdata[k]), NULL,
                           json_array_get(b, k)};
                g_array_append_val(kids, w);
            }
    } else {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < (na > nb ? na : nb); i++) {
            jwork w = {g_strdup_printf("%s[%zu]", path, i), json_array_get(a, i),
                       json_array_get(b, i)};
            g_array_append_val(kids, w);
        }
    }
    if (ia)
        g_ptr_array_free(ia, TRUE);
    if (ib)
        g_ptr_array_free(ib, TRUE);
}

/* The children of two objects or arrays, pushed so that they come off the
 * stack in A's order, then B's extra ones. */
static void push_children(GArray *stack, const char *path, json_t *a, json_t *b)
{
    GArray *kids = g_array_new(FALSE, FALSE, sizeof(jwork));
    if (json_is_object(a)) {
        const char *k;
        json_t *v;
        json_object_foreach(a, k, v) {
            jwork w = {g_strdup_printf("%s%s%s", path, *path ? "." : "", k), v,
                       json_object_get(b, k)};
            g_array_append_val(kids, w);
        }
        json_object_foreach(b, k, v) {
            if (json_object_get(a, k))
                continue;
            jwork w = {g_strdup_printf("%s%s%s", path, *path ? "." : "", k), NULL, v};
            g_array_append_val(kids, w);
        }
    } else {
        list_children(kids, path, a, b);
    }
    for (size_t i = kids->len; i > 0; i--)
        g_array_append_val(stack, g_array_index(kids, jwork, i - 1));
    g_array_free(kids, TRUE);
}

static void compare_json(pdiff_cmp *c, json_t *a, json_t *b)
{
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(jwork));
    jwork top = {g_strdup(""), a, b};
    g_array_append_val(stack, top);
    while (stack->len) {
        jwork w = g_array_index(stack, jwork, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        bool both_obj = json_is_object(w.a) && json_is_object(w.b);
        bool both_arr = json_is_array(w.a) && json_is_array(w.b);
        if (both_obj || both_arr)
            push_children(stack, w.path, w.a, w.b);
        else if (!w.a || !w.b || !json_equal(w.a, w.b))
            manifest_item(c, w.path, w.a, w.b);
        g_free(w.path);
    }
    g_array_free(stack, TRUE);
}

typedef struct { char *key, *role, *main, *startup; long id; } role_files;

static void role_free(gpointer p)
{
    role_files *r = p;
    g_free(r->key), g_free(r->role), g_free(r->main), g_free(r->startup);
    g_free(r);
}

static gint cmp_role(gconstpointer x, gconstpointer y)
{
    const role_files *p = *(role_files *const *)x, *q = *(role_files *const *)y;
    int c = strcmp(p->role, q->role);
    return c ? c : (p->id > q->id) - (p->id < q->id);
}

static role_files *find_role(GPtrArray *roles, const char *key)
{
    for (guint i = 0; i < roles->len; i++)
        if (!strcmp(((role_files *)roles->pdata[i])->key, key))
            return roles->pdata[i];
    return NULL;
}

/* Adds the roles of one manifest's "files" list; false (message printed)
 * when an entry lacks its role, number or main program. */
static bool add_roles(GPtrArray *roles, const char *path, const json_t *m)
{
    const json_t *files = json_object_get(m, "files");
    for (size_t i = 0; i < json_array_size(files); i++) {
        const json_t *f = json_array_get(files, i);
        const char *role = json_string_value(json_object_get(f, "role"));
        const char *main = json_string_value(json_object_get(f, "main"));
        const char *startup = json_string_value(json_object_get(f, "startup"));
        const json_t *id = json_object_get(f, role && !strcmp(role, "pserver") ? "pserver"
                                                                              : "trainer_id");
        if (!role || !main || !json_is_integer(id)) {
            pdt_error("%s: files[%zu]: no 'role', 'main' or role number", path, i);
            return false;
        }
        char *key = g_strdup_printf("%s_%" JSON_INTEGER_FORMAT, role, json_integer_value(id));
        if (find_role(roles, key)) {
            g_free(key);
            continue;
        }
        role_files *r = g_new0(role_files, 1);
        *r = (role_files){key, g_strdup(role), g_strdup(main), g_strdup(startup),
                          (long)json_integer_value(id)};
        g_ptr_array_add(roles, r);
    }
    return true;
}

/* One side: its manifests (parsed, by name) and its roles.  False
 * (message printed) on trouble. */
typedef struct { const char *dir; GPtrArray *names, *jsons, *roles; } side;

static bool read_side(side *s, const char *dir)
{
    *s = (side){dir, manifest_names(dir), g_ptr_array_new_with_free_func((GDestroyNotify)json_decref),
                 g_ptr_array_new_with_free_func(role_free)};
    if (!s->names)
        return false;
    for (guint i = 0; i < s->names->len; i++) {
        char *path = g_build_filename(dir, s->names->pdata[i], NULL);
        json_t *j = load(path);
        bool ok = j && add_roles(s->roles, path, j);
        g_free(path);
        if (j)
            g_ptr_array_add(s->jsons, j);
        if (!ok)
            return false;
    }
    g_ptr_array_sort(s->roles, cmp_role);
    return true;
}

static void side_free(side *s)
{
    GPtrArray *all[] = {s->names, s->jsons, s->roles};
    for (size_t i = 0; i < 3; i++)
        if (all[i])
            g_ptr_array_free(all[i], TRUE);
}

/* Manifests by name: a name on one side only reported (ONE_SIDE), or
 * the same name compared field by field (!ONE_SIDE). */
static void compare_manifests(pdiff_cmp *c, const side *a, const side *b, bool one_side)
{
    guint i = 0, j = 0;
    while (i < a->names->len || j < b->names->len) {
        const char *na = i < a->names->len ? a->names->pdata[i] : NULL;
        const char *nb = j < b->names->len ? b->names->pdata[j] : NULL;
        int order = !na ? 1 : !nb ? -1 : strcmp(na, nb);
        if (order && one_side) {
            c->path_a = a->dir, c->path_b = b->dir;
            char *where = g_strdup_printf("only in %s", order < 0 ? a->dir : b->dir);
            pdiff_emit(c, PDIFF_MANIFEST_ONLY, NULL, -1, NULL, -1, order < 0 ? na : nb,
                       order < 0 ? where : NULL, order < 0 ? NULL : where);
            g_free(where);
        } else if (!order && !one_side) {
            char *pa = g_build_filename(a->dir, na, NULL), *pb = g_build_filename(b->dir, nb, NULL);
            c->path_a = pa, c->path_b = pb;
            compare_json(c, a->jsons->pdata[i], b->jsons->pdata[j]);
            c->path_a = c->path_b = NULL;
            g_free(pa);
            g_free(pb);
        }
        i += order <= 0;
        j += order >= 0;
    }
}

/* One program of a role on both sides; false (message printed) when one
 * does not read. */
static bool compare_file(pdiff_cmp *c, const side *a, const char *fa, const side *b,
                         const char *fb)
{
    if (!fa || !fb)             /* a startup listed on one side only: the manifests say so */
        return true;
    char *pa = g_build_filename(a->dir, fa, NULL), *pb = g_build_filename(b->dir, fb, NULL);
    ir_program *x = pdio_read(pa), *y = x ? pdio_read(pb) : NULL;
    if (y)
        pdiff_programs(x, y, pa, pb, c->o, c->r);
    bool ok = x && y;
    if (x)
        ir_program_free(x);
    if (y)
        ir_program_free(y);
    g_free(pa);
    g_free(pb);
    return ok;
}

static void role_only(pdiff_cmp *c, const side *a, const side *b, const role_files *r, bool in_a)
{
    char *what = g_strdup_printf("role %s", r->key);
    char *files = g_strdup_printf("%s%s%s", r->main, r->startup ? ", " : "",
                                  r->startup ? r->startup : "");
    c->path_a = a->dir, c->path_b = b->dir;
    pdiff_emit(c, PDIFF_ROLE_ONLY, NULL, -1, NULL, -1, what, in_a ? files : NULL,
               in_a ? NULL : files);
    g_free(what);
    g_free(files);
}

static void roles_one_side(pdiff_cmp *c, const side *a, const side *b)
{
    for (guint i = 0; i < a->roles->len; i++)
        if (!find_role(b->roles, ((role_files *)a->roles->pdata[i])->key))
            role_only(c, a, b, a->roles->pdata[i], true);
    for (guint i = 0; i < b->roles->len; i++)
        if (!find_role(a->roles, ((role_files *)b->roles->pdata[i])->key))
            role_only(c, a, b, b->roles->pdata[i], false);
}

/* The roles both sides have, program by program. */
static bool compare_roles(pdiff_cmp *c, const side *a, const side *b)
{
    for (guint i = 0; i < a->roles->len; i++) {
        const role_files *r = a->roles->pdata[i], *q = find_role(b->roles, r->key);
        if (q && (!compare_file(c, a, r->main, b, q->main) ||
                  !compare_file(c, a, r->startup, b, q->startup)))
            return false;
    }
    return true;
}

int pdiff_jobs(const char *dir_a, const char *dir_b, const pdiff_opts *o, pdiff_report *r,
               size_t *n_diffs)
{
    side a = {0}, b = {0};
    bool ok = read_side(&a, dir_a);
    ok = ok && read_side(&b, dir_b);
    size_t before = pdiff_report_count(r);
    if (ok) {
        pdiff_cmp c = {o, r, NULL, NULL, -1, g_string_new(NULL), g_string_new(NULL),
                       g_string_new(NULL)};
        compare_manifests(&c, &a, &b, true);
        roles_one_side(&c, &a, &b);
        compare_manifests(&c, &a, &b, false);
        ok = compare_roles(&c, &a, &b);
        g_string_free(c.va, TRUE);
        g_string_free(c.vb, TRUE);
        g_string_free(c.what, TRUE);
    }
    side_free(&a);
    side_free(&b);
    *n_diffs = pdiff_report_count(r) - before;
    return ok ? PDT_OK : PDT_EUSAGE;
}
