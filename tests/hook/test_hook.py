#!/usr/bin/python3
"""tests/hook/test_hook.py - tests of python/dqsgd/__init__.py (the ctypes binding) and python/dqsgd/ddp.py
(the DDP communication hook). Run by `make hook-test` (which builds build/libdqsgd.so first):

    DQSGD_LIB=build/libdqsgd.so timeout 300 /usr/bin/python3 tests/hook/test_hook.py

In this process: the ctypes mirrors against the C structs (offsets and sizes from the library,
and sizes printed by a separately compiled C program), encode/decode through numpy and torch,
errors, and the schedule wrapper. Then 2 processes (gloo, CPU) train a small MLP under DDP with
the hook, several DDP buckets, for several configurations (fixed 4 bits; 2 bits nearest max-norm
with error feedback; a DQSGD-P2 schedule; the patterns; float32 biases; warm start) and save
every message each rank sent and every tensor the hook returned; this process then checks that
  (a) the hook's result equals decoding all ranks' messages here with decode_add in rank order,
      weight 1/2, bit for bit, on both ranks;
  (b) the parameters are bitwise equal on both ranks after the run, and have moved;
and that a NaN on one rank makes the hook raise on both ranks (no rank left in a collective).
The same at 3 and 4 processes, for every pattern (allgather, shared, sra, auto). For sra the
reference is rebuilt from each rank's shard messages: every owner's re-quantized message must
equal encoding, here, the decode_add of its shard's W messages (with the owner's second residual
under error feedback, which must carry over from step to step), and the result must equal the
owners' messages decoded.
At 2 processes, the hook's machinery: rank 1 starts its backward pass late and rank 0's hook
calls must return at once with no collective started in the backward's thread (nonblocking);
buckets finishing in different orders on the two ranks (finish_order); fp16 and bf16 buckets
against the float32 encoder and an offline decode (half_buckets); workers=2 against workers=1
(workers_same_bytes); a message outgrowing its slot (overflow); ranks sizing a new bucket's
slot alike whatever they know of the current step (slot_agreement); CUDA buckets where a GPU
is present (cuda_buckets). The hook's state (options, statistics, checkpoints): test_state.py.
Prints `N passed, M failed (hook, ...)`; the exit code is nonzero on any failure.
"""

import ctypes
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dqsgd  # noqa: E402
from checks import Checks, FakeBucket, free_port  # noqa: E402

STEPS = 6

CHECKS = Checks()
check, run = CHECKS.check, CHECKS.run


def room(n, bits):
    """The output room the hook encodes with (encode_bound_coded: the coder's choice then never
    depends on the room)."""
    return np.empty(dqsgd.encode_bound_coded(n, bits), np.uint8)


def bits_equal(a, b):
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


# ---------------------------------------------------------------- (c) struct layouts
def test_layout():
    res = dqsgd.check_layout()  # raises LayoutError on a mismatch
    check("layout: ctypes offsets == C offsetof (dq_params, dq_header, dq_sched_params)",
          all(py == c for py, c in (res[k] for k in ("dq_params", "dq_header", "dq_sched_params"))))
    L = dqsgd.lib
    check("layout: ctypes.sizeof == library sizeof",
          ctypes.sizeof(dqsgd.Params) == L.dqpy_sizeof_params() and
          ctypes.sizeof(dqsgd.Header) == L.dqpy_sizeof_header() and
          ctypes.sizeof(dqsgd.SchedParams) == L.dqpy_sizeof_sched_params(),
          "params %d/%d header %d/%d sched_params %d/%d" % (
              ctypes.sizeof(dqsgd.Params), L.dqpy_sizeof_params(), ctypes.sizeof(dqsgd.Header),
              L.dqpy_sizeof_header(), ctypes.sizeof(dqsgd.SchedParams), L.dqpy_sizeof_sched_params()))
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        print("  note: no C compiler: the sizes printed by a C program are not checked")
        return
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "sizes.c"), os.path.join(tmp, "sizes")
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include "dqsgd.h"\nint main(void) {\n'
                    '    printf("%zu %zu %zu %zu\\n", sizeof(dq_params), sizeof(dq_header), '
                    'sizeof(dq_sched_params), sizeof(dq_sched));\n    return 0;\n}\n')
        cp = subprocess.run([cc, "-std=c99", "-O0", "-DDQ_NO_SIMD", "-I", REPO, src, "-o", exe, "-lm"],
                            capture_output=True, text=True)
        if cp.returncode != 0:
            err = [ln for ln in cp.stderr.splitlines() if "error" in ln] or cp.stderr.splitlines() or ["?"]
            check("layout: sizes == those printed by a compiled C program", False, "cc failed: " + err[0])
            return
        c = [int(v) for v in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split()]
    py = [ctypes.sizeof(dqsgd.Params), ctypes.sizeof(dqsgd.Header), ctypes.sizeof(dqsgd.SchedParams),
          int(dqsgd.lib.dqpy_sizeof_sched())]
    check("layout: sizes == those printed by a compiled C program", py == c, "python %s, C %s" % (py, c))


# ---------------------------------------------------------------- the binding
def test_binding():
    rng = np.random.default_rng(7)
    n = 3000  # five full 512-element buckets and a partial one
    x = rng.standard_normal(n).astype(np.float32)
    msg = dqsgd.encode(x, bits=4, seed=3, step=5, stream=1)
    h = dqsgd.header_read(msg)
    check("binding: header fields", (h.count, h.bits, h.seed, h.step, h.stream, h.bucket, h.msg_size) ==
          (n, 4, 3, 5, 1, 512, len(msg)) and len(msg) == dqsgd.encode_capacity(n, 4), repr(h))
    t = torch.from_numpy(x.copy())
    check("binding: a torch tensor gives the numpy array's bytes",
          bytes(dqsgd.encode(t, bits=4, seed=3, step=5, stream=1)) == bytes(msg))
    check("binding: a bytes message decodes like the array", bits_equal(dqsgd.decode(bytes(msg)), dqsgd.decode(msg)))
    dec = dqsgd.decode(msg)
    acc = rng.standard_normal(n).astype(np.float32)
    ref = acc + np.float32(0.25) * dec  # float32 arithmetic, no contraction
    dqsgd.decode_add(msg, 0.25, acc)
    check("binding: decode_add == acc + w * decode, bit for bit", bits_equal(acc, ref))
    acc_t = torch.zeros(n)
    dqsgd.decode_add(torch.from_numpy(msg.copy()), 1.0, acc_t)
    check("binding: decode_add into a torch tensor from a uint8 tensor", bits_equal(acc_t.numpy(), dec))
    om = dqsgd.Message(msg)  # opened once
    acc_m = np.arange(n, dtype=np.float32)
    acc_r = acc_m.copy()
    dqsgd.decode_add(msg, 0.3, acc_r)
    om.decode_add(0.3, acc_m)
    check("binding: Message header == header_read, decode and decode_add bit for bit",
          bytes(om.header) == bytes(h) and bits_equal(om.decode(), dec) and bits_equal(acc_m, acc_r))
    r = np.zeros(n, np.float32)
    m2 = dqsgd.encode(x, bits=2, residual=r, rounding=dqsgd.ROUND_NEAREST, norm=dqsgd.NORM_MAX)
    check("binding: error feedback keeps x - decoded", bits_equal(r, x - dqsgd.decode(m2)))
    check("binding: message norm from the scales", abs(dqsgd.message_norm2(msg) - float(x.astype(np.float64) @ x)) <
          1e-4 * float(x.astype(np.float64) @ x))
    try:
        dqsgd.encode(x, bits=17)
        check("binding: bits 17 raises DQError", False, "no exception")
    except dqsgd.DQError as e:
        check("binding: bits 17 raises DQError with dq_strerror's text",
              e.status == -3 and dqsgd.strerror(-3) in str(e) and "bit width" in str(e), str(e))
    try:
        dqsgd.header_read(b"\0" * 64)
        check("binding: garbage header raises", False, "no exception")
    except dqsgd.DQError as e:
        check("binding: garbage header raises DQ_ERR_BAD_MAGIC", e.status == -8, str(e))
    try:
        dqsgd.Message(b"\0" * 64)
        check("binding: Message of a garbage header raises", False, "no exception")
    except dqsgd.DQError as e:
        check("binding: Message of a garbage header raises DQ_ERR_BAD_MAGIC", e.status == -8, str(e))
    try:
        dqsgd.decode_add(msg, 1.0, np.zeros(n + 1, np.float32))
        check("binding: wrong accumulator length raises", False, "no exception")
    except dqsgd.DQError as e:
        check("binding: wrong accumulator length raises DQ_ERR_SIZE_MISMATCH", e.status == -13, str(e))
    try:
        dqsgd.encode(x.astype(np.float64))
        check("binding: float64 input refused", False, "no exception")
    except TypeError:
        check("binding: float64 input refused (TypeError)", True)


def test_schedule():
    d, T = 10000, 40
    budget = T * dqsgd.message_bits(d, 3)
    s = dqsgd.Schedule(steps=T, dim=d, budget_bits=budget, norm_prior=1.0, alpha=0.99, period=5, window=4)
    spent, widths, norm = 0.0, [], 1.0
    for n in range(T):
        b = s.next()
        widths.append(b)
        spent += dqsgd.message_bits(d, b)
        norm *= 0.97
        s.update(norm, 0.0, dqsgd.message_bits(d, b))
        if n == 19:
            saved, saved_widths = s.save(), list(widths)
    check("schedule: P2 stays within its budget, widths in 2..16", spent <= budget and
          min(widths) >= 2 and max(widths) <= 16 and s.step == T and s.spent_bits == spent,
          "spent %g of %g, widths %s" % (spent, budget, widths))
    s2 = dqsgd.Schedule(steps=T, dim=d, budget_bits=budget, norm_prior=1.0, alpha=0.99, period=5, window=4)
    s2.load(saved)
    w2, norm = list(saved_widths), 0.97 ** 20
    for n in range(20, T):
        b = s2.next()
        w2.append(b)
        norm *= 0.97
        s2.update(norm, 0.0, dqsgd.message_bits(d, b))
    check("schedule: save/load resumes with the same widths", w2 == widths, "%s vs %s" % (w2, widths))
    try:
        dqsgd.Schedule(steps=T, dim=d, budget_bits=1.0, norm_prior=1.0)
        check("schedule: infeasible budget raises", False, "no exception")
    except dqsgd.DQError as e:
        check("schedule: infeasible budget raises DQ_ERR_INFEASIBLE", e.status == -15, str(e))


def test_shared_binding():
    """dq_shared_* through ctypes: three workers' levels on agreed units, summed as integers,
    decode to the float sum of each worker's levels times its unit, bit for bit."""
    rng = np.random.default_rng(3)
    n, bits, W = 1300, 4, 3
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(W)]
    w = dqsgd.shared_width(bits, W)
    e = np.maximum.reduce([dqsgd.shared_exponents(x, bits) for x in xs])
    lv = [dqsgd.shared_encode(x, e, w, bits, seed=1, step=2, stream=r) for r, x in enumerate(xs)]
    sums = np.sum([v.astype(np.int64) for v in lv], axis=0).astype(np.int8)
    out = dqsgd.shared_decode(sums, e, w, bits, n, 1.0 / W)
    unit = np.repeat(np.ldexp(np.float32(1), e.astype(np.int32)).astype(np.float32), 512)[:n]
    ref = np.float32(1.0 / W) * (sums.astype(np.float32) * unit)
    check("shared binding: width 8 at 4 bits x 3 workers, %d exponents" % len(e), w == 8 and len(e) == 3)
    check("shared binding: decode of the integer sum == (1/W) * sum * unit, bit for bit", bits_equal(out, ref))
    res = np.zeros(n, np.float32)
    lv0 = dqsgd.shared_encode(xs[0], e, 32, bits, residual=res, rounding=dqsgd.ROUND_NEAREST)
    check("shared binding: the residual keeps v - level * unit exactly, int32 levels",
          lv0.dtype == np.int32 and bits_equal(res, xs[0] - lv0.astype(np.float32) * unit))
    try:
        dqsgd.shared_encode(xs[0], np.full(3, -20, np.int8), w, bits)
        check("shared binding: a unit below the worker's own raises", False, "no exception")
    except dqsgd.DQError as ex:
        check("shared binding: a unit below the worker's own raises DQ_ERR_PARAM", ex.status == -2 or
              "param" in str(ex).lower(), str(ex))


# ---------------------------------------------------------------- distributed part
def make_model():
    nn = torch.nn
    torch.manual_seed(123)
    return nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU(), nn.Linear(32, 10))


SMALL = 100  # min_compress_numel in the per-layer configurations: the biases (48, 32, 10) go float32
EF2 = dict(bits=2, error_feedback=True, rounding=dqsgd.ROUND_NEAREST, norm=dqsgd.NORM_MAX)
# configurations per world size; every one runs STEPS DDP steps with several buckets
CONFIGS = {
    2: {
        "fixed4": dict(bits=4),
        "ef2-nearest-max": EF2,
        "p2": dict(schedule=dict(steps=STEPS, budget_bits_per_elem=3.0, alpha=0.999, period=2, window=2,
                                 bits_min=2, bits_max=8)),
        "shared4": dict(bits=4, pattern="shared"),
        "shared3-ef": dict(bits=3, error_feedback=True, pattern="shared"),
        "layers": dict(bits=4, min_compress_numel=SMALL),
        "warm-auto-ef2": dict(EF2, pattern="auto", start_iter=3),
        "sra4": dict(bits=4, pattern="sra"),
    },
    3: {
        "fixed4": dict(bits=4),
        "shared4-ef": dict(bits=4, error_feedback=True, pattern="shared"),
        "auto4": dict(bits=4, pattern="auto"),
        "layers-warm-shared": dict(bits=3, pattern="shared", min_compress_numel=SMALL, start_iter=2),
        "sra-ef2": dict(EF2, pattern="sra"),
    },
    4: {
        "ef2-nearest-max": EF2,
        "shared4": dict(bits=4, pattern="shared"),
        "auto4": dict(bits=4, pattern="auto"),
        "layers-warm-ef2": dict(EF2, min_compress_numel=SMALL, start_iter=2),
        "sra4": dict(bits=4, pattern="sra"),
        "sra-layers-warm-ef2": dict(EF2, pattern="sra", min_compress_numel=SMALL, start_iter=2),
    },
}
PATTERN_CODE = {"allgather": 0, "shared": 1, "warm": 2, "none": 3, "sra": 4}



def fake_bucket_remap(rank, outdir):
    """Error feedback across a bucket rebuild: step 0 sends [p1, p2] as bucket 0, step 1 sends
    [p2] as bucket 0 and [p1] as bucket 1. Each parameter must keep its own residual: step 1's
    messages must equal encoding each gradient with that parameter's slice of step 0's residual."""
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    g = torch.Generator().manual_seed(77 + rank)
    p1, p2 = torch.nn.Parameter(torch.zeros(40)), torch.nn.Parameter(torch.zeros(600))
    kw = dict(bits=2, rounding=dqsgd.ROUND_NEAREST, norm=dqsgd.NORM_MAX)
    # no rounding or norm given: error feedback must default to nearest with max-norm scales
    state = DQSGDHookState(bits=2, error_feedback=True, seed=5, keep_messages=True)
    p1.grad, p2.grad = torch.randn(40, generator=g), torch.randn(600, generator=g)
    dqsgd_hook(state, FakeBucket(0, [p1, p2], True)).wait()
    r0 = state.residuals[0][1].clone()
    p1.grad, p2.grad = torch.randn(40, generator=g), torch.randn(600, generator=g)
    dqsgd_hook(state, FakeBucket(0, [p2], False)).wait()
    m_p2 = state.last[0]["msg"]
    dqsgd_hook(state, FakeBucket(1, [p1], True)).wait()
    m_p1 = state.last[1]["msg"]
    e_p2 = dqsgd.encode(p2.grad.clone(), seed=5, step=1, stream=rank, residual=r0[40:].clone(), out=room(600, 2), **kw)
    e_p1 = dqsgd.encode(p1.grad.clone(), seed=6, step=1, stream=rank, residual=r0[:40].clone(), out=room(40, 2), **kw)
    ok = bytes(m_p2) == bytes(e_p2) and bytes(m_p1) == bytes(e_p1) and state.iterations == 2
    with open(os.path.join(outdir, "remap_rank%d.txt" % rank), "w") as f:
        f.write("ok" if ok else "messages differ (p2 %s, p1 %s, iterations %d)" % (
            bytes(m_p2) == bytes(e_p2), bytes(m_p1) == bytes(e_p1), state.iterations))


class SleepInBackward(torch.autograd.Function):
    """The identity, whose backward sleeps first: a rank whose backward pass starts late."""

    @staticmethod
    def forward(ctx, x, secs):
        ctx.secs = secs
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        time.sleep(ctx.secs)
        return g, None


LATE = 0.5  # seconds rank 1's backward starts late in nonblocking()
NONBLOCKING = (("allgather-small", dict(min_compress_numel=SMALL)), ("shared", dict(pattern="shared")),
               ("sra", dict(pattern="sra")), ("auto-ef", dict(EF2, pattern="auto")), ("warm", dict(start_iter=2)))
COLLECTIVES = ("all_gather", "all_reduce", "all_to_all_single", "broadcast", "barrier")


def nonblocking(rank, outdir):
    """Rank 1's backward starts LATE seconds late at step 1: rank 0's hook calls must return at
    once all the same (a call that waited on a collective would wait for rank 1), and no
    collective may start in the thread that runs the hook (the backward pass's) while it runs."""
    import json
    import threading
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    real = {k: getattr(dist, k) for k in COLLECTIVES}
    in_backward, seen = [False], []

    def spy(name):
        def call(*a, **kw):
            if in_backward[0] and threading.current_thread() is threading.main_thread():
                seen.append(name)
            return real[name](*a, **kw)
        return call
    for k in COLLECTIVES:
        setattr(dist, k, spy(k))
    out = {}
    g = torch.Generator().manual_seed(40 + rank)
    try:
        for name, kw in NONBLOCKING:
            model = make_model()
            ddp = DDP(model, bucket_cap_mb=0.008)
            state = DQSGDHookState(seed=3, **kw)
            ddp.register_comm_hook(state, dqsgd_hook)
            for step in range(2):
                y = ddp(torch.randn(16, 64, generator=g))
                if step == 1 and rank == 1:
                    y = SleepInBackward.apply(y, LATE)
                in_backward[0] = True
                F.cross_entropy(y, torch.randint(0, 10, (16,), generator=g)).backward()
                in_backward[0] = False
            state.summary()
            late = state.stats.records()[-1]
            out[name] = {"hook_max_s": late["hook_max_s"], "hook_s": late["hook_s"], "from_hook_thread": list(seen),
                         "params": torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()[:64]}
            seen.clear()
            del ddp
    finally:
        in_backward[0] = False
        for k in COLLECTIVES:
            setattr(dist, k, real[k])
    with open(os.path.join(outdir, "nonblocking_rank%d.json" % rank), "w") as f:
        json.dump(out, f)


def finish_order(rank, outdir):
    """Buckets finish in different orders on the two ranks: on rank 0 decoding large messages is
    slow, on rank 1 small ones, and two workers decode at once. Collectives must still start in
    the same order on both (no callback or worker starts one), so the runs end, with identical
    replicas. (A collective started by the decoding worker aborts this test.)"""
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    real = (dqsgd.Message.decode_add, dqsgd.Message.decode, dqsgd.shared_decode)

    def slow(count):
        if (count > 1000) == (rank == 0):
            time.sleep(0.03)

    def decode_add(self, *a, **kw):
        slow(self.header.count)
        return real[0](self, *a, **kw)

    def decode(self, *a, **kw):
        slow(self.header.count)
        return real[1](self, *a, **kw)

    def shared_decode(sums, exps, width, bits, n, *a, **kw):
        slow(n)
        return real[2](sums, exps, width, bits, n, *a, **kw)
    dqsgd.Message.decode_add, dqsgd.Message.decode, dqsgd.shared_decode = decode_add, decode, shared_decode
    lines = []
    g = torch.Generator().manual_seed(50 + rank)
    try:
        for pattern in ("allgather", "shared", "sra"):
            model = make_model()
            ddp = DDP(model, bucket_cap_mb=0.008)
            ddp.register_comm_hook(DQSGDHookState(bits=4, pattern=pattern, seed=4, workers=2), dqsgd_hook)
            opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
            for step in range(3):
                opt.zero_grad()
                F.cross_entropy(ddp(torch.randn(16, 64, generator=g)), torch.randint(0, 10, (16,), generator=g)).backward()
                opt.step()
            lines.append((pattern, torch.cat([p.detach().reshape(-1) for p in model.parameters()])))
            del ddp
    finally:
        dqsgd.Message.decode_add, dqsgd.Message.decode, dqsgd.shared_decode = real
    with open(os.path.join(outdir, "order_rank%d.txt" % rank), "w") as f:
        for pattern, flat in lines:
            others = [torch.empty_like(flat) for _ in range(2)]
            dist.all_gather(others, flat)
            f.write("%s %d\n" % (pattern, all(torch.equal(others[0], o) for o in others)))


HALF = (("float16", {}), ("bfloat16", dict(EF2)), ("float16-small", dict(min_compress_numel=SMALL)),
        ("bfloat16-small", dict(min_compress_numel=SMALL)), ("bfloat16-warm", dict(start_iter=1)),
        ("float16-shared", dict(pattern="shared")), ("bfloat16-sra", dict(pattern="sra")))


def half_buckets(rank, outdir):
    """fp16 and bf16 buckets (the hook's own FakeBucket: fp16 matmuls do not run on the CPU):
    the result has the bucket's dtype, an allgather message is the bytes of encoding the float32
    values of the bucket (the typed API), with error feedback the residual is the float path's;
    the messages and results go to the main process. (DDP cannot hold a bf16 model on gloo:
    torch 1.13's gloo has no bfloat16 broadcast, and no bfloat16 sums, which the hook's float
    slices therefore add in float32.)"""
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    rec = {}
    g = torch.Generator().manual_seed(60 + rank)
    for name, kw in HALF:
        dtype = getattr(torch, name.split("-")[0])
        ps = [torch.nn.Parameter(torch.zeros(n, dtype=dtype)) for n in (48, 3000)]
        for p in ps:
            p.grad = torch.randn(p.numel(), generator=g).to(dtype)
        state = DQSGDHookState(**dict(dict(bits=4, seed=8, keep_messages=True), **kw))
        out = dqsgd_hook(state, FakeBucket(0, ps, True)).wait()
        last = state.last[0]
        rec[name + "_dtype"] = np.array([str(out.dtype) == str(dtype)])
        rec[name + "_in"] = last["input"].float().numpy()
        rec[name + "_out"] = out.float().numpy()
        rec[name + "_small"] = np.array(last["small"], np.int64).reshape(-1, 2)
        if "msg" in last:
            rec[name + "_msg"] = last["msg"]
            big = torch.cat([p.grad for p in ps]) if not last["small"] else ps[1].grad
            pkw = dict(bits=state.bits, seed=8, step=0, stream=rank, rounding=state.rounding, norm=state.norm)
            res = torch.zeros(big.numel()) if state.error_feedback else None
            ref = dqsgd.encode(big.float(), residual=res, out=room(big.numel(), state.bits), **pkw)
            rec[name + "_bytes_as_float32"] = np.array([bytes(ref) == bytes(last["msg"])])
            if res is not None:
                rec[name + "_residual_as_float32"] = np.array([bits_equal(res.numpy(), state.residuals[0][1].numpy())])
    np.savez(os.path.join(outdir, "half_rank%d.npz" % rank), **rec)


def workers_same_bytes(rank, outdir):
    """workers=2 (a dqsgd.Job's parts and range decodes on two threads, from PARALLEL_MIN
    elements) sends the bytes of workers=1 and returns the same bits, residuals included."""
    from dqsgd.ddp import PARALLEL_MIN, DQSGDHookState, dqsgd_hook
    g = torch.Generator().manual_seed(70 + rank)
    ok = []
    for kw in (dict(bits=4), dict(EF2)):
        states = [DQSGDHookState(seed=6, keep_messages=True, workers=w, **kw) for w in (1, 2)]
        for step in range(2):
            p = torch.nn.Parameter(torch.zeros(PARALLEL_MIN + 4000))
            p.grad = torch.randn(p.numel(), generator=g)
            outs = [dqsgd_hook(st, FakeBucket(0, [p], True)).wait() for st in states]
            same = bytes(states[0].last[0]["msg"]) == bytes(states[1].last[0]["msg"]) and \
                bits_equal(outs[0].numpy(), outs[1].numpy())
            if kw.get("error_feedback"):
                same &= bits_equal(states[0].residuals[0][1].numpy(), states[1].residuals[0][1].numpy())
            ok.append(same)
    with open(os.path.join(outdir, "workers_rank%d.txt" % rank), "w") as f:
        f.write(" ".join(str(int(v)) for v in ok))


def overflow(rank, outdir):
    """A message that outgrows its slot: step 0 is sparse (a small coded message), step 1 dense,
    with no margin: its rest goes in the second all_gather, and the result is still the offline
    decode of both messages (checked by the main process)."""
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    g = torch.Generator().manual_seed(80 + rank)
    state = DQSGDHookState(bits=4, seed=2, keep_messages=True, slot_margin=0)
    rec = {}
    p = torch.nn.Parameter(torch.zeros(20000))
    for step in range(2):
        p.grad = torch.randn(20000, generator=g) * ((torch.rand(20000, generator=g) < 0.01).float() if step == 0 else 1)
        out = dqsgd_hook(state, FakeBucket(0, [p], True)).wait()
        rec["msg%d" % step], rec["out%d" % step] = state.last[0]["msg"], out.numpy()
    state.summary()
    rec["overflows"] = np.array([r["overflows"] for r in state.stats.records()])
    np.savez(os.path.join(outdir, "overflow_rank%d.npz" % rank), **rec)


def slot_agreement(rank, outdir):
    """Every rank must size a slot alike. Step 1 brings a new bucket (as DDP's rebuild does) after
    one whose message this step is far smaller than at step 0; rank 0 starts the new bucket only
    after the first one's sizes are in, rank 1 before them (its bookkeeping of sizes is held
    back). A slot sized from anything of the current step would differ between the ranks, and
    gloo would abort on the mismatched all_gather."""
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    real = DQSGDHookState._measured

    def late(self, *a, **kw):
        time.sleep(0.3)
        return real(self, *a, **kw)
    if rank == 1:
        DQSGDHookState._measured = late
    try:
        g = torch.Generator().manual_seed(85 + rank)
        state = DQSGDHookState(bits=4, seed=2)
        p0, p1 = torch.nn.Parameter(torch.zeros(20000)), torch.nn.Parameter(torch.zeros(20000))
        p0.grad = torch.randn(20000, generator=g)
        dqsgd_hook(state, FakeBucket(0, [p0], True)).wait()
        p0.grad = torch.randn(20000, generator=g) * (torch.rand(20000, generator=g) < 0.01).float()
        p1.grad = torch.randn(20000, generator=g)
        f0 = dqsgd_hook(state, FakeBucket(0, [p0], False))
        if rank == 0:
            f0.wait()
        out = dqsgd_hook(state, FakeBucket(1, [p1], True)).wait()
        f0.wait()
    finally:
        DQSGDHookState._measured = real
    with open(os.path.join(outdir, "slots_rank%d.txt" % rank), "w") as f:
        f.write(out.numpy().tobytes().hex()[:64])


def cuda_buckets(rank, outdir):
    """A CUDA bucket (through pinned memory, encoded on the CPU): the same result as the same
    gradient on the CPU, on the bucket's device. Needs a GPU."""
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    g = torch.Generator().manual_seed(90 + rank)
    grad = torch.randn(5000, generator=g)
    outs = []
    for dev in ("cuda", "cpu"):
        p = torch.nn.Parameter(torch.zeros(5000, device=dev))
        p.grad = grad.to(dev)
        outs.append(dqsgd_hook(DQSGDHookState(bits=4, seed=3), FakeBucket(0, [p], True)).wait())
    with open(os.path.join(outdir, "cuda_rank%d.txt" % rank), "w") as f:
        f.write("%d" % (outs[0].device.type == "cuda" and torch.equal(outs[0].cpu(), outs[1])))


def worker(rank, world, port, outdir):
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
    # DDP starts with one bucket and rebuilds its buckets after step 0; a small first bucket
    # (default 1 MiB) and bucket_cap_mb below give several buckets from step 1 on
    dist._DEFAULT_FIRST_BUCKET_BYTES = 4096
    gen = torch.Generator().manual_seed(1000 + rank)  # different data on each rank
    xs = [torch.randn(16, 64, generator=gen) for _ in range(STEPS)]
    ys = [torch.randint(0, 10, (16,), generator=gen) for _ in range(STEPS)]
    for name, kw in CONFIGS[world].items():
        model = make_model()
        d = sum(p.numel() for p in model.parameters())
        init = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()
        # small DDP buckets (about 8 KB), so that one step calls the hook for several buckets
        ddp = DDP(model, bucket_cap_mb=0.008)
        state = DQSGDHookState(seed=11, keep_messages=True, dim=d, **kw)
        ddp.register_comm_hook(state, dqsgd_hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        rec = {}
        for step in range(STEPS):
            opt.zero_grad()
            F.cross_entropy(ddp(xs[step]), ys[step]).backward()
            opt.step()
            for idx, last in state.last.items():
                assert last["iter"] == step, (last["iter"], step)
                key = "%d_%d" % (step, idx)
                rec["pat_" + key] = np.array([PATTERN_CODE[last["pattern"]]])
                rec["in_" + key] = last["input"].numpy()
                rec["res_" + key] = last["result"].numpy()
                rec["small_" + key] = np.array(last["small"], np.int64).reshape(-1, 2)
                if "msg" in last:
                    rec["msg_" + key] = last["msg"]
                    rec["sizes_" + key] = np.array(last["sizes"], np.int64)
                if "levels" in last:
                    rec["lev_" + key] = last["levels"].numpy()
                    rec["exp_" + key] = last["exps"].numpy()
                    rec["wire_" + key] = np.array([last["wire"], last["width"]])
                if "sra_msgs" in last:  # sra: this rank's W shard messages, its re-quantized shard
                    for j, m in enumerate(last["sra_msgs"]):
                        rec["s1_%s_%d" % (key, j)] = m
                    rec["shards_" + key] = np.array(last["sra_shards"], np.int64).reshape(-1, 2)
                    rec["msg2_" + key] = last["msg2"]
                    rec["sizes2_" + key] = np.array(last["sizes2"], np.int64)
                    rec["width_" + key] = np.array([last["width"]])
                    if last.get("res2_in") is not None:
                        rec["res2_" + key] = last["res2_in"].numpy()
            state.last.clear()
        rec["params"] = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()
        rec["init"] = init.numpy()
        rec["widths"] = np.array(state.widths, np.int64)
        rec["iterations"] = np.array([state.iterations], np.int64)
        state.summary()  # closes the last step's record
        rows = state.stats.records()
        rec["stats"] = np.array([[r[k] for k in ("encode_s", "comm_s", "decode_s", "bytes")] for r in rows], np.float64)
        rec["stats_iter"] = np.array([r["iter"] for r in rows], np.int64)
        np.savez(os.path.join(outdir, "%s_rank%d.npz" % (name, rank)), **rec)
        del ddp, opt

    if world == 2:
        fake_bucket_remap(rank, outdir)
        nonblocking(rank, outdir)
        finish_order(rank, outdir)
        half_buckets(rank, outdir)
        workers_same_bytes(rank, outdir)
        overflow(rank, outdir)
        slot_agreement(rank, outdir)
        if torch.cuda.is_available():
            cuda_buckets(rank, outdir)

    # a NaN gradient on the last rank only: the hook must raise on every rank, not hang the others
    for pattern in ("allgather", "shared", "sra"):
        model = make_model()
        ddp = DDP(model)
        ddp.register_comm_hook(DQSGDHookState(bits=4, pattern=pattern), dqsgd_hook)
        x = xs[0].clone()
        if rank == world - 1:
            x[0, 0] = float("nan")
        err = ""
        try:
            F.cross_entropy(ddp(x), ys[0]).backward()
        except RuntimeError as e:
            err = str(e)
        with open(os.path.join(outdir, "nan_%s_rank%d.txt" % (pattern, rank)), "w") as f:
            f.write(err)
        del ddp
        dist.barrier()
    dist.destroy_process_group()


def mean_close(inputs, res, world):
    """float32 allreduce of x / world: close to the float64 mean (gloo's order of additions is
    its own)."""
    ref = np.mean([np.asarray(v, np.float64) for v in inputs], axis=0)
    mag = np.mean([np.abs(np.asarray(v, np.float64)) for v in inputs], axis=0)  # float32 error scale
    return bool(np.all(np.abs(res - ref) <= 1e-6 * mag + 1e-30))


def sra_reference(world, kw, recs, k, step, idx, res2_prev):
    """The sra pattern rebuilt here from the messages each rank produced: shard j's mean is the
    decode_add of every rank's message j in rank order (weight 1/W); encoding it with the hook's
    params (stream W*W + j, and the owner's second residual under error feedback) must give the
    owner's message byte for byte; the result is the owners' messages decoded. Returns
    (decoded vector of the compressed part, ok, why)."""
    shards = [tuple(int(v) for v in s) for s in recs[0]["shards_" + k]]
    if not all([tuple(int(v) for v in s) for s in r["shards_" + k]] == shards for r in recs):
        return np.zeros(0, np.float32), False, "step %d bucket %d: shards differ between ranks" % (step, idx)
    n = shards[-1][1]
    width = int(recs[0]["width_" + k][0])
    al = dqsgd.range_align(n, width)  # the shards: contiguous, cut at the range unit, balanced in units
    units = [-(-(hi - lo) // al) for lo, hi in shards]
    if len(shards) != world or shards[0][0] != 0 or any(shards[j][1] != shards[j + 1][0] for j in range(world - 1)) or \
            any(lo % al or (hi % al and hi != n) for lo, hi in shards) or max(units) - min(units) > 1:
        return np.zeros(0, np.float32), False, "step %d bucket %d: shards %s (unit %d)" % (step, idx, shards, al)
    ef = bool(kw.get("error_feedback"))
    rounding = kw.get("rounding", dqsgd.ROUND_NEAREST if ef else dqsgd.ROUND_STOCHASTIC)
    norm = kw.get("norm", dqsgd.NORM_MAX if ef else dqsgd.NORM_L2)
    # the coder sra asks for (ddp_hook.SRA_CODER): the smallest at every size, with the checksum
    p = dict(bits=width, seed=11 + idx, step=step, rounding=rounding, norm=norm, coder=dqsgd.CODER_AUTO, checksum=1)
    w = np.float32(1.0 / world)
    acc = np.zeros(n, np.float32)
    first_checked = res2_prev.setdefault("first", [0])
    sizes2 = [int(v) for v in recs[0]["sizes2_" + k]]
    if sizes2 != [len(r["msg2_" + k]) for r in recs]:
        return acc, False, "step %d bucket %d: second-stage sizes %s" % (step, idx, sizes2)
    for j, (lo, hi) in enumerate(shards):
        if hi == lo:
            if sizes2[j] != 0 or any(len(r["s1_%s_%d" % (k, j)]) for r in recs):
                return acc, False, "step %d bucket %d: bytes for empty shard %d" % (step, idx, j)
            continue
        mean = np.zeros(hi - lo, np.float32)
        for r in range(world):
            m = recs[r]["s1_%s_%d" % (k, j)]
            h = dqsgd.header_read(m)
            if (h.count, h.step, h.stream) != (hi - lo, step, j * world + r):
                return acc, False, "step %d bucket %d: rank %d's message for shard %d: %r" % (step, idx, r, j, h)
            if not ef and "min_compress_numel" not in kw:  # the bucket is the compressed part: encode it here
                x = np.ascontiguousarray(recs[r]["in_" + k][lo:hi])
                if bytes(dqsgd.encode(x, stream=j * world + r, out=room(hi - lo, width), **p)) != bytes(m):
                    return acc, False, "step %d bucket %d: rank %d's message for shard %d != encoding its slice" % (
                        step, idx, r, j)
                first_checked[0] += 1
            dqsgd.decode_add(m, w, mean)
        res = None
        if ef:
            res = recs[j]["res2_" + k].copy()
            prev = res2_prev.get((idx, j))
            if prev is not None and prev[0] == step - 1 and prev[1].shape == res.shape and step >= 2:
                if not bits_equal(prev[1], res):
                    return acc, False, "step %d bucket %d shard %d: second residual != the last step's" % (step, idx, j)
                res2_prev["checked"] += 1
        m2 = dqsgd.encode(mean, stream=world * world + j, residual=res, out=room(hi - lo, width), **p)
        if bytes(m2) != bytes(recs[j]["msg2_" + k]):
            return acc, False, "step %d bucket %d: owner %d's message != re-encoding the mean of the shard" % (
                step, idx, j)
        if ef:
            res2_prev[(idx, j)] = (step, res)
        acc[lo:hi] = dqsgd.decode(m2)
    return acc, True, ""


def check_config(world, name, recs):
    kw = CONFIGS[world][name]
    tag = "W=%d %s" % (world, name)
    keys = sorted(k[4:] for k in recs[0] if k.startswith("pat_"))
    buckets = {int(k.split("_")[1]) for k in keys}
    steps = {int(k.split("_")[0]) for k in keys}
    check("%s: the hook ran every step for %d DDP buckets on every rank" % (tag, len(buckets)),
          steps == set(range(STEPS)) and len(buckets) >= 2 and
          all(sorted(k[4:] for k in r if k.startswith("pat_")) == keys for r in recs) and
          int(recs[0]["iterations"][0]) == STEPS, "steps %s buckets %s" % (sorted(steps), sorted(buckets)))
    w = np.float32(1.0 / world)
    ok_a, ok_same, ok_small, ok_rule, detail, n_cmp = True, True, True, True, "", 0
    pats = {}
    start = kw.get("start_iter", 0)
    last_bpe, auto_seen = {}, {}
    res2_prev = {"checked": 0}  # sra: (bucket, shard) -> (step, residual after it), by the reference
    for k in keys:
        step, idx = (int(v) for v in k.split("_"))
        pat = int(recs[0]["pat_" + k][0])
        pats.setdefault(pat, 0)
        pats[pat] += 1
        res = [r["res_" + k] for r in recs]
        if not all(bits_equal(res[0], v) for v in res[1:]):
            ok_same, detail = False, "step %d bucket %d: results differ between ranks" % (step, idx)
        inputs = [r["in_" + k] for r in recs]
        n = res[0].size
        small = [tuple(s) for s in recs[0]["small_" + k]]
        mask = np.zeros(n, bool)
        for o, c in small:
            mask[o: o + c] = True
        if (pat == PATTERN_CODE["warm"]) != (step < start):
            ok_a, detail = False, "step %d bucket %d: pattern %d with start_iter %d" % (step, idx, pat, start)
        if pat == PATTERN_CODE["warm"]:
            ok_a &= mean_close(inputs, res[0], world)
            continue
        if mask.any() and not mean_close([v[mask] for v in inputs], res[0][mask], world):
            ok_small, detail = False, "step %d bucket %d: float32 slices are not the mean" % (step, idx)
        if pat == PATTERN_CODE["allgather"]:
            msgs = [r["msg_" + k] for r in recs]
            acc = np.zeros(dqsgd.header_read(msgs[0]).count, np.float32)
            for m in msgs:  # rank order, weight 1/world, as the hook does
                dqsgd.decode_add(m, w, acc)
            sizes = [int(v) for v in recs[0]["sizes_" + k]]
            good = sizes == [len(m) for m in msgs] and dqsgd.header_read(msgs[0]).step == step
            last_bpe[idx] = 8.0 * max(sizes) / acc.size
        elif pat == PATTERN_CODE["shared"]:
            wire, width = (int(v) for v in recs[0]["wire_" + k])
            exps = recs[0]["exp_" + k]
            sums = np.sum([r["lev_" + k].astype(np.int64) for r in recs], axis=0).astype(recs[0]["lev_" + k].dtype)
            acc = dqsgd.shared_decode(sums, exps, wire, width, sums.size, 1.0 / world)
            good = all(bits_equal(exps, r["exp_" + k]) for r in recs)
        elif pat == PATTERN_CODE["sra"]:
            acc, good, why = sra_reference(world, kw, recs, k, step, idx, res2_prev)
        else:
            acc, good = np.zeros(0, np.float32), True
        n_cmp += 1
        why = why if pat == PATTERN_CODE["sra"] else ""
        if not good or acc.size != int((~mask).sum()) or not bits_equal(acc, res[0][~mask]):
            ok_a, detail = False, why or "step %d bucket %d pattern %d: result != offline decode" % (step, idx, pat)
        if kw.get("pattern") == "auto":  # the rule, from the sizes every rank saw, per bucket layout
            sw = dqsgd.shared_width(kw["bits"], world)
            sw = 32 if sw == 16 else sw
            b, was = auto_seen.get((idx, n), (None, None))
            want = 1 if was == 1 or (b is not None and world * b > 2 * sw) else 0
            if pat != want:
                ok_rule, detail = False, "step %d bucket %d: auto chose %d, the rule says %d (b %s)" % (
                    step, idx, pat, want, b)
            auto_seen[(idx, n)] = (last_bpe.get(idx) if pat == 0 else b, pat)
    names = {v: k for k, v in PATTERN_CODE.items()}
    seen = ", ".join("%s %d" % (names[p], c) for p, c in sorted(pats.items()))
    check("%s (a): compressed part == offline decode of every rank's payload, bit for bit (%d bucket calls: %s)"
          % (tag, n_cmp, seen), ok_a, detail)
    check("%s: the hook's result bitwise equal on every rank" % tag, ok_same, detail)
    want_pat = kw.get("pattern", "allgather")
    if want_pat != "auto":
        check("%s: every compressed call used the %s pattern" % (tag, want_pat),
              set(pats) - {PATTERN_CODE["warm"]} == {PATTERN_CODE[want_pat]}, seen)
    else:
        check("%s: auto follows its rule (allgather first, then W*b <= 2w)" % tag, ok_rule, detail)
    if kw.get("pattern") == "sra" and not kw.get("error_feedback") and "min_compress_numel" not in kw:
        check("%s: every shard message == encoding the rank's slice [lo, hi) here (%d checks)" % (
            tag, res2_prev["first"][0]), res2_prev.get("first", [0])[0] > 0)
    if kw.get("pattern") == "sra" and kw.get("error_feedback"):
        check("%s: the second quantization's residual carries over from step to step (%d checks)" % (
            tag, res2_prev["checked"]), res2_prev["checked"] > 0)
    if "min_compress_numel" in kw:
        counts = sorted(c for k in keys if int(k.split("_")[0]) >= start for o, c in recs[0]["small_" + k]
                        if int(k.split("_")[0]) == STEPS - 1)
        check("%s: exactly the parameters under %d elements went float32 (%s), and as the mean" % (
            tag, SMALL, counts), counts == [10, 32, 48] and ok_small, detail)
    ok_b = all(bits_equal(recs[0]["params"], r["params"]) for r in recs[1:])
    moved = not bits_equal(recs[0]["params"], recs[0]["init"]) and bool(np.all(np.isfinite(recs[0]["params"])))
    check("%s (b): parameters bitwise equal on all %d ranks after %d steps, and changed" % (tag, world, STEPS),
          ok_b and moved, "equal %s, changed %s" % (ok_b, moved))
    widths = [list(r["widths"]) for r in recs]
    check("%s: the same width on every rank every compressed step (%s)" % (tag, widths[0]),
          all(v == widths[0] for v in widths) and len(widths[0]) == STEPS - start)
    st = recs[0]["stats"]
    d = recs[0]["params"].size
    if list(recs[0]["stats_iter"]) != list(range(STEPS)):
        check("%s: stats keep one record per step" % tag, False, str(recs[0]["stats_iter"]))
        return
    comp = st[start:]
    ok_t = bool(np.all(comp[:, 0] > 0) and np.all(comp[:, 1] > 0) and np.all(comp[:, 2] > 0) and np.all(st[:, 3] > 0))
    if start:  # warm start: one float32 allreduce of everything, no coding
        ok_t &= bool(np.all(st[:start, 3] == 4 * d) and np.all(st[:start, 0] == 0) and np.all(st[:start, 2] == 0))
    check("%s: timers: encode, comm, decode > 0 on compressed steps; warm steps send 4d bytes, no coding" % tag, ok_t,
          str(st.tolist()))


def check_w2(outdir):
    """The W = 2 tests of the hook's machinery, from the files the two ranks wrote."""
    import json
    path = lambda name, r: os.path.join(outdir, name % r)  # noqa: E731
    nb = [json.load(open(path("nonblocking_rank%d.json", r))) for r in range(2)]
    for name, _ in NONBLOCKING:
        a, b = nb[0][name], nb[1][name]
        check("never blocks (%s): rank 1 starts its backward %.1f s late; rank 0's hook calls take %.1f ms at most "
              "(%.1f ms a step) and no collective starts in the backward's thread" % (
                  name, LATE, 1e3 * a["hook_max_s"], 1e3 * a["hook_s"]),
              a["hook_max_s"] < LATE / 4 and not a["from_hook_thread"] and not b["from_hook_thread"] and
              a["params"] == b["params"], "hook_max_s %.3f, collectives in the hook's thread %s / %s" % (
                  a["hook_max_s"], a["from_hook_thread"], b["from_hook_thread"]))
    order = [dict(ln.split() for ln in open(path("order_rank%d.txt", r)).read().split("\n") if ln) for r in range(2)]
    for pattern in ("allgather", "shared", "sra"):
        check("buckets finishing in different orders on the two ranks (%s): no deadlock, identical replicas" % pattern,
              order[0].get(pattern) == "1" and order[1].get(pattern) == "1", str(order))
    hv = [dict(np.load(path("half_rank%d.npz", r))) for r in range(2)]
    for name, kw in HALF:
        dtype = getattr(torch, name.split("-")[0])
        outs = [h[name + "_out"] for h in hv]
        ok = all(bool(h[name + "_dtype"][0]) for h in hv) and bits_equal(outs[0], outs[1])
        what = "result in the bucket's dtype, the same on both ranks"
        if kw.get("start_iter"):
            mean = (hv[0][name + "_in"] + hv[1][name + "_in"]) / 2
            ok &= bool(np.all(np.abs(outs[0] - mean) <= 2.0 ** -7 * np.abs(mean) + 1e-30))
            what += ", the mean (warm start)"
        if name + "_msg" in hv[0]:
            small = [tuple(v) for v in hv[0][name + "_small"]]
            mask = np.ones(outs[0].size, bool)
            for o, c in small:
                mask[o: o + c] = False
            acc = np.zeros(int(mask.sum()), np.float32)
            for h in hv:
                dqsgd.decode_add(h[name + "_msg"], 0.5, acc)
            ref = torch.from_numpy(acc).to(dtype).float().numpy()
            ok &= bits_equal(ref, outs[0][mask]) and all(bool(h[name + "_bytes_as_float32"][0]) for h in hv)
            what += "; messages = encoding the float32 values; result = float32 decode rounded to %s" % name.split("-")[0]
            if kw.get("error_feedback"):
                ok &= all(bool(h[name + "_residual_as_float32"][0]) for h in hv)
                what += "; float32 residual = the float path's"
            if small:
                mean = (hv[0][name + "_in"] + hv[1][name + "_in"])[~mask] / 2
                ok &= bool(np.all(np.abs(outs[0][~mask] - mean) <= 2.0 ** -7 * np.abs(mean) + 1e-30))
                what += "; small parameters: their mean in %s" % name.split("-")[0]
        check("%s bucket (%s): %s" % (name.split("-")[0], kw.get("pattern", "allgather"), what), bool(ok))
    wk = [open(path("workers_rank%d.txt", r)).read().split() for r in range(2)]
    check("workers=2 (a Job's parts, range decodes) sends the bytes of workers=1 and returns its bits (4 bits; 2 bits "
          "+ EF, residuals too), 2 steps each", wk[0] == wk[1] == ["1"] * 4, str(wk))
    ov = [dict(np.load(path("overflow_rank%d.npz", r))) for r in range(2)]
    ok = True
    for step in range(2):
        acc = np.zeros(20000, np.float32)
        for o in ov:
            dqsgd.decode_add(o["msg%d" % step], 0.5, acc)
        ok &= all(bits_equal(acc, o["out%d" % step]) for o in ov)
    check("a message larger than its slot goes on in a second all_gather (overflows %s), result = offline decode" % (
        list(ov[0]["overflows"])), ok and list(ov[0]["overflows"]) == [0, 1] == list(ov[1]["overflows"]))
    sl = [open(path("slots_rank%d.txt", r)).read() for r in range(2)]
    check("every rank sizes a new bucket's slot alike, though one rank has this step's sizes of another bucket and "
          "the other not yet", sl[0] == sl[1] and len(sl[0]) == 64, str(sl))
    if torch.cuda.is_available():
        cu = [open(path("cuda_rank%d.txt", r)).read() for r in range(2)]
        check("a CUDA bucket: the CPU path's result, on the device", cu == ["1", "1"], str(cu))
    else:
        print("  skip  CUDA buckets: no GPU here")


def test_distributed():
    import torch.multiprocessing as mp
    for world in [int(v) for v in os.environ.get("HOOK_WORLDS", "2,3,4").split(",")]:  # all by default
        port = free_port()
        with tempfile.TemporaryDirectory() as outdir:
            t0 = time.time()
            mp.spawn(worker, args=(world, port, outdir), nprocs=world, join=True)
            print("  (%d processes: %.1f s)" % (world, time.time() - t0))
            for name in CONFIGS[world]:
                recs = [dict(np.load(os.path.join(outdir, "%s_rank%d.npz" % (name, r)))) for r in range(world)]
                run("W=%d %s" % (world, name), lambda: check_config(world, name, recs))
            if world == 2:
                remap = [open(os.path.join(outdir, "remap_rank%d.txt" % r)).read() for r in range(world)]
                check("error feedback follows each parameter when DDP rebuilds its buckets", remap == ["ok"] * world,
                      " | ".join(remap))
                check_w2(outdir)
            for pattern in ("allgather", "shared", "sra"):
                errs = [open(os.path.join(outdir, "nan_%s_rank%d.txt" % (pattern, r))).read() for r in range(world)]
                check("W=%d %s: NaN on rank %d: every rank raises DQError (NaN or Inf) instead of hanging" % (
                    world, pattern, world - 1),
                      all("NaN or Inf" in e and "rank %d" % (world - 1) in e for e in errs),
                      " | ".join(e[:120] for e in errs))


def main():
    t0 = time.time()
    print("hook: library %s (%s kernels), torch %s" % (dqsgd.lib_path, dqsgd.simd_backend(), torch.__version__))
    run("layout", test_layout)
    run("binding", test_binding)
    run("shared binding", test_shared_binding)
    run("schedule", test_schedule)
    run("distributed", test_distributed)
    print("%d passed, %d failed (hook, %.1f s)" % (CHECKS.passed, CHECKS.failed, time.time() - t0))
    return 1 if CHECKS.failed else 0


if __name__ == "__main__":
    sys.exit(main())
