/* test_pbenc.c - the direct encoder (src/io/pbenc.c) against protobuf-c,
 * the reference: for every program among the golden tests' inputs and
 * expected outputs, the fuzz reproducers and ../shared/testdata-real, the
 * bytes of pbconv_encode must equal protobuf_c_message_pack of the message
 * pbconv_from_ir builds; as read, and again with every op dirty and every
 * var counted as added (so the sorted orders are compared too).  Clean ops
 * read from binary files are written back as their bytes; the tests below
 * check when that happens and that the bytes are protobuf-c's.  The
 * chunked form (pbconv_encode_to, what files are written with) must hand
 * over the same bytes, in full pieces but the last. */
#include <glib.h>
#include <sys/stat.h>

#include "ir/ir_internal.h"
#include "io/pbconv.h"
#include "io/pdio.h"
#include "unit.h"

static uint8_t *reference_pack(const ir_program *p, size_t *len)
{
    pbconv_out out = {ir_arena_new(), 0, 0, NULL};
    PbProgram *msg = pbconv_from_ir(p, &out);
    *len = protobuf_c_message_get_packed_size(&msg->base);
    uint8_t *buf = malloc(*len + 1);
    protobuf_c_message_pack(&msg->base, buf);
    pbconv_release(&out);
    ir_arena_free(out.scratch);
    return buf;
}

/* What pbconv_encode_to hands its sink, and whether the pieces keep its
 * promise: none empty, every one but the last exactly the chunk. */
typedef struct {
    GByteArray *bytes;
    size_t chunk, calls, fail_at;
    bool short_piece_seen, promise_broken;
} pieces;

static bool collect_piece(void *arg, const uint8_t *data, size_t len)
{
    pieces *c = arg;
    c->calls++;
    if (len == 0 || len > c->chunk || c->short_piece_seen)
        c->promise_broken = true;
    c->short_piece_seen |= len < c->chunk;
    g_byte_array_append(c->bytes, data, (guint)len);
    return c->calls != c->fail_at;
}

/* The chunked encoding of p, checked against its promise; *len its size. */
static uint8_t *chunked_encode(const ir_program *p, size_t chunk, size_t *len, size_t *calls)
{
    pieces c = {g_byte_array_new(), chunk, 0, 0, false, false};
    uint64_t total = 0;
    ck_assert_int_eq(pbconv_encode_to(p, chunk, collect_piece, &c, &total), 0);
    ck_assert_msg(!c.promise_broken, "chunk %zu: a piece is empty, or short before the last",
                  chunk);
    ck_assert_uint_eq(total, c.bytes->len);
    *len = c.bytes->len;
    if (calls)
        *calls = c.calls;
    return g_byte_array_free(c.bytes, false);
}

static void assert_same_as(const uint8_t *ref, size_t nr, const uint8_t *enc, size_t ne,
                           const char *path, const char *variant, const char *how)
{
    size_t at = 0;
    while (at < nr && at < ne && ref[at] == enc[at])
        at++;
    ck_assert_msg(nr == ne && at == nr,
                  "%s (%s): protobuf-c packs %zu bytes, %s %zu; first difference "
                  "at byte %zu", path, variant, nr, how, ne, at);
}

/* Which file and which variant differ, and where; the whole-buffer
 * encoding and a chunked one (7 bytes: varints and strings split across
 * pieces everywhere) against protobuf-c. */
static void assert_same_bytes(const ir_program *p, const char *path, const char *variant)
{
    size_t nr = 0, ne = 0, nc = 0;
    uint8_t *ref = reference_pack(p, &nr);
    uint8_t *enc = pbconv_encode(p, &ne);
    assert_same_as(ref, nr, enc, ne, path, variant, "pbconv_encode");
    uint8_t *chunked = chunked_encode(p, 7, &nc, NULL);
    assert_same_as(ref, nr, chunked, nc, path, variant, "pbconv_encode_to in 7-byte pieces");
    free(ref);
    free(enc);
    g_free(chunked);
}

static void mark_all_edited(ir_program *p)
{
    for (size_t b = 0; b < p->n_blocks; b++) {
        ir_block *blk = p->blocks[b];
        for (size_t i = 0; i < blk->n_ops; i++)
            blk->ops[i]->enc_dirty_ = true;
        for (size_t i = 0; i < blk->n_vars; i++)
            blk->vars[i]->from_input = false;
    }
}

/* Compares one file if it holds a program; returns 1 if it did. */
static size_t ops_kept_as_read;

static int compare_file(const char *path)
{
    ir_program *p = pdio_read(path);
    if (!p)
        return 0;
    for (size_t b = 0; b < p->n_blocks; b++)
        for (size_t i = 0; i < p->blocks[b]->n_ops; i++)
            ops_kept_as_read += ir_enc(p->blocks[b]->ops[i])->wire != NULL;
    assert_same_bytes(p, path, "as read");
    mark_all_edited(p);
    assert_same_bytes(p, path, "every op dirty, every var added");
    ir_program_free(p);
    return 1;
}

static int walk(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return 0;
    int n = 0;
    const char *name;
    while ((name = g_dir_read_name(d))) {
        gchar *path = g_build_filename(dir, name, NULL);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                n += walk(path);
            else if (S_ISREG(st.st_mode) && st.st_size < (64 << 20))
                n += compare_file(path);
        }
        g_free(path);
    }
    g_dir_close(d);
    return n;
}

START_TEST(golden_programs_encode_as_protobuf_c_packs)
{
    ops_kept_as_read = 0;
    int n = walk("tests/golden");
    /* 33 binary inputs and about 300 text files are programs. */
    ck_assert_int_ge(n, 250);
    /* The binary inputs' ops are written back as read (checked "as read"). */
    ck_assert_uint_ge(ops_kept_as_read, 200);
}
END_TEST

START_TEST(fuzz_reproducers_encode_as_protobuf_c_packs)
{
    /* Most reproducers are refused on purpose; one binary one is a program. */
    int n = walk("tests/fuzz/crashes");
    ck_assert_int_ge(n, 1);
}
END_TEST

START_TEST(real_programs_encode_as_protobuf_c_packs)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    ck_assert_int_ge(walk(dir), 18);
}
END_TEST

/* Values whose encoding has a catch: negative int32 and enum (ten bytes),
 * field numbers above 15 (two-byte keys), a non-ASCII byte, NaN, unknown
 * fields at every level, an attr holding a second kind of value. */
static const char edge_program[] =
    "blocks {\n"
    "  idx: 0\n  parent_idx: -1\n  forward_block_idx: -7\n"
    "  vars { name: \"x\" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: -1 "
    "dims: 9223372036854775807 99: 5 } lod_level: -3 98: \"u\" } 97: 1 } persistable: true "
    "attrs { name: \"a\" type: INT i: -2 ints: -5 } 96: 2 }\n"
    "  ops { type: \"t\" inputs { parameter: \"X\" arguments: \"x\" 95: 3 } "
    "attrs { name: \"neg\" type: INT i: -1 } "
    "attrs { name: \"f\" type: FLOAT f: nan } "
    "attrs { name: \"s\" type: STRING s: \"a\\377b\" } "
    "attrs { name: \"l\" type: LONG l: -9223372036854775808 } "
    "attrs { name: \"v\" type: VARS vars_name: \"x\" vars_name: \"\" } "
    "attrs { name: \"d\" type: FLOAT64 float64: -0.0 i: 4 } "
    "attrs { name: \"sc\" type: SCALAR scalar { type: COMPLEX128 c { r: 1 i: -1 } 94: 4 } } "
    "attrs { name: \"e\" type: SCALARS scalars { type: LONG i: -1 } scalars { type: BOOLEAN b: true } } "
    "attrs { name: \"bad\" type: 1000 bools: true float64s: 2.5 93: \"z\" } "
    "is_target: false 92: 6 }\n"
    "  91: 7\n"
    "}\n"
    "version { version: -1 90: 8 }\n"
    "89: 9\n";

START_TEST(edge_values_encode_as_protobuf_c_packs)
{
    ir_program *p = pdio_parse("edge.pbtxt", (const uint8_t *)edge_program,
                               strlen(edge_program));
    ck_assert_ptr_nonnull(p);
    assert_same_bytes(p, "edge.pbtxt", "as read");
    /* A pass's edits: a new op with a negative attr, a new var. */
    ir_op *op = ir_block_append_op(p->blocks[0], "new");
    ir_op_set_int(op, "z", -4);
    ir_op_set_string(op, "a", "");
    ir_op_set_input1(op, "Y", "x");
    ir_op_set_input1(op, "B", "x");
    ir_block_var(p->blocks[0], "added");
    assert_same_bytes(p, "edge.pbtxt", "after edits");
    mark_all_edited(p);
    assert_same_bytes(p, "edge.pbtxt", "every op dirty, every var added");
    ir_program_free(p);
}
END_TEST

/* Ops read from binary bytes are written back as those bytes while clean
 * (issue 14 point 5): a clean op is copied, an op whose attrs were only
 * read is still copied, an edited op (through the API, or directly and
 * marked) is encoded from its fields, sorted; always as protobuf-c packs. */
static const char clean_program[] =
    "blocks { idx: 0 parent_idx: -1\n"
    "  vars { name: \"x\" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 } } } }\n"
    "  ops { type: \"c\" inputs { parameter: \"Y\" arguments: \"x\" } "
    "inputs { parameter: \"A\" arguments: \"x\" } attrs { name: \"z\" type: INT i: -1 } "
    "attrs { name: \"a\" type: STRINGS strings: \"s\" } 9: 1 }\n"
    "  ops { type: \"r\" attrs { name: \"z\" type: INT i: 3 } attrs { name: \"a\" type: LONG l: 5 } "
    "attrs { name: \"op_role\" type: INT i: 1 } }\n"
    "  ops { type: \"e\" attrs { name: \"z\" type: INT i: 3 } attrs { name: \"a\" type: LONG l: 5 } }\n"
    "  ops { type: \"w\" attrs { name: \"sub_block\" type: BLOCK block_idx: 0 } }\n"
    "}\n";

/* The binary form of a text program (the caller frees it). */
static uint8_t *binary_of(const char *text, size_t *len)
{
    ir_program *t = pdio_parse("test.pbtxt", (const uint8_t *)text, strlen(text));
    ck_assert_ptr_nonnull(t);
    *len = 0;
    uint8_t *bin = pdio_serialize(t, false, len);
    ir_program_free(t);
    return bin;
}

static void assert_encodes_to(const ir_program *p, const uint8_t *want, size_t len, bool same)
{
    size_t n = 0;
    uint8_t *out = pbconv_encode(p, &n);
    ck_assert_int_eq(n == len && memcmp(out, want, n) == 0, same);
    free(out);
}

START_TEST(clean_ops_are_written_as_read)
{
    size_t len;
    uint8_t *bin = binary_of(clean_program, &len);
    size_t len0 = len;
    ir_program *p = pbconv_decode(bin, len);
    ck_assert_ptr_nonnull(p);
    ir_block *b = p->blocks[0];
    for (size_t i = 0; i < b->n_ops; i++)
        ck_assert_ptr_nonnull(ir_enc(b->ops[i])->wire);
    /* Attrs stay bytes, except where one names a block (walks look). */
    ck_assert(b->ops[1]->enc_attrs_pending_ && !b->ops[1]->attrs && b->ops[1]->n_attrs == 3);
    ck_assert(!b->ops[3]->enc_attrs_pending_ && b->ops[3]->attrs);
    assert_encodes_to(p, bin, len, true);

    /* op_role and absent attrs are answered without decoding the rest. */
    ck_assert_int_eq(ir_op_role(b->ops[1]), 1);
    ck_assert(!ir_op_has_attr(b->ops[1], "absent"));
    ck_assert(!ir_op_may_name_blocks(b->ops[1]));
    ck_assert(b->ops[1]->enc_attrs_pending_);
    ck_assert(b->ops[2]->enc_attrs_pending_ && b->ops[0]->enc_attrs_pending_);
    /* A getter decodes only the attr it reads. */
    ck_assert_int_eq(ir_op_get_int(b->ops[1], "a", 0), 5);
    ck_assert(b->ops[1]->enc_attrs_pending_);
    /* The reference (pbconv_from_ir) decodes every op's attrs. */
    assert_same_bytes(p, "clean", "as read");
    /* ir_op_attr decodes them all; the op stays clean and as read. */
    ck_assert_ptr_nonnull(ir_op_attr(b->ops[1], "a"));
    ck_assert(!b->ops[1]->enc_attrs_pending_ && b->ops[1]->attrs[2].i == 1);
    ck_assert(!b->ops[1]->enc_dirty_ && ir_enc(b->ops[1])->wire);
    ck_assert_int_eq(ir_op_role(b->ops[1]), 1);
    assert_encodes_to(p, bin, len, true);

    ir_op_set_int(b->ops[2], "z", 7);
    ck_assert(b->ops[2]->enc_dirty_ && !ir_enc(b->ops[2])->wire && !b->ops[2]->enc_attrs_pending_);
    ck_assert_int_eq(ir_op_get_int(b->ops[2], "a", 0), 5);
    assert_same_bytes(p, "clean", "one op edited");
    assert_encodes_to(p, bin, len, false);

    /* A pass writing a field directly marks the op (memory_optimize does). */
    ir_op *c = b->ops[0];
    ir_op_ins(c)[0].args[0] = ir_intern("renamed");
    ir_op_mark_dirty(c);
    assert_same_bytes(p, "clean", "one op edited directly");
    char *text = (char *)pdio_serialize(p, true, &len);
    ck_assert_ptr_nonnull(strstr(text, "arguments: \"renamed\""));
    /* dirty: slots and attrs sorted (A before Y, a before z) */
    ck_assert(strstr(text, "parameter: \"A\"") < strstr(text, "parameter: \"Y\""));
    free(text);

    /* An edit of an op whose attrs are still bytes decodes them first. */
    ir_program *p2 = pbconv_decode(bin, len0);
    ir_op *e = p2->blocks[0]->ops[2];
    ck_assert(e->enc_attrs_pending_);
    ir_op_set_int(e, "z", 8);
    ck_assert(!e->enc_attrs_pending_ && e->n_attrs == 2 && ir_op_get_int(e, "a", 0) == 5);
    assert_same_bytes(p2, "clean", "a pending op edited");
    ir_program_free(p2);

    /* A copy does not share the bytes (their program may die first). */
    ir_program *copy = ir_program_clone(p);
    ck_assert_ptr_null(ir_enc(copy->blocks[0]->ops[1])->wire);
    ck_assert(!copy->blocks[0]->ops[1]->enc_attrs_pending_);
    size_t n1 = 0, n2 = 0;
    uint8_t *e1 = pbconv_encode(p, &n1), *e2 = pbconv_encode(copy, &n2);
    ck_assert(n1 == n2 && memcmp(e1, e2, n1) == 0);
    free(e1);
    free(e2);
    ir_program_free(copy);
    ir_program_free(p);
    free(bin);
}
END_TEST

/* Reading or copying the attrs of an op that keeps them as bytes leaves
 * them so: the getters decode the one attr asked for, and copies (all,
 * one by name, a clone) decode into the destination. */
START_TEST(copies_leave_the_source_as_bytes)
{
    size_t len, n = 0;
    uint8_t *bin = binary_of(clean_program, &len);
    ir_program *p = pbconv_decode(bin, len), *p2 = pbconv_decode(bin, len);
    ir_op *c = p->blocks[0]->ops[0], *r = p->blocks[0]->ops[1];
    ck_assert(c->enc_attrs_pending_ && r->enc_attrs_pending_);

    ck_assert_int_eq(ir_op_get_int(c, "z", 0), -1);
    ck_assert_int_eq(ir_op_get_int(c, "absent", 42), 42);
    ck_assert_ptr_null(ir_op_get_string(c, "a"));    /* STRINGS, not STRING */
    const char **names = ir_op_get_names(c, "a", &n, p->arena);
    ck_assert(n == 1 && strcmp(names[0], "s") == 0);
    ck_assert(c->enc_attrs_pending_);

    ir_op *g = ir_op_new(p, "g");
    ir_op_copy_attrs(g, c);
    ck_assert(c->enc_attrs_pending_);
    ck_assert_uint_eq(g->n_attrs, 2);
    ck_assert_uint_gt(g->cap_attrs, g->n_attrs);    /* room for op_role_var */
    ck_assert_int_eq(ir_op_get_int(g, "z", 0), -1);
    const ir_attr *ga = ir_op_attr(g, "a");
    ck_assert(ga && ga->type == IR_ATTR_STRINGS && ga->n_strings == 1);
    ck_assert(ga->strings[0].len == 1 && ga->strings[0].data[0] == 's');

    ir_op *h = ir_op_new(p, "h");
    ck_assert(ir_op_copy_attr_from(h, r, "a"));
    ck_assert(!ir_op_copy_attr_from(h, r, "absent"));
    ck_assert(ir_op_copy_attr_from(h, r, "op_role"));
    ck_assert(r->enc_attrs_pending_);
    ck_assert_uint_eq(h->n_attrs, 2);
    ck_assert_int_eq(ir_op_get_int(h, "a", 0), 5);
    ck_assert_int_eq(ir_op_role(h), 1);

    ir_op *k = ir_op_clone(p, r);
    ck_assert(r->enc_attrs_pending_ && !k->enc_attrs_pending_ && k->n_attrs == 3);
    ck_assert_int_eq(ir_op_get_int(k, "a", 0), 5);
    ck_assert_int_eq(ir_op_role(k), 1);

    /* op_role is one shared attr per value, across programs */
    ck_assert_ptr_eq(ir_enc(r)->pending_role, ir_enc(p2->blocks[0]->ops[1])->pending_role);
    ck_assert_int_eq(ir_op_role(p2->blocks[0]->ops[1]), 1);

    assert_encodes_to(p, bin, len, true);       /* the sources are as read */
    ir_program_free(p2);
    ir_program_free(p);
    free(bin);
}
END_TEST

/* Attrs with sorted names: a copy in the same program borrows them. */
static const char lender_program[] =
    "blocks { idx: 0 parent_idx: -1\n"
    "  vars { name: \"x\" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 } } } }\n"
    "  ops { type: \"f\" inputs { parameter: \"X\" arguments: \"x\" } "
    "attrs { name: \"alpha\" type: FLOAT f: 0.5 } "
    "attrs { name: \"names\" type: STRINGS strings: \"p\" strings: \"q\" } "
    "attrs { name: \"op_role\" type: INT i: 0 } attrs { name: \"zeta\" type: INT i: 7 } }\n"
    "  ops { type: \"u\" attrs { name: \"z\" type: INT i: 3 } attrs { name: \"a\" type: INT i: 5 } }\n"
    "}\n";

/* What make_grads does to a grad op, on a borrower or a decoded copy. */
static ir_op *grad_like(ir_program *p, const ir_op *fwd)
{
    static const char *const role_var[] = {"w", "w@GRAD"};
    ir_op *g = ir_op_new(p, "f_grad");
    ir_op_set_input1(g, "Out@GRAD", "x");
    ir_op_copy_attrs(g, fwd);
    ck_assert(ir_op_copy_attr_from(g, fwd, "zeta"));
    ir_op_set_role(g, 1);
    ir_op_set_strings(g, "op_role_var", role_var, 2);
    ir_op_set_float(g, "alpha", 2.0f);
    ir_op_set_int(g, "beta", 3);
    ir_block_splice(p->blocks[0], p->blocks[0]->n_ops, 0, &g, 1);
    return g;
}

/* A copy of an op's attrs borrows its bytes when their names are sorted
 * and both ops are of one program: what is set on it afterwards sits in an
 * overlay, and it reads, decodes and encodes as a decoded copy would. */
START_TEST(borrowed_attrs_read_and_write_as_a_copy)
{
    size_t len, n = 0;
    uint8_t *bin = binary_of(lender_program, &len);
    ir_program *p = pbconv_decode(bin, len), *ref = pbconv_decode(bin, len);
    ir_op *f = p->blocks[0]->ops[0], *u = p->blocks[0]->ops[1];
    ck_assert(f->enc_attrs_pending_ && f->enc_attrs_sorted_ && u->enc_attrs_pending_ && !u->enc_attrs_sorted_);

    ir_op *g = grad_like(p, f);
    ck_assert(g->enc_attrs_pending_ && ir_enc(g)->wire == ir_enc(f)->wire);
    ck_assert_uint_eq(g->n_attrs, 6);       /* 4 kept, op_role_var and beta added */
    ck_assert_uint_eq(g->enc_n_overlay_, 3);     /* op_role_var, alpha, beta */
    /* op_role is in pending_role, shared, in place of the bytes' value */
    ck_assert(g->enc_role_set_ && !f->enc_role_set_ && ir_enc(g)->pending_role != ir_enc(f)->pending_role);
    ck_assert_int_eq(ir_op_role(g), 1);
    ck_assert_int_eq(ir_op_role(f), 0);
    ck_assert_int_eq(ir_op_get_int(g, "op_role", -1), 1);
    /* a copy of g borrows the same bytes and the role set on g; copying
     * op_role alone from g gives g's, not the bytes' */
    ir_op *k = ir_op_new(p, "k");
    ir_op_copy_attrs(k, g);
    ck_assert(k->enc_attrs_pending_ && k->enc_role_set_ && ir_op_role(k) == 1);
    ir_op *k2 = ir_op_new(p, "k2");
    ir_op_copy_attrs(k2, f);
    ck_assert(ir_op_copy_attr_from(k2, g, "op_role"));
    ck_assert_int_eq(ir_op_role(k2), 1);
    ir_op_attrs(k);     /* decoded: the role set, not the bytes' */
    ck_assert(!k->enc_attrs_pending_ && !k->enc_role_set_ && ir_op_attr(k, "op_role")->i == 1);
    ck_assert(ir_op_get_float(g, "alpha", 0) == 2.0 && ir_op_get_float(f, "alpha", 0) == 0.5);
    ck_assert_int_eq(ir_op_get_int(g, "zeta", 0), 7);
    const char **names = ir_op_get_names(g, "names", &n, p->arena);
    ck_assert(n == 2 && strcmp(names[0], "p") == 0 && strcmp(names[1], "q") == 0);
    ck_assert(!ir_op_may_name_blocks(g) && f->enc_attrs_pending_);

    /* the same edits on a copy decoded first: the same bytes */
    ir_op *rf = ref->blocks[0]->ops[0];
    ir_op_attrs(rf);
    ir_op *rg = grad_like(ref, rf);
    ck_assert(!rg->enc_attrs_pending_ && rg->n_attrs == 6);
    size_t want_len = 0;
    uint8_t *want = pbconv_encode(ref, &want_len);
    assert_encodes_to(p, want, want_len, true);

    /* decoded, it holds the merged attrs and drops the borrowed bytes */
    const ir_attr *all = ir_op_attrs(g);
    ck_assert(!g->enc_attrs_pending_ && !ir_enc(g)->wire && g->n_attrs == 6 && all);
    ck_assert_int_eq(ir_op_role(g), 1);
    assert_encodes_to(p, want, want_len, true);

    /* no borrowing from unsorted names, from another program, or for a
     * block attr; removing an attr decodes the rest */
    ir_op *h = ir_op_new(p, "h");
    ir_op_copy_attrs(h, u);
    ck_assert(!h->enc_attrs_pending_ && h->n_attrs == 2);
    ir_op *x = ir_op_new(ref, "x");
    ir_op_copy_attrs(x, f);
    ck_assert(!x->enc_attrs_pending_ && x->n_attrs == 4);
    ir_op *b = ir_op_new(p, "b");
    ir_op_copy_attrs(b, f);
    ck_assert(b->enc_attrs_pending_);
    ir_op_set_block(b, "sub_block", 0);
    ck_assert(!b->enc_attrs_pending_ && !ir_enc(b)->wire && b->n_attrs == 5);
    ir_op *r = ir_op_new(p, "r");
    ir_op_copy_attrs(r, f);
    ir_op_remove_attr(r, "alpha");
    ck_assert(!r->enc_attrs_pending_ && r->n_attrs == 3 && !ir_op_has_attr(r, "alpha"));
    ck_assert(f->enc_attrs_pending_);
    free(want);
    ir_program_free(ref);
    ir_program_free(p);
    free(bin);
}
END_TEST

/* The same edits on an op of p and on its twin in ref, whose attrs were
 * decoded first. */
static void edit_twins(ir_program *p, ir_program *ref)
{
    static const char *const extra[] = {"e1", "e2"};
    ir_program *both[2] = {p, ref};
    for (int i = 0; i < 2; i++) {
        ir_op *f = both[i]->blocks[0]->ops[0], *u = both[i]->blocks[0]->ops[1];
        ck_assert(ir_op_rename_input(f, "x", "y"));
        ir_op_set_int(f, "zeta", 8);
        ir_op_set_strings(f, "extra", extra, 2);
        ir_op_set_int(u, "z", 1);
    }
}

/* An op read with sorted attr names keeps them as bytes when it is edited:
 * its own bytes become their source, what is set goes to its overlay, and
 * it is written as a copy decoded first and edited alike would be.  An op
 * whose names are not sorted is decoded, as before. */
START_TEST(edited_ops_keep_sorted_attrs_as_bytes)
{
    size_t len;
    uint8_t *bin = binary_of(lender_program, &len);
    ir_program *p = pbconv_decode(bin, len), *ref = pbconv_decode(bin, len);
    ir_op *f = p->blocks[0]->ops[0], *u = p->blocks[0]->ops[1];
    const uint8_t *bytes = ir_enc(f)->wire;
    ck_assert(f->enc_attrs_pending_ && f->enc_attrs_sorted_ && !f->enc_dirty_ && bytes);
    ir_op_attrs(ref->blocks[0]->ops[0]);
    ir_op_attrs(ref->blocks[0]->ops[1]);

    edit_twins(p, ref);
    ck_assert(f->enc_dirty_ && f->enc_attrs_pending_ && ir_enc(f)->wire == bytes);
    ck_assert_uint_eq(f->n_attrs, 5);       /* 4 kept, "extra" added */
    ck_assert_uint_eq(f->enc_n_overlay_, 2);     /* zeta, extra */
    ck_assert_int_eq(ir_op_get_int(f, "zeta", 0), 8);
    ck_assert(ir_op_get_float(f, "alpha", 0) == 0.5);
    ck_assert_int_eq(ir_op_role(f), 0);
    ck_assert(u->enc_dirty_ && !u->enc_attrs_pending_ && !ir_enc(u)->wire);

    size_t want_len = 0;
    uint8_t *want = pbconv_encode(ref, &want_len);
    assert_encodes_to(p, want, want_len, true);
    ir_op_attrs(f);                         /* decoded: the bytes go */
    ck_assert(!f->enc_attrs_pending_ && !ir_enc(f)->wire && f->n_attrs == 5);
    assert_encodes_to(p, want, want_len, true);
    free(want);
    ir_program_free(ref);
    ir_program_free(p);
    free(bin);
}
END_TEST

/* Ranks for ir_op_settle_ranked: names in CTX (a NULL-ended list) first. */
static int listed_first(const ir_attr *a, void *ctx)
{
    for (const char *const *n = ctx; *n; n++)
        if (strcmp(a->name, *n) == 0)
            return -1;
    return 0;
}

static void assert_attr_order(const ir_op *op, const char *const *want, size_t n)
{
    ck_assert_uint_eq(op->n_attrs, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(ir_op_attrs(op)[i].name, want[i]);
}

/* A settled-ranked op (a borrower, a clean one read as bytes) is written in
 * rank order, then name order, by both encoders, and read back so. */
START_TEST(ranked_ops_are_written_in_rank_order)
{
    size_t len;
    uint8_t *bin = binary_of(lender_program, &len);
    ir_program *p = pbconv_decode(bin, len);
    ir_op *f = p->blocks[0]->ops[0], *u = p->blocks[0]->ops[1];
    ir_op *g = grad_like(p, f);
    static const char *const first_g[] = {"zeta", "op_role", NULL};
    static const char *const first_u[] = {"z", NULL};
    ir_op_settle_ranked(g, listed_first, (void *)first_g);
    ir_op_settle_ranked(u, listed_first, (void *)first_u);
    ck_assert(!g->enc_dirty_ && !u->enc_dirty_ && !ir_enc(g)->wire && !ir_enc(u)->wire);
    static const char *const want_g[] = {"op_role", "zeta", "alpha", "beta", "names", "op_role_var"};
    static const char *const want_u[] = {"z", "a"};
    assert_attr_order(g, want_g, 6);
    assert_attr_order(u, want_u, 2);

    size_t ref_len, out_len;
    uint8_t *ref = reference_pack(p, &ref_len);
    uint8_t *out = pbconv_encode(p, &out_len);
    ck_assert(out_len == ref_len && memcmp(out, ref, out_len) == 0);
    ir_program *back = pbconv_decode(out, out_len);
    ir_block *b = back->blocks[0];
    assert_attr_order(b->ops[b->n_ops - 1], want_g, 6);
    assert_attr_order(b->ops[1], want_u, 2);
    ir_program_free(back);
    free(out);
    free(ref);
    ir_program_free(p);
    free(bin);
}
END_TEST

/* An op whose bytes the encoder would write otherwise keeps none: written
 * from its fields, as protobuf-c packs it, not as read.  Ops: type before
 * inputs; a length prefix of two bytes; an int32 -1 in five bytes; then
 * one canonical op. */
START_TEST(non_canonical_ops_are_encoded_from_fields)
{
    static const uint8_t odd[] = {
        0x0a, 0x34,
        0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0x22, 0x08, 0x1a, 0x01, 0x74, 0x0a, 0x03, 0x0a, 0x01, 0x58,
        0x22, 0x04, 0x1a, 0x81, 0x00, 0x74,
        0x22, 0x10, 0x1a, 0x01, 0x74, 0x22, 0x0b, 0x0a, 0x01, 0x69, 0x10, 0x00,
        0x18, 0xff, 0xff, 0xff, 0xff, 0x0f,
        0x22, 0x03, 0x1a, 0x01, 0x74,
    };
    ir_program *p = pbconv_decode(odd, sizeof odd);
    ck_assert_ptr_nonnull(p);
    ir_block *b = p->blocks[0];
    ck_assert_uint_eq(b->n_ops, 4);
    for (size_t i = 0; i < 3; i++)
        ck_assert_ptr_null(ir_enc(b->ops[i])->wire);
    ck_assert_ptr_nonnull(ir_enc(b->ops[3])->wire);
    ck_assert_int_eq(ir_op_get_int(b->ops[2], "i", 0), -1);
    assert_same_bytes(p, "odd", "as read");
    assert_encodes_to(p, odd, sizeof odd, false);
    ir_program_free(p);
}
END_TEST

/* A program of one var whose encoding is exactly `size` bytes (the name's
 * length is tuned; the length prefixes keep their widths near 64 KiB). */
static ir_program *program_of_size(size_t size)
{
    size_t name_len = size - 40;
    for (int tries = 0; tries < 4; tries++) {
        GString *t = g_string_new("blocks { idx: 0 parent_idx: -1 vars { name: \"");
        for (size_t i = 0; i < name_len; i++)
            g_string_append_c(t, (char)('a' + i % 26));
        g_string_append(t, "\" type { type: LOD_TENSOR } } }\n");
        ir_program *p = pdio_parse("sized", (const uint8_t *)t->str, t->len);
        g_string_free(t, true);
        ck_assert_ptr_nonnull(p);
        size_t n = 0;
        free(pbconv_encode(p, &n));
        if (n == size)
            return p;
        ir_program_free(p);
        name_len = name_len + size - n;
    }
    ck_abort_msg("no program of %zu bytes", size);
    return NULL;
}

/* The chunked writer at the chunk's edges: one byte less than the chunk
 * (one short piece), exactly the chunk (one full piece), one byte more (a
 * full piece and a one-byte one), two chunks; each the bytes protobuf-c
 * packs and pbconv_encode's whole buffer holds. */
START_TEST(chunked_output_at_the_chunk_edges)
{
    const size_t sizes[] = {PBCONV_CHUNK - 1, PBCONV_CHUNK, PBCONV_CHUNK + 1,
                            2 * PBCONV_CHUNK};
    const size_t want_calls[] = {1, 1, 2, 2};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        ir_program *p = program_of_size(sizes[k]);
        size_t nr = 0, ne = 0, nc = 0, calls = 0;
        uint8_t *ref = reference_pack(p, &nr);
        uint8_t *whole = pbconv_encode(p, &ne);
        uint8_t *chunked = chunked_encode(p, PBCONV_CHUNK, &nc, &calls);
        ck_assert_uint_eq(nc, sizes[k]);
        ck_assert_uint_eq(calls, want_calls[k]);
        assert_same_as(ref, nr, whole, ne, "sized", "as read", "pbconv_encode");
        assert_same_as(ref, nr, chunked, nc, "sized", "as read", "pbconv_encode_to");
        free(ref);
        free(whole);
        g_free(chunked);
        ir_program_free(p);
    }
}
END_TEST

/* No blocks: no bytes, and the sink is never called. */
START_TEST(empty_program_hands_over_nothing)
{
    ir_program *p = ir_program_new();
    size_t n = 0, calls = 0;
    uint8_t *chunked = chunked_encode(p, PBCONV_CHUNK, &n, &calls);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(calls, 0);
    uint8_t *whole = pbconv_encode(p, &n);
    ck_assert_uint_eq(n, 0);
    free(whole);
    g_free(chunked);
    ir_program_free(p);
}
END_TEST

/* A sink that refuses a piece gets no more; the encoder says so. */
START_TEST(refused_piece_stops_the_sink)
{
    ir_program *p = program_of_size(3 * PBCONV_CHUNK + 5);
    pieces c = {g_byte_array_new(), PBCONV_CHUNK, 0, 2, false, false};
    ck_assert_int_eq(pbconv_encode_to(p, PBCONV_CHUNK, collect_piece, &c, NULL),
                     PBCONV_SINK_FAILED);
    ck_assert_uint_eq(c.calls, 2);
    ck_assert_uint_eq(c.bytes->len, 2 * PBCONV_CHUNK);
    g_byte_array_free(c.bytes, true);
    ir_program_free(p);
}
END_TEST

/* A block of 4 GiB or more has a size the encoder does not record (uint32):
 * refused before any byte is handed over.  The block's unknown bytes claim
 * 5 GiB; sizing never reads them. */
START_TEST(block_over_4_gib_is_refused)
{
    ir_program *p = program_of_size(100);
    static const uint8_t few[1];
    p->blocks[0]->unknown = (ir_bytes){few, (size_t)5 << 30};
    pieces c = {g_byte_array_new(), PBCONV_CHUNK, 0, 0, false, false};
    uint64_t total = 0;
    ck_assert_int_eq(pbconv_encode_to(p, PBCONV_CHUNK, collect_piece, &c, &total),
                     PBCONV_TOO_LARGE);
    ck_assert_uint_eq(c.calls, 0);
    size_t n = 0;
    ck_assert_ptr_null(pbconv_encode(p, &n));
    p->blocks[0]->unknown = (ir_bytes){NULL, 0};
    g_byte_array_free(c.bytes, true);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pbenc");
    TCase *tc = tcase_create("encode");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, edge_values_encode_as_protobuf_c_packs);
    tcase_add_test(tc, chunked_output_at_the_chunk_edges);
    tcase_add_test(tc, empty_program_hands_over_nothing);
    tcase_add_test(tc, refused_piece_stops_the_sink);
    tcase_add_test(tc, block_over_4_gib_is_refused);
    tcase_add_test(tc, clean_ops_are_written_as_read);
    tcase_add_test(tc, copies_leave_the_source_as_bytes);
    tcase_add_test(tc, borrowed_attrs_read_and_write_as_a_copy);
    tcase_add_test(tc, edited_ops_keep_sorted_attrs_as_bytes);
    tcase_add_test(tc, ranked_ops_are_written_in_rank_order);
    tcase_add_test(tc, non_canonical_ops_are_encoded_from_fields);
    tcase_add_test(tc, golden_programs_encode_as_protobuf_c_packs);
    tcase_add_test(tc, fuzz_reproducers_encode_as_protobuf_c_packs);
    tcase_add_test(tc, real_programs_encode_as_protobuf_c_packs);
    suite_add_tcase(s, tc);
    return s;
}
