/* pdio_write.c - all-or-nothing output: temporaries, then renames. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../diag.h"
#include "../ir/alloc.h"
#include "../ir/util.h"
#include "pdio.h"

typedef struct {
    char *path;
    uint8_t *data;
    size_t len;
    bool binary;
    char *tmp;          /* temporary file's name, made when added, so that
                         * committing allocates nothing (alloc.h) */
    bool tmp_made;      /* it exists on disk */
} pending;

struct pdio_batch {
    bool force;
    bool failed;
    size_t n, cap;
    pending *files;
};

pdio_batch *pdio_batch_new(bool force)
{
    pdio_batch *b = xcalloc(1, sizeof *b);
    b->force = force;
    return b;
}

static void add(pdio_batch *b, const char *path, uint8_t *data, size_t len, bool binary)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 8;
        b->files = xrealloc(b->files, b->cap * sizeof *b->files);
    }
    pending *f = &b->files[b->n++];
    f->path = xstrdup(path);
    f->data = data;
    f->len = len;
    f->binary = binary;
    size_t n = strlen(path) + 16;
    f->tmp = xmalloc(n);
    snprintf(f->tmp, n, "%s.tmp.XXXXXX", path);
    f->tmp_made = false;
}

int pdio_batch_add_program(pdio_batch *b, const char *path, const ir_program *p, bool text)
{
    size_t len = 0;
    pdt_alloc_doing("writing '%s'", path);
    uint8_t *data = pdio_serialize(p, text, &len);
    if (!data) {
        pdt_error("%s: cannot serialize program", path);
        b->failed = true;
        return PDT_EBADINPUT;
    }
    add(b, path, data, len, !text);
    return PDT_OK;
}

void pdio_batch_add_bytes(pdio_batch *b, const char *path, const void *data, size_t len,
                          bool binary)
{
    uint8_t *copy = xmalloc(len + 1);
    if (len)
        memcpy(copy, data, len);
    add(b, path, copy, len, binary);
}

static bool write_all(int fd, const uint8_t *data, size_t len)
{
    while (len) {
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

static void drop_temporaries(pdio_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->files[i].tmp_made) {
            unlink(b->files[i].tmp);
            b->files[i].tmp_made = false;
        }
}

static bool write_temporary(pending *f)
{
    pdt_alloc_doing("writing '%s'", f->path);
    int fd = mkstemp(f->tmp);
    if (fd < 0) {
        pdt_error("%s: cannot create: %s", f->path, strerror(errno));
        return false;
    }
    f->tmp_made = true;
    /* mkstemp makes 0600 files; outputs should get the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    bool ok = write_all(fd, f->data, f->len);
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (!ok)
        pdt_error("%s: cannot write: %s", f->path, strerror(saved));
    return ok;
}

/* Out of memory halfway through: no temporary may stay behind. */
static void drop_temporaries_on_failure(void *b)
{
    drop_temporaries(b);
}

static int commit(pdio_batch *b);

int pdio_batch_commit(pdio_batch *b)
{
    pdt_alloc_on_failure(drop_temporaries_on_failure, b);
    int rc = commit(b);
    pdt_alloc_on_failure(NULL, NULL);
    return rc;
}

static int commit(pdio_batch *b)
{
    if (b->failed)
        return PDT_EBADINPUT;
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->files[i].path, "-") == 0 && b->files[i].binary && !b->force &&
            isatty(STDOUT_FILENO)) {
            pdt_error("refusing to write binary output to a terminal (use -f to force, "
                      "or --text)");
            return PDT_EUSAGE;
        }
    for (size_t i = 0; i < b->n; i++) {
        if (strcmp(b->files[i].path, "-") == 0)
            continue;
        if (!write_temporary(&b->files[i])) {
            drop_temporaries(b);
            return PDT_EBADINPUT;
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        pending *f = &b->files[i];
        if (!f->tmp_made) {     /* "-": standard output */
            if (fwrite(f->data, 1, f->len, stdout) != f->len || fflush(stdout) != 0) {
                pdt_error("cannot write to standard output");
                drop_temporaries(b);
                return PDT_EBADINPUT;
            }
            continue;
        }
        if (rename(f->tmp, f->path) != 0) {
            pdt_error("%s: cannot rename into place: %s", f->path, strerror(errno));
            drop_temporaries(b);
            return PDT_EBADINPUT;
        }
        f->tmp_made = false;
    }
    return PDT_OK;
}

void pdio_batch_free(pdio_batch *b)
{
    if (!b)
        return;
    drop_temporaries(b);
    for (size_t i = 0; i < b->n; i++) {
        free(b->files[i].path);
        free(b->files[i].data);
        free(b->files[i].tmp);
    }
    free(b->files);
    free(b);
}

int pdio_write(const ir_program *p, const char *path, bool text, bool force)
{
    pdio_batch *b = pdio_batch_new(force);
    int rc = pdio_batch_add_program(b, path, p, text);
    if (rc == PDT_OK)
        rc = pdio_batch_commit(b);
    pdio_batch_free(b);
    return rc;
}
