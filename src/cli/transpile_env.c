/* transpile_env.c - `transpile --from-env`: the settings a launched process
 * finds in its environment, under either generation of Paddle's names.
 *
 * Paddle 1.x (DistributeTranspiler's documented example, PaddleCloud):
 *   PADDLE_TRAINING_ROLE, PADDLE_PSERVER_ENDPOINTS or PADDLE_PSERVER_IPS +
 *   PADDLE_PSERVER_PORT, PADDLE_TRAINERS, PADDLE_TRAINER_ID, and for a
 *   pserver PADDLE_CURRENT_ENDPOINT or PADDLE_CURRENT_IP (+ the port).
 * Paddle 2.x (fleetrun, paddle.distributed.launch; PaddleCloudRoleMaker's
 * _ps_env): TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINERS_NUM,
 *   PADDLE_TRAINER_ID, and for a pserver POD_IP + PADDLE_PORT.
 * nccl2 and collective (both generations, _collective_env):
 *   PADDLE_TRAINER_ENDPOINTS, PADDLE_CURRENT_ENDPOINT, PADDLE_TRAINER_ID.
 * A setting given under both generations' names must have one value; a
 * flag wins over every variable.  Values are read through cli_run_getenv, so the manifest
 * records each one taken. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../passes/transpile/placement.h"
#include "transpile_cli.h"

/* One way the environment can give a setting: a value and the variable
 * name(s) it came from (value NULL: not given this way), and whether the
 * names are Paddle 2's. */
typedef struct {
    const char *source, *value;
    bool paddle2;
} env_way;

/* Within one generation the first way given wins (Paddle 1's
 * PADDLE_PSERVER_ENDPOINTS over PADDLE_PSERVER_IPS, as before); when both
 * generations give the setting, they must agree.  *value is NULL when no
 * way gives it. */
static int agree(const env_way *ways, size_t n, const char **value, const char **source)
{
    const env_way *first[2] = {NULL, NULL};
    for (size_t i = 0; i < n; i++)
        if (ways[i].value && !first[ways[i].paddle2])
            first[ways[i].paddle2] = &ways[i];
    const env_way *w = first[0] ? first[0] : first[1];
    if (first[0] && first[1] && strcmp(first[0]->value, first[1]->value) != 0) {
        pdt_error("--from-env: Paddle 1 and Paddle 2 variables disagree: '%s' from %s, '%s' "
                  "from %s; unset one", first[0]->value, first[0]->source, first[1]->value,
                  first[1]->source);
        return PDT_EBADINPUT;
    }
    *value = w ? w->value : NULL;
    *source = w ? w->source : NULL;
    return PDT_OK;
}

/* Digits only: strtol's leading blanks and signs would let ' 2' and '+2'
 * through, which the flags refuse.  A bad value is bad input (exit 1): the
 * launcher wrote it, not the user's command line. */
static bool env_int(const char *name, const char *v, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long n = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : 0;
    if (!end || *end || errno || n < min || n > max) {
        pdt_error("--from-env: environment variable %s must be an integer from %ld to %ld, "
                  "not '%.200s'", name, min, max, v);
        return false;
    }
    *out = n;
    return true;
}

/* A variable holding an integer, as its canonical text (so that "2" and
 * "02" agree); NULL when unset. */
static const char *int_var(tcli_opts *o, const char *name, long min, bool *ok)
{
    const char *v = cli_run_getenv(&o->run, name);
    long n;
    if (!v)
        return NULL;
    if (!env_int(name, v, min, 1L << 30, &n)) {
        *ok = false;
        return NULL;
    }
    return ir_internf("%ld", n);
}

/* What a variable holds, for the endpoint grammar (endpoints.c). */
typedef enum { EV_ENDPOINTS, EV_HOSTS, EV_ENDPOINT, EV_HOST, EV_PORT } env_kind;

/* Variable NAME, recorded, checked as KIND: NULL when unset, or when its
 * value breaks the grammar; then the message names the variable and quotes
 * the item, and *bad is set (exit 1: the launcher's environment is input,
 * not usage). */
static const char *env_checked(tcli_opts *o, const char *name, env_kind kind, bool *bad)
{
    const char *v = cli_run_getenv(&o->run, name);
    if (!v)
        return NULL;
    char *problem = kind == EV_ENDPOINTS ? tp_list_problem(v, false)
                    : kind == EV_HOSTS   ? tp_list_problem(v, true)
                    : kind == EV_ENDPOINT ? tp_endpoint_problem(v)
                    : kind == EV_HOST     ? tp_host_problem(v)
                                          : tp_port_problem(v);
    if (!problem)
        return v;
    pdt_error("--from-env: environment variable %s: %s", name, problem);
    g_free(problem);
    *bad = true;
    return NULL;
}

/* "a,b" as the interned "a,b" with empty items dropped, or with ":PORT"
 * appended to each item when port is given. */
static const char *endpoint_list(const char *csv, const char *port)
{
    pdt_list l = pdt_list_split(csv);
    GString *g = g_string_new("");
    for (size_t i = 0; i < l.n; i++)
        g_string_append_printf(g, "%s%s%s%s", i ? "," : "", l.items[i], port ? ":" : "",
                               port ? port : "");
    const char *s = ir_intern(g->str);
    g_string_free(g, TRUE);
    pdt_list_free(&l);
    return s;
}

/* HOST_VAR:PORT_VAR, each checked; a bracketed IPv6 host stays bracketed. */
static const char *joined(tcli_opts *o, const char *host_var, const char *port_var, bool *bad)
{
    const char *host = env_checked(o, host_var, EV_HOST, bad);
    const char *port = env_checked(o, port_var, EV_PORT, bad);
    return host && port ? ir_internf("%s:%s", host, port) : NULL;
}

static int missing(const char *what)
{
    pdt_usage_error(TCLI_CMD, "--from-env: %s", what);
    return PDT_EUSAGE;
}

static int env_role(tcli_opts *o)
{
    env_way ways[] = {
        {"PADDLE_TRAINING_ROLE", cli_run_getenv(&o->run, "PADDLE_TRAINING_ROLE"), false},
        {"TRAINING_ROLE", cli_run_getenv(&o->run, "TRAINING_ROLE"), true}};
    const char *role, *src;
    int rc = agree(ways, 2, &role, &src);
    if (rc)
        return rc;
    if (!role)
        return missing("PADDLE_TRAINING_ROLE (Paddle 1) or TRAINING_ROLE (Paddle 2) is not set; "
                       "give --role otherwise");
    if (!strcmp(role, "TRAINER")) {
        o->ctx->transpile.role = PDT_ROLE_TRAINER;
    } else if (!strcmp(role, "PSERVER")) {
        o->ctx->transpile.role = PDT_ROLE_PSERVER;
    } else {
        pdt_error("--from-env: %s must be TRAINER or PSERVER, not '%.200s'%s", src, role,
                  strcmp(role, "HETER_TRAINER") ? ""
                  : " (heterogeneous parameter servers are not supported)");
        return PDT_EBADINPUT;
    }
    o->ctx->transpile.src.role = src;
    return PDT_OK;
}

static int env_pservers(tcli_opts *o)
{
    bool bad = false;
    const char *ips = env_checked(o, "PADDLE_PSERVER_IPS", EV_HOSTS, &bad);
    const char *port = env_checked(o, "PADDLE_PSERVER_PORT", EV_PORT, &bad);
    const char *eps = env_checked(o, "PADDLE_PSERVER_ENDPOINTS", EV_ENDPOINTS, &bad);
    const char *list = env_checked(o, "PADDLE_PSERVERS_IP_PORT_LIST", EV_ENDPOINTS, &bad);
    if (bad)
        return PDT_EBADINPUT;
    if (ips && !port)
        return missing("PADDLE_PSERVER_IPS needs PADDLE_PSERVER_PORT");
    env_way ways[] = {
        {"PADDLE_PSERVER_ENDPOINTS", eps ? endpoint_list(eps, NULL) : NULL, false},
        {"PADDLE_PSERVER_IPS and PADDLE_PSERVER_PORT", ips ? endpoint_list(ips, port) : NULL,
         false},
        {"PADDLE_PSERVERS_IP_PORT_LIST", list ? endpoint_list(list, NULL) : NULL, true}};
    const char *value, *src;
    int rc = agree(ways, 3, &value, &src);
    if (rc)
        return rc;
    if (!value || !*value)
        return missing("no pserver endpoints: set PADDLE_PSERVERS_IP_PORT_LIST (Paddle 2), "
                       "PADDLE_PSERVER_ENDPOINTS or PADDLE_PSERVER_IPS and PADDLE_PSERVER_PORT "
                       "(Paddle 1), or give --pservers");
    pdt_list_free(&o->ctx->transpile.pservers);
    o->ctx->transpile.pservers = pdt_list_split(value);
    o->ctx->transpile.pservers_arg = value;
    o->ctx->transpile.src.pservers = src;
    return PDT_OK;
}

static int env_trainers(tcli_opts *o)
{
    bool ok = true;
    env_way ways[] = {{"PADDLE_TRAINERS", int_var(o, "PADDLE_TRAINERS", 1, &ok), false},
                      {"PADDLE_TRAINERS_NUM", ok ? int_var(o, "PADDLE_TRAINERS_NUM", 1, &ok)
                                                 : NULL, true}};
    const char *value, *src;
    if (!ok)
        return PDT_EBADINPUT;
    int rc = agree(ways, 2, &value, &src);
    if (rc)
        return rc;
    if (!value)
        return missing("PADDLE_TRAINERS_NUM (Paddle 2) or PADDLE_TRAINERS (Paddle 1) is not "
                       "set; give --trainers otherwise");
    o->ctx->transpile.trainers_arg = value;
    o->ctx->transpile.src.trainers = src;
    return PDT_OK;
}

static int env_trainer_id(tcli_opts *o)
{
    const char *v = cli_run_getenv(&o->run, "PADDLE_TRAINER_ID");
    long n;
    if (!v)
        return missing("PADDLE_TRAINER_ID is not set; give --trainer-id otherwise");
    if (!env_int("PADDLE_TRAINER_ID", v, 0, 1L << 30, &n))
        return PDT_EBADINPUT;
    o->ctx->transpile.trainer_id = (int)n;
    o->ctx->transpile.src.trainer_id = "PADDLE_TRAINER_ID";
    return PDT_OK;
}

/* The pserver this process is. */
static int env_current_pserver(tcli_opts *o)
{
    bool bad = false;
    env_way ways[] = {
        {"PADDLE_CURRENT_ENDPOINT", env_checked(o, "PADDLE_CURRENT_ENDPOINT", EV_ENDPOINT, &bad),
         false},
        {"PADDLE_CURRENT_IP and PADDLE_PSERVER_PORT",
         joined(o, "PADDLE_CURRENT_IP", "PADDLE_PSERVER_PORT", &bad), false},
        {"POD_IP and PADDLE_PORT", joined(o, "POD_IP", "PADDLE_PORT", &bad), true}};
    const char *value, *src;
    if (bad)
        return PDT_EBADINPUT;
    int rc = agree(ways, 3, &value, &src);
    if (rc)
        return rc;
    if (!value)
        return missing("this pserver's endpoint needs POD_IP and PADDLE_PORT (Paddle 2), or "
                       "PADDLE_CURRENT_IP and PADDLE_PSERVER_PORT, or PADDLE_CURRENT_ENDPOINT "
                       "(Paddle 1); give --endpoint otherwise");
    o->ctx->transpile.endpoint = value;
    o->ctx->transpile.src.endpoint = src;
    return PDT_OK;
}

/* A variable holding a non-negative integer, into *out when set. */
static int env_count(tcli_opts *o, const char *name, bool given, int *out)
{
    const char *v = given ? NULL : cli_run_getenv(&o->run, name);
    long n;
    if (!v)
        return PDT_OK;
    if (!env_int(name, v, 0, 0x7fffffff, &n))
        return PDT_EBADINPUT;
    *out = (int)n;
    return PDT_OK;
}

/* ServerRuntimeConfig's FLAGS_rpc_*_thread_num and SingleProcessMultiThread's
 * variables: read here, only under --from-env. */
static int env_runtime(tcli_opts *o)
{
    pdt_transpile_opts *t = &o->ctx->transpile;
    pdt_runtime *rt = &t->runtime;
    if (t->mode == PDT_MODE_PSERVER)
        return env_count(o, "FLAGS_rpc_send_thread_num", t->given.rpc_send, &rt->rpc_send_threads)
            || env_count(o, "FLAGS_rpc_get_thread_num", t->given.rpc_get, &rt->rpc_get_threads)
            || env_count(o, "FLAGS_rpc_prefetch_thread_num", t->given.rpc_prefetch,
                         &rt->rpc_prefetch_threads) ? PDT_EBADINPUT : PDT_OK;
    if (t->collective_mode != PDT_COLL_SPMT)
        return PDT_OK;
    const char *gpus = t->given.gpus ? NULL : cli_run_getenv(&o->run, "FLAGS_selected_gpus");
    /* Counted as --selected-gpus counts its value. */
    if (gpus)
        pdt_option_set(t, pdt_option_find(&pdt_family_transpile, "selected-gpus"), gpus,
                       TCLI_CMD);
    return env_count(o, "PADDLE_FUSE_ALLREDUCE", t->given.fuse, &rt->fuse_allreduce)
        || env_count(o, "PADDLE_LOSS_SCALE", t->given.loss_scale, &rt->loss_scale)
        ? PDT_EBADINPUT : PDT_OK;
}

/* nccl2 and collective jobs have trainers only. */
static int env_collective(tcli_opts *o)
{
    if (!o->ctx->transpile.given.trainers) {
        bool bad = false;
        const char *eps = env_checked(o, "PADDLE_TRAINER_ENDPOINTS", EV_ENDPOINTS, &bad);
        if (bad)
            return PDT_EBADINPUT;
        if (!eps)
            return missing("PADDLE_TRAINER_ENDPOINTS is not set; give --trainers otherwise");
        o->ctx->transpile.trainers_arg = eps;
        o->ctx->transpile.src.trainers = "PADDLE_TRAINER_ENDPOINTS";
        /* Both launchers export the count too; a count that is not the
         * list's length means the environment is not one job's. */
        bool ok = true;
        const char *num = int_var(o, "PADDLE_TRAINERS_NUM", 1, &ok);
        pdt_list l = pdt_list_split(eps);
        const char *count = ir_internf("%zu", l.n);
        pdt_list_free(&l);
        if (!ok)
            return PDT_EBADINPUT;
        if (num && num != count) {
            pdt_error("--from-env: PADDLE_TRAINERS_NUM is %s but PADDLE_TRAINER_ENDPOINTS "
                      "lists %s trainers", num, count);
            return PDT_EBADINPUT;
        }
    }
    if (!o->ctx->transpile.given.endpoint) {
        bool bad = false;
        const char *ep = env_checked(o, "PADDLE_CURRENT_ENDPOINT", EV_ENDPOINT, &bad);
        if (bad)
            return PDT_EBADINPUT;
        if (!ep)
            return missing("PADDLE_CURRENT_ENDPOINT is not set; give --endpoint otherwise");
        o->ctx->transpile.endpoint = ep;
        o->ctx->transpile.src.endpoint = "PADDLE_CURRENT_ENDPOINT";
    }
    int rc = !o->ctx->transpile.given.trainer_id ? env_trainer_id(o) : PDT_OK;
    return rc ? rc : env_runtime(o);
}

int tcli_from_env(tcli_opts *o)
{
    const pdt_transpile_opts *t = &o->ctx->transpile;
    if (t->mode != PDT_MODE_PSERVER)
        return env_collective(o);
    int rc = !t->given.role ? env_role(o) : PDT_OK;
    if (!rc && !t->given.pservers)
        rc = env_pservers(o);       /* PDT_EBADINPUT: a malformed endpoint variable */
    if (!rc && !t->given.trainers)
        rc = env_trainers(o);
    if (!rc && t->role == PDT_ROLE_TRAINER && !t->given.trainer_id)
        rc = env_trainer_id(o);
    if (!rc && t->role == PDT_ROLE_PSERVER && !t->given.endpoint)
        rc = env_current_pserver(o);
    return rc ? rc : env_runtime(o);
}
