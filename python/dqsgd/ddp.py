"""dqsgd.ddp - a PyTorch DDP communication hook that sends gradients compressed by dqsgd.

    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    state = DQSGDHookState(model=ddp)                  # the defaults (doc/PYTORCH.md)
    ddp.register_comm_hook(state, dqsgd_hook)
    ...                                                # train as before
    print(state.summary())                             # per step: hook, encode, comm, decode times, bytes
    torch.save({"hook": state.state_dict(), ...}, path)  # resume: state.load_state_dict(ckpt["hook"])

doc/PYTORCH.md documents the options, the patterns, what they cost in accuracy and time, and
checkpoints. How one call runs: the hook call only hands its bucket over and returns a future.
One communication thread per state starts every collective, in the order of the hook calls
(DDP calls the hook in bucket order on every rank, so every rank starts the same collectives in
the same order, whatever order they finish in), and waits where a pattern needs a result
before its next collective; a pool of `workers` threads encodes and decodes (ctypes releases
the GIL). So the backward pass goes on while buckets are coded and on the wire, and the hook
call waits for nothing.

The allgather pattern sends one collective per bucket: each rank's message travels in a slot
of a size every rank knows beforehand (the largest message of the bucket's recent exchanges at
this width, plus a margin; the largest possible message the first time), led by its size. A message
that outgrows its slot sends the rest in a second all_gather, started by the communication
thread after the iteration's last bucket (the one place all ranks reach in the same order);
errors (NaN or Inf in a gradient) travel as negative sizes and are raised on every rank once
the iteration's collectives have all been started.

With density=p a message is a top-k message (the library's composed messages: indices coded,
values at `bits` bits) with error feedback, optionally with Deep Gradient Compression's
momentum correction (the velocity kept here, masked where sent), local clipping, a sparsity
warm-up and a message per layer; it goes by the allgather slots like a QSGD message.
"""

import collections
import math
import queue
import threading
import time
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.distributed as dist

import dqsgd

__all__ = ["DQSGDHookState", "dqsgd_hook", "HookStats", "PATTERNS"]

PATTERNS = ("allgather", "shared", "sra", "auto")
BUCKET_TYPES = (torch.float32, torch.float16, torch.bfloat16)
SLOT_HEAD = 8           # a slot starts with the message's size (int64 LE; negative: a dq_status)
SLOT_PAD_MIN = 64       # the least room a slot leaves above the recent largest message
SLOT_HISTORY = 8        # a slot is sized from the largest message of this many recent exchanges
PARALLEL_MIN = 1 << 16  # elements from which workers > 1 share one message's encode and decode
FLOAT_VALUES = 32       # bits=32 with a density: top-k with float32 values (no quantization)
WARMUP_START = 0.25     # the density a sparsity warm-up starts from (DGC: 75% sparsity)
LAYER_GID = 1 << 20     # per-layer messages: group id LAYER_GID + the parameter's index in the model
STATE_VERSION = 1
# the schedule's keys (dq_sched_params but dim, which the state holds) and the hook's own
_SCHED_KEYS = tuple(f for f, _ in dqsgd.SchedParams._fields_ if f != "dim") + ("budget_bits_per_elem",)


# ---------------------------------------------------------------- options
def _bad(name, value, allowed):
    return ValueError("DQSGDHookState: %s=%r: %s" % (name, value, allowed))


def _integer(name, value, lo, hi=None):
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not ok or value < lo or (hi is not None and value > hi):
        raise _bad(name, value, "an integer %s" % ("in %d..%d" % (lo, hi) if hi is not None else ">= %d" % lo))
    return int(value)


def _enum(name, value, names):
    """A dqsgd constant from its name ("nearest") or value (dqsgd.ROUND_NEAREST); None stays None."""
    if value is None:
        return None
    if isinstance(value, str) and value.lower() in names:
        return names[value.lower()]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and int(value) in names.values():
        return int(value)
    raise _bad(name, value, "one of %s (or their dqsgd constants)" % ", ".join(repr(k) for k in names))


def _fraction(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise _bad(name, value, "a number in (0, 1]")
    return float(value)


def _parameter_order(model):
    """{id(parameter): its index in the model's named_parameters()} (the same on every rank)."""
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = model.module
    pairs = model.named_parameters() if isinstance(model, torch.nn.Module) else model
    try:
        return {id(p): i for i, (_, p) in enumerate(pairs)}
    except (TypeError, ValueError):
        return {}


def _named_parameters(model):
    """({id(parameter): name}, their elements) of an nn.Module (a DDP wrapper is unwrapped, so
    its names are the module's) or of an iterable of (name, parameter) pairs."""
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = model.module
    pairs = model.named_parameters() if isinstance(model, torch.nn.Module) else model
    try:
        pairs = [(str(name), p) for name, p in pairs]
        return {id(p): name for name, p in pairs}, sum(p.numel() for _, p in pairs)
    except (TypeError, ValueError, AttributeError):
        raise _bad("model", model, "an nn.Module or an iterable of (name, parameter) pairs") from None


# ---------------------------------------------------------------- statistics
class HookStats:
    """Per-step statistics in bounded memory: running sums over the finished steps (compressed
    and warm-start steps apart) and, with window > 0, the records of the last `window` steps.
    A record is one step of one rank: hook_s (seconds inside the hook calls, all buckets),
    hook_max_s (the longest call), block_s (of hook_s, waiting for the state's lock, the only
    wait a hook call has), encode_s and decode_s (seconds the workers spent coding),
    comm_s (from starting each collective until it completed, summed: it overlaps the backward
    pass and the other buckets), bytes (handed to collectives: slots, padding, float32 slices),
    bytes_msg (this rank's payload), overflows (messages that outgrew their slot), width (None on
    warm-start steps), iter, warm."""

    SUMS = ("hook_s", "block_s", "encode_s", "comm_s", "decode_s", "bytes", "bytes_msg", "overflows")

    def __init__(self, window=0):
        self._lock = threading.Lock()
        self._open = {}          # iteration -> record, for the steps not yet finished (one or two)
        self._closed = 0         # steps before this one are folded into the sums
        self.window = collections.deque(maxlen=window) if window else None
        self._runs = {False: self._zero(), True: self._zero()}  # warm -> running sums

    @classmethod
    def _zero(cls):
        return {"steps": 0, "sums": dict.fromkeys(cls.SUMS, 0.0), "hook_max_s": 0.0, "width_sum": 0,
                "width_min": None, "width_max": None}

    def add(self, it, warm=None, width=None, hook_max_s=None, **sums):
        with self._lock:
            if it < self._closed:  # late (should not happen: a step closes when DDP has its results)
                run = self._runs[False]
                for k, v in sums.items():
                    run["sums"][k] += v
                return
            r = self._open.get(it)
            if r is None:
                r = self._open[it] = dict(dict.fromkeys(self.SUMS, 0.0), iter=it, warm=False, width=None,
                                          hook_max_s=0.0)
            for k, v in sums.items():
                r[k] += v
            if warm is not None:
                r["warm"] = warm
            if width is not None:
                r["width"] = width
            if hook_max_s is not None and hook_max_s > r["hook_max_s"]:
                r["hook_max_s"] = hook_max_s

    def close(self, before):
        """Fold the records of the steps before `before` (finished) into the sums and the window."""
        with self._lock:
            for it in sorted(i for i in self._open if i < before):
                r = self._open.pop(it)
                run = self._runs[r["warm"]]
                run["steps"] += 1
                for k in self.SUMS:
                    run["sums"][k] += r[k]
                run["hook_max_s"] = max(run["hook_max_s"], r["hook_max_s"])
                if r["width"] is not None:
                    run["width_sum"] += r["width"]
                    run["width_min"] = r["width"] if run["width_min"] is None else min(run["width_min"], r["width"])
                    run["width_max"] = r["width"] if run["width_max"] is None else max(run["width_max"], r["width"])
                if self.window is not None:
                    self.window.append(r)
            self._closed = max(self._closed, before)

    def summary(self, *, warm=False):
        """Means per step over the finished compressed steps (warm=True: the warm-start steps):
        the SUMS keys, hook_max_s (the largest), width_mean/min/max, iterations (their count)."""
        with self._lock:
            run = self._runs[bool(warm)]
            n = run["steps"]
            out = {k: (v / n if n else 0.0) for k, v in run["sums"].items()}
            out.update(iterations=n, hook_max_s=run["hook_max_s"], width_min=run["width_min"],
                       width_max=run["width_max"], width_mean=run["width_sum"] / n if n and not warm else None)
            return out

    def records(self):
        """The window's records, oldest first (empty without a window)."""
        with self._lock:
            return [dict(r) for r in self.window] if self.window is not None else []


# ---------------------------------------------------------------- plans
class _Group:
    """The parameters of a bucket that share one message: gid (its index: the dither seed is
    seed + gid, and per-message state is kept under it), ids ((id, numel) of the compressed
    parameters, in order), big ((offset, count) of their slices in the bucket), every (the
    slices of all its parameters, compressed or not), members (the ids of all its parameters, in
    order), n (compressed elements)."""

    def __init__(self, gid, members, ids, big, every):
        self.gid, self.members, self.ids = gid, tuple(members), tuple(ids)
        self.big, self.every = big, every
        self.n = sum(c for _, c in big)


class _Plan:
    """How a bucket layout is sent: its groups (one, the bucket, unless a checkpoint's layout
    splits it) and its small slices (parameters under min_compress_numel, sent as float32)."""

    def __init__(self, layout, groups, small):
        self.layout, self.groups, self.small = layout, groups, small


def _slices_of(layout, ids, min_numel):
    """(big, every) slices of the parameters `ids` (in that order) in a bucket layout."""
    where, off = {}, 0
    for pid, c in layout:
        where[pid] = (off, c)
        off += c
    big, every = [], []
    for pid in ids:
        o, c = where[pid]
        every.append((o, c))
        if min_numel <= 0 or c >= min_numel:
            big.append((o, c))
    return big, every


def _gather(x, slices):
    """The slices of x as one contiguous tensor (x itself when one slice covers it)."""
    if len(slices) == 1 and slices[0] == (0, x.numel()):
        return x
    return torch.cat([x[o: o + c] for o, c in slices])


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


# ---------------------------------------------------------------- the state
class DQSGDHookState:
    """The hook's state, one per DDP model, shared by its buckets (doc/PYTORCH.md).

    bits: the width, 1..16 (2..16 with the shared pattern), when there is no schedule.
    schedule: None, or a dict of a DQSGD schedule (dqsgd.Schedule's keywords but dim: steps
        required, and scale, budget_bits or budget_bits_per_elem; alpha, bits_min, bits_max,
        period, window, norm_prior, mode...). dim: the model's elements (default: from model).
    error_feedback: keep a residual per parameter; then rounding and norm default to "nearest"
        and "max" (a contraction), else to "stochastic" and "l2".
    pattern: "allgather", "shared", "sra" or "auto". bucket_size: elements per scale.
    min_compress_numel: parameters with fewer elements go as float32. start_iter: the first
        start_iter steps are plain float32 allreduces. seed: the dither key.
    model: the model (or its named_parameters()), whose names key the checkpoint.
    workers: threads that encode and decode. stats_window: steps kept in stats.records().
    slot_margin: the room a slot leaves above the recent largest message, as a fraction of it.
    process_group: the group to aggregate over (None: the default group).
    keep_messages: keep the last call's messages and results per bucket in .last (tests).
    density: None (QSGD messages), or the fraction of each message's elements sent as a top-k
        message whose values go at `bits` bits (1..16: composed; 32: float32), with the index
        coder index_coder; error feedback is then on unless error_feedback=False.
    momentum, momentum_masking, clip_norm, warmup_steps, warmup_stages: Deep Gradient
        Compression's momentum correction (the optimizer must then run without momentum:
        check_optimizer), momentum factor masking, local gradient clipping and sparsity warm-up.
    per_layer, layer_density: one message per parameter; {parameter name: density} overrides."""

    def __init__(self, process_group=None, bits=4, schedule=None, dim=None, error_feedback=None, seed=0,
                 bucket_size=512, rounding=None, norm=None, keep_messages=False, pattern="allgather",
                 min_compress_numel=0, start_iter=0, model=None, workers=1, stats_window=100, slot_margin=0.125,
                 density=None, index_coder="auto", momentum=0.0, momentum_masking=True, clip_norm=None,
                 warmup_steps=0, warmup_stages=4, per_layer=False, layer_density=None, optimizer=None,
                 _unpickling=False):
        if pattern not in PATTERNS:
            raise _bad("pattern", pattern, "one of %s" % ", ".join(repr(p) for p in PATTERNS))
        self.pattern = pattern
        self.density = None if density is None else _fraction("density", density)
        if self.density is not None and pattern != "allgather":
            raise _bad("pattern", pattern, "top-k messages (density) go by the allgather pattern only")
        if self.density is not None and schedule is not None:
            raise _bad("schedule", schedule, "a width schedule is for QSGD messages: leave it None with density")
        if self.density is not None and bits == FLOAT_VALUES and not isinstance(bits, bool):
            self.bits = FLOAT_VALUES
        else:
            self.bits = _integer("bits", bits, 2 if pattern == "shared" and schedule is None else 1, 16)
        if error_feedback is None:
            error_feedback = self.density is not None
        if not isinstance(error_feedback, bool):
            raise _bad("error_feedback", error_feedback, "True or False")
        self.error_feedback = error_feedback
        self._sparse_options(index_coder, momentum, momentum_masking, clip_norm, warmup_steps, warmup_stages,
                             per_layer, layer_density)
        self.rounding = _enum("rounding", rounding, dqsgd.ROUNDINGS)
        self.norm = _enum("norm", norm, dqsgd.NORMS)
        if self.rounding is None:
            self.rounding = dqsgd.ROUND_NEAREST if error_feedback else dqsgd.ROUND_STOCHASTIC
        if self.norm is None:
            self.norm = dqsgd.NORM_MAX if error_feedback else dqsgd.NORM_L2
        if pattern == "shared" and norm is not None and self.norm != dqsgd.NORM_MAX:
            raise _bad("norm", norm, "the shared pattern scales every bucket by its max: leave norm unset or 'max'")
        self.bucket_size = _integer("bucket_size", bucket_size, 1, dqsgd.BUCKET_WHOLE)
        try:  # the library's own rule (a multiple of 8, or dqsgd.BUCKET_WHOLE)
            dqsgd.encode_capacity(1024, min(self.bits, 16), bucket=self.bucket_size)
        except dqsgd.DQError:
            raise _bad("bucket_size", bucket_size, "a positive multiple of 8 or dqsgd.BUCKET_WHOLE") from None
        self.seed = _integer("seed", seed, 0, 2 ** 64 - 1)
        self.min_compress_numel = _integer("min_compress_numel", min_compress_numel, 0)
        self.start_iter = _integer("start_iter", start_iter, 0)
        self.workers = _integer("workers", workers, 1, 256)
        self.stats_window = _integer("stats_window", stats_window, 0)
        if isinstance(slot_margin, bool) or not isinstance(slot_margin, (int, float)) or not 0 <= slot_margin <= 16:
            raise _bad("slot_margin", slot_margin, "a number in 0..16")
        self.slot_margin = float(slot_margin)
        if not isinstance(keep_messages, bool):
            raise _bad("keep_messages", keep_messages, "True or False")
        self.keep_messages = keep_messages
        if process_group is not None and not isinstance(process_group, dist.ProcessGroup):
            raise _bad("process_group", process_group, "None or a torch.distributed ProcessGroup")
        self.process_group = process_group
        self._names, numel = _named_parameters(model) if model is not None else (None, None)
        self._order = _parameter_order(model) if model is not None else {}
        if model is not None or not _unpickling:  # an unpickled state gets its model from attach()
            self._check_layers()
        if self.clip_norm is not None and dim is None:
            dim = numel
        if dim is None and schedule is not None:
            dim = numel
        self.dim = _integer("dim", dim, 1) if dim is not None else None
        if self.clip_norm is not None and self.dim is None:
            raise _bad("clip_norm", clip_norm, "clipping shares the threshold by elements: pass model= or dim=")
        if schedule is not None and (not isinstance(schedule, dict) or "steps" not in schedule):
            raise _bad("schedule", schedule, "None or a dict with at least 'steps'")
        self.sched_spec = dict(schedule) if schedule is not None else None
        self._group_bound = False
        self.rank = self.world_size = self.src0 = None
        if dist.is_available() and dist.is_initialized():
            self._bind_group()
        self._check_schedule()
        self._threads = None     # (_Comm, pool), started by the first hook call
        self._streams = {}       # CUDA device -> the side stream of its copies
        self._lock = threading.Lock()
        self._reset()
        if optimizer is not None:
            self.check_optimizer(optimizer)
        elif self.momentum and not _unpickling:  # warned when the state was first built
            warnings.warn("DQSGDHookState: momentum correction moves the momentum into the hook: the optimizer must "
                          "run without momentum (state.check_optimizer(optimizer) checks it)", stacklevel=2)

    def _sparse_options(self, index_coder, momentum, momentum_masking, clip_norm, warmup_steps, warmup_stages,
                        per_layer, layer_density):
        """The options of top-k messages and of momentum correction, checked."""
        sparse = self.density is not None

        def needs(name, value):
            if not sparse:
                raise _bad(name, value, "an option of top-k messages: set density too")
        if isinstance(index_coder, str) and index_coder.lower() in dqsgd.INDEX_CODERS:
            self.index_coder = dqsgd.INDEX_CODERS[index_coder.lower()]
        else:
            raise _bad("index_coder", index_coder, "one of %s" % ", ".join(repr(k) for k in dqsgd.INDEX_CODERS))
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum < 1:
            raise _bad("momentum", momentum, "a number in [0, 1)")
        self.momentum = float(momentum)
        if self.momentum:
            needs("momentum", momentum)
            if not self.error_feedback:
                raise _bad("error_feedback", False, "momentum correction accumulates the velocity in the residual")
        if not isinstance(momentum_masking, bool):
            raise _bad("momentum_masking", momentum_masking, "True or False")
        self.momentum_masking = momentum_masking
        self.clip_norm = None
        if clip_norm is not None:
            needs("clip_norm", clip_norm)
            if isinstance(clip_norm, bool) or not isinstance(clip_norm, (int, float)) or not 0 < clip_norm < math.inf:
                raise _bad("clip_norm", clip_norm, "None or a positive number")
            self.clip_norm = float(clip_norm)
        self.warmup_steps = _integer("warmup_steps", warmup_steps, 0)
        self.warmup_stages = _integer("warmup_stages", warmup_stages, 1)
        if self.warmup_steps:
            needs("warmup_steps", warmup_steps)
        if not isinstance(per_layer, bool):
            raise _bad("per_layer", per_layer, "True or False")
        if layer_density is not None:
            needs("layer_density", layer_density)
            if not isinstance(layer_density, dict):
                raise _bad("layer_density", layer_density, "None or a dict {parameter name: density}")
            layer_density = {str(k): _fraction("layer_density[%r]" % k, v) for k, v in layer_density.items()}
        if per_layer:
            needs("per_layer", per_layer)
        self.per_layer = per_layer or bool(layer_density)
        self.layer_density = layer_density or {}

    def _check_layers(self):
        if (self.per_layer or self.layer_density) and self._names is None:
            raise _bad("per_layer", self.per_layer, "per-layer messages need model= (their names and order)")
        unknown = sorted(set(self.layer_density) - set((self._names or {}).values()))
        if unknown:
            raise _bad("layer_density", self.layer_density, "the model has no parameter %s" % ", ".join(unknown))

    def check_optimizer(self, optimizer):
        """With momentum correction the hook keeps the velocity, so the optimizer must apply the
        averaged update as it is: torch.optim.SGD with momentum 0 (weight decay and nesterov
        off too: they would act on the corrected update). ValueError for anything else, an
        optimizer the hook does not know included."""
        if not self.momentum:
            return optimizer
        if type(optimizer) is not torch.optim.SGD:
            raise _bad("optimizer", optimizer, "momentum correction needs torch.optim.SGD with momentum=0 (the hook "
                       "keeps the velocity); it does not know %s" % type(optimizer).__name__)
        for group in optimizer.param_groups:
            if group.get("momentum", 0) or group.get("nesterov") or group.get("weight_decay", 0):
                raise _bad("optimizer", optimizer, "momentum correction needs SGD with momentum=0, no nesterov and "
                           "no weight_decay: the hook's momentum %g replaces the optimizer's" % self.momentum)
        return optimizer

    def _density_at(self, g, it):
        """Group g's density at step `it`: its layer's or the state's, raised by the warm-up from
        WARMUP_START in warmup_stages equal stages over warmup_steps steps, exponentially
        (DGC: 75%, 93.75%, 98.4%, 99.6% sparsity, then 99.9%)."""
        d = self.density
        if len(g.members) == 1 and self.layer_density:
            d = self.layer_density.get(self._names.get(g.members[0]), d)
        if it < self.warmup_steps and d < WARMUP_START:
            stage = it * self.warmup_stages // self.warmup_steps
            d = WARMUP_START * (d / WARMUP_START) ** (stage / self.warmup_stages)
        return d

    def _k(self, g, it):
        return max(1, min(g.n, int(round(self._density_at(g, it) * g.n))))

    def _check_schedule(self):
        spec = self.sched_spec
        if spec is None:
            return
        unknown = sorted(set(spec) - set(_SCHED_KEYS))
        if unknown:
            raise _bad("schedule", spec, "unknown key(s) %s; known: %s" % (", ".join(unknown), ", ".join(_SCHED_KEYS)))
        if self.dim is None:
            raise _bad("dim", None, "a schedule needs dim (the model's elements) or model=")
        _integer("schedule['steps']", spec["steps"], 1)
        try:  # dq_sched_init's own checks (a stand-in for the norm prior rank 0 will send)
            self._new_schedule(dict(spec), spec.get("norm_prior") or 1.0)
        except (dqsgd.DQError, TypeError, KeyError, ValueError) as e:
            raise _bad("schedule", spec, "dqsgd.Schedule refuses it: %s" % e) from None

    def _new_schedule(self, spec, norm_prior):
        mode = spec.pop("mode", "dqsgd")
        bpe = spec.pop("budget_bits_per_elem", None)
        if bpe is not None:
            spec["budget_bits"] = float(bpe) * self.dim * spec["steps"]
        spec["norm_prior"] = norm_prior
        spec.setdefault("bucket", self.bucket_size)
        spec.setdefault("workers", self.world_size or 1)
        return dqsgd.Schedule(mode, dim=self.dim, **spec)

    def _bind_group(self):
        if self._group_bound:
            return
        group = self.process_group if self.process_group is not None else dist.group.WORLD
        backend = dist.get_backend(group)
        if backend not in ("gloo", "mpi"):  # NCCL carries CUDA tensors only; the hook's are on the CPU
            raise _bad("process_group", backend, "a group whose backend sends CPU tensors (gloo): with an NCCL "
                       "default group pass process_group=torch.distributed.new_group(backend='gloo')")
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self.src0 = 0 if self.process_group is None else dist.get_global_rank(group, 0)
        if self.pattern == "shared" and self.sched_spec is None and dqsgd.shared_width(self.bits, self.world_size) == 0:
            raise _bad("bits", self.bits, "no integer sum of %d workers' levels fits the shared pattern" % self.world_size)
        self._group_bound = True

    def _reset(self):
        """The run's state: what state_dict() saves, and what it needs to go on."""
        self.iter = 0            # the DDP step the next hook calls belong to (the dither's step)
        self.iterations = 0      # steps done
        self.width = None        # the width of step width_iter
        self.width_iter = -1
        self.sched = None
        self._sched_prior = None  # a checkpoint's norm prior (else rank 0's first norm, broadcast)
        self._sched_saved = None
        self.patterns = {}       # group id -> the pattern of its last compressed call
        self.bucket_calls = {}   # bucket index -> calls so far
        self.residuals = {}      # group id -> (ids, float32 tensor): its compressed part's residual
        self._param_residual = {}  # id(parameter) -> its slice of a residual (it follows the parameter)
        self.velocities = {}     # group id -> (ids, float32 tensor): momentum correction's u
        self._param_velocity = {}  # id(parameter) -> its slice of a velocity
        self._residual2 = {}     # group id -> (key, float32 tensor): sra's second residual
        self._plans = {}         # bucket index -> _Plan
        self._groups = {}        # group id -> [ids, bits per element of its largest message (auto),
        #                          {width: its largest message in recent exchanges}]
        self._per_elem = {}      # width -> {step: the largest bytes per element of its messages}
        self._template = None    # a checkpoint's groups: [(gid, names)], to split a bucket as they were
        self._norm2 = {}         # iteration -> {group id: squared norm of its aggregate} (schedule)
        self._bits_iter = {}     # iteration -> fixed-layout bits of its messages (the schedule's unit)
        self._round = _Round()   # the iteration whose calls are being handed over
        self._pending_load = None
        self.bytes_msg = 0
        self.bytes_moved = 0
        self.bytes_control = 0
        self.stats = HookStats(self.stats_window)
        self.last = {}

    # ------------------------------------------------------------ threads
    def _start_threads(self):
        if self._threads is None:
            comm = _Comm()
            pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="dqsgd-worker")
            self._threads = (comm, pool)
            weakref.finalize(self, _stop_threads, comm, pool)
        return self._threads

    def close(self):
        """Stop the state's threads (a later hook call starts them again)."""
        if self._threads is not None:
            _stop_threads(*self._threads)
            self._threads = None

    def _run(self, fn, *args):
        """fn(*args) on a worker; the caller (the communication thread) waits for it."""
        return self._threads[1].submit(fn, *args).result()

    def _spawn(self, fn, *args):
        return self._threads[1].submit(fn, *args)

    # ------------------------------------------------------------ accounting
    def _sent(self, it, payload, moved):
        with self._lock:
            self.bytes_msg += payload
            self.bytes_moved += moved
        self.stats.add(it, bytes=moved, bytes_msg=payload)

    def summary(self, *, warm=False):
        """Means per step of stats over the finished compressed steps (warm=True: the warm-start
        steps): hook_s, hook_max_s, block_s, encode_s, comm_s, decode_s, bytes, bytes_msg,
        overflows, width_mean/min/max, iterations."""
        self.stats.close(self.iter)
        return self.stats.summary(warm=warm)

    @property
    def widths(self):
        """The widths of the compressed steps in stats' window (bounded by stats_window)."""
        self.stats.close(self.iter)
        return [r["width"] for r in self.stats.records() if not r["warm"]]

    # ------------------------------------------------------------ the width
    def _sched_catch_up(self, it):
        """Feed the schedule the steps before `it`: DDP waited for all their buckets, so their
        norms are all in (summed in group order: the same float sum on every rank)."""
        for i in sorted(k for k in self._bits_iter if k < it):
            with self._lock:
                norms = self._norm2.pop(i, {})
            bits = self._bits_iter.pop(i)
            self.sched.update(math.sqrt(sum(norms[k] for k in sorted(norms))), 0.0, bits)

    def _width(self, it, first_data):
        """The width of step `it` (the same for all its buckets). first_data() gives the first
        compressed part, whose norm (rank 0's, broadcast) is a schedule's prior."""
        if self.width_iter == it:
            return self.width
        if self.sched_spec is None:
            w = self.bits
        else:
            if self.sched is None:
                prior = self._sched_prior
                if prior is None and not self.sched_spec.get("norm_prior"):
                    x = first_data()
                    norm = float(np.linalg.norm(x.double().numpy()))
                    # one float64 broadcast, in the communication thread, before any compressed collective
                    g = torch.tensor([norm * math.sqrt(self.dim / x.numel())], dtype=torch.float64)
                    dist.broadcast(g, src=self.src0, group=self.process_group)
                    if self.rank == 0:
                        self.bytes_control += 8
                    prior = float(g[0])
                self.sched = self._new_schedule(dict(self.sched_spec), prior or self.sched_spec["norm_prior"])
                if self._sched_saved is not None:
                    self.sched.load(self._sched_saved)
                    self._sched_saved = None
            self._sched_catch_up(it)
            if self.sched.step < self.sched.params.steps:
                w = self.sched.next()
            else:  # past the planned steps: keep the last width
                w = self.width if self.width is not None else self.bits
        self.width, self.width_iter = w, it
        return w

    # ------------------------------------------------------------ plans and per-group state
    def _plan(self, idx, params, n):
        layout = tuple((id(p), p.numel()) for p in params)
        plan = self._plans.get(idx)
        if plan is not None and plan.layout == layout:
            return plan
        m = self.min_compress_numel
        # a bucket the checkpoint's layout does not cover gets an id none of its groups has
        own = idx + 1 + max(gid for gid, _ in self._template) if self._template else idx
        if sum(c for _, c in layout) != n:  # not DDP's layout: the whole bucket, one message
            plan = _Plan(layout, [_Group(own, (), (), [(0, n)], [(0, n)])], [])
        else:
            parts = self._template_groups(layout) or self._layer_groups(layout) or [(own, [pid for pid, _ in layout])]
            numel = dict(layout)
            groups, small = [], []
            for gid, pids in parts:
                big, every = _slices_of(layout, pids, m)
                bigset = set(big)
                ids = [(pid, numel[pid]) for pid in pids if m <= 0 or numel[pid] >= m]
                groups.append(_Group(gid, pids, ids, big, every))
                small.extend(s for s in every if s not in bigset)
            plan = _Plan(layout, groups, sorted(small))
        self._plans[idx] = plan
        for g in plan.groups:  # a new layout for a group: auto and the slots measure it again
            st = self._groups.get(g.gid)
            if st is None or st[0] != g.ids:
                self._groups[g.gid] = [g.ids, None, {}]
                self.patterns.pop(g.gid, None)
        return plan

    def _layer_groups(self, layout):
        """per_layer: one group per parameter, its id from the parameter's place in the model."""
        if not self.per_layer or any(pid not in self._order for pid, _ in layout):
            return None
        return [(LAYER_GID + self._order[pid], [pid]) for pid, _ in layout]

    def _template_groups(self, layout):
        """A checkpoint's groups, when this bucket holds whole ones (DDP's first step after a
        resume sends the whole model as one bucket; its messages must be the saved layout's)."""
        if not self._template or self._names is None:
            return None
        by_name = {name: pid for pid, name in self._names.items()}
        here = {pid for pid, _ in layout}
        out, covered = [], set()
        for gid, names in self._template:
            pids = [by_name.get(nm) for nm in names]
            if any(p is None for p in pids):
                return None
            inside = [p in here for p in pids]
            if all(inside):
                out.append((gid, pids))
                covered.update(pids)
            elif any(inside):
                return None
        return sorted(out) if covered == here else None

    def _residual(self, g):
        """The residual of group g's compressed part: one contiguous tensor (what the encoders
        take) whose slices are indexed by parameter too, so that every parameter carries its
        own residual into its new bucket when DDP rebuilds them."""
        return self._follow(g, self.residuals, self._param_residual)

    def _velocity(self, g):
        """Momentum correction's velocity u of group g, kept as the residual is."""
        return self._follow(g, self.velocities, self._param_velocity)

    @staticmethod
    def _follow(g, by_group, by_param):
        old = by_group.get(g.gid)
        if old is not None and old[0] == g.ids:
            return old[1]
        r = torch.zeros(g.n, dtype=torch.float32)
        if sum(c for _, c in g.ids) == g.n:
            off = 0
            for pid, c in g.ids:
                prev = by_param.get(pid)
                if prev is not None and prev.numel() == c:
                    r[off: off + c] = prev
                by_param[pid] = r[off: off + c]
                off += c
        by_group[g.gid] = (g.ids, r)
        return r

    def _residual2_for(self, g, lo, hi):
        """sra with error feedback: the residual of the second quantization, kept by the owner of
        shard [lo, hi) of group g. Restarted at zero when the group's layout or the shard
        changes: unlike the first residual it does not follow parameters (a shard cuts across them)."""
        key = (g.ids, g.n, lo, hi)
        old = self._residual2.get(g.gid)
        if old is not None and old[0] == key:
            return old[1]
        r = torch.zeros(hi - lo, dtype=torch.float32)
        self._residual2[g.gid] = (key, r)
        return r

    def _choose(self, g, width):
        if self.pattern != "auto":
            return self.pattern
        if self.patterns.get(g.gid) == "shared":
            return "shared"
        b = self._groups[g.gid][1]
        if b is None or width < 2:
            return "allgather"  # measure the coded size first; the shared pattern needs 2 bits
        w = dqsgd.shared_width(width, self.world_size)
        w = 32 if w == 16 else w
        return "allgather" if w == 0 or self.world_size * b <= 2 * w else "shared"

    def _slot(self, g, width, n, capacity, it):
        """The message room of group g's next slot at step `it` (its messages have at most n
        elements): the largest message of its last SLOT_HISTORY exchanges at this width, plus the
        margin. A new group (DDP rebuilt its buckets) starts from the largest bytes per element
        at this width of the last step before `it` that had one (not of this step: other buckets
        of it may have finished on one rank and not on another); the first exchange at a width
        from the capacity (the largest message)."""
        with self._lock:
            recent = self._groups[g.gid][2].get(width)
            base = max(recent) if recent else None
            earlier = [i for i in self._per_elem.get(width, {}) if i < it]
            if base is None and earlier:
                base = int(math.ceil(self._per_elem[width][max(earlier)] * n))
        if base is None:
            return capacity
        return min(capacity, base + max(SLOT_PAD_MIN, int(math.ceil(base * self.slot_margin))))

    def _measured(self, g, width, sizes, n, it, auto=True):
        """An exchange's sizes (every rank sees the same): the next slots', and auto's measure."""
        with self._lock:
            st = self._groups.get(g.gid)
            if st is not None and st[0] == g.ids:
                if auto:
                    st[1] = 8.0 * max(sizes) / n
                st[2].setdefault(width, collections.deque(maxlen=SLOT_HISTORY)).append(max(sizes))
            per = self._per_elem.setdefault(width, {})
            per[it] = max(per.get(it, 0.0), max(sizes) / n)
            older = [i for i in per if i < it]
            for i in older:  # keep this step's and the last one before it
                if i != max(older):
                    del per[i]

    # ------------------------------------------------------------ checkpoints
    def attach(self, model, process_group=None):
        """Give the state its model (for the parameter names a checkpoint uses) and, after
        torch.load, its process group; applies a state loaded by unpickling."""
        self._names = _named_parameters(model)[0]
        self._order = _parameter_order(model)
        self._check_layers()
        if process_group is not None:
            self.process_group = process_group
            self._group_bound = False
        if self._pending_load is not None:
            sd, self._pending_load = self._pending_load, None
            self.load_state_dict(sd)
        return self

    def _need_names(self, what):
        if self._names is None:
            raise ValueError("DQSGDHookState.%s: checkpoints key residuals and buckets by parameter name: pass "
                             "model= to DQSGDHookState or call state.attach(model)" % what)
        return self._names

    def _options(self):
        return {"bits": self.bits, "schedule": self.sched_spec, "dim": self.dim, "error_feedback": self.error_feedback,
                "seed": self.seed, "bucket_size": self.bucket_size, "rounding": self.rounding, "norm": self.norm,
                "pattern": self.pattern, "min_compress_numel": self.min_compress_numel, "start_iter": self.start_iter,
                "density": self.density, "index_coder": self.index_coder, "momentum": self.momentum,
                "momentum_masking": self.momentum_masking, "clip_norm": self.clip_norm,
                "warmup_steps": self.warmup_steps, "warmup_stages": self.warmup_stages, "per_layer": self.per_layer,
                "layer_density": dict(self.layer_density) or None}

    def state_dict(self):
        """What a resumed run needs to go on bit for bit: the step, the schedule, residuals keyed
        by parameter name, the bucket layout (groups), each group's pattern and slot sizes, and
        the options that shape the messages (load_state_dict checks them). Call it between
        steps (after optimizer.step()); torch.save() takes it."""
        names = self._need_names("state_dict")
        with self._lock:
            groups = dict(self._template or [])  # a loaded layout no bucket has used yet
            for plan in self._plans.values():
                for g in plan.groups:
                    if g.members and all(pid in names for pid in g.members):
                        groups[g.gid] = [names[pid] for pid in g.members]
            res2 = {}
            for gid, (key, r) in self._residual2.items():
                if all(pid in names for pid, _ in key[0]):
                    res2[gid] = {"params": [(names[pid], c) for pid, c in key[0]], "n": key[1], "lo": key[2],
                                 "hi": key[3], "residual": r.clone()}
            return {
                "version": STATE_VERSION,
                "options": self._options(),
                "world_size": self.world_size,
                "iter": self.iter,
                "iterations": self.iterations,
                "width": self.width,
                "width_iter": self.width_iter,
                "schedule": {"norm_prior": self.sched.params.norm_prior, "state": self.sched.save()}
                if self.sched is not None else None if self._sched_saved is None else
                {"norm_prior": self._sched_prior, "state": self._sched_saved},
                "norm2": {it: dict(v) for it, v in self._norm2.items()},
                "bits_iter": dict(self._bits_iter),
                "residuals": {names[pid]: r.clone() for pid, r in self._param_residual.items() if pid in names},
                "velocities": {names[pid]: r.clone() for pid, r in self._param_velocity.items() if pid in names},
                "residual2": res2,
                "groups": sorted(groups.items()),
                "group_state": {gid: {"params": [(names[pid], c) for pid, c in st[0]], "bpe": st[1],
                                      "slots": {w: list(v) for w, v in st[2].items()},
                                      "pattern": self.patterns.get(gid)}
                                for gid, st in self._groups.items() if all(pid in names for pid, _ in st[0])},
                "bucket_calls": dict(self.bucket_calls),
                "per_elem": {w: dict(v) for w, v in self._per_elem.items()},
                "bytes": (self.bytes_msg, self.bytes_moved, self.bytes_control),
            }

    def load_state_dict(self, sd):
        """Restore a state_dict() into a fresh state with the same options and model (before the
        first step of the resumed run). ValueError when the options or the model differ."""
        names = self._need_names("load_state_dict")
        if not isinstance(sd, dict) or sd.get("version") != STATE_VERSION:
            raise ValueError("DQSGDHookState.load_state_dict: not a state_dict of this version (%d)" % STATE_VERSION)
        mine = self._options()
        for k, v in sd["options"].items():
            if mine.get(k) != v:
                raise ValueError("DQSGDHookState.load_state_dict: the checkpoint has %s=%r, this state %r" % (k, v, mine.get(k)))
        if self.world_size is not None and sd["world_size"] not in (None, self.world_size):
            raise ValueError("DQSGDHookState.load_state_dict: the checkpoint is of %d ranks, this group has %d" % (
                sd["world_size"], self.world_size))
        by_name = {name: pid for pid, name in names.items()}
        missing = sorted((set(sd["residuals"]) | set(sd.get("velocities", {}))) - set(by_name))
        if missing:
            raise ValueError("DQSGDHookState.load_state_dict: the model has no parameter named %s" % ", ".join(missing[:5]))
        self.close()
        self._reset()
        self.iter, self.iterations = sd["iter"], sd["iterations"]
        self.width, self.width_iter = sd["width"], sd["width_iter"]
        if sd["schedule"] is not None:
            self._sched_prior = sd["schedule"]["norm_prior"]
            self._sched_saved = sd["schedule"]["state"]
        self._norm2 = {it: dict(v) for it, v in sd["norm2"].items()}
        self._bits_iter = dict(sd["bits_iter"])
        for name, r in sd["residuals"].items():
            self._param_residual[by_name[name]] = r.clone().to(torch.float32)
        for name, r in sd.get("velocities", {}).items():
            self._param_velocity[by_name[name]] = r.clone().to(torch.float32)
        self._template = [(gid, list(nm)) for gid, nm in sd["groups"]]
        for gid, st in sd["group_state"].items():
            if all(nm in by_name for nm, _ in st["params"]):
                slots = {w: collections.deque(v, maxlen=SLOT_HISTORY) for w, v in st["slots"].items()}
                self._groups[gid] = [tuple((by_name[nm], c) for nm, c in st["params"]), st["bpe"], slots]
                if st["pattern"] is not None:
                    self.patterns[gid] = st["pattern"]
        for gid, r2 in sd["residual2"].items():
            if all(nm in by_name for nm, _ in r2["params"]):
                ids = tuple((by_name[nm], c) for nm, c in r2["params"])
                self._residual2[gid] = ((ids, r2["n"], r2["lo"], r2["hi"]), r2["residual"].clone())
        self.bucket_calls = dict(sd["bucket_calls"])
        self._per_elem = {w: dict(v) for w, v in sd["per_elem"].items()}
        self.bytes_msg, self.bytes_moved, self.bytes_control = sd["bytes"]
        self.stats = HookStats(self.stats_window)
        self.stats.close(self.iter)
        return self

    def __getstate__(self):
        """torch.save(state): the options and state_dict(); no threads, locks or process group."""
        opts = self._options()
        opts.update(workers=self.workers, stats_window=self.stats_window, slot_margin=self.slot_margin,
                    keep_messages=self.keep_messages)
        opts["index_coder"] = {v: k for k, v in dqsgd.INDEX_CODERS.items()}[self.index_coder]
        return {"options": opts, "state": self.state_dict()}

    def __setstate__(self, d):
        self.__init__(_unpickling=True, **d["options"])
        self._pending_load = d["state"]  # applied by attach(model)


def _stop_threads(comm, pool):
    comm.stop()
    pool.shutdown(wait=False)


# ---------------------------------------------------------------- the communication thread
class _Comm:
    """The thread that starts every collective of a state, in the order the hook calls hand
    their buckets over. At an iteration's last bucket it settles the iteration's calls in order
    (overflowing slots), then lets their failures out."""

    def __init__(self):
        self.queue = queue.SimpleQueue()
        self.thread = threading.Thread(target=_comm_loop, args=(self.queue,), name="dqsgd-comm", daemon=True)
        self.thread.start()

    def put(self, call):
        self.queue.put(call)

    def stop(self):
        self.queue.put(None)


def _comm_loop(q):
    pending = []
    while True:
        call = q.get()
        if call is None:
            return
        call.start()
        pending.append(call)
        if call.last:
            for c in pending:
                c.settle()
            pending[0].round.close()
            pending = []
        call = None


class _Round:
    """One iteration's calls: a failed call raises only once the communication thread has
    started every collective of the iteration, so that no rank goes on to other collectives
    (DDP's next step, the user's) while another still has some of the iteration's to start."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started_all = False
        self.failed = []

    def fail(self, call):
        with self.lock:
            if not self.started_all:
                self.failed.append(call)
                return
        call.raise_error()

    def close(self):
        with self.lock:
            self.started_all = True
            failed, self.failed = self.failed, []
        for call in failed:
            call.raise_error()


def _value(fut):
    return fut.value()


class _Call:
    """One hook call: a bucket of one iteration, cut into chains (one per message, one for the
    float32 slices), whose results it assembles into the bucket's average."""

    def __init__(self, state, idx, it, last, params, x, ready, device, stream):
        self.state, self.idx, self.it, self.last = state, idx, it, last
        self.params, self.x, self.ready, self.device, self.stream = params, x, ready, device, stream
        self.round = state._round
        self.future = torch.futures.Future(devices=[device]) if device.type == "cuda" else torch.futures.Future()
        self.lock = threading.Lock()
        self.chains = []
        self.remaining = 0
        self.errors = []

    def start(self):
        """In the communication thread: plan the bucket, start its chains."""
        st = self.state
        try:
            if self.ready is not None:
                self.ready.synchronize()  # the copy from the GPU
            x, n, it = self.x, self.x.numel(), self.it
            rec = st.last.setdefault(self.idx, {}) if st.keep_messages else None
            if rec is not None:
                rec.clear()
                rec.update(iter=it, input=x.clone(), small=[], width=None, params=list(self.params))
            if it < st.start_iter:  # warm start: what DDP does without a hook
                chains = [_AllreduceChain(self, [(0, n)])]
                st.stats.add(it, warm=True)
                if rec is not None:
                    rec["pattern"] = "warm"
            else:
                plan = st._plan(self.idx, self.params, n)
                big = [g for g in plan.groups if g.n]
                width = st._width(it, lambda: _gather(x, big[0].big).float()) if big else None
                chains = []
                for g in big:
                    pattern = st._choose(g, width)
                    st.patterns[g.gid] = pattern
                    residual = st._residual(g) if st.error_feedback else None
                    chain = _SparseChain if st.density is not None else _CHAINS[pattern]
                    chains.append(chain(self, g, width, residual))
                    if st.sched is not None:  # the schedule plans in fixed-layout bits
                        st._bits_iter[it] = st._bits_iter.get(it, 0.0) + dqsgd.message_bits(g.n, width, st.bucket_size)
                if plan.small:
                    chains.append(_AllreduceChain(self, plan.small))
                st.stats.add(it, warm=False, width=width)
                if rec is not None:
                    rec.update(width=width, small=list(plan.small),
                               pattern=st.patterns[big[0].gid] if big else "none")
        except BaseException as e:  # noqa: BLE001 - a rank that cannot plan fails this call only
            self.errors.append(e)
            self.round.fail(self)
            return
        self.chains = chains
        self.remaining = len(chains)
        for ch in chains:
            ch.run()

    def settle(self):
        for ch in self.chains:
            try:
                ch.settle()
            except BaseException as e:  # noqa: BLE001
                ch.fail(e)

    def part_done(self, chain, error=None):
        with self.lock:
            if error is not None:
                self.errors.append(error)
            self.remaining -= 1
            finished = self.remaining == 0
        if not finished:
            return
        if self.errors:
            self.round.fail(self)
            return
        try:
            self._complete()
        except BaseException as e:  # noqa: BLE001
            self.errors.append(e)
            self.round.fail(self)

    def raise_error(self):
        self.future.set_exception(self.errors[0])

    def _complete(self):
        st, x, n = self.state, self.x, self.x.numel()
        if len(self.chains) == 1 and self.chains[0].slices == [(0, n)]:
            out = self.chains[0].out.to(x.dtype)
        else:
            out = torch.empty(n, dtype=x.dtype)
            for ch in self.chains:
                off = 0
                for o, c in ch.slices:
                    out[o: o + c] = ch.out[off: off + c]
                    off += c
        if st.sched is not None and self.it >= st.start_iter:
            norms = {}
            for ch in self.chains:
                if ch.group is not None:  # the group's aggregate, its float32 slices too
                    a = _gather(out, ch.group.every).double().numpy()
                    norms[ch.group.gid] = float(a @ a)
            with st._lock:
                st._norm2.setdefault(self.it, {}).update(norms)
        if st.keep_messages:
            st.last[self.idx]["result"] = out.float().clone()
        if self.device.type == "cuda":
            with torch.cuda.stream(self.stream):
                self.future.set_result(out.to(self.device, non_blocking=True))
        else:
            self.future.set_result(out)


# ---------------------------------------------------------------- chains
class _Chain:
    """The collectives of one message (or of float32 slices) of a call. start() runs in the
    communication thread and may wait there between collectives; the last collective's
    completion decodes on a worker and calls done() or fail(), once."""

    group = None

    def __init__(self, call, slices):
        self.call, self.state, self.it, self.slices = call, call.state, call.it, slices
        self.out = None
        self._ended = False
        self._end_lock = threading.Lock()  # done() and fail() may race (a worker's, gloo's thread)

    def _end(self):
        with self._end_lock:
            ended, self._ended = self._ended, True
        return not ended

    def run(self):
        try:
            self.start()
        except BaseException as e:  # noqa: BLE001
            self.fail(e)

    def settle(self):
        pass

    def done(self, out):
        if self._end():
            self.out = out
            self.call.part_done(self)

    def fail(self, e):
        if self._end():
            self.call.part_done(self, e)

    def later(self, fn, *args):
        """fn(*args) on a worker; its exception fails the chain."""
        def run():
            try:
                fn(*args)
            except BaseException as e:  # noqa: BLE001
                self.fail(e)
        self.state._spawn(run)

    def on_completion(self, work, fn):
        """fn() when a collective completes (on gloo's thread); a failed collective fails the chain."""
        def cb(fut):
            try:
                fut.value()
                fn()
            except BaseException as e:  # noqa: BLE001
                self.fail(e)
        work.get_future().then(cb)

    def record(self, **kw):
        if self.state.keep_messages:
            self.state.last[self.call.idx].update(kw)


class _AllreduceChain(_Chain):
    """The mean of float32 (or the bucket's type) slices by one allreduce: a warm-start step's
    whole bucket, or the parameters under min_compress_numel."""

    def start(self):
        st = self.state
        x = _gather(self.call.x, self.slices)
        t = (x.float() if x.dtype == torch.bfloat16 else x) / st.world_size  # gloo has no bfloat16 sums
        t0 = time.perf_counter()
        work = dist.all_reduce(t, group=st.process_group, async_op=True)
        size = t.numel() * t.element_size()
        st._sent(self.it, size, size)

        def finished():
            st.stats.add(self.it, comm_s=time.perf_counter() - t0)
            self.done(t.to(x.dtype))
        self.on_completion(work, finished)


class _Slots:
    """Every rank's message in one all_gather of slots of a size all ranks know beforehand
    (SLOT_HEAD bytes of size, then `cap` bytes of message). A message larger than its slot sends
    the rest in a second all_gather, which settle() starts at the iteration's end."""

    def __init__(self, chain, buf, size, cap, on_messages):
        self.chain, self.buf, self.size, self.cap, self.on_messages = chain, buf, size, cap, on_messages
        self.sizes = None
        self.overflow = False
        self.arrived = threading.Event()

    def start(self):
        ch, st = self.chain, self.chain.state
        self.buf[:SLOT_HEAD] = np.array([self.size], dtype="<i8").view(np.uint8)
        S = SLOT_HEAD + self.cap
        self.send = torch.from_numpy(self.buf[:S])
        self.recv = torch.empty((st.world_size, S), dtype=torch.uint8)
        self.t0 = time.perf_counter()
        work = dist.all_gather(list(self.recv.unbind(0)), self.send, group=st.process_group, async_op=True)
        st._sent(ch.it, max(self.size, 0), S)

        def cb(fut):
            try:
                fut.value()
                self._arrived()
            except BaseException as e:  # noqa: BLE001
                ch.fail(e)
            finally:
                self.arrived.set()
        work.get_future().then(cb)

    def _arrived(self):
        ch, st = self.chain, self.chain.state
        st.stats.add(ch.it, comm_s=time.perf_counter() - self.t0)
        r = self.recv.numpy()
        self.sizes = [int(v) for v in r[:, :SLOT_HEAD].copy().view("<i8")[:, 0]]
        if min(self.sizes) < 0:
            ch.failed_sizes(self.sizes)
        elif max(self.sizes) > self.cap:
            self.overflow = True  # settle() fetches the rest
        else:
            self.on_messages([r[i, SLOT_HEAD: SLOT_HEAD + s] for i, s in enumerate(self.sizes)])

    def settle(self):
        self.arrived.wait()
        if not self.overflow:
            return
        ch, st, cap = self.chain, self.chain.state, self.cap
        tail = max(s - cap for s in self.sizes)
        send2 = torch.zeros(tail, dtype=torch.uint8)
        if self.size > cap:
            send2[: self.size - cap] = torch.from_numpy(self.buf[SLOT_HEAD + cap: SLOT_HEAD + self.size])
        recv2 = torch.empty((st.world_size, tail), dtype=torch.uint8)
        t0 = time.perf_counter()
        work = dist.all_gather(list(recv2.unbind(0)), send2, group=st.process_group, async_op=True)
        st._sent(ch.it, 0, tail)
        st.stats.add(ch.it, overflows=1)

        def finished():
            st.stats.add(ch.it, comm_s=time.perf_counter() - t0)
            r, r2 = self.recv.numpy(), recv2.numpy()
            self.on_messages([np.concatenate((r[i, SLOT_HEAD: SLOT_HEAD + min(s, cap)], r2[i, : max(s - cap, 0)]))
                              for i, s in enumerate(self.sizes)])
        ch.on_completion(work, finished)


class _GroupChain(_Chain):
    """The chain of one group's compressed part: its width and residual; where its messages go
    in slots (allgather, sra), settle() ends the slots' exchange at the iteration's end, and a
    negative size a rank sent fails the chain on every rank."""

    failure = "dq_encode"  # what a negative size in the slots reports
    slots = None

    def __init__(self, call, group, width, residual):
        super().__init__(call, group.big)
        self.group, self.width, self.residual = group, width, residual

    def settle(self):
        if self.slots is not None:
            self.slots.settle()

    def failed_sizes(self, sizes):
        r = min(i for i, s in enumerate(sizes) if s < 0)
        self.fail(dqsgd.DQError(sizes[r], "dqsgd_hook: %s on rank %d (step %d)" % (self.failure, r, self.it)))


def _encode_params(state, g, width, stream, **extra):
    return dict(bits=width, seed=state.seed + g.gid, step=0, stream=stream, bucket=state.bucket_size,
                rounding=state.rounding, norm=state.norm, **extra)


class _AllgatherChain(_GroupChain):
    """One dqsgd message per rank in slots (_Slots), decode_added in rank order with weight 1/W."""

    def start(self):
        st, g, call = self.state, self.group, self.call
        params = _encode_params(st, g, self.width, st.rank)
        params["step"] = self.it
        shape = {k: params[k] for k in ("bucket", "rounding", "norm")}
        capacity = dqsgd.encode_capacity(g.n, self.width, **shape)  # the largest message
        room = max(capacity, dqsgd.encode_bound_coded(g.n, self.width))  # the bytes do not depend on the room
        buf = np.empty(SLOT_HEAD + room, dtype=np.uint8)
        size, secs = _encode(st, g.n, lambda: _gather(call.x, g.big), self.residual, buf[SLOT_HEAD:], params)
        st.stats.add(self.it, encode_s=secs)
        if st.keep_messages and size >= 0:
            self.record(msg=buf[SLOT_HEAD: SLOT_HEAD + size].copy())
        self.slots = _Slots(self, buf, size, st._slot(g, self.width, g.n, capacity, self.it), self._messages)
        self.slots.start()

    def _messages(self, msgs):
        st, g = self.state, self.group
        sizes = self.slots.sizes
        st._measured(g, self.width, sizes, g.n, self.it)
        self.record(sizes=sizes)
        _decode_mean(self, msgs, g.n, self.width)


class _SparseChain(_GroupChain):
    """One top-k message per rank (density; values at `bits` bits, float32 at 32) in slots,
    decode_added in rank order with weight 1/W. With momentum correction (DGC) the encoder is
    given the velocity u = m u + g (the gradient clipped first with clip_norm) and the residual
    v, so it sends top-k(v + u) and keeps v + u - sent in v; momentum factor masking then
    clears u where the message sent an element."""

    def start(self):
        st, g, call, it = self.state, self.group, self.call, self.it
        k = st._k(g, it)
        params = dict(scheme=dqsgd.SCHEME_TOPK, k=k, bits=self.width, seed=st.seed + g.gid, step=it,
                      stream=st.rank, index_coder=st.index_coder)
        if self.width != FLOAT_VALUES:  # composed: the values' QSGD parameters
            params.update(bucket=st.bucket_size, rounding=st.rounding, norm=st.norm)
        shape = {key: v for key, v in params.items() if key not in ("seed", "step", "stream")}
        capacity = dqsgd.encode_capacity(g.n, **shape)
        buf = np.empty(SLOT_HEAD + capacity, dtype=np.uint8)
        velocity = st._velocity(g) if st.momentum else None
        self.k = k

        def encode():
            t0 = time.perf_counter()
            try:
                x = _gather(call.x, g.big)
                if st.clip_norm is not None or velocity is not None:
                    x = x.float()
                if st.clip_norm is not None:  # this group's share of clip_norm / sqrt(W) (DGC)
                    limit = st.clip_norm * math.sqrt(g.n / st.dim / st.world_size)
                    norm = float(torch.linalg.vector_norm(x))
                    if norm > limit:
                        x = x * (limit / norm)
                if velocity is not None:
                    velocity.mul_(st.momentum).add_(x)
                    x = velocity
                m = dqsgd.encode(x, residual=self.residual, out=buf[SLOT_HEAD:], **params)
                if velocity is not None and st.momentum_masking:
                    velocity[torch.from_numpy(dqsgd.sparse_indices(m).astype(np.int64))] = 0.0
                return len(m), time.perf_counter() - t0
            except dqsgd.DQError as e:
                return min(e.status, -1), time.perf_counter() - t0
        size, secs = st._run(encode)
        st.stats.add(it, encode_s=secs)
        if st.keep_messages and size >= 0:  # per group: a bucket holds one per layer with per_layer
            st.last[call.idx].setdefault("groups", {})[g.gid] = dict(
                msg=buf[SLOT_HEAD: SLOT_HEAD + size].copy(), k=k, slices=list(g.big),
                velocity=None if velocity is None else velocity.clone(),
                residual=None if self.residual is None else self.residual.clone())
        self.key = ("topk", k, self.width)  # slots are sized per (k, width)
        self.slots = _Slots(self, buf, size, st._slot(g, self.key, g.n, capacity, it), self._messages)
        self.slots.start()

    def _messages(self, msgs):
        st, g = self.state, self.group
        sizes = self.slots.sizes
        st._measured(g, self.key, sizes, g.n, self.it, auto=False)
        if st.keep_messages:
            st.last[self.call.idx]["groups"][g.gid]["sizes"] = sizes
        _decode_mean(self, msgs, g.n, self.width, ranges=False)


def _decode_mean(chain, msgs, n, width, ranges=True):
    """Schedule the decode of W messages of n elements, added in rank order with weight 1/W, into
    a new float32 vector; then chain.done(it). With workers > 1 and a large message, the
    workers decode element ranges of every message (rANS and fixed-layout messages; ranges=False:
    messages the range decoders refuse, top-k)."""
    st = chain.state
    weight = 1.0 / st.world_size

    def opened():
        ms = [dqsgd.Message(m) for m in msgs]  # header, size and payload checksum, once
        for r, m in enumerate(ms):
            h = m.header
            if h.count != n or h.msg_size != len(msgs[r]):
                raise RuntimeError("dqsgd_hook: rank %d sent %d elements in %d bytes, the message has %d" % (
                    r, h.count, len(msgs[r]), n))
        return ms

    def whole():
        t0 = time.perf_counter()
        out = torch.zeros(n, dtype=torch.float32)
        for m in opened():  # rank order: the same float sums on every rank
            m.decode_add(weight, out)
        st.stats.add(chain.it, decode_s=time.perf_counter() - t0)
        chain.done(out)

    if st.workers == 1 or n < PARALLEL_MIN or not ranges:
        chain.later(whole)
        return

    def split():
        t0 = time.perf_counter()
        ms = opened()
        if any(m.header.coder not in (dqsgd.CODER_FIXED, dqsgd.CODER_RANS) for m in ms):
            st.stats.add(chain.it, decode_s=time.perf_counter() - t0)
            return whole()  # an Elias message is one stream: one worker decodes all
        align = dqsgd.range_align(n, width, bucket=st.bucket_size)
        units = -(-n // align)
        k = min(st.workers, units)
        cuts = [min(n, (j * units // k) * align) for j in range(k + 1)]
        out = torch.zeros(n, dtype=torch.float32)
        left = [k]
        lock = threading.Lock()
        st.stats.add(chain.it, decode_s=time.perf_counter() - t0)

        def part(lo, hi):
            t1 = time.perf_counter()
            for m in msgs:  # rank order within every range: the bits of decode_add
                dqsgd.decode_add_range(m, lo, hi, weight, out[lo:hi])
            st.stats.add(chain.it, decode_s=time.perf_counter() - t1)
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                chain.done(out)
        for j in range(k):
            chain.later(part, cuts[j], cuts[j + 1])
    chain.later(split)


class _SharedChain(_GroupChain):
    """The shared-scale integer allreduce: exponents max-allreduced (the communication thread
    waits for them: the levels depend on them), integer levels sum-allreduced, decoded with
    weight 1/W. Exact: the integer sum times the unit is the sum of every rank's levels."""

    def start(self):
        st, g, it, width = self.state, self.group, self.it, self.width
        n, rank = g.n, st.rank
        w = dqsgd.shared_width(width, st.world_size)
        if w == 0:  # the same on every rank: every rank fails here
            raise ValueError("dqsgd_hook: no integer sum of %d workers' %d-bit levels fits 2^24" % (st.world_size, width))
        w = 32 if w == 16 else w  # gloo's all_reduce refuses int16
        nb = dqsgd.shared_buckets(n, width, st.bucket_size)
        # two extra int8s under the max: the largest -dq_status any rank hit, and (rank + 1) of it
        exps = torch.zeros(nb + 2, dtype=torch.int8)
        data = {}

        def exponents():
            t0 = time.perf_counter()
            x = data["x"] = _gather(self.call.x, g.big).float()  # the shared encoders take float32
            try:
                dqsgd.shared_exponents(x, width, st.bucket_size, self.residual, out=exps[:nb])
            except dqsgd.DQError as e:
                exps[nb], exps[nb + 1] = min(-e.status, 127), min(rank + 1, 127)
            return time.perf_counter() - t0
        st.stats.add(it, encode_s=st._run(exponents))
        t1 = time.perf_counter()
        dist.all_reduce(exps, op=dist.ReduceOp.MAX, group=st.process_group)
        st.stats.add(it, comm_s=time.perf_counter() - t1)
        if int(exps[nb]) != 0:
            raise dqsgd.DQError(-int(exps[nb]), "dqsgd_hook: dq_shared_exponents on rank %d (step %d)" % (
                int(exps[nb + 1]) - 1, it))
        e = exps[:nb]
        levels = torch.zeros(n + 1, dtype=torch.int8 if w == 8 else torch.int32)  # the last: ranks that failed

        def encode():
            t0 = time.perf_counter()
            try:
                dqsgd.shared_encode(data["x"], e, w, width, seed=st.seed + g.gid, step=it, stream=rank,
                                    residual=self.residual, bucket=st.bucket_size, rounding=st.rounding,
                                    out=levels[:n])
            except dqsgd.DQError:
                levels[n] = 1
            return time.perf_counter() - t0
        st.stats.add(it, encode_s=st._run(encode))
        if st.keep_messages:
            self.record(levels=levels[:n].clone(), exps=e.clone(), wire=w)
        t4 = time.perf_counter()
        work = dist.all_reduce(levels, group=st.process_group, async_op=True)
        st._sent(it, (n * w) // 8 + nb, ((n + 1) * w) // 8 + nb + 2)

        def decode():
            t5 = time.perf_counter()
            out = torch.empty(n, dtype=torch.float32)
            dqsgd.shared_decode(levels[:n], e, w, width, n, 1.0 / st.world_size, st.bucket_size, out=out)
            st.stats.add(it, decode_s=time.perf_counter() - t5)
            self.done(out)

        def finished():
            st.stats.add(it, comm_s=time.perf_counter() - t4)
            if int(levels[n]) != 0:
                self.fail(dqsgd.DQError(-1, "dqsgd_hook: dq_shared_encode failed on %d rank(s) (step %d)" % (
                    int(levels[n]), it)))
            else:
                self.later(decode)
        self.on_completion(work, finished)


# sra's coder: the library's default codes a message only from DQ_CODER_AUTO_MIN (4096)
# elements and sends smaller ones in the fixed layout, but sra cuts a bucket into W pieces, and a
# piece under 4096 elements (the tail shard of the model in `make ddp` at W = 4: 3146 elements,
# 1625 bytes fixed against 184 coded at 4 bits) would cost more than all the coded rest. So sra
# asks for what the default does from 4096 elements on, at every size: the smallest coder
# (DQ_CODER_AUTO) and the payload checksum (one-pass decoding).
SRA_CODER = dict(coder=dqsgd.CODER_AUTO, checksum=1)


def sra_shards(n, width, bucket, world):
    """The W shards of an n-element vector for the sra pattern: [(lo, hi)] for owners 0..W-1,
    contiguous, in order, cut at multiples of dq_range_align (lcm(256, bucket), capped at n), so
    each shard holds whole dqsgd buckets (the same scales as one message of the whole vector).
    With fewer units than ranks some shards are empty (lo == hi)."""
    a = dqsgd.range_align(n, width, bucket=bucket) or n
    units = -(-n // a)
    cuts = [min(n, (j * units // world) * a) for j in range(world + 1)]
    return [(cuts[j], cuts[j + 1]) for j in range(world)]


def _room(n, width):
    """The encoder's output room: with encode_bound_coded() bytes every coder's choice is the
    same whatever else (workers, buffers), so the hook's messages are those of dqsgd.encode with
    that room."""
    return dqsgd.encode_bound_coded(n, width)


class _SraChain(_GroupChain):
    """Scatter-reduce-allgather with re-quantization: shard j of the message is encoded for rank
    j (stream j*W + rank, with its slice of the residual), the shard messages go by
    all_to_all_single (their sizes first); rank j decode_adds its shard's W messages in rank
    order with weight 1/W and encodes that mean again (stream W*W + j, with a second residual
    under error feedback); the owners' messages go in slots (_Slots) and every rank decodes
    them. The communication thread waits for the two all_to_alls: what follows each is another
    collective."""

    failure = "sra reduce or re-encode"

    def start(self):
        st, g, it, width = self.state, self.group, self.it, self.width
        world, n, rank = st.world_size, g.n, st.rank
        shards = self.shards = sra_shards(n, width, st.bucket_size, world)
        kw = dict(_encode_params(st, g, width, 0, **SRA_CODER), step=it)
        del kw["stream"]
        empty = np.zeros(0, dtype=np.uint8)
        data = {}

        def encode_shards():
            t0 = time.perf_counter()
            x = data["x"] = _gather(self.call.x, g.big).float()
            msgs, err = [], None
            try:
                for j, (lo, hi) in enumerate(shards):  # stream j * W + rank: independent dither per (shard, rank)
                    res = None if self.residual is None else self.residual[lo:hi]
                    msgs.append(dqsgd.encode(x[lo:hi], stream=j * world + rank, residual=res,
                                             out=np.empty(_room(hi - lo, width), np.uint8), **kw)
                                if hi > lo else empty)
            except dqsgd.DQError as e:  # every rank must learn it: a negative size to every rank
                msgs, err = [empty] * world, e
            return msgs, err, time.perf_counter() - t0
        msgs, err, secs = st._run(encode_shards)
        st.stats.add(it, encode_s=secs)
        t1 = time.perf_counter()
        # sizes first (8 bytes to each rank): all_to_all_single needs every split size
        send_sizes = torch.tensor([m.size if err is None else min(err.status, -1) for m in msgs], dtype=torch.int64)
        recv_sizes = torch.zeros(world, dtype=torch.int64)
        dist.all_to_all_single(recv_sizes, send_sizes, group=st.process_group)
        rsz = [int(v) for v in recv_sizes]
        if min(rsz) < 0:
            st.stats.add(it, comm_s=time.perf_counter() - t1)
            r = min(i for i, s in enumerate(rsz) if s < 0)
            raise dqsgd.DQError(rsz[r], "dqsgd_hook: dq_encode on rank %d (step %d)" % (r, it))
        send = torch.from_numpy(np.concatenate(msgs)) if msgs else torch.zeros(0, dtype=torch.uint8)
        recv = torch.empty(sum(rsz), dtype=torch.uint8)
        dist.all_to_all_single(recv, send, output_split_sizes=rsz, input_split_sizes=[m.size for m in msgs],
                               group=st.process_group)
        st.stats.add(it, comm_s=time.perf_counter() - t1)
        lo, hi = shards[rank]
        m2max = max(dqsgd.encode_capacity(b - a, width, **{k: kw[k] for k in ("bucket", "rounding", "norm", "coder",
                                                                              "checksum")})
                    for a, b in shards if b > a)
        buf = np.empty(SLOT_HEAD + max(m2max, _room(max(hi - lo, 1), width)), dtype=np.uint8)
        res2 = st._residual2_for(g, lo, hi) if st.error_feedback and hi > lo else None
        if st.keep_messages:
            self.record(sra_msgs=[m.copy() for m in msgs], sra_shards=shards,
                        res2_in=None if res2 is None else res2.clone())

        def reduce_encode():  # this rank's shard: the mean of the W messages, quantized again
            t0 = time.perf_counter()
            dec = enc = 0.0
            try:
                if hi == lo:
                    return 0, dec, enc
                acc = torch.zeros(hi - lo, dtype=torch.float32)
                off = 0
                for r in range(world):  # rank order: the same float sums wherever this shard is reduced
                    m = dqsgd.Message(recv[off: off + rsz[r]])
                    if m.header.count != hi - lo or m.header.msg_size != rsz[r]:
                        raise dqsgd.DQError(-1, "dqsgd_hook: rank %d sent %d elements in %d bytes for shard %d (%d)" % (
                            r, m.header.count, rsz[r], rank, hi - lo))
                    m.decode_add(1.0 / world, acc)
                    off += rsz[r]
                t1 = time.perf_counter()
                dec = t1 - t0
                if st.keep_messages:
                    st.last[self.call.idx]["mean"] = acc.clone()
                m2 = dqsgd.encode(acc, stream=world * world + rank, residual=res2, out=buf[SLOT_HEAD:], **kw)
                enc = time.perf_counter() - t1
                return m2.size, dec, enc
            except dqsgd.DQError as e:  # a bad message or a sum out of range: sent as a negative size
                return min(e.status, -1), dec, enc
        size2, dec, enc = st._run(reduce_encode)
        st.stats.add(it, encode_s=enc, decode_s=dec)
        others = sum(m.size for j, m in enumerate(msgs) if j != rank)
        st._sent(it, others, 8 * world + sum(m.size for m in msgs))
        if st.keep_messages:
            self.record(msg2=buf[SLOT_HEAD: SLOT_HEAD + max(size2, 0)].copy())
        self.slots = _Slots(self, buf, size2, st._slot(g, width, max(b - a for a, b in shards), m2max, it),
                            self._messages)
        self.slots.start()

    def _messages(self, msgs):
        st, g, sizes = self.state, self.group, self.slots.sizes
        st._measured(g, self.width, sizes, max(b - a for a, b in self.shards), self.it, auto=False)
        self.record(sizes2=sizes)

        def decode():
            t0 = time.perf_counter()
            out = torch.zeros(g.n, dtype=torch.float32)
            for j, (a, b) in enumerate(self.shards):
                if b == a:
                    if sizes[j] != 0:
                        raise RuntimeError("dqsgd_hook: rank %d sent %d bytes for an empty shard" % (j, sizes[j]))
                    continue
                m = dqsgd.Message(msgs[j])
                if m.header.count != b - a or m.header.msg_size != sizes[j]:
                    raise RuntimeError("dqsgd_hook: rank %d sent %d elements in %d bytes, its shard has %d" % (
                        j, m.header.count, sizes[j], b - a))
                m.decode(out=out[a:b])
            st.stats.add(self.it, decode_s=time.perf_counter() - t0)
            self.done(out)
        self.later(decode)


_CHAINS = {"allgather": _AllgatherChain, "shared": _SharedChain, "sra": _SraChain}


# ---------------------------------------------------------------- encoding on the workers
def _encode(state, n, data, residual, out, params):
    """Encode the n elements data() gives (called on a worker) into out, for the communication
    thread, which waits: (the message size, or a negative dq_status, and the workers' seconds).
    With workers > 1 a message of PARALLEL_MIN elements or more is a dqsgd.Job whose parts run
    on the workers: the bytes of one dqsgd.encode given encode_bound_coded() bytes of room."""
    if state.workers == 1 or n < PARALLEL_MIN:
        def single():
            t0 = time.perf_counter()
            try:
                return len(dqsgd.encode(data(), residual=residual, out=out, **params)), time.perf_counter() - t0
            except dqsgd.DQError as e:
                return min(e.status, -1), time.perf_counter() - t0
        return state._run(single)

    def prepare():
        x = data()
        return x if x.dtype == torch.float32 else x.float()  # a Job quantizes float32
    x, secs = state._run(_timed, prepare)
    pool = state._threads[1]

    def phase(fn):
        total = 0.0
        for f in [pool.submit(_timed, fn, j) for j in range(job.parts)]:
            total += f.result()[1]
        return total

    def quantize(j):
        try:
            job.quantize(j, x, residual)
        except dqsgd.DQError:
            pass  # plan() reports the first failed part's status, as dq_encode would
    try:
        job = dqsgd.Job(n, state.workers, out=out, **params)
        secs += phase(quantize)
        job.plan()
        secs += phase(job.code)
        return len(job.finish()), secs
    except dqsgd.DQError as e:
        return min(e.status, -1), secs


# ---------------------------------------------------------------- the hook
def _to_host(state, x):
    """A CUDA bucket's copy into pinned memory, on the state's side stream after the work queued
    so far: (the host tensor, an event the copy records, the stream)."""
    dev = x.device
    stream = state._streams.get(dev)
    if stream is None:
        stream = state._streams[dev] = torch.cuda.Stream(dev)
    host = torch.empty(x.shape, dtype=x.dtype, pin_memory=True)
    stream.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(stream):
        host.copy_(x, non_blocking=True)
        ready = torch.cuda.Event()
        ready.record(stream)
    x.record_stream(stream)
    return host, ready, stream


def dqsgd_hook(state, bucket):
    """DDP communication hook (ddp.register_comm_hook(state, dqsgd_hook)): hands the bucket to
    the state's communication thread and returns a Future of the average over ranks of the
    bucket (decoded where compressed; the bucket's dtype and device). It waits for nothing."""
    t0 = time.perf_counter()
    buf = bucket.buffer()
    if buf.dtype not in BUCKET_TYPES or buf.device.type not in ("cpu", "cuda"):
        raise TypeError("dqsgd_hook: buckets of float32, float16 or bfloat16 on the CPU or a CUDA device, got %s on %s"
                        % (buf.dtype, buf.device))
    if state._pending_load is not None:
        raise RuntimeError("dqsgd_hook: this state was unpickled: call state.attach(model) before training")
    state._bind_group()
    comm = state._start_threads()[0]
    idx, it, last = bucket.index(), state.iter, bucket.is_last()
    x, ready, stream = buf.detach(), None, None
    if x.device.type == "cuda":
        x, ready, stream = _to_host(state, x)
    elif not x.is_contiguous():
        x = x.contiguous()
    call = _Call(state, idx, it, last, list(bucket.parameters()), x, ready, buf.device, stream)
    t1 = time.perf_counter()
    with state._lock:
        waited = time.perf_counter() - t1
        state.bucket_calls[idx] = state.bucket_calls.get(idx, 0) + 1
        if last:
            state._round = _Round()
    comm.put(call)
    if last:
        state.iter += 1
        state.iterations += 1
    state.stats.close(it)
    dt = time.perf_counter() - t0
    state.stats.add(it, hook_s=dt, hook_max_s=dt, block_s=waited)
    return call.future.then(_value)
