/* endpoints.c - the one grammar of endpoints, for every flag (--pservers,
 * --endpoint, --trainers in nccl2/collective form) and every launcher
 * variable (PADDLE_PSERVER_ENDPOINTS, PADDLE_PSERVERS_IP_PORT_LIST,
 * PADDLE_TRAINER_ENDPOINTS, PADDLE_CURRENT_ENDPOINT, POD_IP + PADDLE_PORT,
 * ...):
 *
 *   LIST     = ENDPOINT *("," ENDPOINT)      commas only, no empty item
 *   ENDPOINT = HOST ":" PORT
 *   HOST     = hostname (RFC 1123 labels) | dotted IPv4 | "[" IPv6 "]"
 *   PORT     = 1-65535, decimal, no sign, no leading zero
 *
 * Paddle takes any string and the job fails at connect time inside the
 * pod; a launcher's mistake (a space for a comma, a scheme, ",,") is
 * better refused here.  The functions return the problem as a message
 * (g_free it) that quotes the bad item, at most 200 bytes of it; the
 * caller puts the flag or variable in front. */
#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>

#include "builders.h"

enum { QUOTE_MAX = 200 };

char *tp_quote(const char *s, size_t len)
{
    GString *g = g_string_new("'");
    size_t shown = len > QUOTE_MAX ? QUOTE_MAX : len;
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            g_string_append_printf(g, "\\x%02x", c);
        else
            g_string_append_c(g, (char)c);
    }
    g_string_append_c(g, '\'');
    if (shown < len)
        g_string_append_printf(g, " (the first %d of %zu bytes)", QUOTE_MAX, len);
    return g_string_free(g, FALSE);
}

static bool is_label(const char *s, size_t len)
{
    if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-')
            return false;
    return true;
}

/* Digits and dots only: meant as an IPv4 address, so it must be one
 * (inet_pton takes exactly four decimal parts, no leading zeros). */
static bool looks_numeric(const char *s, size_t len)
{
    return strspn(s, "0123456789.") >= len;
}

static bool is_hostname(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return false;
    for (size_t start = 0, i = 0; i <= len; i++)
        if (i == len || s[i] == '.') {
            if (!is_label(s + start, i - start))
                return false;
            start = i + 1;
        }
    return true;
}

/* S[0..LEN) is an address of family AF (AF_INET or AF_INET6). */
static bool is_address(int af, const char *s, size_t len)
{
    char buf[INET6_ADDRSTRLEN];
    struct in6_addr a;      /* room for either family */
    if (len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return inet_pton(af, buf, &a) == 1;
}

static char *host_problem_n(const char *s, size_t len)
{
    if (len && s[0] == '[' && s[len - 1] == ']' && is_address(AF_INET6, s + 1, len - 2))
        return NULL;
    if (looks_numeric(s, len) ? is_address(AF_INET, s, len) : is_hostname(s, len))
        return NULL;
    char *q = tp_quote(s, len);
    char *msg;
    if (memchr(s, ':', len) && s[0] != '[' && strspn(s, "0123456789abcdefABCDEF:.") >= len)
        msg = g_strdup_printf("host %s is not bracketed: an IPv6 address is written "
                              "[ADDRESS]:PORT", q);
    else if (looks_numeric(s, len) && len)
        msg = g_strdup_printf("host %s is not a dotted IPv4 address", q);
    else
        msg = g_strdup_printf("host %s is not a hostname (RFC 1123: letters, digits and "
                              "'-' in dot-separated labels), a dotted IPv4 address or a "
                              "bracketed IPv6 address", q);
    g_free(q);
    return msg;
}

static bool port_ok_n(const char *s, size_t len)
{
    if (len == 0 || len > 5 || s[0] == '0' || strspn(s, "0123456789") < len)
        return false;
    long port = 0;
    for (size_t i = 0; i < len; i++)
        port = port * 10 + (s[i] - '0');
    return port <= 65535;
}

char *tp_port_problem(const char *port)
{
    if (port_ok_n(port, strlen(port)))
        return NULL;
    char *q = tp_quote(port, strlen(port));
    char *msg = g_strdup_printf("port %s is not a number from 1 to 65535 (no sign, no "
                                "leading zero)", q);
    g_free(q);
    return msg;
}

/* Whitespace and schemes first: they are the usual mistakes and say more
 * than "not HOST:PORT". */
static char *endpoint_problem_n(const char *s, size_t len)
{
    char *q = tp_quote(s, len), *msg = NULL;
    const char *scheme = g_strstr_len(s, (gssize)len, "://");
    size_t blank = 0;       /* whitespace, or another list separator than ',' */
    while (blank < len && !isspace((unsigned char)s[blank]) && s[blank] != ';')
        blank++;
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++)
        if (s[i] == ':')
            colon = s + i;
    if (blank < len) {
        msg = g_strdup_printf("endpoint %s holds %s; separate endpoints with commas only "
                              "(HOST:PORT,HOST:PORT)", q, s[blank] == ';' ? "';'" : "whitespace");
    } else if (scheme) {
        msg = g_strdup_printf("endpoint %s has a scheme ('%.*s'); give HOST:PORT only", q,
                              (int)(scheme - s + 3), s);
    } else if (!colon || !port_ok_n(colon + 1, len - (size_t)(colon + 1 - s)) ||
               colon == s) {
        msg = g_strdup_printf("endpoint %s is not HOST:PORT with a port from 1 to 65535", q);
    } else {
        char *host = host_problem_n(s, (size_t)(colon - s));
        if (host)
            msg = g_strdup_printf("endpoint %s: %s", q, host);
        g_free(host);
    }
    g_free(q);
    return msg;
}

char *tp_endpoint_problem(const char *ep)
{
    if (strchr(ep, ',')) {
        char *q = tp_quote(ep, strlen(ep));
        char *msg = g_strdup_printf("%s is a list; this setting is one endpoint, HOST:PORT", q);
        g_free(q);
        return msg;
    }
    return endpoint_problem_n(ep, strlen(ep));
}

char *tp_host_problem(const char *host)
{
    size_t len = strlen(host);
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)host[i]) || host[i] == ',') {
            char *q = tp_quote(host, len);
            char *msg = g_strdup_printf("%s is not one host", q);
            g_free(q);
            return msg;
        }
    if (strstr(host, "://")) {
        char *q = tp_quote(host, len);
        char *msg = g_strdup_printf("host %s has a scheme; give the host only", q);
        g_free(q);
        return msg;
    }
    return host_problem_n(host, len);
}

/* The key two items are the same under: hostnames are case-insensitive. */
static char *dup_key(const char *s, size_t len)
{
    return g_ascii_strdown(s, (gssize)len);
}

char *tp_list_problem(const char *text, bool hosts)
{
    size_t len = strlen(text);
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char *msg = NULL;
    size_t item = 1;
    for (size_t start = 0, i = 0; i <= len && !msg; i++) {
        if (i < len && text[i] != ',')
            continue;
        const char *s = text + start;
        size_t n = i - start;
        if (n == 0) {
            char *q = tp_quote(text, len);
            msg = g_strdup_printf("item %zu of %s is empty; separate items with single commas",
                                  item, q);
            g_free(q);
        } else if (hosts) {
            char *one = g_strndup(s, n);
            msg = tp_host_problem(one);
            g_free(one);
        } else {
            msg = endpoint_problem_n(s, n);
        }
        if (!msg) {
            char *key = dup_key(s, n);
            if (g_hash_table_contains(seen, key)) {
                char *q = tp_quote(s, n);
                msg = g_strdup_printf("%s %s is listed twice", hosts ? "host" : "endpoint", q);
                g_free(q);
                g_free(key);
            } else {
                g_hash_table_add(seen, key);
            }
        }
        start = i + 1;
        item++;
    }
    g_hash_table_destroy(seen);
    return msg;
}
