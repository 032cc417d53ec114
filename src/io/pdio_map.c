/* pdio_map.c - input files mapped instead of read (README.md in this
 * folder, "Reading input").
 *
 * A regular file is mapped read-only (MAP_PRIVATE): its pages are the page
 * cache's, so a 300 MB input costs no copy and no fresh memory, which on
 * a VM whose host takes free memory back was a second of system time at
 * 1M ops (issue 14).  A mapping has two hazards that a copy has not, and
 * this file answers both:
 *
 * - Another process truncates the file: touching a page past the new end
 *   raises SIGBUS.  The handler below ends the run the way running out of
 *   memory does (alloc.h: one message naming the file, the outputs'
 *   temporaries removed, exit 1) when the address lies in an input's
 *   mapping, and leaves any other SIGBUS to the default action.
 * - Another process rewrites the file in place: the mapping shows the new
 *   bytes, and the ops kept as bytes would carry them into the outputs.
 *   pdio_inputs_changed, asked before any output lands, compares each
 *   input's size and modification time with those it had when mapped
 *   (also when the mapping went earlier).  An input replaced by rename is
 *   another file: the mapping keeps the old one, which is fine. */
#include "pdio_map.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../ir/alloc.h"
#include "../ir/env.h"
#include "../ir/util.h"

/* Inputs of one run: a command reads a handful. */
enum { MAX_MAPPED = 16 };

typedef struct {
    uint8_t *addr;
    size_t len;
    int fd;             /* kept open to ask fstat at the end */
    char *name;         /* for messages */
    off_t size;
    struct timespec mtime;
} mapped;

/* The env's part PDT_ENV_IO_MAPS (src/ir/env.h).  The SIGBUS handler
 * reads it too: that is safe because the fault is synchronous (it comes
 * from code reading an input's bytes, never from inside the functions
 * below that edit the list), and the handler only reads. */
typedef struct {
    mapped maps[MAX_MAPPED];
    size_t n_maps;
    char *changed;      /* the first input found changed when unmapped */
    bool handler_set;   /* on_sigbus is SIGBUS's handler */
} map_list;

static map_list *maps_now(void)
{
    return pdt_env_part(PDT_ENV_IO_MAPS, sizeof(map_list), NULL);
}

static bool still_same(const mapped *m)
{
    struct stat st;
    return fstat(m->fd, &st) == 0 && st.st_size == m->size &&
           st.st_mtim.tv_sec == m->mtime.tv_sec && st.st_mtim.tv_nsec == m->mtime.tv_nsec;
}

/* Only stack memory and write(2) here, except pdt_fail_now's cleanups (the
 * fault is synchronous: it comes from code reading an input's bytes). */
static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
    (void)sig;
    (void)uctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    /* makes nothing: a signal handler must not allocate */
    const map_list *l = pdt_env_part_if_made(PDT_ENV_IO_MAPS);
    const mapped *maps = l ? l->maps : NULL;
    for (size_t i = 0; l && i < l->n_maps; i++) {
        if (a - (uintptr_t)maps[i].addr >= maps[i].len)
            continue;
        char msg[1200];
        static const char head[] = "pdtrans: error: ";
        static const char tail[] = ": cannot read: the file shrank while pdtrans was using it "
                                   "(or the device failed); no output written\n";
        size_t n = strlen(maps[i].name);
        if (n > sizeof msg - sizeof head - sizeof tail)
            n = sizeof msg - sizeof head - sizeof tail;
        char *p = msg;
        memcpy(p, head, sizeof head - 1);
        p += sizeof head - 1;
        memcpy(p, maps[i].name, n);
        p += n;
        memcpy(p, tail, sizeof tail);
        pdt_fail_now(msg);
    }
    /* Not an input's page (or sent by kill): the default action. */
    signal(SIGBUS, SIG_DFL);
    raise(SIGBUS);
}

static void set_handler(map_list *l)
{
    if (l->handler_set)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    l->handler_set = sigaction(SIGBUS, &sa, NULL) == 0;
}

uint8_t *pdio_map_input(int fd, const struct stat *st, const char *name)
{
    map_list *l = maps_now();
    if (!S_ISREG(st->st_mode) || st->st_size <= 0 || (uint64_t)st->st_size > SIZE_MAX ||
        l->n_maps == MAX_MAPPED)
        return NULL;
    set_handler(l);
    if (!l->handler_set)
        return NULL;
    int keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (keep < 0)
        return NULL;
    size_t len = (size_t)st->st_size;
    void *addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE, keep, 0);
    if (addr == MAP_FAILED) {
        close(keep);
        return NULL;
    }
    mapped *m = &l->maps[l->n_maps];
    *m = (mapped){addr, len, keep, xstrdup(name), st->st_size, st->st_mtim};
    l->n_maps++;
    return addr;
}

bool pdio_is_mapped(const void *bytes)
{
    const map_list *l = maps_now();
    for (size_t i = 0; i < l->n_maps; i++)
        if (l->maps[i].addr == bytes)
            return true;
    return false;
}

size_t pdio_mapped_len(const void *bytes)
{
    const map_list *l = maps_now();
    for (size_t i = 0; i < l->n_maps; i++)
        if (l->maps[i].addr == bytes)
            return l->maps[i].len;
    return 0;
}

void pdio_unmap_input(void *bytes)
{
    map_list *l = maps_now();
    for (size_t i = 0; i < l->n_maps; i++) {
        if (l->maps[i].addr != bytes)
            continue;
        mapped m = l->maps[i];
        /* Out of the table before the pages go: a fault now is not ours. */
        l->maps[i] = l->maps[--l->n_maps];
        if (!l->changed && !still_same(&m))
            l->changed = xstrdup(m.name);
        munmap(m.addr, m.len);
        close(m.fd);
        free(m.name);
        return;
    }
}

const char *pdio_inputs_changed(void)
{
    const map_list *l = maps_now();
    if (l->changed)
        return l->changed;
    for (size_t i = 0; i < l->n_maps; i++)
        if (!still_same(&l->maps[i]))
            return l->maps[i].name;
    return NULL;
}
