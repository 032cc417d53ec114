/* tensor.c - tensors and scopes of the reference executor. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../ckd.h"
#include "../ir/alloc.h"
#include "../ir/env.h"

#include "exec.h"

/* ---- the memory budget (--max-memory) ---------------------------------- */

/* The budgets and the error context are the env's part PDT_ENV_EXEC
 * (src/ir/env.h): set once by the options, kept for the process. */
typedef struct {
    uint64_t max_memory;        /* 0: not set, the default applies */
    uint64_t live_bytes;        /* data of the tensors alive now */
    uint64_t max_work;          /* 0: EX_DEFAULT_MAX_WORK */
    uint64_t work_done;         /* element operations so far (exec.h) */
    /* What the executor is building, for the message that stops it. */
    struct {
        int block;              /* -1: no op, `what` and `name` instead */
        size_t op_idx;
        const char *type;
        const char *what, *name;
    } where;
} exec_state;

static void exec_state_init(void *p)
{
    exec_state *x = p;
    x->where.block = -1;
    x->where.what = "preparing the run";
    x->where.name = "";
}

static exec_state *exec_now(void)
{
    return pdt_env_part(PDT_ENV_EXEC, sizeof(exec_state), exec_state_init);
}
#define X (*exec_now())

void ex_set_max_memory(uint64_t bytes)
{
    X.max_memory = bytes;
}

uint64_t ex_max_memory(void)
{
    if (X.max_memory)
        return X.max_memory;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (UINT64_C(8) << 30);
    return phys / 2;
}

void ex_memory_reset(void)
{
    exec_state *x = exec_now();
    x->live_bytes = 0;
    x->work_done = 0;
}

void ex_where_op(int block, size_t op_idx, const char *type)
{
    exec_state *x = exec_now();
    x->where.block = block;
    x->where.op_idx = op_idx;
    x->where.type = type;
}

void ex_where_var(const char *what, const char *name)
{
    exec_state *x = exec_now();
    x->where.block = -1;
    x->where.what = what;
    x->where.name = name ? name : "";
}

/* "block 0, op 3 'softmax'" or "seeding feed 'x'" into buf. */
static void describe_where(char *buf, size_t len)
{
    const exec_state *x = exec_now();
    if (x->where.block >= 0)
        snprintf(buf, len, "block %d, op %zu '%s'", x->where.block, x->where.op_idx,
                 x->where.type ? x->where.type : "?");
    else if (x->where.name[0])
        snprintf(buf, len, "%s '%.200s'", x->where.what, x->where.name);
    else
        snprintf(buf, len, "%s", x->where.what);
}

/* Ends the run: one message naming what was being built, the cleanups
 * (verify transpile's scratch folder) run, exit 1 (src/ir/alloc.h). */
static _Noreturn void refuse_tensor(int nd, const int64_t *dims, const char *why)
{
    char at[400], shape[200];
    size_t o = 0;
    shape[o++] = '[';
    for (int i = 0; i < nd && o < sizeof shape - 32; i++)
        o += (size_t)snprintf(shape + o, sizeof shape - o, "%s%lld", i ? ", " : "",
                              (long long)dims[i]);
    snprintf(shape + o, sizeof shape - o, "]");
    describe_where(at, sizeof at);
    char msg[1024];
    snprintf(msg, sizeof msg, "pdtrans: error: verify: %s: a tensor of dims %s %s\n", at, shape,
             why);
    pdt_fail_now(msg);
}

void ex_set_max_work(uint64_t ops)
{
    X.max_work = ops;
}

uint64_t ex_max_work(void)
{
    return X.max_work ? X.max_work : EX_DEFAULT_MAX_WORK;
}

uint64_t ex_work_done(void)
{
    return X.work_done;
}

void ex_work(uint64_t ops)
{
    exec_state *x = exec_now();
    if (!__builtin_add_overflow(x->work_done, ops, &x->work_done) && x->work_done <= ex_max_work())
        return;
    char at[400], msg[640];
    describe_where(at, sizeof at);
    snprintf(msg, sizeof msg,
             "pdtrans: error: verify: %s: the run passes the --max-work budget of %llu element "
             "operations (a larger --max-work, fewer steps or trainers, or a smaller batch)\n",
             at, (unsigned long long)ex_max_work());
    pdt_fail_now(msg);
}

void ex_work3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
        abc = UINT64_MAX;
    ex_work(abc);
}

/* "123 bytes", or "4.0 MiB" from 1 MiB on. */
static void size_str(char *buf, size_t len, double bytes)
{
    if (bytes < 1048576)
        snprintf(buf, len, "%.0f bytes", bytes);
    else
        snprintf(buf, len, "%.1f MiB", bytes / 1048576);
}

/* The number of elements, checked: every dim must be >= 0, and the
 * product of the dims with each 0 counted as 1 must fit in int64, so that
 * a kernel's product of any of the dims (outer x n x inner, gemm's m, k,
 * n) fits too; then the bytes must fit the budget.  *fitp gets that
 * product: it is what ex_tensor_new charges to --max-work, so that a
 * kernel's loop over any sub-product of the dims of an EMPTY tensor (the
 * dims around a softmax axis of [b, 65536, 65536, 0], a split over the
 * 2^40 rows of [2^40, 0]) or an array sized by one dim is bounded by the
 * budget too (fuzz findings G, H).  For a non-empty tensor it equals the
 * number of elements, so what a run is charged changes only for empty
 * tensors. */
static size_t checked_numel(int nd, const int64_t *dims, uint64_t *fitp)
{
    int64_t fit = 1;
    bool zero = false;
    for (int i = 0; i < nd; i++) {
        if (dims[i] < 0)
            refuse_tensor(nd, dims, "has a negative dim");
        zero |= dims[i] == 0;
        if (ckd_mul_i64(&fit, fit, dims[i] ? dims[i] : 1))
            refuse_tensor(nd, dims, "has more elements than int64 holds");
    }
    size_t n = zero ? 0 : (size_t)fit, bytes;
    uint64_t total;
    *fitp = (uint64_t)fit;
    if (ckd_mul_size(&bytes, n, sizeof(double)) ||
        __builtin_add_overflow((uint64_t)bytes, X.live_bytes, &total) || total > ex_max_memory()) {
        char why[256], need[32], used[32], cap[32];
        size_str(need, sizeof need, (double)n * sizeof(double));
        size_str(used, sizeof used, (double)X.live_bytes);
        size_str(cap, sizeof cap, (double)ex_max_memory());
        snprintf(why, sizeof why,
                 "needs %s (float64s), which with the %s in use passes the --max-memory "
                 "budget of %s", need, used, cap);
        refuse_tensor(nd, dims, why);
    }
    return n;
}

ex_tensor *ex_tensor_new(int dtype, int nd, const int64_t *dims)
{
    if (nd < 0)
        nd = 0;
    uint64_t fit;
    size_t n = checked_numel(nd > EX_MAX_DIMS ? EX_MAX_DIMS : nd, dims, &fit);
    ex_tensor *t = xcalloc(1, sizeof(ex_tensor));
    t->dtype = dtype;
    t->nd = nd > EX_MAX_DIMS ? EX_MAX_DIMS : nd;
    for (int i = 0; i < t->nd; i++)
        t->dims[i] = dims[i];
    t->numel = n;
    ex_work(fit);
    t->data = xcalloc(n ? n : 1, sizeof(double));
    X.live_bytes += (uint64_t)n * sizeof(double);
    return t;
}

ex_tensor *ex_tensor_like(const ex_tensor *t)
{
    ex_tensor *r = ex_tensor_new(t->dtype, t->nd, t->dims);
    r->kind = t->kind;
    r->height = t->height;
    if (t->rows) {
        size_t n = t->nd ? (size_t)t->dims[0] : 0;
        r->rows = xcalloc(n + 1, sizeof(int64_t));
        memcpy(r->rows, t->rows, n * sizeof *t->rows);
    }
    if (t->lod)
        ex_tensor_set_lod(r, t->lod, t->n_lod);
    return r;
}

ex_tensor *ex_tensor_copy(const ex_tensor *t)
{
    ex_tensor *r = ex_tensor_like(t);
    memcpy(r->data, t->data, t->numel * sizeof *t->data);
    return r;
}

void ex_tensor_free(ex_tensor *t)
{
    if (!t)
        return;
    X.live_bytes -= (uint64_t)t->numel * sizeof(double);
    free(t->data);
    free(t->lod);
    free(t->rows);
    free(t);
}

void ex_tensor_set_lod(ex_tensor *t, const int64_t *lod, size_t n)
{
    free(t->lod);
    t->lod = NULL;
    if (n) {
        t->lod = xmalloc_n(n, sizeof(int64_t));
        memcpy(t->lod, lod, n * sizeof *lod);
    }
    t->n_lod = n;
}

ex_tensor *ex_rows_new(int dtype, size_t n, const int64_t *rows, int64_t width_nd,
                       const int64_t *width_dims, int64_t height)
{
    int64_t dims[EX_MAX_DIMS];
    dims[0] = (int64_t)n;
    int nd = 1;
    for (int64_t i = 0; i < width_nd && nd < EX_MAX_DIMS; i++)
        dims[nd++] = width_dims[i];
    ex_tensor *t = ex_tensor_new(dtype, nd, dims);
    t->kind = EX_ROWS;
    t->height = height;
    t->rows = xcalloc(n + 1, sizeof(int64_t));
    if (n && rows)
        memcpy(t->rows, rows, n * sizeof *rows);
    return t;
}

ex_tensor *ex_densify(const ex_tensor *t)
{
    if (t->kind == EX_DENSE)
        return ex_tensor_copy(t);
    int64_t dims[EX_MAX_DIMS];
    memcpy(dims, t->dims, sizeof dims);
    dims[0] = t->height;
    ex_tensor *d = ex_tensor_new(t->dtype, t->nd, dims);
    size_t n = (size_t)t->dims[0], w = n ? t->numel / n : 0;
    for (size_t i = 0; i < n; i++) {
        int64_t r = t->rows[i];
        if (r < 0 || r >= t->height)
            continue;   /* callers check row ranges where it matters */
        for (size_t j = 0; j < w; j++)
            d->data[(size_t)r * w + j] += t->data[i * w + j];
    }
    return d;
}

size_t *ex_rows_locate(const ex_tensor *table, const int64_t *ids, size_t n)
{
    GHashTable *slot = g_hash_table_new(g_int64_hash, g_int64_equal);
    size_t nr = table->kind == EX_ROWS ? (size_t)table->dims[0] : 0;
    for (size_t i = 0; i < nr; i++)
        if (!g_hash_table_contains(slot, &table->rows[i]))
            g_hash_table_insert(slot, &table->rows[i], GSIZE_TO_POINTER(i + 1));
    size_t *at = xmalloc_n(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        at[i] = GPOINTER_TO_SIZE(g_hash_table_lookup(slot, &ids[i])) - 1;
    g_hash_table_destroy(slot);
    return at;
}

bool ex_same_shape(const ex_tensor *a, const ex_tensor *b)
{
    if (a->nd != b->nd)
        return false;
    for (int i = 0; i < a->nd; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

const char *ex_dims_str(const ex_tensor *t, char *buf, size_t len)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, len - o, "[");
    for (int i = 0; i < t->nd && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "",
                              (long long)t->dims[i]);
    if (o < len)
        snprintf(buf + o, len - o, "]");
    return buf;
}

/* ---- scope ------------------------------------------------------------ */

ex_scope *ex_scope_new(void)
{
    return xcalloc(1, sizeof(ex_scope));
}

static void fusion_free(ex_fusion *f)
{
    if (!f)
        return;
    free(f->members);
    free(f->offsets);
    free(f->views);
    free(f);
}

/* Forgets the fusion of buffer `fused` and its members' views. */
static void unfuse(ex_scope *s, const char *fused)
{
    ex_fusion *f = pmap_get(&s->fusions, fused);
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        if (pmap_get(&s->views, f->members[i]) == &f->views[i])
            pmap_put(&s->views, f->members[i], NULL);
    pmap_put(&s->fusions, fused, NULL);
    fusion_free(f);
}

void ex_scope_free(ex_scope *s)
{
    if (!s)
        return;
    PMAP_FOR(&s->map, slot) ex_tensor_free(slot->val);
    PMAP_FOR(&s->fusions, slot) fusion_free(slot->val);
    pmap_free(&s->fusions);
    pmap_free(&s->views);
    pmap_free(&s->map);
    free(s->names);
    free(s);
}

ex_tensor *ex_scope_get(const ex_scope *s, const char *name)
{
    return name ? pmap_get(&s->map, ir_intern(name)) : NULL;
}

/* After `name` was put: the buffer's members or the member's part of
 * its buffer follow it. */
static void sync_views(ex_scope *s, const char *name, const ex_tensor *t)
{
    ex_fusion *f = pmap_get(&s->fusions, name);
    for (size_t i = 0; f && i < f->n; i++) {
        ex_tensor *m = pmap_get(&s->map, f->members[i]);
        if (m && m->kind == EX_DENSE && t->kind == EX_DENSE && f->offsets[i] + m->numel <= t->numel)
            memcpy(m->data, t->data + f->offsets[i], m->numel * sizeof *m->data);
    }
    const ex_view *v = pmap_get(&s->views, name);
    if (!v)
        return;
    f = v->fusion;
    size_t k = v->k;
    ex_tensor *buf = pmap_get(&s->map, f->fused);
    size_t end = k + 1 < f->n ? f->offsets[k + 1] : (buf ? buf->numel : 0);
    if (buf && t->kind == EX_DENSE && f->offsets[k] + t->numel <= end)
        memcpy(buf->data + f->offsets[k], t->data, t->numel * sizeof *t->data);
    else
        pmap_put(&s->views, name, NULL);
}

void ex_scope_fuse(ex_scope *s, const char *fused, const char *const *members,
                   const size_t *offsets, size_t n)
{
    fused = ir_intern(fused);
    unfuse(s, fused);
    ex_fusion *f = xcalloc(1, sizeof(ex_fusion));
    f->fused = fused;
    f->n = n;
    f->members = xmalloc_n(n + 1, sizeof(const char *));
    f->offsets = xmalloc_n(n + 1, sizeof(size_t));
    f->views = xmalloc_n(n + 1, sizeof(ex_view));
    for (size_t i = 0; i < n; i++) {
        f->members[i] = ir_intern(members[i]);
        f->offsets[i] = offsets[i];
        f->views[i] = (ex_view){f, i};
        const ex_view *prev = pmap_get(&s->views, f->members[i]);
        if (prev)
            unfuse(s, prev->fusion->fused);
    }
    for (size_t i = 0; i < n; i++)
        pmap_put(&s->views, f->members[i], &f->views[i]);
    pmap_put(&s->fusions, fused, f);
}

void ex_scope_put(ex_scope *s, const char *name, ex_tensor *t)
{
    name = ir_intern(name);
    ex_tensor *old = pmap_get(&s->map, name);
    if (old == t)
        return;
    if (old) {
        ex_tensor_free(old);
    } else if (!pmap_has(&s->map, name)) {
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 16;
            s->names = xrealloc_n(s->names, s->cap, sizeof(const char *));
        }
        s->names[s->n++] = name;
    }
    pmap_put(&s->map, name, t);
    if (t && (pmap_get(&s->fusions, name) || pmap_get(&s->views, name)))
        sync_views(s, name, t);
}

void ex_scope_remove(ex_scope *s, const char *name)
{
    name = ir_intern(name);
    ex_tensor *old = pmap_get(&s->map, name);
    if (!old)
        return;
    ex_tensor_free(old);
    pmap_put(&s->map, name, NULL);  /* keeps its place in `names` */
}

ex_tensor *ex_scope_take(ex_scope *s, const char *name)
{
    name = ir_intern(name);
    ex_tensor *t = pmap_get(&s->map, name);
    if (!t || pmap_get(&s->fusions, name) || pmap_get(&s->views, name))
        return NULL;
    pmap_put(&s->map, name, NULL);  /* keeps its place in `names` */
    return t;
}

size_t ex_scope_names(const ex_scope *s, const char ***out)
{
    const char **v = xmalloc_n(s->n + 1, sizeof(const char *));
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (pmap_get(&s->map, s->names[i]))
            v[k++] = s->names[i];
    *out = v;
    return k;
}

const char **ex_names_take(GPtrArray *a)
{
    const char **v = xmalloc_n(a->len + 1, sizeof *v);
    for (guint i = 0; i < a->len; i++)
        v[i] = a->pdata[i];
    v[a->len] = NULL;
    g_ptr_array_free(a, TRUE);
    return v;
}

ex_scope *ex_scope_clone(const ex_scope *s)
{
    ex_where_var("copying the scope of a run", NULL);
    ex_scope *c = ex_scope_new();
    for (size_t i = 0; i < s->n; i++) {
        ex_tensor *t = pmap_get(&s->map, s->names[i]);
        if (t)
            ex_scope_put(c, s->names[i], ex_tensor_copy(t));
    }
    PMAP_FOR(&s->fusions, slot) {
        const ex_fusion *f = slot->val;
        if (f)
            ex_scope_fuse(c, f->fused, f->members, f->offsets, f->n);
    }
    return c;
}

/* ---- random numbers ----------------------------------------------------
 * xoshiro256** (Blackman and Vigna, public domain reference algorithm),
 * seeded through splitmix64 so that any 64-bit seed, 0 included, gives a
 * well-mixed state.  Doubles take the top 53 bits. */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ex_rng_seed(ex_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t ex_rng_next(ex_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double ex_rng_uniform(ex_rng *r)
{
    return (double)(ex_rng_next(r) >> 11) * 0x1.0p-53;
}

double ex_rng_normal(ex_rng *r)
{
    double u1 = ex_rng_uniform(r), u2 = ex_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
