#!/bin/sh
# The headers must give the same bytes whatever the user's contraction flag (doc/API.md,
# Determinism): every product sits in its own statement, so clang's default -ffp-contract=on,
# which fuses a*b+c within one expression even in ISO mode, finds nothing to fuse. This builds
# every public function (python/dqsgd_capi.c exports them all; tests/mpi/mpi_capi.c the MPI
# ones when mpicc is there) with clang at its default contraction for FMA targets, as C and
# C++, and fails on any fused multiply-add in the object code, naming the source line.
# Only the object code is read, so the CPU need not run AVX-512.
# Prints "N passed, M failed" (tests/run_all.sh counts it).
CLANG=${CLANG:-clang}
pass=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! command -v "$CLANG" >/dev/null 2>&1 || ! command -v objdump >/dev/null 2>&1; then
    echo "contraction_audit: needs $CLANG and objdump"; echo "0 passed, 1 failed"; exit 1
fi
# audit FILE COMMAND...: compile (output to $tmp/a.o); 0 clean, 1 fused (lines in $tmp/fused), 2 no build
audit() {
    "$@" -c -g -o "$tmp/a.o" 2>"$tmp/err" || { cat "$tmp/err"; return 2; }
    objdump -dl "$tmp/a.o" | awk '/^\//{src=$1} /[ \t]vfn?m(add|sub)[0-9a-z]*[ \t]/{print src}' | sort | uniq -c >"$tmp/fused"
    [ ! -s "$tmp/fused" ]
}
check() { # name, then the compile command
    name=$1; shift
    audit "$@"; rc=$?
    case $rc in
    0) pass=$((pass + 1)) ;;
    1) echo "FAIL $name: fused multiply-add at (count, source line):"; cat "$tmp/fused"; fail=$((fail + 1)) ;;
    *) echo "FAIL $name: does not compile"; fail=$((fail + 1)) ;;
    esac
}
for march in x86-64-v3 x86-64-v4; do
    for opt in -O1 -O3; do
        check "clang C $march $opt" "$CLANG" -std=c99 $opt -march=$march -fPIC -I. python/dqsgd_capi.c
    done
    check "clang C++ $march -O2" "$CLANG" -x c++ -std=c++11 -O2 -march=$march -fPIC -I. python/dqsgd_capi.c
done
if command -v mpicc >/dev/null 2>&1; then
    mpi_inc=$(mpicc --showme:compile 2>/dev/null)
    # shellcheck disable=SC2086  # the wrapper's flags, split on purpose
    check "clang C dqsgd_mpi.h x86-64-v3 -O2" "$CLANG" -std=c99 -O2 -march=x86-64-v3 -fPIC -I. $mpi_inc tests/mpi/mpi_capi.c
fi
# The audit must be able to fail: a*b+c in one statement is fused.
printf 'double f(double a, double b, double c);\ndouble f(double a, double b, double c) { return a * b + c; }\n' >"$tmp/probe.c"
if audit "$CLANG" -std=c99 -O2 -march=x86-64-v3 "$tmp/probe.c"; then
    echo "FAIL probe: a*b+c in one statement was not found fused"; fail=$((fail + 1))
else
    pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
