/* pbbare.c - the baseline: a bare protobuf-c unpack + pack of a
 * ProgramDesc, no IR.  `pbbare IN OUT` writes what protobuf-c itself
 * serializes for IN (the round-trip reference); `pbbare -n N IN` repeats
 * unpack+pack N times in memory for timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework.pb-c.h"

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv)
{
    int reps = 1;
    const char *out = NULL;
    if (argc == 4 && strcmp(argv[1], "-n") == 0) {
        reps = atoi(argv[2]);
    } else if (argc == 3) {
        out = argv[2];
    } else {
        fprintf(stderr, "usage: pbbare IN OUT | pbbare -n N IN\n");
        return 2;
    }
    const char *in = argv[argc == 4 ? 3 : 1];
    size_t len = 0;
    unsigned char *data = slurp(in, &len);
    if (!data) {
        fprintf(stderr, "pbbare: cannot read %s\n", in);
        return 1;
    }
    for (int r = 0; r < reps; r++) {
        ProtobufCMessage *m = protobuf_c_message_unpack(
            &paddle__framework__proto__program_desc__descriptor, NULL, len, data);
        if (!m) {
            fprintf(stderr, "pbbare: cannot unpack %s\n", in);
            return 1;
        }
        size_t n = protobuf_c_message_get_packed_size(m);
        unsigned char *buf = malloc(n ? n : 1);
        protobuf_c_message_pack(m, buf);
        if (out) {
            FILE *f = fopen(out, "wb");
            if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
                fprintf(stderr, "pbbare: cannot write %s\n", out);
                return 1;
            }
        }
        free(buf);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    free(data);
    return 0;
}
