#!/bin/sh
# tools/ddp_link.sh - `make ddp-link`: DDP training of the CNN on Fashion-MNIST
# (python/train_ddp.py --model cnn) over a slow link, for several communication methods.
#
# Every rank runs inside one network namespace made for this run, whose only interface is its
# loopback (127.0.0.1, MTU 1500: tbf drops the default 64 KiB packets), shaped with
# `tc qdisc ... tbf rate R` for each R in RATES ("unshaped" leaves it alone). All ranks share
# that one qdisc, so R is the total the ranks send at once, like one shared link. The namespace
# is deleted at the end, also on failure or Ctrl-C. Needs root (ip netns, tc): without it the
# script stops, running nothing.
#
# Environment (make ddp-link passes its variables on):
#   METHODS  train_ddp.py methods (default: none fp16 powersgd1 powersgd4 dq4 dq2ef dqshared dqauto)
#   RATES    unshaped and/or tc rates such as 100mbit, 1gbit (default: unshaped 1gbit 100mbit)
#   WORLDS   process counts (default: 2 4)
#   SEEDS    seeds (default: 1 2 3)
#   STEPS    SGD steps per run (default 300)
#   QUICK=1  one seed, 40 steps, W = 2, unshaped and 100mbit, evaluation every 10 steps (what is
#            not set explicitly)
#   ARGS     more train_ddp.py arguments (e.g. --eval-every 20 --bucket-cap-mb 0.1)
#   BUILD (build), OUT ($BUILD/ddp-link), HOOK_PY (/usr/bin/python3), DQSGD_LIB
# Order: for each seed, for each W, for each rate, one train_ddp.py run of all methods, their
# order rotated from run to run so that no method always runs first or last.
# Output under OUT: runs.csv (a row per run), curves/*.csv, log.txt, meta.txt, and from
# tools/ddp_link_report.py: summary-W<W>.md and ddp-link.png. A previous OUT's runs go to
# OUT/previous/.
set -eu

BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/ddp-link}
PY=${HOOK_PY:-/usr/bin/python3}
ARGS=${ARGS:-}
if [ "${QUICK:-0}" = 1 ]; then
    SEEDS=${SEEDS:-1}; STEPS=${STEPS:-40}; WORLDS=${WORLDS:-2}; RATES=${RATES:-unshaped 100mbit}
    ARGS="--eval-every 10 $ARGS"
fi
METHODS=${METHODS:-none fp16 powersgd1 powersgd4 dq4 dq2ef dqshared dqauto}
RATES=${RATES:-unshaped 1gbit 100mbit}
WORLDS=${WORLDS:-2 4}
SEEDS=${SEEDS:-1 2 3}
STEPS=${STEPS:-300}

die() { echo "ddp-link: $*" >&2; exit 2; }

# ---- arguments, before anything is created
is_uint() { case $1 in ''|*[!0-9]*) return 1;; esac; }
in_range() { is_uint "$1" && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; } # value lo hi
count() { echo $#; }
# shellcheck disable=SC2086  # one word per item
{ [ "$(count $METHODS)" -gt 0 ] || die "METHODS is empty"
  [ "$(count $RATES)" -gt 0 ] || die "RATES is empty"
  [ "$(count $WORLDS)" -gt 0 ] || die "WORLDS is empty"
  [ "$(count $SEEDS)" -gt 0 ] || die "SEEDS is empty"; }
in_range "$STEPS" 2 1000000 || die "STEPS=$STEPS: an integer >= 2"
for w in $WORLDS; do
    in_range "$w" 2 8 || die "WORLDS: $w is not 2..8"
done
for s in $SEEDS; do is_uint "$s" || die "SEEDS: $s is not a non-negative integer"; done
for r in $RATES; do
    case $r in
    unshaped) ;;
    *[0-9]kbit|*[0-9]mbit|*[0-9]gbit) in_range "${r%?bit}" 1 1000000 || die "RATES: $r is not N{kbit,mbit,gbit}";;
    *) die "RATES: $r is not unshaped or N{kbit,mbit,gbit} (tc's rate units)";;
    esac
done
if [ "$(id -u)" != 0 ]; then
    die "needs root to make a network namespace and shape its loopback (ip netns, tc); not root: stopping,
nothing was run (sudo make ddp-link, or run python/train_ddp.py --model cnn by hand, unshaped)"
fi
for tool in ip tc; do command -v $tool >/dev/null 2>&1 || die "needs ip and tc (Debian: iproute2)"; done
# shellcheck disable=SC2086  # METHODS: one word per method
hooks=$(echo $METHODS | tr ' ' ',')
# shellcheck disable=SC2086  # ARGS: several arguments on purpose
"$PY" python/train_ddp.py --check --model cnn --steps "$STEPS" --hooks "$hooks" $ARGS >/dev/null ||
    die "train_ddp.py refused METHODS or ARGS (above)"

# ---- the namespace, removed whatever happens
NS=dqsgd-link-$$
run_pid=
cleanup() {
    set +e # remove everything, whatever fails
    trap - EXIT INT TERM HUP
    # timeout leads its own process group: the trainer and its workers (dash's kill takes no --)
    [ -n "$run_pid" ] && kill -TERM "-$run_pid" 2>/dev/null
    for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$NS" 2>/dev/null && echo "ddp-link: network namespace $NS deleted"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM HUP
ip netns add "$NS"
ip netns exec "$NS" ip link set lo mtu 1500 up

shape() { # rate: replace lo's root qdisc by tbf at that rate, or remove it
    ip netns exec "$NS" tc qdisc del dev lo root 2>/dev/null || true
    [ "$1" = unshaped ] && return 0
    n=${1%?bit}
    case $1 in *kbit) per_ms=$((n / 8));; *mbit) per_ms=$((n * 125));; *gbit) per_ms=$((n * 125000));; esac
    burst=$((per_ms > 16384 ? per_ms : 16384)) # a millisecond of the rate, at least 16 KiB
    ip netns exec "$NS" tc qdisc add dev lo root tbf rate "$1" burst "$burst" latency 50ms
}

rotate() { # k word...: comma-separated, the words from the k-th (mod their count) on, then the first ones
    rot=$(($1 % ($# - 1))); shift
    i=0; head=; tail=
    for m in "$@"; do
        if [ $i -lt $rot ]; then head="$head,$m"; else tail="$tail,$m"; fi
        i=$((i + 1))
    done
    echo "${tail#,}$head"
}

# ---- runs
if [ -f "$OUT/runs.csv" ]; then
    rm -rf "$OUT/previous"; mkdir -p "$OUT/previous"
    mv "$OUT/runs.csv" "$OUT/curves" "$OUT/log.txt" "$OUT/meta.txt" "$OUT/previous/" 2>/dev/null || true
fi
mkdir -p "$OUT"
# shellcheck disable=SC2086  # one word per item
nmethods=$(count $METHODS) nruns=$(( $(count $SEEDS) * $(count $WORLDS) * $(count $RATES) ))
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- python 2>/dev/null || echo ' (python/ modified)')"
    echo "torch: $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
    echo "cpus: $(nproc)"
    echo "settings: METHODS='$METHODS' RATES='$RATES' WORLDS='$WORLDS' SEEDS='$SEEDS' STEPS=$STEPS ARGS='$ARGS'"
    echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/meta.txt"
echo "ddp-link: $nruns runs of $nmethods methods x $STEPS steps in namespace $NS; log in $OUT/log.txt"
k=0
for seed in $SEEDS; do
    for W in $WORLDS; do
        for rate in $RATES; do
            shape "$rate"
            # shellcheck disable=SC2086  # METHODS: one word per method
            order=$(rotate "$k" $METHODS)
            k=$((k + 1))
            echo "ddp-link: [$k/$nruns] seed $seed, W = $W, $rate: $order ($(date '+%H:%M:%S'), load $(cut -d' ' -f1 /proc/loadavg))"
            echo "=== seed $seed W $W rate $rate: $order" >> "$OUT/log.txt"
            # a hang guard only: generous for 4 workers on 100 Mbit/s and a busy machine
            limit=$((600 + STEPS * nmethods * W * 2))
            # shellcheck disable=SC2086  # ARGS: several arguments on purpose
            ip netns exec "$NS" env GLOO_SOCKET_IFNAME=lo timeout "$limit" "$PY" python/train_ddp.py \
                --model cnn --workers "$W" --steps "$STEPS" --seed "$seed" --hooks "$order" --link "$rate" \
                --wire-bytes --out-dir "$OUT" $ARGS >> "$OUT/log.txt" 2>&1 &
            run_pid=$!
            rc=0; wait "$run_pid" || rc=$?
            run_pid=
            ip netns exec "$NS" tc -s qdisc show dev lo | sed -n 's/^ *Sent \(.*\)/  qdisc: sent \1/p' >> "$OUT/log.txt"
            if [ $rc -ne 0 ]; then
                echo "ddp-link: train_ddp.py failed (exit $rc); the end of $OUT/log.txt:" >&2
                tail -15 "$OUT/log.txt" >&2
                exit 1
            fi
        done
    done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.txt"
"$PY" tools/ddp_link_report.py "$OUT"
