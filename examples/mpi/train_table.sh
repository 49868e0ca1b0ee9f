#!/bin/sh
# examples/mpi/train_table.sh - `make mpi-train`: the MLP on Fashion-MNIST with the three
# aggregation patterns of dqsgd_mpi.h at M = 2 and 4 ranks and b = 4 and 8 bits (fixed QSGD), plus
# fp32 (raw floats allgathered) per M; a table of the final loss, accuracy and bytes each worker
# sent and received per step, against a float32 ring allreduce (2 (M-1)/M x 4d bytes each way).
# Environment: BUILD (build), MPIRUN (mpirun and its flags), STEPS (300), NP ("2 4"), BITS ("4 8").
set -u
BUILD=${BUILD:-build}
MPIRUN=${MPIRUN:-mpirun}
STEPS=${STEPS:-300}
[ -n "$STEPS" ] || STEPS=300
NP=${NP:-2 4}
BITS=${BITS:-4 8}
T=$BUILD/mpi-train
mkdir -p "$T"
run() { # M scheme-flags pattern label
    out="$T/$4.csv"
    # shellcheck disable=SC2086
    $MPIRUN -np "$1" "$BUILD/mpi_trainer" --data "$BUILD/fashion-mnist" --model mlp $2 --pattern "$3" \
        --steps "$STEPS" --eval-every "$STEPS" --quiet --out "$out" 2>"$T/$4.log" || {
        echo "mpi_trainer failed: see $T/$4.log" >&2; tail -5 "$T/$4.log" >&2; exit 1; }
    awk -F, -v M="$1" -v pat="$3" -v lab="$5" 'END {
        d = 101770; ring = 2 * (M - 1) / M * 4 * d;
        printf "%2d  %-6s %-10s %10.4f %8.4f %14.0f %14.0f %12.3f\n", M, lab, pat, $3, $4, $6, $7, ($6 > $7 ? $6 : $7) / ring }' "$out"
}
echo "MLP 784-128-10 (d = 101770), Fashion-MNIST, batch 32 per worker, $STEPS steps, seed 1"
echo " M  bits   pattern    train_loss test_acc  sent B/wk/step recv B/wk/step  max/fp32ring"
for M in $NP; do
    run "$M" "--scheme fp32" allgather "fp32-M$M" fp32
    for b in $BITS; do
        for pat in allgather sra shared; do
            run "$M" "--scheme fixed --bits $b" "$pat" "$pat-b$b-M$M" "$b"
        done
    done
done
echo "bytes: what each rank handed to MPI for the others and what it received from them, per step,"
echo "size exchanges included (dq_mpi_bytes); fp32ring = a float32 ring allreduce, 2 (M-1)/M x 4d each way."
