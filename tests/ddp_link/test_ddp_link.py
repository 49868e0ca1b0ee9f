#!/usr/bin/python3
"""tests/ddp_link/test_ddp_link.py - the pure parts of `make ddp-link`, in a few seconds, without
training anything:
  - python/train_ddp.py: method names and dqsgd options (parse_method), the bytes the collective
    wrapper counts for each collective (tensor_bytes and COLLECTIVES' arguments), the run CSVs it
    writes (write_outputs), read back by the report;
  - tools/ddp_link_report.py: medians and ranges, time to target, plain DDP's target, the order
    of links, the summary table and the issue's target checks on made-up runs whose answers are
    known;
  - tools/ddp_link.sh: it refuses bad variables, and a user who is not root, before it creates
    anything (no network namespace appears); as root, with a fake trainer, a failed run and a
    Ctrl-C (SIGINT) leave no namespace and no trainer behind.
Prints `N passed, M failed`; the exit code is nonzero on any failure.
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "tools"))

import ddp_link_report as rep  # noqa: E402
import train_ddp as tr  # noqa: E402

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("  ok    %s" % name)
    else:
        failed += 1
        print("  FAIL  %s%s" % (name, (": " + repr(detail)) if detail != "" else ""))


def run(fn):
    try:
        fn()
    except Exception:  # noqa: BLE001
        check(fn.__name__, False, traceback.format_exc().strip().splitlines()[-1])


# ---------------------------------------------------------------- train_ddp.py
def test_methods():
    import dqsgd
    m = tr.parse_method("dq2ef")
    check("preset dq2ef: 2 bits with error feedback", m["kind"] == "dqsgd" and m["options"] == {
        "bits": 2, "error_feedback": True}, m)
    m = tr.parse_method("dqsgd:bits=3:pattern=sra:rounding=nearest:norm=max:bucket_size=32768:budget_frac=0.5")
    check("dqsgd options: ints, names, rounding and norm constants, floats", m["options"] == {
        "bits": 3, "pattern": "sra", "rounding": dqsgd.ROUND_NEAREST, "norm": dqsgd.NORM_MAX,
        "bucket_size": 32768, "budget_frac": 0.5}, m["options"])
    check("plain dqsgd: no options", tr.parse_method("dqsgd")["options"] == {})
    m = tr.parse_method("powersgd4")
    check("powersgd4: rank 4, one bucket in its label", m["kind"] == "powersgd" and m["rank"] == 4 and
          "one bucket" in m["label"], m)
    check("none and fp16", [tr.parse_method(x)["kind"] for x in ("none", "fp16")] == ["none", "fp16"])
    for bad in ("bogus", "dqsgd:bits", "dqsgd:=4", "dqsgd:rounding=up", "powersgd", "dqsgdx"):
        try:
            tr.parse_method(bad)
            check("refused: %s" % bad, False, "accepted")
        except ValueError:
            check("refused: %s" % bad, True)
    for name in tr.PRESETS:
        check("preset %s parses" % name, tr.parse_method(name)["kind"] == "dqsgd")


class FakeTensor:
    def __init__(self, n, size):
        self.n, self.size = n, size

    def numel(self):
        return self.n

    def element_size(self):
        return self.size


def test_meter():
    """The wrapper counts what the caller hands over: a list's sum, a root's tensor only at the
    root. A fake module stands for torch.distributed."""
    import inspect

    class FakeDist:
        pass
    calls = []
    fake = FakeDist()

    def all_reduce(tensor, op=None, group=None, async_op=False):
        calls.append("all_reduce")

    def all_gather(tensor_list, tensor, group=None, async_op=False):
        calls.append("all_gather")

    def broadcast(tensor, src, group=None, async_op=False):
        calls.append("broadcast")

    def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                          async_op=False):
        calls.append("all_to_all_single")
    for f in (all_reduce, all_gather, broadcast, all_to_all_single):
        setattr(fake, f.__name__, f)
    meter = tr.CollectiveMeter(fake, rank=1)
    check("meter: wrapped functions keep their signatures' parameters",
          list(inspect.signature(all_gather).parameters)[:2] == ["tensor_list", "tensor"])
    fake.all_reduce(FakeTensor(10, 4))  # off: not counted
    check("meter: nothing counted while off", meter.take() == (0, 0) and calls == ["all_reduce"])
    meter.on = True
    fake.all_reduce(FakeTensor(10, 4))
    fake.all_gather([FakeTensor(7, 1)] * 2, FakeTensor(7, 1))
    fake.broadcast(FakeTensor(5, 8), 0)           # rank 1 is not the source
    fake.broadcast(tensor=FakeTensor(3, 8), src=1)
    fake.all_to_all_single(FakeTensor(9, 1), FakeTensor(6, 1), [3, 3], [2, 4])
    got = meter.take()
    check("meter: 40 + 7 + 0 + 24 + 6 bytes in 5 calls", got == (77, 5), got)
    check("meter: take() resets", meter.take() == (0, 0))
    check("tensor_bytes of a list", tr.tensor_bytes([FakeTensor(3, 4), FakeTensor(2, 2)]) == 16)


def fake_run(world, link, seed, method, ms, acc_curve, test_acc, order=0, timers="", hook_ms=float("nan"),
             error=None, steps=60):
    r = {"world": world, "link": link, "seed": seed, "method": method, "label": tr.parse_method(method)["label"],
         "model": "cnn", "d": 582026, "steps": steps, "steps_done": steps, "ms_step": ms, "ms_backward": ms / 2,
         "ms_hook_call": hook_ms, "bytes_step": 1000.0, "calls_step": 2.0, "wire_bytes_step": 1100.0,
         "train_s": acc_curve[-1][0], "test_acc": test_acc, "test_loss": 0.5, "buckets": 2,
         "hook_timers": timers, "replicas_identical": True, "other_load": 0.1, "load1": 2.0,
         "curve": [(20 * i, t, a) for i, (t, a) in enumerate(acc_curve)]}
    if error:
        r["error"] = error
    return r


def made_up_runs():
    """W = 2, links unshaped and 100mbit, seeds 1 and 2. Plain DDP ends at subset accuracy 0.80
    (seed 1) and 0.82 (seed 2): the target is 0.80. At 100mbit dq4 reaches it at 3 s, plain at
    30 s, fp16 at 15 s, PowerSGD rank 4 at 5 s: dq4 meets the target there; dq2ef is faster but
    less accurate; dqshared never reaches it on seed 2."""
    runs = []
    for seed, end in ((1, 0.80), (2, 0.82)):
        for link, slow in (("unshaped", 1), ("100mbit", 10)):
            runs.append(fake_run(2, link, seed, "none", 100 * slow, [(0, 0.1), (1.5 * slow, 0.6), (3 * slow, end)],
                                 0.84))
            runs.append(fake_run(2, link, seed, "fp16", 60 * slow, [(0, 0.1), (0.8 * slow, 0.6), (1.5 * slow, end)],
                                 0.84))
            runs.append(fake_run(2, link, seed, "powersgd4", 105, [(0, 0.1), (2.5, 0.6), (5.0, 0.81)], 0.83))
            runs.append(fake_run(2, link, seed, "dq4", 108, [(0, 0.1), (1.5, 0.79), (3.0, 0.805)], 0.84,
                                 timers="encode=1.000 comm=2.000 decode=0.500", hook_ms=0.4 * slow))
            runs.append(fake_run(2, link, seed, "dq2ef", 90, [(0, 0.1), (1.0, 0.81), (2.0, 0.70)], 0.70,
                                 timers="block=0.500 encode=1.000 comm=2.000 decode=0.500", hook_ms=0.9))
            runs.append(fake_run(2, link, seed, "dqshared", 120, [(0, 0.1), (2.0, 0.81 if seed == 1 else 0.7),
                                                                   (4.0, 0.79)], 0.84, hook_ms=2.0))
    runs.append(fake_run(2, "100mbit", 3, "dqauto", 100, [(0, 0.1), (1.0, 0.2)], 0.1, error="diverged"))
    return runs


def test_report_parts():
    check("spread: median, min, max, Nones left out", rep.spread([3, None, 1, 2]) == (2, 1, 3))
    check("spread of nothing", rep.spread([None]) is None)
    got = rep.fmt_spread([10.0, 12.0, 11.0])
    check("fmt_spread: range", got == "11.0 (10.0-12.0)", got)
    check("fmt_spread: one value", rep.fmt_spread([2.25], "%.2f") == "2.25")
    check("fmt_spread: none", rep.fmt_spread([]) == "-")
    curve = [(0, 0.0, 0.1), (20, 1.0, 0.79), (40, 2.0, 0.80), (60, 3.0, 0.9)]
    check("time to target: the first point at or above it", rep.time_to_target(curve, 0.80) == 2.0)
    check("time to target: not reached", rep.time_to_target(curve, 0.95) is None)
    runs = made_up_runs()
    check("plain target: lowest final subset accuracy of method none", rep.plain_target(runs, 2) == 0.80)
    check("plain target: none at another W", rep.plain_target(runs, 4) is None)
    check("links: unshaped, then fast to slow", rep.link_order(["100mbit", "unshaped", "1gbit", "500kbit"]) ==
          ["unshaped", "1gbit", "100mbit", "500kbit"])
    check("links printed", [rep.pretty_link(x) for x in ("unshaped", "1gbit", "100mbit")] ==
          ["unshaped", "1 Gbit/s", "100 Mbit/s"])
    check("spread: NaN left out", rep.spread([float("nan"), 2.0]) == (2.0, 2.0, 2.0))
    check("timers parsed", rep.parse_timers("encode=1.5 comm=x decode=0.25") == {"encode": 1.5, "decode": 0.25})


def test_summary():
    runs = made_up_runs()
    text, checks = rep.summarize(runs, 2)
    check("target met at 100mbit by dq4 alone (dq2ef too inaccurate, dqshared slower, dqauto stopped)",
          checks["links"] == {"100mbit": ["dq4"]}, checks["links"])
    check("blocking: worst link's median hook call, or the hook's block timer where it has one",
          checks["blocking"]["dq4"] == 4.0 and checks["blocking"]["dq2ef"] == 0.5, checks["blocking"])
    over = checks["unshaped_overhead"]
    check("unshaped overhead: dq4 +8%, dqshared +20%", abs(over["dq4"] - 0.08) < 1e-9 and
          abs(over["dqshared"] - 0.20) < 1e-9, over)
    check("summary: plain DDP's ms/step per link", "| plain DDP (fp32 allreduce) | 100.0 | 1000.0 |" in text, text)
    check("summary: a seed that missed the target", "(1/2)" in text)
    check("summary: stopped runs counted", "(1 stopped)" in text)
    check("summary: the verdict lines", "- 100 Mbit/s: met by dq4" in text and "dq4 4.00 ms (call) no;" in text and
          "dq2ef 0.50 ms (block) yes, 0.90 ms inside its calls" in text and "dq4 +8% yes" in text, text)
    text, checks = rep.summarize(runs, 2, target=0.7)
    check("a given target: dq2ef reaches it first, but stays too inaccurate",
          "dq2ef" not in checks["links"]["100mbit"] and "0.7000 (given)" in text, checks)


def test_csv_round_trip():
    with tempfile.TemporaryDirectory() as tmp:
        runs = made_up_runs()
        for r in runs:  # what worker() hands to write_outputs: curves as [step, train_s, acc, loss]
            r["curve"] = [list(p) + [0.5] for p in r["curve"]]
        tr.write_outputs(runs[:7], tmp)
        tr.write_outputs(runs[7:], tmp)  # a second invocation appends
        back = rep.load_runs(tmp)
        check("runs.csv: every run once", len(back) == len(runs), len(back))
        check("runs.csv: numbers and curves survive", back[3]["ms_step"] == runs[3]["ms_step"] and
              back[3]["curve"] == [tuple(p[:3]) for p in runs[3]["curve"]], back[3])
        check("runs.csv: the stopped run is marked", [rep.stopped(r) for r in back].count(True) == 1)
        text_a, _ = rep.summarize(back, 2)
        for r in runs:
            r["curve"] = [tuple(p[:3]) for p in r["curve"]]
        text_b, _ = rep.summarize(runs, 2)
        check("summary from the CSVs equals the summary of the runs", text_a == text_b)
        with contextlib.redirect_stdout(io.StringIO()):
            rc = rep.main([tmp, "--no-plot"])
        check("report: summary-W2.md written", rc == 0 and os.path.exists(os.path.join(tmp, "summary-W2.md")))


# ---------------------------------------------------------------- tools/ddp_link.sh
def script(env_extra, as_nobody=False):
    # HOOK_PY=false: should a check be missing, the script stops at its train_ddp.py --check
    # (exit 2, another message) instead of training
    env = dict(os.environ, HOOK_PY="false", **env_extra)
    cmd = ["sh", os.path.join(REPO, "tools", "ddp_link.sh")]
    if as_nobody:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def namespaces():
    try:
        return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def test_script_checks():
    before = namespaces()
    for var, value, says in (("STEPS", "1", "STEPS=1"), ("STEPS", "ten", "STEPS=ten"),
                             ("WORLDS", "2 9", "9 is not 2..8"), ("WORLDS", "1", "1 is not 2..8"),
                             ("RATES", "100mb", "100mb is not"), ("RATES", "0mbit", "0mbit is not"),
                             ("SEEDS", "-1", "-1 is not"), ("METHODS", " ", "METHODS is empty")):
        rc, out = script({var: value, "BUILD": "/nonexistent"})
        check("ddp_link.sh refuses %s=%r" % (var, value), rc == 2 and says in out, (rc, out))
    if os.getuid() != 0:
        rc, out = script({"BUILD": "/nonexistent"})
        check("ddp_link.sh stops when not root", rc == 2 and "needs root" in out, (rc, out))
    elif subprocess.run(["sh", "-c", "command -v setpriv"], capture_output=True).returncode == 0:
        rc, out = script({"BUILD": "/nonexistent"}, as_nobody=True)
        check("ddp_link.sh stops when not root (run as nobody)", rc == 2 and "needs root" in out, (rc, out))
    check("no network namespace left behind", namespaces() == before)


FAKE_TRAINER = """#!/bin/sh
# stands for python3 in tools/ddp_link.sh: answers its checks, then fails or waits like a long run
case "$1 $2" in
    -c*) echo fake; exit 0;;
    *train_ddp.py*) case "$*" in *--check*) exit 0;; esac;;
esac
echo $$ > "$FAKE_PIDFILE"
[ "$FAKE_MODE" = fail ] && exit 3
exec sleep 60
"""


def test_script_cleanup():
    """As root, with a fake trainer: a failed run and a Ctrl-C both leave no namespace and no
    process behind."""
    import signal
    import time
    if os.getuid() != 0 or subprocess.run(["sh", "-c", "command -v ip && command -v tc"],
                                          capture_output=True).returncode != 0:
        print("  skip  ddp_link.sh cleanup (needs root, ip and tc)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        fake, pidfile = os.path.join(tmp, "python"), os.path.join(tmp, "pid")
        with open(fake, "w") as f:
            f.write(FAKE_TRAINER)
        os.chmod(fake, 0o755)
        env = dict(os.environ, HOOK_PY=fake, FAKE_PIDFILE=pidfile, OUT=os.path.join(tmp, "out"), QUICK="1",
                   METHODS="none")
        cmd = ["sh", os.path.join(REPO, "tools", "ddp_link.sh")]
        before = namespaces()

        p = subprocess.run(cmd, cwd=REPO, env=dict(env, FAKE_MODE="fail"), capture_output=True, text=True,
                           timeout=60)
        check("ddp_link.sh: a failed run exits 1 and says so", p.returncode == 1 and "failed (exit 3)" in p.stderr,
              (p.returncode, p.stdout + p.stderr))
        check("ddp_link.sh: no namespace left after a failure", namespaces() == before)

        os.remove(pidfile)
        p = subprocess.Popen(cmd, cwd=REPO, env=dict(env, FAKE_MODE="wait"), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        for _ in range(200):  # the fake trainer runs inside the namespace
            if os.path.exists(pidfile) and os.path.getsize(pidfile):
                break
            time.sleep(0.05)
        inside = namespaces() != before
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        trainer = int(open(pidfile).read())
        time.sleep(0.2)
        gone = not os.path.exists("/proc/%d" % trainer) or open("/proc/%d/stat" % trainer).read().split()[2] == "Z"
        check("ddp_link.sh: Ctrl-C exits 130 and deletes the namespace", inside and p.returncode == 130 and
              "deleted" in out and namespaces() == before, (inside, p.returncode, out))
        check("ddp_link.sh: Ctrl-C stops the trainer", gone)


for t in (test_methods, test_meter, test_report_parts, test_summary, test_csv_round_trip, test_script_checks,
          test_script_cleanup):
    run(t)
print("%d passed, %d failed (ddp-link harness)" % (passed, failed))
sys.exit(1 if failed else 0)
