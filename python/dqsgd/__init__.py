"""dqsgd.py - a small ctypes binding of dqsgd (the header-only C library) for Python.

The shared object is python/dqsgd_capi.c built by `make build/libdqsgd.so` (or by setup.py
when the package is installed): dqsgd.h with every public function exported. It is found
through the environment variable DQSGD_LIB, else next to this file (an installed package),
else at build/libdqsgd.so in the repository this file lives in. At load the binding checks that its
ctypes mirrors of dq_params, dq_header, dq_sched_params and the fields of dq_sched it reads
have the offsets and sizes the C compiler gave them (LayoutError otherwise).

    import numpy as np, dqsgd
    g = np.random.default_rng(0).standard_normal(10000).astype(np.float32)
    msg = dqsgd.encode(g, bits=4, seed=42, step=0, stream=rank)      # np.uint8 array
    h = dqsgd.header_read(msg)                                        # h.count, h.msg_size, ...
    acc = np.zeros(h.count, np.float32)
    dqsgd.decode_add(msg, 1.0 / workers, acc)                         # acc += w * decoded

Inputs may be numpy arrays or torch tensors: float32, C-contiguous, on the CPU (torch
tensors are used in place through data_ptr(), never copied). Errors raise DQError carrying
the dq_status and dq_strerror's text. Messages are returned as np.uint8 arrays; any object
with the buffer protocol (bytes, bytearray, numpy, a uint8 torch tensor) is accepted back.
"""

import ctypes
import os

import numpy as np

__all__ = [
    "DQError", "LayoutError", "Params", "Header", "SchedParams", "Schedule", "lib", "strerror",
    "encode", "encode_capacity", "encode_bound", "range_align", "header_read", "decode", "decode_add", "Message", "message_bits",
    "message_norm2", "simd_backend", "version_number", "check_layout",
    "shared_width", "shared_buckets", "shared_exponents", "shared_encode", "shared_decode",
]

# ---------------------------------------------------------------- constants (dqsgd.h)
OK = 0
ERR_INFEASIBLE = -15
SCHEME_QSGD = 1
ROUND_STOCHASTIC, ROUND_NEAREST = 1, 2
NORM_L2, NORM_MAX = 1, 2
# coder ids on the wire (Header.coder); CODER_RANS8 is the first rANS layout, read only
CODER_FIXED, CODER_ELIAS, CODER_RANS8, CODER_RANS, CODER_AUTO = 0, 1, 2, 3, 255
# params only: the default (AUTO from CODER_AUTO_MIN elements, fixed below), the fixed layout
CODER_DEFAULT, CODER_FIXED_ONLY, CODER_AUTO_MIN = 0, 254, 4096
BUCKET_DEFAULT = 512
BUCKET_WHOLE = 0xFFFFFFFF
SCHED_DQSGD, SCHED_FIXED, SCHED_INCREASING, SCHED_DECREASING = 1, 2, 3, 4
_SCHED_MODES = {"dqsgd": SCHED_DQSGD, "fixed": SCHED_FIXED, "increasing": SCHED_INCREASING,
                "decreasing": SCHED_DECREASING}

_c_enum = ctypes.c_int  # the C enums here are int-sized (checked by check_layout)


class Params(ctypes.Structure):
    """dq_params, field for field (zero means the default)."""
    _fields_ = [
        ("bits", ctypes.c_uint),
        ("bucket", ctypes.c_uint32),
        ("scheme", _c_enum),
        ("rounding", _c_enum),
        ("norm", _c_enum),
        ("seed", ctypes.c_uint64),
        ("step", ctypes.c_uint64),
        ("stream", ctypes.c_uint32),
        ("checksum", ctypes.c_uint),
        ("coder", ctypes.c_uint),
        ("alpha", ctypes.c_float),
        ("levels", ctypes.POINTER(ctypes.c_float)),
        ("k", ctypes.c_size_t),
        ("threshold", ctypes.c_float),
        ("unbiased", ctypes.c_uint),
        ("index_coder", ctypes.c_uint),
    ]


class Header(ctypes.Structure):
    """dq_header: a parsed, validated message header."""
    _fields_ = [
        ("version", ctypes.c_uint),
        ("header_size", ctypes.c_uint),
        ("scheme", ctypes.c_uint),
        ("bits", ctypes.c_uint),
        ("coder", ctypes.c_uint),
        ("flags", ctypes.c_uint),
        ("norm", _c_enum),
        ("bucket", ctypes.c_uint32),
        ("seed", ctypes.c_uint64),
        ("step", ctypes.c_uint64),
        ("stream", ctypes.c_uint32),
        ("count", ctypes.c_size_t),
        ("msg_size", ctypes.c_size_t),
        ("payload_size", ctypes.c_size_t),
        ("nnz", ctypes.c_size_t),
        ("segments", ctypes.c_size_t),
    ]

    def __repr__(self):
        return "Header(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f, _ in self._fields_)


class SchedParams(ctypes.Structure):
    """dq_sched_params."""
    _fields_ = [
        ("mode", _c_enum),
        ("steps", ctypes.c_uint64),
        ("dim", ctypes.c_size_t),
        ("bucket", ctypes.c_uint32),
        ("alpha", ctypes.c_double),
        ("bits_min", ctypes.c_uint),
        ("bits_max", ctypes.c_uint),
        ("period", ctypes.c_uint),
        ("window", ctypes.c_uint),
        ("norm_prior", ctypes.c_double),
        ("scale", ctypes.c_double),
        ("target_error", ctypes.c_double),
        ("budget_bits", ctypes.c_double),
        ("lipschitz", ctypes.c_double),
        ("lr", ctypes.c_double),
        ("workers", ctypes.c_uint),
        ("warm_steps", ctypes.c_uint64),
        ("warm_bits", ctypes.c_uint),
    ]


# The dq_sched fields the binding reads (the struct itself is an opaque buffer of the C size).
_SCHED_FIELDS = [("p", None), ("step", ctypes.c_uint64), ("bits", ctypes.c_uint), ("c", ctypes.c_double),
                 ("spent_bits", ctypes.c_double)]


class DQError(RuntimeError):
    """A dq_* call returned a status other than DQ_OK; .status is the dq_status value."""

    def __init__(self, status, call=""):
        self.status = int(status)
        self.call = call
        text = strerror(status)
        super().__init__("%s: %s (dq_status %d)" % (call, text, self.status) if call else text)


class LayoutError(RuntimeError):
    """The ctypes mirrors do not match the library's structs (dqsgd.h changed)."""


# ---------------------------------------------------------------- loading
def _lib_path():
    """DQSGD_LIB; else the library an install put next to this file (setup.py's _dqsgd_capi);
    else build/libdqsgd.so of the repository this file lives in."""
    env = os.environ.get("DQSGD_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("_dqsgd_capi") and name.endswith(".so"):
            return os.path.join(here, name)
    return os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libdqsgd.so")


def _load():
    path = _lib_path()
    if not os.path.exists(path):
        raise OSError("dqsgd: shared library %s not found; build it with `make build/libdqsgd.so` "
                      "or set DQSGD_LIB" % path)
    L = ctypes.CDLL(path)
    P, F, V, S = ctypes.POINTER, ctypes.c_float, ctypes.c_void_p, ctypes.c_size_t
    st = ctypes.c_int
    sigs = {
        "dq_strerror": (ctypes.c_char_p, [st]),
        "dq_version_number": (ctypes.c_uint, []),
        "dq_simd_backend": (ctypes.c_char_p, []),
        "dq_encode_bound": (S, [S, ctypes.c_uint]),
        "dq_encode_capacity": (st, [P(Params), S, P(S)]),
        "dq_encode": (st, [P(Params), V, S, V, V, S, P(S)]),
        "dq_range_align": (S, [P(Params), S]),
        "dq_header_read": (st, [V, S, P(Header)]),
        "dq_decode": (st, [V, S, V, S]),
        "dq_decode_add": (st, [V, S, F, V, S]),
        "dq_message_open": (st, [V, S, V]),
        "dq_message_decode": (st, [V, V, S]),
        "dq_message_decode_add": (st, [V, F, V, S]),
        "dqpy_sizeof_message": (S, []),
        "dq_message_norm2": (st, [V, S, P(ctypes.c_double)]),
        "dq_message_bits": (ctypes.c_double, [S, ctypes.c_uint, ctypes.c_uint32]),
        "dq_shared_width": (ctypes.c_uint, [ctypes.c_uint, ctypes.c_uint64]),
        "dq_shared_buckets": (S, [P(Params), S]),
        "dq_shared_exponents": (st, [P(Params), V, S, V, V]),
        "dq_shared_encode": (st, [P(Params), V, S, V, V, ctypes.c_uint, V]),
        "dq_shared_decode": (st, [P(Params), V, ctypes.c_uint, S, V, F, V]),
        "dq_sched_init": (st, [V, P(SchedParams)]),
        "dq_sched_next": (st, [V, P(ctypes.c_uint)]),
        "dq_sched_update": (st, [V, ctypes.c_double, ctypes.c_double, ctypes.c_double]),
        "dq_sched_levels": (ctypes.c_double, [V, ctypes.c_uint64, ctypes.c_double]),
        "dq_sched_save": (st, [V, V, S, P(S)]),
        "dq_sched_load": (st, [V, S, V]),
        "dqpy_sizeof_params": (S, []),
        "dqpy_sizeof_header": (S, []),
        "dqpy_sizeof_sched_params": (S, []),
        "dqpy_sizeof_sched": (S, []),
        "dqpy_layout": (S, [ctypes.c_int, P(S), S]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    return L, path


lib, lib_path = _load()


def _c_layout(which):
    out = (ctypes.c_size_t * 32)()
    n = lib.dqpy_layout(which, out, 32)
    return [int(out[i]) for i in range(min(n, 32))]


def check_layout():
    """Compare the ctypes mirrors with the C structs (offsets of every field, then sizeof).
    Returns a dict name -> (python layout, C layout); raises LayoutError on a mismatch."""
    res = {}
    for which, name, cls in ((0, "dq_params", Params), (1, "dq_header", Header), (2, "dq_sched_params", SchedParams)):
        py = [getattr(cls, f).offset for f, _ in cls._fields_] + [ctypes.sizeof(cls)]
        c = _c_layout(which)
        res[name] = (py, c)
        if py != c:
            raise LayoutError("%s: ctypes layout %s != C layout %s (dqsgd.h changed?)" % (name, py, c))
    sizes = {"dq_params": lib.dqpy_sizeof_params(), "dq_header": lib.dqpy_sizeof_header(),
             "dq_sched_params": lib.dqpy_sizeof_sched_params()}
    for name, cls in (("dq_params", Params), ("dq_header", Header), ("dq_sched_params", SchedParams)):
        if ctypes.sizeof(cls) != sizes[name]:
            raise LayoutError("%s: ctypes sizeof %d != C sizeof %d" % (name, ctypes.sizeof(cls), sizes[name]))
    c = _c_layout(3)
    if len(c) != len(_SCHED_FIELDS) + 1 or c[0] != 0 or c[-1] != lib.dqpy_sizeof_sched():
        raise LayoutError("dq_sched: unexpected C layout %s" % c)
    res["dq_sched"] = (None, c)
    return res


check_layout()
_SCHED_OFF = dict(zip([f for f, _ in _SCHED_FIELDS], _c_layout(3)))
_SCHED_SIZE = int(lib.dqpy_sizeof_sched())


# ---------------------------------------------------------------- helpers
def strerror(status):
    """dq_strerror: the text of a dq_status."""
    return lib.dq_strerror(int(status)).decode()


def _check(status, call):
    if status != OK:
        raise DQError(status, call)


def simd_backend():
    return lib.dq_simd_backend().decode()


def version_number():
    return int(lib.dq_version_number())


def _float_ptr(x, what, writable=False):
    """(address, element count) of a float32, C-contiguous CPU array or tensor."""
    if hasattr(x, "data_ptr") and hasattr(x, "is_contiguous"):  # a torch tensor
        import torch
        if x.dtype != torch.float32 or x.device.type != "cpu" or not x.is_contiguous():
            raise TypeError("%s: expected a contiguous float32 CPU tensor, got %s on %s%s" % (
                what, x.dtype, x.device, "" if x.is_contiguous() else " (not contiguous)"))
        if writable and x.requires_grad:
            raise TypeError("%s: tensor requires grad; pass .detach()" % what)
        return x.data_ptr(), x.numel()
    if not isinstance(x, np.ndarray):
        raise TypeError("%s: expected a numpy array or a torch tensor, got %s" % (what, type(x).__name__))
    if x.dtype != np.float32 or not x.flags["C_CONTIGUOUS"]:
        raise TypeError("%s: expected a C-contiguous float32 array, got %s%s" % (
            what, x.dtype, "" if x.flags["C_CONTIGUOUS"] else " (not contiguous)"))
    if writable and not x.flags["WRITEABLE"]:
        raise TypeError("%s: array is read-only" % what)
    return x.ctypes.data, x.size


def _bytes_ptr(msg):
    """(address, length, keep-alive object) of a message: bytes, bytearray, memoryview, a numpy
    uint8 array or a uint8 torch tensor."""
    if hasattr(msg, "data_ptr") and hasattr(msg, "is_contiguous"):
        import torch
        if msg.dtype != torch.uint8 or msg.device.type != "cpu" or not msg.is_contiguous():
            raise TypeError("message tensor must be contiguous uint8 on the CPU")
        return msg.data_ptr(), msg.numel(), msg
    a = np.frombuffer(msg, dtype=np.uint8) if not isinstance(msg, np.ndarray) else msg
    if a.dtype != np.uint8 or not a.flags["C_CONTIGUOUS"]:
        a = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    return a.ctypes.data, a.size, a


def _params(bits, seed, step, stream, bucket, rounding, norm, checksum, coder, scheme):
    p = Params()
    p.bits = bits
    p.bucket = bucket
    p.scheme = scheme
    p.rounding = rounding
    p.norm = norm
    p.seed = seed & 0xFFFFFFFFFFFFFFFF
    p.step = step & 0xFFFFFFFFFFFFFFFF
    p.stream = stream & 0xFFFFFFFF
    p.checksum = checksum
    p.coder = coder
    return p


# ---------------------------------------------------------------- codec
def encode_bound(n, bits):
    """dq_encode_bound: worst-case message size of n elements at `bits` bits (0 if invalid)."""
    return int(lib.dq_encode_bound(n, bits))


def encode_capacity(n, bits=4, bucket=BUCKET_DEFAULT, rounding=ROUND_STOCHASTIC, norm=NORM_L2, checksum=0,
                    coder=CODER_DEFAULT, scheme=SCHEME_QSGD):
    """dq_encode_capacity: the dst size dq_encode needs for these params (QSGD family); the exact
    size written for the fixed layout, at most this for the others."""
    p = _params(bits, 0, 0, 0, bucket, rounding, norm, checksum, coder, scheme)
    size = ctypes.c_size_t()
    _check(lib.dq_encode_capacity(ctypes.byref(p), n, ctypes.byref(size)), "dq_encode_capacity")
    return size.value


def encode(x, bits=4, seed=0, step=0, stream=0, residual=None, bucket=BUCKET_DEFAULT, rounding=ROUND_STOCHASTIC,
           norm=NORM_L2, checksum=0, coder=CODER_DEFAULT, scheme=SCHEME_QSGD, out=None):
    """dq_encode: quantize x (float32, contiguous, CPU; numpy or torch) into a message.

    residual: None, or error-feedback memory of x's length (float32, contiguous, writable): the
    message then carries x + residual and residual becomes (x + residual) - decoded.
    out: optional np.uint8 array to write into (at least the message size); by default a new
    array of exactly the message size. Returns the message as an np.uint8 array (a view of out
    when given)."""
    xp, n = _float_ptr(x, "encode x")
    rp = None
    if residual is not None:
        rp, rn = _float_ptr(residual, "encode residual", writable=True)
        if rn != n:
            raise ValueError("encode: residual has %d elements, x has %d" % (rn, n))
    p = _params(bits, seed, step, stream, bucket, rounding, norm, checksum, coder, scheme)
    if out is None:
        size = ctypes.c_size_t()
        _check(lib.dq_encode_capacity(ctypes.byref(p), n, ctypes.byref(size)), "dq_encode_capacity")
        out = np.empty(size.value, dtype=np.uint8)
    elif not (isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.flags["C_CONTIGUOUS"]):
        raise TypeError("encode out: expected a C-contiguous np.uint8 array")
    length = ctypes.c_size_t()
    _check(lib.dq_encode(ctypes.byref(p), xp, n, rp, out.ctypes.data, out.size, ctypes.byref(length)), "dq_encode")
    return out[: length.value]


def range_align(n, bits=4, bucket=BUCKET_DEFAULT, rounding=ROUND_STOCHASTIC, norm=NORM_L2, coder=CODER_DEFAULT,
                scheme=SCHEME_QSGD):
    """dq_range_align: the range granularity of an n-element message, lcm(256, bucket) capped
    at n: a multiple of it starts a whole dqsgd bucket (scale) and a whole payload block. 0 for
    invalid params or n = 0."""
    p = _params(bits, 0, 0, 0, bucket, rounding, norm, 0, coder, scheme)
    return int(lib.dq_range_align(ctypes.byref(p), n))


def header_read(msg):
    """dq_header_read: validate a message header; returns a Header (count, msg_size, bits...)."""
    ptr, n, _keep = _bytes_ptr(msg)
    h = Header()
    _check(lib.dq_header_read(ptr, n, ctypes.byref(h)), "dq_header_read")
    return h


def decode(msg):
    """dq_decode: the message's values as a new float32 numpy array."""
    h = header_read(msg)
    out = np.empty(h.count, dtype=np.float32)
    ptr, n, _keep = _bytes_ptr(msg)
    _check(lib.dq_decode(ptr, n, out.ctypes.data, out.size), "dq_decode")
    return out


def decode_add(msg, weight, acc):
    """dq_decode_add: acc += weight * decoded, in place (acc: float32, contiguous, the message's
    element count; numpy or torch). Bit-identical to decode() followed by that loop in float32."""
    ap, an = _float_ptr(acc, "decode_add acc", writable=True)
    ptr, n, _keep = _bytes_ptr(msg)
    _check(lib.dq_decode_add(ptr, n, ctypes.c_float(weight), ap, an), "dq_decode_add")
    return acc


class Message:
    """dq_message_open: a message opened once (header, size, payload checksum); `header` is its
    Header, and decode() / decode_add() do not parse it again. Keeps a reference to msg, whose
    bytes must not change while the Message is used."""

    def __init__(self, msg):
        ptr, n, keep = _bytes_ptr(msg)
        self._keep = (msg, keep)
        words = (lib.dqpy_sizeof_message() + 7) // 8
        self._m = (ctypes.c_uint64 * words)()  # 8-byte aligned, as dq_message needs
        _check(lib.dq_message_open(ptr, n, ctypes.byref(self._m)), "dq_message_open")
        self.header = Header.from_buffer_copy(self._m, 0)  # dq_message's first member

    def decode(self):
        """dq_message_decode: the values as a new float32 numpy array."""
        out = np.empty(self.header.count, dtype=np.float32)
        _check(lib.dq_message_decode(ctypes.byref(self._m), out.ctypes.data, out.size), "dq_message_decode")
        return out

    def decode_add(self, weight, acc):
        """dq_message_decode_add: acc += weight * decoded, in place, as decode_add()."""
        ap, an = _float_ptr(acc, "Message.decode_add acc", writable=True)
        _check(lib.dq_message_decode_add(ctypes.byref(self._m), ctypes.c_float(weight), ap, an),
               "dq_message_decode_add")
        return acc


def message_norm2(msg):
    """dq_message_norm2: ||x||^2 of the encoded vector from an L2-scaled message's scales."""
    ptr, n, _keep = _bytes_ptr(msg)
    v = ctypes.c_double()
    _check(lib.dq_message_norm2(ptr, n, ctypes.byref(v)), "dq_message_norm2")
    return v.value


def message_bits(n, bits, bucket=BUCKET_DEFAULT):
    """dq_message_bits: exact size in bits of a QSGD message (header included); 0 if invalid."""
    return float(lib.dq_message_bits(n, bits, bucket))


# ---------------------------------------------------------------- shared-scale integer sums
# dq_shared_*: workers agree on one power-of-two unit per bucket (an elementwise max of their
# exponents), quantize to integer levels on it and sum the levels with a plain integer
# allreduce; the sum times the unit is exactly the float sum of the workers' decoded vectors.
_INT_TYPES = {8: np.int8, 16: np.int16, 32: np.int32}


def _int_ptr(a, dtype, what, n=None, writable=False):
    """(address, count) of a C-contiguous CPU numpy array or torch tensor of dtype (a numpy
    integer type); n, when given, is the element count it must have."""
    if hasattr(a, "data_ptr") and hasattr(a, "is_contiguous"):
        import torch
        want = {np.int8: torch.int8, np.int16: torch.int16, np.int32: torch.int32}[dtype]
        if a.dtype != want or a.device.type != "cpu" or not a.is_contiguous():
            raise TypeError("%s: expected a contiguous %s CPU tensor, got %s" % (what, want, a.dtype))
        ptr, cnt = a.data_ptr(), a.numel()
    elif isinstance(a, np.ndarray):
        if a.dtype != dtype or not a.flags["C_CONTIGUOUS"] or (writable and not a.flags["WRITEABLE"]):
            raise TypeError("%s: expected a C-contiguous %s array, got %s" % (what, np.dtype(dtype), a.dtype))
        ptr, cnt = a.ctypes.data, a.size
    else:
        raise TypeError("%s: expected a numpy array or a torch tensor, got %s" % (what, type(a).__name__))
    if n is not None and cnt < n:
        raise ValueError("%s: %d elements, need %d" % (what, cnt, n))
    return ptr, cnt


def _shared_params(bits, bucket, rounding, seed=0, step=0, stream=0):
    # the shared quantizer scales each bucket by its max (norm 0 or NORM_MAX), fixed-width integers
    return _params(bits, seed, step, stream, bucket, rounding, NORM_MAX, 0, CODER_DEFAULT, SCHEME_QSGD)


def shared_width(bits, workers):
    """dq_shared_width: bits (8, 16, 32) of the level accumulator in which the sum of `workers`
    levels of `bits` bits cannot overflow; 0 when none does (or bits outside 2..16)."""
    return int(lib.dq_shared_width(bits, workers))


def shared_buckets(n, bits, bucket=BUCKET_DEFAULT):
    """dq_shared_buckets: the number of exponents for n elements (0 if invalid)."""
    p = _shared_params(bits, bucket, ROUND_STOCHASTIC)
    return int(lib.dq_shared_buckets(ctypes.byref(p), n))


def shared_exponents(x, bits, bucket=BUCKET_DEFAULT, residual=None, out=None):
    """dq_shared_exponents: this worker's exponent per bucket of x (+ residual), np.int8 (or
    written into out, an int8 array or tensor of at least shared_buckets() elements)."""
    xp, n = _float_ptr(x, "shared_exponents x")
    rp = _float_ptr(residual, "shared_exponents residual")[0] if residual is not None else None
    p = _shared_params(bits, bucket, ROUND_STOCHASTIC)
    nb = int(lib.dq_shared_buckets(ctypes.byref(p), n))
    if out is None:
        out = np.empty(max(nb, 1), np.int8)
    ep, _ = _int_ptr(out, np.int8, "shared_exponents out", nb, writable=True)
    _check(lib.dq_shared_exponents(ctypes.byref(p), xp, n, rp, ep), "dq_shared_exponents")
    return out


def shared_encode(x, exps, width, bits, seed=0, step=0, stream=0, residual=None, bucket=BUCKET_DEFAULT,
                  rounding=ROUND_STOCHASTIC, out=None):
    """dq_shared_encode: the levels of x (+ residual) on the units 2^exps, as integers of `width`
    bits (np.int8/16/32, or written into out, at least x's length). With residual, it becomes
    v - level * unit (exact), updated only on success."""
    xp, n = _float_ptr(x, "shared_encode x")
    rp = None
    if residual is not None:
        rp, rn = _float_ptr(residual, "shared_encode residual", writable=True)
        if rn != n:
            raise ValueError("shared_encode: residual has %d elements, x has %d" % (rn, n))
    p = _shared_params(bits, bucket, rounding, seed, step, stream)
    ep, _ = _int_ptr(exps, np.int8, "shared_encode exps", int(lib.dq_shared_buckets(ctypes.byref(p), n)))
    if width not in _INT_TYPES:
        raise ValueError("shared_encode: width %r is not 8, 16 or 32" % (width,))
    if out is None:
        out = np.empty(n, _INT_TYPES[width])
    lp, _ = _int_ptr(out, _INT_TYPES[width], "shared_encode out", n, writable=True)
    _check(lib.dq_shared_encode(ctypes.byref(p), xp, n, rp, ep, width, lp), "dq_shared_encode")
    return out


def shared_decode(sums, exps, width, bits, n, weight=1.0, bucket=BUCKET_DEFAULT, out=None):
    """dq_shared_decode: out[i] = weight * (sums[i] * 2^e), n elements (float32 numpy, or into
    out, a float32 array or tensor)."""
    p = _shared_params(bits, bucket, ROUND_STOCHASTIC)
    if width not in _INT_TYPES:
        raise ValueError("shared_decode: width %r is not 8, 16 or 32" % (width,))
    sp, _ = _int_ptr(sums, _INT_TYPES[width], "shared_decode sums", n)
    ep, _ = _int_ptr(exps, np.int8, "shared_decode exps", int(lib.dq_shared_buckets(ctypes.byref(p), n)))
    if out is None:
        out = np.empty(n, np.float32)
    op, on = _float_ptr(out, "shared_decode out", writable=True)
    if on < n:
        raise ValueError("shared_decode: out has %d elements, need %d" % (on, n))
    _check(lib.dq_shared_decode(ctypes.byref(p), sp, width, n, ep, ctypes.c_float(weight), op), "dq_shared_decode")
    return out


# ---------------------------------------------------------------- schedule
class Schedule:
    """The DQSGD bit-budget schedule (dq_sched_*): each step's width from the gradient norm,
    the steps that remain and a scale, an error target (P1) or a bit budget (P2).

        s = Schedule(steps=T, dim=d, budget_bits=B, norm_prior=g0, alpha=0.999, period=10, window=50)
        for n in range(T):
            bits = s.next()                  # the width of step n
            ... send messages of `bits` bits ...
            s.update(norm_of_aggregated_gradient, loss, bits_one_worker_sent)

    mode: "dqsgd" (default), "fixed", "increasing" or "decreasing"; the keyword arguments are
    the fields of dq_sched_params (zero = default). The dq_sched state is an opaque buffer of
    the library's sizeof(dq_sched); step, bits, c and spent_bits are read from it."""

    def __init__(self, mode="dqsgd", **kw):
        self.params = SchedParams()
        self.params.mode = _SCHED_MODES[mode] if isinstance(mode, str) else int(mode)
        if "bucket" not in kw:
            kw["bucket"] = BUCKET_DEFAULT
        for k, v in kw.items():
            if not hasattr(self.params, k):
                raise TypeError("Schedule: unknown parameter %r" % k)
            setattr(self.params, k, v)
        self._buf = (ctypes.c_uint64 * ((_SCHED_SIZE + 7) // 8))()  # 8-byte aligned
        self.exhausted = False  # set when dq_sched_next reported DQ_ERR_INFEASIBLE
        _check(lib.dq_sched_init(self._buf, ctypes.byref(self.params)), "dq_sched_init")

    def _field(self, name):
        ctype = dict(_SCHED_FIELDS)[name]
        return ctype.from_buffer(self._buf, _SCHED_OFF[name]).value

    @property
    def step(self):
        return self._field("step")

    @property
    def bits(self):
        return self._field("bits")

    @property
    def c(self):
        return self._field("c")

    @property
    def spent_bits(self):
        return self._field("spent_bits")

    def next(self):
        """dq_sched_next: the width of the next step. A budget the reported spending has
        exhausted (DQ_ERR_INFEASIBLE) gives bits_min and sets .exhausted, as trainer.c does."""
        b = ctypes.c_uint()
        st = lib.dq_sched_next(self._buf, ctypes.byref(b))
        if st == ERR_INFEASIBLE:
            self.exhausted = True
        else:
            _check(st, "dq_sched_next")
        return b.value

    def update(self, grad_norm, loss=0.0, bits_sent=0.0):
        """dq_sched_update: the norm of the aggregated gradient, the loss (increasing mode) and
        the bits one worker sent this step; advances to the next step."""
        _check(lib.dq_sched_update(self._buf, float(grad_norm), float(loss), float(bits_sent)), "dq_sched_update")

    def levels(self, n, G):
        return float(lib.dq_sched_levels(self._buf, n, G))

    def save(self):
        """dq_sched_save: the state as checkpoint bytes."""
        out = (ctypes.c_uint8 * 4096)()
        n = ctypes.c_size_t()
        _check(lib.dq_sched_save(self._buf, out, len(out), ctypes.byref(n)), "dq_sched_save")
        return bytes(out[: n.value])

    def load(self, data):
        """dq_sched_load: restore a state saved by save()."""
        buf = ctypes.create_string_buffer(bytes(data), len(data))
        _check(lib.dq_sched_load(buf, len(data), self._buf), "dq_sched_load")
