"""train_ddp.py - DDP training on Fashion-MNIST with different gradient communication hooks:
plain float32 allreduce, PyTorch's fp16 and PowerSGD hooks, and the dqsgd hook
(python/dqsgd/ddp.py) with any of its options. `make ddp` runs it on the MLP; `make ddp-link`
(tools/ddp_link.sh) runs it on the CNN over a shaped loopback link. By hand:

    /usr/bin/python3 python/train_ddp.py --data build/fashion-mnist --model cnn --workers 2 \
        --hooks none,fp16,dq4,dqsgd:bits=2:error_feedback=true --steps 300

Methods (--hooks, comma-separated; every method starts from the same weights and walks the
same minibatches):
  none          no hook: DDP's own float32 allreduce
  fp16          PyTorch's fp16_compress_hook
  powersgd<R>   PyTorch's powerSGD_hook at rank R (error feedback and warm start on, the
                defaults), start_powerSGD_iter --start-powersgd; always ONE DDP bucket: with
                several it deadlocks on gloo (its callback waits on a collective, so ranks
                start collectives in different orders)
  dqsgd[:key=value[:key=value...]]
                the dqsgd hook, DQSGDHookState(**options): bits, pattern, error_feedback,
                bucket_size, min_compress_numel, start_iter, seed, ... as the hook names them;
                values true/false, numbers, rounding=nearest|stochastic, norm=l2|max; the
                trainer's own keys budget_frac=F (a DQSGD-P2 schedule spending F times the
                bits of fixed 4-bit messages) and sched_scale=C (a DQSGD schedule with scale C)
                use --alpha, --period and --window; conv_density=F and linear_density=F give
                the convolutions' or the linear layers' parameters that density, density@NAME=F
                the parameter NAME (one message per layer: the hook's layer_density). Without
                seed the run's --seed is used.
                Top-k messages: density=F (bits=32: float32 values); with momentum=M (Deep
                Gradient Compression's momentum correction) the optimizer runs without momentum.
  presets       names for common dqsgd specs (PRESETS below; --help lists them)

Models (--model): mlp, 784-128-10 as examples/trainer.c's (d = 101770); cnn, conv 1->32 5x5,
max-pool 2, conv 32->64 5x5, max-pool 2, linear 1024->512, linear 512->10, ReLUs (d = 582026).
W processes (torch.multiprocessing spawn, gloo, CPU, one thread each), SGD with heavy-ball
momentum, minibatch --batch per worker from the worker's own shard.

What each run measures (rank 0 prints a table; --out-dir keeps CSVs):
  ms/step        median over the steps after --warmup of rank 0's wall time of one step
                 (minibatch, forward, backward with its communication, optimizer step)
  backward ms    the same median for loss.backward(), which returns when every bucket's
                 communication has completed
  hook call ms   time spent inside the hook calls per step (median): the backward pass is
                 stalled for it, whatever the hook does asynchronously afterwards
  B/step         bytes this worker hands to collectives per step, mean over the steps after
                 --warmup, counted by wrapping torch.distributed's collectives while a step
                 runs: an allreduce's tensor, an allgather's input, an all-to-all's whole input
                 (its own piece included), a broadcast's tensor at its source. DDP's own
                 allreduce (method none) runs in C++, out of the wrapper's reach: it is 4 bytes
                 per parameter per step, every bucket allreduced once.
  wire B/step    with --wire-bytes (a private network namespace, tools/ddp_link.sh): the bytes
                 sent on its loopback during those steps (TCP/IP headers and acknowledgements
                 included), divided by W: what one worker puts on the link
  test accuracy  at the end on the 10000 test images; every --eval-every steps on a fixed
                 subset of --eval-subset test images (the curve: accuracy against training
                 seconds, evaluation time excluded)
  hook timers    the dqsgd hook's own means per compressed step (state.summary(): encode,
                 communication, decode, and what else it reports), in ms
  other load     CPU cores busy with other processes during the run (/proc/stat minus this
                 run's own CPU time): the machine's background load
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
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Named methods: name -> (spec, label). A spec is what --hooks accepts.
PRESETS = {
    "dq4": ("dqsgd:bits=4", "dqsgd 4-bit allgather"),
    "dq2": ("dqsgd:bits=2", "dqsgd 2-bit allgather"),
    "dq2ef": ("dqsgd:bits=2:error_feedback=true", "dqsgd 2-bit + error feedback"),
    "dq2ef-l2": ("dqsgd:bits=2:error_feedback=true:rounding=stochastic:norm=l2",
                 "dqsgd 2-bit + error feedback, stochastic L2 (no contraction)"),
    "dqshared": ("dqsgd:bits=4:pattern=shared", "dqsgd 4-bit shared"),
    "dqsra": ("dqsgd:bits=4:pattern=sra", "dqsgd 4-bit sra"),
    "dqauto": ("dqsgd:pattern=auto", "dqsgd auto (hook defaults)"),
    "dqp2": ("dqsgd:budget_frac=0.6667", "dqsgd DQSGD-P2 (2/3 of 4-bit)"),
    "topk1f": ("dqsgd:density=0.01:bits=32", "dqsgd top-k 1%, float32 values"),
    "topk1b2": ("dqsgd:density=0.01:bits=2", "dqsgd top-k 1%, 2-bit values"),
    "dgc1b2": ("dqsgd:density=0.01:bits=2:momentum=0.9:warmup_steps=12",
               "dqsgd top-k 1%, 2-bit values, momentum correction (DGC)"),
}
LABELS = {"none": "plain DDP (fp32 allreduce)", "fp16": "fp16 hook"}
POWERSGD = re.compile(r"^powersgd([0-9]+)$")
MAKE_DDP_HOOKS = ["none", "fp16", "powersgd1", "powersgd2", "dq4", "dq2", "dq2ef-l2", "dq2ef", "dqp2"]
FMNIST_FILES = {"train_x": "train-images-idx3-ubyte", "train_y": "train-labels-idx1-ubyte",
                "test_x": "t10k-images-idx3-ubyte", "test_y": "t10k-labels-idx1-ubyte"}
TRAINER_KEYS = ("budget_frac", "sched_scale")  # dqsgd keys the trainer turns into a schedule
LAYER_KEYS = {"conv_density": "Conv2d", "linear_density": "Linear"}  # ... into the hook's layer_density


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


# ---------------------------------------------------------------- methods
def parse_value(key, text):
    """A dqsgd option's value from its text: rounding/norm names, booleans, numbers, else the text."""
    import dqsgd
    named = {"rounding": {"nearest": dqsgd.ROUND_NEAREST, "stochastic": dqsgd.ROUND_STOCHASTIC},
             "norm": {"l2": dqsgd.NORM_L2, "max": dqsgd.NORM_MAX}}
    if key in named:
        if text not in named[key]:
            raise ValueError("%s=%s: one of %s" % (key, text, ", ".join(named[key])))
        return named[key][text]
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_method(name):
    """A method name -> dict(kind, name, label, and rank or options). Raises ValueError."""
    spec, label = PRESETS.get(name, (name, None))
    m = POWERSGD.match(spec)
    if spec in ("none", "fp16"):
        return {"kind": spec, "name": name, "label": LABELS[spec]}
    if m:
        return {"kind": "powersgd", "name": name, "rank": int(m.group(1)),
                "label": "PowerSGD rank %s (one bucket)" % m.group(1)}
    if spec == "dqsgd" or spec.startswith("dqsgd:"):
        opts = {}
        for item in spec.split(":")[1:]:
            key, eq, text = item.partition("=")
            if not eq or not key:
                raise ValueError("%s: dqsgd options are key=value, got %r" % (name, item))
            opts[key] = parse_value(key, text)
        return {"kind": "dqsgd", "name": name, "options": opts, "label": label or spec}
    raise ValueError("unknown method %s (none, fp16, powersgd<R>, dqsgd[:key=value...], or a preset: %s)" % (
        name, ", ".join(PRESETS)))


def make_model(torch, name, seed):
    """The model, its initial weights drawn from `seed` (the same on every rank)."""
    nn = torch.nn
    g = torch.Generator().manual_seed(seed)
    if name == "mlp":  # examples/trainer.c's initialization (the values differ: torch's generator)
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        a1, a2 = math.sqrt(6.0 / 784), math.sqrt(6.0 / (128 + 10))
        with torch.no_grad():
            model[0].weight.copy_((torch.rand(128, 784, generator=g) * 2 - 1) * a1)
            model[2].weight.copy_((torch.rand(10, 128, generator=g) * 2 - 1) * a2)
            model[0].bias.zero_()
            model[2].bias.zero_()
        return model
    model = nn.Sequential(nn.Unflatten(1, (1, 28, 28)),
                          nn.Conv2d(1, 32, 5), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 10))
    with torch.no_grad():  # torch's default initialization, from this generator
        for layer in model:
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                bound = 1.0 / math.sqrt(layer.weight[0].numel())
                layer.weight.copy_((torch.rand(layer.weight.shape, generator=g) * 2 - 1) * bound)
                layer.bias.copy_((torch.rand(layer.bias.shape, generator=g) * 2 - 1) * bound)
    return model


# ---------------------------------------------------------------- measuring
# torch.distributed collective -> the argument holding what the caller hands to it, and for
# rooted collectives the argument naming the root (only the root hands data)
COLLECTIVES = {"all_reduce": ("tensor", None), "all_gather": ("tensor", None),
               "all_to_all_single": ("input", None), "all_to_all": ("input_tensor_list", None),
               "all_gather_into_tensor": ("input_tensor", None), "_all_gather_base": ("input_tensor", None),
               "reduce_scatter": ("input_list", None), "reduce_scatter_tensor": ("input", None),
               "_reduce_scatter_base": ("input", None), "all_reduce_coalesced": ("tensors", None),
               "all_gather_coalesced": ("input_tensor_list", None), "reduce": ("tensor", None),
               "gather": ("tensor", None), "send": ("tensor", None), "isend": ("tensor", None),
               "broadcast": ("tensor", "src"), "scatter": ("scatter_list", "src")}


def tensor_bytes(x):
    if x is None:
        return 0
    if isinstance(x, (list, tuple)):
        return sum(tensor_bytes(t) for t in x)
    return x.numel() * x.element_size()


class CollectiveMeter:
    """Counts the bytes and calls of torch.distributed's collectives while `on`: the module's
    functions are replaced by wrappers, which every hook reaches (they call dist.<name>)."""

    def __init__(self, dist, rank):
        import inspect
        self.on, self.bytes, self.calls, self.rank = False, 0, 0, rank
        self._lock = threading.Lock()
        for name, (arg, root) in COLLECTIVES.items():
            fn = getattr(dist, name, None)
            if fn is not None:
                setattr(dist, name, self._wrap(fn, inspect.signature(fn), arg, root))

    def _wrap(self, fn, sig, arg, root):
        def counted(*a, **kw):
            if self.on:
                b = sig.bind(*a, **kw)
                b.apply_defaults()
                n = tensor_bytes(b.arguments[arg]) if root is None or b.arguments[root] == self.rank else 0
                with self._lock:  # hooks may call from several threads
                    self.bytes += n
                    self.calls += 1
            return fn(*a, **kw)
        return counted

    def take(self):
        with self._lock:
            b, c, self.bytes, self.calls = self.bytes, self.calls, 0, 0
        return b, c


class HookTimer:
    """Wraps a hook: seconds spent inside its calls."""

    def __init__(self, hook, state):
        self.seconds = 0.0

        def timed(_, bucket):  # DDP checks that the second parameter is named bucket
            t = time.perf_counter()
            try:
                return hook(state, bucket)
            finally:
                self.seconds += time.perf_counter() - t
        self.hook, self.state = timed, state

    def take(self):
        s, self.seconds = self.seconds, 0.0
        return s


def lo_tx_bytes():
    """Bytes sent on this network namespace's loopback so far (/proc/net/dev)."""
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                return int(rest.split()[8])
    raise RuntimeError("train_ddp: no lo in /proc/net/dev")


def busy_seconds():
    """Seconds all CPUs spent busy so far (/proc/stat: everything but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def median(xs):
    return float(np.median(xs)) if len(xs) else float("nan")


# ---------------------------------------------------------------- one process
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
    meter = CollectiveMeter(dist, rank)

    xtr, ytr = read_idx(args.data, FMNIST_FILES["train_x"]), read_idx(args.data, FMNIST_FILES["train_y"])
    xte = torch.from_numpy(read_idx(args.data, FMNIST_FILES["test_x"]).astype(np.float32) / 255.0)
    yte = torch.from_numpy(read_idx(args.data, FMNIST_FILES["test_y"]).astype(np.int64))
    subset = torch.from_numpy(np.random.default_rng(0).permutation(len(yte))[: args.eval_subset])
    lo, hi = len(xtr) * rank // W, len(xtr) * (rank + 1) // W  # this worker's shard

    def evaluate(model, idx):
        """Accuracy and mean loss of the replica on test images idx, each rank its share."""
        mine = idx[rank::W]
        stats = torch.zeros(3, dtype=torch.float64)  # correct, loss sum, count
        with torch.no_grad():
            for c in range(0, len(mine), 1000):
                part = mine[c: c + 1000]
                logits = model(xte[part])
                stats[0] += float((logits.argmax(1) == yte[part]).sum())
                stats[1] += float(F.cross_entropy(logits, yte[part], reduction="sum"))
                stats[2] += len(part)
        dist.all_reduce(stats)
        return float(stats[0] / stats[2]), float(stats[1] / stats[2])

    results = []
    for name in args.hooks:
        method = parse_method(name)
        model = make_model(torch, args.model, args.seed)
        d = sum(p.numel() for p in model.parameters())
        cap_mb, first_bytes = args.bucket_cap_mb, dist._DEFAULT_FIRST_BUCKET_BYTES
        if method["kind"] == "powersgd":  # one bucket, the first (1 MiB by default) too
            cap_mb = 2 * 4 * d / 2 ** 20
            dist._DEFAULT_FIRST_BUCKET_BYTES = 2 * 4 * d
        ddp = DDP(model, bucket_cap_mb=cap_mb) if cap_mb else DDP(model)
        dist._DEFAULT_FIRST_BUCKET_BYTES = first_bytes
        info = {"method": name, "label": method["label"], "model": args.model, "world": W, "link": args.link,
                "seed": args.seed, "steps": args.steps, "d": d}
        timer = hs = None
        # momentum correction: the hook keeps the velocity, the optimizer applies the update as it is
        dgc = method["kind"] == "dqsgd" and method["options"].get("momentum", 0) > 0
        opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.0 if dgc else args.momentum)
        if method["kind"] == "fp16":
            timer = HookTimer(default_hooks.fp16_compress_hook, None)
        elif method["kind"] == "powersgd":
            st = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=method["rank"],
                                    start_powerSGD_iter=args.start_powersgd, random_seed=args.seed)
            timer = HookTimer(psgd.powerSGD_hook, st)
        elif method["kind"] == "dqsgd":
            opts = dict(method["options"])
            opts.setdefault("seed", args.seed)
            budget_frac, sched_scale = (opts.pop(k, None) for k in TRAINER_KEYS)
            layer_density = {}
            for key, kind in LAYER_KEYS.items():  # a density for every parameter of these layers
                if key in opts:
                    dens = opts.pop(key)
                    layer_density.update(("%s.%s" % (mname, pname), dens) for mname, mod in model.named_modules()
                                         if type(mod).__name__ == kind for pname, _ in mod.named_parameters())
            for key in [k for k in opts if k.startswith("density@")]:  # one parameter by name
                layer_density[key[len("density@"):]] = opts.pop(key)
            if layer_density:
                opts["layer_density"] = layer_density
            if budget_frac is not None or sched_scale is not None:
                sched = dict(steps=args.steps, alpha=args.alpha, period=args.period, window=args.window,
                             bits_min=2, bits_max=8)
                if budget_frac is not None:  # a fraction of fixed 4-bit messages' bits (make demo: 2/3)
                    sched["budget_bits_per_elem"] = budget_frac * dqsgd.message_bits(d, 4, 512) / d
                else:
                    sched["scale"] = sched_scale
                opts.update(schedule=sched, dim=d)
            hs = DQSGDHookState(model=model, optimizer=opt, **opts)
            timer = HookTimer(dqsgd_hook, hs)
        if timer is not None:
            ddp.register_comm_hook(timer.state, timer.hook)

        rng = np.random.default_rng([args.seed, rank])  # the same minibatches for every method
        perm, pos = rng.permutation(np.arange(lo, hi)), 0
        step_s, backward_s, hook_s, coll_bytes, coll_calls, losses, curve = [], [], [], [], [], [], []
        train_s, done, wire0 = 0.0, 0, None
        curve.append((0, 0.0, evaluate(model, subset)[0], float("nan")))
        dist.barrier()
        cpu0, busy0, wall0 = time.process_time(), busy_seconds(), time.perf_counter()
        for step in range(args.steps):
            if step == args.warmup and args.wire_bytes:
                wire0 = lo_tx_bytes()
            t0 = time.perf_counter()
            meter.on = True
            if pos + args.batch > len(perm):
                perm, pos = rng.permutation(np.arange(lo, hi)), 0
            idx = np.sort(perm[pos: pos + args.batch])
            pos += args.batch
            xb = torch.from_numpy(xtr[idx].astype(np.float32) / 255.0)
            yb = torch.from_numpy(ytr[idx].astype(np.int64))
            loss = F.cross_entropy(ddp(xb), yb)
            opt.zero_grad()
            t1 = time.perf_counter()
            try:
                loss.backward()
            except RuntimeError as e:  # the dqsgd hook raises on every rank at once (NaN/Inf: diverged)
                if "dq_status" not in str(e):
                    raise
                m = re.search(r"dqsgd_hook: (.*?) \(dq_status", str(e))
                info["error"] = m.group(1) if m else str(e).strip().splitlines()[0]
                meter.on = False
                break
            t2 = time.perf_counter()
            opt.step()
            t3 = time.perf_counter()
            meter.on = False
            b, c = meter.take()
            step_s.append(t3 - t0)
            backward_s.append(t2 - t1)
            hook_s.append(timer.take() if timer else 0.0)
            coll_bytes.append(b)
            coll_calls.append(c)
            losses.append(float(loss))
            train_s += t3 - t0
            done = step + 1
            if done % args.eval_every == 0 and done < args.steps:
                acc, _ = evaluate(model, subset)
                curve.append((done, train_s, acc, float(np.mean(losses[-args.eval_every:]))))
        dist.barrier()
        wire1 = lo_tx_bytes() if args.wire_bytes else None
        wall = time.perf_counter() - wall0
        own = torch.tensor([time.process_time() - cpu0], dtype=torch.float64)
        dist.all_reduce(own)  # this run's CPU seconds, all ranks
        info["other_load"] = (busy_seconds() - busy0 - float(own[0])) / wall
        info["load1"] = os.getloadavg()[0]

        # replicas: the flat parameters of every rank, compared bitwise with rank 0's
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(W)]
        dist.all_gather(gathered, flat)
        info["replicas_identical"] = all(torch.equal(gathered[0], g) for g in gathered)
        if "error" not in info:
            acc, _ = evaluate(model, subset)
            curve.append((done, train_s, acc, float(np.mean(losses[-args.eval_every:]))))
            info["test_acc"], info["test_loss"] = evaluate(model, torch.arange(len(yte)))
        info["steps_done"] = done
        info["train_s"] = train_s
        w = slice(min(args.warmup, max(done - 1, 0)), done)  # the measured steps
        info["ms_step"] = 1000.0 * median(step_s[w])
        info["ms_backward"] = 1000.0 * median(backward_s[w])
        info["ms_hook_call"] = 1000.0 * median(hook_s[w]) if timer else float("nan")
        info["bytes_step"] = float(np.mean(coll_bytes[w])) if timer else 4.0 * d
        info["calls_step"] = float(np.mean(coll_calls[w])) if timer else float("nan")
        n_wire = done - w.start
        info["wire_bytes_step"] = (wire1 - wire0) / W / n_wire if wire0 is not None and n_wire else float("nan")
        try:  # DDP's buckets as rebuilt after step 1 (a private call of torch 1.13's reducer)
            info["buckets"] = len(ddp.reducer._get_zeros_like_grad_buckets())
        except (AttributeError, RuntimeError):
            info["buckets"] = ""
        if hs is not None:  # whatever the hook's summary() reports: its timers (ms), overflows
            sm = hs.summary()
            info["hook_timers"] = " ".join(
                ("%s=%.3f" % (k[:-2], 1000.0 * v)) if k.endswith("_s") else "%s=%.3g" % (k, v)
                for k, v in sm.items() if (k.endswith("_s") or k == "overflows") and isinstance(v, (int, float)))
            if sm.get("width_min") is not None:
                info["widths"] = "%s..%s" % (sm["width_min"], sm["width_max"])
            elif getattr(hs, "widths", None):
                info["widths"] = "%d..%d" % (min(hs.widths), max(hs.widths))
            info["patterns"] = "/".join(sorted(set(getattr(hs, "patterns", {}).values())))
            info["payload_step"] = sm["bytes_msg"]  # this rank's messages, without the slots' room
        if rank == 0:
            info["curve"] = curve
            results.append(info)
            print("train_ddp: %-10s acc %.4f  %9.0f B/step  %7.1f ms/step  hook call %5.2f ms%s%s" % (
                name, info.get("test_acc", float("nan")), info["bytes_step"], info["ms_step"], info["ms_hook_call"],
                "" if info["replicas_identical"] else "  REPLICAS DIFFER",
                "  (%s)" % info["error"] if "error" in info else ""), file=sys.stderr, flush=True)
        del ddp, opt, timer, hs
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.barrier()
    dist.destroy_process_group()


# ---------------------------------------------------------------- output
RUN_KEYS = ["world", "link", "seed", "method", "label", "model", "d", "steps", "steps_done", "order", "ms_step",
            "ms_backward", "ms_hook_call", "bytes_step", "calls_step", "wire_bytes_step", "train_s", "test_acc",
            "test_loss", "buckets", "hook_timers", "widths", "patterns", "replicas_identical", "other_load",
            "load1", "error", "curve_file", "payload_step"]


def run_name(r):
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", "W%d-%s-s%d-%s" % (r["world"], r["link"], r["seed"], r["method"]))


def write_outputs(results, out_dir):
    """One curve CSV per run under out_dir/curves, and one row per run appended to out_dir/runs.csv."""
    os.makedirs(os.path.join(out_dir, "curves"), exist_ok=True)
    runs = os.path.join(out_dir, "runs.csv")
    new = not os.path.exists(runs)
    with open(runs, "a", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=RUN_KEYS, extrasaction="ignore")
        if new:
            wr.writeheader()
        for order, r in enumerate(results):
            r["order"], r["curve_file"] = order, os.path.join("curves", run_name(r) + ".csv")
            with open(os.path.join(out_dir, r["curve_file"]), "w", newline="") as c:
                cw = csv.writer(c)
                cw.writerow(["step", "train_s", "subset_acc", "train_loss"])
                cw.writerows(r["curve"])
            wr.writerow({k: ("%.10g" % v if isinstance(v, float) else v) for k, v in r.items() if k in RUN_KEYS})


def print_table(results, args, seconds):
    hdr = ("method", "test acc", "B/step", "wire B/step", "ms/step", "backward", "hook call", "buckets",
           "hook timers (ms)", "identical", "note")
    rows = []
    for r in results:
        rows.append((r["method"], "%.4f" % r["test_acc"] if "test_acc" in r else "-", "%.0f" % r["bytes_step"],
                     "%.0f" % r["wire_bytes_step"] if r["wire_bytes_step"] == r["wire_bytes_step"] else "-",
                     "%.1f" % r["ms_step"], "%.1f" % r["ms_backward"],
                     "%.2f" % r["ms_hook_call"] if r["ms_hook_call"] == r["ms_hook_call"] else "-",
                     str(r["buckets"]), r.get("hook_timers", ""), "yes" if r["replicas_identical"] else "NO",
                     "stopped: %s" % r["error"] if "error" in r else ""))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(hdr)]
    print("\n%s on Fashion-MNIST (d = %d), DDP with %d workers x batch %d, %d steps, link %s, seed %d "
          "(%.0f s in all; medians over steps %d..%d)" % (
              args.model, results[0]["d"], args.workers, args.batch, args.steps, args.link, args.seed, seconds,
              args.warmup, args.steps - 1))
    print("  ".join(h.ljust(w) for h, w in zip(hdr, widths)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    for r in results:
        print("%s: %s" % (r["method"], r["label"]))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__ + "\nPresets:\n" + "".join(
                                     "  %-10s %s\n" % (k, v[0]) for k, v in PRESETS.items()))
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="mlp (default) or cnn")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--steps", type=int, default=600, help="SGD steps per method (default 600)")
    ap.add_argument("--hooks", default=",".join(MAKE_DDP_HOOKS), help="comma-separated methods (see below)")
    ap.add_argument("--data", default="build/fashion-mnist", help="Fashion-MNIST directory (raw or .gz IDX files)")
    ap.add_argument("--batch", type=int, default=32, help="minibatch per worker (default 32)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=10, help="steps left out of the medians and means (default 10)")
    ap.add_argument("--eval-every", type=int, default=0,
                    help="accuracy on the test subset every N steps (default: steps / 10)")
    ap.add_argument("--eval-subset", type=int, default=1000, help="test images in the curve's subset (default 1000)")
    ap.add_argument("--start-powersgd", type=int, default=10, help="PowerSGD's start_powerSGD_iter (default 10)")
    ap.add_argument("--bucket-cap-mb", type=float, default=0,
                    help="DDP's bucket_cap_mb (default: DDP's 25; PowerSGD always gets one bucket)")
    ap.add_argument("--alpha", type=float, default=0.999, help="DQSGD alpha (default 0.999, as make demo)")
    ap.add_argument("--period", type=int, default=10, help="DQSGD re-plans every PERIOD steps (default 10)")
    ap.add_argument("--window", type=int, default=50, help="DQSGD norm window (default 50)")
    ap.add_argument("--link", default="host", help="the link's name in the outputs (tools/ddp_link.sh: its rate)")
    ap.add_argument("--wire-bytes", action="store_true",
                    help="count the bytes sent on lo (only in a network namespace of its own)")
    ap.add_argument("--out-dir", help="append one row per run to OUT_DIR/runs.csv, its curve to OUT_DIR/curves/")
    ap.add_argument("--check", action="store_true", help="check the arguments and the data set, then exit")
    args = ap.parse_args()
    args.hooks = [h.strip() for h in args.hooks.split(",") if h.strip()]
    for h in args.hooks:
        try:
            parse_method(h)
        except ValueError as e:
            ap.error(str(e))
    if not 2 <= args.workers <= 8:
        ap.error("--workers: 2..8")
    if args.steps < 1 or not 0 <= args.warmup < args.steps:
        ap.error("--steps >= 1 and 0 <= --warmup < --steps")
    args.eval_every = args.eval_every or max(1, args.steps // 10)
    read_idx(args.data, FMNIST_FILES["test_y"])  # fail early, in the parent, when the data set is missing
    if args.check:
        return 0

    import torch
    import torch.multiprocessing as mp
    import dqsgd

    print("train_ddp: %s, %d workers x batch %d, %d steps, lr %g, momentum %g, seed %d, link %s; torch %s, "
          "dqsgd %s kernels" % (args.model, args.workers, args.batch, args.steps, args.lr, args.momentum, args.seed,
                                args.link, torch.__version__, dqsgd.simd_backend()), file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "results.json")
        t0 = time.time()
        mp.spawn(worker, args=(args, free_port(), out_path), nprocs=args.workers, join=True)
        with open(out_path) as f:
            results = json.load(f)
    print_table(results, args, time.time() - t0)
    if args.out_dir:
        write_outputs(results, args.out_dir)
    if not all(r["replicas_identical"] for r in results):
        print("train_ddp: replicas differ after training", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
