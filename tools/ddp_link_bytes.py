#!/usr/bin/python3
"""tools/ddp_link_bytes.py - the bytes comparison of doc/BYTES.md: accuracy against bytes per step.

    tools/ddp_link_bytes.py OUT_DIR [--ref REF.csv] [--plot PNG] [--world W]

Reads OUT_DIR/runs.csv (python/train_ddp.py --out-dir, any number of runs per method and seed)
and, with --ref, summary rows measured elsewhere (columns method, label, seeds, bytes_med,
bytes_min, bytes_max, acc_med, acc_min, acc_max, source: a method already measured with the
same model, steps and seeds). Prints a markdown table, one row per method, sorted by bytes:
bytes per worker per step handed to the collectives (median over seeds, range), the hook's
own payload (its messages without the slots' room), the compression against float32 (4 bytes
per parameter), the final test accuracy (median, range), the seeds, and whether the median is
inside plain DDP's seed range (method none). With --plot, gnuplot draws the accuracy against
the bytes (log scale), a point per method at its medians with the ranges as error bars.
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from train_ddp import PRESETS  # noqa: E402  (the presets' specs, for their short names)

PLAIN = "none"


def load(out_dir, world):
    """{method: [run rows]} of the runs at this world size that finished."""
    runs = {}
    with open(os.path.join(out_dir, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if int(r["world"]) != world or r.get("error") or not r.get("test_acc"):
                continue
            runs.setdefault(r["method"], []).append(r)
    return runs


def describe(method, label):
    """A short name for a dqsgd spec with density (the table's and the plot's): density, values,
    per-layer densities, momentum correction; other methods keep their label."""
    spec = PRESETS.get(method, (method,))[0]
    spec = spec if spec.startswith("dqsgd:") else label if label.startswith("dqsgd:") else None
    if spec is None or "density=" not in spec:
        return label
    o = dict(item.partition("=")[::2] for item in spec.split(":")[1:])
    bits = o.get("bits", "4")
    parts = ["top-k %g%%" % (100 * float(o["density"])), "float32" if bits == "32" else
             "ternary" if bits == "1" else "%s-bit" % bits]
    if "conv_density" in o:
        parts.append("conv %g%%" % (100 * float(o["conv_density"])))
    layers = sorted(k[len("density@"):] + " %g%%" % (100 * float(v)) for k, v in o.items() if k.startswith("density@"))
    if layers:
        parts.append("per layer: " + ", ".join(layers))
    if float(o.get("momentum", 0)):
        parts.append("DGC")
    return ", ".join(parts)


def summary(method, rows, d):
    """One method's figures from its runs (the last run of each seed counts)."""
    by_seed = {}
    for r in rows:
        by_seed[int(r["seed"])] = r
    rs = [by_seed[s] for s in sorted(by_seed)]
    b = [float(r["bytes_step"]) for r in rs]
    a = [float(r["test_acc"]) for r in rs]
    p = [float(r["payload_step"]) for r in rs if r.get("payload_step") not in (None, "", "nan")]
    return {"method": method, "label": describe(method, rs[0]["label"]), "seeds": "/".join(str(s) for s in sorted(by_seed)),
            "bytes": (statistics.median(b), min(b), max(b)), "acc": (statistics.median(a), min(a), max(a)),
            "payload": (statistics.median(p), min(p), max(p)) if p else None, "d": d, "source": "this run",
            "per_seed": a}


def load_ref(path):
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out.append({"method": r["method"], "label": r["label"], "seeds": r["seeds"],
                        "bytes": tuple(float(r[k]) for k in ("bytes_med", "bytes_min", "bytes_max")),
                        "acc": tuple(float(r[k]) for k in ("acc_med", "acc_min", "acc_max")),
                        "payload": None, "source": r["source"]})
    return out


def spread(t, fmt):
    """median (min-max), each by fmt (a function)."""
    med, lo, hi = t
    return fmt(med) if lo == hi else "%s (%s-%s)" % (fmt(med), fmt(lo), fmt(hi))


def acc4(v):
    return "%.4f" % v


def count(v):
    return "{:,}".format(int(round(v)))


def table(rows, d):
    plain = next((r for r in rows if r["method"] == PLAIN), None)
    lines = ["| method | B/step (range) | payload B/step | x fp32 | test accuracy (range) | seeds "
             "| in plain DDP's range |", "|---|---:|---:|---:|---:|---|---|"]
    for r in sorted(rows, key=lambda r: -r["bytes"][0]):
        inside = "-" if plain is None or r is plain else (
            "yes" if plain["acc"][1] <= r["acc"][0] <= plain["acc"][2] else "above" if r["acc"][0] > plain["acc"][2]
            else "no")
        lines.append("| %s | %s | %s | %.0fx | %s | %s | %s |" % (
            r["label"], spread(r["bytes"], count), "-" if r["payload"] is None else spread(r["payload"], count),
            4.0 * d / r["bytes"][0], spread(r["acc"], acc4), r["seeds"], inside))
    return "\n".join(lines)


def plot(rows, path, title):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("ddp_link_bytes: gnuplot not found, no plot", file=sys.stderr)
        return
    data = "\n".join("%g %g %g %g %g %g \"%s\"" % (r["bytes"][0], r["acc"][0], r["bytes"][1], r["bytes"][2],
                                                   r["acc"][1], r["acc"][2], r["label"].replace('"', "'"))
                     for r in sorted(rows, key=lambda r: r["bytes"][0]))
    plain = next((r for r in rows if r["method"] == PLAIN), None)
    psgd4 = next((r for r in rows if r["method"] == "powersgd4"), None)
    cmds = ["set terminal pngcairo size 1100,700 font ',10'", "set output '%s'" % path,
            "set title '%s'" % title, "set logscale x", "set xrange [5000:1e7]", "set format x '%.0s%c'",
            "set xlabel 'bytes per worker per step handed to the collectives (log scale)'",
            "set ylabel 'test accuracy after 300 steps'", "set grid", "set key off", "$d << EOD", data, "EOD"]
    if plain is not None:
        cmds += ["set object 1 rect from graph 0, first %g to graph 1, first %g fc rgb '#dddddd' fs solid 0.5 "
                 "behind" % (plain["acc"][1], plain["acc"][2]),
                 "set label 1 \"plain DDP's seed range\" at graph 0.02, first %g" % (plain["acc"][2] + 0.002)]
    if psgd4 is not None:  # the target: a third of PowerSGD rank 4's bytes
        x = psgd4["bytes"][0] / 3.0
        cmds += ["set arrow 1 from first %g, graph 0 to first %g, graph 1 nohead dt 2 lc rgb '#aa0000'" % (x, x),
                 "set label 2 'a third of PowerSGD rank 4' at first %g, graph 0.9 right offset -0.5,0 "
                 "tc rgb '#aa0000'" % x]
    cmds += ["plot $d using 1:2:3:4:5:6 with xyerrorbars pt 7 ps 0.8 lc rgb '#1f77b4', "
             "$d using 1:2:7 with labels left offset 0.6,0.4 font ',8'"]
    subprocess.run([gnuplot], input="\n".join(cmds) + "\n", text=True, check=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--ref", help="summary rows measured elsewhere (CSV, see above)")
    ap.add_argument("--plot", help="write the gnuplot PNG here")
    ap.add_argument("--world", type=int, default=2)
    args = ap.parse_args(argv)
    runs = load(args.out_dir, args.world)
    d = int(next(iter(runs.values()))[0]["d"])
    rows = [summary(m, rs, d) for m, rs in runs.items()]
    if args.ref:
        have = {r["method"] for r in rows}
        rows += [r for r in load_ref(args.ref) if r["method"] not in have]
    print(table(rows, d))
    for r in rows:
        if r["source"] != "this run":
            print("%s: %s" % (r["label"], r["source"]))
    if args.plot:
        plot(rows, args.plot, "CNN on Fashion-MNIST (d = %d), DDP W = %d, 300 steps: medians over seeds, "
             "ranges as bars" % (d, args.world))
    return 0


if __name__ == "__main__":
    sys.exit(main())
