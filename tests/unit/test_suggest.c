/* test_suggest.c - the endpoint grammar (src/passes/transpile/endpoints.c)
 * and the nearest-name search behind "did you mean" (src/suggest.c). */
#include <glib.h>

#include "passes/transpile/placement.h"
#include "suggest.h"
#include "unit.h"

static bool list_ok(const char *text, bool hosts)
{
    char *p = tp_list_problem(text, hosts);
    g_free(p);
    return p == NULL;
}

START_TEST(endpoint_lists)
{
    static const char *const good[] = {
        "127.0.0.1:6170", "127.0.0.1:6170,127.0.0.1:6171", "h:1", "h:65535", "a.b-c.d:80",
        "[::1]:6170", "[fe80::1]:1,[::ffff:10.0.0.1]:2", "ps-0.job.svc.cluster.local:6170",
        "0a:1", "a1-b2:1"};
    static const char *const bad[] = {
        "", ",", "h:1,", ",h:1", "h:1,,h:2", "h:1 h:2", " h:1", "h:1 ", "h:1\t", "h:1;h:2",
        "http://h:1", "tcp://h:1", "h:1,H:1", "h", "h:", ":1", "h:0", "h:65536", "h:01",
        "h:+1", "h:-1", "h:1x", "h_1:1", "-h:1", "h-:1", "a..b:1", "a.:1", ".a:1",
        "::1:80", "[::1:80", "[::1]", "[zz::1]:1", "256.1.1.1:1", "1.2.3:1", "01.2.3.4:1",
        "1.2.3.4.5:1", "h:1:2"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(list_ok(good[i], false), "'%s' refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!list_ok(bad[i], false), "'%s' accepted", bad[i]);
    /* A label of 63 letters is a hostname; of 64 it is not. */
    char label[80];
    memset(label, 'a', 63);
    strcpy(label + 63, ":1");
    ck_assert(list_ok(label, false));
    memset(label, 'a', 64);
    strcpy(label + 64, ":1");
    ck_assert(!list_ok(label, false));
}
END_TEST

START_TEST(host_lists_and_ports)
{
    ck_assert(list_ok("10.0.0.1,10.0.0.2", true));
    ck_assert(list_ok("[::1],h", true));
    ck_assert(!list_ok("10.0.0.1:6170", true));
    ck_assert(!list_ok("10.0.0.1,10.0.0.1", true));
    ck_assert(!list_ok("10.0.0.1 10.0.0.2", true));
    static const char *const ports_ok[] = {"1", "80", "65535"};
    static const char *const ports_bad[] = {"0", "65536", "080", "+1", " 1", "1 ", "x", ""};
    for (size_t i = 0; i < 3; i++) {
        char *p = tp_port_problem(ports_ok[i]);
        ck_assert_msg(!p, "port '%s' refused", ports_ok[i]);
    }
    for (size_t i = 0; i < sizeof ports_bad / sizeof *ports_bad; i++) {
        char *p = tp_port_problem(ports_bad[i]);
        ck_assert_msg(p, "port '%s' accepted", ports_bad[i]);
        g_free(p);
    }
    char *one = tp_endpoint_problem("h:1,h:2");     /* a single endpoint setting */
    ck_assert_ptr_nonnull(one);
    g_free(one);
}
END_TEST

/* The message quotes the item, at most 200 bytes of it, control bytes
 * escaped. */
START_TEST(messages_quote_the_item)
{
    char *p = tp_list_problem("a:1,http://b:2", false);
    ck_assert_ptr_nonnull(strstr(p, "'http://b:2'"));
    g_free(p);
    GString *long_item = g_string_new("");
    for (int i = 0; i < 500; i++)
        g_string_append_c(long_item, 'x');
    g_string_append(long_item, " :1");
    p = tp_list_problem(long_item->str, false);
    ck_assert_ptr_nonnull(strstr(p, "(the first 200 of 503 bytes)"));
    ck_assert_uint_lt(strlen(p), 400);
    g_free(p);
    g_string_free(long_item, TRUE);
    p = tp_list_problem("a\x01:1", false);
    ck_assert_ptr_nonnull(strstr(p, "'a\\x01:1'"));
    g_free(p);
}
END_TEST

START_TEST(edit_distance)
{
    ck_assert_uint_eq(pdt_edit_distance("kitten", "sitting", 9), 3);
    ck_assert_uint_eq(pdt_edit_distance("", "abc", 9), 3);
    ck_assert_uint_eq(pdt_edit_distance("split-vars", "split_vars", 9), 0);
    ck_assert_uint_gt(pdt_edit_distance("a", "abcdefgh", 2), 2);
}
END_TEST

static char *hint(const char *word, const char *const *names, size_t n)
{
    pdt_near near;
    pdt_near_init(&near, word);
    for (size_t i = 0; i < n; i++)
        pdt_near_offer(&near, names[i]);
    return pdt_near_hint(&near, "");
}

START_TEST(nearest_names)
{
    static const char *const keys[] = {"learning_rate", "beta1", "beta2", "epsilon"};
    char *h = hint("beta", keys, 4);
    ck_assert_str_eq(h, "; did you mean 'beta1' or 'beta2'?");
    g_free(h);
    h = hint("epsilom", keys, 4);
    ck_assert_str_eq(h, "; did you mean 'epsilon'?");
    g_free(h);
    h = hint("zzz", keys, 4);           /* nothing near: no hint */
    ck_assert_str_eq(h, "");
    g_free(h);
    static const char *const passes[] = {"split_vars", "find_optimize", "split_byref"};
    h = hint("split_var", passes, 3);   /* the nearest wins over a farther one */
    ck_assert_str_eq(h, "; did you mean 'split_vars'?");
    g_free(h);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("suggest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, endpoint_lists);
    tcase_add_test(tc, host_lists_and_ports);
    tcase_add_test(tc, messages_quote_the_item);
    tcase_add_test(tc, edit_distance);
    tcase_add_test(tc, nearest_names);
    suite_add_tcase(s, tc);
    return s;
}
