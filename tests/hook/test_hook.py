#!/usr/bin/python3
"""tests/hook/test_hook.py - tests of python/dqsgd.py (the ctypes binding) and python/ddp_hook.py
(the DDP communication hook). Run by `make hook-test` (which builds build/libdqsgd.so first):

    DQSGD_LIB=build/libdqsgd.so timeout 300 /usr/bin/python3 tests/hook/test_hook.py

In this process: the ctypes mirrors against the C structs (offsets and sizes from the library,
and sizes printed by a separately compiled C program), encode/decode through numpy and torch,
errors, and the schedule wrapper. Then 2 processes (gloo, CPU) train a small MLP under DDP with
the hook, several DDP buckets, for three configurations (fixed 4 bits; 2 bits nearest max-norm
with error feedback; a DQSGD-P2 schedule) and save every message each rank sent and every
tensor the hook returned; this process then checks that
  (a) the hook's result equals decoding all ranks' messages here with decode_add in rank order,
      weight 1/2, bit for bit, on both ranks;
  (b) the parameters are bitwise equal on both ranks after the run, and have moved;
and that a NaN on one rank makes the hook raise on both ranks (no rank left in a collective).
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
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dqsgd  # noqa: E402

WORLD = 2
STEPS = 6
CONFIGS = {
    "fixed4": dict(bits=4),
    "ef2-nearest-max": dict(bits=2, error_feedback=True, rounding=dqsgd.ROUND_NEAREST, norm=dqsgd.NORM_MAX),
    "p2": dict(schedule=dict(steps=STEPS, budget_bits_per_elem=3.0, alpha=0.999, period=2, window=2,
                             bits_min=2, bits_max=8)),
}

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


# ---------------------------------------------------------------- distributed part
def make_model():
    nn = torch.nn
    torch.manual_seed(123)
    return nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU(), nn.Linear(32, 10))


class FakeBucket:
    """The part of dist.GradBucket the hook uses."""

    def __init__(self, idx, params, last):
        self.idx, self.params, self.last = idx, params, last
        self.buf = torch.cat([p.grad.reshape(-1) for p in params])

    def buffer(self):
        return self.buf

    def index(self):
        return self.idx

    def parameters(self):
        return self.params

    def is_last(self):
        return self.last


def fake_bucket_remap(rank, outdir):
    """Error feedback across a bucket rebuild: step 0 sends [p1, p2] as bucket 0, step 1 sends
    [p2] as bucket 0 and [p1] as bucket 1. Each parameter must keep its own residual: step 1's
    messages must equal encoding each gradient with that parameter's slice of step 0's residual."""
    from ddp_hook import DQSGDHookState, dqsgd_hook
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
    e_p2 = dqsgd.encode(p2.grad.clone(), seed=5, step=1, stream=rank, residual=r0[40:].clone(), **kw)
    e_p1 = dqsgd.encode(p1.grad.clone(), seed=6, step=1, stream=rank, residual=r0[:40].clone(), **kw)
    ok = bytes(m_p2) == bytes(e_p2) and bytes(m_p1) == bytes(e_p1) and state.iterations == 2
    with open(os.path.join(outdir, "remap_rank%d.txt" % rank), "w") as f:
        f.write("ok" if ok else "messages differ (p2 %s, p1 %s, iterations %d)" % (
            bytes(m_p2) == bytes(e_p2), bytes(m_p1) == bytes(e_p1), state.iterations))


def worker(rank, port, outdir):
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from ddp_hook import DQSGDHookState, dqsgd_hook

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    # DDP starts with one bucket and rebuilds its buckets after step 0; a small first bucket
    # (default 1 MiB) and bucket_cap_mb below give several buckets from step 1 on
    dist._DEFAULT_FIRST_BUCKET_BYTES = 4096
    gen = torch.Generator().manual_seed(1000 + rank)  # different data on each rank
    xs = [torch.randn(16, 64, generator=gen) for _ in range(STEPS)]
    ys = [torch.randint(0, 10, (16,), generator=gen) for _ in range(STEPS)]
    for name, kw in CONFIGS.items():
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
                rec["msg_%d_%d" % (step, idx)] = last["msg"]
                rec["res_%d_%d" % (step, idx)] = last["result"].numpy()
                rec["sizes_%d_%d" % (step, idx)] = np.array(last["sizes"], np.int64)
            state.last.clear()
        rec["params"] = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()
        rec["init"] = init.numpy()
        rec["widths"] = np.array(state.widths, np.int64)
        rec["iterations"] = np.array([state.iterations], np.int64)
        np.savez(os.path.join(outdir, "%s_rank%d.npz" % (name, rank)), **rec)
        del ddp, opt

    fake_bucket_remap(rank, outdir)

    # a NaN gradient on rank 1 only: the hook must raise on both ranks, not hang rank 0
    model = make_model()
    ddp = DDP(model)
    ddp.register_comm_hook(DQSGDHookState(bits=4), dqsgd_hook)
    x = xs[0].clone()
    if rank == 1:
        x[0, 0] = float("nan")
    err = ""
    try:
        F.cross_entropy(ddp(x), ys[0]).backward()
    except RuntimeError as e:
        err = str(e)
    with open(os.path.join(outdir, "nan_rank%d.txt" % rank), "w") as f:
        f.write(err)
    dist.barrier()
    dist.destroy_process_group()


def test_distributed():
    import socket
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as outdir:
        t0 = time.time()
        mp.spawn(worker, args=(port, outdir), nprocs=WORLD, join=True)
        print("  (2 processes: %.1f s)" % (time.time() - t0))
        w = np.float32(1.0 / WORLD)
        for name in CONFIGS:
            recs = [dict(np.load(os.path.join(outdir, "%s_rank%d.npz" % (name, r)))) for r in range(WORLD)]
            keys = sorted(k for k in recs[0] if k.startswith("msg_"))
            buckets = {int(k.split("_")[2]) for k in keys}
            steps = {int(k.split("_")[1]) for k in keys}
            check("%s: the hook ran every step for %d DDP buckets" % (name, len(buckets)),
                  steps == set(range(STEPS)) and len(buckets) >= 2 and all(
                      sorted(k for k in r if k.startswith("msg_")) == keys for r in recs) and
                  int(recs[0]["iterations"][0]) == STEPS, "steps %s buckets %s" % (sorted(steps), sorted(buckets)))
            ok_a, detail, n_cmp = True, "", 0
            for k in keys:
                _, step, idx = k.split("_")
                msgs = [r[k] for r in recs]
                sizes = [int(v) for v in recs[0]["sizes_%s_%s" % (step, idx)]]
                acc = np.zeros(dqsgd.header_read(msgs[0]).count, np.float32)
                for m in msgs:  # rank order, weight 1/world, as the hook does
                    dqsgd.decode_add(m, w, acc)
                for r in range(WORLD):
                    n_cmp += 1
                    if not bits_equal(acc, recs[r]["res_%s_%s" % (step, idx)]) or sizes != [len(m) for m in msgs]:
                        ok_a = False
                        detail = "step %s bucket %s rank %d differs" % (step, idx, r)
                h = dqsgd.header_read(msgs[0])
                if h.step != int(step):
                    ok_a, detail = False, "message step %d != %s" % (h.step, step)
            check("%s (a): hook result == decode_add of all ranks' messages here, bit for bit (%d tensors)" % (
                name, n_cmp), ok_a, detail)
            ok_b = bits_equal(recs[0]["params"], recs[1]["params"])
            moved = not bits_equal(recs[0]["params"], recs[0]["init"]) and bool(np.all(np.isfinite(recs[0]["params"])))
            check("%s (b): parameters bitwise equal on both ranks after %d steps, and changed" % (name, STEPS),
                  ok_b and moved, "equal %s, changed %s" % (ok_b, moved))
            widths = [list(r["widths"]) for r in recs]
            check("%s: the same width on both ranks every step (%s)" % (name, widths[0]),
                  widths[0] == widths[1] and len(widths[0]) == STEPS)
        remap = [open(os.path.join(outdir, "remap_rank%d.txt" % r)).read() for r in range(WORLD)]
        check("error feedback follows each parameter when DDP rebuilds its buckets", remap == ["ok"] * WORLD,
              " | ".join(remap))
        errs = [open(os.path.join(outdir, "nan_rank%d.txt" % r)).read() for r in range(WORLD)]
        check("NaN on rank 1: both ranks raise DQError (NaN or Inf) instead of hanging",
              all("NaN or Inf" in e and "rank 1" in e for e in errs), " | ".join(e[:120] for e in errs))


def main():
    t0 = time.time()
    print("hook: library %s (%s kernels), torch %s" % (dqsgd.lib_path, dqsgd.simd_backend(), torch.__version__))
    run("layout", test_layout)
    run("binding", test_binding)
    run("schedule", test_schedule)
    run("distributed", test_distributed)
    print("%d passed, %d failed (hook, %.1f s)" % (passed, failed, time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
