#!/usr/bin/python3
"""tests/hook/test_state.py - the DDP hook's state (python/dqsgd/ddp.py): options checked at
construction, bounded statistics, state_dict / torch.save round trips, and a resumed run that
continues bit for bit. Run by `make hook-test` and `make test`:

    DQSGD_LIB=build/libdqsgd.so timeout 300 /usr/bin/python3 tests/hook/test_state.py

In this process: every bad option raises ValueError naming it (no process group needed);
enum names are accepted; then, in a one-rank gloo group, 50 steps keep the state's size
constant and the round trips return the same state. Then two processes train an MLP under DDP
(several buckets, which DDP rebuilds after its first step) for K1 + K2 steps without stopping,
and K1 steps saving model, optimizer and hook state; two new processes load them, train K2
steps and compare every parameter, bit for bit, with the run that did not stop.
Prints `N passed, M failed (state, ...)`; the exit code is nonzero on any failure.
"""

import datetime
import io
import os
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
from dqsgd.ddp import DQSGDHookState, dqsgd_hook  # noqa: E402

CHECKS = Checks()
check, run = CHECKS.check, CHECKS.run




# ---------------------------------------------------------------- options
BAD = [  # (options, the option the error must name)
    (dict(bits=0), "bits"), (dict(bits=17), "bits"), (dict(bits=2.5), "bits"), (dict(bits=True), "bits"),
    (dict(bits=1, pattern="shared"), "bits"), (dict(bucket_size=0), "bucket_size"),
    (dict(bucket_size=100), "bucket_size"), (dict(bucket_size=-8), "bucket_size"), (dict(norm=7), "norm"),
    (dict(norm="l3"), "norm"), (dict(rounding="near"), "rounding"), (dict(rounding=3), "rounding"),
    (dict(pattern="ring"), "pattern"), (dict(min_compress_numel=-1), "min_compress_numel"),
    (dict(start_iter=-1), "start_iter"), (dict(start_iter=1.5), "start_iter"), (dict(workers=0), "workers"),
    (dict(seed=-1), "seed"), (dict(error_feedback=1), "error_feedback"), (dict(keep_messages=None), "keep_messages"),
    (dict(pattern="shared", norm="l2"), "norm"), (dict(slot_margin=-0.5), "slot_margin"),
    (dict(stats_window=-1), "stats_window"), (dict(model=5), "model"), (dict(process_group="world"), "process_group"),
    (dict(schedule=dict(budget_bits=1e6), dim=1000), "schedule"), (dict(schedule=dict(steps=10, budget_bits=1e6)), "dim"),
    (dict(schedule=dict(steps=10, bogus=1), dim=1000), "schedule"), (dict(schedule=dict(steps=0), dim=1000), "steps"),
    (dict(schedule=dict(steps=10, budget_bits=1.0), dim=1000), "schedule"),
    (dict(density=0), "density"), (dict(density=1.5), "density"), (dict(density="1%"), "density"),
    (dict(density=0.01, pattern="shared"), "pattern"), (dict(density=0.01, bits=17), "bits"),
    (dict(bits=32), "bits"), (dict(density=0.01, schedule=dict(steps=10), dim=1000), "schedule"),
    (dict(density=0.01, index_coder="golomb"), "index_coder"), (dict(momentum=0.9), "momentum"),
    (dict(density=0.01, momentum=1.0), "momentum"), (dict(density=0.01, momentum=0.9, error_feedback=False),
                                                      "error_feedback"),
    (dict(density=0.01, momentum_masking=1), "momentum_masking"), (dict(clip_norm=1.0), "clip_norm"),
    (dict(density=0.01, clip_norm=-1.0, dim=10), "clip_norm"), (dict(density=0.01, clip_norm=1.0), "clip_norm"),
    (dict(warmup_steps=10), "warmup_steps"), (dict(density=0.01, warmup_stages=0), "warmup_stages"),
    (dict(density=0.01, per_layer=True), "per_layer"), (dict(per_layer=True), "per_layer"),
    (dict(density=0.01, layer_density=[0.1]), "layer_density"),
]


def test_options():
    for kw, name in BAD:
        try:
            DQSGDHookState(**kw)
            check("option %s: ValueError" % kw, False, "accepted")
        except ValueError as e:
            msg = str(e)
            check("option %s: ValueError naming %s and what it allows (%s)" % (kw, name, msg.split(": ", 2)[-1][:60]),
                  ("%s=" % name) in msg or ("['%s']=" % name) in msg, msg)
    st = DQSGDHookState(rounding="nearest", norm="MAX", bits=np.int64(3))
    check("enums by name: rounding='nearest', norm='MAX'; a numpy integer width",
          (st.rounding, st.norm, st.bits) == (dqsgd.ROUND_NEAREST, dqsgd.NORM_MAX, 3))
    st = DQSGDHookState(rounding=dqsgd.ROUND_STOCHASTIC, norm=dqsgd.NORM_L2, bucket_size=dqsgd.BUCKET_WHOLE)
    check("enums by dqsgd constant; bucket_size=BUCKET_WHOLE", (st.rounding, st.norm) == (1, 1))
    st = DQSGDHookState(error_feedback=True)
    check("error feedback defaults to nearest rounding with max-norm scales",
          (st.rounding, st.norm) == (dqsgd.ROUND_NEAREST, dqsgd.NORM_MAX))
    model = torch.nn.Linear(100, 50)
    st = DQSGDHookState(schedule=dict(steps=10, budget_bits_per_elem=3.0), model=model)
    check("a schedule takes dim from model=", st.dim == 5050)


# ---------------------------------------------------------------- one rank in this process
def footprint(obj, depth=6):
    """How many entries the containers an object holds have (what grows if it keeps history)."""
    if depth < 0:
        return 0
    if isinstance(obj, dict):
        return len(obj) + sum(footprint(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple, set)) or type(obj).__name__ == "deque":
        return len(obj) + sum(footprint(v, depth - 1) for v in obj)
    if hasattr(obj, "__dict__") and type(obj).__module__.startswith("dqsgd"):
        return footprint({k: v for k, v in vars(obj).items() if k not in ("_threads", "_lock")}, depth - 1)
    return 0


def one_rank():
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % free_port(), rank=0, world_size=1)
    try:
        test_bounded()
        test_round_trip()
    finally:
        dist.destroy_process_group()


def test_bounded():
    g = torch.Generator().manual_seed(1)
    ps = [torch.nn.Parameter(torch.zeros(n)) for n in (30, 2000)]
    st = DQSGDHookState(bits=3, error_feedback=True, min_compress_numel=100, stats_window=5, model=ps and
                        [("a", ps[0]), ("b", ps[1])])
    sizes = {}
    for step in range(50):
        for p in ps:
            p.grad = torch.randn(p.numel(), generator=g)
        dqsgd_hook(st, FakeBucket(0, ps, True)).wait()
        if step in (9, 49):
            st.summary()
            sizes[step] = footprint(st)
    s = st.summary()
    rec = st.stats.records()
    check("statistics stay bounded: the state holds as many entries after 50 steps as after 10 (%d)" % sizes[9],
          sizes[9] == sizes[49], str(sizes))
    check("statistics: a running summary of all 50 steps, a window of the last 5",
          s["iterations"] == 50 and [r["iter"] for r in rec] == list(range(45, 50)) and st.widths == [3] * 5 and
          s["width_mean"] == 3 and s["encode_s"] > 0 and s["bytes"] > 0,
          "%s %s" % (s, [r["iter"] for r in rec]))


def same(a, b):
    """Equal state_dicts: tensors bit for bit, bytes, numbers, nested containers."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def test_round_trip():
    g = torch.Generator().manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(30, 40), torch.nn.Linear(40, 20))
    ps = list(model.parameters())
    kw = dict(schedule=dict(steps=20, budget_bits_per_elem=3.0, period=2, window=2, bits_min=2, bits_max=8),
              error_feedback=True, pattern="sra", min_compress_numel=100)
    st = DQSGDHookState(model=model, **kw)
    for step in range(3):
        for p in ps:
            p.grad = torch.randn(p.shape, generator=g)
        dqsgd_hook(st, FakeBucket(0, ps[2:], False)).wait()
        dqsgd_hook(st, FakeBucket(1, ps[:2], True)).wait()
    sd = st.state_dict()
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    st2 = DQSGDHookState(model=model, **kw).load_state_dict(torch.load(buf))
    check("state_dict -> torch.save -> torch.load -> load_state_dict -> state_dict: the same (step %d, %d residuals, "
          "schedule, sra's second residuals, %d groups)" % (sd["iter"], len(sd["residuals"]), len(sd["groups"])),
          same(sd, st2.state_dict()) and sd["iter"] == 3 and sd["schedule"] is not None and len(sd["residual2"]) == 2)
    buf = io.BytesIO()
    torch.save(st, buf)  # the whole state: no threads, locks or process group pickled
    buf.seek(0)
    st3 = torch.load(buf)
    try:
        dqsgd_hook(st3, FakeBucket(0, ps[2:], False))
        check("an unpickled state refuses to run before attach(model)", False, "no exception")
    except RuntimeError as e:
        check("an unpickled state refuses to run before attach(model)", "attach" in str(e), str(e))
    st3.attach(model)
    check("torch.save(state) -> torch.load -> attach(model): the same state_dict", same(sd, st3.state_dict()))
    kw = dict(kw, schedule=None, bits=4)
    st = DQSGDHookState(model=model, **kw)
    dqsgd_hook(st, FakeBucket(0, ps, True)).wait()
    sd = st.state_dict()
    for what, fn in (("another width", lambda: DQSGDHookState(model=model, **dict(kw, bits=3))),
                     ("another model", lambda: DQSGDHookState(model=torch.nn.Linear(2, 2), **kw)),
                     ("no model", lambda: DQSGDHookState(**kw))):
        try:
            fn().load_state_dict(sd)
            check("load_state_dict into a state with %s: ValueError" % what, False, "accepted")
        except ValueError as e:
            check("load_state_dict into a state with %s: ValueError (%s)" % (what, str(e)[:70]), True)


# ---------------------------------------------------------------- resume, two processes
K1, K2 = 3, 3
EF2 = dict(bits=2, error_feedback=True)
RESUME = {  # name -> (options, how the state is saved)
    "sra-ef2": (dict(EF2, pattern="sra"), "state_dict"),
    "p2-ef": (dict(schedule=dict(steps=K1 + K2, budget_bits_per_elem=3.0, period=2, window=2, bits_min=2, bits_max=8),
                   error_feedback=True), "state_dict"),
    "auto-small-warm": (dict(EF2, pattern="auto", min_compress_numel=100, start_iter=2), "pickle"),
    "shared3-ef": (dict(bits=3, error_feedback=True, pattern="shared"), "state_dict"),
    # top-k with momentum correction: the velocity and the residual, each per parameter, and the warm-up's step
    "dgc2": (dict(density=0.05, bits=2, momentum=0.9, clip_norm=1.0, warmup_steps=K1 + 1), "state_dict"),
    "dgc-layers-pickle": (dict(density=0.05, bits=1, momentum=0.9, per_layer=True), "pickle"),
}


def make_model():
    nn = torch.nn
    torch.manual_seed(123)
    return nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU(), nn.Linear(32, 10))


def batch(rank, step):
    g = torch.Generator().manual_seed(1000 * rank + step)
    return torch.randn(16, 64, generator=g), torch.randint(0, 10, (16,), generator=g)


def trainer(rank, port, phase, outdir):
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=60))
    dist._DEFAULT_FIRST_BUCKET_BYTES = 4096  # several buckets once DDP rebuilds them (after its first step)
    for name, (kw, how) in RESUME.items():
        ckpt = os.path.join(outdir, "%s_rank%d.pt" % (name, rank))
        runs = ((0, K1 + K2, "straight"), (0, K1, "first")) if phase == 1 else ((K1, K1 + K2, "resumed"),)
        for first, end, run_name in runs:
            model = make_model()
            ddp = DDP(model, bucket_cap_mb=0.008)
            # momentum correction keeps the velocity in the hook: the optimizer has none
            opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.0 if kw.get("momentum") else 0.9)
            if run_name == "resumed":
                saved = torch.load(ckpt)
                model.load_state_dict(saved["model"])
                opt.load_state_dict(saved["opt"])
                if how == "pickle":
                    state = torch.load(ckpt + ".hook").attach(ddp)
                else:
                    state = DQSGDHookState(seed=7, model=ddp, optimizer=opt, **kw)
                    state.load_state_dict(saved["hook"])
            else:
                state = DQSGDHookState(seed=7, model=ddp, optimizer=opt, **kw)
            ddp.register_comm_hook(state, dqsgd_hook)
            for step in range(first, end):
                x, y = batch(rank, step)
                opt.zero_grad()
                F.cross_entropy(ddp(x), y).backward()
                opt.step()
            flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
            if run_name == "first":
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "hook": state.state_dict()}, ckpt)
                if how == "pickle":
                    torch.save(state, ckpt + ".hook")
            else:
                torch.save({"params": flat, "iter": state.iter, "buckets": len(state.bucket_calls)},
                           os.path.join(outdir, "%s_%s_rank%d.pt" % (name, run_name, rank)))
            del ddp, opt, state
    dist.destroy_process_group()


def test_resume():
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as outdir:
        for phase in (1, 2):
            t0 = time.time()
            mp.spawn(trainer, args=(free_port(), phase, outdir), nprocs=2, join=True)
            print("  (phase %d, 2 processes: %.1f s)" % (phase, time.time() - t0))
        for name, (kw, how) in RESUME.items():
            a = [torch.load(os.path.join(outdir, "%s_straight_rank%d.pt" % (name, r))) for r in range(2)]
            b = [torch.load(os.path.join(outdir, "%s_resumed_rank%d.pt" % (name, r))) for r in range(2)]
            ok = all(torch.equal(a[r]["params"], b[r]["params"]) for r in range(2)) and \
                torch.equal(a[0]["params"], a[1]["params"]) and b[0]["iter"] == K1 + K2 and a[0]["buckets"] >= 2
            check("resume (%s, %s): %d steps, save, new processes, load, %d steps == %d steps straight, bit for bit, "
                  "on both ranks" % (name, "torch.save(state)" if how == "pickle" else "state_dict()", K1, K2, K1 + K2),
                  ok, "iter %d, buckets %d" % (b[0]["iter"], a[0]["buckets"]))


def main():
    t0 = time.time()
    print("state: library %s, torch %s" % (dqsgd.lib_path, torch.__version__))
    run("options", test_options)
    run("one rank", one_rank)
    run("resume", test_resume)
    print("%d passed, %d failed (state, %.1f s)" % (CHECKS.passed, CHECKS.failed, time.time() - t0))
    return 1 if CHECKS.failed else 0


if __name__ == "__main__":
    sys.exit(main())
