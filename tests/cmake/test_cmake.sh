#!/bin/sh
# tests/cmake/test_cmake.sh - dqsgd taken in by a CMake project the three ways doc/EMBEDDING.md
# shows, in a temporary directory:
#   0. the repository as the top project: configure with DQSGD_BUILD_TESTS (its CTest tests
#      run), `cmake --install` into a prefix, which must hold the three headers (as in the
#      repository) and the package files, nothing else; the prefix is then moved (way 3 uses
#      it there: the package must be relocatable);
#   1. subdirectory   tests/cmake/consumer with add_subdirectory(<this checkout>);
#   2. fetchcontent   the same with FetchContent from an archive of the files the CMake build
#                     uses, with SIMDe hidden from find_path (CMAKE_IGNORE_PATH): a machine
#                     without SIMDe, which must get DQ_NO_SIMD and the scalar kernels;
#   3. package        the same with find_package(dqsgd MAJOR.MINOR CONFIG REQUIRED) from the
#                     prefix, built with -O2 -march=native where the compiler takes it: an FMA
#                     target on which GCC's GNU mode would fuse without the target's flag.
# Each way builds roundtrip.c as C and roundtrip.cpp as C++ and runs both: their own checks
# must pass, their digest (the bytes they produced) must equal that of roundtrip.c built
# directly as ISO C99 on the scalar reference, and with GCC their compile lines must carry
# -ffp-contract=off. Where MPI is installed (mpicc, mpirun), ways 1 and 3 also build
# mpi_allgather.c with dqsgd::mpi and run it on 2 ranks. Last, find_package's version check:
# while the major version is 0 only the same minor is accepted (tests/cmake/version).
# Every configure runs with -Werror=dev. Run from anywhere: sh tests/cmake/test_cmake.sh (part
# of `make test`; skipped with a note when cmake is missing). Environment: CC, CXX, MPIRUN.
# Ends with "N passed, M failed" (tests/run_all.sh counts it); exits non-zero on any failure.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
here=$repo/tests/cmake
pass=0
fail=0
ok() { echo "  ok    $1"; pass=$((pass + 1)); }
bad() { echo "  FAIL  $1"; fail=$((fail + 1)); }
# check OK-TEXT FAIL-TEXT COMMAND...: ok or bad by the command's status
check() {
    o=$1
    f=$2
    shift 2
    if "$@"; then ok "$o"; else bad "$f"; fi
}

if ! command -v cmake > /dev/null 2>&1; then
    echo "note: cmake not installed (Debian: cmake): the CMake package test is skipped"
    echo "0 passed, 0 failed"
    exit 0
fi
# cmake --build runs make: keep it out of a parent make's jobserver
unset MAKEFLAGS MFLAGS MAKELEVEL
# CMake takes its compilers from CC and CXX (which may carry arguments: CC="ccache gcc")
CC=${CC:-cc}
CXX=${CXX:-c++}
export CC CXX
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dq_cmake.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# run LABEL COMMAND...: output to $tmp/log; on failure a FAIL line and the log's end
run() {
    label=$1
    shift
    if "$@" > "$tmp/log" 2>&1; then return 0; fi
    bad "$label: $*"
    tail -n 25 "$tmp/log" | sed 's/^/        /'
    return 1
}
# configure LABEL ARGS...: cmake with -Werror=dev
configure() {
    label=$1
    shift
    run "$label" cmake -Werror=dev "$@"
}

version=$(sed -n 's/^#define DQSGD_VERSION_STRING "\([0-9]*\.[0-9]*\.[0-9]*\)"$/\1/p' "$repo/dqsgd.h")
major=${version%%.*}
minor=${version#*.}
minor=${minor%.*}
patch=${version##*.}
if [ -z "$version" ]; then
    bad "no DQSGD_VERSION_STRING \"X.Y.Z\" in dqsgd.h"
    echo "$pass passed, $fail failed"
    exit 1
fi
echo "  dqsgd $version, $(cmake --version | head -n 1)"

# The reference digest: roundtrip.c as ISO C99 on the scalar reference, no CMake involved
# shellcheck disable=SC2086  # CC may carry flags
if run "reference build" $CC -std=c99 -DDQ_NO_SIMD -I"$repo" "$here/consumer/roundtrip.c" -o "$tmp/reference" -lm &&
   run "reference run" "$tmp/reference"; then
    reference=$(sed -n 's/^digest //p' "$tmp/log")
fi
reference=${reference:-none}

# -march=native where the compiler takes it (for way 3); MPI where it is installed
native=""
if echo 'int main(void) { return 0; }' > "$tmp/t.c" && $CC -march=native -c "$tmp/t.c" -o "$tmp/t.o" 2> /dev/null; then
    native="-march=native"
fi
mpi=OFF
if command -v mpicc > /dev/null 2>&1 && command -v mpirun > /dev/null 2>&1; then
    mpi=ON
    root_flag=""
    [ "$(id -u)" = 0 ] && root_flag="--allow-run-as-root"
    MPIRUN=${MPIRUN:-mpirun --oversubscribe $root_flag}
else
    echo "  note: mpicc or mpirun not installed: the dqsgd::mpi builds are skipped"
fi

# 0. the top project: tests, install, the installed tree
prefix=$tmp/prefix
top=$tmp/top
if configure "top: configure" -S "$repo" -B "$top" -DDQSGD_BUILD_TESTS=ON -DDQSGD_MPI=$mpi &&
   run "top: build the CTest tests" cmake --build "$top" --parallel 2 &&
   run "top: ctest" ctest --test-dir "$top" --output-on-failure; then
    ok "top project: DQSGD_BUILD_TESTS builds, $(grep -c 'Test *#' "$tmp/log") CTest tests pass"
fi
simde_dir=$(sed -n 's/^DQSGD_SIMDE_INCLUDE_DIR:PATH=//p' "$top/CMakeCache.txt" 2> /dev/null)
case $simde_dir in *NOTFOUND | "") simde_dir="" ;; esac
[ -n "$simde_dir" ] || echo "  note: SIMDe not found: every way builds the scalar kernels"
# installed in one place and used from another: the package must be relocatable
if run "top: install" cmake --install "$top" --prefix "$tmp/installed" && mv "$tmp/installed" "$prefix"; then
    want="include/dqsgd.h include/dqsgd_mpi.h include/dqsgd_simd.h"
    for f in dqsgdConfig.cmake dqsgdConfigVersion.cmake $([ $mpi = ON ] && echo dqsgdMpiTargets.cmake) \
        dqsgdSimde.cmake dqsgdTargets.cmake; do
        want="$want share/cmake/dqsgd/$f"
    done
    got=$(cd "$prefix" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ')
    if [ "$got" = "$want " ]; then
        ok "cmake --install: the headers and the package files, nothing else"
    else
        bad "cmake --install: installed [$got], expected [$want ]"
    fi
    same=1
    for h in dqsgd.h dqsgd_simd.h dqsgd_mpi.h; do cmp -s "$repo/$h" "$prefix/include/$h" || same=0; done
    check "cmake --install: the headers are the repository's" \
        "cmake --install: an installed header differs from the repository's" [ $same = 1 ]
fi

# 1-3. the consumer, one build directory per way
tar -C "$repo" -czf "$tmp/dqsgd.tar.gz" CMakeLists.txt cmake dqsgd.h dqsgd_simd.h dqsgd_mpi.h
for way in subdirectory fetchcontent package; do
    b=$tmp/$way
    flags=""
    backend=simd
    way_mpi=$mpi
    case $way in
    subdirectory) set -- -DDQSGD_SOURCE="$repo" ;;
    fetchcontent)
        set -- -DDQSGD_SOURCE="$tmp/dqsgd.tar.gz" ${simde_dir:+-DCMAKE_IGNORE_PATH="$simde_dir"}
        backend=scalar
        way_mpi=OFF
        ;;
    package)
        set -- -DDQSGD_WANT="$major.$minor" -DCMAKE_PREFIX_PATH="$prefix"
        flags="-O2${native:+;$native}"
        ;;
    esac
    [ -n "$simde_dir" ] || backend=scalar
    configure "$way: configure" -S "$here/consumer" -B "$b" -DDQSGD_WAY=$way -DCONSUMER_MPI=$way_mpi \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DROUNDTRIP_OPTIONS="$flags" "$@" || continue
    gnu_c=0
    gnu_cxx=0
    grep -q '^-- The C compiler identification is GNU' "$tmp/log" && gnu_c=1
    grep -q '^-- The CXX compiler identification is GNU' "$tmp/log" && gnu_cxx=1
    if [ $backend = scalar ] && [ -n "$simde_dir" ]; then
        check "$way: without SIMDe, configure says so" "$way: configure without SIMDe printed no 'SIMDe not found'" \
            grep -q 'SIMDe not found' "$tmp/log"
    fi
    run "$way: build" cmake --build "$b" --parallel 2 || continue
    for lang in c cxx; do
        if [ $lang = c ]; then
            what="$way, C" src=roundtrip.c gnu=$gnu_c
        else
            what="$way, C++" src=roundtrip.cpp gnu=$gnu_cxx
        fi
        line=$(grep -F "/$src\"" "$b/compile_commands.json" | grep '"command"')
        if [ $gnu = 1 ]; then
            case $line in
            *" -ffp-contract=off "*) ok "$what: GCC compiles with -ffp-contract=off" ;;
            *) bad "$what: no -ffp-contract=off on the GCC line: $line" ;;
            esac
        fi
        run "$what: run" "$b/roundtrip_$lang" || continue
        out=$(cat "$tmp/log")
        got_backend=$(echo "$out" | sed -n 's/^backend //p')
        got_digest=$(echo "$out" | sed -n 's/^digest //p')
        got_version=$(echo "$out" | sed -n 's/^version //p')
        if [ "$got_digest" = "$reference" ] && [ "$got_version" = "$version" ]; then
            ok "$what: round trip checked, the reference's bytes ($got_backend kernels)"
        else
            bad "$what: digest $got_digest, version $got_version; the reference: $reference, $version"
        fi
        case $backend:$got_backend in
        scalar:scalar) ok "$what: DQ_NO_SIMD reached the compiler" ;;
        scalar:*) bad "$what: kernels $got_backend, expected scalar (DQ_NO_SIMD)" ;;
        simd:scalar)
            case $(uname -m) in
            x86_64 | amd64 | aarch64 | arm64) bad "$what: scalar kernels although SIMDe is in $simde_dir" ;;
            *) echo "  note: $what: scalar kernels: no SIMD backend for $(uname -m)" ;;
            esac
            ;;
        simd:*) ok "$what: SIMDe reached the compiler ($got_backend kernels)" ;;
        esac
    done
    if [ $way_mpi = ON ]; then
        # shellcheck disable=SC2086  # MPIRUN is a command with its flags
        if run "$way: dqsgd::mpi on 2 ranks" timeout 120 $MPIRUN -np 2 "$b/mpi_allgather"; then
            if [ "$(grep -c ': ok$' "$tmp/log")" = 2 ]; then
                ok "$way: dqsgd::mpi builds, both ranks get the rank-order sum"
            else
                bad "$way: dqsgd::mpi: $(tr '\n' ' ' < "$tmp/log")"
            fi
        fi
    fi
done

# find_package's version check against the installed package
accept="$major.$minor $major.$minor.$patch"
reject="$major.$minor.$((patch + 1)) $major.$((minor + 1)) $((major + 1)).0"
if [ "$minor" -gt 0 ]; then
    if [ "$major" = 0 ]; then reject="$reject $major.$((minor - 1))"; else accept="$accept $major.$((minor - 1))"; fi
fi
probes=$(echo "$accept $reject" | tr ' ' ';')
if configure "version probe: configure" -S "$here/version" -B "$tmp/version" -DCMAKE_PREFIX_PATH="$prefix" \
    -DPROBE_VERSIONS="$probes"; then
    for v in $accept; do
        check "find_package(dqsgd $v): found" "find_package(dqsgd $v) did not find $version" \
            grep -q "^-- probe $v: found$" "$tmp/log"
    done
    for v in $reject; do
        check "find_package(dqsgd $v): $version refused" "find_package(dqsgd $v) accepted $version" \
            grep -q "^-- probe $v: not found$" "$tmp/log"
    done
    check "find_package(dqsgd COMPONENTS nosuch): refused" "find_package(dqsgd COMPONENTS nosuch) was found" \
        grep -q '^-- probe component nosuch: not found$' "$tmp/log"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
