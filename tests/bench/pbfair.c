/* pbfair.c - the fair limit of a pdtrans run (issue 14): what any tool
 * that reads these inputs and writes these outputs with protobuf-c must
 * do.  `pbfair [-r RUNS] -i IN [-i IN ...] OUT...` first unpacks every OUT
 * (not timed: a tool builds its outputs somehow), then times, best of RUNS
 * (default 3): read and unpack every IN, and pack and write every OUT's
 * message to OUT.fair (the same bytes pdtrans wrote, for canonical files).
 * Prints the best wall-clock seconds. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framework.pb-c.h"

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *b2 = realloc(buf, cap *= 2);
            if (!b2) {
                free(buf);
                buf = NULL;
            }
            buf = b2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *ins[16];
    int n_in = 0, runs = 3, a = 1;
    for (; a < argc; a++) {
        if (!strcmp(argv[a], "-i") && a + 1 < argc && n_in < 16)
            ins[n_in++] = argv[++a];
        else if (!strcmp(argv[a], "-r") && a + 1 < argc)
            runs = atoi(argv[++a]);
        else
            break;
    }
    int n_out = argc - a;
    if (n_in == 0 || n_out <= 0 || runs < 1) {
        fprintf(stderr, "usage: pbfair [-r RUNS] -i IN [-i IN ...] OUT...\n");
        return 2;
    }
    Paddle__Framework__Proto__ProgramDesc **outs = calloc((size_t)n_out, sizeof *outs);
    for (int i = 0; i < n_out; i++) {
        size_t len;
        unsigned char *buf = slurp(argv[a + i], &len);
        outs[i] = buf ? paddle__framework__proto__program_desc__unpack(NULL, len, buf) : NULL;
        free(buf);
        if (!outs[i]) {
            fprintf(stderr, "pbfair: cannot read %s\n", argv[a + i]);
            return 1;
        }
    }
    double best = -1;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        for (int i = 0; i < n_in; i++) {
            size_t len;
            unsigned char *buf = slurp(ins[i], &len);
            Paddle__Framework__Proto__ProgramDesc *p =
                buf ? paddle__framework__proto__program_desc__unpack(NULL, len, buf) : NULL;
            free(buf);
            if (!p) {
                fprintf(stderr, "pbfair: cannot read %s\n", ins[i]);
                return 1;
            }
            paddle__framework__proto__program_desc__free_unpacked(p, NULL);
        }
        for (int i = 0; i < n_out; i++) {
            size_t len = paddle__framework__proto__program_desc__get_packed_size(outs[i]);
            unsigned char *buf = malloc(len ? len : 1);
            paddle__framework__proto__program_desc__pack(outs[i], buf);
            char path[4096];
            snprintf(path, sizeof path, "%s.fair", argv[a + i]);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
                fprintf(stderr, "pbfair: cannot write %s\n", path);
                return 1;
            }
            free(buf);
        }
        double t = now() - t0;
        if (best < 0 || t < best)
            best = t;
    }
    for (int i = 0; i < n_out; i++)
        paddle__framework__proto__program_desc__free_unpacked(outs[i], NULL);
    free(outs);
    printf("%.4f\n", best);
    return 0;
}
