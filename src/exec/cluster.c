/* cluster.c - a simulated cluster set up from the programs transpile runs
 * produced (ex_cluster_from_outputs): one function for `verify transpile`
 * and the unit suites, which used to wire trainers and pservers each in
 * their own way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "dist.h"

static ir_program *find_output(const ex_output *outs, size_t n, const char *stem)
{
    const char *s = ir_intern(stem);
    for (size_t i = 0; i < n; i++)
        if (outs[i].stem == s)
            return outs[i].program;
    return NULL;
}

/* Sets STEM's main program (STEM) and startup (STEM.startup) in *p; false
 * when the main program is missing; a missing startup is as missing. */
static bool take(ex_proc *p, const ex_output *outs, size_t n, const char *stem)
{
    char startup[96];
    snprintf(startup, sizeof startup, "%s.startup", stem);
    p->main = find_output(outs, n, stem);
    p->startup = find_output(outs, n, startup);
    return p->main && p->startup;
}

bool ex_cluster_from_outputs(ex_cluster *c, const ex_cluster_shape *s, const ex_output *outs,
                             size_t n)
{
    size_t devices = s->devices ? s->devices : 1;
    c->mode = s->mode;
    c->dist_mode = s->dist_mode;
    c->n_trainers = s->n_trainers * devices;
    c->trainers = xcalloc(c->n_trainers + 1, sizeof *c->trainers);
    c->pservers = xcalloc(s->n_pservers + 1, sizeof *c->pservers);
    char stem[64];
    for (size_t t = 0; t < s->n_trainers; t++) {
        ex_proc *first = &c->trainers[t * devices];
        snprintf(stem, sizeof stem, "trainer_%zu", t);
        if (!take(first, outs, n, stem)) {
            snprintf(c->err, sizeof c->err, "the transpile wrote no program for trainer %zu", t);
            return false;
        }
        /* single_process_multi_thread: each device runs its trainer's programs */
        for (size_t d = 1; d < devices; d++) {
            first[d].main = first->main;
            first[d].startup = first->startup;
        }
    }
    for (size_t k = 0; k < s->n_pservers; k++) {
        snprintf(stem, sizeof stem, "pserver_%zu", k);
        ex_proc p = {.endpoint = ir_intern(s->endpoints[k] ? s->endpoints[k] : "")};
        if (!find_output(outs, n, stem))
            continue;       /* not built: --endpoint asked for another pserver */
        if (!take(&p, outs, n, stem)) {
            snprintf(c->err, sizeof c->err, "the transpile wrote no startup program for "
                     "pserver %zu", k);
            return false;
        }
        c->pservers[c->n_pservers++] = p;
    }
    return true;
}

void ex_cluster_release(ex_cluster *c)
{
    ex_cluster_free(c);
    free(c->trainers);
    free(c->pservers);
    c->trainers = c->pservers = NULL;
    c->n_trainers = c->n_pservers = 0;
}

void ex_cluster_free(ex_cluster *c)
{
    for (size_t t = 0; t < c->n_trainers; t++)
        ex_scope_free(c->trainers[t].scope);
    for (size_t k = 0; k < c->n_pservers; k++) {
        ex_scope_free(c->pservers[k].scope);
        pmap_free(&c->pservers[k].accepts);
    }
    for (size_t i = 0; i < c->n_tables; i++) {
        free(c->tables[i].slices);
        free(c->tables[i].eps);
    }
    free(c->tables);
    free(c->grads);
    ex_geo_free(c);
    for (size_t v = 0; v < c->n_geo_vars; v++) {
        free(c->geo_vars[v].slices);
        free(c->geo_vars[v].eps);
        free(c->geo_vars[v].sections);
    }
    free(c->geo_vars);
}
