/* replay.c - run a fuzz target over files without libFuzzer (stb's and lz4's habit), so
 * `make test` replays the committed corpus on every build. Usage: replay FILE|DIR...
 * Each file is one input; a crash or abort fails the run. Ends "N passed, 0 failed". */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*replay_target)(const uint8_t *data, size_t size);

static int replay_file(replay_target target, const char *path);

/* A directory stands for every regular entry in it (not recursive). */
static int replay_path(replay_target target, const char *path, int *done) {
    DIR *d = opendir(path);
    struct dirent *e;
    if (!d) {
        if (replay_file(target, path)) return 1;
        (*done)++;
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        char full[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (replay_file(target, full)) {
            closedir(d);
            return 1;
        }
        (*done)++;
    }
    closedir(d);
    return 0;
}

/* REPLAY_NO_MAIN: the file is part of a group (tests/group.sh), whose main replays each target. */
#ifndef REPLAY_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    int i, done = 0;
    for (i = 1; i < argc; i++)
        if (replay_path(LLVMFuzzerTestOneInput, argv[i], &done)) return 1;
    printf("%d passed, 0 failed\n", done);
    return 0;
}
#endif

static int replay_file(replay_target target, const char *path) {
    {
        FILE *f = fopen(path, "rb");
        uint8_t *buf;
        long len;
        if (!f) {
            perror(path);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = (uint8_t *)malloc(len > 0 ? (size_t)len : 1u);
        if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
            fprintf(stderr, "%s: read error\n", path);
            return 1;
        }
        fclose(f);
        target(buf, (size_t)len);
        free(buf);
    }
    return 0;
}
