/* mpi_allgather.c - dqsgd::mpi taken through CMake (tests/cmake/test_cmake.sh): dqsgd_mpi.h
 * compiles against MPI::MPI_C's headers, links, and sums every rank's message on every rank.
 * Each rank encodes its own vector; the sum must equal, bit for bit, the rank-order
 * dq_decode_add of all ranks' messages, which every rank can rebuild locally. Prints
 * "rank R: ok" and exits 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd_mpi.h"

#define N 1000u

static size_t encode_rank(int rank, unsigned char *msg, size_t cap) {
    static float x[N];
    dq_params p;
    size_t i, len = 0;
    for (i = 0; i < N; i++) x[i] = (float)((int)(i % 17u) - 8 + rank) / 8.0f;
    memset(&p, 0, sizeof p);
    p.bits = 6;
    p.seed = 7;
    p.stream = (uint32_t)rank;
    return dq_encode(&p, x, N, NULL, msg, cap, &len) == DQ_OK ? len : 0;
}

int main(int argc, char **argv) {
    static float acc[N], want[N];
    static unsigned char msg[DQ_ENCODE_BOUND(N, 6)];
    int rank = 0, size = 0, r, ok;
    size_t len, cap;
    void *work;
    dq_mpi_bytes bytes;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cap = dq_mpi_allgather_workspace_size(size, sizeof msg);
    work = malloc(cap);
    ok = work != NULL;
    for (r = 0; ok && r < size; r++) { /* the reference: every rank's message, in rank order */
        len = encode_rank(r, msg, sizeof msg);
        ok = len > 0 && dq_decode_add(msg, len, 0.5f, want, N) == DQ_OK;
    }
    len = encode_rank(rank, msg, sizeof msg);
    ok = ok && len > 0 &&
         dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, 0.5f, acc, N, work, cap, &bytes) == DQ_OK &&
         memcmp(acc, want, sizeof acc) == 0;
    printf("rank %d: %s\n", rank, ok ? "ok" : "FAILED");
    free(work);
    MPI_Finalize();
    return ok ? 0 : 1;
}
