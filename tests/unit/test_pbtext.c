/* test_pbtext.c - the text printer against protoc itself, the text parser
 * (every accepted form, every error with its line:col), print -> parse ->
 * pack round trips of the real programs, and the wire diagnoser. */
#include <glob.h>
#include <math.h>
#include <unistd.h>

#include "framework.pb-c.h"
#include "io/pbtext.h"
#include "unit.h"

#define PROGRAM (&paddle__framework__proto__program_desc__descriptor)
#define ATTR (&paddle__framework__proto__op_desc__attr__descriptor)
#define VAR (&paddle__framework__proto__op_desc__var__descriptor)

typedef Paddle__Framework__Proto__OpDesc__Attr Attr;

/* ---- helpers -------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t cap = 1 << 16, len = 0, r;
    uint8_t *b = malloc(cap);
    while ((r = fread(b + len, 1, cap - len, f)) > 0)
        if ((len += r) == cap)
            b = realloc(b, cap *= 2);
    fclose(f);
    *n = len;
    return b;
}

#define have_protoc() have_protoc_at(__func__)
static bool have_protoc_at(const char *test)
{
    static int have = -1;
    if (have < 0)
        have = system("protoc --version >/dev/null 2>&1") == 0;
    if (!have)
        unit_skip_at(__FILE__, test, "protoc missing; printer output not compared with protoc");
    return have;
}

/* What `protoc --decode=paddle.framework.proto.TYPE` prints for data. */
static char *protoc_decode(const char *type, const uint8_t *data, size_t len)
{
    char tmp[] = "/tmp/test_pbtext_XXXXXX", cmd[256];
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, data, len) == (ssize_t)len);
    close(fd);
    snprintf(cmd, sizeof cmd,
             "protoc --decode=paddle.framework.proto.%s -Iproto proto/framework.proto "
             "< %s 2>/dev/null", type, tmp);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    size_t cap = 1 << 16, n = 0, r;
    char *out = malloc(cap);
    while ((r = fread(out + n, 1, cap - n - 1, p)) > 0)
        if ((n += r) == cap - 1)
            out = realloc(out, cap *= 2);
    out[n] = 0;
    pclose(p);
    unlink(tmp);
    return out;
}

static void assert_same_text(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return;
    int line = 1;
    size_t i = 0;
    for (; got[i] && got[i] == want[i]; i++)
        line += got[i] == '\n';
    ck_abort_msg("%s: differs from protoc at line %d: got \"%.60s\", want \"%.60s\"",
                 what, line, got + i, want + i);
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *n)
{
    *n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*n + 1);
    ck_assert_uint_eq(protobuf_c_message_pack(m, b), *n);
    return b;
}

/* print == protoc for m's packed bytes; returns the text (caller frees). */
static char *check_print(const ProtobufCMessage *m, const char *type)
{
    size_t n, tlen;
    uint8_t *bin = pack(m, &n);
    char *text = pbtext_print_to_string(m, &tlen);
    ck_assert(text != NULL);
    ck_assert_uint_eq(strlen(text), tlen);
    if (have_protoc()) {
        char *ref = protoc_decode(type, bin, n);
        assert_same_text(type, text, ref);
        free(ref);
    }
    free(bin);
    return text;
}

/* text -> parse -> pack gives m's packed bytes. */
static void check_roundtrip(const ProtobufCMessage *m, const char *text)
{
    char err[512];
    size_t n1, n2;
    ProtobufCMessage *back = pbtext_parse(m->descriptor, "rt", text, strlen(text), err,
                                          sizeof err);
    ck_assert_msg(back != NULL, "%s", err);
    uint8_t *a = pack(m, &n1), *b = pack(back, &n2);
    ck_assert_msg(n1 == n2 && memcmp(a, b, n1) == 0, "round trip changed the bytes");
    free(a);
    free(b);
    protobuf_c_message_free_unpacked(back, NULL);
}

/* A tiny wire-format writer for hand-made messages. */
typedef struct {
    uint8_t b[4096];
    size_t n;
} wbuf;

static void w_raw(wbuf *w, const void *p, size_t n)
{
    ck_assert(w->n + n <= sizeof w->b);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void w_varint(wbuf *w, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        w_raw(w, &c, 1);
        v >>= 7;
    } while (v);
}

static void w_tag(wbuf *w, uint32_t num, int wt) { w_varint(w, (uint64_t)num << 3 | (unsigned)wt); }

static void w_ld(wbuf *w, uint32_t num, const void *p, size_t n)
{
    w_tag(w, num, 2);
    w_varint(w, n);
    w_raw(w, p, n);
}

static void w_sub(wbuf *w, uint32_t num, const wbuf *sub) { w_ld(w, num, sub->b, sub->n); }

/* ---- 1. real programs ------------------------------------------------ */

START_TEST(test_real_files)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    char pattern[256], err[512];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/*.pdmodel", dir);
    ck_assert_int_eq(glob(pattern, 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        size_t n, tlen, n1, n2;
        uint8_t *data = slurp(path, &n);
        ProtobufCMessage *m = protobuf_c_message_unpack(PROGRAM, NULL, n, data);
        ck_assert_msg(m != NULL, "%s does not unpack", path);
        ck_assert_int_eq(pbwire_diagnose(PROGRAM, data, n, err, sizeof err), 0);

        char *text = pbtext_print_to_string(m, &tlen);
        ck_assert(text != NULL);
        if (have_protoc()) {
            char *ref = protoc_decode("ProgramDesc", data, n);
            assert_same_text(path, text, ref);
            free(ref);
        }
        /* the FILE printer writes the same bytes */
        char *mem = NULL;
        size_t memlen = 0;
        FILE *f = open_memstream(&mem, &memlen);
        ck_assert_int_eq(pbtext_print(f, m), 0);
        fclose(f);
        ck_assert_msg(memlen == tlen && memcmp(mem, text, tlen) == 0, "%s: FILE output", path);
        free(mem);

        ProtobufCMessage *back = pbtext_parse(PROGRAM, path, text, tlen, err, sizeof err);
        ck_assert_msg(back != NULL, "%s", err);
        uint8_t *a = pack(m, &n1), *b = pack(back, &n2);
        ck_assert_msg(n1 == n2 && memcmp(a, b, n1) == 0, "%s: round trip changed bytes", path);
        free(a);
        free(b);
        free(text);
        protobuf_c_message_free_unpacked(back, NULL);
        protobuf_c_message_free_unpacked(m, NULL);
        free(data);
    }
    globfree(&g);
}
END_TEST

/* ---- 2. printer details against protoc ------------------------------ */

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

START_TEST(test_floats)
{
    static const struct { float f; const char *fs; double d; const char *ds; } cases[] = {
        { 1e-08f, "1e-08", 1e-08, "1e-08" },
        { 0.1f, "0.1", 0.1, "0.1" },
        { 1e20f, "1e+20", 1e20, "1e+20" },
        { -0.0f, "-0", -0.0, "-0" },
        { INFINITY, "inf", -INFINITY, "-inf" },
        { -INFINITY, "-inf", INFINITY, "inf" },
        { 0.3f, "0.3", 0.1 + 0.2, "0.30000000000000004" },
        { 123456789.0f, "123456792", 123456789.0, "123456789" },
        { 16777217.0f, "16777216", 1.0 / 3, "0.33333333333333331" },
        { 3.4028235e38f, "3.40282347e+38", 1e-45, "1e-45" },
        { 1e-45f, "1.40129846e-45", 5e-324, "4.94065645841247e-324" },
        { 1e-40f, "9.9999461e-41", 2.2250738585072e-308, "2.2250738585072e-308" },
        { 1e6f, "1e+06", 1e6, "1000000" },
        { 100000.0f, "100000", 1e15, "1e+15" },
        { 1.0f / 3, "0.333333343", 123456789012345678.0, "1.2345678901234568e+17" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Attr a = PADDLE__FRAMEWORK__PROTO__OP_DESC__ATTR__INIT;
        float fl[2] = { cases[i].f, 2.5f };
        double dl[1] = { cases[i].d };
        char want[128];
        a.name = (char *)(uintptr_t)"x";
        a.type = PADDLE__FRAMEWORK__PROTO__ATTR_TYPE__FLOAT;
        a.has_f = 1;
        a.f = cases[i].f;
        a.has_float64 = 1;
        a.float64 = cases[i].d;
        a.n_floats = 2;
        a.floats = fl;
        a.n_float64s = 1;
        a.float64s = dl;
        char *text = check_print(&a.base, "OpDesc.Attr");
        snprintf(want, sizeof want, "f: %s\nfloats: %s\nfloats: 2.5\n", cases[i].fs, cases[i].fs);
        ck_assert_msg(strstr(text, want), "float %s: got %s", cases[i].fs, text);
        snprintf(want, sizeof want, "float64s: %s\nfloat64: %s\n", cases[i].ds, cases[i].ds);
        ck_assert_msg(strstr(text, want), "double %s: got %s", cases[i].ds, text);
        check_roundtrip(&a.base, text);
        free(text);
    }
    /* NaN prints without its sign or payload, and comes back as a NaN */
    Attr a = PADDLE__FRAMEWORK__PROTO__OP_DESC__ATTR__INIT;
    a.name = (char *)(uintptr_t)"x";
    a.has_f = 1;
    a.f = bitsf(0xffc00001u);
    a.has_float64 = 1;
    a.float64 = -NAN;
    char *text = check_print(&a.base, "OpDesc.Attr");
    ck_assert_str_eq(text, "name: \"x\"\ntype: INT\nf: nan\nfloat64: nan\n");
    char err[256];
    Attr *b = (Attr *)pbtext_parse(ATTR, "n", text, strlen(text), err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert(isnan(b->f) && isnan(b->float64) && fbits(b->f) == fbits(NAN));
    protobuf_c_message_free_unpacked(&b->base, NULL);
    free(text);
}
END_TEST

START_TEST(test_escapes)
{
    Paddle__Framework__Proto__OpDesc__Var v = PADDLE__FRAMEWORK__PROTO__OP_DESC__VAR__INIT;
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = 0;
    static char q[] = "q\"'\\", u[] = "h\xc3\xa9llo \xe4\xb8\xad", e[] = "", tab[] = "tab\there\r\n";
    char *args[] = { all, q, u, e, tab };
    v.parameter = (char *)(uintptr_t)"p";
    v.n_arguments = sizeof args / sizeof args[0];
    v.arguments = args;
    char *text = check_print(&v.base, "OpDesc.Var");
    ck_assert_ptr_nonnull(strstr(text, "arguments: \"q\\\"\\'\\\\\"\n"));
    ck_assert_ptr_nonnull(strstr(text, "arguments: \"h\\303\\251llo \\344\\270\\255\"\n"));
    ck_assert_ptr_nonnull(strstr(text, "arguments: \"\"\n"));
    ck_assert_ptr_nonnull(strstr(text, "arguments: \"tab\\there\\r\\n\"\n"));
    ck_assert_ptr_nonnull(strstr(text, "\\001\\002\\003\\004\\005\\006\\007\\010\\t\\n\\013"));
    ck_assert_ptr_nonnull(strstr(text, "|}~\\177\\200\\201"));
    check_roundtrip(&v.base, text);
    free(text);
}
END_TEST

/* Unknown fields: every shape protoc tells apart, compared with protoc. */
START_TEST(test_unknown_fields)
{
    wbuf w = { .n = 0 }, s = { .n = 0 }, t = { .n = 0 };
    uint8_t le8[8] = { 0x34, 0x12, 0, 0, 0, 0, 0, 0x80 }, le4[4] = { 0xab, 0, 0, 0 };

    w_tag(&w, 2, 0);
    w_varint(&w, UINT64_MAX);
    w_tag(&w, 3, 5);
    w_raw(&w, le4, 4);
    w_tag(&w, 6, 1);
    w_raw(&w, le8, 8);
    w_ld(&w, 7, "", 0);
    w_ld(&w, 8, "\0\1", 2);
    w_ld(&w, 9, "\x0b\x10\x01\x0c", 4);           /* a group inside */
    w_ld(&w, 10, "\x0c", 1);                      /* stray end-group */
    w_ld(&w, 11, "\x08\x01\x00", 3);              /* zero tag */
    w_ld(&w, 12, "\x08", 1);                      /* cut varint */
    w_ld(&w, 14, "\x0b\x14", 2);                  /* group closed by another number */
    w_ld(&w, 15, "hello world", 11);
    w_ld(&w, 16, "\x0e\x01", 2);                  /* wire type 6 */
    w_ld(&w, 17, "\x80\x00\x08\x01", 4);          /* two-byte zero tag */
    w_ld(&w, 18, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11);
    w_ld(&w, 20, "\x12\xff\xff\xff\xff\x0f", 6);  /* negative length */
    w_ld(&w, 21, "\x12\x80\x80\x80\x80\x10", 6);  /* length 2^32 reads as 0 */
    w_ld(&w, 22, "\x0b\x0b\x0c\x0c", 4);          /* nested groups */
    w_ld(&w, 23, "\x88\x80\x80\x80\x80\x80\x80\x80\x80\x01\x05", 11);
    /* groups may nest as deep as the remaining budget, no deeper */
    for (int depth = 9; depth <= 11; depth++) {
        s.n = 0;
        for (int i = 0; i < depth; i++)
            w_tag(&s, 1, 3);
        for (int i = 0; i < depth; i++)
            w_tag(&s, 1, 4);
        w_sub(&w, 24, &s);
    }
    /* a length-delimited field inside a group costs budget, the group not */
    t.n = 0;
    w_ld(&t, 1, "\x08\x07", 2);
    s.n = 0;
    w_tag(&s, 2, 3);
    w_sub(&s, 3, &t);
    w_tag(&s, 2, 4);
    w_sub(&w, 25, &s);
    /* nested messages past the budget of 10 print as strings */
    for (int depth = 9; depth <= 12; depth++) {
        s.n = 0;
        w_tag(&s, 1, 0);
        w_varint(&s, 5);
        for (int i = 0; i < depth; i++) {
            t = s;
            s.n = 0;
            w_sub(&s, 2, &t);
        }
        w_raw(&w, s.b, s.n);
    }
    ProtobufCMessage *m = protobuf_c_message_unpack(PROGRAM, NULL, w.n, w.b);
    ck_assert(m != NULL);
    char *text = check_print(m, "ProgramDesc");
    ck_assert_ptr_nonnull(strstr(text, "2: 18446744073709551615\n3: 0x000000ab\n"
                                       "6: 0x8000000000001234\n7: \"\"\n"));
    ck_assert_ptr_nonnull(strstr(text, "9 {\n  1 {\n    2: 1\n  }\n}\n10: \"\\014\"\n"));
    free(text);
    protobuf_c_message_free_unpacked(m, NULL);

    /* canonical unknown fields survive print -> parse -> pack */
    w.n = 0;
    s.n = 0;
    t.n = 0;
    w_ld(&t, 1, "1.6.0", 5);
    w_tag(&t, 2, 0);
    w_varint(&t, 2);
    w_ld(&s, 1, "bilinear_interp", 15);
    w_sub(&s, 2, &t);
    w_sub(&w, 3, &s);
    w_tag(&w, 4, 2);   /* version { version: 7 }, then unknown 2: 0 */
    w_varint(&w, 2);
    w_tag(&w, 1, 0);
    w_varint(&w, 7);
    w_tag(&w, 2, 0);
    w_varint(&w, 0);
    w_tag(&w, 9, 1);
    w_raw(&w, le8, 8);
    w_tag(&w, 10, 5);
    w_raw(&w, le4, 4);
    w_ld(&w, 11, "\x08", 1);
    w_ld(&w, 12, "", 0);
    m = protobuf_c_message_unpack(PROGRAM, NULL, w.n, w.b);
    ck_assert(m != NULL);
    text = check_print(m, "ProgramDesc");
    check_roundtrip(m, text);
    free(text);
    protobuf_c_message_free_unpacked(m, NULL);
}
END_TEST

/* protoc moves enum values without a name to the unknown fields. */
START_TEST(test_unnamed_enum)
{
    wbuf w = { .n = 0 };
    w_ld(&w, 1, "a", 1);
    w_tag(&w, 2, 0);
    w_varint(&w, 99);
    w_tag(&w, 50, 0);
    w_varint(&w, 7);
    w_tag(&w, 3, 0);
    w_varint(&w, 5);
    ProtobufCMessage *m = protobuf_c_message_unpack(ATTR, NULL, w.n, w.b);
    ck_assert(m != NULL);
    char *text = check_print(m, "OpDesc.Attr");
    ck_assert_str_eq(text, "name: \"a\"\ni: 5\n2: 99\n50: 7\n");
    check_roundtrip(m, text);
    free(text);
    protobuf_c_message_free_unpacked(m, NULL);

    Attr a = PADDLE__FRAMEWORK__PROTO__OP_DESC__ATTR__INIT;
    a.name = (char *)(uintptr_t)"b";
    a.type = -1;
    text = check_print(&a.base, "OpDesc.Attr");
    ck_assert_str_eq(text, "name: \"b\"\n2: 18446744073709551615\n");
    check_roundtrip(&a.base, text);
    free(text);

    Paddle__Framework__Proto__VarType__Tuple tu = PADDLE__FRAMEWORK__PROTO__VAR_TYPE__TUPLE__INIT;
    Paddle__Framework__Proto__VarType__Type el[] = { 5, 99, 6 };
    tu.n_element_type = 3;
    tu.element_type = el;
    text = check_print(&tu.base, "VarType.Tuple");
    ck_assert_str_eq(text, "element_type: FP32\nelement_type: FP64\n1: 99\n");
    free(text);
}
END_TEST

START_TEST(test_empty_and_required)
{
    Paddle__Framework__Proto__ProgramDesc p = PADDLE__FRAMEWORK__PROTO__PROGRAM_DESC__INIT;
    char *text = check_print(&p.base, "ProgramDesc");
    ck_assert_str_eq(text, "");
    free(text);
    /* required fields print even when zero; a NULL required string is "" */
    Paddle__Framework__Proto__OpDesc op = PADDLE__FRAMEWORK__PROTO__OP_DESC__INIT;
    Paddle__Framework__Proto__OpDesc__Var in = PADDLE__FRAMEWORK__PROTO__OP_DESC__VAR__INIT;
    Paddle__Framework__Proto__OpDesc__Var *ins[] = { &in };
    in.parameter = (char *)(uintptr_t)"X";
    op.n_inputs = 1;
    op.inputs = ins;
    op.has_is_target = 1;
    text = check_print(&op.base, "OpDesc");
    ck_assert_str_eq(text, "inputs {\n  parameter: \"X\"\n}\ntype: \"\"\nis_target: false\n");
    free(text);
}
END_TEST

/* ---- parser: accepted forms ----------------------------------------- */

START_TEST(test_parse_forms)
{
    static const char text[] =
        "# a comment\n"
        "blocks < idx: 0x0 parent_idx: -1 forward_block_idx: 017  # octal\n"
        "  vars: { name: 'a' \"b\" 'c\\x41\\101\\u00e9\\n\\'' type { type: 7 } persistable: t }\n"
        "  vars { name: \"v2\"; type: < type: LOD_TENSOR, lod_tensor { tensor {\n"
        "    data_type: FP32 dims: [-1, 3, 0x10] } } > },\n"
        "  ops { type: \"scale\" attrs { name: \"s\" type: FLOAT f: 1.5f }\n"
        "        attrs { name: \"x\" type: FLOATS floats: [inf, -Infinity, -2.5e3, 7, .5]\n"
        "                float64: -nan b: True bools: [0, 1, false] l: -9223372036854775808 }\n"
        "        attrs { name: \"e\" type: 3 } attrs: [{name: \"y\" type: LONG}, <name: \"z\" type: INT>] }\n"
        ">\n"
        "3 { 1: \"x\" 2 { 1: 5 } }\n"
        "7: 12\n"
        "version { version: -5 }\n"
        "8: 0x0000000a 9: 0x00000000000000ff 10: 'raw' 10: -1\n";
    char err[256];
    Paddle__Framework__Proto__ProgramDesc *p = (Paddle__Framework__Proto__ProgramDesc *)
        pbtext_parse(PROGRAM, "forms", text, sizeof text - 1, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_uint_eq(p->n_blocks, 1);
    Paddle__Framework__Proto__BlockDesc *b = p->blocks[0];
    ck_assert_int_eq(b->idx, 0);
    ck_assert_int_eq(b->parent_idx, -1);
    ck_assert(b->has_forward_block_idx && b->forward_block_idx == 15);
    ck_assert_uint_eq(b->n_vars, 2);
    ck_assert_str_eq(b->vars[0]->name, "abcAA\xc3\xa9\n'");
    ck_assert_int_eq(b->vars[0]->type->type, 7);
    ck_assert(b->vars[0]->has_persistable && b->vars[0]->persistable);
    Paddle__Framework__Proto__VarType__TensorDesc *td = b->vars[1]->type->lod_tensor->tensor;
    ck_assert_uint_eq(td->n_dims, 3);
    ck_assert(td->dims[0] == -1 && td->dims[1] == 3 && td->dims[2] == 16);
    Paddle__Framework__Proto__OpDesc *op = b->ops[0];
    ck_assert_uint_eq(op->n_attrs, 5);
    ck_assert(op->attrs[0]->has_f && op->attrs[0]->f == 1.5f);
    Attr *x = op->attrs[1];
    ck_assert_uint_eq(x->n_floats, 5);
    ck_assert(isinf(x->floats[0]) && x->floats[0] > 0 && isinf(x->floats[1]) && x->floats[1] < 0);
    ck_assert(x->floats[2] == -2500.0f && x->floats[3] == 7.0f && x->floats[4] == 0.5f);
    ck_assert(x->has_float64 && isnan(x->float64));
    ck_assert(x->has_b && x->b);
    ck_assert(x->n_bools == 3 && !x->bools[0] && x->bools[1] && !x->bools[2]);
    ck_assert(x->has_l && x->l == INT64_MIN);
    ck_assert_int_eq(op->attrs[2]->type, 3);
    ck_assert_str_eq(op->attrs[3]->name, "y");
    ck_assert_str_eq(op->attrs[4]->name, "z");
    ck_assert(p->version && p->version->has_version && p->version->version == -5);

    ck_assert_uint_eq(p->base.n_unknown_fields, 6);
    ProtobufCMessageUnknownField *u = p->base.unknown_fields;
    static const uint8_t u3[] = { 7, 0x0a, 1, 'x', 0x12, 2, 0x08, 5 };
    ck_assert(u[0].tag == 3 && u[0].wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    ck_assert(u[0].len == sizeof u3 && memcmp(u[0].data, u3, sizeof u3) == 0);
    ck_assert(u[1].tag == 7 && u[1].wire_type == PROTOBUF_C_WIRE_TYPE_VARINT);
    ck_assert(u[1].len == 1 && u[1].data[0] == 12);
    ck_assert(u[2].wire_type == PROTOBUF_C_WIRE_TYPE_32BIT && u[2].len == 4 && u[2].data[0] == 10);
    ck_assert(u[3].wire_type == PROTOBUF_C_WIRE_TYPE_64BIT && u[3].len == 8 && u[3].data[0] == 0xff);
    ck_assert(u[4].len == 4 && memcmp(u[4].data, "\3raw", 4) == 0);
    ck_assert(u[5].wire_type == PROTOBUF_C_WIRE_TYPE_VARINT && u[5].len == 10);

    /* and the result packs and reads back */
    size_t n;
    uint8_t *bin = pack(&p->base, &n);
    ProtobufCMessage *again = protobuf_c_message_unpack(PROGRAM, NULL, n, bin);
    ck_assert(again != NULL);
    protobuf_c_message_free_unpacked(again, NULL);
    free(bin);
    protobuf_c_message_free_unpacked(&p->base, NULL);

    /* empty input is an empty message */
    ProtobufCMessage *e = pbtext_parse(PROGRAM, "e", "", 0, err, sizeof err);
    ck_assert(e != NULL && protobuf_c_message_get_packed_size(e) == 0);
    protobuf_c_message_free_unpacked(e, NULL);
}
END_TEST

/* ---- parser: errors --------------------------------------------------- */

static const struct {
    const char *text, *want;
} bad[] = {
    { "blocks { idx: 0 parent_idx: 0 bogus: 1 }",
      "t.txt:1:31: message paddle.framework.proto.BlockDesc has no field named 'bogus'" },
    { "blocks { idx: \"zero\" }", "t.txt:1:15: expected integer for idx, got '\"zero\"'" },
    { "blocks { idx: 1.5 }", "t.txt:1:15: expected integer" },
    { "blocks { idx: 0 idx: 1 }", "t.txt:1:17: field 'idx' is specified more than once" },
    { "blocks { idx: 2147483648 }", "t.txt:1:15: value 2147483648 is out of range for field 'idx'" },
    { "blocks { idx: -2147483649 }", "t.txt:1:15: value -2147483649 is out of range" },
    { "version { version: 99999999999999999999 }", "t.txt:1:20: integer 99999999999999999999 is out of range" },
    { "blocks { vars { name: \"abc\n\" } }", "t.txt:1:23: unterminated string" },
    { "blocks { vars { name: 'abc", "t.txt:1:23: unterminated string" },
    { "blocks { idx: 0", "t.txt:1:16: expected '}' before end of input" },
    { "blocks { idx 0 }", "t.txt:1:14: expected ':' after field name 'idx'" },
    { "blocks {\n  idx: 0\n  parent_idx: x\n}", "t.txt:3:15: expected integer" },
    { "blocks { vars { name: \"a\\q\" } }", "t.txt:1:25: invalid escape sequence '\\q'" },
    { "blocks { vars { name: \"a\\400\" } }", "t.txt:1:25: octal escape above \\377" },
    { "blocks { vars { name: \"a\\0\" } }", "t.txt:1:23: string field 'name' cannot hold a NUL byte" },
    { "blocks { vars { type { type: NOPE } } }", "t.txt:1:30: unknown value 'NOPE' for enum field 'type'" },
    { "blocks { vars { persistable: yes } }", "t.txt:1:30: expected true or false" },
    { "blocks { idx: [1] }", "t.txt:1:15: field 'idx' is not repeated" },
    { "blocks { idx: 0x }", "t.txt:1:15: '0x' must be followed by hex digits" },
    { "blocks { idx: 09 }", "t.txt:1:15: numbers starting with 0 must be octal" },
    { "blocks { idx: 1x }", "t.txt:1:15: need space between number and 'x'" },
    { "}", "t.txt:1:1: unexpected '}'" },
    { "blocks { vars ", "t.txt:1:15: expected '{' for field 'vars', got end of input" },
    { "0: 1", "t.txt:1:1: field number 0 is out of range" },
    { "3: 1.5", "t.txt:1:4: expected integer, string or '{' for unknown field" },
    { "3 { a: 1 }", "t.txt:1:5: expected field number or '}' in unknown field" },
    { "blocks { @ }", "t.txt:1:10: unexpected character '@'" },
    { "blocks {\n  idx: 0\n  parent_idx: 0\n  vars {\n    name: \"a\"\n  }\n}\n",
      "t.txt: missing required field 'blocks[0].vars[0].type'" },
    { "blocks { vars { name: \"a\" } } blocks { }",
      "t.txt: missing required field 'blocks[0].vars[0].type' (and 4 more)" },
};

START_TEST(test_parse_errors)
{
    char err[256];
    const char *text = bad[_i].text;
    ProtobufCMessage *m = pbtext_parse(PROGRAM, "t.txt", text, strlen(text), err, sizeof err);
    ck_assert_msg(m == NULL, "accepted: %s", text);
    ck_assert_msg(strncmp(err, bad[_i].want, strlen(bad[_i].want)) == 0,
                  "for %s\n got: %s\nwant: %s", text, err, bad[_i].want);
}
END_TEST

START_TEST(test_parse_error_small_buffer)
{
    char err[8];
    ck_assert(pbtext_parse(PROGRAM, "t.txt", "}", 1, err, sizeof err) == NULL);
    ck_assert_str_eq(err, "t.txt:1");
    ck_assert(pbtext_parse(PROGRAM, "t.txt", "}", 1, NULL, 0) == NULL);
}
END_TEST

/* ---- 3. wire diagnoser ---------------------------------------------- */

START_TEST(test_wire_truncated)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    static const char *files[] = { "fit_a_line.pdmodel", "mobilenet_v1_fp32.pdmodel",
                                   "ssd_mobilenet_det.pdmodel", "lac_gru_crf.pdmodel" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[256], err[512], want[64];
        size_t n;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        uint8_t *data = slurp(path, &n);
        size_t cuts[] = { 1, 2, 3, n / 7, n / 3, n / 2, n - 2, n - 1 };
        for (size_t j = 0; j < sizeof cuts / sizeof cuts[0]; j++) {
            ProtobufCMessage *m = protobuf_c_message_unpack(PROGRAM, NULL, cuts[j], data);
            ck_assert_msg(m == NULL, "%s cut at %zu unpacks", files[i], cuts[j]);
            ck_assert_int_eq(pbwire_diagnose(PROGRAM, data, cuts[j], err, sizeof err), 1);
            snprintf(want, sizeof want, "truncated at byte %zu", cuts[j]);
            ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s cut at %zu: %s",
                          files[i], cuts[j], err);
        }
        /* deep inside, the innermost message is named */
        ck_assert_int_eq(pbwire_diagnose(PROGRAM, data, n / 2, err, sizeof err), 1);
        ck_assert_msg(strstr(err, "(inside blocks[0]"), "%s", err);
        free(data);
    }
}
END_TEST

START_TEST(test_wire_invalid_files)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    char path[256], err[512];
    size_t n;
    snprintf(path, sizeof path, "%s/invalid/legacy_schema_2018_mlp.__model__", dir);
    uint8_t *data = slurp(path, &n);
    ck_assert(protobuf_c_message_unpack(PROGRAM, NULL, n, data) == NULL);
    ck_assert_int_eq(pbwire_diagnose(PROGRAM, data, n, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "field 2 of blocks[0].vars[0] ('type') has wire type varint, "
                              "expected length-delimited"), "%s", err);
    free(data);

    snprintf(path, sizeof path, "%s/invalid/utf8_mangled_lstm.__model__", dir);
    data = slurp(path, &n);
    ck_assert(protobuf_c_message_unpack(PROGRAM, NULL, n, data) == NULL);
    ck_assert_int_eq(pbwire_diagnose(PROGRAM, data, n, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "length 32899414843375 at byte 1 exceeds the 121656 bytes left"),
                  "%s", err);
    free(data);
}
END_TEST

static void expect_diag(const wbuf *w, const char *want)
{
    char err[512];
    ck_assert_msg(protobuf_c_message_unpack(PROGRAM, NULL, w->n, w->b) == NULL,
                  "unpacks: %s", want);
    ck_assert_int_eq(pbwire_diagnose(PROGRAM, w->b, w->n, err, sizeof err), 1);
    ck_assert_msg(strcmp(err, want) == 0, "got: %s\nwant: %s", err, want);
}

START_TEST(test_wire_synthetic)
{
    wbuf w = { .n = 0 }, blk = { .n = 0 }, op = { .n = 0 }, at = { .n = 0 };
    char err[128];

    ck_assert_int_eq(pbwire_diagnose(PROGRAM, w.b, 0, err, sizeof err), 0);
    w_tag(&w, 4, 2);
    w_varint(&w, 0);
    w_raw(&w, "\x0f\x01", 2);
    expect_diag(&w, "invalid wire type 7 at byte 2");

    w.n = 0;
    w_raw(&w, "\x1b\x1c", 2);
    expect_diag(&w, "unsupported (group) wire type 3 at byte 0");

    w.n = 0;
    w_raw(&w, "\x02\x00", 2);
    expect_diag(&w, "invalid field number 0 at byte 0");

    w.n = 0;
    w_raw(&w, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    expect_diag(&w, "unterminated varint at byte 1");

    w.n = 0;
    w_sub(&w, 1, &blk);
    expect_diag(&w, "missing required field 'blocks[0].idx'");

    /* blocks[0].ops[0].attrs[0] with a packed float list of 5 bytes */
    w_tag(&blk, 1, 0);
    w_varint(&blk, 0);
    w_tag(&blk, 2, 0);
    w_varint(&blk, 0);
    w_ld(&at, 1, "a", 1);
    w_tag(&at, 2, 0);
    w_varint(&at, 4);
    w_ld(&at, 7, "\0\0\0\0\0", 5);
    w_ld(&op, 3, "relu", 4);
    w_sub(&op, 4, &at);
    w_sub(&blk, 4, &op);
    w.n = 0;
    w_sub(&w, 1, &blk);
    expect_diag(&w, "packed field 7 of blocks[0].ops[0].attrs[0] ('floats') at byte 21 "
                    "has length 5, not a multiple of 4");

    /* a string where a message belongs, inside an exact region */
    at.n = 0;
    w_ld(&at, 1, "a", 1);
    w_tag(&at, 2, 0);
    w_varint(&at, 4);
    w_tag(&at, 20, 0);
    w_varint(&at, 1);
    op.n = 0;
    w_ld(&op, 3, "relu", 4);
    w_sub(&op, 4, &at);
    w_sub(&op, 4, &at);
    blk.n = 4;   /* keep idx and parent_idx */
    w_sub(&blk, 4, &op);
    w.n = 0;
    w_sub(&w, 1, &blk);
    expect_diag(&w, "field 20 of blocks[0].ops[0].attrs[0] ('scalar') has wire type varint, "
                    "expected length-delimited (byte 21)");

    /* a length running past its enclosing message, not the data */
    w.n = 0;
    w_raw(&w, "\x0a\x04\x08\x00\x12\x05", 6);
    w_raw(&w, "\x22\x00", 2);
    expect_diag(&w, "length 5 at byte 5 exceeds the 0 bytes left (inside blocks[0])");
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pbtext");
    TCase *tc = tcase_create("pbtext");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_real_files);
    tcase_add_test(tc, test_floats);
    tcase_add_test(tc, test_escapes);
    tcase_add_test(tc, test_unknown_fields);
    tcase_add_test(tc, test_unnamed_enum);
    tcase_add_test(tc, test_empty_and_required);
    tcase_add_test(tc, test_parse_forms);
    tcase_add_loop_test(tc, test_parse_errors, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_parse_error_small_buffer);
    tcase_add_test(tc, test_wire_truncated);
    tcase_add_test(tc, test_wire_invalid_files);
    tcase_add_test(tc, test_wire_synthetic);
    suite_add_tcase(s, tc);
    return s;
}
