/* pdio_write.c - a set of output files that lands together or not at all.
 *
 * Regular files are replaced by rename, so a reader never sees half a file
 * and a failure part-way through can be undone; character devices, FIFOs
 * and stdout are written straight through, last, because a write there
 * cannot be taken back.  The steps and their failure handling are
 * described in README.md in this folder. */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nettle/sha2.h>

#include "../diag.h"
#include "../ir/alloc.h"
#include "../ir/util.h"
#include "pbconv.h"
#include "pdio.h"
#include "pdio_map.h"
#include "pdio_fs.h"
#include "pdio_batch.h"

static int stream_last(pdio_batch *b);
static void fail(pdio_batch *b);

pdio_batch *pdio_batch_new(bool force)
{
    pdio_batch *b = xcalloc(1, sizeof *b);
    b->force = force;
    b->made = g_ptr_array_new_with_free_func(free);
    b->dirs = g_ptr_array_new_with_free_func(free);
    b->journals = g_ptr_array_new_with_free_func(free);
    b->seen = g_hash_table_new(g_str_hash, g_str_equal);
    return b;
}

void pdio_batch_stream(pdio_batch *b)
{
    b->stream = true;
}

void pdio_batch_create_folder(pdio_batch *b, const char *dir)
{
    free(b->folder);
    b->folder = xstrdup(dir);
}

static void add(pdio_batch *b, const char *path, const ir_program *program, uint8_t *data,
                size_t len, bool binary)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 8;
        b->files = xrealloc(b->files, b->cap * sizeof *b->files);
    }
    pending *f = &b->files[b->n++];
    memset(f, 0, sizeof *f);
    f->path = xstrdup(path);
    f->program = program;
    f->data = data;
    f->len = len;
    f->binary = binary;
}

/* The program is encoded when its file is written: at the commit, or at
 * once in a streaming batch. */
int pdio_batch_add_program(pdio_batch *b, const char *path, const ir_program *p, bool text)
{
    add(b, path, p, NULL, 0, !text);
    b->files[b->n - 1].drop_input = b->stream; /* written once, at once */
    return b->stream ? stream_last(b) : PDT_OK;
}

void pdio_batch_add_bytes(pdio_batch *b, const char *path, const void *data, size_t len,
                          bool binary)
{
    uint8_t *copy = xmalloc(len + 1);
    if (len)
        memcpy(copy, data, len);
    add(b, path, NULL, copy, len, binary);
    if (b->stream)
        stream_last(b);
}

void pdio_batch_remove(pdio_batch *b, const char *path)
{
    add(b, path, NULL, NULL, 0, false);
    b->files[b->n - 1].remove = true;
    if (b->stream)
        stream_last(b);
}

/* mkdir -p, remembering what it made so that a failed batch leaves no
 * empty folder behind. */
static int make_folders(pdio_batch *b)
{
    const char *dir = b->folder;
    if (!*dir) {
        pdt_error("the output folder name is empty");
        return PDT_EBADINPUT;
    }
    size_t n = strlen(dir);
    char *prefix = xmalloc(n + 1);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    for (size_t i = 1; i < n; i++) {
        if (dir[i] != '/')
            continue;
        memcpy(prefix, dir, i);
        prefix[i] = '\0';
        /* Recorded before it is made: running out of memory after the
         * mkdir must not leave it behind unrecorded. */
        g_ptr_array_add(b->made, xstrdup(prefix));
        if (mkdir(prefix, 0777) == 0)
            continue;
        int e = errno;
        g_ptr_array_remove_index(b->made, b->made->len - 1);
        if (e != EEXIST) {
            pdt_error("cannot create folder '%s': %s", prefix, strerror(e));
            free(prefix);
            return PDT_EBADINPUT;
        }
    }
    free(prefix);
    struct stat st;
    if (lstat(dir, &st) != 0 && errno == ENOENT)
        return set_make_stage(b);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        /* the same words as for an output file behind a dangling link */
        if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
            pdt_error("%s: cannot follow the symbolic link: %s", dir, strerror(ENOENT));
        else
            pdt_error("'%s' is not a folder", dir);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

/* Decides how F is written: only a regular file (or nothing) is replaced
 * by rename; a device or FIFO is written through; anything else is refused
 * before any file is touched. */
static int classify(pending *f)
{
    if (strcmp(f->path, "-") == 0) {
        f->kind = TO_STDOUT;
        return PDT_OK;
    }
    f->kind = TO_FILE;
    f->real = xstrdup(f->path);
    struct stat st;
    if (f->remove) {
        /* A stale output: the name itself goes (a link, not what it names). */
        if (lstat(f->path, &st) == 0 && !S_ISDIR(st.st_mode))
            return PDT_OK;
        pdt_error("%s: cannot remove: %s", f->path, errno ? strerror(errno) : "is a folder");
        return PDT_EBADINPUT;
    }
    if (lstat(f->path, &st) != 0) {
        if (errno == ENOENT)
            return PDT_OK;
        pdt_error("%s: cannot write: %s", f->path, strerror(errno));
        return PDT_EBADINPUT;
    }
    if (S_ISLNK(st.st_mode)) {
        char *resolved = fs_follow_links(f->path);
        if (!resolved || stat(resolved, &st) != 0) {
            pdt_error("%s: cannot follow the symbolic link: %s", f->path, strerror(errno));
            free(resolved);
            return PDT_EBADINPUT;
        }
        free(f->real);
        f->real = resolved;
    }
    if (S_ISREG(st.st_mode)) {
        f->existed = true;
        f->mode = st.st_mode & 07777;
    } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        f->kind = TO_STREAM;
    } else if (S_ISDIR(st.st_mode)) {
        pdt_error("%s: is a folder, not a file; refusing to replace it", f->path);
        return PDT_EBADINPUT;
    } else {
        pdt_error("%s: is not a regular file, character device or FIFO; refusing to "
                  "write to it", f->path);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

static int check_target(pdio_batch *b, pending *f)
{
    f->checked = true;
    int rc = classify(f);
    if (rc == PDT_OK && f->kind == TO_STDOUT && f->binary && !b->force &&
        isatty(STDOUT_FILENO)) {
        pdt_error("refusing to write binary output to a terminal (use -f to force, "
                  "or --text)");
        rc = PDT_EUSAGE;
    }
    if (rc != PDT_OK || f->kind != TO_FILE)
        return rc;
    set_redirect_to_stage(b, f);
    if (!g_hash_table_add(b->seen, f->real)) {
        pdt_error("%s: the same file is written twice", f->path);
        rc = PDT_EBADINPUT;
    }
    char *dir = fs_folder_of(f->real);
    bool known = false;
    for (size_t k = 0; k < b->dirs->len && !known; k++)
        known = strcmp(g_ptr_array_index(b->dirs, k), dir) == 0;
    if (known)
        free(dir);
    else
        g_ptr_array_add(b->dirs, dir);
    return rc;
}

static int check_targets(pdio_batch *b)
{
    int rc = PDT_OK;
    for (size_t i = 0; i < b->n && rc == PDT_OK; i++)
        if (!b->files[i].checked)
            rc = check_target(b, &b->files[i]);
    return rc;
}

/* Stale temporaries go from each folder before its first file is written. */
static void remove_stale(pdio_batch *b)
{
    for (; b->n_clean < b->dirs->len; b->n_clean++)
        pdio_recover_folder(g_ptr_array_index(b->dirs, b->n_clean));
}

typedef struct {
    int fd;
    int err;
    struct sha256_ctx sha;  /* of every byte written (the manifest's sha256) */
    bool hash;              /* sha is wanted (pending's no_sha256) */
    const ir_program *drop; size_t since_drop;  /* pending's drop_input */
} fd_sink;

static bool sink_to_fd(void *arg, const uint8_t *data, size_t len)
{
    fd_sink *s = arg;
    if (s->hash)
        sha256_update(&s->sha, len, data);
    pdio_drop_input_behind(s->drop, &s->since_drop, len);
    if (fs_write_all(s->fd, data, len))
        return true;
    s->err = errno;
    return false;
}

/* Writes F's content to FD: a binary program encoded through a fixed chunk,
 * so its bytes are never whole in memory; a text program printed whole
 * (protobuf-c's printer) and freed; or F's bytes.  NULL, or why it failed. */
static const char *write_content(int fd, pending *f)
{
    fd_sink sink = {.fd = fd, .hash = !f->no_sha256, .drop = f->drop_input ? f->program : NULL};
    sha256_init(&sink.sha);
    const char *why = NULL;
    if (f->program && f->binary) {
        /* else ops a pass removed keep their input pages (pdio_release.c) */
        pdio_release_unread(f->program);
        int rc = pbconv_encode_sweep(f->program, PBCONV_CHUNK, sink_to_fd, &sink, sink.drop);
        why = rc == PBCONV_TOO_LARGE ? "a block, var or op would be 4 GiB or more"
              : rc                   ? strerror(sink.err)
                                     : NULL;
    } else if (f->program) {
        size_t len = 0;
        uint8_t *text = pdio_serialize(f->program, true, &len);
        if (!text)
            return "cannot print the text form";
        if (!sink_to_fd(&sink, text, len))
            why = strerror(sink.err);
        free(text);
    } else if (!sink_to_fd(&sink, f->data, f->len)) {
        why = strerror(sink.err);
    }
    if (!sink.hash)
        return why;
    uint8_t md[SHA256_DIGEST_SIZE];
    sha256_digest(&sink.sha, sizeof md, md);
    for (size_t i = 0; i < sizeof md; i++)
        snprintf(f->sha256 + 2 * i, 3, "%02x", md[i]);
    return why;
}

static bool write_temporary(pending *f)
{
    pdt_alloc_doing("writing '%s'", f->path);
    f->tmp = fs_temp_template(f->real, "tmp");
    int fd = fs_create_temp(f->tmp);
    if (fd < 0) {
        pdt_error("%s: cannot create: %s", f->path, strerror(errno));
        free(f->tmp);
        f->tmp = NULL;
        return false;
    }
    /* mkstemp makes 0600 files; a replacement keeps the old file's
     * permissions, a new file gets the usual 0666 & ~umask. */
    mode_t mode = f->mode;
    if (!f->existed) {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(fd, mode);
    const char *why = write_content(fd, f);
    const char *step = "write";
    if (!why && fs_fsync(fd) != 0) {
        why = strerror(errno);
        step = "sync";
    }
    if (close(fd) != 0 && !why)
        why = strerror(errno);
    if (why)
        pdt_error("%s: cannot %s: %s", f->path, step, why);
    /* On disk now: neither the bytes nor the program are needed again. */
    free(f->data);
    f->data = NULL;
    f->program = NULL;
    return !why;
}

/* Puts F's temporary in place, keeping the old file as a backup until the
 * whole set is in.  A hard link keeps the old file visible under its name
 * until the rename replaces it; where links are not supported the old
 * file is moved aside instead. */
static bool put_in_place(pending *f)
{
    if (f->remove)
        return set_put_removed(f);
    if (f->existed) {
        if (!f->bak)
            f->bak = fs_backup_name(f->tmp);
        if (fs_link(f->real, f->bak) != 0) {
            int e = errno;
            bool no_links = e == EPERM || e == EXDEV || e == ENOTSUP || e == EMLINK;
            if (!no_links || fs_rename(f->real, f->bak) != 0) {
                pdt_error("%s: cannot keep a backup of the old file: %s", f->path,
                          strerror(no_links ? errno : e));
                free(f->bak);
                f->bak = NULL;
                return false;
            }
            f->bak_moved = true;
        }
    }
    if (fs_rename(f->tmp, f->real) != 0) {
        pdt_error("%s: cannot rename into place: %s", f->path, strerror(errno));
        return false;
    }
    free(f->tmp);
    f->tmp = NULL;
    f->in_place = true;
    return true;
}

static bool write_stream(pdio_batch *b, pending *f)
{
    pdt_alloc_doing("writing '%s'", f->path);
    if (f->kind == TO_STDOUT) {
        const char *why = fflush(stdout) != 0 ? strerror(errno) : NULL;
        if (!why)
            why = write_content(STDOUT_FILENO, f);
        if (why)
            pdt_error("cannot write to standard output: %s", why);
        return !why;
    }
    int fd = fs_open_stream(f->real);
    if (fd < 0) {
        pdt_error("%s: cannot open: %s", f->path, strerror(errno));
        return false;
    }
    bool ok = true;
    if (f->binary && !b->force && isatty(fd)) {
        pdt_error("%s: refusing to write binary output to a terminal (use -f to force, "
                  "or --text)", f->path);
        ok = false;
    } else {
        const char *why = write_content(fd, f);
        if (why) {
            pdt_error("%s: cannot write: %s", f->path, why);
            ok = false;
        }
    }
    close(fd);
    return ok;
}

static void sync_folders(pdio_batch *b)
{
    for (size_t k = 0; k < b->dirs->len; k++)
        fs_fsync_folder(g_ptr_array_index(b->dirs, k), false);
}

/* Takes back every step of a failed commit: old files return under their
 * names, new ones and temporaries go, folders made for the set go. */
static void undo(pdio_batch *b)
{
    if (b->stage_landed && rename(b->folder, b->stage) == 0)
        b->stage_landed = false;
    for (size_t i = b->n; i-- > 0;) {
        pending *f = &b->files[i];
        if (f->bak && (f->in_place || f->bak_moved)) {
            if (rename(f->bak, f->real) != 0)
                pdt_error("%s: cannot put the old file back (%s); it is kept as '%s'",
                          f->path, strerror(errno), f->bak);
            free(f->bak);
            f->bak = NULL;
        } else if (f->in_place) {
            unlink(f->real);
        }
        f->in_place = false;
        if (f->bak)
            unlink(f->bak);
        if (f->tmp)
            unlink(f->tmp);
        free(f->bak);
        free(f->tmp);
        f->bak = f->tmp = NULL;
    }
    sync_folders(b);
    set_journal_drop(b);
    for (size_t k = b->made->len; k-- > 0;)
        rmdir(g_ptr_array_index(b->made, k));
}

static int land(pdio_batch *b)
{
    remove_stale(b);
    for (size_t i = 0; i < b->n; i++)
        if (b->files[i].kind == TO_FILE && !b->files[i].tmp && !b->files[i].remove &&
            !write_temporary(&b->files[i]))
            return PDT_EBADINPUT;
    /* Outputs carry inputs' bytes (pdio_map.c): from an input rewritten
     * while we ran they could mix two versions. */
    const char *changed = pdio_inputs_changed();
    if (changed) {
        pdt_error("%s: the file changed while pdtrans was using it; no output written", changed);
        return PDT_EBADINPUT;
    }
    if (!set_journal_write(b))
        return PDT_EBADINPUT;
    for (size_t i = 0; i < b->n; i++)
        if (b->files[i].kind == TO_FILE && !put_in_place(&b->files[i]))
            return PDT_EBADINPUT;
    for (size_t k = 0; k < b->dirs->len; k++) {
        const char *dir = g_ptr_array_index(b->dirs, k);
        if (fs_fsync_folder(dir, true) != 0) {
            pdt_error("cannot sync folder '%s': %s", dir, strerror(errno));
            return PDT_EBADINPUT;
        }
    }
    /* A new folder appears whole, with one rename. */
    if (b->stage && fs_rename(b->stage, b->folder) != 0) {
        pdt_error("cannot rename folder '%s' into place: %s", b->folder, strerror(errno));
        return PDT_EBADINPUT;
    }
    b->stage_landed = b->stage != NULL;
    for (size_t k = 0; k < b->made->len; k++) {
        char *parent = fs_folder_of(g_ptr_array_index(b->made, k));
        fs_fsync_folder(parent, false);
        free(parent);
    }
    for (size_t i = 0; i < b->n; i++)
        if (b->files[i].kind != TO_FILE && !write_stream(b, &b->files[i]))
            return PDT_EBADINPUT;
    return PDT_OK;
}

/* Out of memory part-way (alloc.h ends the run): undo as for any failure.
 * Every step records what it did only once it is done, and undo allocates
 * nothing, so it can run from inside any allocation of the commit. */
static void undo_on_failure(void *b)
{
    undo(b);
}

/* Before the first file is written: the fault switch, the folders, and
 * the hook that takes everything back if memory runs out from now on
 * (which, for a streaming batch, is while later outputs are built). */
static int prepare(pdio_batch *b)
{
    if (b->prepared)
        return PDT_OK;
    b->prepared = true;
    if (!fs_fault_init())
        return PDT_EUSAGE;
    pdt_alloc_on_failure(undo_on_failure, b);
    return b->folder ? make_folders(b) : PDT_OK;
}

static void fail(pdio_batch *b)
{
    if (!b->failed)
        undo(b);
    b->failed = true;
    pdt_alloc_on_failure(NULL, NULL);
}

/* A device, FIFO or stdout target of a streaming batch keeps its bytes
 * until the commit (a write there cannot be taken back), so its program,
 * which the caller frees after the add, is encoded now. */
static int keep_bytes(pending *f)
{
    if (!f->program)
        return PDT_OK;
    pdt_alloc_doing("writing '%s'", f->path);
    f->data = pdio_serialize(f->program, !f->binary, &f->len);
    f->program = NULL;
    if (f->data)
        return PDT_OK;
    pdt_error("%s: cannot write: %s", f->path,
              f->binary ? "a block, var or op would be 4 GiB or more"
                        : "cannot print the text form");
    return PDT_EBADINPUT;
}

/* A streaming batch writes the file just added to its temporary now, its
 * program encoded straight into it; devices, FIFOs and stdout keep their
 * bytes for the commit. */
static int stream_last(pdio_batch *b)
{
    if (b->failed)
        return PDT_EBADINPUT;
    pending *f = &b->files[b->n - 1];
    int rc = prepare(b);
    if (rc == PDT_OK)
        rc = check_target(b, f);
    if (rc == PDT_OK && f->kind == TO_FILE) {
        remove_stale(b);
        if (!f->remove && !write_temporary(f))
            rc = PDT_EBADINPUT;
    } else if (rc == PDT_OK) {
        rc = keep_bytes(f);
    }
    f->program = NULL;   /* the caller may free it now */
    if (rc != PDT_OK)
        fail(b);
    return rc;
}

int pdio_batch_commit(pdio_batch *b)
{
    if (b->failed)
        return PDT_EBADINPUT;
    int rc = prepare(b);
    if (rc == PDT_OK)
        rc = check_targets(b);
    if (rc == PDT_OK)
        rc = land(b);
    if (rc != PDT_OK) {
        fail(b);
        return rc;
    }
    pdt_alloc_on_failure(NULL, NULL);
    b->committed = true;
    for (size_t i = 0; i < b->n; i++) {
        pending *f = &b->files[i];
        if (f->bak)
            fs_unlink(f->bak);
        free(f->bak);
        f->bak = NULL;
        f->in_place = false;
    }
    set_journal_drop(b);
    return PDT_OK;
}

void pdio_batch_free(pdio_batch *b)
{
    if (!b)
        return;
    /* Never committed (a later output failed to build): its temporaries
     * and folders go. */
    if (!b->committed && b->prepared)
        fail(b);
    for (size_t i = 0; i < b->n; i++) {
        pending *f = &b->files[i];
        if (f->tmp)
            unlink(f->tmp);
        free(f->tmp);
        free(f->bak);
        free(f->path);
        free(f->real);
        free(f->data);
    }
    free(b->files);
    free(b->folder);
    free(b->stage);
    g_ptr_array_free(b->journals, true);
    g_hash_table_destroy(b->seen);
    g_ptr_array_free(b->made, true);
    g_ptr_array_free(b->dirs, true);
    free(b);
}
