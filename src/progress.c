/* progress.c - --time-passes and the terminal progress line (progress.h).
 * The progress line is drawn by a thread that wakes five times a second,
 * so that a single long pass (or a slow read) still shows the time going
 * by; the main thread only publishes the phase it is in. */
#include "progress.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "ir/env.h"

enum { MAX_TIMES = 96, PROGRESS_AFTER_US = 2 * G_USEC_PER_SEC, TICK_US = G_USEC_PER_SEC / 5 };

typedef struct {
    pdt_phase phase;
    gint64 us;
} phase_time;

typedef struct {           /* the env's part PDT_ENV_PROGRESS (src/ir/env.h) */
    bool begun;
    gint64 start, since;        /* the run's start; the current phase's */
    pdt_phase current;
    phase_time times[MAX_TIMES];
    size_t n_times;
    /* The progress thread: `mutex` guards `shown`, `stop` and the phase
     * it reads, and serialises its writes to stderr with diag.c's. */
    GThread *thread;
    GMutex mutex;
    GCond wake;
    bool stop, shown;
} progress;

/* The progress state, made on first use. */
static progress *progress_now(void)
{
    return pdt_env_part(PDT_ENV_PROGRESS, sizeof(progress), NULL);
}
#define P (*progress_now())

static const char *kind_label(pdt_phase_kind k)
{
    static const char *const labels[] = {"", "reading the inputs", "checking the input",
                                         "running pass", "checking after", "writing the outputs",
                                         "verifying:"};
    return labels[k];
}

static void draw(gint64 now)
{
    double s = (double)(now - P.start) / G_USEC_PER_SEC;
    if (P.current.name && P.current.kind == PDT_PHASE_RUN)
        fprintf(stderr, "\rpdtrans: %.1f s: %s %s\033[K", s, kind_label(P.current.kind),
                P.current.name);
    else if (P.current.name)
        fprintf(stderr, "\rpdtrans: %.1f s: %s '%s'\033[K", s, kind_label(P.current.kind),
                P.current.name);
    else
        fprintf(stderr, "\rpdtrans: %.1f s: %s\033[K", s, kind_label(P.current.kind));
    fflush(stderr);
    P.shown = true;
}

static gpointer progress_thread(gpointer arg)
{
    (void)arg;
    g_mutex_lock(&P.mutex);
    while (!P.stop) {
        gint64 now = g_get_monotonic_time();
        if (now - P.start >= PROGRESS_AFTER_US && P.current.kind != PDT_PHASE_NONE)
            draw(now);
        g_cond_wait_until(&P.wake, &P.mutex, now + TICK_US);
    }
    g_mutex_unlock(&P.mutex);
    return NULL;
}

void pdt_progress_begin(void)
{
    if (P.begun)
        return;
    if (pdt_quiet_warnings)
        pdt_time_passes = false;
    P.begun = true;
    P.start = P.since = g_get_monotonic_time();
    P.current = (pdt_phase){PDT_PHASE_READ, NULL};
    if (!pdt_quiet_warnings && !pdt_quiet && isatty(STDERR_FILENO)) {
        g_mutex_init(&P.mutex);
        g_cond_init(&P.wake);
        P.thread = g_thread_new("progress", progress_thread, NULL);
    }
}

/* Adds the time since the phase began to its entry. */
static void account(gint64 now)
{
    if (P.current.kind == PDT_PHASE_NONE)
        return;
    size_t i = 0;
    while (i < P.n_times && !(P.times[i].phase.kind == P.current.kind &&
                              P.times[i].phase.name == P.current.name))
        i++;
    if (i == P.n_times) {
        if (P.n_times == MAX_TIMES)
            return;
        P.times[P.n_times++] = (phase_time){P.current, 0};
    }
    P.times[i].us += now - P.since;
}

pdt_phase pdt_progress_enter(pdt_phase_kind kind, const char *name)
{
    if (!P.begun)
        return (pdt_phase){PDT_PHASE_NONE, NULL};
    gint64 now = g_get_monotonic_time();
    if (P.thread)
        g_mutex_lock(&P.mutex);
    pdt_phase left = P.current;
    account(now);
    P.current = (pdt_phase){kind, name};
    P.since = now;
    if (P.thread)
        g_mutex_unlock(&P.mutex);
    return left;
}

/* Called by every message, even when the run ends for want of memory:
 * makes nothing. */
void pdt_progress_clear_line(void)
{
    progress *p = pdt_env_part_if_made(PDT_ENV_PROGRESS);
    if (!p || !p->thread)
        return;
    g_mutex_lock(&p->mutex);
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = false;
    g_mutex_unlock(&p->mutex);
}

static void print_times(gint64 now)
{
    for (size_t i = 0; i < P.n_times; i++) {
        const phase_time *t = &P.times[i];
        char label[96];
        if (t->phase.kind == PDT_PHASE_PASS)
            snprintf(label, sizeof label, "pass '%s'", t->phase.name);
        else
            snprintf(label, sizeof label, "%s", t->phase.kind == PDT_PHASE_READ ? "read"
                                              : t->phase.kind == PDT_PHASE_CHECK ? "check"
                                              : t->phase.kind == PDT_PHASE_VERIFY ? "verify"
                                              : t->phase.kind == PDT_PHASE_RUN ? "run"
                                                                                   : "write");
        fprintf(stderr, "pdtrans: time: %-34s %9.3f s\n", label,
                (double)t->us / G_USEC_PER_SEC);
    }
    fprintf(stderr, "pdtrans: time: %-34s %9.3f s\n", "total",
            (double)(now - P.start) / G_USEC_PER_SEC);
}

void pdt_progress_stop_line(void)
{
    if (P.thread) {
        g_mutex_lock(&P.mutex);
        P.stop = true;
        g_cond_signal(&P.wake);
        g_mutex_unlock(&P.mutex);
        g_thread_join(P.thread);
        P.thread = NULL;
        if (P.shown)
            fputs("\r\033[K", stderr);
        g_mutex_clear(&P.mutex);
        g_cond_clear(&P.wake);
    }
}

void pdt_progress_end(void)
{
    if (!P.begun)
        return;
    pdt_progress_enter(PDT_PHASE_NONE, NULL);
    pdt_progress_stop_line();
    if (pdt_time_passes)
        print_times(g_get_monotonic_time());
    P.begun = false;
}
