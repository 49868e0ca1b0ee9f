#!/bin/sh
# Run test binaries, each ending with a line "N passed, M failed"; print the totals last.
# An argument may carry its own arguments ('bin dir'): it is split on spaces.
# DQ_TEST_WRAPPER (e.g. valgrind) is put in front of every binary.
# DQ_TEST_JOBS=N runs up to N test binaries at once (default 1). Scripts and command lines
# ('sh ...', 'timeout ...': MPI ranks, the PyTorch hook, builds) start multiple processes or
# measure time, so each runs alone. Results are printed in the order of the arguments.
jobs=${DQ_TEST_JOBS:-1}
pass=0; fail=0; broken=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

alone() { case $1 in "sh "* | "timeout "*) return 0 ;; *) return 1 ;; esac; }

# Runs entry {} (a line of $DQ_RUN_ALL_TMP/list) into {}.out there, then writes its status and
# seconds to {}.rc.
RUN='t=$(sed -n "{}p" "$DQ_RUN_ALL_TMP/list"); s=$(date +%s)
${DQ_TEST_WRAPPER:-} $t > "$DQ_RUN_ALL_TMP/{}.out" 2>&1
echo $? $(( $(date +%s) - s )) > "$DQ_RUN_ALL_TMP/{}.rc.part" && mv "$DQ_RUN_ALL_TMP/{}.rc.part" "$DQ_RUN_ALL_TMP/{}.rc"'
export DQ_RUN_ALL_TMP="$tmp"

report() { # $1: the entry, $2: its output file, $3: its exit status and seconds
    t=$1; rc=${3%% *}; secs=${3#* }
    grep -v ' passed, ' "$2" || true
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    if [ -z "$p" ] || [ "$rc" -ne 0 ] && [ "${f:-0}" = 0 ]; then
        echo "FAIL $t: exit $rc without a result line"; broken=$((broken + 1)); f=${f:-0}; p=${p:-0}
    fi
    case $t in
    "timeout "*) label=$(echo "$t" | cut -d' ' -f3-) ;; # a command line: show it without the timeout
    "sh "*) label=$(basename "$(echo "$t" | cut -d' ' -f2)") ;; # a test script: its name
    *) label=$(basename "${t%% *}") ;;
    esac
    echo "  $label: $p passed, $f failed ($secs s)"
    pass=$((pass + p)); fail=$((fail + f))
}

i=0
for t in "$@"; do i=$((i + 1)); printf '%s\n' "$t"; done > "$tmp/list"
count=$i
i=1
while [ $i -le $count ]; do
    t=$(sed -n "${i}p" "$tmp/list")
    if [ "$jobs" -le 1 ] || alone "$t"; then
        echo $i | xargs -I{} sh -c "$RUN"
        report "$t" "$tmp/$i.out" "$(cat "$tmp/$i.rc")"
        i=$((i + 1)); continue
    fi
    # A run of binaries from i on: started jobs at a time, reported in order as each ends.
    j=$i
    while [ $j -le $count ] && ! alone "$(sed -n "${j}p" "$tmp/list")"; do j=$((j + 1)); done
    seq $i $((j - 1)) | xargs -P "$jobs" -I{} sh -c "$RUN" &
    pool=$!
    while [ $i -lt $j ]; do
        while [ ! -f "$tmp/$i.rc" ]; do
            if ! kill -0 $pool 2>/dev/null && [ ! -f "$tmp/$i.rc" ]; then echo 1 0 > "$tmp/$i.rc"; fi
            sleep 0.2
        done
        report "$(sed -n "${i}p" "$tmp/list")" "$tmp/$i.out" "$(cat "$tmp/$i.rc")"
        i=$((i + 1))
    done
    wait $pool
done
fail=$((fail + broken))
echo "total: $pass passed, $fail failed"
[ $fail -eq 0 ]
