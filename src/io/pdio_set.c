/* pdio_set.c - what makes an output set survive kill -9 (issue 27 point
 * 5): a journal per folder written before the first rename, the recovery
 * that the next run into the folder does first, a new folder built beside
 * its place and renamed in whole, and stale files removed with the set.
 * See README.md in this folder ("Surviving kill -9"). */
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
#include "../ir/util.h"
#include "pdio.h"
#include "pdio_batch.h"
#include "pdio_fs.h"

#define JOURNAL_PREFIX ".pdtrans-journal-"
/* The last record of a journal: without it, the run died while writing
 * the journal, before any rename. */
#define JOURNAL_END "end"

int pdio_write_stdout(const void *data, size_t len)
{
    /* Straight to the descriptor, after anything stdio holds, so that a
     * failure is reported here, with its reason, and not again at exit. */
    if (fflush(stdout) != 0 || !fs_write_all(STDOUT_FILENO, data, len)) {
        pdt_error("cannot write to standard output: %s", strerror(errno));
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

int pdio_write(const ir_program *p, const char *path, bool text, bool force)
{
    pdio_batch *b = pdio_batch_new(force);
    int rc = pdio_batch_add_program(b, path, p, text);
    /* A batch of one that nobody lists: its file's SHA-256 is never read. */
    if (rc == PDT_OK && b->n == 1) {
        b->files[0].no_sha256 = true;
        /* one program written once: the input pages behind the encoder
         * are not read again (pdio_write.c's sink) */
        b->files[0].drop_input = true;
    }
    if (rc == PDT_OK)
        rc = pdio_batch_commit(b);
    pdio_batch_free(b);
    return rc;
}

bool pdio_batch_file(const pdio_batch *b, size_t i, const char **path, const char **sha256,
                     bool *removed)
{
    if (i >= b->n)
        return false;
    const pending *f = &b->files[i];
    *path = f->path;
    *sha256 = f->sha256[0] ? f->sha256 : NULL;
    *removed = f->remove;
    return true;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static char *join(const char *dir, const char *name)
{
    char *p = xmalloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* The pid in a name of pdtrans's making, "...-PID-XXXXXX"; 0 if none. */
static long pid_in(const char *name)
{
    size_t n = strlen(name);
    if (n < 9 || name[n - 7] != '-')
        return 0;
    size_t end = n - 7, at = end;
    while (at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9')
        at--;
    if (at == end || at == 0 || name[at - 1] != '-' || end - at > 9)
        return 0;
    return strtol(name + at, NULL, 10);
}

static bool process_gone(long pid)
{
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* ---- a new folder, built beside ---- */

static char *folder_without_slash(const char *dir)
{
    char *d = xstrdup(dir);
    for (size_t n = strlen(d); n > 1 && d[n - 1] == '/';)
        d[--n] = '\0';
    return d;
}

/* Stages of runs that died before renaming them are removed (they hold
 * only regular files of pdtrans's own writing). */
static void remove_dead_stages(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.' || !strstr(e->d_name, ".pdtrans-dir-") ||
            !process_gone(pid_in(e->d_name)))
            continue;
        char *stage = join(parent, e->d_name);
        DIR *s = opendir(stage);
        struct dirent *f;
        while (s && (f = readdir(s)) != NULL) {
            char *p = join(stage, f->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
                unlink(p);
            free(p);
        }
        if (s)
            closedir(s);
        if (rmdir(stage) == 0)
            pdt_note("%s: removed a folder left by an interrupted run", stage);
        free(stage);
    }
    closedir(d);
}

int set_make_stage(pdio_batch *b)
{
    char *folder = folder_without_slash(b->folder);
    free(b->folder);
    b->folder = folder;
    char *parent = fs_folder_of(folder);
    remove_dead_stages(parent);
    free(parent);
    char *stage = fs_temp_template(folder, "dir");
    /* Recorded before it is made, and filled in without allocating after
     * (mkdtemp keeps the length): running out of memory must not leave it
     * behind unrecorded. */
    char *made = xstrdup(stage);
    g_ptr_array_add(b->made, made);
    if (!mkdtemp(stage)) {
        pdt_error("cannot create folder '%s': %s", folder, strerror(errno));
        g_ptr_array_remove_index(b->made, b->made->len - 1);
        free(stage);
        return PDT_EBADINPUT;
    }
    memcpy(made, stage, strlen(stage));
    b->stage = stage;
    return PDT_OK;
}

void set_redirect_to_stage(pdio_batch *b, pending *f)
{
    if (!b->stage || f->existed)
        return;
    char *dir = fs_folder_of(f->real);
    char *plain = folder_without_slash(dir);
    if (strcmp(plain, b->folder) == 0) {
        char *inside = join(b->stage, base_of(f->real));
        free(f->real);
        f->real = inside;
    }
    free(plain);
    free(dir);
}

/* ---- removals ---- */

bool set_put_removed(pending *f)
{
    if (fs_rename(f->real, f->bak) != 0) {
        pdt_error("%s: cannot remove: %s", f->path, strerror(errno));
        return false;
    }
    f->bak_moved = true;
    f->in_place = true;
    return true;
}

/* A removal's backup name is made (as an empty file) before the journal
 * names it; the rename then replaces it. */
static bool name_removal_backup(pending *f)
{
    f->bak = fs_temp_template(f->real, "bak");
    int fd = fs_create_temp(f->bak);
    if (fd < 0) {
        pdt_error("%s: cannot remove: %s", f->path, strerror(errno));
        free(f->bak);
        f->bak = NULL;
        return false;
    }
    close(fd);
    return true;
}

/* ---- the journal ---- */

static bool in_folder(const pending *f, const char *dir)
{
    char *own = fs_folder_of(f->real);
    bool same = strcmp(own, dir) == 0;
    free(own);
    return same;
}

/* "KIND/REAL/TMP/BAK" and a NUL (names hold no '/'): KIND n for a new
 * file, r for a replaced one, d for a removal. */
static void journal_record(GString *g, const pending *f)
{
    char kind = f->remove ? 'd' : f->existed ? 'r' : 'n';
    g_string_append_printf(g, "%c/%s/%s/%s", kind, base_of(f->real),
                           f->tmp ? base_of(f->tmp) : "", f->bak ? base_of(f->bak) : "");
    g_string_append_c(g, '\0');
}

static bool write_journal(pdio_batch *b, const char *dir, GString *g)
{
    char *path = g_strdup_printf("%s/" JOURNAL_PREFIX "%ld-XXXXXX", dir, (long)getpid());
    int fd = fs_create_temp(path);
    bool ok = fd >= 0;
    if (ok) {
        g_ptr_array_add(b->journals, xstrdup(path));
        ok = fs_write_all(fd, (const uint8_t *)g->str, g->len) && fs_fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        ok = ok && fs_fsync_folder(dir, true) == 0;
    }
    g_free(path);
    if (!ok)
        pdt_error("cannot write the journal of the set in '%s': %s", dir, strerror(errno));
    return ok;
}

bool set_journal_write(pdio_batch *b)
{
    for (size_t k = 0; k < b->dirs->len; k++) {
        const char *dir = g_ptr_array_index(b->dirs, k);
        if (b->stage && strcmp(dir, b->stage) == 0)
            continue;   /* invisible until its one rename */
        size_t count = 0;
        for (size_t i = 0; i < b->n; i++)
            count += b->files[i].kind == TO_FILE && in_folder(&b->files[i], dir);
        if (count < 2)
            continue;   /* one rename is atomic by itself */
        GString *g = g_string_new(NULL);
        bool ok = true;
        for (size_t i = 0; i < b->n && ok; i++) {
            pending *f = &b->files[i];
            if (f->kind != TO_FILE || !in_folder(f, dir))
                continue;
            if (f->remove)
                ok = name_removal_backup(f);
            else if (f->existed)
                f->bak = fs_backup_name(f->tmp);
            if (ok)
                journal_record(g, f);
        }
        g_string_append(g, JOURNAL_END);
        g_string_append_c(g, '\0');
        ok = ok && write_journal(b, dir, g);
        g_string_free(g, TRUE);
        if (!ok)
            return false;
    }
    return true;
}

void set_journal_drop(pdio_batch *b)
{
    /* Allocates nothing (it runs inside the out-of-memory hook, and
     * after the set is in): the names stay until the batch is freed, and
     * unlinking one twice is harmless (it holds this process's pid). */
    for (size_t k = 0; k < b->journals->len; k++)
        fs_unlink(g_ptr_array_index(b->journals, k));
}

/* ---- recovery ---- */

typedef struct {
    char kind;
    char *real, *tmp, *bak;     /* full paths; tmp, bak NULL when none */
} jrecord;

static bool exists(const char *path)
{
    struct stat st;
    return path && lstat(path, &st) == 0;
}

/* Parses a journal's records; false when it is incomplete (the run died
 * while writing it, before any rename). */
static bool read_journal(const char *dir, const char *path, GArray *recs)
{
    gchar *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL))
        return false;
    bool complete = false;
    for (gsize at = 0; at < len;) {
        const char *rec = text + at;
        size_t n = strnlen(rec, len - at);
        if (n == len - at)
            break;  /* no NUL: cut short */
        at += n + 1;
        if (strcmp(rec, JOURNAL_END) == 0) {
            complete = true;
            break;
        }
        gchar **f = g_strsplit(rec, "/", 4);
        if (g_strv_length(f) == 4 && f[0][0] && f[1][0]) {
            jrecord r = {f[0][0], join(dir, f[1]), f[2][0] ? join(dir, f[2]) : NULL,
                         f[3][0] ? join(dir, f[3]) : NULL};
            g_array_append_val(recs, r);
        }
        g_strfreev(f);
    }
    g_free(text);
    return complete;
}

/* Whether every rename of the set was done: then the new set is whole. */
static bool all_landed(const GArray *recs)
{
    for (guint i = 0; i < recs->len; i++) {
        const jrecord *r = &g_array_index(recs, jrecord, i);
        if (r->kind == 'd' ? exists(r->real) : exists(r->tmp))
            return false;
    }
    return true;
}

/* Puts the folder back as it was before the interrupted set, newest
 * first: replaced and removed files from their backups, new ones gone. */
static void roll_back(const GArray *recs)
{
    for (guint i = recs->len; i-- > 0;) {
        const jrecord *r = &g_array_index(recs, jrecord, i);
        bool landed = r->kind == 'd' ? !exists(r->real) : !exists(r->tmp);
        if (r->kind == 'n' && landed)
            unlink(r->real);
        else if (r->kind != 'n' && exists(r->bak) && (landed || !exists(r->real)))
            rename(r->bak, r->real);
        if (r->tmp)
            unlink(r->tmp);
        if (r->bak)
            unlink(r->bak);
    }
}

static void recover_one(const char *dir, const char *journal)
{
    GArray *recs = g_array_new(FALSE, FALSE, sizeof(jrecord));
    if (read_journal(dir, journal, recs)) {
        if (all_landed(recs)) {
            for (guint i = 0; i < recs->len; i++)
                if (g_array_index(recs, jrecord, i).bak)
                    unlink(g_array_index(recs, jrecord, i).bak);
        } else {
            roll_back(recs);
            pdt_warning("%s: a run was killed while its files were put in place; the files "
                        "it had replaced are back", dir);
        }
        fs_fsync_folder(dir, false);
    }
    unlink(journal);
    fs_fsync_folder(dir, false);
    for (guint i = 0; i < recs->len; i++) {
        jrecord *r = &g_array_index(recs, jrecord, i);
        free(r->real);
        free(r->tmp);
        free(r->bak);
    }
    g_array_free(recs, TRUE);
}

void pdio_recover_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    GPtrArray *found = g_ptr_array_new_with_free_func(free);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) == 0 &&
            process_gone(pid_in(e->d_name)))
            g_ptr_array_add(found, join(dir, e->d_name));
    closedir(d);
    for (guint i = 0; i < found->len; i++)
        recover_one(dir, g_ptr_array_index(found, i));
    g_ptr_array_free(found, TRUE);
    /* then the temporaries and backups no journal named */
    fs_remove_stale(dir);
}

bool pdio_folder_interrupted(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool any = false;
    struct dirent *e;
    while (!any && (e = readdir(d)) != NULL)
        any = strncmp(e->d_name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) == 0 &&
              process_gone(pid_in(e->d_name));
    closedir(d);
    return any;
}
