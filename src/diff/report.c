/* report.c - how pdtrans diff shows its differences (diff.h).
 *
 * Text: "--- A" / "+++ B" before the first difference of each pair of
 * programs, then one line per difference, '-' for what only A has, '+'
 * for what only B has, no mark for a change ("what: a -> b").  JSON: one
 * array of objects, printed at the end.  Stat: counts per kind. */
#include <jansson.h>
#include <string.h>

#include "../ir/util.h"
#include "diff.h"

struct pdiff_report {
    FILE *out;
    pdiff_format format;
    bool color;
    size_t count;
    size_t per_kind[PDIFF_N_KINDS];
    const char *header_a, *header_b;  /* the pair whose headers are printed */
    json_t *list;
};

static const struct { const char *stat, *json; } kind_names[PDIFF_N_KINDS] = {
    [PDIFF_PROGRAM] = {"program fields", "program"},
    [PDIFF_BLOCK_ADDED] = {"blocks added", "block-added"},
    [PDIFF_BLOCK_REMOVED] = {"blocks removed", "block-removed"},
    [PDIFF_BLOCK] = {"block fields", "block"},
    [PDIFF_OP_REMOVED] = {"ops removed", "op-removed"},
    [PDIFF_OP_INSERTED] = {"ops inserted", "op-inserted"},
    [PDIFF_OP] = {"op fields", "op"},
    [PDIFF_INPUT] = {"inputs", "input"},
    [PDIFF_OUTPUT] = {"outputs", "output"},
    [PDIFF_ATTR] = {"attrs", "attr"},
    [PDIFF_VAR_REMOVED] = {"vars removed", "var-removed"},
    [PDIFF_VAR_ADDED] = {"vars added", "var-added"},
    [PDIFF_VAR] = {"var fields", "var"},
    [PDIFF_MANIFEST] = {"manifest fields", "manifest"},
    [PDIFF_MANIFEST_ONLY] = {"manifests on one side", "manifest-only"},
    [PDIFF_ROLE_ONLY] = {"roles on one side", "role-only"},
};

const char *pdiff_kind_stat_name(pdiff_kind k)
{
    return kind_names[k].stat;
}

const char *pdiff_kind_json_name(pdiff_kind k)
{
    return kind_names[k].json;
}

pdiff_report *pdiff_report_new(FILE *out, pdiff_format format, bool color)
{
    pdiff_report *r = xcalloc(1, sizeof *r);
    r->out = out;
    r->format = format;
    r->color = color && format == PDIFF_TEXT;
    if (format == PDIFF_JSON)
        r->list = json_array();
    return r;
}

size_t pdiff_report_count(const pdiff_report *r)
{
    return r->count;
}

static bool only_a(pdiff_kind k)
{
    return k == PDIFF_BLOCK_REMOVED || k == PDIFF_OP_REMOVED || k == PDIFF_VAR_REMOVED;
}

static bool only_b(pdiff_kind k)
{
    return k == PDIFF_BLOCK_ADDED || k == PDIFF_OP_INSERTED || k == PDIFF_VAR_ADDED;
}

/* What the item is about: "block 0 op 12 send (x)", "block 0", "". */
static void place(GString *g, const pdiff_item *it)
{
    if (it->block >= 0)
        g_string_append_printf(g, "block %ld", it->block);
    long op = it->kind == PDIFF_OP_INSERTED ? it->op_b : it->op_a;
    if (op >= 0) {
        g_string_append_printf(g, " op %ld", op);
        if (it->op_b >= 0 && it->op_a >= 0 && it->op_b != it->op_a)
            g_string_append_printf(g, "/%ld", it->op_b);
        g_string_append_printf(g, " %s", it->op_type);
        if (it->op_out && !only_a(it->kind) && !only_b(it->kind))
            g_string_append_printf(g, " (%s)", it->op_out);
    }
}

static void text_headers(pdiff_report *r, const pdiff_item *it)
{
    if (!it->program || (r->header_a == it->program && r->header_b == it->program_b))
        return;
    r->header_a = it->program, r->header_b = it->program_b;
    const char *on = r->color ? "\033[1m" : "", *off = r->color ? "\033[m" : "";
    fprintf(r->out, "%s--- %s%s\n%s+++ %s%s\n", on, it->program, off, on,
            it->program_b ? it->program_b : it->program, off);
}

/* Items about something only one side has: a '-' (A) or '+' (B) line
 * showing that side's value. */
static bool one_sided(pdiff_kind k)
{
    return only_a(k) || only_b(k) || k == PDIFF_MANIFEST_ONLY || k == PDIFF_ROLE_ONLY;
}

static void text_line(pdiff_report *r, const pdiff_item *it)
{
    text_headers(r, it);
    GString *g = g_string_new(NULL);
    const char *color = "";
    if (one_sided(it->kind)) {
        bool in_a = it->a != NULL;
        g_string_append_c(g, in_a ? '-' : '+');
        color = in_a ? "\033[31m" : "\033[32m";
    }
    place(g, it);
    if (it->what && *it->what)
        g_string_append_printf(g, "%s%s",
                               g->len <= 1 ? "" : g_str_has_prefix(it->what, "var ") ? " " : ": ",
                               it->what);
    if (one_sided(it->kind)) {
        const char *v = it->a ? it->a : it->b;
        if (v && *v)
            g_string_append_printf(g, ": %s", v);
    } else {
        g_string_append_printf(g, ": %s -> %s", it->a ? it->a : "(absent)",
                               it->b ? it->b : "(absent)");
    }
    if (r->color && *color)
        fprintf(r->out, "%s%s\033[m\n", color, g->str);
    else
        fprintf(r->out, "%s\n", g->str);
    g_string_free(g, TRUE);
}

static json_t *num_or_null(long v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static void json_item(pdiff_report *r, const pdiff_item *it)
{
    json_t *o = json_object();
    json_object_set_new(o, "program", str_or_null(it->program));
    json_object_set_new(o, "program_b", str_or_null(it->program_b));
    json_object_set_new(o, "kind", json_string(kind_names[it->kind].json));
    json_object_set_new(o, "block", num_or_null(it->block));
    json_object_set_new(o, "op_a", num_or_null(it->op_a));
    json_object_set_new(o, "op_b", num_or_null(it->op_b));
    json_object_set_new(o, "op_type", str_or_null(it->op_type));
    json_object_set_new(o, "op_output", str_or_null(it->op_out));
    json_object_set_new(o, "what", json_string(it->what && *it->what ? it->what
                                                                        : kind_names[it->kind].json));
    json_object_set_new(o, "a", str_or_null(it->a));
    json_object_set_new(o, "b", str_or_null(it->b));
    json_array_append_new(r->list, o);
}

void pdiff_report_add(pdiff_report *r, const pdiff_item *it)
{
    r->count++;
    r->per_kind[it->kind]++;
    if (r->format == PDIFF_TEXT)
        text_line(r, it);
    else if (r->format == PDIFF_JSON)
        json_item(r, it);
}

void pdiff_report_finish(pdiff_report *r)
{
    if (r->format == PDIFF_JSON) {
        char *s = json_dumps(r->list, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s)
            fprintf(r->out, "%s\n", s);
        free(s);
    } else if (r->format == PDIFF_STAT) {
        for (int k = 0; k < PDIFF_N_KINDS; k++)
            if (r->per_kind[k])
                fprintf(r->out, "%s: %zu\n", kind_names[k].stat, r->per_kind[k]);
        fprintf(r->out, "differences: %zu\n", r->count);
    }
}

void pdiff_report_free(pdiff_report *r)
{
    if (r->list)
        json_decref(r->list);
    free(r);
}
