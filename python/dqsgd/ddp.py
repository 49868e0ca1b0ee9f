"""dqsgd.ddp - a PyTorch DDP communication hook that sends gradients compressed by dqsgd.

    from dqsgd.ddp import DQSGDHookState, dqsgd_hook
    state = DQSGDHookState(bits=4)                                   # fixed width
    state = DQSGDHookState(bits=2, error_feedback=True)              # 2 bits + EF (nearest, max norm)
    state = DQSGDHookState(bits=4, pattern="shared")                 # integer allreduce
    state = DQSGDHookState(bits=4, pattern="sra")                    # scatter-reduce-allgather
    state = DQSGDHookState(bits=2, error_feedback=True, pattern="auto",
                           min_compress_numel=1024, start_iter=10)   # skip small layers, warm start
    state = DQSGDHookState(schedule=dict(steps=T, budget_bits_per_elem=2.7, alpha=0.999,
                                         period=10, window=50), dim=num_params)   # DQSGD-P2
    ddp_model.register_comm_hook(state, dqsgd_hook)

One call handles one DDP bucket (a flat float32 CPU gradient of n elements) and returns a
torch.futures.Future of the averaged bucket; the payload collective runs with async_op=True
and decoding is chained on its future (Future.then), so DDP goes on with the backward pass of
the next buckets while this one is on the wire and being decoded:
  - iterations before start_iter: the bucket / world, float32 allreduce (a warm start);
  - parameters with fewer than min_compress_numel elements (biases, norms): float32 allreduce
    of their slices, beside the compressed rest;
  - the rest, in one of three patterns (`pattern`):
    allgather  encode one dqsgd message (QSGD, bucket 512, the library's default coder, dither
               keyed by (seed + bucket index, iteration, rank), the error-feedback residual when
               asked), exchange the sizes (8 bytes, blocking: the padded payload's size depends
               on it), all_gather the padded messages (async), decode_add them in rank order
               with weight 1/world;
    shared     the shared-scale integer allreduce (dq_shared_*): exponents per 512 elements,
               max-allreduced as int8 (blocking: the levels depend on them), then the integer
               levels sum-allreduced (async; int8, or int32 where the sum needs 16 bits: gloo
               refuses int16) and decoded with weight 1/world. Exact: the integer sum times the
               unit is the float sum of every rank's decoded levels. Max-scaled whatever `norm`.
    sra        scatter-reduce-allgather with re-quantization: the compressed part is cut into W
               contiguous shards at multiples of dq_range_align (whole dqsgd buckets, so the
               shards have the scales of one message of the whole); rank r encodes shard j for
               rank j (stream j*W + r, its error-feedback residual's slice with it), the sizes
               go to every rank (all_to_all_single of W int64s, blocking: the split sizes of
               the payload depend on them), then the messages (all_to_all_single, variable
               splits); rank j decode_adds the W messages of its shard in rank order with
               weight 1/W and encodes that mean again (stream W*W + j), and the owners'
               messages are exchanged as allgather does (sizes blocking, padded payload async)
               and decoded by every rank. The payload all_to_all is waited for in the hook call:
               what follows it is a collective, and collectives must start in the same order on
               every rank, which callbacks (run on gloo's threads as buckets finish) do not
               guarantee; only the last all_gather overlaps. The second quantization adds its
               own error to the mean; without error feedback it is unbiased (stochastic
               rounding) and not corrected; with error feedback the owner of each shard keeps a
               second residual (double error feedback, as DoubleSqueeze), restarted at zero when
               DDP rebuilds the bucket.
    auto       per bucket: allgather at its first compressed iteration (which measures its coded
               size), then allgather while W * b <= 2 * w, else shared for good; b = bits per
               element of the bucket's largest message the last time it was allgathered, w = the
               shared pattern's integer width on gloo (8 or 32). Those are what a ring sends per
               worker: W-1 messages of b bits against 2(W-1)/W of the w-bit sums. auto never
               picks sra: by bytes alone sra always wins for W > 2 (about 2(W-1)/W messages per
               worker against W-1), but it runs four collectives to allgather's two and
               quantizes twice, and the hook has no latency model to weigh that; name it.
Every rank combines the same bytes in the same order, so every rank gets the same bits and
the replicas stay identical. A failure on one rank (NaN or Inf in its gradient, a bad
message) is sent through the collectives, so every rank raises the same DQError.

The width: fixed (`bits`), or a DQSGD schedule (dq_sched, dqsgd.Schedule) that is the
same on every rank because everything it is fed is: its norm prior is rank 0's first gradient
norm (broadcast once, 8 bytes), and it is updated with the norm of the aggregated gradient
(identical bits on every rank, summed over buckets in index order when the next iteration
starts, since the buckets finish asynchronously) and the fixed-layout size of the width.

Accounting (per rank, in the state): bytes_msg = this rank's payload (messages, or levels and
exponents, or sra's shard messages to the other ranks and its re-quantized shard; and float32
slices); bytes_moved = everything it handed to collectives (padding,
the size exchange and the failure flags included); bytes_control = the norm broadcast (rank 0
only). stats[i] holds iteration i's seconds spent encoding, communicating (from starting a
collective until its future completes: it overlaps the backward pass and other buckets) and
decoding, and its bytes; summary() averages them. iterations counts steps.
"""

import math
import os
import sys
import threading
import time

import numpy as np
import torch
import torch.distributed as dist

import dqsgd

__all__ = ["DQSGDHookState", "dqsgd_hook", "PATTERNS"]

PATTERNS = ("allgather", "shared", "sra", "auto")


class _Plan:
    """Which elements of a bucket are compressed: `big` and `small` are lists of (offset,
    count) slices of the bucket in parameter order; `layout` the parameters' ids and sizes."""

    def __init__(self, bucket, n, min_numel):
        params = list(bucket.parameters())
        self.layout = tuple((id(p), p.numel()) for p in params)
        self.big, self.small, self.big_ids = [], [], []
        if sum(c for _, c in self.layout) != n or min_numel <= 0:
            self.big = [(0, n)]  # unknown layout, or no size rule: the whole bucket
            self.big_ids = list(self.layout) if sum(c for _, c in self.layout) == n else []
        else:
            off = 0
            for pid, c in self.layout:
                if c < min_numel:
                    self.small.append((off, c))
                else:
                    self.big.append((off, c))
                    self.big_ids.append((pid, c))
                off += c
        self.n_big = sum(c for _, c in self.big)
        self.n_small = n - self.n_big
        self.whole = self.big == [(0, n)]


def _gather(x, slices):
    """The slices of x as one contiguous tensor (x itself when one slice covers it)."""
    if len(slices) == 1 and slices[0] == (0, x.numel()):
        return x
    return torch.cat([x[o: o + c] for o, c in slices])


class DQSGDHookState:
    """The hook's state, one object per DDP model, shared by all its buckets.

    process_group: the group to aggregate over (None = the default group).
    bits: the width when there is no schedule (1..16; 2..16 with the shared pattern).
    schedule: None, or a dict of dq_sched_params for a DQSGD schedule over the whole model:
        steps (T, required), and one calibration: scale (c), budget_bits (P2: bits of all T
        messages of one worker, all buckets, headers included) or budget_bits_per_elem (P2
        with budget_bits = that * dim * steps); optional alpha, bits_min, bits_max, period,
        window, norm_prior (default: rank 0's first-bucket gradient norm, scaled by
        sqrt(dim / bucket elements) when the model has more than one bucket), mode.
    dim: elements of the model (the sum of the parameters' numel); needed with a schedule.
    error_feedback: keep a residual per parameter (it follows the parameter when DDP rebuilds
        its buckets); used by every pattern; sra adds a second residual per shard owner.
    seed: dither key; bucket i uses seed + i so buckets draw independent dither.
    bucket_size: elements per scale (dqsgd's bucket, not DDP's).
    rounding, norm: dqsgd.ROUND_STOCHASTIC (unbiased) or ROUND_NEAREST; dqsgd.NORM_L2 (QSGD)
        or NORM_MAX. Default (None): stochastic with L2 scales, but nearest with max-norm
        scales under error feedback, which needs a contraction (E|Q(x)-x|^2 < |x|^2): QSGD's
        stochastic L2 quantizer at 2 bits has an error ~3.9x the gradient and its residual
        diverges (README, the hook table). The shared pattern always scales by the max.
    pattern: "allgather", "shared", "sra" or "auto" (module docstring).
    min_compress_numel: parameters with fewer elements go uncompressed (float32 allreduce).
    start_iter: the first start_iter iterations are plain float32 allreduces (a warm start).
    keep_messages: keep the last call's own payload, the sizes, the input and the result per
        bucket index in .last (for tests)."""

    def __init__(self, process_group=None, bits=4, schedule=None, dim=None, error_feedback=False, seed=0,
                 bucket_size=512, rounding=None, norm=None, keep_messages=False, pattern="allgather",
                 min_compress_numel=0, start_iter=0):
        if pattern not in PATTERNS:
            raise ValueError("DQSGDHookState: pattern %r is not one of %s" % (pattern, ", ".join(PATTERNS)))
        self.process_group = process_group
        group = process_group if process_group is not None else dist.group.WORLD
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self.src0 = 0 if process_group is None else dist.get_global_rank(group, 0)
        self.bits = int(bits)
        self.sched_spec = dict(schedule) if schedule is not None else None
        if self.sched_spec is not None and not dim:
            raise ValueError("DQSGDHookState: a schedule needs dim (the model's element count)")
        if pattern == "shared" and self.sched_spec is None and self.bits < 2:
            raise ValueError("DQSGDHookState: the shared pattern needs 2..16 bits")
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
        self.pattern = pattern
        self.min_compress_numel = int(min_compress_numel)
        self.start_iter = int(start_iter)
        self.keep_messages = keep_messages
        self.iter = 0            # iteration (DDP step); the dither's step
        self.width = None        # the width of iteration self.width_iter
        self.width_iter = -1
        self.widths = []         # width of every compressed iteration
        self.patterns = {}       # bucket index -> pattern of its last compressed call
        self.bucket_calls = {}   # bucket index -> calls so far (equals self.iter after each step)
        self.residuals = {}      # bucket index -> (layout, float32 tensor)
        self._param_residual = {}  # id(parameter) -> its slice of a bucket's residual
        self._plans = {}         # bucket index -> _Plan
        self._bpe = {}           # bucket index -> bits/element of its largest message (auto)
        self._residual2 = {}     # bucket index -> (shard key, float32 tensor): sra's second residual
        self._norm2 = {}         # iteration -> {bucket index: squared norm of its result}
        self._bits_iter = {}     # iteration -> fixed-layout bits of its messages (the schedule's unit)
        self._lock = threading.Lock()  # callbacks run on gloo's threads
        self.bytes_msg = 0
        self.bytes_moved = 0
        self.bytes_control = 0
        self.iterations = 0
        self.stats = {}          # iteration -> {"encode_s", "comm_s", "decode_s", "bytes"}
        self.last = {}

    # ------------------------------------------------------------ accounting
    def _add(self, it, **kw):
        with self._lock:
            s = self.stats.setdefault(it, {"encode_s": 0.0, "comm_s": 0.0, "decode_s": 0.0, "bytes": 0})
            for k, v in kw.items():
                s[k] += v

    def _sent(self, it, payload, moved):
        self.bytes_msg += payload
        self.bytes_moved += moved
        self._add(it, bytes=moved)

    def summary(self, first=None):
        """Means per iteration over the iterations from `first` (default: start_iter, the first
        compressed one): encode_s, comm_s, decode_s, bytes; and their count."""
        first = self.start_iter if first is None else first
        with self._lock:
            rows = [s for i, s in self.stats.items() if i >= first]
        keys = ("encode_s", "comm_s", "decode_s", "bytes")
        if not rows:
            return dict({k: 0.0 for k in keys}, iterations=0)
        return dict({k: sum(r[k] for r in rows) / len(rows) for k in keys}, iterations=len(rows))

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

    def _sched_catch_up(self):
        """Feed the schedule the iterations that finished: their buckets completed (DDP waits
        for every future before backward returns), so their norms are all in."""
        for it in sorted(i for i in self._bits_iter if i < self.iter):
            with self._lock:
                norms = self._norm2.pop(it, {})
            bits = self._bits_iter.pop(it)
            # bucket index order: the same float sum on every rank
            self.sched.update(math.sqrt(sum(norms[k] for k in sorted(norms))), 0.0, bits)

    def _width(self, x):
        if self.width_iter == self.iter:
            return self.width
        if self.sched_spec is None:
            w = self.bits
        else:
            if self.sched is None:
                self._make_schedule(float(np.linalg.norm(x.numpy().astype(np.float64))), x.numel())
            self._sched_catch_up()
            if self.sched.step < self.sched.params.steps:
                w = self.sched.next()
            else:  # past the planned steps: keep the last width
                w = self.width if self.width is not None else self.bits
        self.width, self.width_iter = w, self.iter
        self.widths.append(w)
        return w

    # ------------------------------------------------------------ error feedback
    def _residual(self, idx, plan):
        """The residual of bucket idx's compressed part. It is one contiguous tensor per bucket
        (what the encoders take) whose slices are also indexed by parameter, so that when DDP
        rebuilds its buckets (after iteration 0) every parameter carries its own residual into
        its new bucket."""
        layout = tuple(plan.big_ids)
        old = self.residuals.get(idx)
        if old is not None and old[0] == layout:
            return old[1]
        r = torch.zeros(plan.n_big, dtype=torch.float32)
        if sum(c for _, c in layout) == plan.n_big:
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

    def _plan(self, idx, bucket, n):
        plan = self._plans.get(idx)
        layout = tuple((id(p), p.numel()) for p in bucket.parameters())
        if plan is None or plan.layout != layout:
            plan = self._plans[idx] = _Plan(bucket, n, self.min_compress_numel)
            self._bpe.pop(idx, None)  # a new bucket (DDP rebuilt them): auto measures it again
            self.patterns.pop(idx, None)
        return plan

    def _residual2_for(self, idx, plan, lo, hi):
        """sra with error feedback: the residual of the second quantization, kept by the rank
        that owns shard [lo, hi) of bucket idx's compressed part. Started at zero, and again
        whenever the bucket's layout or the shard changes (DDP's one bucket rebuild): unlike
        the first residual it does not follow parameters, since a shard cuts across them."""
        key = (tuple(plan.big_ids), plan.n_big, lo, hi)
        old = self._residual2.get(idx)
        if old is not None and old[0] == key:
            return old[1]
        r = torch.zeros(hi - lo, dtype=torch.float32)
        self._residual2[idx] = (key, r)
        return r

    def _choose(self, idx, width, n):
        if self.pattern != "auto":
            return self.pattern
        if self.patterns.get(idx) == "shared":
            return "shared"
        b = self._bpe.get(idx)
        if b is None or width < 2:
            return "allgather"  # measure the coded size first; the shared pattern needs 2 bits
        w = dqsgd.shared_width(width, self.world_size)
        w = 32 if w == 16 else w
        return "allgather" if w == 0 or self.world_size * b <= 2 * w else "shared"


# ---------------------------------------------------------------- the collectives
def _allreduce_mean(state, x, it):
    """Start a float32 allreduce of x / world; a future of the mean (bitwise the same on every
    rank: gloo's allreduce hands every rank the same reduced chunks)."""
    t = x / state.world_size
    t0 = time.perf_counter()
    work = dist.all_reduce(t, group=state.process_group, async_op=True)
    state._sent(it, 4 * t.numel(), 4 * t.numel())

    def done(fut):
        state._add(it, comm_s=time.perf_counter() - t0)
        return fut.value()[0]
    return work.get_future().then(done)


def _start_allgather(state, idx, x, residual, width, it):
    """Encode x, exchange sizes, start the all_gather of the padded messages; returns a future
    of the decoded mean (float32, x's length)."""
    group, world, n = state.process_group, state.world_size, x.numel()
    t0 = time.perf_counter()
    try:
        msg = dqsgd.encode(x, bits=width, seed=state.seed + idx, step=it, stream=state.rank,
                           residual=residual, bucket=state.bucket_size, rounding=state.rounding, norm=state.norm)
        err = None
    except dqsgd.DQError as e:  # e.g. NaN/Inf (a diverged run): every rank must learn it
        msg, err = np.zeros(0, dtype=np.uint8), e
    t1 = time.perf_counter()
    # a rank whose encode failed sends its negative dq_status as its size: every rank raises
    size = torch.tensor([msg.size if err is None else min(err.status, -1)], dtype=torch.int64)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(sizes, size, group=group)
    sizes = [int(s[0]) for s in sizes]
    t2 = time.perf_counter()
    state._add(it, encode_s=t1 - t0, comm_s=t2 - t1)
    bad = [r for r in range(world) if sizes[r] < 0]
    if bad:
        raise dqsgd.DQError(sizes[bad[0]], "dqsgd_hook: dq_encode on rank %d (step %d)" % (bad[0], it))
    cap = max(sizes)  # gloo has no variable-size all_gather: pad to the largest
    state._bpe[idx] = 8.0 * cap / n
    send = torch.zeros(cap, dtype=torch.uint8)
    send[: msg.size] = torch.from_numpy(msg)
    recv = [torch.empty(cap, dtype=torch.uint8) for _ in range(world)]
    t3 = time.perf_counter()
    work = dist.all_gather(recv, send, group=group, async_op=True)
    state._sent(it, msg.size, cap + 8)
    if state.keep_messages:
        state.last[idx].update({"msg": msg.copy(), "sizes": sizes})

    def decode(fut):
        t4 = time.perf_counter()
        out = torch.zeros(n, dtype=torch.float32)
        for r in range(world):  # rank order: the same float sums on every rank
            m = dqsgd.Message(recv[r][: sizes[r]])  # opened once: header, size, checksum
            h = m.header
            if h.count != n or h.msg_size != sizes[r]:
                raise RuntimeError("dqsgd_hook: rank %d sent %d elements in %d bytes, bucket %d has %d" % (
                    r, h.count, sizes[r], idx, n))
            m.decode_add(1.0 / world, out)
        state._add(it, comm_s=t4 - t3, decode_s=time.perf_counter() - t4)
        return out
    return work.get_future().then(decode)


def _start_shared(state, idx, x, residual, width, it):
    """The shared-scale integer allreduce: exponents max-allreduced (blocking), levels
    sum-allreduced (async); returns a future of the decoded mean."""
    group, world, n, rank = state.process_group, state.world_size, x.numel(), state.rank
    w = dqsgd.shared_width(width, world)
    if w == 0:  # the same on every rank: every rank raises here
        raise ValueError("dqsgd_hook: no integer sum of %d workers' %d-bit levels fits 2^24" % (world, width))
    w = 32 if w == 16 else w  # gloo's all_reduce refuses int16
    nb = dqsgd.shared_buckets(n, width, state.bucket_size)
    t0 = time.perf_counter()
    # two extra int8s under the max: the largest -dq_status any rank hit, and (rank + 1) of it
    exps = torch.zeros(nb + 2, dtype=torch.int8)
    try:
        dqsgd.shared_exponents(x, width, state.bucket_size, residual, out=exps[:nb])
    except dqsgd.DQError as e:
        exps[nb], exps[nb + 1] = min(-e.status, 127), min(rank + 1, 127)
    t1 = time.perf_counter()
    dist.all_reduce(exps, op=dist.ReduceOp.MAX, group=group)
    t2 = time.perf_counter()
    state._add(it, encode_s=t1 - t0, comm_s=t2 - t1)
    if int(exps[nb]) != 0:
        raise dqsgd.DQError(-int(exps[nb]), "dqsgd_hook: dq_shared_exponents on rank %d (step %d)" % (
            int(exps[nb + 1]) - 1, it))
    e = exps[:nb]
    itype = torch.int8 if w == 8 else torch.int32
    levels = torch.zeros(n + 1, dtype=itype)  # the last element counts the ranks that failed
    t3 = time.perf_counter()
    try:
        dqsgd.shared_encode(x, e, w, width, seed=state.seed + idx, step=it, stream=rank, residual=residual,
                            bucket=state.bucket_size, rounding=state.rounding, out=levels[:n])
    except dqsgd.DQError:
        levels[n] = 1
    t4 = time.perf_counter()
    own = levels[:n].clone() if state.keep_messages else None
    work = dist.all_reduce(levels, group=group, async_op=True)
    state._add(it, encode_s=t4 - t3)
    state._sent(it, (n * w) // 8 + nb, ((n + 1) * w) // 8 + nb + 2)
    if state.keep_messages:
        state.last[idx].update({"levels": own, "exps": e.clone(), "wire": w})

    def decode(fut):
        t5 = time.perf_counter()
        if int(levels[n]) != 0:
            raise dqsgd.DQError(-1, "dqsgd_hook: dq_shared_encode failed on %d rank(s) (step %d)" % (
                int(levels[n]), it))
        out = torch.empty(n, dtype=torch.float32)
        dqsgd.shared_decode(levels[:n], e, w, width, n, 1.0 / world, state.bucket_size, out=out)
        state._add(it, comm_s=t5 - t4, decode_s=time.perf_counter() - t5)
        return out
    return work.get_future().then(decode)


# sra's coder: the library's default (DQ_CODER_DEFAULT) codes a message only from
# DQ_CODER_AUTO_MIN (4096) elements and sends smaller ones in the fixed layout, but sra cuts a
# bucket into W pieces, and a piece under 4096 elements (the tail shard of the model in
# `make ddp` at W = 4: 3146 elements, 1625 bytes fixed against 184 coded at 4 bits) would cost
# more than all the coded rest. So sra asks for what the default does from 4096 elements on, at
# every size: the smallest coder (DQ_CODER_AUTO) and the payload checksum (one-pass decoding).
SRA_CODER = dict(coder=dqsgd.CODER_AUTO, checksum=1)


def sra_shards(n, width, bucket, world):
    """The W shards of an n-element vector for the sra pattern: [(lo, hi)] for owners 0..W-1,
    contiguous, in order, cut at multiples of dq_range_align (lcm(256, bucket), capped at n), so
    each shard holds whole dqsgd buckets (the same scales as one message of the whole vector).
    With fewer units than ranks some shards are empty (lo == hi)."""
    a = dqsgd.range_align(n, width, bucket) or n
    units = -(-n // a)
    cuts = [min(n, (j * units // world) * a) for j in range(world + 1)]
    return [(cuts[j], cuts[j + 1]) for j in range(world)]


def _start_sra(state, idx, x, residual, width, it):
    """Scatter-reduce-allgather with re-quantization: shard j of x is encoded for rank j (the
    error-feedback residual's slice with it), the W shard messages of every rank are exchanged
    with all_to_all_single (their sizes first, blocking), rank j decode_adds the W messages of its
    shard with weight 1/W and encodes that mean again (the second quantization), and the owners'
    messages are allgathered (sizes blocking, payload async) and decoded by every rank. Returns
    a future of the decoded mean. The four collectives are started here, in the caller's
    thread, in the same order on every rank (a collective started inside a callback would be
    numbered by whichever bucket's callback ran first)."""
    group, world, n, rank = state.process_group, state.world_size, x.numel(), state.rank
    shards = sra_shards(n, width, state.bucket_size, world)
    kw = dict(bits=width, seed=state.seed + idx, step=it, bucket=state.bucket_size, rounding=state.rounding,
              norm=state.norm, **SRA_CODER)
    empty = np.zeros(0, dtype=np.uint8)
    t0 = time.perf_counter()
    err = None
    msgs = []
    try:
        for j, (lo, hi) in enumerate(shards):  # stream j * W + rank: independent dither per (shard, rank)
            msgs.append(dqsgd.encode(x[lo:hi], stream=j * world + rank,
                                     residual=None if residual is None else residual[lo:hi], **kw)
                        if hi > lo else empty)
    except dqsgd.DQError as e:  # every rank must learn it: a negative size to every rank
        msgs, err = [empty] * world, e
    t1 = time.perf_counter()
    # Sizes first (8 bytes to each rank): all_to_all_single needs every split size, and padding
    # to a bound would send the fixed layout's size (dq_encode_capacity, ~4 bits an element at
    # 4 bits) where the coded shard messages are a few percent of it.
    send_sizes = torch.tensor([m.size if err is None else min(err.status, -1) for m in msgs], dtype=torch.int64)
    recv_sizes = torch.zeros(world, dtype=torch.int64)
    dist.all_to_all_single(recv_sizes, send_sizes, group=group)
    rsz = [int(v) for v in recv_sizes]
    bad = [r for r in range(world) if rsz[r] < 0]
    if bad:
        t2 = time.perf_counter()
        state._add(it, encode_s=t1 - t0, comm_s=t2 - t1)
        raise dqsgd.DQError(rsz[bad[0]], "dqsgd_hook: dq_encode on rank %d (step %d)" % (bad[0], it))
    send = torch.from_numpy(np.concatenate(msgs)) if msgs else torch.zeros(0, dtype=torch.uint8)
    recv = torch.empty(sum(rsz), dtype=torch.uint8)
    dist.all_to_all_single(recv, send, output_split_sizes=rsz, input_split_sizes=[m.size for m in msgs],
                           group=group)
    t2 = time.perf_counter()
    # reduce this rank's shard, then quantize it again
    lo, hi = shards[rank]
    msg2, err2, res2_in, t3 = empty, None, None, None
    try:
        if hi > lo:
            acc = torch.zeros(hi - lo, dtype=torch.float32)
            off = 0
            for r in range(world):  # rank order: the same float sums wherever this shard is reduced
                m = dqsgd.Message(recv[off: off + rsz[r]])
                if m.header.count != hi - lo or m.header.msg_size != rsz[r]:
                    raise dqsgd.DQError(-1, "dqsgd_hook: rank %d sent %d elements in %d bytes for shard %d (%d)" % (
                        r, m.header.count, rsz[r], rank, hi - lo))
                m.decode_add(1.0 / world, acc)
                off += rsz[r]
            t3 = time.perf_counter()
            res2 = state._residual2_for(idx, state._plans[idx], lo, hi) if state.error_feedback else None
            if state.keep_messages:
                res2_in = None if res2 is None else res2.clone()
                state.last[idx]["mean"] = acc.clone()
            msg2 = dqsgd.encode(acc, stream=world * world + rank, residual=res2, **kw)
    except dqsgd.DQError as e:  # a bad message or a sum out of range: sent as a negative size
        msg2, err2 = empty, e
    t4 = time.perf_counter()
    t3 = t4 if t3 is None else t3
    size = torch.tensor([msg2.size if err2 is None else min(err2.status, -1)], dtype=torch.int64)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(sizes, size, group=group)
    sizes = [int(s[0]) for s in sizes]
    t5 = time.perf_counter()
    state._add(it, encode_s=(t1 - t0) + (t4 - t3), comm_s=(t2 - t1) + (t5 - t4), decode_s=t3 - t2)
    bad = [r for r in range(world) if sizes[r] < 0]
    if bad:
        raise dqsgd.DQError(sizes[bad[0]], "dqsgd_hook: sra reduce or re-encode on rank %d (step %d)" % (bad[0], it))
    cap = max(sizes)
    if cap == 0:  # n > 0 gives at least one non-empty shard; guard anyway
        raise RuntimeError("dqsgd_hook: sra: no shard messages for bucket %d" % idx)
    send2 = torch.zeros(cap, dtype=torch.uint8)
    send2[: msg2.size] = torch.from_numpy(msg2)
    recv2 = [torch.empty(cap, dtype=torch.uint8) for _ in range(world)]
    t6 = time.perf_counter()
    work = dist.all_gather(recv2, send2, group=group, async_op=True)
    others = sum(m.size for j, m in enumerate(msgs) if j != rank)
    state._sent(it, others + msg2.size, 8 * world + sum(m.size for m in msgs) + 8 + cap)
    if state.keep_messages:
        state.last[idx].update({"sra_msgs": [m.copy() for m in msgs], "sra_shards": shards,
                                "msg2": msg2.copy(), "sizes2": sizes, "res2_in": res2_in})

    def decode(fut):
        t7 = time.perf_counter()
        out = torch.zeros(n, dtype=torch.float32)
        for j, (a, b) in enumerate(shards):
            if b == a:
                if sizes[j] != 0:
                    raise RuntimeError("dqsgd_hook: rank %d sent %d bytes for an empty shard" % (j, sizes[j]))
                continue
            m = dqsgd.Message(recv2[j][: sizes[j]])
            if m.header.count != b - a or m.header.msg_size != sizes[j]:
                raise RuntimeError("dqsgd_hook: rank %d sent %d elements in %d bytes, its shard has %d" % (
                    j, m.header.count, sizes[j], b - a))
            out[a:b] = torch.from_numpy(m.decode())
        state._add(it, comm_s=t7 - t6, decode_s=time.perf_counter() - t7)
        return out
    return work.get_future().then(decode)


def dqsgd_hook(state, bucket):
    """DDP communication hook: see the module docstring. Returns a Future that completes with
    the average over ranks of the bucket (decoded where compressed; float32, its length)."""
    buf = bucket.buffer()
    if buf.dtype != torch.float32 or buf.device.type != "cpu":
        raise TypeError("dqsgd_hook: float32 CPU buckets only, got %s on %s" % (buf.dtype, buf.device))
    x = buf.detach()
    if not x.is_contiguous():
        x = x.contiguous()
    idx, it = bucket.index(), state.iter
    state.bucket_calls[idx] = state.bucket_calls.get(idx, 0) + 1
    if state.keep_messages:
        state.last[idx] = {"iter": it, "input": x.clone(), "small": [], "width": None}
    try:
        return _start(state, bucket, x, idx, it)
    finally:
        if bucket.is_last():  # the rest of this iteration runs in callbacks, which know `it`
            state.iter += 1
            state.iterations += 1


def _start(state, bucket, x, idx, it):
    n = x.numel()
    if it < state.start_iter:  # warm start: what DDP does without a hook
        if state.keep_messages:
            state.last[idx]["pattern"] = "warm"
        return _finish(state, idx, it, _allreduce_mean(state, x, it))

    plan = state._plan(idx, bucket, n)
    futs = []
    if plan.n_big:
        xb = _gather(x, plan.big)
        width = state._width(x if plan.whole else xb)
        pattern = state._choose(idx, width, plan.n_big)
        state.patterns[idx] = pattern
        residual = state._residual(idx, plan) if state.error_feedback else None
        if state.keep_messages:
            state.last[idx].update({"width": width, "pattern": pattern})
        start = {"shared": _start_shared, "sra": _start_sra}.get(pattern, _start_allgather)
        futs.append(start(state, idx, xb, residual, width, it))
        if state.sched is not None:
            state._bits_iter[it] = state._bits_iter.get(it, 0.0) + dqsgd.message_bits(
                plan.n_big, width, state.bucket_size)  # the schedule plans in these
    elif state.keep_messages:
        state.last[idx]["pattern"] = "none"
    if plan.n_small:
        futs.append(_allreduce_mean(state, _gather(x, plan.small), it))
        if state.keep_messages:
            state.last[idx]["small"] = list(plan.small)
    if plan.n_small == 0:
        return _finish(state, idx, it, futs[0])

    def assemble(fut):
        parts = [f.value() for f in fut.value()]
        out = torch.empty(n, dtype=torch.float32)
        for slices, part in zip(([plan.big] if plan.n_big else []) + [plan.small], parts):
            off = 0
            for o, c in slices:
                out[o: o + c] = part[off: off + c]
                off += c
        return out
    return _finish(state, idx, it, torch.futures.collect_all(futs).then(assemble))


def _finish(state, idx, it, fut):
    """Chain what needs the result: the schedule's norm, the test record."""
    if state.sched is None and not state.keep_messages:
        return fut

    def after(f):
        out = f.value()
        if state.sched is not None and it >= state.start_iter:
            a = out.numpy().astype(np.float64)
            with state._lock:
                state._norm2.setdefault(it, {})[idx] = float(a @ a)
        if state.keep_messages:
            state.last[idx]["result"] = out.clone()
        return out
    return fut.then(after)
