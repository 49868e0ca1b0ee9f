#!/bin/sh
# tools/kernels.sh - writes the kernel selection of src/select.h from the kernel list in the same
# part: for each row "family kernel kernel ...", the binding of dq__k_<family> to the first kernel
# the build compiles in (else the scalar twin dq__<family>__scalar), and DQ__KERNELS_<family>(X),
# the list of the kernels compiled in (the tests' tables); before them, a 0 default for every
# flag the list names. The list is the rows between the two dashed lines of its comment; the
# selection is what lies between the lines "the selection, generated ..." and "end of the
# generated selection".
#
#   sh tools/kernels.sh           rewrite the selection in place
#   sh tools/kernels.sh --check   compare only: exit 1, printing the difference, when the
#                                 selection is not what the list gives
#
# tools/amalgamate.sh runs it first (so `make headers` and its check in `make test` cover it).
set -u
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
part="$root/src/select.h"
tmp=$(mktemp "${TMPDIR:-/tmp}/dq_kernels.XXXXXX") || exit 2
trap 'rm -f "$tmp"' EXIT
awk '
function flag_of(k,    i) {
    i = index(k, "/")
    return i ? substr(k, i + 1) : "DQ__HAS_" toupper(k) "_KERNELS"
}
function isa_of(k,    i) {
    i = index(k, "/")
    return i ? substr(k, 1, i - 1) : k
}
function emit(    r, f, j, k, nf, seen, fam, line) {
    nf = 0
    for (r = 1; r <= rows; r++)
        for (j = 1; j <= nk[r]; j++) {
            f = flag_of(kern[r, j])
            if (!(f in seen)) { seen[f] = 1; flags[++nf] = f }
        }
    for (j = 1; j <= nf; j++) printf "#ifndef %s\n#define %s 0\n#endif\n", flags[j], flags[j]
    for (r = 1; r <= rows; r++) {
        fam = family[r]
        for (j = 1; j <= nk[r]; j++)
            printf "#%s %s\n#define dq__k_%s dq__%s__%s\n", j == 1 ? "if" : "elif", flag_of(kern[r, j]), fam, fam,
                   isa_of(kern[r, j])
        if (nk[r]) printf "#else\n"
        printf "#define dq__k_%s dq__%s__scalar\n", fam, fam
        if (nk[r]) printf "#endif\n"
        line = "#define DQ__KERNELS_" fam "(X)"
        for (j = 1; j <= nk[r]; j++) {
            printf "%s \\\n", line
            line = "    DQ__WHEN(" flag_of(kern[r, j]) ", X, " fam ", " isa_of(kern[r, j]) ")"
        }
        printf "%s\n", line
    }
}
state == 0 && /kernel list/ { state = 1 }
state == 1 && /^ \* -----/ { state = 2; print; next }
state == 2 && /^ \* -----/ { state = 3 }
state == 2 {
    if ($2 == "family") { print; next }
    rows++
    family[rows] = $2
    nk[rows] = 0
    for (i = 3; i <= NF && $i != "--"; i++) kern[rows, ++nk[rows]] = $i
}
state == 3 && /the selection, generated from the kernel list/ { print; emit(); state = 4; next }
state == 4 && /end of the generated selection/ { state = 5 }
state == 4 { next }
{ print }
END {
    if (state != 5) { print "kernels.sh: src/select.h lacks the kernel list or the selection markers" > "/dev/stderr"; exit 2 }
}
' "$part" > "$tmp" || exit 2
if [ "${1:-}" = "--check" ]; then
    if cmp -s "$tmp" "$part"; then
        echo "1 passed, 0 failed (kernel selection from the kernel list)"
        exit 0
    fi
    echo "  FAIL: src/select.h: the selection is not what the kernel list gives (run \`make headers\`):"
    diff "$part" "$tmp" | head -20
    echo "0 passed, 1 failed (kernel selection from the kernel list)"
    exit 1
fi
cmp -s "$tmp" "$part" || cp "$tmp" "$part"
