/* pdio_batch.h - the state of a pdio_batch, shared by pdio_write.c (the
 * commit) and pdio_set.c (journal, recovery, new folders built beside,
 * stale files removed with the set).  Internal to src/io; README.md in
 * this folder describes the steps. */
#ifndef PDT_PDIO_BATCH_H
#define PDT_PDIO_BATCH_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../ir/ir.h"

typedef enum { TO_STDOUT, TO_STREAM, TO_FILE } target_kind;

typedef struct {
    char *path;         /* as the user named it; used in messages */
    char *real;         /* the file replaced or written (symlinks resolved) */
    const ir_program *program;  /* encoded when written (the caller's) */
    uint8_t *data;      /* or the bytes to write */
    size_t len;
    bool binary;
    bool remove;        /* pdio_batch_remove: real goes away with the set */
    target_kind kind;
    bool existed;       /* real held a regular file before */
    mode_t mode;        /* its permissions, which the replacement keeps */
    bool checked;       /* classify() ran */
    char *tmp;          /* temporary beside real, once created */
    char *bak;          /* the old file under its backup name */
    bool bak_moved;     /* bak was made by rename, so real is gone */
    bool in_place;      /* tmp has been renamed onto real (or real removed) */
    char sha256[65];    /* of the bytes written to tmp ("" until then) */
    bool no_sha256;     /* nobody lists this file's sha256 (pdio_write's
                         * own batch): SHA-256 costs 0.7 ms a MB, 7% of a
                         * convert, so it is not computed */
    bool drop_input;    /* the program's input pages go back as it is
                         * written (pdio_write's batch; pdio_release.c) */
} pending;

struct pdio_batch {
    bool force;
    bool failed;        /* undone, or never written: nothing left to take back */
    bool committed;
    bool stream;        /* pdio_batch_stream: each file written when added */
    bool prepared;      /* PDTRANS_FAIL_AT read, folders made, hook set */
    size_t n, cap;
    pending *files;
    char *folder;       /* created when the first file is written, when asked */
    char *stage;        /* a new folder is built here, beside it, and renamed */
    bool stage_landed;  /* stage has been renamed to folder */
    GPtrArray *made;    /* folders this batch created, outermost first */
    GPtrArray *dirs;    /* distinct folders holding TO_FILE targets */
    GPtrArray *journals;    /* journals written by this commit (paths) */
    size_t n_clean;     /* dirs[0..n_clean) had stale temporaries removed */
    GHashTable *seen;   /* real paths of TO_FILE targets (owned by files) */
};

/* pdio_set.c */
/* Builds the folder b->folder beside its parent, when it does not exist:
 * b->stage.  PDT_OK, or a message printed. */
int set_make_stage(pdio_batch *b);
/* A target inside a staged folder is written into the stage. */
void set_redirect_to_stage(pdio_batch *b, pending *f);
/* Before the first rename: one journal per folder (except a stage) that
 * names every rename and removal of the set, fsync'd with its folder. */
bool set_journal_write(pdio_batch *b);
/* After the set is in, or undone: the journals go (allocates nothing). */
void set_journal_drop(pdio_batch *b);
/* A removal's step 5: real renamed to a backup name; false, message
 * printed, on failure. */
bool set_put_removed(pending *f);

#endif
