/* pbtext_parse.h - the text parser's shared state, private to
 * pbtext_lex.c (tokens, strings, integers), pbtext_unknown.c (numbered
 * fields kept as wire bytes) and pbtext_parse.c (fields and messages). */
#ifndef PDT_PBTEXT_PARSE_H
#define PDT_PBTEXT_PARSE_H

#include "pbtext.h"

#include <stdbool.h>
#include <stdint.h>

#define MAX_DEPTH 100     /* protobuf's default text-format recursion limit */
#define MAX_FIELD 536870911u
#define SMALL 32          /* fields per message tracked without malloc */

enum tok { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STRING, T_SYM };

typedef struct {
    uint8_t *p;
    size_t len, cap;
} bytes;

typedef struct {
    const char *name, *p, *end, *line_start;
    int line;
    /* current token */
    enum tok kind;
    const char *tp;
    size_t tn;
    int tline, tcol;
    /* error state: the first error wins */
    char *err;
    size_t errlen;
    bool failed;
    /* dotted path of the message being parsed, for required fields */
    char *path;
    size_t plen, pcap;
    char *missing;
    size_t n_missing;
    bytes str;            /* decoded string literal scratch */
} P;

typedef struct {
    bool *seen;          /* per field index: given in the text */
    size_t *cap;         /* per field index: allocated repeated slots */
    size_t ucap;         /* allocated unknown-field slots */
    bool small_seen[SMALL];
    size_t small_cap[SMALL];
} frame;

#define FAIL(ps, ...) ptx_fail_at((ps), (ps)->tline, (ps)->tcol, __VA_ARGS__)

/* pbtext_lex.c */
bool ptx_b_put(bytes *b, const void *p, size_t n);
bool ptx_b_varint(bytes *b, uint64_t v);
bool ptx_fail_at(P *ps, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool ptx_oom(P *ps);
/* The current token quoted for messages, shortened if long. */
const char *ptx_tok_desc(P *ps, char *buf, size_t n);
bool ptx_next(P *ps);
bool ptx_is_sym(P *ps, char c);
bool ptx_tok_is(P *ps, const char *word);
bool ptx_parse_string(P *ps, const char *what);
/* An integer literal with optional '-': magnitude and sign. */
bool ptx_parse_integer(P *ps, const char *what, uint64_t *mag, bool *neg, int *hexdigits);

/* pbtext_parse.c: values of known fields */
void *ptx_value_slot(P *ps, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, frame *fr);
void ptx_commit_slot(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f);
bool ptx_parse_scalar(P *ps, const ProtobufCFieldDescriptor *f, void *dst);

/* pbtext_unknown.c: `N: value` and `N { ... }` entries as wire bytes */
typedef struct {
    ProtobufCWireType wt;
    uint64_t v;          /* the value of a varint */
    bytes raw;           /* bytes after the tag, as protobuf-c keeps them */
    bool empty_braces;   /* `N { }` */
} uvalue;
bool ptx_parse_uvalue(P *ps, uvalue *u, int depth);
bool ptx_parse_field_number(P *ps, uint32_t *num);
bool ptx_add_unknown(P *ps, ProtobufCMessage *m, frame *fr, uint32_t num, uvalue *u);

#endif
