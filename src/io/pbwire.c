/* pbwire.c - says why protobuf_c_message_unpack rejects some bytes.
 *
 * protobuf-c only reports "failed".  This walks the wire format with the
 * same rules and in the same order as protobuf-c 1.4 does for each message:
 * first a scan of all tags and lengths, then the required-field check, then
 * each field's value (sub-messages recursively).  So the first problem
 * found is the one protobuf-c stopped at.
 *
 * A length that runs past the end of the data is either a cut-off file or a
 * garbage length.  We call it truncation when the bytes that are there
 * still parse as the start of that field's message, and name the innermost
 * message that was cut. */
#include "pbtext.h"

#include "../ir/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200
#define SMALL 64

typedef struct {
    const uint8_t *data;
    size_t len;
    char *err;
    size_t errlen;
    const char *root;      /* the top message's short name */
    char path[1024];       /* e.g. "blocks[0].ops[17]"; "" at the top */
    size_t plen;
} W;

enum { W_OK, W_BAD, W_TRUNC, W_STRUCT };
enum { R_OK, R_SHORT, R_BAD };   /* reading a varint: done, out of data, malformed */

typedef struct {
    size_t at;                              /* offset of the tag */
    uint32_t num;
    int wt;
    const ProtobufCFieldDescriptor *f;      /* NULL if unknown */
    size_t vat, vlen;                       /* value (after any length prefix) */
    size_t lat;                             /* offset of the length prefix */
    uint64_t ldlen;                         /* the declared length */
    size_t next;
} item;

/* Writes the report; with `in`, names the current message at the end. */
static int say(W *w, bool in, const char *fmt, ...)
{
    if (w->err && w->errlen) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(w->err, w->errlen, fmt, ap);
        va_end(ap);
        if (in && w->plen && k >= 0 && (size_t)k < w->errlen)
            snprintf(w->err + k, w->errlen - (size_t)k, " (inside %s)", w->path);
    }
    return W_BAD;
}

static const char *where(W *w) { return w->plen ? w->path : w->root; }

static const char *wt_name(int wt)
{
    static const char *const names[8] = {
        "varint", "64-bit", "length-delimited", "start-group",
        "end-group", "32-bit", "6", "7" };
    return names[wt & 7];
}

static int expected_wt(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return PROTOBUF_C_WIRE_TYPE_64BIT;
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return PROTOBUF_C_WIRE_TYPE_32BIT;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    default:
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    }
}

static bool packable(ProtobufCType t)
{
    return expected_wt(t) != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
}

static int rd_varint(const uint8_t *p, size_t pos, size_t end, int max,
                     uint64_t *v, size_t *used)
{
    uint64_t r = 0;
    for (int i = 0; i < max; i++) {
        if (pos + (size_t)i >= end)
            return R_SHORT;
        uint8_t c = p[pos + (size_t)i];
        if (i < 10)
            r |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = r;
            *used = (size_t)i + 1;
            return R_OK;
        }
    }
    return R_BAD;
}

static void push(W *w, const ProtobufCFieldDescriptor *f, size_t idx, size_t *saved)
{
    *saved = w->plen;
    int k = f->label == PROTOBUF_C_LABEL_REPEATED
                ? snprintf(w->path + w->plen, sizeof w->path - w->plen, "%s%s[%zu]",
                           w->plen ? "." : "", f->name, idx)
                : snprintf(w->path + w->plen, sizeof w->path - w->plen, "%s%s",
                           w->plen ? "." : "", f->name);
    if (k > 0)
        w->plen += (size_t)k < sizeof w->path - w->plen ? (size_t)k
                                                        : sizeof w->path - 1 - w->plen;
}

static void pop(W *w, size_t saved)
{
    w->plen = saved;
    w->path[saved] = 0;
}

/* Reads the field at pos in [pos, end).  On R_SHORT the field runs past
 * end; *it says how far we got (it->lat/ldlen for a long length). */
static int rd_item(W *w, const ProtobufCMessageDescriptor *d, size_t pos, size_t end,
                   item *it, const char **why)
{
    const uint8_t *p = w->data;
    uint64_t v;
    size_t used;
    memset(it, 0, sizeof *it);
    it->at = pos;
    *why = NULL;
    /* protobuf-c: at most 5 tag bytes, and a first byte with field bits 0
     * is refused outright */
    if ((p[pos] & 0xf8) == 0) {
        *why = "invalid field number 0";
        return R_BAD;
    }
    int r = rd_varint(p, pos, end, 5, &v, &used);
    if (r != R_OK) {
        *why = "invalid tag";
        return r;
    }
    it->num = (uint32_t)(v >> 3);
    it->wt = (int)(v & 7);
    it->f = protobuf_c_message_descriptor_get_field(d, it->num);
    pos += used;
    switch (it->wt) {
    case PROTOBUF_C_WIRE_TYPE_VARINT:
        it->vat = pos;
        r = rd_varint(p, pos, end, 10, &v, &used);
        if (r != R_OK) {
            *why = "unterminated varint";
            it->at = pos;
            return r;
        }
        it->vlen = used;
        break;
    case PROTOBUF_C_WIRE_TYPE_64BIT:
    case PROTOBUF_C_WIRE_TYPE_32BIT:
        it->vat = pos;
        it->vlen = it->wt == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
        if (end - pos < it->vlen)
            return R_SHORT;
        break;
    case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
        it->lat = pos;
        r = rd_varint(p, pos, end, 10, &it->ldlen, &used);
        if (r != R_OK) {
            *why = "unterminated length";
            it->at = pos;
            return r;
        }
        it->vat = pos + used;
        if (it->ldlen > end - it->vat)
            return R_SHORT;
        if (used > 5) {
            *why = "length prefix longer than protobuf-c's 5 bytes";
            it->at = pos;
            return R_BAD;
        }
        it->vlen = (size_t)it->ldlen;
        break;
    default:
        *why = it->wt == 3 || it->wt == 4 ? "unsupported (group) wire type"
                                          : "invalid wire type";
        return R_BAD;
    }
    it->next = it->vat + it->vlen;
    return R_OK;
}

static int truncated(W *w)
{
    say(w, true, "truncated at byte %zu", w->len);
    return W_TRUNC;
}

/* [start, w->len) is the beginning of a message of type d whose declared
 * length ran past the data.  W_TRUNC (reported) if it looks like a prefix
 * of such a message, W_STRUCT (silent) if it is not well-formed. */
static int partial(W *w, const ProtobufCMessageDescriptor *d, size_t start, int depth)
{
    size_t pos = start, cnt_small[SMALL], *cnt = cnt_small;
    int res = W_STRUCT;
    const char *why;
    if (depth > MAX_DEPTH)
        return W_STRUCT;
    if (d->n_fields > SMALL && !(cnt = xcalloc(d->n_fields, sizeof *cnt)))
        return W_STRUCT;
    if (cnt == cnt_small)
        memset(cnt_small, 0, sizeof cnt_small);
    for (;;) {
        item it;
        if (pos == w->len) {
            res = truncated(w);
            break;
        }
        int r = rd_item(w, d, pos, w->len, &it, &why);
        if (r == R_BAD)
            break;
        if (r == R_SHORT) {
            if (it.wt != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED || it.vat == 0) {
                res = truncated(w);
            } else if (it.ldlen <= INT_MAX) {
                if (it.f && it.f->type == PROTOBUF_C_TYPE_MESSAGE) {
                    size_t saved;
                    push(w, it.f, cnt[it.f - d->fields], &saved);
                    res = partial(w, it.f->descriptor, it.vat, depth + 1);
                    pop(w, saved);
                } else {
                    res = truncated(w);
                }
            }
            break;
        }
        if (it.f)
            cnt[it.f - d->fields]++;
        pos = it.next;
    }
    if (cnt != cnt_small)
        free(cnt);
    return res;
}

/* A field that does not fit in [.., end): cut-off data or a bad length. */
static int overrun(W *w, const item *it, size_t end, const ProtobufCMessageDescriptor *d,
                   const size_t *cnt, int depth)
{
    if (it->wt == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED && it->vat) {
        if (end == w->len && it->ldlen <= INT_MAX) {
            if (!it->f || it->f->type != PROTOBUF_C_TYPE_MESSAGE)
                return truncated(w);
            size_t saved;
            push(w, it->f, cnt[it->f - d->fields], &saved);
            int r = partial(w, it->f->descriptor, it->vat, depth + 1);
            pop(w, saved);
            if (r == W_TRUNC)
                return W_BAD;
        }
        return say(w, true, "length %llu at byte %zu exceeds the %zu bytes left",
                   (unsigned long long)it->ldlen, it->lat, end - it->vat);
    }
    if (end == w->len)
        return truncated(w);
    return say(w, false, "the field at byte %zu runs past the end of %s at byte %zu",
               it->at, where(w), end);
}

static int check_packed(W *w, const item *it)
{
    const ProtobufCFieldDescriptor *f = it->f;
    size_t pos = it->vat, end = it->vat + it->vlen;
    while (pos < end) {
        if (f->type == PROTOBUF_C_TYPE_BOOL) {
            if (w->data[pos] > 1)
                return say(w, false, "packed bool value %u at byte %zu in field %u of %s ('%s')",
                           w->data[pos], pos, it->num, where(w), f->name);
            pos++;
            continue;
        }
        if (expected_wt(f->type) != PROTOBUF_C_WIRE_TYPE_VARINT)
            return W_OK;
        uint64_t v;
        size_t used;
        if (rd_varint(w->data, pos, end, 10, &v, &used) != R_OK)
            return say(w, false, "bad packed varint at byte %zu in field %u of %s ('%s')", pos,
                       it->num, where(w), f->name);
        pos += used;
    }
    return W_OK;
}

/* Phase 1, protobuf-c's scan of tags and lengths: counts each field in
 * cnt and marks it in seen. */
static int scan_items(W *w, const ProtobufCMessageDescriptor *d, size_t start, size_t end,
                      size_t *cnt, bool *seen, int depth)
{
    const char *why;
    item it;
    for (size_t pos = start; pos < end; pos = it.next) {
        int r = rd_item(w, d, pos, end, &it, &why);
        if (r == R_BAD) {
            if (strcmp(why, "invalid wire type") == 0 || strstr(why, "group"))
                return say(w, true, "%s %d at byte %zu", why, it.wt, it.at);
            return say(w, true, "%s at byte %zu", why, it.at);
        }
        if (r == R_SHORT)
            return overrun(w, &it, end, d, cnt, depth);
        if (!it.f)
            continue;
        size_t i = (size_t)(it.f - d->fields);
        seen[i] = true;
        cnt[i]++;
        if (it.f->label == PROTOBUF_C_LABEL_REPEATED && packable(it.f->type) &&
            it.wt == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
            int ew = expected_wt(it.f->type);
            size_t unit = ew == PROTOBUF_C_WIRE_TYPE_64BIT ? 8
                          : ew == PROTOBUF_C_WIRE_TYPE_32BIT ? 4 : 1;
            if (it.vlen % unit)
                return say(w, false, "packed field %u of %s ('%s') at byte %zu has length %zu, "
                           "not a multiple of %zu", it.num, where(w), it.f->name, it.at,
                           it.vlen, unit);
        }
    }
    return W_OK;
}

/* Phase 2: required fields (protobuf-c lets those with a default go). */
static int check_required(W *w, const ProtobufCMessageDescriptor *d, const bool *seen)
{
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REQUIRED && !f->default_value && !seen[i]) {
            char tmp[1100];
            snprintf(tmp, sizeof tmp, "%s%s%s", w->path, w->plen ? "." : "", f->name);
            return say(w, false, "missing required field '%s'", tmp);
        }
    }
    return W_OK;
}

static int walk(W *w, const ProtobufCMessageDescriptor *d, size_t start, size_t end,
                int depth);

/* Phase 3: each value in order, sub-messages walked one level down; cnt
 * (zeroed) numbers the repeated ones for the path. */
static int walk_values(W *w, const ProtobufCMessageDescriptor *d, size_t start, size_t end,
                       size_t *cnt, int depth)
{
    const char *why;
    item it;
    for (size_t pos = start; pos < end; pos = it.next) {
        rd_item(w, d, pos, end, &it, &why);
        const ProtobufCFieldDescriptor *f = it.f;
        if (!f)
            continue;
        size_t idx = cnt[f - d->fields]++;
        int res;
        if (f->label == PROTOBUF_C_LABEL_REPEATED && packable(f->type) &&
            it.wt == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
            if ((res = check_packed(w, &it)) != W_OK)
                return res;
            continue;
        }
        /* protobuf-c reads a bool from any wire type */
        if (f->type != PROTOBUF_C_TYPE_BOOL && it.wt != expected_wt(f->type))
            return say(w, false, "field %u of %s ('%s') has wire type %s, expected %s (byte %zu)",
                       it.num, where(w), f->name, wt_name(it.wt),
                       wt_name(expected_wt(f->type)), it.at);
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            size_t saved;
            push(w, f, idx, &saved);
            res = walk(w, f->descriptor, it.vat, it.next, depth + 1);
            pop(w, saved);
            if (res != W_OK)
                return res;
        }
    }
    return W_OK;
}

/* Recursion is bounded by MAX_DEPTH (the schema nests a few levels; only
 * unknown garbage could go deeper, and that is refused). */
static int walk(W *w, const ProtobufCMessageDescriptor *d, size_t start, size_t end,
                int depth)
{
    size_t cnt_small[SMALL], *cnt = cnt_small;
    bool seen_small[SMALL], *seen = seen_small;
    size_t n = d->n_fields > SMALL ? d->n_fields : SMALL;
    int res;

    if (depth > MAX_DEPTH)
        return say(w, true, "messages nested deeper than %d at byte %zu", MAX_DEPTH, start);
    if (d->n_fields > SMALL) {
        cnt = xcalloc(d->n_fields, sizeof *cnt);
        seen = xcalloc(d->n_fields, sizeof *seen);
    } else {
        memset(cnt_small, 0, sizeof cnt_small);
        memset(seen_small, 0, sizeof seen_small);
    }
    if (!cnt || !seen)
        res = say(w, false, "out of memory");
    else if ((res = scan_items(w, d, start, end, cnt, seen, depth)) == W_OK &&
             (res = check_required(w, d, seen)) == W_OK) {
        memset(cnt, 0, n * sizeof *cnt);
        res = walk_values(w, d, start, end, cnt, depth);
    }
    if (cnt != cnt_small)
        free(cnt);
    if (seen != seen_small)
        free(seen);
    return res;
}

int pbwire_diagnose(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                    size_t len, char *err, size_t errlen)
{
    W w = { .data = data, .len = len, .err = err, .errlen = errlen,
            .root = desc->short_name ? desc->short_name : desc->name };
    if (err && errlen)
        err[0] = 0;
    return walk(&w, desc, 0, len, 0) == W_OK ? 0 : 1;
}
