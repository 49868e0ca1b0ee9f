#!/usr/bin/python3
"""tools/ddp_link_report.py - the tables and the plot of `make ddp-link` from its runs.

    tools/ddp_link_report.py OUT_DIR [--target ACC] [--no-plot]

Reads OUT_DIR/runs.csv and OUT_DIR/curves/*.csv (python/train_ddp.py --out-dir) and writes, per
world size W, OUT_DIR/summary-W<W>.md (also printed), and OUT_DIR/ddp-link.png (gnuplot: test
accuracy against training seconds, a row of panels per W, a panel per link). Every figure is the
median over seeds with the range (min-max) in brackets; a run that stopped (diverged) counts
in no figure but the accuracy ("stopped").

Time to target: the training seconds (evaluation excluded) at the first evaluation where the
accuracy on the curve's test subset reaches the target: --target, else, per W, the lowest final
subset accuracy of plain DDP's runs (method none) at that W, i.e. plain DDP's final accuracy
within its seed spread. The subset is evaluated every --eval-every steps, so the time is that
of the evaluation point, not of the exact step.

Pure Python (no numpy): tests/ddp_link/test_ddp_link.py checks it on made-up runs.
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys

PLAIN, FP16, PSGD4 = "none", "fp16", "powersgd4"
FLOATS = ("ms_step", "ms_backward", "ms_hook_call", "bytes_step", "calls_step", "wire_bytes_step", "train_s",
          "test_acc", "test_loss", "other_load", "load1")
INTS = ("world", "seed", "d", "steps", "steps_done", "order", "buckets")


def number(text, cast):
    try:
        v = cast(text)
    except (TypeError, ValueError):
        return None
    return None if v != v else v  # NaN: not measured


def load_runs(out_dir):
    """The rows of runs.csv, typed, each with its curve [(step, train_s, subset_acc)]."""
    with open(os.path.join(out_dir, "runs.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in FLOATS:
            r[k] = number(r.get(k), float)
        for k in INTS:
            r[k] = number(r.get(k), int)
        r["curve"] = []
        path = os.path.join(out_dir, r["curve_file"]) if r.get("curve_file") else None
        if path and os.path.exists(path):
            with open(path, newline="") as f:
                r["curve"] = [(int(c["step"]), float(c["train_s"]), float(c["subset_acc"])) for c in csv.DictReader(f)]
    return rows


def stopped(r):
    """The run stopped early (the hook raised: the gradient held NaN or Inf)."""
    return bool(r.get("error"))


def spread(values):
    """(median, min, max) of the values that are not None or NaN, or None."""
    v = [x for x in values if x is not None and x == x]
    return (statistics.median(v), min(v), max(v)) if v else None


def fmt_spread(values, fmt="%.1f"):
    """'median (min-max)', just the value for one run or equal runs, '-' for none."""
    s = spread(values)
    if s is None:
        return "-"
    m, lo, hi = s
    if fmt % lo == fmt % hi:
        return fmt % m
    return "%s (%s-%s)" % (fmt % m, fmt % lo, fmt % hi)


def time_to_target(curve, target):
    """Training seconds at the first curve point whose accuracy reaches target, or None."""
    for _, t, acc in curve:
        if acc >= target:
            return t
    return None


def final_subset_acc(r):
    return r["curve"][-1][2] if r["curve"] and not stopped(r) else None


def plain_target(runs, world):
    """The lowest final subset accuracy of plain DDP at this W (None without such runs)."""
    v = [final_subset_acc(r) for r in runs if r["world"] == world and r["method"] == PLAIN]
    v = [x for x in v if x is not None]
    return min(v) if v else None


def ordered(values):
    """Distinct values in first-seen order."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def link_order(links):
    """unshaped first, then the rates from fast to slow."""
    scale = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}

    def key(link):
        for unit, mult in scale.items():
            if link.endswith(unit) and link[: -len(unit)].isdigit():
                return -int(link[: -len(unit)]) * mult
        return float("-inf")
    return sorted(links, key=key)


def pretty_link(link):
    """100mbit -> 100 Mbit/s; unshaped stays."""
    for unit, name in (("kbit", "kbit/s"), ("mbit", "Mbit/s"), ("gbit", "Gbit/s")):
        if link.endswith(unit):
            return "%s %s" % (link[: -len(unit)], name)
    return link


def parse_timers(text):
    """'encode=1.0 comm=2.5' -> {'encode': 1.0, 'comm': 2.5}."""
    out = {}
    for item in (text or "").split():
        k, _, v = item.partition("=")
        if number(v, float) is not None:
            out[k] = float(v)
    return out


def md_table(header, rows):
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"
    lines = ["| " + " | ".join(header) + " |", rule]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def is_dqsgd(method):
    return method.startswith("dq")


def summarize(runs, world, target=None):
    """The markdown summary for one W, and a dict of the issue's target checks."""
    rs = [r for r in runs if r["world"] == world]
    methods = ordered(r["method"] for r in runs)  # runs.csv's first run: METHODS' order
    methods = [m for m in methods if any(r["method"] == m for r in rs)]
    links = link_order(ordered(r["link"] for r in rs))
    seeds = ordered(r["seed"] for r in rs)
    label = {r["method"]: r["label"] for r in rs}
    cell = {}
    for r in rs:
        cell.setdefault((r["method"], r["link"]), []).append(r)
    tgt = target if target is not None else plain_target(runs, world)
    ttt = {key: [time_to_target(r["curve"], tgt) if tgt is not None and not stopped(r) else None for r in v]
           for key, v in cell.items()}

    def col(m, link, k, fmt="%.1f"):
        return fmt_spread([r[k] for r in cell.get((m, link), []) if not stopped(r)], fmt)

    def ttt_cell(m, link):
        v = ttt.get((m, link), [])
        reached = [x for x in v if x is not None]
        if not v:
            return "-"
        if not reached:
            return "not reached (0/%d)" % len(v)
        s = fmt_spread(reached)
        return s if len(reached) == len(v) else "%s (%d/%d)" % (s, len(reached), len(v))

    out = []
    steps = ordered(r["steps"] for r in rs)
    out.append("### W = %d: %d seed(s) (%s), %s steps\n" % (world, len(seeds), ", ".join(map(str, seeds)),
                                                           "/".join(map(str, steps))))
    tgt_text = ("%.4f (%s)" % (tgt, "given" if target is not None else "plain DDP's lowest final subset accuracy")
                if tgt is not None else "none (no plain DDP runs and no --target)")
    out.append("Median ms/step after the warm-up steps, and training seconds to the target accuracy %s:\n" % tgt_text)
    hdr = (["method"] + ["ms/step %s" % pretty_link(l) for l in links] +
           ["s to target %s" % pretty_link(l) for l in links])
    out.append(md_table(hdr, [[label[m]] + [col(m, l, "ms_step") for l in links] + [ttt_cell(m, l) for l in links]
                              for m in methods]))
    out.append("\nBytes per worker per step (handed to collectives; on the wire, TCP/IP included), "
               "final test accuracy (10000 images, all links), time inside the hook calls per step:\n")
    hdr = (["method", "B/step", "wire B/step", "test acc", "buckets"] +
           ["hook call ms %s" % pretty_link(l) for l in links])
    rows = []
    for m in methods:
        mine = [r for r in rs if r["method"] == m]
        ok = [r for r in mine if not stopped(r)]
        n_stopped = len(mine) - len(ok)
        acc = fmt_spread([r["test_acc"] for r in ok], "%.4f") + (" (%d stopped)" % n_stopped if n_stopped else "")
        rows.append([label[m], fmt_spread([r["bytes_step"] for r in ok], "%.0f"),
                     fmt_spread([r["wire_bytes_step"] for r in ok], "%.0f"), acc,
                     fmt_spread([r["buckets"] for r in mine], "%d")] +
                    [col(m, l, "ms_hook_call", "%.2f") for l in links])
    out.append(md_table(hdr, rows))
    timers = ordered(k for r in rs for k in parse_timers(r.get("hook_timers")))
    if timers:
        out.append("\nThe dqsgd hook's own timers (state.summary(), ms per compressed step) and backward ms:\n")
        hdr = ["method", "link"] + timers + ["backward ms"]
        rows = []
        for m in methods:
            for l in links:
                runs_ml = [r for r in cell.get((m, l), []) if not stopped(r) and r.get("hook_timers")]
                if runs_ml:
                    timer_cells = [fmt_spread([parse_timers(r["hook_timers"]).get(k) for r in runs_ml], "%.2f")
                                   for k in timers]
                    backward = fmt_spread([r["ms_backward"] for r in runs_ml])
                    rows.append([label[m], pretty_link(l)] + timer_cells + [backward])
        out.append(md_table(hdr, rows))
    loads = spread([r["other_load"] for r in rs])
    if loads:
        out.append("\nOther load during the runs (CPU cores busy with other processes): median %.2f, "
                   "range %.2f-%.2f." % loads)

    # the target
    checks = {"world": world, "links": {}}
    plain_acc = spread([r["test_acc"] for r in rs if r["method"] == PLAIN and not stopped(r)])
    # a seed that never reached the target counts as infinitely slow
    med = {key: statistics.median(float("inf") if x is None else x for x in v) for key, v in ttt.items() if v}
    lines = []
    for l in links:
        if not l.endswith("bit"):  # unshaped (or a run outside tools/ddp_link.sh)
            continue
        rivals = {m: med.get((m, l)) for m in (PLAIN, FP16, PSGD4)}
        winners = []
        for m in methods:
            if not is_dqsgd(m) or med.get((m, l)) is None or plain_acc is None:
                continue
            acc = spread([r["test_acc"] for r in rs if r["method"] == m and not stopped(r)])
            if acc is None or acc[0] < plain_acc[1]:
                continue
            if all(v is not None and med[(m, l)] < v for v in rivals.values()):
                winners.append(m)
        checks["links"][l] = winners
        missing = [m for m, v in rivals.items() if v is None]
        lines.append("- %s: %s" % (pretty_link(l), ("met by " + ", ".join(winners)) if winners else "not met" +
                                   (" (no time to target for %s)" % ", ".join(missing) if missing else "")))
    # blocking: the hook's own block timer (waits inside its calls) where it has one, else all
    # the time inside its calls; that time is shown beside it (the backward pass stalls for it)
    blocking, what, inside = {}, {}, {}
    for m in methods:
        per_link, calls = [], []
        for l in links:
            ok = [r for r in cell.get((m, l), []) if not stopped(r)]
            block = spread([parse_timers(r.get("hook_timers")).get("block") for r in ok])
            call = spread([r["ms_hook_call"] for r in ok])
            per_link.append((block, "block") if block else (call, "call"))
            calls.append(call)
        if is_dqsgd(m) and any(v for v, _ in per_link):
            blocking[m] = max(v[0] for v, _ in per_link if v)
            what[m] = "/".join(ordered(w for v, w in per_link if v))
            inside[m] = max(c[0] for c in calls if c) if any(calls) else None
    checks["blocking"] = blocking

    def blocking_text(m):
        text = "%s %.2f ms (%s) %s" % (m, blocking[m], what[m], "yes" if blocking[m] <= 1.0 else "no")
        return text + ("" if what[m] == "call" or inside[m] is None else ", %.2f ms inside its calls" % inside[m])
    lines.append("- the hook blocks at most 1 ms a step (median of its block timer, else of the time inside its "
                 "calls; worst link): " + "; ".join(blocking_text(m) for m in blocking))
    if "unshaped" in links:
        base = spread([r["ms_step"] for r in cell.get((PLAIN, "unshaped"), []) if not stopped(r)])
        over = {m: spread([r["ms_step"] for r in cell.get((m, "unshaped"), []) if not stopped(r)])
                for m in methods if is_dqsgd(m)}
        over = {m: v[0] / base[0] - 1 for m, v in over.items() if v and base}
        checks["unshaped_overhead"] = over
        lines.append("- unshaped, at most 10% more per step than plain DDP (median ms/step): " +
                     ", ".join("%s %+.0f%% %s" % (m, 100 * v, "yes" if v <= 0.10 else "no") for m, v in over.items()))
    out.append("\nThe issue's target at W = %d (a dqsgd method with a median final accuracy at least plain DDP's "
               "lowest, and a median time to target below plain DDP's, fp16's and PowerSGD rank 4's):\n" % world)
    out.append("\n".join(lines))
    return "\n".join(out) + "\n", checks


def median_curve(runs):
    """Per evaluation step, the median training seconds and subset accuracy over the runs."""
    by_step = {}
    for r in runs:
        for step, t, acc in r["curve"]:
            by_step.setdefault(step, []).append((t, acc))
    return [(s, statistics.median(t for t, _ in v), statistics.median(a for _, a in v))
            for s, v in sorted(by_step.items()) if len(v) == len(runs)]


def plot(runs, out_dir, targets):
    """ddp-link.png: a row per W, a panel per link, a line per method (median over seeds)."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("ddp-link report: gnuplot not found, no plot", file=sys.stderr)
        return None
    worlds = ordered(r["world"] for r in runs)
    links = link_order(ordered(r["link"] for r in runs))
    methods = ordered(r["method"] for r in runs)
    label = {r["method"]: r["label"] for r in runs}
    data = os.path.join(out_dir, "plot")
    os.makedirs(data, exist_ok=True)
    png = os.path.join(out_dir, "ddp-link.png")
    cmds = ["set terminal pngcairo size %d,%d font ',10'" % (520 * len(links), 400 * len(worlds)),
            "set output '%s'" % png, "set grid", "set key bottom right font ',8'",
            "set xlabel 'training seconds (evaluation excluded)'", "set ylabel 'test accuracy (subset)'",
            "set multiplot layout %d,%d title 'accuracy on the test subset against training seconds, "
            "median over seeds'" % (len(worlds), len(links))]
    for w in worlds:
        for l in links:
            parts = []
            for i, m in enumerate(methods):
                rs = [r for r in runs if r["world"] == w and r["link"] == l and r["method"] == m and not stopped(r)]
                pts = median_curve(rs) if rs else []
                if not pts:
                    continue
                path = os.path.join(data, "W%d-%s-%s.dat" % (w, l, m.replace(":", "_").replace("=", "-")))
                with open(path, "w") as f:
                    f.writelines("%d %.4f %.4f\n" % p for p in pts)
                parts.append("'%s' using 2:3 with linespoints lw 2 pt %d ps 0.6 title '%s'" % (
                    path, 1 + i % 13, label[m].replace("'", "")))
            title = "W = %d, %s" % (w, pretty_link(l))
            cmds.append("set title '%s'" % title)
            cmds.append("unset arrow")
            if targets.get(w) is not None:
                cmds.append("set arrow from graph 0, first %.4f to graph 1, first %.4f nohead dt 3 lc rgb 'gray40'" % (
                    targets[w], targets[w]))
            cmds.append("plot " + ", ".join(parts) if parts else "plot 0 notitle")
    cmds.append("unset multiplot")
    subprocess.run([gnuplot], input="\n".join(cmds) + "\n", text=True, check=True)
    return png


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--target", type=float, help="the target accuracy (default: plain DDP's, per W)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    runs = load_runs(args.out_dir)
    if not runs:
        print("ddp-link report: no runs in %s" % args.out_dir, file=sys.stderr)
        return 1
    targets = {}
    for w in ordered(r["world"] for r in runs):
        text, _ = summarize(runs, w, args.target)
        targets[w] = args.target if args.target is not None else plain_target(runs, w)
        path = os.path.join(args.out_dir, "summary-W%d.md" % w)
        with open(path, "w") as f:
            f.write(text)
        print(text)
        print("(%s)\n" % path)
    if not args.no_plot:
        png = plot(runs, args.out_dir, targets)
        if png:
            print("plot: %s" % png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
