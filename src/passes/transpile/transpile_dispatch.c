/* transpile_dispatch.c - which pserver gets which slice (ps_dispatcher), and
 * the send order (numpy's shuffle with --no-slice).
 *
 * The seed dispatches the grad slices when it inserts the sends and the
 * param slices again when it inserts the recvs.  Round-robin gives the same
 * answer both times; a name hash would not (grad and param slices have
 * different names), so pdtrans decides once per slice pair and uses that
 * decision for the send, the recv and the pserver alike. */
#include <stdlib.h>
#include <string.h>

#include "../../ckd.h"
#include "../../diag.h"
#include "builders.h"

/* ---- numpy's legacy MT19937 (RandomState) ---- */

enum { MT_N = 624, MT_M = 397 };

typedef struct {
    uint32_t key[MT_N];
    int pos;
} mt_state;

static void mt_seed(mt_state *s, uint32_t seed)
{
    for (int i = 0; i < MT_N; i++) {
        s->key[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1u;
    }
    s->pos = MT_N;
}

static void mt_refill(mt_state *s)
{
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    int i;
    uint32_t y;
    for (i = 0; i < MT_N - MT_M; i++) {
        y = (s->key[i] & 0x80000000u) | (s->key[i + 1] & 0x7fffffffu);
        s->key[i] = s->key[i + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
    }
    for (; i < MT_N - 1; i++) {
        y = (s->key[i] & 0x80000000u) | (s->key[i + 1] & 0x7fffffffu);
        s->key[i] = s->key[i + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
    }
    y = (s->key[MT_N - 1] & 0x80000000u) | (s->key[0] & 0x7fffffffu);
    s->key[MT_N - 1] = s->key[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
    s->pos = 0;
}

static uint32_t mt_next32(mt_state *s)
{
    if (s->pos == MT_N)
        mt_refill(s);
    uint32_t y = s->key[s->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static uint64_t mt_next64(mt_state *s)
{
    uint64_t hi = mt_next32(s);
    return hi << 32 | mt_next32(s);
}

/* numpy's random_interval: a uniform value in [0, max] by masked rejection. */
static uint64_t mt_interval(mt_state *s, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max;
    for (int sh = 1; sh <= 32; sh <<= 1)
        mask |= mask >> sh;
    uint64_t v;
    if (max <= 0xffffffffu) {
        while ((v = (mt_next32(s) & mask)) > max)
            ;
    } else {
        while ((v = (mt_next64(s) & mask)) > max)
            ;
    }
    return v;
}

void tp_numpy_shuffle(uint32_t seed, size_t n, size_t *perm)
{
    mt_state *s = xmalloc(sizeof(mt_state));
    mt_seed(s, seed);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    /* RandomState.shuffle: for i in reversed(range(1, n)): swap(i, j). */
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)mt_interval(s, i);
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    free(s);
}

uint64_t tp_fnv1a64(const char *str)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
        h ^= *c;
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- placement ---- */

typedef struct {
    size_t pair, slice;
    int64_t bytes;
    size_t seq;             /* position in send order */
} cand;

/* Byte totals over many vars: each var's bytes fit in int64 (checked when
 * it is split), a pserver's sum saturates rather than wraps. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return ckd_add_i64(&r, a, b) ? INT64_MAX : r;
}

static int by_bytes_desc(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* True if another slice of the same var already sits on endpoint e: the
 * pserver names accumulators after the whole var, so two slices of one var
 * on one pserver would share them.  ep: the pair's endpoints so far. */
static bool var_on(const tp_pair *p, const int *ep, int e, const bool *placed)
{
    for (size_t k = 0; k < p->param.n_slices; k++)
        if (placed[k] && ep[k] == e)
            return true;
    return false;
}

/* The placers fill ep[pair][slice]; the pairs get them when all are placed. */
static void place_hash(const tp_placement *pl, int **ep)
{
    for (size_t q = 0; q < pl->n_pairs; q++) {
        size_t pi = pl->send_order[q];
        const tp_pair *p = &pl->pairs[pi];
        bool *placed = xcalloc(p->param.n_slices, sizeof *placed);
        for (size_t k = 0; k < p->param.n_slices; k++) {
            int e = (int)(tp_fnv1a64(p->param.slices[k].name) % pl->n_eps);
            while (var_on(p, ep[pi], e, placed))
                e = (e + 1) % (int)pl->n_eps;
            ep[pi][k] = e;
            placed[k] = true;
        }
        free(placed);
    }
}

static void place_balanced(const tp_placement *pl, int **ep)
{
    size_t n = 0;
    for (size_t i = 0; i < pl->n_pairs; i++)
        n += pl->pairs[i].param.n_slices;
    cand *c = xmalloc_n(n ? n : 1, sizeof *c);
    size_t k = 0;
    for (size_t q = 0; q < pl->n_pairs; q++) {
        size_t pi = pl->send_order[q];
        const tp_pair *p = &pl->pairs[pi];
        for (size_t s = 0; s < p->param.n_slices; s++, k++) {
            c[k].pair = pi;
            c[k].slice = s;
            c[k].bytes = p->param.slices[s].numel * tp_dtype_size(p->param.var->dtype);
            c[k].seq = k;
        }
    }
    /* Largest first onto the lightest pserver (LPT), ties to the lower index. */
    qsort(c, n, sizeof *c, by_bytes_desc);
    int64_t *load = xcalloc(pl->n_eps, sizeof *load);
    bool **placed = xcalloc(pl->n_pairs + 1, sizeof *placed);  /* per pair, per slice */
    for (size_t i = 0; i < n; i++) {
        const tp_pair *p = &pl->pairs[c[i].pair];
        bool **pl_of = &placed[c[i].pair];
        if (!*pl_of)
            *pl_of = xcalloc(p->param.n_slices, sizeof **pl_of);
        bool *on = *pl_of;
        int best = -1;
        for (size_t e = 0; e < pl->n_eps; e++)
            if (!var_on(p, ep[c[i].pair], (int)e, on) && (best < 0 || load[e] < load[best]))
                best = (int)e;
        ep[c[i].pair][c[i].slice] = best;
        on[c[i].slice] = true;
        load[best] = sat_add(load[best], c[i].bytes);
    }
    for (size_t q = 0; q < pl->n_pairs; q++)
        free(placed[q]);
    free(placed);
    free(load);
    free(c);
}

/* epl: each endpoint's slices, in send order. */
static void fill_endpoints(tp_placement *pl)
{
    tp_endpoint *epl = ir_arena_alloc(pl->arena, pl->n_eps * sizeof *epl);
    tp_ref **refs = xcalloc(pl->n_eps + 1, sizeof *refs);   /* epl[e].refs, writable */
    for (size_t q = 0; q < pl->n_pairs; q++) {
        size_t pi = pl->send_order[q];
        const tp_pair *p = &pl->pairs[pi];
        for (size_t k = 0; k < p->param.n_slices; k++) {
            size_t at = (size_t)p->ep[k];
            tp_endpoint *e = &epl[at];
            if (e->n == e->cap) {
                size_t cap = e->cap ? e->cap * 2 : 8;
                tp_ref *r = ir_arena_alloc(pl->arena, cap * sizeof *r);
                if (e->n)
                    memcpy(r, refs[at], e->n * sizeof *r);
                e->refs = refs[at] = r;
                e->cap = cap;
            }
            refs[at][e->n].pair = pi;
            refs[at][e->n].slice = k;
            e->n++;
            e->bytes = sat_add(e->bytes,
                               p->param.slices[k].numel * tp_dtype_size(p->param.var->dtype));
        }
    }
    free(refs);
    pl->epl = epl;
}

int tp_dispatch(tp_plan *st)
{
    tp_placement *pl = st->draft;
    size_t *order = ir_arena_alloc(pl->arena, (pl->n_pairs + 1) * sizeof *order);
    pl->send_order = order;
    /* GeoSgdTranspiler dispatches the params' slices in param order. */
    if (st->ctx->transpile.slice_var_up || pl->geo) {
        for (size_t i = 0; i < pl->n_pairs; i++)
            order[i] = i;
    } else {
        /* np.random.seed(program.random_seed); np.random.shuffle(items) */
        tp_numpy_shuffle((uint32_t)st->ctx->transpile.random_seed, pl->n_pairs, order);
    }
    int **ep = xcalloc(pl->n_pairs + 1, sizeof *ep);
    for (size_t i = 0; i < pl->n_pairs; i++)
        ep[i] = ir_arena_alloc(pl->arena, pl->pairs[i].param.n_slices * sizeof **ep);
    switch (st->ctx->transpile.split_method) {
    case PDT_SPLIT_ROUND_ROBIN: {
        size_t step = 0;
        for (size_t q = 0; q < pl->n_pairs; q++) {
            size_t pi = order[q];
            for (size_t k = 0; k < pl->pairs[pi].param.n_slices; k++) {
                ep[pi][k] = (int)step;
                step = (step + 1) % pl->n_eps;
            }
        }
        break;
    }
    case PDT_SPLIT_HASH:
        place_hash(pl, ep);
        break;
    case PDT_SPLIT_BALANCED:
        place_balanced(pl, ep);
        break;
    }
    for (size_t i = 0; i < pl->n_pairs; i++)
        st->draft_pairs[i].ep = ep[i];
    free(ep);
    fill_endpoints(pl);
    return PDT_OK;
}
