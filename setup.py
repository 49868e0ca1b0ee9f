"""Builds the shared library the Python binding loads (python/dqsgd_capi.c: dqsgd.h with its
functions exported) as the extension `_dqsgd_capi`; pyproject.toml has the rest. The library
is not a Python module: python/dqsgd/__init__.py opens it with ctypes, next to itself once installed."""

import os
import re

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(HERE, "dqsgd.h")) as f:
    header_version = re.search(r'#define DQSGD_VERSION_STRING "([^"]+)"', f.read()).group(1)
with open(os.path.join(HERE, "pyproject.toml")) as f:
    project_version = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
if header_version != project_version:
    raise SystemExit("setup.py: pyproject.toml says %s, dqsgd.h %s" % (project_version, header_version))

# -march=native as `make build/libdqsgd.so`: built where it runs, and every ISA writes the same
# bytes (README, Determinism); DQSGD_CFLAGS replaces these flags (e.g. "-O2" for a portable build)
flags = os.environ.get("DQSGD_CFLAGS", "-std=c99 -O2 -march=native -ffp-contract=off").split()
setup(ext_modules=[Extension("dqsgd._dqsgd_capi", sources=["python/dqsgd_capi.c"], include_dirs=[HERE],
                             extra_compile_args=flags, libraries=["m"])])
