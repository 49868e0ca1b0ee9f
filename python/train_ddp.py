"""train_ddp.py - DDP training of the MLP 784-128-10 on Fashion-MNIST with different gradient
communication hooks: plain float32 allreduce, PyTorch's fp16 and PowerSGD hooks, and the dqsgd
hook (python/dqsgd/ddp.py) at a fixed width, at 2 bits with error feedback, and under a DQSGD
bit budget. Run it with `make ddp` (or /usr/bin/python3 python/train_ddp.py --data DIR).

Hooks (--hooks, comma-separated):
  none                 no hook: DDP's float32 allreduce
  fp16                 fp16_compress_hook
  powersgd1, powersgd2 powerSGD_hook, matrix_approximation_rank 1 / 2, start_powerSGD_iter 10
                       (--start-powersgd), error feedback and warm start on (the defaults)
  dqsgd<b>[ef][-nearest][-max][-shared|-sra|-auto][-small][-warm]
                       dqsgd hook at a fixed width b: QSGD, bucket 512, L2 scale, stochastic
                       rounding; `ef` adds error feedback, `-nearest` nearest rounding, `-max`
                       max-norm scales (QSGD-inf); `-shared` the shared-scale integer allreduce,
                       `-sra` scatter-reduce-allgather with re-quantization
                       and `-auto` the hook's choice instead of allgather; `-small` sends
                       parameters under --min-compress elements as float32 (the biases);
                       `-warm` starts with --start-powersgd float32 steps, as PowerSGD does. dqsgd2ef (stochastic, L2) diverges: that
                       quantizer's error exceeds the gradient (E||Q(x)-x|| > ||x|| at 2 bits and
                       bucket 512), so the residual grows without bound; error feedback needs a
                       contractive quantizer, which dqsgd2ef-nearest-max is
  dqsgd-p2             DQSGD schedule under a bit budget (P2): --budget-frac of fixed 4-bit
                       messages, alpha 0.999, re-planned every 10 steps on a 50-step norm window,
                       widths 2..8 (make demo's settings)
  dqsgd-scale          DQSGD schedule with a given scale c (--scale)

W processes (torch.multiprocessing spawn, gloo, CPU, one thread each) train the same model as
examples/trainer.c's mlp (ReLU, He-uniform W1, Glorot-uniform W2, zero biases; SGD with
heavy-ball momentum 0.9, lr 0.05, minibatch 32 per worker from the worker's own shard), all
hooks from the same seed, the same initial weights and the same minibatch sequence.

Bytes per worker per step are the bytes each worker contributes to the collectives:
  none       4 d (one float32 allreduce of all d gradients)
  fp16       2 d (fp16_compress_hook allreduces the bucket cast to float16)
  powersgdR  4 (sum of P and Q sizes of the compressed matrices + elements of the tensors left
             uncompressed: the biases, and any matrix with (n+m) R * min_compression_rate >= n m),
             after start_powerSGD_iter steps of plain float32 allreduce, which are counted as 4 d;
             it runs three allreduces per step (uncompressed tensors, Ps, Qs)
  dqsgd*     the worker's message (header, scales, codes), or with -shared its integer levels
             and exponents, or with -sra its shard messages to the other ranks plus its
             re-quantized shard, plus float32 steps and slices (-warm, -small); "moved" adds what the
             collectives carried beyond it (messages padded to the largest, the 8-byte size
             exchange, failure flags)
The dqsgd hook's timers (per step, compressed steps): encoding, time in collectives (from
starting each until its future completes, summed over buckets; it overlaps the backward pass)
and decoding.
These are payloads, not wire bytes: what a worker actually transmits depends on gloo's
collective algorithm (a ring allreduce sends 2 (W-1)/W of the payload, an all_gather W-1 times
it), so at W = 2 both come to about the payload.
"""

import argparse
import csv
import gzip
import json
import math
import os
import re
import socket
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# dqsgd<bits>[ef][-nearest][-max]: a fixed width, error feedback, nearest rounding, max-norm scales
DQ_FIXED = re.compile(r"^dqsgd([0-9]+)(ef)?(-nearest)?(-max)?(-shared|-sra|-auto)?(-small)?(-warm)?$")
ALL_HOOKS = ["none", "fp16", "powersgd1", "powersgd2", "dqsgd4", "dqsgd2", "dqsgd2ef", "dqsgd2ef-nearest-max",
             "dqsgd-p2"]
FMNIST_FILES = {"train_x": "train-images-idx3-ubyte", "train_y": "train-labels-idx1-ubyte",
                "test_x": "t10k-images-idx3-ubyte", "test_y": "t10k-labels-idx1-ubyte"}


def read_idx(data_dir, name):
    """An IDX file from data_dir (raw), data_dir/name.gz, or Debian's dataset-fashion-mnist."""
    for path in (os.path.join(data_dir, name), os.path.join(data_dir, name + ".gz"),
                 os.path.join("/usr/share/datasets/fashion-mnist", name + ".gz")):
        if os.path.exists(path):
            data = gzip.open(path, "rb").read() if path.endswith(".gz") else open(path, "rb").read()
            ndim = data[3]
            dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
            arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
            return arr.reshape(dims[0], -1) if ndim > 1 else arr
    raise FileNotFoundError("Fashion-MNIST file %s not found in %s (Debian: apt-get install dataset-fashion-mnist; "
                            "make demo-data)" % (name, data_dir))


def make_model(torch, seed):
    """MLP 784-128-10 with trainer.c's initialization (the values differ: torch's generator)."""
    nn = torch.nn
    g = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    a1, a2 = math.sqrt(6.0 / 784), math.sqrt(6.0 / (128 + 10))
    with torch.no_grad():
        model[0].weight.copy_((torch.rand(128, 784, generator=g) * 2 - 1) * a1)
        model[2].weight.copy_((torch.rand(10, 128, generator=g) * 2 - 1) * a2)
        model[0].bias.zero_()
        model[2].bias.zero_()
    return model


def powersgd_bytes(st, bucket):
    """The bytes powerSGD_hook allreduces for this bucket from this worker, by its own rules
    (torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py): plain allreduce before
    start_powerSGD_iter; then P (n x r) and Q (m x r) of each matrix worth compressing, and
    the uncompressed tensors, all in the bucket's dtype."""
    buf = bucket.buffer()
    if st.iter < st.start_powerSGD_iter:
        return buf.numel() * buf.element_size()
    elems = 0
    for t in bucket.gradients():
        n = t.shape[0]
        m = t.numel() // n
        r = min(n, m, st.matrix_approximation_rank)
        if (n + m) * r * st.min_compression_rate < n * m:
            elems += (n + m) * r
        else:
            elems += n * m
    return elems * buf.element_size()


class CountingState:
    """Wraps a hook's state to count the bytes of each call."""

    def __init__(self, inner, counter):
        self.inner, self.counter, self.bytes = inner, counter, 0


def counted(hook):
    def wrapped(cs, bucket):
        cs.bytes += cs.counter(cs.inner, bucket)
        return hook(cs.inner, bucket)
    return wrapped


def worker(rank, args, port, out_path):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook as psgd
    import dqsgd
    from dqsgd.ddp import DQSGDHookState, dqsgd_hook

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    W = args.workers
    dist.init_process_group("gloo", rank=rank, world_size=W)
    if args.bucket_cap_mb:  # DDP's first bucket (1 MiB, the whole model) too
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_cap_mb * 2 ** 20)

    xtr, ytr = read_idx(args.data, FMNIST_FILES["train_x"]), read_idx(args.data, FMNIST_FILES["train_y"])
    xte = torch.from_numpy(read_idx(args.data, FMNIST_FILES["test_x"]).astype(np.float32) / 255.0)
    yte = torch.from_numpy(read_idx(args.data, FMNIST_FILES["test_y"]).astype(np.int64))
    lo, hi = len(xtr) * rank // W, len(xtr) * (rank + 1) // W  # this worker's shard
    results = []
    for hook in args.hooks:
        model = make_model(torch, args.seed)
        d = sum(p.numel() for p in model.parameters())
        # one bucket by default (d = 101770 floats < DDP's 25 MB); smaller buckets let a hook overlap
        ddp = DDP(model, bucket_cap_mb=args.bucket_cap_mb) if args.bucket_cap_mb else DDP(model)
        info = {"hook": hook, "workers": W, "steps": args.steps, "d": d}
        cs = hs = None
        if hook == "fp16":
            ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
        elif hook.startswith("powersgd"):
            rnk = int(hook[len("powersgd"):])
            st = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=rnk,
                                    start_powerSGD_iter=args.start_powersgd, random_seed=args.seed)
            cs = CountingState(st, powersgd_bytes)
            ddp.register_comm_hook(cs, counted(psgd.powerSGD_hook))
        elif hook.startswith("dqsgd"):
            if hook == "dqsgd-scale":
                hs = DQSGDHookState(schedule=dict(steps=args.steps, scale=args.scale, alpha=args.alpha,
                                                  period=args.period, window=args.window, bits_min=2, bits_max=8),
                                    dim=d, seed=args.seed)
            elif hook == "dqsgd-p2":
                # P2: the budget is a fraction of what fixed 4-bit messages would cost (make demo: 2/3 of
                # the best fixed width's bits)
                bpe = args.budget_frac * dqsgd.message_bits(d, 4, 512) / d
                info["budget_bits_per_elem"] = bpe
                hs = DQSGDHookState(schedule=dict(steps=args.steps, budget_bits_per_elem=bpe, alpha=args.alpha,
                                                  period=args.period, window=args.window, bits_min=2, bits_max=8),
                                    dim=d, seed=args.seed)
            else:
                m = DQ_FIXED.match(hook)
                hs = DQSGDHookState(bits=int(m.group(1)), error_feedback=bool(m.group(2)), seed=args.seed,
                                    rounding=dqsgd.ROUND_NEAREST if m.group(3) else dqsgd.ROUND_STOCHASTIC,
                                    norm=dqsgd.NORM_MAX if m.group(4) else dqsgd.NORM_L2,
                                    pattern=(m.group(5) or "-allgather")[1:],
                                    min_compress_numel=args.min_compress if m.group(6) else 0,
                                    start_iter=args.start_powersgd if m.group(7) else 0,
                                    bucket_size=args.dq_bucket)
            ddp.register_comm_hook(hs, dqsgd_hook)
        elif hook != "none":
            raise SystemExit("train_ddp: unknown hook %s (known: %s)" % (hook, ", ".join(ALL_HOOKS)))

        opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)
        rng = np.random.default_rng([args.seed, rank])  # the same minibatches for every hook
        perm, pos = rng.permutation(np.arange(lo, hi)), 0
        losses = []
        dist.barrier()
        t0 = time.perf_counter()
        for step in range(args.steps):
            if pos + args.batch > len(perm):
                perm, pos = rng.permutation(np.arange(lo, hi)), 0
            idx = np.sort(perm[pos: pos + args.batch])
            pos += args.batch
            xb = torch.from_numpy(xtr[idx].astype(np.float32) / 255.0)
            yb = torch.from_numpy(ytr[idx].astype(np.int64))
            loss = F.cross_entropy(ddp(xb), yb)
            opt.zero_grad()
            try:
                loss.backward()
            except RuntimeError as e:  # the dqsgd hook raises on every rank at once (NaN/Inf: diverged)
                if "dq_status" not in str(e):
                    raise
                m = re.search(r"dqsgd_hook: (.*?) \(dq_status", str(e))
                info["error"] = m.group(1) if m else str(e).strip().splitlines()[0]
                break
            opt.step()
            losses.append(float(loss))
        dist.barrier()
        elapsed = time.perf_counter() - t0

        # replicas: the flat parameters of every rank, compared bitwise with rank 0's
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(W)]
        dist.all_gather(gathered, flat)
        info["replicas_identical"] = all(torch.equal(gathered[0], g) for g in gathered)
        tail = torch.tensor([float(np.mean(losses[-50:])) if losses else float("nan")], dtype=torch.float64)
        dist.all_reduce(tail)
        info["train_loss_last50"] = float(tail[0]) / W
        done = step + 1 if "error" not in info else step
        info["steps_done"] = done
        info["ms_per_step"] = 1000.0 * elapsed / max(done, 1)

        if hook == "none":
            info["bytes_per_step"] = info["moved_per_step"] = 4.0 * d
        elif hook == "fp16":
            info["bytes_per_step"] = info["moved_per_step"] = 2.0 * d
        elif cs is not None:
            info["bytes_per_step"] = info["moved_per_step"] = cs.bytes / done
            info["bytes_last_step"] = powersgd_steady_bytes(cs.inner, model)
        else:
            info["bytes_per_step"] = hs.bytes_msg / max(hs.iterations, 1)
            info["moved_per_step"] = (hs.bytes_moved + hs.bytes_control) / max(hs.iterations, 1)
            info["mean_width"] = float(np.mean(hs.widths))
            info["widths"] = "%d..%d" % (min(hs.widths), max(hs.widths))
            sm = hs.summary()  # the compressed iterations: means per step
            info["bytes_compressing"] = sm["bytes"]
            info["encode_ms"], info["comm_ms"], info["decode_ms"] = (1000.0 * sm[k] for k in (
                "encode_s", "comm_s", "decode_s"))
            info["patterns"] = "/".join(sorted(set(hs.patterns.values())))
            info["buckets"] = len(hs.bucket_calls)
        if rank == 0:
            with torch.no_grad():
                logits = model(xte)
                info["test_loss"] = float(F.cross_entropy(logits, yte))
                info["test_acc"] = float((logits.argmax(1) == yte).float().mean())
            results.append(info)
            print("train_ddp: %-9s acc %.4f  %9.0f B/step/worker  %.2f ms/step%s%s" % (
                hook, info["test_acc"], info["bytes_per_step"], info["ms_per_step"],
                "" if info["replicas_identical"] else "  REPLICAS DIFFER",
                "  (%s)" % info["error"] if "error" in info else ""), file=sys.stderr, flush=True)
        del ddp, opt
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.barrier()
    dist.destroy_process_group()


def powersgd_steady_bytes(st, model):
    """PowerSGD's bytes per step once compression runs (the same rule, whole model)."""
    elems = 0
    for p in model.parameters():
        n = p.shape[0]
        m = p.numel() // n
        r = min(n, m, st.matrix_approximation_rank)
        elems += (n + m) * r if (n + m) * r * st.min_compression_rate < n * m else n * m
    return 4 * elems


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--steps", type=int, default=600, help="SGD steps per hook (default 600)")
    ap.add_argument("--hooks", default=",".join(ALL_HOOKS),
                    help="comma-separated, from: " + ", ".join(ALL_HOOKS) + ", dqsgd-scale or dqsgd<bits>[ef][-nearest][-max]")
    ap.add_argument("--csv", help="also write the results as CSV here")
    ap.add_argument("--data", default="build/fashion-mnist", help="Fashion-MNIST directory (raw or .gz IDX files)")
    ap.add_argument("--batch", type=int, default=32, help="minibatch per worker (default 32)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start-powersgd", type=int, default=10, help="PowerSGD's start_powerSGD_iter (default 10)")
    ap.add_argument("--bucket-cap-mb", type=float, default=0,
                    help="DDP's bucket_cap_mb (default: DDP's 25, one bucket for this model)")
    ap.add_argument("--dq-bucket", type=int, default=512,
                    help="dqsgd<b>*: elements per scale (dqsgd's bucket, not DDP's; default 512)")
    ap.add_argument("--min-compress", type=int, default=1024,
                    help="dqsgd*-small: parameters under this many elements go float32 (default 1024)")
    ap.add_argument("--budget-frac", type=float, default=2.0 / 3.0,
                    help="DQSGD-P2 budget as a fraction of fixed 4-bit messages (default 2/3)")
    ap.add_argument("--scale", type=float, default=2.0, help="dqsgd-scale: the scale c (default 2)")
    ap.add_argument("--alpha", type=float, default=0.999, help="DQSGD alpha (default 0.999, as make demo)")
    ap.add_argument("--period", type=int, default=10, help="DQSGD re-plans every PERIOD steps (default 10)")
    ap.add_argument("--window", type=int, default=50, help="DQSGD norm window (default 50)")
    args = ap.parse_args()
    args.hooks = [h.strip() for h in args.hooks.split(",") if h.strip()]
    for h in args.hooks:
        if h not in ALL_HOOKS + ["dqsgd-scale"] and not DQ_FIXED.match(h):
            ap.error("unknown hook %s (known: %s)" % (h, ", ".join(ALL_HOOKS)))
    if not 2 <= args.workers <= 8:
        ap.error("--workers: 2..8")
    read_idx(args.data, FMNIST_FILES["test_y"])  # fail early, in the parent, when the data set is missing

    import torch
    import torch.multiprocessing as mp
    import dqsgd

    print("train_ddp: MLP 784-128-10, %d workers x batch %d, %d steps, lr %g, momentum %g, seed %d; torch %s, "
          "dqsgd %s kernels" % (args.workers, args.batch, args.steps, args.lr, args.momentum, args.seed,
                                torch.__version__, dqsgd.simd_backend()), file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "results.json")
        t0 = time.time()
        mp.spawn(worker, args=(args, free_port(), out_path), nprocs=args.workers, join=True)
        with open(out_path) as f:
            results = json.load(f)
    base = next((r["bytes_per_step"] for r in results if r["hook"] == "none"), 4.0 * results[0]["d"])

    hdr = ("hook", "test acc", "test loss", "B/step/worker", "vs fp32", "moved B/step", "ms/step", "enc ms",
           "comm ms", "dec ms", "width", "identical", "note")
    rows = []
    for r in results:
        width = {"none": "32", "fp16": "16"}.get(r["hook"], "-")
        if "mean_width" in r:
            width = "%.2f (%s)" % (r["mean_width"], r["widths"]) if r["widths"].split("..")[0] != \
                r["widths"].split("..")[1] else r["widths"].split("..")[0]
        rows.append((r["hook"], "%.4f" % r["test_acc"], "%.4f" % r["test_loss"], "%.0f" % r["bytes_per_step"],
                     "%.1fx" % (base / r["bytes_per_step"]), "%.0f" % r["moved_per_step"], "%.2f" % r["ms_per_step"],
                     *(("%.3f" % r[k]) if k in r else "-" for k in ("encode_ms", "comm_ms", "decode_ms")),
                     width, "yes" if r["replicas_identical"] else "NO",
                     "stopped: %s" % r["error"] if "error" in r else ""))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(hdr)]
    print("\nMLP 784-128-10 on Fashion-MNIST, DDP with %d workers x batch %d, %d steps (d = %d; %.0f s in all)" % (
        args.workers, args.batch, args.steps, results[0]["d"], time.time() - t0))
    print("  ".join(h.ljust(w) for h, w in zip(hdr, widths)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    for r in results:
        if r["hook"].startswith("powersgd"):
            print("%s: %d B/step once compressing (plain float32 allreduce for the first %d steps)" % (
                r["hook"], r["bytes_last_step"], args.start_powersgd))
        if "patterns" in r:
            print("%s: %.0f B/step once compressing, %d DDP bucket(s), pattern %s; per step %.3f ms encoding, %.3f ms in collectives "
                  "(summed over buckets, overlapping the backward pass), %.3f ms decoding" % (
                      r["hook"], r["bytes_compressing"], r["buckets"], r["patterns"], r["encode_ms"], r["comm_ms"], r["decode_ms"]))
        if r["hook"] == "dqsgd-p2":
            print("dqsgd-p2: budget %.3f bits/element/step (%.3g of fixed 4-bit), alpha %g, period %d, window %d" % (
                r["budget_bits_per_elem"], args.budget_frac, args.alpha, args.period, args.window))
    if args.csv:
        keys = ["hook", "workers", "steps", "steps_done", "d", "test_acc", "test_loss", "train_loss_last50", "bytes_per_step",
                "moved_per_step", "ms_per_step", "encode_ms", "comm_ms", "decode_ms", "bytes_compressing", "patterns",
                "mean_width", "replicas_identical", "error"]
        with open(args.csv, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            wr.writeheader()
            for r in results:
                wr.writerow(r)
    if not all(r["replicas_identical"] for r in results):
        print("train_ddp: replicas differ after training", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
