"""ddp_hook.py - a PyTorch DDP communication hook that sends QSGD messages made by dqsgd.

    from ddp_hook import DQSGDHookState, dqsgd_hook
    state = DQSGDHookState(bits=4)                                   # fixed width
    state = DQSGDHookState(bits=2, error_feedback=True)              # 2 bits + EF (nearest, max norm)
    state = DQSGDHookState(schedule=dict(steps=T, budget_bits_per_elem=2.7, alpha=0.999,
                                         period=10, window=50), dim=num_params)   # DQSGD-P2
    ddp_model.register_comm_hook(state, dqsgd_hook)

What one call does, for one DDP bucket (a flat float32 CPU gradient of n elements):
  1. encode bucket.buffer() into one dqsgd message: QSGD, bucket 512, L2 scale, stochastic
     rounding, dither keyed by (seed + bucket index, step = iteration, stream = rank), with the
     bucket's error-feedback residual when asked (the residual keeps x + r - decoded);
  2. all_gather the message sizes (one int64 per rank), pad every message to the largest and
     all_gather the uint8 tensors (gloo has no variable-size all_gather);
  3. decode_add every rank's message in rank order with weight 1/world into a zeroed float32
     tensor, and return it in an already completed torch.futures.Future.
Every rank decodes the same bytes in the same order, so every rank gets the same bits and
the replicas stay identical.

The width: fixed (`bits`), or a DQSGD schedule (dq_sched, python/dqsgd.Schedule) that is the
same on every rank because everything it is fed is: its norm prior is rank 0's first gradient
norm (broadcast once, 8 bytes), and after each iteration it gets the norm of the aggregated
(decoded, averaged) gradient, which every rank computes from identical bits, and the size of
rank 0's messages. One schedule serves the whole model: the width is chosen at the first
bucket of an iteration and the schedule is updated at the last (bucket.is_last()).

Accounting (per rank, in the state): bytes_msg = the bytes of this rank's messages;
bytes_moved = what the padded all_gather carried from it (the largest message, plus the 8-byte
size exchange); bytes_control = the norm broadcast (rank 0 only). iterations counts steps.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dqsgd  # noqa: E402

__all__ = ["DQSGDHookState", "dqsgd_hook"]


class DQSGDHookState:
    """The hook's state, one object per DDP model, shared by all its buckets.

    process_group: the group to aggregate over (None = the default group).
    bits: the width when there is no schedule (1..16).
    schedule: None, or a dict of dq_sched_params for a DQSGD schedule over the whole model:
        steps (T, required), and one calibration: scale (c), budget_bits (P2: bits of all T
        messages of one worker, all buckets, headers included) or budget_bits_per_elem (P2
        with budget_bits = that * dim * steps); optional alpha, bits_min, bits_max, period,
        window, norm_prior (default: rank 0's first-bucket gradient norm, scaled by
        sqrt(dim / bucket elements) when the model has more than one bucket), mode.
    dim: elements of the model (the sum of the parameters' numel); needed with a schedule.
    error_feedback: keep a residual per bucket (re-mapped by parameter if DDP rebuilds buckets).
    seed: dither key; bucket i uses seed + i so buckets draw independent dither.
    bucket_size: elements per QSGD scale (dqsgd's bucket, not DDP's).
    rounding, norm: dqsgd.ROUND_STOCHASTIC (unbiased) or ROUND_NEAREST; dqsgd.NORM_L2 (QSGD)
        or NORM_MAX. Default (None): stochastic with L2 scales, but nearest with max-norm
        scales under error feedback, which needs a contraction (E|Q(x)-x|^2 < |x|^2): QSGD's
        stochastic L2 quantizer at 2 bits has an error ~3.9x the gradient and its residual
        diverges (README, the hook table).
    keep_messages: keep the last call's own message, gathered sizes and result per bucket
        index in .last (for tests)."""

    def __init__(self, process_group=None, bits=4, schedule=None, dim=None, error_feedback=False, seed=0,
                 bucket_size=512, rounding=None, norm=None, keep_messages=False):
        self.process_group = process_group
        group = process_group if process_group is not None else dist.group.WORLD
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self.src0 = 0 if process_group is None else dist.get_global_rank(group, 0)
        self.bits = int(bits)
        self.sched_spec = dict(schedule) if schedule is not None else None
        if self.sched_spec is not None and not dim:
            raise ValueError("DQSGDHookState: a schedule needs dim (the model's element count)")
        self.dim = dim
        self.sched = None
        self.error_feedback = bool(error_feedback)
        self.seed = int(seed)
        self.bucket_size = int(bucket_size)
        if rounding is None:
            rounding = dqsgd.ROUND_NEAREST if error_feedback else dqsgd.ROUND_STOCHASTIC
        if norm is None:
            norm = dqsgd.NORM_MAX if error_feedback else dqsgd.NORM_L2
        self.rounding, self.norm = rounding, norm
        self.keep_messages = keep_messages
        self.iter = 0            # iteration (DDP step); the dither's step
        self.width = None        # the width of iteration self.width_iter
        self.width_iter = -1
        self.widths = []         # width of every iteration
        self.bucket_calls = {}   # bucket index -> calls so far (equals self.iter after each step)
        self.residuals = {}      # bucket index -> (layout, float32 tensor)
        self._param_residual = {}  # id(parameter) -> its slice of a bucket's residual
        self._norm2 = 0.0        # squared norm of this iteration's aggregated gradient so far
        self._bits_iter = 0.0    # fixed-layout bits of this iteration's messages (the schedule's unit)
        self.bytes_msg = 0
        self.bytes_moved = 0
        self.bytes_control = 0
        self.iterations = 0
        self.last = {}

    # ------------------------------------------------------------ the width
    def _make_schedule(self, first_norm, numel):
        spec = dict(self.sched_spec)
        mode = spec.pop("mode", "dqsgd")
        bpe = spec.pop("budget_bits_per_elem", None)
        if bpe is not None:
            spec["budget_bits"] = float(bpe) * self.dim * spec["steps"]
        if not spec.get("norm_prior"):
            # rank 0's first gradient norm, one float64 broadcast (trainer.c sends it as one float)
            g = torch.tensor([first_norm * math.sqrt(self.dim / numel)], dtype=torch.float64)
            dist.broadcast(g, src=self.src0, group=self.process_group)
            if self.rank == 0:
                self.bytes_control += 8
            spec["norm_prior"] = float(g[0])
        spec.setdefault("bucket", self.bucket_size)
        spec.setdefault("workers", self.world_size)
        self.sched = dqsgd.Schedule(mode, dim=self.dim, **spec)

    def _width(self, x):
        if self.width_iter == self.iter:
            return self.width
        if self.sched_spec is None:
            w = self.bits
        else:
            if self.sched is None:
                self._make_schedule(float(np.linalg.norm(x.numpy().astype(np.float64))), x.numel())
            if self.sched.step < self.sched.params.steps:
                w = self.sched.next()
            else:  # past the planned steps: keep the last width
                w = self.width if self.width is not None else self.bits
        self.width, self.width_iter = w, self.iter
        self.widths.append(w)
        return w

    # ------------------------------------------------------------ error feedback
    def _residual(self, idx, bucket, n):
        """The residual of bucket idx. It is one contiguous tensor per bucket (what dq_encode
        takes) whose slices are also indexed by parameter, so that when DDP rebuilds its buckets
        (after iteration 0) every parameter carries its own residual into its new bucket."""
        layout = tuple((id(p), p.numel()) for p in bucket.parameters())
        old = self.residuals.get(idx)
        if old is not None and old[0] == layout:
            return old[1]
        r = torch.zeros(n, dtype=torch.float32)
        if sum(c for _, c in layout) == n:
            off = 0
            for pid, c in layout:
                prev = self._param_residual.get(pid)
                if prev is not None and prev.numel() == c:
                    r[off: off + c] = prev
                off += c
            off = 0
            for pid, c in layout:
                self._param_residual[pid] = r[off: off + c]
                off += c
        self.residuals[idx] = (layout, r)
        return r


def _all_gather_messages(state, msg, err=None):
    """(list of every rank's message as a uint8 tensor, sizes) through two all_gathers. A rank
    whose encode failed (err) sends its negative dq_status as its size, and then every rank
    raises that DQError, so that no rank is left waiting in a collective."""
    group, world = state.process_group, state.world_size
    size = torch.tensor([msg.size if err is None else min(err.status, -1)], dtype=torch.int64)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(sizes, size, group=group)
    sizes = [int(s[0]) for s in sizes]
    bad = [r for r in range(world) if sizes[r] < 0]
    if bad:
        raise dqsgd.DQError(sizes[bad[0]], "dqsgd_hook: dq_encode on rank %d (step %d)" % (bad[0], state.iter))
    cap = max(sizes)
    send = torch.zeros(cap, dtype=torch.uint8)
    send[: msg.size] = torch.from_numpy(msg)
    recv = [torch.empty(cap, dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(recv, send, group=group)
    state.bytes_msg += msg.size
    state.bytes_moved += cap + 8
    return [recv[r][: sizes[r]] for r in range(world)], sizes


def dqsgd_hook(state, bucket):
    """DDP communication hook: see the module docstring. Returns a completed Future holding
    the average of the decoded messages of all ranks (float32, the bucket's length)."""
    buf = bucket.buffer()
    if buf.dtype != torch.float32 or buf.device.type != "cpu":
        raise TypeError("dqsgd_hook: float32 CPU buckets only, got %s on %s" % (buf.dtype, buf.device))
    x = buf.detach()
    if not x.is_contiguous():
        x = x.contiguous()
    n, idx = x.numel(), bucket.index()
    width = state._width(x)
    residual = state._residual(idx, bucket, n) if state.error_feedback else None
    try:
        msg = dqsgd.encode(x, bits=width, seed=state.seed + idx, step=state.iter, stream=state.rank,
                           residual=residual, bucket=state.bucket_size, rounding=state.rounding, norm=state.norm)
        err = None
    except dqsgd.DQError as e:  # e.g. NaN/Inf (a diverged run): every rank must learn it
        msg, err = np.zeros(0, dtype=np.uint8), e
    msgs, sizes = _all_gather_messages(state, msg, err)

    out = torch.zeros(n, dtype=torch.float32)
    w = 1.0 / state.world_size
    for r in range(state.world_size):  # rank order: the same float sums on every rank
        m = dqsgd.Message(msgs[r])  # opened once: header, size, checksum
        h = m.header
        if h.count != n or h.msg_size != sizes[r]:
            raise RuntimeError("dqsgd_hook: rank %d sent %d elements in %d bytes, bucket %d has %d" % (
                r, h.count, sizes[r], idx, n))
        m.decode_add(w, out)

    if state.keep_messages:
        state.last[idx] = {"msg": msg.copy(), "sizes": sizes, "result": out.clone(), "iter": state.iter,
                           "width": width}
    state.bucket_calls[idx] = state.bucket_calls.get(idx, 0) + 1
    if state.sched is not None:
        a = out.numpy().astype(np.float64)
        state._norm2 += float(a @ a)
        state._bits_iter += dqsgd.message_bits(n, width, state.bucket_size)  # the schedule plans in these
    if bucket.is_last():
        if state.sched is not None:
            state.sched.update(math.sqrt(state._norm2), 0.0, state._bits_iter)
            state._norm2, state._bits_iter = 0.0, 0.0
        state.iter += 1
        state.iterations += 1

    fut = torch.futures.Future()
    fut.set_result(out)
    return fut
