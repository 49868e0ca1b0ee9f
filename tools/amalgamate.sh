#!/bin/sh
# tools/amalgamate.sh - writes the two shipped headers, dqsgd.h and dqsgd_simd.h, from the
# library's parts under src/: each header is its parts, listed in src/<header>.parts, joined
# in that order, byte for byte. Users drop in the one generated file; the parts are where the
# code is edited (`make headers` runs this). First it has tools/kernels.sh write the kernel
# selection of src/select.h from the kernel list there.
#
#   sh tools/amalgamate.sh           regenerate the selection and both headers in place
#   sh tools/amalgamate.sh --check   regenerate into a temporary directory and compare: exit 1,
#                                    naming the file, when the selection or a committed header
#                                    is not what the parts give (part of `make test`; prints a
#                                    result line)
#
# Run from anywhere; paths are relative to the repository root.
set -u
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
check=0
[ "${1:-}" = "--check" ] && check=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dq_amalg.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
if [ $check = 1 ]; then
    if out=$(sh "$root/tools/kernels.sh" --check); then
        pass=$((pass + 1))
    else
        printf '%s\n' "$out" | grep -v ' passed, '
        fail=$((fail + 1))
    fi
else
    sh "$root/tools/kernels.sh" || exit 2
fi
for header in dqsgd.h dqsgd_simd.h; do
    list="$root/src/$header.parts"
    if [ ! -f "$list" ]; then
        echo "amalgamate: $list is missing" >&2
        exit 2
    fi
    : > "$tmp/$header"
    # one part name a line; blank lines and lines starting with # are comments
    for part in $(sed -e 's/#.*//' "$list"); do
        if [ ! -f "$root/src/$part" ]; then
            echo "amalgamate: $header: part src/$part is missing" >&2
            exit 2
        fi
        cat "$root/src/$part" >> "$tmp/$header"
    done
    if [ $check = 1 ]; then
        if cmp -s "$tmp/$header" "$root/$header"; then
            pass=$((pass + 1))
        else
            echo "  FAIL: $header is not what src/ gives (run \`make headers\` and commit it):"
            diff "$root/$header" "$tmp/$header" | head -20
            fail=$((fail + 1))
        fi
    else
        cmp -s "$tmp/$header" "$root/$header" || cp "$tmp/$header" "$root/$header"
    fi
done
if [ $check = 1 ]; then
    echo "$pass passed, $fail failed (kernel selection and headers from src/)"
    [ $fail = 0 ]
fi
