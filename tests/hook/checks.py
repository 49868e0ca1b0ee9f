"""tests/hook/checks.py - what the hook's test programs share: counting passed and failed checks,
a stand-in for DDP's GradBucket, a free local port."""

import socket
import traceback

import torch


class Checks:
    """Prints `ok` or `FAIL` per check and counts them."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print("  ok    %s" % name)
        else:
            self.failed += 1
            print("  FAIL  %s%s" % (name, (": " + detail) if detail else ""))

    def run(self, name, fn):
        """Run a test body; an exception is one failure."""
        try:
            fn()
        except Exception:  # noqa: BLE001
            self.check(name, False, traceback.format_exc().strip().splitlines()[-1])


class FakeBucket:
    """The part of dist.GradBucket the hook uses: the parameters' gradients as one buffer."""

    def __init__(self, idx, params, last):
        self.idx, self.params, self.last = idx, params, last
        self.buf = torch.cat([p.grad.reshape(-1) for p in params])

    def buffer(self):
        return self.buf

    def index(self):
        return self.idx

    def parameters(self):
        return self.params

    def is_last(self):
        return self.last


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
