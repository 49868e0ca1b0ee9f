#!/bin/sh
# tests/readme_example.sh - the README's example is a complete program that a newcomer can paste.
#   1. the first ```c block of README.md is byte for byte examples/minimal.c (they cannot drift);
#   2. pasted as ex.c next to the headers in a temporary directory, it builds with the plain
#      `${CC:-cc} -I. ex.c -lm`, and with -std=c99 -Wall -Wextra -Wpedantic -Werror under gcc and
#      clang (each skipped with a note when not installed);
#   3. every build runs, exits 0 and prints a "relative error:" line.
# Run from the repository root: sh tests/readme_example.sh (part of `make test`). Environment: CC.
# Ends with "N passed, M failed" (tests/run_all.sh counts it); exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.." || exit 1
CC=${CC:-cc}
STRICT="-std=c99 -Wall -Wextra -Wpedantic -Werror"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "  FAIL: $*"; fail=$((fail + 1)); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dq_readme.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# 1. the first ```c block (fence lines excluded); fails when there is none or it is not closed
if awk '!f && /^```c[[:space:]]*$/ { f = 1; next }
        f && /^```[[:space:]]*$/ { done = 1; exit }
        f { print }
        END { exit done ? 0 : 1 }' README.md > "$tmp/ex.c" && [ -s "$tmp/ex.c" ]; then
    ok
else
    bad "README.md has no complete \`\`\`c block"
fi
if cmp -s "$tmp/ex.c" examples/minimal.c; then
    ok
else
    bad "README.md's first \`\`\`c block differs from examples/minimal.c:"
    diff -u examples/minimal.c "$tmp/ex.c" | sed 's/^/    /'
fi

# 2-3. a newcomer's directory: ex.c beside the library's headers
cp dqsgd*.h "$tmp/" || bad "copying the headers"

# build_run LABEL COMPILER [FLAGS...]: build ex.c in $tmp, run it, check exit status and output
build_run() {
    label=$1
    shift
    bin=ex_$(echo "$label" | tr -c 'A-Za-z0-9_\n' '_')
    if (cd "$tmp" && "$@" -I. ex.c -o "$bin" -lm) > "$tmp/cc.log" 2>&1; then
        ok
    else
        bad "$label: build failed ($* -I. ex.c -lm)"
        sed 's/^/    /' "$tmp/cc.log"
        fail=$((fail + 1)) # the run cannot pass either
        return
    fi
    (cd "$tmp" && "./$bin") > "$tmp/run.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^relative error: ' "$tmp/run.log"; then
        ok
    else
        bad "$label: the program exited $rc or printed no \"relative error:\" line"
        sed 's/^/    /' "$tmp/run.log"
    fi
}

# shellcheck disable=SC2086  # CC may carry flags (CC="ccache gcc")
build_run "$CC" $CC
for c in gcc clang; do
    if command -v "$c" > /dev/null 2>&1; then
        # shellcheck disable=SC2086  # STRICT is a list of flags
        build_run "$c strict" "$c" $STRICT
    else
        echo "  note: $c not installed; its strict build is skipped"
    fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
