/* optimizer_spec.c - parsing "kind:key=value,..." flag values (see
 * optimizer_util.h), and Python's float repr for str_value attrs.  It
 * calls no pass: the passes' parsers call it. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "../../suggest.h"
#include "optimizer_util.h"

static bool is_ident(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

static char *dup_n(const char *s, size_t n)
{
    char *r = xmalloc(n + 1);
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

static int spec_add(opt_spec *s, char *key, char *val)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->keys[i], key) == 0) {
            pdt_usage_error(s->cmd, "option '%s': key '%s' is given twice", s->flag, key);
            free(key);
            free(val);
            return PDT_EUSAGE;
        }
    s->keys = xrealloc(s->keys, (s->n + 1) * sizeof *s->keys);
    s->vals = xrealloc(s->vals, (s->n + 1) * sizeof *s->vals);
    s->used = xrealloc(s->used, (s->n + 1) * sizeof *s->used);
    s->keys[s->n] = key;
    s->vals[s->n] = val;
    s->used[s->n] = false;
    s->n++;
    return PDT_OK;
}

/* A bare item continues the previous key's list value. */
static void spec_extend(opt_spec *s, const char *item, size_t n)
{
    char **v = &s->vals[s->n - 1];
    size_t old = strlen(*v);
    *v = xrealloc(*v, old + 1 + n + 1);
    (*v)[old] = ',';
    memcpy(*v + old + 1, item, n);
    (*v)[old + 1 + n] = '\0';
}

int opt_spec_parse(const char *cmd, const char *flag, const char *text, opt_spec *out)
{
    memset(out, 0, sizeof *out);
    out->cmd = cmd;
    out->flag = flag;
    if (!text || !*text) {
        pdt_usage_error(cmd, "option '%s' needs a value", flag);
        return PDT_EUSAGE;
    }
    const char *colon = strchr(text, ':');
    size_t klen = colon ? (size_t)(colon - text) : strlen(text);
    if (!is_ident(text, klen)) {
        pdt_usage_error(cmd, "option '%s': '%.*s' is not a name (expected KIND[:KEY=VALUE,...])",
                        flag, (int)klen, text);
        return PDT_EUSAGE;
    }
    out->kind = dup_n(text, klen);
    if (!colon)
        return PDT_OK;
    const char *p = colon + 1;
    if (!*p) {
        pdt_usage_error(cmd, "option '%s': nothing after ':'", flag);
        opt_spec_free(out);
        return PDT_EUSAGE;
    }
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (n == 0) {
            pdt_usage_error(cmd, "option '%s': empty item in '%s'", flag, text);
            opt_spec_free(out);
            return PDT_EUSAGE;
        }
        if (eq) {
            size_t kn = (size_t)(eq - p);
            if (!is_ident(p, kn) || kn + 1 == n) {
                pdt_usage_error(cmd, "option '%s': '%.*s' is not KEY=VALUE", flag, (int)n, p);
                opt_spec_free(out);
                return PDT_EUSAGE;
            }
            if (spec_add(out, dup_n(p, kn), dup_n(eq + 1, n - kn - 1)) != PDT_OK) {
                opt_spec_free(out);
                return PDT_EUSAGE;
            }
        } else if (out->n == 0) {
            pdt_usage_error(cmd, "option '%s': '%.*s' is not KEY=VALUE", flag, (int)n, p);
            opt_spec_free(out);
            return PDT_EUSAGE;
        } else {
            spec_extend(out, p, n);
        }
        if (!end)
            break;
        p = end + 1;
    }
    return PDT_OK;
}

void opt_spec_free(opt_spec *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->keys[i]);
        free(s->vals[i]);
    }
    free(s->keys);
    free(s->vals);
    free(s->used);
    free(s->kind);
    memset(s, 0, sizeof *s);
}

/* Index of `key` (or its alias), -1 when absent, -2 when both are given. */
static long spec_find(opt_spec *s, const char *key, const char *alias)
{
    long hit = -1;
    const char *names[2] = {key, alias};
    for (size_t k = 0; k < 2 && names[k] && s->n_asked < sizeof s->asked / sizeof *s->asked;
         k++)
        s->asked[s->n_asked++] = names[k];
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->keys[i], key) == 0 || (alias && strcmp(s->keys[i], alias) == 0)) {
            if (hit >= 0) {
                pdt_usage_error(s->cmd, "option '%s': keys '%s' and '%s' mean the same", s->flag,
                                key, alias);
                return -2;
            }
            hit = (long)i;
            s->used[i] = true;
        }
    return hit;
}

static bool parse_double(const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || isspace((unsigned char)*v) || *end || errno || !isfinite(d))
        return false;
    *out = d;
    return true;
}

int opt_spec_double(opt_spec *s, const char *key, const char *alias, double dflt, double *out)
{
    long i = spec_find(s, key, alias);
    if (i == -2)
        return PDT_EUSAGE;
    if (i < 0) {
        *out = dflt;
        return PDT_OK;
    }
    if (!parse_double(s->vals[i], out)) {
        pdt_usage_error(s->cmd, "option '%s': key '%s' needs a number, not '%.200s'", s->flag,
                        s->keys[i], s->vals[i]);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

int opt_spec_bool(opt_spec *s, const char *key, bool dflt, bool *out)
{
    long i = spec_find(s, key, NULL);
    if (i == -2)
        return PDT_EUSAGE;
    if (i < 0) {
        *out = dflt;
        return PDT_OK;
    }
    const char *v = s->vals[i];
    if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "1")) {
        *out = true;
    } else if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "0")) {
        *out = false;
    } else {
        pdt_usage_error(s->cmd, "option '%s': key '%s' needs true or false, not '%s'", s->flag,
                        key, v);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

int opt_spec_long(opt_spec *s, const char *key, long dflt, long *out)
{
    long i = spec_find(s, key, NULL);
    if (i == -2)
        return PDT_EUSAGE;
    if (i < 0) {
        *out = dflt;
        return PDT_OK;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s->vals[i], &end, 10);
    if (!*s->vals[i] || isspace((unsigned char)*s->vals[i]) || *end || errno) {
        pdt_usage_error(s->cmd, "option '%s': key '%s' needs an integer, not '%.200s'", s->flag, key,
                        s->vals[i]);
        return PDT_EUSAGE;
    }
    *out = v;
    return PDT_OK;
}

int opt_spec_string(opt_spec *s, const char *key, const char **out)
{
    long i = spec_find(s, key, NULL);
    if (i == -2)
        return PDT_EUSAGE;
    *out = i < 0 ? NULL : ir_intern(s->vals[i]);
    return PDT_OK;
}

int opt_spec_doubles(opt_spec *s, const char *key, double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    long i = spec_find(s, key, NULL);
    if (i == -2)
        return PDT_EUSAGE;
    if (i < 0) {
        pdt_usage_error(s->cmd, "option '%s': key '%s' is required for '%s'", s->flag, key,
                        s->kind);
        return PDT_EUSAGE;
    }
    const char *v = s->vals[i];
    size_t cap = 1;
    for (const char *c = v; *c; c++)
        cap += *c == ',';
    double *r = xcalloc(cap, sizeof *r);
    size_t k = 0;
    for (const char *p = v;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *item = dup_n(p, len);
        bool ok = parse_double(item, &r[k]);
        free(item);
        if (!ok) {
            pdt_usage_error(s->cmd, "option '%s': key '%s' needs numbers, not '%s'", s->flag, key,
                            v);
            free(r);
            return PDT_EUSAGE;
        }
        k++;
        if (!end)
            break;
        p = end + 1;
    }
    *out = r;
    *n = k;
    return PDT_OK;
}

int opt_spec_finish(opt_spec *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!s->used[i]) {
            pdt_near near;
            pdt_near_init(&near, s->keys[i]);
            for (size_t k = 0; k < s->n_asked; k++)
                pdt_near_offer(&near, s->asked[k]);
            char *hint = pdt_near_hint(&near, "");
            pdt_usage_error(s->cmd, "option '%s': unknown key '%s' for '%s'%s", s->flag,
                            s->keys[i], s->kind, hint);
            g_free(hint);
            return PDT_EUSAGE;
        }
    return PDT_OK;
}

/* Python's repr of a float: the shortest digits that round-trip, fixed
 * notation for exponents -4..15, else d.ddde+XX. */
void opt_py_float_str(double v, char *buf, size_t size)
{
    if (isnan(v)) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, size, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char tmp[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* tmp is [-]d[.ddd]e[+-]XX */
    const char *p = tmp;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[32];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p))
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    char out[80];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (exp >= -4 && exp < 16) {
        if (exp >= 0) {
            for (int i = 0; i <= exp; i++)
                out[o++] = (size_t)i < nd ? digits[i] : '0';
            out[o++] = '.';
            if ((size_t)exp + 1 < nd)
                for (size_t i = (size_t)exp + 1; i < nd; i++)
                    out[o++] = digits[i];
            else
                out[o++] = '0';
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -exp - 1; i++)
                out[o++] = '0';
            for (size_t i = 0; i < nd; i++)
                out[o++] = digits[i];
        }
        out[o] = '\0';
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < nd; i++)
                out[o++] = digits[i];
        }
        out[o] = '\0';
        char e[16];
        snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        strcat(out, e);
    }
    snprintf(buf, size, "%s", out);
}
