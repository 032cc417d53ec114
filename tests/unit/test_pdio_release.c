/* test_pdio_release.c - pdio_release_unread (issue 33): the pages of a
 * mapped input that no op of its program reads any more go back before
 * the program is written, and the program still writes the same bytes
 * (a page given back that is read again holds the file's bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/pbconv.h"
#include "io/pdio.h"
#include "io/pdio_map.h"
#include "unit.h"

/* The same LEN bytes. */
#define assert_same(got, want, len) ck_assert(memcmp((got), (want), (len)) == 0)

enum { N_OPS = 4000 };  /* about 300 KB: dozens of pages */

/* A binary program of N_OPS relu ops written to a temporary file; its path. */
static char *write_program(void)
{
    GString *t = g_string_new("blocks { idx: 0 parent_idx: -1 vars { name: \"x\" type { type: LOD_TENSOR } }");
    for (int i = 0; i < N_OPS; i++)
        g_string_append_printf(t, " ops { type: \"relu\" inputs { parameter: \"X\" arguments: \"x\" }"
                                  " outputs { parameter: \"Out\" arguments: \"x\" }"
                                  " attrs { name: \"n\" type: INT i: %d } }", i);
    g_string_append(t, " }\n");
    ir_program *p = pdio_parse("gen", (const uint8_t *)t->str, t->len);
    ck_assert_ptr_nonnull(p);
    size_t len = 0;
    uint8_t *bytes = pbconv_encode(p, &len);
    ck_assert_ptr_nonnull(bytes);
    char *path = g_strdup("/tmp/pdtrans-test-release-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    free(bytes);
    ir_program_free(p);
    g_string_free(t, TRUE);
    return path;
}

/* Keeps the first half of block 0's ops. */
static void drop_second_half(ir_program *p)
{
    ir_block *b = p->blocks[0];
    ir_block_set_ops(b, b->ops, b->n_ops / 2);
}

START_TEST(released_pages_write_the_same_bytes)
{
    char *path = write_program();
    ir_program *p = pdio_read(path), *ref = pdio_read(path);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(ref);
    ck_assert(pdio_is_mapped(p->input_bytes));
    size_t whole_len = 0, want_len = 0, got_len = 0;
    uint8_t *whole = pbconv_encode(p, &whole_len);
    /* nothing removed: every page an op lies on stays, the bytes too */
    pdio_release_unread(p);
    uint8_t *again = pbconv_encode(p, &got_len);
    ck_assert_uint_eq(got_len, whole_len);
    assert_same(again, whole, got_len);
    free(again);
    /* half the ops gone: their pages go back; what is left writes as
     * the same ops do in a program read afresh */
    drop_second_half(p);
    drop_second_half(ref);
    pdio_release_unread(p);
    uint8_t *want = pbconv_encode(ref, &want_len);
    uint8_t *got = pbconv_encode(p, &got_len);
    ck_assert_uint_lt(want_len, whole_len / 2 + 64);
    ck_assert_uint_eq(got_len, want_len);
    assert_same(got, want, got_len);
    /* every op given back, then the ops put back: read again, their
     * pages fault in the file's bytes */
    ir_block_set_ops(p->blocks[0], NULL, 0);
    pdio_release_unread(p);
    ir_program_free(p);
    p = pdio_read(path);
    pdio_release_unread(p);
    uint8_t *fresh = pbconv_encode(p, &got_len);
    ck_assert_uint_eq(got_len, whole_len);
    assert_same(fresh, whole, got_len);
    free(fresh);
    free(got);
    free(want);
    free(whole);
    ir_program_free(p);
    ir_program_free(ref);
    unlink(path);
    g_free(path);
}
END_TEST

START_TEST(a_program_not_read_from_a_mapping_is_left_alone)
{
    static const char text[] = "blocks { idx: 0 parent_idx: -1 ops { type: \"relu\" } }\n";
    ir_program *p = pdio_parse("t", (const uint8_t *)text, sizeof text - 1);
    ck_assert_ptr_nonnull(p);
    size_t a_len = 0, b_len = 0;
    uint8_t *a = pbconv_encode(p, &a_len);
    pdio_release_unread(p);
    pdio_release_unread(NULL);
    uint8_t *b = pbconv_encode(p, &b_len);
    ck_assert_uint_eq(a_len, b_len);
    assert_same(b, a, b_len);
    free(a);
    free(b);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pdio_release");
    TCase *t = tcase_create("pdio_release");
    tcase_add_test(t, released_pages_write_the_same_bytes);
    tcase_add_test(t, a_program_not_read_from_a_mapping_is_left_alone);
    suite_add_tcase(s, t);
    return s;
}
