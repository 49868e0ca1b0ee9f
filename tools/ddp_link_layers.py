#!/usr/bin/python3
"""tools/ddp_link_layers.py - a density per layer of the benchmark's CNN from measured error per byte.

    DQSGD_LIB=build/libdqsgd.so /usr/bin/python3 tools/ddp_link_layers.py [--data DIR] [--budget BYTES]

Trains python/train_ddp.py's CNN (seed 1) in this process for --steps SGD steps (batch 64, lr
0.05, momentum 0.9), then takes the gradient of one more minibatch and, for every parameter
tensor and every candidate density, encodes that tensor's gradient as the hook would send it
alone (a top-k message, values at --bits bits, nearest rounding, max-norm scales per 512 values,
the smallest index coder) and measures its size in bytes and its squared error. Prints each
layer's curve, then allocates greedily under --budget bytes: every layer starts at the lowest
density and the step that removes the most squared error per added byte is taken until the
budget is spent (the curves are convex enough here for the greedy steps to be the marginal
rule). The densities it prints are what doc/BYTES.md's per-layer runs use, rounded.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

DENSITIES = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def measure(g, bits):
    """[(density, bytes, squared error)] of g's top-k messages at the candidate densities."""
    import dqsgd
    out = [(0.0, 0, float(g.astype(np.float64) @ g))]  # nothing sent
    for dens in DENSITIES:
        k = max(1, int(round(dens * g.size)))
        m = dqsgd.encode(g, scheme="topk", k=k, bits=bits, rounding="nearest", norm="max", bucket=512)
        e = g - dqsgd.decode(m)
        out.append((dens, len(m), float(e.astype(np.float64) @ e)))
    return out


def allocate(curves, budget):
    """Greedy marginal allocation: {layer: index into its curve}."""
    at = {name: 1 for name in curves}  # the lowest density everywhere
    spent = sum(curves[n][1][1] for n in curves)
    while True:
        best = None
        for name, c in curves.items():
            i = at[name]
            if i + 1 < len(c):
                db, de = c[i + 1][1] - c[i][1], c[i][2] - c[i + 1][2]
                if db > 0 and spent + db <= budget and (best is None or de / db > best[0]):
                    best = (de / db, name, db)
        if best is None:
            return at, spent
        at[best[1]] += 1
        spent += best[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="build/fashion-mnist")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--bits", type=int, default=2)
    ap.add_argument("--budget", type=float, default=10000.0, help="bytes of all layers' messages (default 10000)")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from train_ddp import FMNIST_FILES, make_model, read_idx
    torch.set_num_threads(1)
    x = read_idx(args.data, FMNIST_FILES["train_x"])
    y = read_idx(args.data, FMNIST_FILES["train_y"])
    model = make_model(torch, "cnn", 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(1)
    for step in range(args.steps + 1):
        idx = rng.choice(len(y), 64, replace=False)
        opt.zero_grad()
        F.cross_entropy(model(torch.from_numpy(x[idx].astype(np.float32) / 255.0)),
                        torch.from_numpy(y[idx].astype(np.int64))).backward()
        if step < args.steps:
            opt.step()
    total = sum(float((p.grad.double() ** 2).sum()) for p in model.parameters())
    curves = {}
    print("layer, elements, then density: bytes / squared error as a share of the whole gradient's")
    for name, p in model.named_parameters():
        c = measure(p.grad.reshape(-1).numpy().copy(), args.bits)
        curves[name] = c
        print("%-10s %7d  %s" % (name, p.numel(), "  ".join("%g: %d / %.4f" % (d, b, e / total) for d, b, e in c[1:])))
    at, spent = allocate(curves, args.budget)
    err = sum(curves[n][i][2] for n, i in at.items()) / total
    print("\ngreedy allocation under %.0f bytes (%.0f spent, squared error %.4f of the gradient's):" % (
        args.budget, spent, err))
    for name, i in at.items():
        print("  %-10s density %g" % (name, curves[name][i][0]))
    for dens in (0.005, 0.01, 0.02):  # one density everywhere, for comparison
        i = DENSITIES.index(dens) + 1
        print("one density %g everywhere: %d bytes, squared error %.4f" % (
            dens, sum(c[i][1] for c in curves.values()), sum(c[i][2] for c in curves.values()) / total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
