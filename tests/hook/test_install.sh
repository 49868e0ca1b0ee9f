#!/bin/sh
# tests/hook/test_install.sh - the Python package installs offline and works outside the
# repository: a venv over the system's packages (Debian's setuptools, numpy and torch), pip
# install --no-index --no-build-isolation of the repository (pyproject.toml + setup.py build
# the shared library), then, from another directory and without DQSGD_LIB, dqsgd must load the
# installed library and round-trip a message, and dqsgd.ddp must import.
# Run by make hook-test and make test; prints "N passed, M failed".
PY=${HOOK_PY:-/usr/bin/python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "  ok    $1"; pass=$((pass + 1)); }
bad() { echo "  FAIL  $1"; fail=$((fail + 1)); }
# a copy of the sources: the build writes build/ and *.egg-info beside them
mkdir "$tmp/src" && cp -r "$repo/pyproject.toml" "$repo/setup.py" "$repo/README.md" "$repo/dqsgd.h" \
    "$repo/dqsgd_simd.h" "$repo/python" "$tmp/src/" && rm -rf "$tmp/src/python/__pycache__"
if "$PY" -m venv --system-site-packages --without-pip "$tmp/venv" &&
   (cd "$tmp" && "$tmp/venv/bin/python" -m pip install -q --no-index --no-build-isolation "$tmp/src") \
       > "$tmp/pip.log" 2>&1; then
    ok "pip install --no-index --no-build-isolation builds and installs the package"
else
    bad "pip install failed: $(tail -3 "$tmp/pip.log" | tr '\n' ' ')"
fi
# the version the package claims (pyproject.toml, which setup.py checks against dqsgd.h)
vnum=$(sed -n 's/^version = "\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)".*/\1 \2 \3/p' "$repo/pyproject.toml" |
    awk '{ print $1 * 10000 + $2 * 100 + $3 }')
out=$(cd "$tmp" && env -u DQSGD_LIB DQSGD_WANT_VERSION="$vnum" "$tmp/venv/bin/python" -c '
import os, sys, numpy as np
import dqsgd, dqsgd.ddp as ddp_hook
site = os.path.dirname(dqsgd.__file__)
print("lib", dqsgd.lib_path.startswith(site) and os.path.basename(dqsgd.lib_path).startswith("_dqsgd_capi"))
x = np.linspace(-1, 1, 5000, dtype=np.float32)
m = dqsgd.encode(x, bits=8, rounding=dqsgd.ROUND_NEAREST, norm=dqsgd.NORM_MAX)  # error <= max/254
print("roundtrip", bool(np.max(np.abs(dqsgd.decode(m) - x)) <= 1.001 / 254) and
      dqsgd.version_number() == int(os.environ["DQSGD_WANT_VERSION"]))
print("hook", ddp_hook.dqsgd_hook.__module__ == "dqsgd.ddp" and "shared" in ddp_hook.PATTERNS)
' 2>&1)
for what in lib roundtrip hook; do
    case $out in
    *"$what True"*) ok "installed package, run elsewhere: $what" ;;
    *) bad "installed package, run elsewhere: $what: $(echo "$out" | tail -1)" ;;
    esac
done
echo "$pass passed, $fail failed (install)"
[ $fail -eq 0 ]
