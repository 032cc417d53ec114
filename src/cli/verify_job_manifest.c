/* verify_job_manifest.c - the shape of the manifest.json fields `verify
 * job` reads, checked before cli_manifest_parse (manifest_json.c), which
 * takes what it finds and defaults the rest: a files entry that is not an
 * object, a trainer_id that is a string or a flags.trainers of 1.5 would
 * otherwise be skipped or read as 0, and a job with a corrupt manifest
 * could verify equal against programs it never listed.  One message naming
 * the manifest and the field; fields verify job does not read (inputs,
 * pipeline, params, pservers) are not checked; job and sha256 are
 * verify_job_sha256.c's. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "cli.h"

static bool opt_string(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return !v || json_is_string(v);
}

static bool opt_string_or_null(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return !v || json_is_null(v) || json_is_string(v);
}

/* An integer from lo to hi, or absent when may_lack. */
static bool int_in(json_t *o, const char *k, long long lo, long long hi, bool may_lack)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return may_lack;
    return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

static bool check_flags(const char *path, json_t *f)
{
    if (!f)
        return true;
    const char *bad = !json_is_object(f) ? "is not an object"
                    : !opt_string(f, "collective_mode") ? ".collective_mode is not a string"
                    : !int_in(f, "selected_gpus", 1, 4096, true)
                      ? ".selected_gpus is not a device count from 1 to 4096"
                    : !int_in(f, "geo_push_nums", 1, 2147483647, true)
                      ? ".geo_push_nums is not a push interval from 1 to 2147483647" : NULL;
    json_t *t = json_is_object(f) ? json_object_get(f, "trainers") : NULL;
    if (!bad && t && !int_in(f, "trainers", 1, 100000, false)) {
        size_t i, n = json_array_size(t);
        json_t *e;
        bool ok = json_is_array(t) && n >= 1 && n <= 100000;
        json_array_foreach(t, i, e)
            ok = ok && json_is_string(e);
        bad = ok ? NULL : ".trainers is neither a trainer count from 1 to 100000 nor a list of "
                          "trainer endpoints";
    }
    if (bad)
        pdt_error("%s: the manifest's flags%s", path, bad);
    return !bad;
}

/* files[i]: role "trainer" with trainer_id or "pserver" with pserver (the
 * roles transpile writes), main, startup and endpoint strings; BUF holds a
 * message that quotes the role. */
static const char *check_file(json_t *e, char *buf, size_t n)
{
    if (!json_is_object(e))
        return "is not an object";
    json_t *r = json_object_get(e, "role");
    const char *role = json_string_value(r);
    if (!role)
        return "has no role string";
    bool tr = !strcmp(role, "trainer"), ps = !strcmp(role, "pserver");
    if (!tr && !ps) {
        snprintf(buf, n, "has a role other than trainer and pserver ('%.200s')", role);
        return buf;
    }
    if (tr && !int_in(e, "trainer_id", 0, 100000, false))
        return "has no trainer_id from 0 to 100000";
    if (ps && !int_in(e, "pserver", 0, 100000, false))
        return "has no pserver number from 0 to 100000";
    if (!json_is_string(json_object_get(e, "main")))
        return "names no main program";
    if (!opt_string_or_null(e, "startup"))
        return "has a startup that is not a file name";
    if (!opt_string_or_null(e, "endpoint"))
        return "has an endpoint that is not a string";
    return NULL;
}

static bool check_files(const char *path, json_t *files)
{
    if (!json_is_array(files)) {
        pdt_error("%s: the manifest's files is %s", path, files ? "not a list" : "missing");
        return false;
    }
    size_t i, k;
    json_t *e, *d;
    char buf[256];
    json_array_foreach(files, i, e) {
        const char *bad = check_file(e, buf, sizeof buf);
        for (k = 0; !bad && k < i; k++) {
            d = json_array_get(files, k);
            const char *role = json_string_value(json_object_get(e, "role"));
            const char *key = !strcmp(role, "trainer") ? "trainer_id" : "pserver";
            if (json_equal(json_object_get(d, "role"), json_object_get(e, "role")) &&
                json_equal(json_object_get(d, key), json_object_get(e, key)))
                bad = "lists the same role and number as an earlier entry";
        }
        if (bad) {
            pdt_error("%s: the manifest's files[%zu] %s", path, i, bad);
            return false;
        }
    }
    return true;
}

bool cli_sym_manifest_shape(const char *path, json_t *j)
{
    const char *bad = !json_is_object(j) ? "is not a JSON object"
                    : !opt_string(j, "mode") ? "'s mode is not a string"
                    : !opt_string(j, "role") ? "'s role is not a string"
                    : !int_in(j, "distributed_mode", 0, 3, true)
                      ? "'s distributed_mode is not 0, 1, 2 or 3" : NULL;
    if (bad) {
        pdt_error("%s: the manifest%s", path, bad);
        return false;
    }
    return check_flags(path, json_object_get(j, "flags")) &&
           check_files(path, json_object_get(j, "files"));
}
