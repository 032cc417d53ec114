/* manifest.h - the manifest of a job, in memory: what the passes wrote
 * and where every slice lives, as the transpile family fills it
 * (transpile_manifest.c) and pdt_job_manifest returns it.  Only the CLI
 * turns it into manifest.json (src/cli/manifest_json.c, adding the run's
 * inputs, pipeline and environment, the job id and the files' hashes), and
 * `verify job` reads manifest.json back into one (the parts it reads).
 * README.md, "The manifest", describes each field as JSON.
 *
 * Every string and array is owned by the manifest (copied into its arena),
 * so it outlives the plan and the programs it describes. */
#ifndef PDT_MANIFEST_H
#define PDT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry of "flags", in the order written: the settings that shaped
 * the outputs. */
typedef enum { PDT_MF_NULL, PDT_MF_BOOL, PDT_MF_INT, PDT_MF_STRING, PDT_MF_STRINGS } pdt_mf_kind;
typedef struct {
    const char *key;
    pdt_mf_kind kind;
    long long i;                /* BOOL (0/1), INT */
    const char *s;              /* STRING */
    const char *const *list;    /* STRINGS */
    size_t n;
} pdt_manifest_flag;

/* One pair of files written: a trainer's (id_key "trainer_id") or a
 * pserver's ("pserver", with its endpoint). */
typedef struct {
    const char *role;
    const char *id_key;
    long long id;
    const char *endpoint;       /* NULL: none */
    const char *main, *startup; /* file names */
} pdt_manifest_file;

/* The pservers of the placement, by index. */
typedef struct {
    const char *endpoint;
    long long slices;
    long long param_bytes;
} pdt_manifest_pserver;

/* One slice of a param: `rows` as the params table writes it (dim 0, or
 * the element count of a 0-d slice), `section` as GEO's vars_info does
 * (dim 0, or 0), on pserver `pserver`. */
typedef struct {
    const char *name;
    int64_t rows, section;
    size_t pserver;
} pdt_manifest_slice;

/* One row of the params table. */
typedef struct {
    const char *name, *dtype;
    const int64_t *shape;
    size_t n_shape;
    const char *grad;
    const int64_t *grad_shape;  /* NULL: the param's */
    size_t n_grad_shape;
    bool grad_trainer_suffix;   /* grad slice NAME is sent as NAME.trainer_<id> */
    const pdt_manifest_slice *slices;
    size_t n_slices;
    bool grad_sliced;
    bool distribute_update_var, remote_prefetch;
    bool sparse;                /* vars_info's is_sparse */
} pdt_manifest_param;

/* The distributed lookup table (--mode=pserver with one). */
typedef struct {
    const char *name;
    const int64_t *shape, *pserver_shape;
    size_t n_shape;
    const char *grad;
    const char *const *trainer_grads;   /* one per pserver */
    size_t n_trainer_grads;
} pdt_manifest_table;

typedef struct pdt_manifest {
    const char *mode;           /* "pserver", "nccl2", "collective" */
    const char *role;           /* "all", "trainer", "pserver" */
    /* pserver mode: distributed_mode, pservers and params are written */
    bool placement;
    int distributed_mode;       /* 0 sync, 1 half-async, 2 async, 3 GEO */
    pdt_manifest_flag *flags;
    size_t n_flags;
    pdt_manifest_file *files;
    size_t n_files;
    pdt_manifest_pserver *pservers;
    size_t n_pservers;
    pdt_manifest_param *params;
    size_t n_params;
    const pdt_manifest_table *table;    /* NULL: none */
    bool vars_info;             /* --geo: GEO's vars_info follows from params */
    /* private: manifest.c */
    struct ir_arena *arena;
    size_t cap_flags, cap_files;
} pdt_manifest;

pdt_manifest *pdt_manifest_new(const char *mode, const char *role);
void pdt_manifest_free(pdt_manifest *m);

/* A copy of S (NULL stays NULL), and of N dims, in the manifest's arena. */
const char *pdt_manifest_str(pdt_manifest *m, const char *s);
const int64_t *pdt_manifest_dims(pdt_manifest *m, const int64_t *d, size_t n);
/* Zeroed memory in the arena (the params table, the slices). */
void *pdt_manifest_alloc(pdt_manifest *m, size_t size);

/* Appends a flag (the strings copied); setting a key again replaces its
 * value in place. */
void pdt_manifest_flag_int(pdt_manifest *m, const char *key, long long v);
void pdt_manifest_flag_bool(pdt_manifest *m, const char *key, bool v);
void pdt_manifest_flag_str(pdt_manifest *m, const char *key, const char *v);   /* NULL: null */
void pdt_manifest_flag_strs(pdt_manifest *m, const char *key, const char *const *v, size_t n);
/* Flag KEY, or NULL. */
const pdt_manifest_flag *pdt_manifest_get_flag(const pdt_manifest *m, const char *key);
/* Drops flag KEY (the job id leaves out what tells processes apart). */
void pdt_manifest_drop_flag(pdt_manifest *m, const char *key);

void pdt_manifest_add_file(pdt_manifest *m, const pdt_manifest_file *f);

/* flags.trainers: an endpoint list's length, or the count (1 if none). */
size_t pdt_manifest_trainers(const pdt_manifest *m);

#endif
