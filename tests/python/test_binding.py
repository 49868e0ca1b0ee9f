#!/usr/bin/python3
"""tests/python/test_binding.py - the binding's codec entry points against the C library's own
results. Run by `make test` (and `make hook-test`):

    DQSGD_LIB=build/libdqsgd.so /usr/bin/python3 tests/python/test_binding.py build/binding_ref

Writes the input vectors to a temporary directory, runs binding_ref (tests/python/binding_ref.c:
the same calls in C) on them, then makes each call through the binding (dqsgd) and compares
the bytes: typed encode (float32, float16 and bfloat16 vectors and residuals, seven parameter
sets), the typed decoders and Message, the range decoders, jobs (also with their parts on
threads), the sizes, dq_convert and dq_verify. The inputs go in as numpy arrays, torch
tensors and raw Ptr addresses in turn. Conversions are also checked against numpy's float16
and torch's bfloat16 rounding. Last, the examples of doc/PYTHON.md run. Prints `N passed, M
failed (binding)`.
"""

import concurrent.futures
import contextlib
import ctypes
import io
import os
import re
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dqsgd  # noqa: E402

# The parameter sets of binding_ref.c (PSETS), with its seed, step and stream.
PSETS = {
    "q4": dict(bits=4),
    "q2ef": dict(bits=2, rounding="nearest", norm="max", coder="rans"),
    "q8elias": dict(bits=8, checksum=1, coder="elias"),
    "q3fixed": dict(bits=3, norm="max", coder="fixed", bucket=1024),
    "nuq5": dict(bits=5, scheme="nuqsgd", coder="auto", bucket=256),
    "topk": dict(scheme="topk", k=1001),
    "trunc": dict(bits=4, scheme="trunc", alpha=1.5),
}
KEY = dict(seed=7, step=3, stream=1)
JOB_PSETS = ["q4", "q2ef", "q8elias", "q3fixed"]
JOB_PARTS = 3
DTYPES = ["float32", "float16", "bfloat16"]
TORCH_DTYPE = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
KINDS = ["numpy", "torch", "ptr"]

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
    """Run a test body; an exception is one failure."""
    try:
        fn()
    except Exception:  # noqa: BLE001
        check(name, False, traceback.format_exc().strip().splitlines()[-1])


def data(v):
    """The bytes of a numpy array, torch tensor or Ptr."""
    if isinstance(v, dqsgd.Ptr):
        return ctypes.string_at(v.address, v.count * {"uint8": 1, "float32": 4}.get(v.dtype, 2))
    if isinstance(v, torch.Tensor):
        return v.contiguous().view(torch.uint8).numpy().tobytes() if v.numel() else b""
    return np.ascontiguousarray(v).tobytes()


def typed(x, dtype):
    """A float32 numpy vector as a new torch tensor of dtype (torch rounds to nearest even)."""
    return torch.from_numpy(np.ascontiguousarray(x, np.float32)).to(TORCH_DTYPE[dtype], copy=True)


def as_kind(t, kind, keep):
    """Tensor t as a numpy array (float16 and float32; bfloat16 stays a tensor), a tensor, or a
    Ptr to it (kept alive in keep)."""
    if kind == "numpy" and t.dtype != torch.bfloat16:
        return t.numpy()
    if kind == "ptr":
        keep.append(t)
        return dqsgd.Ptr(t.data_ptr(), t.numel(), str(t.dtype).replace("torch.", ""))
    return t


def new_out(n, dtype, kind, keep):
    t = torch.zeros(n, dtype=TORCH_DTYPE[dtype] if dtype != "uint8" else torch.uint8)
    return as_kind(t, kind, keep)


class Ref:
    """binding_ref's results in a directory."""

    def __init__(self, d):
        self.d = d

    def raw(self, name):
        with open(os.path.join(self.d, name), "rb") as f:
            return f.read()

    def status(self, name):
        """The C status when the call failed (a 4-byte file where data was expected), else None."""
        b = self.raw(name)
        return int(np.frombuffer(b, np.int32)[0]) if len(b) == 4 else None

    def i64(self, name):
        return [int(v) for v in np.frombuffer(self.raw(name), np.int64)]


def same_or_status(name, ref_name, ref, call):
    """The binding's bytes from call() equal the C file, or both fail with the same status."""
    st = ref.status(ref_name)
    try:
        got = call()
    except dqsgd.DQError as e:
        check(name, st == e.status, "binding raised %d, C %s" % (e.status, st))
        return None
    check(name, st is None and data(got) == ref.raw(ref_name),
          "C status %s" % st if st is not None else "bytes differ")
    return got


def test_doc_examples():
    """Every python block after an `<!-- example -->` mark in doc/PYTHON.md, in order, in one namespace."""
    with open(os.path.join(REPO, "doc", "PYTHON.md")) as f:
        blocks = re.findall(r"^<!-- example -->\n```python\n(.*?)^```", f.read(), re.S | re.M)
    check("doc/PYTHON.md has examples", len(blocks) >= 5, "%d" % len(blocks))
    env = {}
    for i, code in enumerate(blocks):
        first = code.strip().splitlines()[0]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, "doc/PYTHON.md example %d" % (i + 1), "exec"), env)
            check("doc/PYTHON.md example %d (%s) runs" % (i + 1, first), True)
        except Exception:  # noqa: BLE001
            check("doc/PYTHON.md example %d (%s) runs" % (i + 1, first), False,
                  traceback.format_exc().strip().splitlines()[-1])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_binding.py BINDING_REF")
    ref_bin = os.path.abspath(sys.argv[1])
    rng = np.random.default_rng(2024)
    n, nb = 20011, 300007  # above the default coder's AUTO threshold; a job of several rANS chunks
    x = rng.standard_normal(n).astype(np.float32)
    r = (0.01 * rng.standard_normal(n)).astype(np.float32)
    xb = rng.standard_normal(nb).astype(np.float32)
    rb = (0.01 * rng.standard_normal(nb)).astype(np.float32)
    # conversions: ordinary values, halfway cases, overflow, subnormals, signed zeros, Inf, NaN
    special = [65504.0, 65519.0, 65520.0, -65520.0, 1e-8, 6e-8, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, -0.0, 0.0,
               1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 3.389e38, 3.4e38, 1e-40,
               -1e-45, np.inf, -np.inf, np.nan, -np.nan]
    c = np.concatenate([rng.standard_normal(1000).astype(np.float32) * 100, np.array(special, np.float32)])
    with tempfile.TemporaryDirectory() as d:
        for name, v in (("x", x), ("r", r), ("xb", xb), ("rb", rb), ("c", c)):
            v.tofile(os.path.join(d, name + ".f32"))
        res = subprocess.run([ref_bin, d], capture_output=True, text=True)
        check("binding_ref ran", res.returncode == 0, res.stderr.strip())
        if res.returncode != 0:
            return
        ref = Ref(d)
        run("convert", lambda: test_convert(ref, c))
        run("typed encode", lambda: test_encode(ref, x, r))
        run("typed decode", lambda: test_decode(ref, x))
        run("ranges", lambda: test_ranges(ref, x))
        run("jobs", lambda: test_jobs(ref, xb, rb))
        run("sizes", lambda: test_sizes(ref, n))
        run("verify", lambda: test_verify(ref, x))
    run("sparse indices", lambda: test_sparse_indices(x))
    run("argument errors", lambda: test_errors(x))
    run("doc examples", test_doc_examples)


def test_convert(ref, c):
    nan = np.isnan(c)
    for f in DTYPES:
        for t in DTYPES:
            src = dqsgd.convert(c, torch.empty(c.size, dtype=TORCH_DTYPE[f]))  # NaNs as C makes them
            dst = torch.empty(c.size, dtype=TORCH_DTYPE[t])
            dqsgd.convert(src, dst)
            check("convert %s -> %s: the C conversion" % (f, t), data(dst) == ref.raw("cvt_%s_%s" % (f, t)))
    # independent roundings of the finite values: numpy's float16, torch's bfloat16
    h = dqsgd.convert(c, np.empty(c.size, np.float16))
    with np.errstate(over="ignore"):  # 65520 and beyond round to Inf
        want = c[~nan].astype(np.float16)
    check("convert float32 -> float16: numpy's rounding", np.array_equal(h[~nan].view(np.uint16), want.view(np.uint16))
          and bool(np.isnan(h[nan]).all()))
    b = dqsgd.convert(c, torch.empty(c.size, dtype=torch.bfloat16))
    check("convert float32 -> bfloat16: torch's rounding",
          torch.equal(b[torch.from_numpy(~nan)].view(torch.int16),
                      typed(c[~nan], "bfloat16").view(torch.int16)) and bool(b[torch.from_numpy(nan)].isnan().all()))


def test_encode(ref, x, r):
    kinds = iter(KINDS * 1000)
    n = x.size
    for ps, params in PSETS.items():
        cap = dqsgd.encode_capacity(n, **params)
        for xt in DTYPES:
            for rt in ["none"] + DTYPES:
                keep = []
                xv = as_kind(typed(x, xt), next(kinds), keep)
                rv = None if rt == "none" else as_kind(typed(r, rt), next(kinds), keep)
                okind = next(kinds)
                out = None if okind == "numpy" else new_out(cap, "uint8", okind, keep)
                tag = "%s_%s_%s" % (ps, xt, rt)
                got = same_or_status("encode %s (x %s, out %s)" % (tag, type(xv).__name__, okind), "enc_" + tag,
                                     ref, lambda: dqsgd.encode(xv, residual=rv, out=out, **KEY, **params))
                if got is not None and rv is not None:
                    check("encode %s: the new residual" % tag, data(rv) == ref.raw("res_" + tag))


def test_decode(ref, x):
    n = x.size
    for i, (ps, params) in enumerate(PSETS.items()):
        msg = dqsgd.encode(x, **KEY, **params)
        for t in DTYPES:
            kind = KINDS[(i + DTYPES.index(t)) % 3]
            keep = []
            out = None if kind == "numpy" else new_out(n, t, kind, keep)
            dec = same_or_status("decode %s -> %s (%s)" % (ps, t, kind), "dec_%s_%s" % (ps, t), ref,
                                 lambda: dqsgd.decode(msg, out=out, dtype=t))
            if dec is not None and t != "float32":
                # the typed decoder is the float path rounded: C's conversion, and numpy's or torch's
                f = dqsgd.decode(msg)
                conv = dqsgd.convert(f, torch.empty(n, dtype=TORCH_DTYPE[t]))
                check("decode %s -> %s: the float32 decode converted" % (ps, t), data(dec) == data(conv) ==
                      data(typed(f, t)))
            m = dqsgd.Message(msg)
            check("Message(%s).decode -> %s" % (ps, t), data(m.decode(dtype=t)) == ref.raw("dec_%s_%s" % (ps, t)))
            acc = as_kind(typed(x, t), kind, keep)
            same_or_status("decode_add %s, %s acc (%s)" % (ps, t, kind), "add_%s_%s" % (ps, t), ref,
                           lambda: dqsgd.decode_add(msg, 0.375, acc))
            acc2 = typed(x, t)
            m.decode_add(0.375, acc2)
            check("Message(%s).decode_add, %s acc" % (ps, t), data(acc2) == ref.raw("add_%s_%s" % (ps, t)))


def test_ranges(ref, x):
    n = x.size
    for ps, params in PSETS.items():
        a = dqsgd.range_align(n, **params)
        check("range_align %s" % ps, a == ref.i64("align_" + ps)[0], "%d" % a)
        if not a:
            continue
        msg = dqsgd.encode(x, **KEY, **params)
        b0 = a if a < n else 0
        for j, (b, e) in enumerate(((b0, min(b0 + 2 * a, n)), ((n - 1) // a * a, n))):
            for what, call in (("rng", lambda: dqsgd.decode_range(msg, b, e)),
                               ("rngadd", lambda: dqsgd.decode_add_range(msg, b, e, -1.25, x[b:e].copy()))):
                want = ref.raw("%s_%s_%d" % (what, ps, j))
                st = int(np.frombuffer(want[:4], np.int32)[0])
                try:
                    got = call()
                    check("%s %s [%d, %d)" % (what, ps, b, e), st == 0 and data(got) == want[4:])
                except dqsgd.DQError as err:
                    check("%s %s [%d, %d): status %d" % (what, ps, b, e, st), err.status == st,
                          "binding %d" % err.status)


def run_job(n, parts, x, residual, params, pool=None):
    job = dqsgd.Job(n, parts, **KEY, **params)
    each = (lambda f: list(pool.map(f, range(job.parts)))) if pool else (lambda f: [f(j) for j in range(job.parts)])
    each(lambda j: job.quantize(j, x, residual))
    job.plan()
    each(job.code)
    return job, job.finish()


def test_jobs(ref, xb, rb):
    nb = xb.size
    for ps in JOB_PSETS:
        params = PSETS[ps]
        job, msg = run_job(nb, JOB_PARTS, xb, None, params)
        bounds = ref.i64("jobparts_" + ps)
        check("Job %s: parts and ranges" % ps, [job.parts] + [v for j in range(job.parts) for v in job.range(j)] ==
              bounds, "%d parts" % job.parts)
        check("Job %s: more than one part" % ps, job.parts > 1, "%d" % job.parts)
        check("Job %s: the C job's bytes" % ps, data(msg) == ref.raw("job_%s_none" % ps))
        check("job_work_size %s" % ps, dqsgd.job_work_size(nb, JOB_PARTS, **params) == ref.i64("work_" + ps)[0])
        one = dqsgd.encode(xb, out=np.empty(dqsgd.encode_bound_coded(nb, params["bits"]), np.uint8), **KEY, **params)
        check("Job %s: encode()'s bytes" % ps, data(msg) == data(one))
        r1 = rb.copy()
        with concurrent.futures.ThreadPoolExecutor(JOB_PARTS) as pool:
            _, msg = run_job(nb, JOB_PARTS, xb, r1, params, pool)
        check("Job %s, error feedback, parts on threads: the C job's bytes" % ps,
              data(msg) == ref.raw("job_%s_ef" % ps))
        check("Job %s, error feedback: the C job's residual" % ps, data(r1) == ref.raw("jobres_" + ps))
    try:  # a phase out of order
        job = dqsgd.Job(nb, JOB_PARTS, **KEY, bits=4)
        job.plan()
        check("Job: plan before quantize raises", False)
    except dqsgd.DQError as e:
        check("Job: plan before quantize raises DQ_ERR_PARAM", e.status == -4, str(e))


def test_sizes(ref, n):
    for ps, params in PSETS.items():
        check("encode_capacity %s" % ps, dqsgd.encode_capacity(n, **params) == ref.i64("cap_" + ps)[0])
    check("encode_bound, encode_bound_coded: bits 0..17",
          [dqsgd.encode_bound(n, b) for b in range(18)] == [ref.i64("bound_%d" % b)[0] for b in range(18)] and
          [dqsgd.encode_bound_coded(n, b) for b in range(18)] == [ref.i64("boundc_%d" % b)[0] for b in range(18)])


def test_verify(ref, x):
    msg = dqsgd.encode(x, **KEY, **PSETS["q8elias"])
    dqsgd.verify(msg)
    check("verify: a checksummed message", ref.status("verify_ok") == 0)
    bad = msg.copy()
    bad[-10] ^= 0x10
    try:
        dqsgd.verify(bad)
        check("verify: a changed payload byte raises", False)
    except dqsgd.DQError as e:
        check("verify: a changed payload byte raises C's status", e.status == ref.status("verify_bad") == -10, str(e))


def test_sparse_indices(x):
    """sparse_indices: the index stream of top-k messages (every index coder, composed values or
    float32) against the k largest |x| found here by sorting (lower index first among equal
    ones); other schemes refused."""
    key = np.abs(x)
    for k in (1, 37, 2000, x.size):
        want = np.sort(np.lexsort((np.arange(x.size), -key))[:k])
        for name in ("auto", "gamma", "varint", "bitmap", "rice"):
            for bits in (32, 1, 3):
                extra = {} if bits == 32 else dict(rounding="nearest", norm="max")
                m = dqsgd.encode(x, scheme="topk", k=k, bits=bits, index_coder=dqsgd.INDEX_CODERS[name], **extra)
                got = dqsgd.sparse_indices(m)
                if got.dtype != np.uint32 or not np.array_equal(got, want):
                    return check("sparse_indices: top-k k=%d coder %s bits %d" % (k, name, bits), False,
                                 "%d of %d differ" % (np.count_nonzero(got[: k] != want[: len(got)]), k))
        check("sparse_indices == the k largest |x| (k = %d; every index coder; values float32, 1 and 3 bits)" % k, True)
    try:
        dqsgd.sparse_indices(dqsgd.encode(x, bits=4))
        check("sparse_indices of a QSGD message: ValueError", False, "no exception")
    except ValueError:
        check("sparse_indices of a QSGD message: ValueError", True)


def test_errors(x):
    def raises(name, exc, fn, text=""):
        try:
            fn()
            check(name, False, "no exception")
        except exc as e:
            check(name, text in str(e), str(e))

    raises("float64 input: TypeError", TypeError, lambda: dqsgd.encode(x.astype(np.float64)), "float64")
    raises("unknown rounding name: ValueError naming the option", ValueError,
           lambda: dqsgd.encode(x, rounding="up"), "rounding")
    raises("Ptr of an unknown dtype: TypeError", TypeError,
           lambda: dqsgd.encode(dqsgd.Ptr(x.ctypes.data, x.size, "float64")))
    raises("read-only accumulator: TypeError", TypeError,
           lambda: dqsgd.decode_add(dqsgd.encode(x), 1.0, np.frombuffer(x.tobytes(), np.float32)), "read-only")
    raises("Job of float16 x: TypeError", TypeError,
           lambda: dqsgd.Job(x.size, 2).quantize(0, x.astype(np.float16)), "float32")
    raises("bfloat16 decode into a numpy float16 out: the out's dtype wins, too short: ValueError", ValueError,
           lambda: dqsgd.decode(dqsgd.encode(x), out=np.empty(10, np.float16)), "elements")
    m = dqsgd.encode(x, bits=4, rounding="nearest", norm="max")
    check("enum names equal their constants",
          data(m) == data(dqsgd.encode(x, bits=4, rounding=dqsgd.ROUND_NEAREST, norm=dqsgd.NORM_MAX)))


if __name__ == "__main__":
    main()
    print("%d passed, %d failed (binding)" % (passed, failed))
    sys.exit(1 if failed else 0)
