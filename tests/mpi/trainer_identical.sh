#!/bin/sh
# tests/mpi/trainer_identical.sh - the MPI trainer against the single-process simulation.
#   1. build/trainer --workers 4 and `mpirun -np 4 build/mpi_trainer --pattern allgather` with the
#      same flags end with the same weights, byte for byte (cmp of --save-weights), for fixed
#      4-bit QSGD, for DQSGD with a bit budget (rank 0's norm prior, the schedule) and for 1%
#      top-k at 2 bits with momentum correction, clipping and the sparsity warm-up;
#   2. the sra and shared patterns train: the training loss after the run is below the initial one.
# Environment: BUILD (default build), MPIRUN (the mpirun command with its flags), STEPS (20).
# Run by `make mpi-test`; needs BUILD/trainer, BUILD/mpi_trainer and BUILD/fashion-mnist.
set -u
BUILD=${BUILD:-build}
MPIRUN=${MPIRUN:-mpirun}
STEPS=${STEPS:-20}
D=$BUILD/fashion-mnist
T=$BUILD/mpi-test
mkdir -p "$T"
pass=0
fail=0
ok() { echo "  ok: $*"; pass=$((pass + 1)); }
bad() { echo "  FAIL: $*"; fail=$((fail + 1)); }

for scheme in "fixed --bits 4" "dqsgd-p2 --budget-bits 2e7" \
    "topk --density 0.01 --bits 2 --dgc --clip 5 --sparse-warmup 8"; do
    name=$(echo "$scheme" | cut -d' ' -f1)
    FLAGS="--data $D --model mlp --scheme $scheme --steps $STEPS --eval-every 10 --quiet"
    rm -f "$T/trainer-$name.w" "$T/allgather-$name.w"
    # shellcheck disable=SC2086
    "$BUILD/trainer" $FLAGS --workers 4 --out "$T/trainer-$name.csv" --save-weights "$T/trainer-$name.w" ||
        bad "trainer $name exited with $?"
    # shellcheck disable=SC2086
    $MPIRUN -np 4 "$BUILD/mpi_trainer" $FLAGS --pattern allgather --out "$T/allgather-$name.csv" \
        --save-weights "$T/allgather-$name.w" 2>/dev/null || bad "mpi_trainer allgather $name exited with $?"
    if [ -s "$T/trainer-$name.w" ] && cmp "$T/trainer-$name.w" "$T/allgather-$name.w"; then
        ok "$name: trainer --workers 4 and mpirun -np 4 mpi_trainer --pattern allgather: identical weights" \
           "after $STEPS steps ($(wc -c < "$T/trainer-$name.w") bytes)"
    else
        bad "$name: the weights differ"
    fi
    if cut -d, -f1-5 "$T/trainer-$name.csv" >"$T/trainer-$name.csv5" &&
        cut -d, -f1-5 "$T/allgather-$name.csv" | cmp -s - "$T/trainer-$name.csv5"; then
        ok "$name: the same CSV rows (step, bits, loss, accuracy, width)"
    else
        bad "$name: the CSV rows differ"
    fi
done

for pat in sra shared; do
    FLAGS="--data $D --model mlp --scheme fixed --bits 4 --steps $STEPS --eval-every $STEPS --quiet"
    # shellcheck disable=SC2086
    if $MPIRUN -np 4 "$BUILD/mpi_trainer" $FLAGS --pattern $pat --out "$T/$pat.csv" 2>/dev/null; then
        l0=$(awk -F, 'NR == 2 { print $3 }' "$T/$pat.csv")
        l1=$(awk -F, 'END { print $3 }' "$T/$pat.csv")
        a1=$(awk -F, 'END { print $4 }' "$T/$pat.csv")
        if awk -v a="$l0" -v b="$l1" 'BEGIN { exit !(b < a) }'; then
            ok "$pat: training loss $l0 -> $l1 after $STEPS steps (test accuracy $a1)"
        else
            bad "$pat: training loss $l0 -> $l1 did not decrease"
        fi
    else
        bad "mpi_trainer --pattern $pat exited with an error"
    fi
done
echo "$pass passed, $fail failed (mpi trainer)"
[ "$fail" = 0 ]
