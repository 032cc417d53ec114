/* run.c - what a command records about its run for manifest.json: the
 * inputs it read (with their SHA-256), the options that shaped the
 * pipeline, and every environment value it took.  The environment is read
 * only through cli_run_getenv, so that what was read is what is recorded. */
#include <stdlib.h>

#include "../io/pdio.h"
#include "cli.h"

void cli_run_init(cli_run *r)
{
    GPtrArray **all[] = {&r->roles, &r->paths, &r->sums, &r->opt_names, &r->opt_values,
                         &r->env_names, &r->env_values};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        *all[i] = g_ptr_array_new();
    r->info = (pdt_run_info){.version = PDT_VERSION};
}

ir_program *cli_run_read(cli_run *r, const char *role, const char *path)
{
    char sum[65];
    ir_program *p = pdio_read_sha256(path, sum);
    if (p) {
        g_ptr_array_add(r->roles, (void *)ir_intern(role));
        g_ptr_array_add(r->paths, (void *)ir_intern(path));
        g_ptr_array_add(r->sums, (void *)ir_intern(sum));
    }
    return p;
}

void cli_run_option(cli_run *r, const char *name, const char *value)
{
    if (!value)
        return;
    g_ptr_array_add(r->opt_names, (void *)ir_intern(name));
    g_ptr_array_add(r->opt_values, (void *)ir_intern(value));
}

const char *cli_run_getenv(cli_run *r, const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return NULL;
    for (size_t i = 0; i < r->env_names->len; i++)
        if (r->env_names->pdata[i] == ir_intern(name))
            return r->env_values->pdata[i];
    g_ptr_array_add(r->env_names, (void *)ir_intern(name));
    g_ptr_array_add(r->env_values, (void *)ir_intern(v));
    return r->env_values->pdata[r->env_values->len - 1];
}

static pdt_list as_list(GPtrArray *a)
{
    return (pdt_list){a->len, (const char **)a->pdata};
}

const pdt_run_info *cli_run_info(cli_run *r, const char *const *passes, size_t n_passes)
{
    r->info.input_roles = as_list(r->roles);
    r->info.input_paths = as_list(r->paths);
    r->info.input_sha256 = as_list(r->sums);
    r->info.option_names = as_list(r->opt_names);
    r->info.option_values = as_list(r->opt_values);
    r->info.env_names = as_list(r->env_names);
    r->info.env_values = as_list(r->env_values);
    r->info.passes = (pdt_list){n_passes, (const char **)passes};
    return &r->info;
}

void cli_run_free(cli_run *r)
{
    GPtrArray *all[] = {r->roles, r->paths, r->sums, r->opt_names, r->opt_values,
                        r->env_names, r->env_values};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i])
            g_ptr_array_free(all[i], TRUE);
    *r = (cli_run){0};
}
