#!/usr/bin/python3
"""tests/hook/test_sparse.py - the DDP hook's top-k messages (density: composed values at 1..16
bits or float32, doc/FORMAT.md 20.10) and Deep Gradient Compression's momentum correction
(python/dqsgd/ddp.py). Run by `make hook-test` and `make test`:

    DQSGD_LIB=build/libdqsgd.so timeout 300 /usr/bin/python3 tests/hook/test_sparse.py

W = 2, 3 and 4 processes (gloo, CPU) train a small MLP under DDP with the hook for several
configurations and save every message each rank sent and every tensor the hook returned; this
process then checks, for each:
  (a) the hook's result equals decoding all ranks' messages here (decode_add in rank order,
      weight 1/W), bit for bit, on every rank; each message has the k its density (or its
      layer's, or the warm-up's) gives;
  (b) the parameters are bitwise equal on every rank after the run, and have moved;
  (c) with momentum correction, against a reference written in plain torch from the gradients
      the hook was handed: u = m u + g (g clipped to its share of clip_norm / sqrt(W) first),
      v = v + u, send the k largest |v| (lower index first among equal ones), v and u cleared
      where sent (u kept without momentum factor masking); at 32 bits the result must equal
      the reference's mean bit for bit; at b bits each message must equal dqsgd.encode of the
      reference's u with the reference's v as residual, byte for byte, and u after masking
      must be zero exactly at the message's indices.
The warm-up's densities against Deep Gradient Compression's published sparsities (75%, 93.75%,
98.4375%, 99.6%, then 99.9%), and check_optimizer's verdicts, in this process.
Prints `N passed, M failed (sparse, ...)`; the exit code is nonzero on any failure.
"""

import datetime
import os
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dqsgd  # noqa: E402
from checks import Checks, free_port  # noqa: E402
from dqsgd.ddp import DQSGDHookState  # noqa: E402

STEPS = 6
LR = 0.1
CHECKS = Checks()
check, run = CHECKS.check, CHECKS.run

DGC = dict(density=0.05, momentum=0.9, clip_norm=0.5, warmup_steps=4, warmup_stages=2)
# name -> (options, one DDP bucket: the plain-torch reference of momentum correction needs one)
CONFIGS = {
    2: {
        "topk2": (dict(density=0.05, bits=2), False),
        "topk-float": (dict(density=0.02, bits=32, index_coder="rice"), False),
        "ternary": (dict(density=0.1, bits=1, bucket_size=dqsgd.BUCKET_WHOLE), False),
        "dgc-float": (dict(DGC, bits=32), True),
        "dgc-nomask": (dict(DGC, bits=32, momentum_masking=False), True),
        "dgc2": (dict(DGC, bits=2), True),
        "layers": (dict(density=0.1, bits=2, layer_density={"0.weight": 0.02, "4.bias": 1.0}), False),
    },
    3: {
        "topk4": (dict(density=0.03, bits=4), False),
        "dgc-float": (dict(DGC, bits=32), True),
        "dgc1": (dict(DGC, bits=1), True),
    },
    4: {
        "ternary": (dict(density=0.1, bits=1), False),
        "dgc-float": (dict(DGC, bits=32), True),
        "layers-dgc4": (dict(DGC, bits=4, per_layer=True), False),
    },
}


def bits_equal(a, b):
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def make_model():
    nn = torch.nn
    torch.manual_seed(123)
    return nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 32), nn.ReLU(), nn.Linear(32, 10))


def worker(rank, world, port, outdir):
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from dqsgd.ddp import dqsgd_hook

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
    gen = torch.Generator().manual_seed(1000 + rank)  # different data on each rank
    xs = [torch.randn(16, 64, generator=gen) for _ in range(STEPS)]
    ys = [torch.randint(0, 10, (16,), generator=gen) for _ in range(STEPS)]
    first = dist._DEFAULT_FIRST_BUCKET_BYTES
    for name, (kw, one_bucket) in CONFIGS[world].items():
        model = make_model()
        init = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()
        # several buckets (about 8 KB) once DDP rebuilds them after step 0, or one bucket throughout
        dist._DEFAULT_FIRST_BUCKET_BYTES = first if one_bucket else 4096
        ddp = DDP(model, bucket_cap_mb=25 if one_bucket else 0.008)
        dist._DEFAULT_FIRST_BUCKET_BYTES = first
        opt = torch.optim.SGD(ddp.parameters(), lr=LR)
        state = DQSGDHookState(seed=11, keep_messages=True, model=ddp, optimizer=opt, **kw)
        ddp.register_comm_hook(state, dqsgd_hook)
        rec = {}
        where, off = {}, 0  # id(parameter) -> its elements' offsets in the flat model
        for p in model.parameters():
            where[id(p)] = np.arange(off, off + p.numel())
            off += p.numel()
        for step in range(STEPS):
            opt.zero_grad()
            F.cross_entropy(ddp(xs[step]), ys[step]).backward()
            opt.step()
            for idx, last in state.last.items():
                key = "%d_%d" % (step, idx)
                rec["in_" + key] = last["input"].float().numpy()
                rec["res_" + key] = last["result"].numpy()
                rec["small_" + key] = np.array(last["small"], np.int64).reshape(-1, 2)
                # element j of the bucket is element perm[j] of the flat model (DDP orders buckets its way)
                rec["perm_" + key] = np.concatenate([where[id(p)] for p in last["params"]])
                for gid, g in last.get("groups", {}).items():
                    gk = "%s_%d" % (key, gid)
                    rec["msg_" + gk] = g["msg"]
                    rec["k_" + gk] = np.array([g["k"]])
                    rec["slices_" + gk] = np.array(g["slices"], np.int64).reshape(-1, 2)
                    rec["sizes_" + gk] = np.array(g["sizes"], np.int64)
                    if g["velocity"] is not None:
                        rec["u_" + gk] = g["velocity"].numpy()
                        rec["v_" + gk] = g["residual"].numpy()
            state.last.clear()
        rec["params"] = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()
        rec["init"] = init.numpy()
        np.savez(os.path.join(outdir, "%s_rank%d.npz" % (name, rank)), **rec)
        del ddp, opt, state
    dist.destroy_process_group()


def topk_ref(v, k):
    """The k largest |v| (lower index first among equal ones), ascending: numpy, not the library."""
    key = np.abs(v.astype(np.float32))
    order = np.lexsort((np.arange(v.size), -key))
    return np.sort(order[:k])


def dgc_reference(kw, world, recs, steps, tag):
    """Check (c): momentum correction against plain torch, one bucket, one group."""
    m, masking = kw["momentum"], kw.get("momentum_masking", True)
    d = recs[0]["init"].size
    u = [torch.zeros(d) for _ in range(world)]
    v = [torch.zeros(d) for _ in range(world)]
    ok, detail = True, ""
    for step in steps:
        key = "%d_0" % step
        gks = [k[4:] for k in recs[0] if k.startswith("msg_" + key + "_")]
        if len(gks) != 1:
            return check("%s (c): one group per step" % tag, False, "step %d: %s" % (step, gks))
        gk = gks[0]
        perm = torch.from_numpy(recs[0]["perm_" + key])
        back = torch.empty_like(perm)
        back[perm] = torch.arange(d)
        mean = torch.zeros(d)
        for r in range(world):
            if not torch.equal(perm, torch.from_numpy(recs[r]["perm_" + key])):
                return check("%s (c): the same bucket layout on every rank" % tag, False, "step %d" % step)
            u[r], v[r] = u[r][perm], v[r][perm]  # the bucket's order, as the hook sees it
            g = torch.from_numpy(recs[r]["in_" + key].copy())
            limit = kw["clip_norm"] * np.sqrt(1.0 / world)  # one group: its share is the whole
            norm = float(torch.linalg.vector_norm(g))
            if norm > limit:
                g = g * (limit / norm)
            u[r].mul_(m).add_(g)
            msg = recs[r]["msg_" + gk]
            k = int(recs[r]["k_" + gk][0])
            if kw["bits"] == 32:
                c = v[r] + u[r]
                idx = torch.from_numpy(topk_ref(c.numpy(), k).astype(np.int64))
                sent = torch.zeros(d)
                sent[idx] = c[idx]
                c[idx] = 0.0
                v[r] = c
                mean += np.float32(1.0 / world) * sent
            else:  # the composed message: the library's encode of the reference's u and v
                p = dict(scheme="topk", k=k, bits=kw["bits"], seed=11, step=step, stream=r,
                         bucket=kw.get("bucket_size", 512), rounding="nearest", norm="max")
                want = dqsgd.encode(u[r], residual=v[r], **p)
                if bytes(want) != bytes(msg):
                    ok = False
                    detail = detail or "step %d rank %d: the message is not encode(u, residual=v)" % (step, r)
                idx = torch.from_numpy(dqsgd.sparse_indices(msg).astype(np.int64))
                dqsgd.decode_add(msg, 1.0 / world, mean)
            if masking:
                u[r][idx] = 0.0
            if not (bits_equal(recs[r]["u_" + gk], u[r].numpy()) and bits_equal(recs[r]["v_" + gk], v[r].numpy())):
                ok = False
                detail = detail or "step %d rank %d: the hook's u or v differs from the reference" % (step, r)
            u[r], v[r] = u[r][back], v[r][back]  # the model's order
        if not bits_equal(recs[0]["res_" + key], mean.numpy()):
            ok = False
            detail = detail or "step %d: result differs from the reference mean (max %.3g)" % (
                step, float(np.abs(recs[0]["res_" + key] - mean.numpy()).max()))
    check("%s (c): momentum correction%s == the plain-torch reference (clipping, %s), bit for bit" % (
        tag, "" if masking else " without masking", "values at %d bits" % kw["bits"]), ok, detail)


def expected_k(kw, name, n, step):
    """k from the options, written out: the layer's density, the warm-up's stage."""
    dens = kw["density"]
    if name is not None and name in kw.get("layer_density", {}):
        dens = kw["layer_density"][name]
    ws, stages = kw.get("warmup_steps", 0), kw.get("warmup_stages", 4)
    if step < ws and dens < 0.25:
        dens = 0.25 * (dens / 0.25) ** ((step * stages // ws) / stages)
    return max(1, min(n, int(round(dens * n))))


def check_config(world, name, recs):
    kw, one_bucket = CONFIGS[world][name]
    tag = "W=%d %s" % (world, name)
    w = np.float32(1.0 / world)
    names = [nm for nm, _ in make_model().named_parameters()]
    keys = sorted(k[3:] for k in recs[0] if k.startswith("in_"))
    steps = sorted({int(k.split("_")[0]) for k in keys})
    check("%s: the hook ran every step on every rank" % tag, steps == list(range(STEPS)) and
          all(sorted(k[3:] for k in r if k.startswith("in_")) == keys for r in recs))
    ok_a, ok_same, ok_k, detail, groups = True, True, True, "", set()
    for key in keys:
        res = [r["res_" + key] for r in recs]
        if not all(bits_equal(res[0], x) for x in res[1:]):
            ok_same, detail = False, "%s: results differ between ranks" % key
        acc = np.zeros(res[0].size, np.float32)
        covered = np.zeros(res[0].size, bool)
        for gk in sorted(k[4:] for k in recs[0] if k.startswith("msg_" + key + "_")):
            gid = int(gk.split("_")[2])
            groups.add(gid)
            msgs = [r["msg_" + gk] for r in recs]
            n = dqsgd.header_read(msgs[0]).count
            part = np.zeros(n, np.float32)
            for m in msgs:  # rank order, weight 1/W, as the hook does
                dqsgd.decode_add(m, w, part)
            off = 0
            for o, c in recs[0]["slices_" + gk]:
                acc[o: o + c] = part[off: off + c]
                covered[o: o + c] = True
                off += c
            layer = names[gid - (1 << 20)] if gid >= 1 << 20 else None
            want = expected_k(kw, layer, n, int(key.split("_")[0]))
            got = [dqsgd.header_read(m).nnz for m in msgs]
            if got != [want] * world or [int(r["k_" + gk][0]) for r in recs] != got:
                ok_k, detail = False, "%s: k %s, expected %d" % (gk, got, want)
            if [int(s) for s in recs[0]["sizes_" + gk]] != [len(m) for m in msgs]:
                ok_a, detail = False, "%s: the slots' sizes are not the messages'" % gk
        if not bits_equal(res[0][covered], acc[covered]):
            ok_a, detail = False, "%s: result differs from the offline decode" % key
    check("%s (a): result == offline decode_add of every rank's top-k message in rank order, on all ranks" % tag,
          ok_a and ok_same, detail)
    check("%s (a): every message has the k of its density%s" % (
        tag, " (per layer)" if kw.get("per_layer") or kw.get("layer_density") else
        " and warm-up" if kw.get("warmup_steps") else ""), ok_k, detail)
    if kw.get("per_layer") or kw.get("layer_density"):
        check("%s: one message per layer (%d groups)" % (tag, len(groups)), len(groups) >= len(names) - 1,
              str(sorted(groups)))
    params = [r["params"] for r in recs]
    check("%s (b): parameters bitwise equal on all %d ranks after %d steps, and changed" % (tag, world, STEPS),
          all(bits_equal(params[0], p) for p in params[1:]) and not bits_equal(params[0], recs[0]["init"]))
    if one_bucket and kw.get("momentum"):
        dgc_reference(kw, world, recs, steps, tag)


def test_distributed():
    import torch.multiprocessing as mp
    for world in [int(v) for v in os.environ.get("HOOK_WORLDS", "2,3,4").split(",")]:
        with tempfile.TemporaryDirectory() as outdir:
            t0 = time.time()
            mp.spawn(worker, args=(world, free_port(), outdir), nprocs=world, join=True)
            print("  (%d processes: %.1f s)" % (world, time.time() - t0))
            for name in CONFIGS[world]:
                recs = [dict(np.load(os.path.join(outdir, "%s_rank%d.npz" % (name, r)))) for r in range(world)]
                run("W=%d %s" % (world, name), lambda: check_config(world, name, recs))


def test_warmup():
    """DGC's warm-up (75%, 93.75%, 98.4375%, 99.6% sparsity, then 99.9%) from its schedule."""
    from dqsgd.ddp import _Group
    state = DQSGDHookState(density=0.001, warmup_steps=40, warmup_stages=4)
    g = _Group(0, (), (), [(0, 10 ** 6)], [(0, 10 ** 6)])
    got = [state._density_at(g, t) for t in (0, 9, 10, 19, 20, 30, 39, 40, 1000)]
    want = [0.25, 0.25, 0.0625, 0.0625, 0.015625, 0.00390625, 0.00390625, 0.25 ** 5, 0.001]
    # DGC's sparsities are 1 - 0.25^(s+1), ending at 1 - 0.25^5 = 99.902% where the target is 99.9%: a
    # geometric schedule from 25% to 0.1% differs from them by at most that factor, 0.001 / 0.25^5 = 1.024
    check("warm-up: densities %s == DGC's 1 - (75%%, 93.75%%, 98.4375%%, 99.6%%, 99.9%%) within 2.4%%" % (
        ", ".join("%.4g" % x for x in got)), all(abs(a - b) <= 0.024 * b * (1 + 1e-9) for a, b in zip(got, want)))
    check("warm-up: k at the start is 25%% of the elements", state._k(g, 0) == 250000, str(state._k(g, 0)))


def test_optimizer():
    model = make_model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DQSGDHookState(model=model, density=0.01, momentum=0.9)
    check("momentum correction without an optimizer to check: a warning", len(caught) == 1 and
          "without momentum" in str(caught[0].message))
    for opt, ok in ((torch.optim.SGD(model.parameters(), lr=0.1), True),
                    (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), False),
                    (torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-4), False),
                    (torch.optim.Adam(model.parameters()), False)):
        try:
            DQSGDHookState(model=model, density=0.01, momentum=0.9, optimizer=opt)
            got = True
        except ValueError as e:
            got = "optimizer" in str(e) and False
        check("check_optimizer: %s %s %s" % (type(opt).__name__, {k: v for k, v in opt.defaults.items() if k in (
            "momentum", "weight_decay") and v}, "accepted" if ok else "refused (ValueError)"), got == ok)
    DQSGDHookState(model=model, density=0.01, optimizer=torch.optim.Adam(model.parameters()))  # no momentum: any
    check("without momentum correction any optimizer is accepted", True)


def main():
    t0 = time.time()
    print("sparse: library %s (%s kernels), torch %s" % (dqsgd.lib_path, dqsgd.simd_backend(), torch.__version__))
    run("warm-up", test_warmup)
    run("optimizer", test_optimizer)
    run("distributed", test_distributed)
    print("%d passed, %d failed (sparse, %.1f s)" % (CHECKS.passed, CHECKS.failed, time.time() - t0))
    return 1 if CHECKS.failed else 0


if __name__ == "__main__":
    sys.exit(main())
