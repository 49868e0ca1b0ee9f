#!/usr/bin/python3
"""tests/python/test_isa.py - the installed package's kernel levels. Run by
tests/hook/test_install.sh with the Python of the venv it installed dqsgd into (so `import
dqsgd` is the installed package, not the repository's):

  - on x86-64 the package holds a library for every level (scalar, sse2, avx2, avx512);
  - the library's CPU probe (CPUID, XCR0) agrees with the kernel's flags in /proc/cpuinfo;
  - the loader takes the best level this CPU runs; DQSGD_ISA forces each level it runs (in a
    new process, whose dqsgd.simd_backend() must name it) and refuses bad names; the choice
    itself (_choose) for CPUs and builds this machine is not (a CPU without AVX-512, a
    missing library, a one-library build);
  - every level this CPU runs writes the same bytes: encode (schemes, widths 1..16, every
    coder, error feedback, float32, float16 and bfloat16 input), decode and decode_add, the
    range decoders and a job, each library loaded in this process and compared with the first.
Prints `N passed, M failed (isa)`.
"""

import ctypes
import os
import platform
import subprocess
import sys
import traceback

import numpy as np

import dqsgd

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("  ok    %s" % name)
    else:
        failed += 1
        print("  FAIL  %s%s" % (name, (": " + detail) if detail else ""))


def run(name, fn):
    try:
        fn()
    except Exception:  # noqa: BLE001
        check(name, False, traceback.format_exc().strip().splitlines()[-1])


X86 = platform.machine().lower() in ("x86_64", "amd64")
# The /proc/cpuinfo flags of each level (x86-64 psABI levels; lzcnt is "abm", sse3 "pni").
V2 = {"pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16", "lahf_lm"}
V3 = V2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe"}
V4 = V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


def test_probe():
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    want = ("scalar", "sse2") + (("avx2",) if V3 <= flags else ()) + (("avx512",) if V4 <= flags else ())
    check("the CPU probe agrees with /proc/cpuinfo: %s" % ", ".join(want), dqsgd.cpu_levels() == want,
          "probe %s" % (dqsgd.cpu_levels(),))


def test_loader():
    runs = dqsgd.cpu_levels()
    check("the loader took the best level this CPU runs (%s)" % runs[-1],
          dqsgd.lib_level == runs[-1] and dqsgd.simd_backend() == runs[-1], "%s" % dqsgd.lib_level)
    for level in runs:
        out = subprocess.run([sys.executable, "-c", "import dqsgd; print(dqsgd.lib_level, dqsgd.simd_backend())"],
                             env=dict(os.environ, DQSGD_ISA=level), capture_output=True, text=True)
        check("DQSGD_ISA=%s loads it" % level, out.stdout.split() == [level, level], out.stdout + out.stderr[-200:])
    out = subprocess.run([sys.executable, "-c", "import dqsgd"], env=dict(os.environ, DQSGD_ISA="avx3"),
                         capture_output=True, text=True)
    check("DQSGD_ISA=avx3 fails naming the levels", out.returncode != 0 and "not one of scalar, sse2, avx2, avx512"
          in out.stderr, out.stderr[-200:])
    # the choice on machines this is not
    all4 = {lvl: "/x/" + lvl for lvl in dqsgd.ISA_LEVELS}
    check("_choose: no AVX-512 on the CPU: avx2", dqsgd._choose(all4, 1 | 2 | 4, "") == "avx2")
    check("_choose: a baseline x86-64 CPU: sse2", dqsgd._choose(all4, 1 | 2, "") == "sse2")
    for forced, built, bits, text in (("avx512", all4, 1 | 2 | 4, "does not run"),
                                      ("avx2", {"sse2": "", "scalar": ""}, 15, "has no avx2 library"),
                                      ("sse2", {"default": ""}, 1, "has no sse2 library")):
        try:
            dqsgd._choose(built, bits, forced)
            check("_choose: DQSGD_ISA=%s refused (%s)" % (forced, text), False, "accepted")
        except OSError as e:
            check("_choose: DQSGD_ISA=%s refused (%s)" % (forced, text), text in str(e), str(e))
    check("_choose: a one-library build (other architectures, DQSGD_NATIVE=1) is taken",
          dqsgd._choose({"default": ""}, 1, "") == "default" and dqsgd._choose({"native": ""}, 1, "") == "native")


# ---------------------------------------------------------------- the same bytes on every level
def encode_with(L, x, xt, residual, params):
    """dq_encode_typed through library L: (message bytes, new residual bytes) or the status."""
    p = dqsgd._params(seed=11, step=5, stream=2, **params)
    n = x.size
    cap = ctypes.c_size_t()
    st = L.dq_encode_capacity(ctypes.byref(p), n, ctypes.byref(cap))
    if st:
        return st
    out = np.empty(max(cap.value, dqsgd.encode_bound_coded(n, params.get("bits") or 4)), np.uint8)
    r = None if residual is None else residual.copy()
    length = ctypes.c_size_t()
    st = L.dq_encode_typed(ctypes.byref(p), dqsgd.DTYPES[xt], x.ctypes.data, n, 0, None if r is None else
                           r.ctypes.data, out.ctypes.data, out.size, ctypes.byref(length))
    return st if st else (out[:length.value].tobytes(), None if r is None else r.tobytes())


def decodes_with(L, msg, n):
    """The float32 decode, a decode_add, and for messages that take them two range decodes."""
    m = np.frombuffer(msg, np.uint8)
    out = np.empty(n, np.float32)
    acc = np.linspace(-1, 1, n, dtype=np.float32)
    res = [L.dq_decode_typed(m.ctypes.data, m.size, 0, out.ctypes.data, n), out.tobytes(),
           L.dq_decode_add_typed(m.ctypes.data, m.size, ctypes.c_float(0.3), 0, acc.ctypes.data, n), acc.tobytes()]
    h = dqsgd.Header()
    if L.dq_header_read(m.ctypes.data, m.size, ctypes.byref(h)) == 0 and h.scheme in (1, 2, 3, 4, 5, 9, 10):
        p = dqsgd._params(bits=h.bits, bucket=h.bucket or dqsgd.BUCKET_WHOLE)
        a = L.dq_range_align(ctypes.byref(p), n)
        if a:
            b = min(a, n - 1) // a * a
            part = np.empty(n - b, np.float32)
            st = L.dq_decode_range(m.ctypes.data, m.size, b, n, part.ctypes.data)  # Elias: DQ_ERR_PARAM
            res += [st, part.tobytes() if st == 0 else b""]
    return res


def job_with(L, x, params, parts=3):
    p = dqsgd._params(seed=11, step=5, stream=2, **params)
    n = x.size
    cap, work = ctypes.c_size_t(), ctypes.c_size_t()
    L.dq_encode_capacity(ctypes.byref(p), n, ctypes.byref(cap))
    L.dq_job_work_size(ctypes.byref(p), n, parts, ctypes.byref(work))
    out, wbuf = np.empty(cap.value, np.uint8), np.empty(work.value, np.uint8)
    job = (ctypes.c_uint64 * ((L.dqpy_sizeof_job() + 7) // 8))()
    st = L.dq_job_init(job, ctypes.byref(p), n, parts, out.ctypes.data, out.size, wbuf.ctypes.data, wbuf.size)
    k = ctypes.c_size_t.from_buffer(job, 0).value
    for j in range(k):
        st = st or L.dq_job_quantize(job, j, x.ctypes.data, None)
    st = st or L.dq_job_plan(job)
    for j in range(k):
        st = st or L.dq_job_code(job, j)
    length = ctypes.c_size_t()
    st = st or L.dq_job_finish(job, ctypes.byref(length))
    return st if st else (k, out[:length.value].tobytes())


def cases():
    """(name, params) of the encodings compared: QSGD at every width with every coder it takes,
    both roundings and norms; the other level schemes; the sparse schemes."""
    for bits in (1, 2, 3, 4, 5, 6, 8, 11, 16):
        for coder in ("default", "fixed", "elias", "rans", "auto"):
            if (coder == "elias" and bits < 2) or (coder == "rans" and bits > 8):
                continue
            rounding, norm = ("nearest", "max") if bits % 2 else ("stochastic", "l2")
            yield "qsgd b%d %s %s %s" % (bits, coder, rounding, norm), dict(bits=bits, coder=coder, rounding=rounding,
                                                                           norm=norm)
    yield "qsgd b4 whole-vector bucket", dict(bits=4, bucket=dqsgd.BUCKET_WHOLE)
    yield "qsgd b4 bucket 64, checksum", dict(bits=4, bucket=64, checksum=1)
    yield "nuqsgd b4", dict(scheme="nuqsgd", bits=4)
    yield "natural", dict(scheme="natural")
    yield "terngrad", dict(scheme="terngrad")
    yield "twomeans", dict(scheme="twomeans")
    yield "trunc b3 alpha 1.2", dict(scheme="trunc", bits=3, alpha=1.2)
    yield "topk k 999", dict(scheme="topk", k=999)
    yield "randk k 999 unbiased", dict(scheme="randk", k=999, unbiased=1)
    yield "threshold 1.5", dict(scheme="threshold", threshold=1.5)


def test_same_bytes(libs):
    rng = np.random.default_rng(27)
    n = 20011
    dense = rng.standard_normal(n).astype(np.float32)
    sparse = (dense * (rng.random(n) < 0.2)).astype(np.float32)  # 80% zeros: Elias and rANS pay
    residual = (0.05 * rng.standard_normal(n)).astype(np.float32)
    L0 = libs[0][1]
    typed = {}
    for name, v in (("dense", dense), ("sparse", sparse)):
        for xt in ("float16", "bfloat16"):
            t = np.empty(n, np.uint16)
            L0.dq_convert(0, v.ctypes.data, n, dqsgd.DTYPES[xt], t.ctypes.data)
            typed[name, xt] = t
    count, differ = 0, []
    for cname, params in cases():
        for vname, v in (("dense", dense), ("sparse", sparse)):
            for ef in (False, True):
                if ef and params.get("scheme") in ("topk", "randk", "threshold"):
                    continue
                xt = "float32" if not ef else ("float16", "bfloat16", "float32")[count % 3]
                x = v if xt == "float32" else typed[vname, xt]
                got = [encode_with(L, x, xt, residual if ef else None, params) for _, L in libs]
                count += 1
                tag = "%s, %s, %s%s" % (cname, vname, xt, ", error feedback" if ef else "")
                if isinstance(got[0], int) or any(g != got[0] for g in got):
                    differ.append("encode %s: %s" % (tag, [g if isinstance(g, int) else len(g[0]) for g in got]))
                    continue
                dec = [decodes_with(L, got[0][0], n) for _, L in libs]
                if dec[0][0] or dec[0][2] or any(d != dec[0] for d in dec):
                    differ.append("decode %s: statuses %s" % (tag, [d[::2] for d in dec]))
    for line in differ[:10]:
        print("        %s" % line)
    check("same bytes on every level (%s): %d encodings, their residuals, decodes, decode_adds and ranges" % (
        ", ".join(lvl for lvl, _ in libs), count), not differ, "%d differ" % len(differ))
    for params in (dict(bits=4), dict(bits=2, coder="rans", rounding="nearest", norm="max"), dict(bits=8, coder="elias")):
        xb = np.tile(sparse, 15)  # several rANS chunks, three parts
        jobs = [job_with(L, xb, params) for _, L in libs]
        check("same bytes on every level: a job of %s in %s parts" % (params, jobs[0][0] if not isinstance(
            jobs[0], int) else "?"), not isinstance(jobs[0], int) and all(j == jobs[0] for j in jobs))


def main():
    built = dqsgd._packaged()
    if X86:
        check("the package holds every x86-64 level: %s" % ", ".join(sorted(built)),
              sorted(built) == sorted(dqsgd.ISA_LEVELS), "%s" % sorted(built))
    else:
        check("the package holds its one library", list(built) == ["default"], "%s" % sorted(built))
    run("probe", test_probe)
    run("loader", test_loader)
    libs = []
    for level in dqsgd.cpu_levels():
        if level in built:
            L = dqsgd._bind(built[level])
            dqsgd.check_layout(L)
            libs.append((level, L))
    before = failed
    run("same bytes", lambda: test_same_bytes(libs))
    if failed == before and len(libs) < 2:
        check("more than one level to compare", False, "only %s" % [lvl for lvl, _ in libs])


if __name__ == "__main__":
    main()
    print("%d passed, %d failed (isa)" % (passed, failed))
    sys.exit(1 if failed else 0)
