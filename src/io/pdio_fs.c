/* pdio_fs.c - system calls of the output writer, with failure injection for
 * tests, and pdtrans's temporary naming (see README.md in this folder). */
#include "pdio_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../diag.h"
#include "../ir/env.h"
#include "../ir/util.h"

enum { F_CREATE, F_WRITE, F_FSYNC, F_LINK, F_RENAME, F_UNLINK, F_KINDS };
static const char *const FAULT_NAMES[F_KINDS] = {"create", "write", "fsync", "link", "rename",
                                                 "unlink"};

/* The env's part PDT_ENV_IO_FAULT (src/ir/env.h). */
typedef struct {
    bool read;
    int kind;           /* -1: no injection */
    unsigned long at;   /* fail the at-th call of kind */
    int kill_kind;      /* PDTRANS_KILL_AT: -1, or the kind whose call is not made */
    unsigned long kill_at;
    unsigned long calls[F_KINDS];
} fault_state;

static void fault_init(void *p)
{
    fault_state *f = p;
    f->kind = -1;
    f->kill_kind = -1;
}

static fault_state *fault_now(void)
{
    return pdt_env_part(PDT_ENV_IO_FAULT, sizeof(fault_state), fault_init);
}
#define fault (*fault_now())

/* "KIND:N" with KIND among the first n_kinds names and N >= 1. */
static bool parse_point(const char *v, int n_kinds, int *kind, unsigned long *at)
{
    const char *colon = strchr(v, ':');
    for (int k = 0; colon && k < n_kinds; k++) {
        size_t n = strlen(FAULT_NAMES[k]);
        if ((size_t)(colon - v) != n || strncmp(v, FAULT_NAMES[k], n) != 0)
            continue;
        char *end = NULL;
        errno = 0;
        unsigned long value = strtoul(colon + 1, &end, 10);
        if (colon[1] >= '0' && colon[1] <= '9' && !*end && !errno && value > 0) {
            *kind = k;
            *at = value;
            return true;
        }
    }
    return false;
}

/* PDTRANS_KILL_AT=KIND:N (tests/kill_sweep.sh): the process kills itself
 * with SIGKILL just before the N-th call of KIND, as kill -9 would. */
static bool kill_init(void)
{
    const char *v = getenv("PDTRANS_KILL_AT");
    if (!v || !*v || parse_point(v, F_KINDS, &fault.kill_kind, &fault.kill_at))
        return true;
    pdt_error("PDTRANS_KILL_AT: expected KIND:N with KIND one of create, write, fsync, "
              "link, rename, unlink and N >= 1, not '%s'", v);
    return false;
}

bool fs_fault_init(void)
{
    if (fault.read)
        return true;
    fault.read = true;
    if (!kill_init())
        return false;
    const char *v = getenv("PDTRANS_FAIL_AT");
    if (!v || !*v || parse_point(v, F_UNLINK, &fault.kind, &fault.at))
        return true;
    pdt_error("PDTRANS_FAIL_AT: expected KIND:N with KIND one of create, write, fsync, "
              "link, rename and N >= 1, not '%s'", v);
    return false;
}

/* Counts a call of KIND; true when this one is to fail. */
static bool injected(int kind)
{
    fault.calls[kind]++;
    if (fault.kill_kind == kind && fault.calls[kind] == fault.kill_at)
        raise(SIGKILL);
    if (fault.kind == kind && fault.calls[kind] == fault.at) {
        errno = EIO;
        return true;
    }
    return false;
}

int fs_create_temp(char *templ)
{
    if (injected(F_CREATE))
        return -1;
    return mkstemp(templ);
}

int fs_open_stream(const char *path)
{
    if (injected(F_CREATE))
        return -1;
    return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

bool fs_write_all(int fd, const uint8_t *data, size_t len)
{
    while (len) {
        if (injected(F_WRITE))
            return false;
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += w;
        len -= (size_t)w;
    }
    return true;
}

int fs_fsync(int fd)
{
    if (injected(F_FSYNC))
        return -1;
    return fsync(fd);
}

int fs_link(const char *from, const char *to)
{
    if (injected(F_LINK))
        return -1;
    return link(from, to);
}

int fs_rename(const char *from, const char *to)
{
    if (injected(F_RENAME))
        return -1;
    return rename(from, to);
}

int fs_unlink(const char *path)
{
    if (injected(F_UNLINK))
        return -1;
    return unlink(path);
}

int fs_fsync_folder(const char *dir, bool counted)
{
    if (counted && injected(F_FSYNC))
        return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    if (rc != 0 && saved == EINVAL)
        rc = 0;
    errno = saved;
    return rc;
}

char *fs_folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    size_t n = (size_t)(slash - path);
    char *dir = xmalloc(n + 1);
    memcpy(dir, path, n);
    dir[n] = '\0';
    return dir;
}

char *fs_follow_links(const char *path)
{
    char *cur = xstrdup(path);
    for (int hop = 0; hop <= 40; hop++) {
        struct stat st;
        if (lstat(cur, &st) != 0)
            break;
        if (!S_ISLNK(st.st_mode))
            return cur;
        size_t cap = (size_t)st.st_size + 2;
        char *target = xmalloc(cap);
        ssize_t n = readlink(cur, target, cap);
        if (n < 0 || (size_t)n >= cap - 1) {
            free(target);
            if (n >= 0)
                errno = ENAMETOOLONG;   /* the link changed under us */
            break;
        }
        target[n] = '\0';
        char *next = target;
        if (target[0] != '/') {
            char *dir = fs_folder_of(cur);
            next = xmalloc(strlen(dir) + (size_t)n + 2);
            sprintf(next, "%s/%s", dir, target);
            free(dir);
            free(target);
        }
        free(cur);
        cur = next;
        if (hop == 40)
            errno = ELOOP;
    }
    int saved = errno;
    free(cur);
    errno = saved;
    return NULL;
}

/* The target's own name is kept in the temporary's name only to help a
 * reader of `ls -a`; it is cut short so that the name stays within
 * NAME_MAX (255). */
#define BASE_KEPT 200

char *fs_temp_template(const char *path, const char *kind)
{
    char *dir = fs_folder_of(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int kept = (int)(strlen(base) < BASE_KEPT ? strlen(base) : BASE_KEPT);
    size_t cap = strlen(dir) + (size_t)kept + 64;
    char *t = xmalloc(cap);
    snprintf(t, cap, "%s/.%.*s.pdtrans-%s-%ld-XXXXXX", dir, kept, base, kind, (long)getpid());
    free(dir);
    return t;
}

char *fs_backup_name(const char *tmp)
{
    char *bak = xstrdup(tmp);
    char *marker = NULL;
    for (char *m = strstr(bak, ".pdtrans-tmp-"); m; m = strstr(m + 1, ".pdtrans-tmp-"))
        marker = m;
    memcpy(marker + 9, "bak", 3);
    return bak;
}

static bool is_suffix_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool fs_is_own_temp(const char *name, long *pid)
{
    /* Read from the end: "-XXXXXX", then "-PID", then the marker. */
    size_t n = strlen(name);
    if (name[0] != '.' || n < 1 + 13 + 1 + 7)
        return false;
    const char *suffix = name + n - 6;
    for (int i = 0; i < 6; i++)
        if (!is_suffix_char(suffix[i]))
            return false;
    if (suffix[-1] != '-')
        return false;
    const char *p = suffix - 1;
    long v = 0;
    int digits = 0;
    while (p > name && p[-1] >= '0' && p[-1] <= '9' && digits < 10) {
        p--;
        digits++;
    }
    if (digits == 0 || p - name < 14)
        return false;
    for (const char *d = p; d < suffix - 1; d++)
        v = v * 10 + (*d - '0');
    if (strncmp(p - 13, ".pdtrans-tmp-", 13) != 0 && strncmp(p - 13, ".pdtrans-bak-", 13) != 0)
        return false;
    *pid = v;
    return true;
}

/* A temporary is stale when the process named in it is gone.  A pid is
 * only meaningful on this machine; a live process of another name that
 * reuses it only delays the clean-up to a later run. */
static bool process_gone(long pid)
{
    if (pid <= 0)
        return false;
    if (pid == (long)getpid())
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void fs_remove_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = 0;
        if (!fs_is_own_temp(e->d_name, &pid) || !process_gone(pid))
            continue;
        char *path = xmalloc(strlen(dir) + strlen(e->d_name) + 2);
        sprintf(path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) == 0)
            pdt_note("%s: removed a temporary left by an interrupted run", path);
        free(path);
    }
    closedir(d);
}
