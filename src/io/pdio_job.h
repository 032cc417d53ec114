/* pdio_job.h - folders of transpile outputs: which files of pdtrans's
 * naming a folder holds, which job each belongs to (the "job" and "sha256"
 * keys that end every manifest), and whether the files still match their
 * manifests.  See README.md in this folder, "Job folders". */
#ifndef PDT_PDIO_JOB_H
#define PDT_PDIO_JOB_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/* True for the names transpile writes: manifest.json, manifest.ROLE.json,
 * pserver_K[.startup].pb|.pbtxt, trainer_I[.startup].pb|.pbtxt. */
bool pdio_job_output_name(const char *name);

/* The names (not paths) of pdtrans outputs in DIR that are not of JOB,
 * sorted: every manifest whose job is another (or unreadable, or of a
 * pdtrans that wrote no job), and every program file that no manifest of
 * JOB lists.  Empty when DIR does not exist.  Free with
 * g_ptr_array_unref. */
GPtrArray *pdio_job_stale(const char *dir, const char *job);

/* Checks each manifest in DIR against the files it lists: one line per
 * file missing or whose SHA-256 differs, and one for a journal left by a
 * killed run, to OUT.  Returns the number of problems, or -1 (message
 * printed) when DIR cannot be read. */
long pdio_job_check(const char *dir, FILE *out);

/* A manifest's "params" table (manifest_version 2: one row per param,
 * README.md "The manifest") rewritten in place as the objects of version
 * 1, one per param with an object per slice, and "params_columns"
 * dropped; a manifest without the table is left as it is.  What pdtrans
 * diff compares, so that its paths name params and slices.  False when a
 * row is not of the documented form.  M is a jansson json_t *. */
typedef struct json_t json_t;
bool pdio_manifest_expand(json_t *m);

#endif
