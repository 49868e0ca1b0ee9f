#!/bin/sh
# tests/trainer/topk.sh - build/trainer's top-k messages and momentum correction (--scheme topk,
# --dgc, --no-masking, --clip, --sparse-warmup; examples/fmnist.h).
#   1. Identities with one worker, every element sent as float32 (--density 1 --bits 32), where
#      the messages add no error and the residual stays zero, so the weights must be those of
#      the uncompressed run byte for byte:
#        topk without --dgc                 == fp32 --momentum 0.9 (error feedback of nothing)
#        topk --dgc --no-masking            == fp32 --momentum 0.9 (the worker's velocity is SGD's)
#        topk --dgc (masking)               == fp32 --momentum 0   (masking clears the velocity
#                                              wherever an element was sent: here everywhere)
#      and the last two must differ (so the comparison can fail).
#   2. 4 workers, 1% top-k at 2 bits with momentum correction, clipping and the warm-up: the
#      training loss falls, and the messages average fewer than 0.3 bits per element.
# Environment: BUILD (default build), STEPS (20). Run by `make check` (after mpi-build, which
# builds BUILD/trainer and BUILD/fashion-mnist).
set -u
BUILD=${BUILD:-build}
STEPS=${STEPS:-20}
D=$BUILD/fashion-mnist
T=$BUILD/trainer-topk
mkdir -p "$T"
pass=0
fail=0
ok() { echo "  ok: $*"; pass=$((pass + 1)); }
bad() { echo "  FAIL: $*"; fail=$((fail + 1)); }
run() { # name, flags...
    n=$1
    shift
    # shellcheck disable=SC2068  # flags: one word each
    "$BUILD/trainer" --data "$D" --model mlp --workers 1 --steps "$STEPS" --eval-every "$STEPS" --quiet \
        --out "$T/$n.csv" --save-weights "$T/$n.w" $@ || bad "trainer $n exited with $?"
}
run fp32-m9 --scheme fp32 --momentum 0.9
run fp32-m0 --scheme fp32 --momentum 0
run topk-ef --scheme topk --density 1 --bits 32 --momentum 0.9
run dgc-nomask --scheme topk --density 1 --bits 32 --dgc --no-masking --momentum 0.9
run dgc-mask --scheme topk --density 1 --bits 32 --dgc --momentum 0.9
same() { # a b what
    if [ -s "$T/$1.w" ] && cmp -s "$T/$1.w" "$T/$2.w"; then ok "$3: identical weights after $STEPS steps"
    else bad "$3: the weights differ"; fi
}
same topk-ef fp32-m9 "topk (density 1, float32) == fp32 momentum 0.9"
same dgc-nomask fp32-m9 "topk --dgc --no-masking == fp32 momentum 0.9"
same dgc-mask fp32-m0 "topk --dgc (momentum factor masking) == fp32 momentum 0"
if cmp -s "$T/dgc-mask.w" "$T/fp32-m9.w"; then bad "masking made no difference"
else ok "masking changes the run (topk --dgc != fp32 momentum 0.9)"; fi

"$BUILD/trainer" --data "$D" --model mlp --workers 4 --steps 100 --eval-every 100 --quiet --scheme topk \
    --density 0.01 --bits 2 --dgc --clip 10 --sparse-warmup 20 --out "$T/dgc4.csv" || bad "trainer dgc4 exited with $?"
l0=$(awk -F, 'NR == 2 { print $3 }' "$T/dgc4.csv")
l1=$(awk -F, 'END { print $3 }' "$T/dgc4.csv")
bpe=$(awk -F, 'END { printf "%.4f", $2 / (100 * 4 * 101770) }' "$T/dgc4.csv")
if awk -v a="$l0" -v b="$l1" -v c="$bpe" 'BEGIN { exit !(b < a && c < 0.3) }'; then
    ok "4 workers, top-k 1% at 2 bits, --dgc --clip 10 --sparse-warmup 20: loss $l0 -> $l1, $bpe bits per element"
else
    bad "4 workers, top-k 1% at 2 bits with --dgc: loss $l0 -> $l1, $bpe bits per element"
fi
echo "$pass passed, $fail failed (trainer topk)"
[ "$fail" = 0 ]
