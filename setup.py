"""Builds the shared libraries the Python binding loads: python/dqsgd_capi.c (dqsgd.h with its
functions exported) once per kernel level, as dqsgd/_dqsgd_capi_<level>*.so; pyproject.toml
has the rest. They are not Python modules: python/dqsgd/__init__.py opens the best one the CPU
runs with ctypes (doc/PYTHON.md, "Kernel levels").

x86-64: scalar (the reference kernels), sse2 (the x86-64 baseline), avx2 (x86-64-v3) and
avx512 (x86-64-v4), the same bytes from each. Other architectures: one library for the
compiler's default target. DQSGD_NATIVE=1 builds one library for this machine only
(-march=native), which the loader takes without asking the CPU."""

import concurrent.futures
import glob
import os
import platform
import re

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(HERE, "dqsgd.h")) as f:
    header_version = re.search(r'#define DQSGD_VERSION_STRING "([^"]+)"', f.read()).group(1)
with open(os.path.join(HERE, "pyproject.toml")) as f:
    project_version = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
if header_version != project_version:
    raise SystemExit("setup.py: pyproject.toml says %s, dqsgd.h %s" % (project_version, header_version))

# Determinism needs IEEE float without contraction (dqsgd.h); -g0 drops the debug information
# Python's own CFLAGS ask for (it would triple the libraries' size).
COMMON = ["-std=c99", "-O2", "-ffp-contract=off", "-g0"]
# (level, flags): DQPY_EXPECT_SIMD makes the build fail unless dqsgd_simd.h chose that level
# (e.g. when SIMDe is missing, which would silently give the scalar kernels).
X86_LEVELS = [
    ("scalar", ["-march=x86-64", "-DDQ_NO_SIMD"]),
    ("sse2", ["-march=x86-64", "-DDQPY_EXPECT_SIMD=DQ_SIMD_SSE2"]),
    ("avx2", ["-march=x86-64-v3", "-DDQPY_EXPECT_SIMD=DQ_SIMD_AVX2"]),
    ("avx512", ["-march=x86-64-v4", "-DDQPY_EXPECT_SIMD=DQ_SIMD_AVX512"]),
]


def levels():
    if os.environ.get("DQSGD_NATIVE", "0") not in ("", "0"):
        return [("native", ["-march=native", "-DDQPY_REQUIRE_SIMDE"])]
    if platform.machine().lower() in ("x86_64", "amd64"):
        return X86_LEVELS
    return [("default", ["-DDQPY_REQUIRE_SIMDE"])]


class BuildLevels(build_ext):
    """build_ext that compiles the levels at the same time, each into its own object directory
    (they compile the same source file with different flags, and setuptools would name their
    objects alike). The libraries are not Python modules: no Python headers, no stubs."""

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        # A library of another build left in the build directory (a DQSGD_NATIVE=1 build's
        # "native", which the loader prefers) would ship in this package: remove it.
        targets = {self.get_ext_fullpath(ext.name) for ext in self.extensions}
        for d in {os.path.dirname(t) for t in targets}:
            for stale in glob.glob(os.path.join(d, "_dqsgd_capi_*")):
                if stale not in targets:
                    os.remove(stale)
        with concurrent.futures.ThreadPoolExecutor(min(len(self.extensions), os.cpu_count() or 1)) as pool:
            list(pool.map(self.build_extension, self.extensions))  # re-raises a failed build's error

    def build_extension(self, ext):
        temp = os.path.join(self.build_temp, ext.name.rsplit("_", 1)[-1])
        objects = self.compiler.compile(ext.sources, output_dir=temp, include_dirs=ext.include_dirs,
                                        extra_postargs=ext.extra_compile_args, debug=self.debug)
        self.compiler.link_shared_object(objects, self.get_ext_fullpath(ext.name), libraries=ext.libraries,
                                         build_temp=temp, target_lang="c")


setup(
    ext_modules=[Extension("dqsgd._dqsgd_capi_" + name, sources=["python/dqsgd_capi.c"], include_dirs=[HERE],
                           extra_compile_args=COMMON + flags, libraries=["m"]) for name, flags in levels()],
    cmdclass={"build_ext": BuildLevels},
)
