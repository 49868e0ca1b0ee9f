#!/bin/sh
# tests/hook/test_install.sh - the Python package installs as doc/PYTHON.md says, and works.
# The doc's install blocks are read from it (the fenced block after `<!-- install: packages -->`
# and after `<!-- install: commands -->`), so the doc and this test cannot drift:
#   - every Debian package the first block names is installed (make's hook-deps installs them);
#   - the commands of the second run as written, by sh -e, in a copy of the checkout, with a
#     temporary directory as $HOME and Debian's python3 first on PATH;
#   - from another directory and without DQSGD_LIB, the installed dqsgd loads the library
#     installed beside it, round-trips a message, leaves sys.path alone, and dqsgd.ddp imports;
#     `pip show -f dqsgd` lists the dqsgd package and its dist-info only, with every kernel
#     level's library; tests/python/test_isa.py (same bytes on every level, the loader, the CPU
#     probe) runs with the installed package; under qemu-x86_64, CPUs without AVX-512 or AVX
#     load avx2 and sse2 and write the same bytes;
#   - with INSTALL_TEST_ALL=1 (make check), the doc's other claims: DQSGD_NATIVE=1 builds and
#     loads one -march=native library; `pip install --user` stops on PEP 668; a venv without the
#     system's packages stops with "invalid command 'bdist_wheel'".
# Run by make hook-test and make test; prints "N passed, M failed".
repo=$(cd "$(dirname "$0")/../.." && pwd)
doc=$repo/doc/PYTHON.md
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "  ok    $1"; pass=$((pass + 1)); }
bad() { echo "  FAIL  $1"; fail=$((fail + 1)); }
# block NAME: the lines of the first fenced block after the mark `<!-- install: NAME -->`
block() {
    awk -v mark="<!-- install: $1 -->" '$0 == mark { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        found && inside { print }' "${2:-$doc}"
}
# As on a fresh Debian: its python3 first on PATH, no pip configuration, no dqsgd variables.
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
for v in $(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export PIP_CONFIG_FILE=/dev/null
unset DQSGD_LIB DQSGD_ISA DQSGD_NATIVE PYTHONPATH

# 1. the packages
pkgs=$(block packages | sed -n 's/.*apt-get install //p')
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$pkgs" ] && [ -z "$missing" ]; then ok "the doc's Debian packages are installed: $pkgs"
else bad "the doc's Debian packages: '${pkgs:-no apt-get install line}', missing:$missing"; fi

# 1b. README.md's short form: the doc's apt line and install commands, word for word
readme_block=$(block readme "$repo/README.md")
doc_short=$(block packages; block commands | grep -v ' -c ')
if [ -n "$readme_block" ] && [ "$readme_block" = "$doc_short" ]; then ok "README.md's install block is the doc's"
else bad "README.md's install block (<!-- install: readme -->) differs from doc/PYTHON.md's blocks"; fi

# 2. the commands, as written, in a copy of the checkout (the build writes build/ and *.egg-info there)
cmds=$(block commands)
mkdir "$tmp/src" && cp -r "$repo/pyproject.toml" "$repo/setup.py" "$repo/README.md" "$repo/dqsgd.h" \
    "$repo/dqsgd_simd.h" "$repo/python" "$tmp/src/" && rm -rf "$tmp/src/python/__pycache__" "$tmp/src/python/dqsgd/__pycache__"
t0=$(date +%s)
if [ -n "$cmds" ] && (cd "$tmp/src" && HOME="$tmp" sh -e -c "$cmds") > "$tmp/install.log" 2>&1; then
    ok "the doc's install commands ($(echo "$cmds" | wc -l) lines, $(($(date +%s) - t0)) s)"
else
    bad "the doc's install commands failed: $(tail -3 "$tmp/install.log" | tr '\n' ' ')"
fi
version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$repo/pyproject.toml")
case $(tail -1 "$tmp/install.log") in
"$version "*) ok "the doc's check prints the version ($(tail -1 "$tmp/install.log"))" ;;
*) bad "the doc's check printed '$(tail -1 "$tmp/install.log")', not the version $version and a level" ;;
esac

# 3. the installed package, from another directory
py=$tmp/.venvs/dqsgd/bin/python
out=$(cd "$tmp" && "$py" -c '
import os, sys
import numpy as np
path = list(sys.path)
import dqsgd, dqsgd.ddp
print("syspath", sys.path == path)
site = os.path.dirname(dqsgd.__file__)
print("lib", dqsgd.lib_path.startswith(site + os.sep) and dqsgd.lib_level == dqsgd.cpu_levels()[-1])
x = np.linspace(-1, 1, 5000, dtype=np.float32)
m = dqsgd.encode(x, bits=8, rounding="nearest", norm="max")  # error <= max/254
print("roundtrip", bool(np.max(np.abs(dqsgd.decode(m) - x)) <= 1.001 / 254))
print("hook", dqsgd.ddp.dqsgd_hook.__module__ == "dqsgd.ddp" and site.endswith("site-packages" + os.sep + "dqsgd"))
' 2>&1)
for what in syspath lib roundtrip hook; do
    case $out in
    *"$what True"*) ok "installed package, run elsewhere: $what" ;;
    *) bad "installed package, run elsewhere: $what: $(echo "$out" | tail -1)" ;;
    esac
done
files=$(cd "$tmp" && "$py" -m pip show -f dqsgd 2>&1)
listed=$(echo "$files" | sed -n '/^Files:/,$p' | sed 1d | sed 's/^ *//')
stray=$(echo "$listed" | grep -v -e '^dqsgd/' -e "^dqsgd-$version\\.dist-info/")
levels=""
case $(uname -m) in x86_64 | amd64) levels="scalar sse2 avx2 avx512" ;; *) levels="default" ;; esac
nolib=""
for l in $levels; do echo "$listed" | grep -q "^dqsgd/_dqsgd_capi_$l\\..*\\.so$" || nolib="$nolib $l"; done
if echo "$files" | grep -q "^Version: $version$" && [ -z "$stray" ] && [ -z "$nolib" ] &&
   echo "$listed" | grep -q '^dqsgd/__init__.py$' && echo "$listed" | grep -q '^dqsgd/ddp.py$'; then
    ok "pip show -f dqsgd: version $version, the dqsgd package only, libraries: $levels"
else
    bad "pip show -f dqsgd: stray files: $stray; missing levels:$nolib; $(echo "$files" | head -3 | tr '\n' ' ')"
fi
isa=$(cd "$tmp" && "$py" "$repo/tests/python/test_isa.py" 2>&1)
echo "$isa" | grep -v '^[0-9]* passed, '
p=$(echo "$isa" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p'); f=$(echo "$isa" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
if [ -n "$p" ]; then pass=$((pass + p)); fail=$((fail + f)); else bad "test_isa.py printed no result"; fi

# 3b. other CPUs, emulated by qemu-x86_64 (qemu-user; skipped without it): one without AVX
# (Nehalem) and one with AVX2 but no AVX-512 (Haswell) load sse2 and avx2, write the bytes this
# CPU writes, and refuse a level they lack
digest='
import hashlib, numpy as np, dqsgd
x = np.random.default_rng(5).standard_normal(50000).astype(np.float32)
h = hashlib.sha256()
for kw in (dict(bits=4), dict(bits=2, coder="rans", rounding="nearest", norm="max"), dict(bits=8, coder="elias")):
    r = np.full_like(x, 0.01)
    m = dqsgd.encode(x, seed=3, step=1, stream=2, residual=r, **kw)
    h.update(bytes(m)); h.update(r.tobytes()); h.update(dqsgd.decode(m).tobytes())
print(dqsgd.lib_level, h.hexdigest())'
if command -v qemu-x86_64 > /dev/null && [ "$(uname -m)" = x86_64 ]; then
    here=$(cd "$tmp" && "$py" -c "$digest" 2>&1 | tail -1)
    for cpu in Nehalem:sse2 Haswell-noTSX:avx2; do
        got=$(cd "$tmp" && qemu-x86_64 -cpu "${cpu%%:*}" "$py" -c "$digest" 2>&1 | tail -1)
        if [ "$got" = "${cpu#*:} ${here#* }" ]; then ok "a ${cpu%%:*} CPU (qemu): ${cpu#*:} loaded, the bytes of this CPU's ${here%% *}"
        else bad "a ${cpu%%:*} CPU (qemu): '$got', this CPU: '$here'"; fi
    done
    got=$(cd "$tmp" && DQSGD_ISA=avx2 qemu-x86_64 -cpu Nehalem "$py" -c "import dqsgd" 2>&1 | tail -1)
    case $got in
    *"does not run the avx2 level"*) ok "a Nehalem CPU (qemu): DQSGD_ISA=avx2 refused" ;;
    *) bad "a Nehalem CPU (qemu): DQSGD_ISA=avx2: $got" ;;
    esac
else
    echo "note: qemu-x86_64 (qemu-user) not installed: the package was not run on emulated CPUs"
fi

# 4. the doc's other claims, under make check (INSTALL_TEST_ALL=1; 20 s of CPU that make test
# leaves out): DQSGD_NATIVE=1 builds one -march=native library, which is loaded; --user stops
# on PEP 668; a venv without the system's packages stops at bdist_wheel
native_check='
import numpy as np, dqsgd
x = np.linspace(-1, 1, 5000, dtype=np.float32)
ok = bool(np.max(np.abs(dqsgd.decode(dqsgd.encode(x, bits=8, rounding="nearest", norm="max")) - x)) <= 1.001 / 254)
print(dqsgd.lib_level, sorted(dqsgd._packaged()), dqsgd.simd_backend() == dqsgd.cpu_levels()[-1], ok)'
if [ "${INSTALL_TEST_ALL:-0}" = 1 ]; then
    if (cd "$tmp/src" && HOME="$tmp" DQSGD_NATIVE=1 "$tmp/.venvs/dqsgd/bin/pip" install --no-build-isolation \
            --no-index .) > "$tmp/native.log" 2>&1; then
        out=$(cd "$tmp" && "$py" -c "$native_check" 2>&1)
        case $out in
        "native ['native'] True True") ok "DQSGD_NATIVE=1: one library, native, loaded, with the best kernels here" ;;
        *) bad "DQSGD_NATIVE=1: $(echo "$out" | tail -1)" ;;
        esac
    else bad "DQSGD_NATIVE=1 install failed: $(tail -1 "$tmp/native.log")"; fi
    if [ -e /usr/lib/python3.11/EXTERNALLY-MANAGED ] && python3 -m pip --version > /dev/null 2>&1; then
        if (cd "$tmp/src" && python3 -m pip install --user --no-build-isolation --no-index .) > "$tmp/user.log" 2>&1; then
            bad "pip install --user succeeded (the doc says PEP 668 stops it)"
        elif grep -q "externally-managed-environment" "$tmp/user.log"; then
            ok "pip install --user stops with externally-managed-environment"
        else bad "pip install --user failed otherwise: $(tail -1 "$tmp/user.log")"; fi
    fi
    if python3 -m venv "$tmp/plain" && (cd "$tmp/src" && "$tmp/plain/bin/pip" install --no-build-isolation \
            --no-index .) > "$tmp/plain.log" 2>&1; then
        bad "a venv without the system's packages installed the package (the doc says it stops)"
    elif grep -q "invalid command 'bdist_wheel'" "$tmp/plain.log"; then
        ok "a venv without the system's packages stops with invalid command 'bdist_wheel'"
    else bad "a venv without the system's packages failed otherwise: $(tail -1 "$tmp/plain.log")"; fi
else
    echo "note: the doc's DQSGD_NATIVE=1, --user and plain-venv claims are checked by make check"
fi
echo "$pass passed, $fail failed (install)"
[ $fail -eq 0 ]
