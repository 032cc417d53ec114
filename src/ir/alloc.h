/* alloc.h - every allocation of a run is counted, and running out of
 * memory ends the run cleanly: one "out of memory while ..." message, the
 * temporaries of a half-written output removed, exit status 1.
 *
 * The Makefile force-includes this header into every C file (-include), so
 * GLib calls that may allocate are counted too: GLib's own allocator aborts
 * on failure and offers no hook since 2.46, so each such call first passes
 * pdt_alloc_point(), where an injected failure is taken.  A real failure
 * inside GLib still aborts there (README.md of src/ir says so).
 *
 * PDTRANS_FAIL_ALLOC=N in the environment makes the N-th counted allocation
 * fail (tests/alloc_fail.sh sweeps N over whole runs). */
#ifndef PDT_ALLOC_H
#define PDT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

/* Counts one allocation; when it is the one PDTRANS_FAIL_ALLOC names,
 * behaves as if it failed: pdt_out_of_memory(). */
void pdt_alloc_point(void);
/* True (and counted) when the next allocation must fail: for allocators
 * that report failure themselves (xmalloc, protobuf-c's, jansson's). */
bool pdt_alloc_should_fail(void);
/* Prints "out of memory while <doing>", runs the failure hook, exits 1. */
_Noreturn void pdt_out_of_memory(void);
/* The same way out for another sudden end (an input file that shrank
 * under its mapping, src/io/pdio_map.c): writes MSG (a whole line) to
 * stderr with write(2), runs the failure hook and the cleanups, exits 1. */
_Noreturn void pdt_fail_now(const char *msg);
/* What the run is doing, for that message: a printf format and one string
 * argument (e.g. "reading '%s'", path), copied; NULL clears it. */
void pdt_alloc_doing(const char *fmt, const char *arg);
/* One cleanup to run when memory runs out (e.g. removing temporaries);
 * NULL clears it.  The output batch's (pdio_batch_commit). */
void pdt_alloc_on_failure(void (*cleanup)(void *), void *arg);
/* More cleanups, run after that one, last added first: a command's own
 * temporaries (verify transpile's scratch folder), which the batch of a
 * command it runs inside must not displace.  At most 4 at once (false
 * when full); remove drops the one added with the same pair.  A cleanup
 * must not allocate through GLib or x*. */
bool pdt_alloc_add_cleanup(void (*cleanup)(void *), void *arg);
void pdt_alloc_remove_cleanup(void (*cleanup)(void *), void *arg);

#define g_malloc(n) (pdt_alloc_point(), (g_malloc)(n))
#define g_malloc0(n) (pdt_alloc_point(), (g_malloc0)(n))
#define g_malloc_n(n, s) (pdt_alloc_point(), (g_malloc_n)((n), (s)))
#define g_malloc0_n(n, s) (pdt_alloc_point(), (g_malloc0_n)((n), (s)))
#define g_realloc(p, n) (pdt_alloc_point(), (g_realloc)((p), (n)))
#define g_realloc_n(p, n, s) (pdt_alloc_point(), (g_realloc_n)((p), (n), (s)))
#define g_strdup(s) (pdt_alloc_point(), (g_strdup)(s))
#define g_strndup(s, n) (pdt_alloc_point(), (g_strndup)((s), (n)))
#define g_strdup_printf(...) (pdt_alloc_point(), (g_strdup_printf)(__VA_ARGS__))
#define g_strdup_vprintf(f, ap) (pdt_alloc_point(), (g_strdup_vprintf)((f), (ap)))
#define g_ptr_array_new() (pdt_alloc_point(), (g_ptr_array_new)())
#define g_ptr_array_sized_new(n) (pdt_alloc_point(), (g_ptr_array_sized_new)(n))
#define g_ptr_array_new_with_free_func(f) (pdt_alloc_point(), (g_ptr_array_new_with_free_func)(f))
#define g_ptr_array_add(a, p) (pdt_alloc_point(), (g_ptr_array_add)((a), (p)))
#define g_ptr_array_insert(a, i, p) (pdt_alloc_point(), (g_ptr_array_insert)((a), (i), (p)))
#define g_ptr_array_set_size(a, n) (pdt_alloc_point(), (g_ptr_array_set_size)((a), (n)))
#define g_hash_table_new(h, e) (pdt_alloc_point(), (g_hash_table_new)((h), (e)))
#define g_hash_table_new_full(h, e, kf, vf) \
    (pdt_alloc_point(), (g_hash_table_new_full)((h), (e), (kf), (vf)))
#define g_hash_table_add(t, k) (pdt_alloc_point(), (g_hash_table_add)((t), (k)))
#define g_hash_table_insert(t, k, v) (pdt_alloc_point(), (g_hash_table_insert)((t), (k), (v)))
#define g_hash_table_replace(t, k, v) (pdt_alloc_point(), (g_hash_table_replace)((t), (k), (v)))
#define g_array_new(z, c, s) (pdt_alloc_point(), (g_array_new)((z), (c), (s)))
#define g_array_sized_new(z, c, s, n) (pdt_alloc_point(), (g_array_sized_new)((z), (c), (s), (n)))
#define g_array_append_vals(a, v, n) (pdt_alloc_point(), (g_array_append_vals)((a), (v), (n)))
#define g_array_prepend_vals(a, v, n) (pdt_alloc_point(), (g_array_prepend_vals)((a), (v), (n)))
#define g_array_set_size(a, n) (pdt_alloc_point(), (g_array_set_size)((a), (n)))
#define g_string_new(s) (pdt_alloc_point(), (g_string_new)(s))
#define g_string_sized_new(n) (pdt_alloc_point(), (g_string_sized_new)(n))
#define g_string_append_printf(...) (pdt_alloc_point(), (g_string_append_printf)(__VA_ARGS__))
#define g_string_append_len(s, v, n) (pdt_alloc_point(), (g_string_append_len)((s), (v), (n)))
#ifndef g_string_append
#define g_string_append(s, v) (pdt_alloc_point(), (g_string_append)((s), (v)))
#endif
#ifdef g_string_append_c
#undef g_string_append_c
#define g_string_append_c(s, c) (pdt_alloc_point(), g_string_append_c_inline((s), (c)))
#else
#define g_string_append_c(s, c) (pdt_alloc_point(), (g_string_append_c)((s), (c)))
#endif

#endif
