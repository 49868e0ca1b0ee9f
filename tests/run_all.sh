#!/bin/sh
# Run test binaries, each ending with a line "N passed, M failed"; print the totals last.
# An argument may carry its own arguments ('bin dir'): it is split on spaces.
# DQ_TEST_WRAPPER (e.g. valgrind) is put in front of every binary.
pass=0; fail=0; broken=0
for t in "$@"; do
    # shellcheck disable=SC2086  # $t may be "binary args": split on purpose
    out=$(${DQ_TEST_WRAPPER:-} $t 2>&1); rc=$?
    printf '%s\n' "$out" | grep -v ' passed, ' || true
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    if [ -z "$p" ] || [ $rc -ne 0 ] && [ "${f:-0}" = 0 ]; then
        echo "FAIL $t: exit $rc without a result line"; broken=$((broken + 1)); f=${f:-0}; p=${p:-0}
    fi
    case $t in
    "timeout "*) label=$(echo "$t" | cut -d' ' -f3-) ;; # a command line: show it without the timeout
    "sh "*) label=$(basename "$(echo "$t" | cut -d' ' -f2)") ;; # a test script: its name
    *) label=$(basename "${t%% *}") ;;
    esac
    echo "  $label: $p passed, $f failed"
    pass=$((pass + p)); fail=$((fail + f))
done
fail=$((fail + broken))
echo "total: $pass passed, $fail failed"
[ $fail -eq 0 ]
