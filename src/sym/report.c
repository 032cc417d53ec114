/* report.c - `verify job`'s steps and its report (sym.h, job.h): one line
 * per parameter, "equal (N steps)" or where the job first differs from
 * single-process training, in the programs' own terms. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"
#include "table.h"
#include "remote_prefetch.h"

static void short_args(GString *g, const sym_term *t, int depth)
{
    g_string_append_c(g, '(');
    for (uint32_t i = 0; i < t->n; i++) {
        if (i == 3 && t->n > 4) {
            g_string_append_printf(g, ", ... %u args", t->n);
            break;
        }
        if (i)
            g_string_append(g, ", ");
        sym_short(g, t->args[i], depth - 1);
    }
    g_string_append_c(g, ')');
}

static void short_app(GString *g, const sym_term *t, int depth)
{
    const char *to = t->key ? strstr(t->key, " -> ") : NULL, *v;
    g_string_append(g, t->name);
    if (t->n == 0 && to) {
        g_string_append_printf(g, "[%s]", to + 4);
    } else if (t->n == 0 && t->key && (v = strstr(t->key, " value="))) {
        size_t len = strcspn(v + 7, ",");
        g_string_append_printf(g, "{%.*s, %lld rows}", (int)len, v + 7, (long long)t->a);
    } else {
        short_args(g, t, depth);
    }
}

void sym_short(GString *g, const sym_term *t, int depth)
{
    if (depth <= 0 && t->kind != SYM_LEAF) {
        g_string_append(g, "...");
        return;
    }
    switch (t->kind) {
    case SYM_LEAF: g_string_append(g, t->name); break;
    case SYM_APP: short_app(g, t, depth); break;
    case SYM_PROJ:
        short_app(g, t->args[0], depth);
        if (strcmp(t->name, "Out") && strcmp(t->name, "ParamOut"))
            g_string_append_printf(g, ".%s", t->name);
        break;
    case SYM_SUM: g_string_append(g, "sum"); short_args(g, t, depth); break;
    case SYM_CONCAT: g_string_append(g, "concat"); short_args(g, t, depth); break;
    case SYM_SCALE:
        g_string_append(g, "scale(");
        sym_short(g, t->args[0], depth - 1);
        g_string_append_printf(g, ", %.9g", t->scale);
        if (t->bias != 0)
            g_string_append_printf(g, ", bias %.9g", t->bias);
        g_string_append_c(g, ')');
        break;
    case SYM_SLICE:
        sym_short(g, t->args[0], depth - 1);
        g_string_append_printf(g, "[%lld:%lld]", (long long)t->a, (long long)(t->a + t->b));
        break;
    }
}

static void site_text(GString *g, const sym_site *s)
{
    if (!s || !s->op)
        g_string_append_printf(g, "%s", s ? s->prog : "(no op)");
    else
        g_string_append_printf(g, "%s block %d op %d '%s'", s->prog, s->block, s->index,
                               s->op->type);
}

static bool same_head(const sym_term *x, const sym_term *y)
{
    return x->kind == y->kind && x->name == y->name && x->key == y->key && x->a == y->a &&
           x->b == y->b && x->n == y->n && x->scale == y->scale && x->bias == y->bias;
}

/* The attrs where two keys of one op type part. */
static void key_diff(GString *g, const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    while (i > 0 && !(a[i - 1] == ' ' && i > 1 && (a[i - 2] == ',' || a[i - 2] == '|')))
        i--;
    g_string_append_printf(g, " (its attrs differ: %.80s where single-process training has %.80s)",
                           a + i, b + i);
}

/* Sums pair their operands as a set: the one operand of x that y lacks,
 * when y too lacks exactly one of x's; false otherwise. */
static bool sum_odd_one(const sym_term *x, const sym_term *y, uint32_t *j)
{
    uint32_t odd = 0, n_odd = 0;
    for (uint32_t i = 0; i < x->n; i++) {
        bool found = false;
        for (uint32_t k = 0; k < y->n && !found; k++)
            found = x->args[i] == y->args[k];
        if (!found) {
            odd = i;
            n_odd++;
        }
    }
    if (n_odd != 1)
        return false;
    *j = odd;
    return true;
}

/* Else the first operand of x that y lacks, with the one operand of y
 * that has its head and that x lacks. */
static bool sum_pair(const sym_term *x, const sym_term *y, uint32_t *jx, uint32_t *jy)
{
    for (uint32_t i = 0; i < x->n; i++) {
        uint32_t hits = 0, at = 0;
        bool in_y = false;
        for (uint32_t k = 0; k < y->n; k++) {
            in_y |= y->args[k] == x->args[i];
            if (same_head(y->args[k], x->args[i]) && y->args[k] != x->args[i]) {
                hits++;
                at = k;
            }
        }
        /* several alike (one per trainer): the one at the same place in
         * the sorted operands, a guess for the report only */
        if (!in_y && hits > 1 && i < y->n && same_head(y->args[i], x->args[i])) {
            hits = 1;
            at = i;
        }
        if (!in_y) {
            if (hits != 1)
                return false;
            *jx = i;
            *jy = at;
            return true;
        }
    }
    return false;
}

/* Descends while both sides apply the same function; reports the deepest
 * op of the job on that path that reads the differing value. */
static void explain_pair(GString *g, const sym_term *x, const sym_term *y)
{
    const sym_term *cons = NULL;
    uint32_t cj = 0;
    while (x != y && same_head(x, y)) {
        uint32_t j = 0, jy = 0;
        if (x->kind == SYM_SUM && (!sum_odd_one(x, y, &j) || !sum_odd_one(y, x, &jy)) &&
            !sum_pair(x, y, &j, &jy))
            break;
        while (x->kind != SYM_SUM && j < x->n && x->args[j] == y->args[j])
            j++;
        if (j == x->n)
            break;
        if (x->arg_sites) {
            cons = x;
            cj = j;
        }
        y = y->args[x->kind == SYM_SUM ? jy : j];
        x = x->args[j];
    }
    if (cons) {
        site_text(g, cons->origin);
        g_string_append_printf(g, " reads '%s'", cons->arg_vars[cj]);
        if (cons->arg_sites[cj] && cons->arg_sites[cj] != cons->origin) {
            g_string_append(g, " (written by ");
            site_text(g, cons->arg_sites[cj]);
            g_string_append_c(g, ')');
        }
    } else {
        g_string_append(g, "it is made by ");
        site_text(g, x->origin);
    }
    g_string_append(g, " = ");
    sym_short(g, x, 3);
    /* A constant (an APP of no args: fill_constant) is one term for every
     * op that makes that value, so its first maker is often another
     * program's op; the op that wrote the var read is named above. */
    bool constant = x->kind == SYM_APP && x->n == 0;
    if (cons && x->origin && x->origin != cons->origin && x->origin != cons->arg_sites[cj] &&
        !constant && (x->kind == SYM_APP || x->kind == SYM_PROJ)) {
        g_string_append(g, " (made by ");
        site_text(g, x->origin);
        g_string_append_c(g, ')');
    }
    g_string_append(g, " where single-process training has ");
    sym_short(g, y, 3);
    if (x->kind == SYM_APP && y->kind == SYM_APP && x->name == y->name && x->key != y->key)
        key_diff(g, x->key, y->key);
}

/* A row concat's parts against the same rows of the reference. */
static bool explain_parts(sym_job *j, GString *g, sym_proc *p, const sym_site *s,
                          sym_term *want)
{
    const ir_slot *x = ir_op_input(s->op, "X");
    int64_t off = 0;
    ir_block *b = ir_program_block(p->main, s->block);
    for (uint32_t k = 0; x && k < x->n_args; k++) {
        sym_term *part = pmap_get(&p->vals, x->args[k]);
        int64_t rows = part ? part->rows : -1;
        if (rows <= 0 && (rows = sym_var_rows(b, x->args[k])) <= 0)
            return false;
        sym_term *exp = sym_slice_in(j->c.st, want, off, rows);
        if (part != exp) {
            site_text(g, s);
            g_string_append_printf(g, " reads X '%s' (rows %lld to %lld): ", x->args[k],
                                   (long long)off, (long long)(off + rows));
            const sym_site *ws = pmap_get(&p->sites, x->args[k]);
            if (ws && ws->prog != p->label) {
                g_string_append(g, "no op of the step wrote it since ");
                site_text(g, ws);
                g_string_append(g, "; ");
            }
            explain_pair(g, part ? part : exp, exp);
            return true;
        }
        off += rows;
    }
    return false;
}

void sym_explain(sym_job *j, GString *g, sym_proc *p, const char *name, sym_term *want)
{
    sym_term *got = pmap_get(&p->vals, name);
    const sym_site *s = pmap_get(&p->sites, name);
    if (!got) {
        g_string_append_printf(g, "%s never holds '%s'", p->label, name);
        return;
    }
    if (s && s->op && s->prog == p->label && !strcmp(s->op->type, "concat") &&
        explain_parts(j, g, p, s, want))
        return;
    if (s && s->prog != p->label) {
        g_string_append_printf(g, "no op of %s writes '%s'; it keeps what ", p->label, name);
        site_text(g, s);
        g_string_append(g, " gave it; ");
    }
    explain_pair(g, got, want);
}

static bool run_steps(sym_job *j, int step, GString **diff)
{
    if (j->geo)
        return sym_geo_steps(j, step, diff);
    if (j->async) {
        for (size_t t = 0; t < j->n_tr; t++)
            if (!sym_job_step(j, step, (int)t) || !sym_ref_step(j, step, t, t + 1))
                return false;
    } else if (j->half) {
        /* every trainer's update in turn on the shared state, then all recv */
        if (!sym_job_step(j, step, -1))
            return false;
        for (size_t t = 0; t < j->n_tr; t++)
            if (!sym_ref_step(j, step, t, t + 1))
                return false;
        sym_ref_sync_views(j);
    } else if (!sym_job_step(j, step, -1) || !sym_ref_step(j, step, 0, j->n_tr)) {
        return false;
    }
    ir_block *b = ir_program_block(j->in->main, 0);
    for (guint k = 0; k < j->params->len; k++) {
        const char *p = j->params->pdata[k];
        for (size_t t = 0; !diff[k] && t < j->n_tr; t++) {
            sym_proc *want = j->async ? &j->view[t] : &j->ref;
            sym_term *tab = sym_table_value(j, p);   /* a table: R's, shared and live */
            sym_term *rem = tab ? NULL : sym_remote_value(j, p);   /* likewise */
            sym_term *w = sym_read(&j->c, tab || rem ? &j->ref : want, b, p);
            sym_term *got = tab ? tab : rem ? rem : pmap_get(&j->tr[t].vals, p);
            if (got == w)
                continue;
            diff[k] = g_string_new(NULL);
            g_string_append_printf(diff[k], "%s: differs at step %d on trainer %zu: ", p, step, t);
            if (tab)
                sym_table_explain(j, diff[k], p, tab, w);
            else if (rem)
                sym_remote_explain(j, diff[k], p, w);
            else
                sym_explain(j, diff[k], &j->tr[t], p, w);
        }
    }
    return true;
}

long sym_verify_job(const sym_job_in *in, FILE *out, char *err, size_t errlen)
{
    sym_job j;
    bool ok = sym_job_setup(&j, in) && sym_job_startups(&j) && sym_ref_setup(&j) &&
              sym_table_setup(&j) && sym_remote_setup(&j);
    if (ok && !j.params->len) {
        snprintf(j.c.err, sizeof j.c.err, "%s has no optimizer ops (op_role_var pairs): no "
                 "parameter to compare", in->main_label);
        ok = false;
    }
    GString **diff = ok ? xcalloc(j.params->len + 1, sizeof *diff) : NULL;
    for (int s = 1; ok && s <= in->steps; s++)
        ok = run_steps(&j, s, diff);
    long bad = ok ? 0 : -1;
    if (!ok)
        snprintf(err, errlen, "%s", j.c.err[0] ? j.c.err : "the job could not be run");
    for (guint k = 0; ok && k < j.params->len; k++) {
        if (diff[k])
            fprintf(out, "%s\n", diff[k]->str);
        else
            fprintf(out, "%s: equal (%d steps)\n", (const char *)j.params->pdata[k], in->steps);
        bad += diff[k] != NULL;
    }
    if (in->note_len) {
        GString *note = g_string_new(NULL);
        if (ok) {
            sym_lr_note(&j, note);
            sym_geo_note(&j, note);
        }
        snprintf(in->note, in->note_len, "%s", note->str);
        g_string_free(note, TRUE);
    }
    for (guint k = 0; diff && k < j.params->len; k++)
        if (diff[k])
            g_string_free(diff[k], TRUE);
    free(diff);
    sym_job_free(&j);
    return bad;
}
