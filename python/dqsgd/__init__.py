"""dqsgd - a ctypes binding of dqsgd (the header-only C library) for Python (doc/PYTHON.md).

The shared object is python/dqsgd_capi.c compiled: dqsgd.h with every public function
exported. It is the file the environment variable DQSGD_LIB names; else one of the libraries
installed beside this file, which setup.py builds once per kernel level (x86-64: scalar, sse2,
avx2, avx512): the best level this CPU runs, or the one DQSGD_ISA names; else
build/libdqsgd.so in the repository this file lives in. At load the binding checks that its
ctypes mirrors of dq_params, dq_header, dq_sched_params and the fields of dq_sched and dq_job
it reads have the offsets and sizes the C compiler gave them (LayoutError otherwise).

    import numpy as np, dqsgd
    g = np.random.default_rng(0).standard_normal(10000).astype(np.float32)
    msg = dqsgd.encode(g, bits=4, seed=42, step=0, stream=rank)      # np.uint8 array
    h = dqsgd.header_read(msg)                                        # h.count, h.msg_size, ...
    acc = np.zeros(h.count, np.float32)
    dqsgd.decode_add(msg, 1.0 / workers, acc)                         # acc += w * decoded

Vectors may be numpy arrays, torch CPU tensors (used in place through data_ptr(), never
copied) or Ptr(address, count, dtype) for raw memory; the codec takes float32, float16 and
bfloat16 vectors (dq_encode_typed and the typed decoders). Messages are returned in the kind of
buffer `out` is (a new np.uint8 array by default); any object with the buffer protocol, a uint8
tensor or a uint8 Ptr is accepted back. Errors raise DQError carrying the dq_status and
dq_strerror's text; a wrong buffer type raises TypeError, a bad option ValueError.
"""

import collections
import ctypes
import os
import re

import numpy as np

__all__ = [
    "DQError", "LayoutError", "Params", "Header", "SchedParams", "Schedule", "Ptr", "Job", "lib", "lib_path",
    "lib_level", "ISA_LEVELS", "strerror", "simd_backend", "cpu_levels", "version_number", "check_layout",
    "encode", "encode_capacity", "encode_bound", "encode_bound_coded", "range_align", "header_read", "verify",
    "decode", "decode_add", "decode_range", "decode_add_range", "Message", "message_bits", "message_norm2",
    "job_work_size", "convert", "INDEX_CODERS", "sparse_indices",
    "shared_width", "shared_buckets", "shared_exponents", "shared_encode", "shared_decode",
]

# ---------------------------------------------------------------- constants (dqsgd.h)
OK = 0
ERR_INFEASIBLE = -15
SCHEME_QSGD, SCHEME_NUQSGD, SCHEME_NATURAL, SCHEME_TERNGRAD, SCHEME_TWOMEANS = 1, 2, 3, 4, 5
SCHEME_TOPK, SCHEME_RANDK, SCHEME_THRESHOLD, SCHEME_TRUNC, SCHEME_TRUNC_NU = 6, 7, 8, 9, 10
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
# The enum params by name: each accepts its constant or one of these strings.
SCHEMES = {"qsgd": SCHEME_QSGD, "nuqsgd": SCHEME_NUQSGD, "natural": SCHEME_NATURAL, "terngrad": SCHEME_TERNGRAD,
           "twomeans": SCHEME_TWOMEANS, "topk": SCHEME_TOPK, "randk": SCHEME_RANDK, "threshold": SCHEME_THRESHOLD,
           "trunc": SCHEME_TRUNC, "trunc_nu": SCHEME_TRUNC_NU}
ROUNDINGS = {"stochastic": ROUND_STOCHASTIC, "nearest": ROUND_NEAREST}
NORMS = {"l2": NORM_L2, "max": NORM_MAX}
CODERS = {"default": CODER_DEFAULT, "fixed": CODER_FIXED_ONLY, "elias": CODER_ELIAS, "rans": CODER_RANS,
          "auto": CODER_AUTO}
# dq_index_coder: the index stream of top-k and threshold messages (params' index_coder)
INDEX_CODERS = {"auto": 0, "gamma": 1, "varint": 2, "bitmap": 3, "rice": 4}
# dq_dtype of the float element types the codec takes (numpy / torch dtype names)
DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2}

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


# The fields the binding reads of the structs it keeps as opaque buffers of the C size.
_SCHED_FIELDS = [("p", None), ("step", ctypes.c_uint64), ("bits", ctypes.c_uint), ("c", ctypes.c_double),
                 ("spent_bits", ctypes.c_double)]
_JOB_FIELDS = [("parts", ctypes.c_size_t)]


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
# Kernel levels, best last: the libraries setup.py builds (dqsgd/_dqsgd_capi_<level>*.so) on
# x86-64, and the bit of each in dqpy_cpu_levels(). "default" (other architectures) and
# "native" (DQSGD_NATIVE=1) are the one library of such a build.
ISA_LEVELS = ("scalar", "sse2", "avx2", "avx512")
_CPU_BITS = {"scalar": 1, "sse2": 2, "avx2": 4, "avx512": 8}
_HERE = os.path.dirname(os.path.abspath(__file__))


def _packaged():
    """{level: path} of the libraries installed beside this file."""
    found = {}
    for name in os.listdir(_HERE):
        m = re.match(r"_dqsgd_capi_([a-z0-9]+)\..*\.(so|dylib|pyd)$", name)
        if m:
            found[m.group(1)] = os.path.join(_HERE, name)
    return found


def _choose(built, cpu_bits, forced):
    """The level to load from the levels built ({level: path}), the CPU's dqpy_cpu_levels() bits
    and DQSGD_ISA (forced; "" for none): the best level the CPU runs, or the forced one, which
    must be built and run here (OSError otherwise)."""
    runs = [lvl for lvl in ISA_LEVELS if lvl in built and cpu_bits & _CPU_BITS[lvl]]
    if forced:
        if forced not in ISA_LEVELS:
            raise ValueError("DQSGD_ISA=%s: not one of %s" % (forced, ", ".join(ISA_LEVELS)))
        if forced not in built:
            raise OSError("DQSGD_ISA=%s: this package has no %s library (built: %s)" % (
                forced, forced, ", ".join(sorted(built)) or "none"))
        if forced not in runs:
            raise OSError("DQSGD_ISA=%s: this CPU (or its operating system) does not run the %s level" % (
                forced, forced))
        return forced
    for single in ("native", "default"):  # a one-library build
        if single in built:
            return single
    if not runs:
        raise OSError("dqsgd: none of the libraries built (%s) runs on this CPU" % ", ".join(sorted(built)))
    return runs[-1]


def _signatures():
    P, F, V, S = ctypes.POINTER, ctypes.c_float, ctypes.c_void_p, ctypes.c_size_t
    st = dt = ctypes.c_int  # dq_status, dq_dtype
    return {
        "dq_strerror": (ctypes.c_char_p, [st]),
        "dq_version_number": (ctypes.c_uint, []),
        "dq_simd_backend": (ctypes.c_char_p, []),
        "dq_encode_bound": (S, [S, ctypes.c_uint]),
        "dq_encode_bound_coded": (S, [S, ctypes.c_uint]),
        "dq_encode_capacity": (st, [P(Params), S, P(S)]),
        "dq_encode_typed": (st, [P(Params), dt, V, S, dt, V, V, S, P(S)]),
        "dq_range_align": (S, [P(Params), S]),
        "dq_header_read": (st, [V, S, P(Header)]),
        "dq_verify": (st, [V, S]),
        "dq_decode_typed": (st, [V, S, dt, V, S]),
        "dq_decode_add_typed": (st, [V, S, F, dt, V, S]),
        "dq_decode_range": (st, [V, S, S, S, V]),
        "dq_decode_add_range": (st, [V, S, S, S, F, V]),
        "dq_message_open": (st, [V, S, V]),
        "dq_message_decode": (st, [V, V, S]),
        "dq_message_decode_add": (st, [V, F, V, S]),
        "dq_message_norm2": (st, [V, S, P(ctypes.c_double)]),
        "dq_message_bits": (ctypes.c_double, [S, ctypes.c_uint, ctypes.c_uint32]),
        "dq_index_decode": (st, [V, S, P(ctypes.c_uint32), S, P(S)]),
        "dq_convert": (st, [dt, V, S, dt, V]),
        "dq_job_work_size": (st, [P(Params), S, S, P(S)]),
        "dq_job_init": (st, [V, P(Params), S, S, V, S, V, S]),
        "dq_job_range": (st, [V, S, P(S), P(S)]),
        "dq_job_quantize": (st, [V, S, V, V]),
        "dq_job_plan": (st, [V]),
        "dq_job_code": (st, [V, S]),
        "dq_job_finish": (st, [V, P(S)]),
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
        "dqpy_sizeof_message": (S, []),
        "dqpy_sizeof_sched_params": (S, []),
        "dqpy_sizeof_sched": (S, []),
        "dqpy_sizeof_job": (S, []),
        "dqpy_layout": (S, [ctypes.c_int, P(S), S]),
        "dqpy_cpu_levels": (ctypes.c_uint, []),
    }


def _bind(path):
    """ctypes.CDLL of the library at path with the signatures of every function the binding calls."""
    L = ctypes.CDLL(path)
    for name, (res, args) in _signatures().items():
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    return L


def _load():
    """(library, path, level): DQSGD_LIB; else the best packaged library for this CPU (or the
    one DQSGD_ISA names); else build/libdqsgd.so of the repository this file lives in. With
    DQSGD_LIB, DQSGD_ISA is checked against the library's kernels. level is the packaged
    level, or None for DQSGD_LIB and the repository's library."""
    forced = os.environ.get("DQSGD_ISA", "")
    path = os.environ.get("DQSGD_LIB")
    built = {} if path else _packaged()
    level = None
    if built:
        probe = _bind(built.get("sse2") or built[sorted(built)[0]])
        level = _choose(built, int(probe.dqpy_cpu_levels()), forced)
        path = built[level]
    elif not path:
        path = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build", "libdqsgd.so")
        if not os.path.exists(path):
            raise OSError("dqsgd: no library installed beside %s and no %s; build it with `make "
                          "build/libdqsgd.so` or set DQSGD_LIB" % (_HERE, path))
    L = _bind(path)
    if forced and level is None and L.dq_simd_backend().decode() != forced:
        raise OSError("DQSGD_ISA=%s, but %s has %s kernels" % (forced, path, L.dq_simd_backend().decode()))
    return L, path, level


lib, lib_path, lib_level = _load()

# dqpy_layout's `which` (python/dqsgd_capi.c)
_LAYOUT_PARAMS, _LAYOUT_HEADER, _LAYOUT_SCHED_PARAMS, _LAYOUT_SCHED, _LAYOUT_JOB = 0, 1, 2, 3, 4


def _c_layout(which, L=None):
    out = (ctypes.c_size_t * 32)()
    n = (L or lib).dqpy_layout(which, out, 32)
    return [int(out[i]) for i in range(min(n, 32))]


def check_layout(L=None):
    """Compare the ctypes mirrors with the C structs of library L (default: the loaded one):
    offsets of every field, then sizeof; of the opaque dq_sched and dq_job, the fields read.
    Returns a dict name -> (python layout, C layout); raises LayoutError on a mismatch."""
    L = L or lib
    res = {}
    sizes = {"dq_params": L.dqpy_sizeof_params(), "dq_header": L.dqpy_sizeof_header(),
             "dq_sched_params": L.dqpy_sizeof_sched_params()}
    for which, name, cls in ((_LAYOUT_PARAMS, "dq_params", Params), (_LAYOUT_HEADER, "dq_header", Header),
                             (_LAYOUT_SCHED_PARAMS, "dq_sched_params", SchedParams)):
        py = [getattr(cls, f).offset for f, _ in cls._fields_] + [ctypes.sizeof(cls)]
        c = _c_layout(which, L)
        res[name] = (py, c)
        if py != c:
            raise LayoutError("%s: ctypes layout %s != C layout %s (dqsgd.h changed?)" % (name, py, c))
        if ctypes.sizeof(cls) != sizes[name]:
            raise LayoutError("%s: ctypes sizeof %d != C sizeof %d" % (name, ctypes.sizeof(cls), sizes[name]))
    for which, name, fields, size in ((_LAYOUT_SCHED, "dq_sched", _SCHED_FIELDS, L.dqpy_sizeof_sched()),
                                      (_LAYOUT_JOB, "dq_job", _JOB_FIELDS, L.dqpy_sizeof_job())):
        c = _c_layout(which, L)
        if len(c) != len(fields) + 1 or c[0] != 0 or c[-1] != size:
            raise LayoutError("%s: unexpected C layout %s" % (name, c))
        res[name] = (None, c)
    return res


check_layout()
_SCHED_OFF = dict(zip([f for f, _ in _SCHED_FIELDS], _c_layout(_LAYOUT_SCHED)))
_SCHED_SIZE = int(lib.dqpy_sizeof_sched())
_JOB_OFF = dict(zip([f for f, _ in _JOB_FIELDS], _c_layout(_LAYOUT_JOB)))
_JOB_SIZE = int(lib.dqpy_sizeof_job())
_MESSAGE_SIZE = int(lib.dqpy_sizeof_message())


# ---------------------------------------------------------------- helpers
def strerror(status):
    """dq_strerror: the text of a dq_status."""
    return lib.dq_strerror(int(status)).decode()


def _check(status, call):
    if status != OK:
        raise DQError(status, call)


def simd_backend():
    """dq_simd_backend: the kernel set of the loaded library: "scalar", "sse2", "avx2", "avx512"
    or "neon"."""
    return lib.dq_simd_backend().decode()


def cpu_levels():
    """The kernel levels of ISA_LEVELS this CPU and its operating system run, best last (CPUID
    and XCR0, read by the library; "scalar" alone off x86-64)."""
    bits = int(lib.dqpy_cpu_levels())
    return tuple(lvl for lvl in ISA_LEVELS if bits & _CPU_BITS[lvl])


def version_number():
    """dq_version_number: DQSGD_VERSION_NUMBER of the loaded library (major * 10000 + minor * 100 + patch)."""
    return int(lib.dq_version_number())


__version__ = "%d.%d.%d" % (version_number() // 10000, version_number() // 100 % 100, version_number() % 100)


class Ptr(collections.namedtuple("Ptr", "address count dtype")):
    """Raw memory the library reads or writes in place: `count` elements of `dtype` ("float32",
    "float16", "bfloat16", "uint8", "int8", "int16" or "int32") at the integer `address`, e.g.
    Ptr(tensor.data_ptr(), tensor.numel(), "bfloat16") or Ptr(array.ctypes.data, array.size,
    "float32"). The caller keeps the memory alive and unchanged for the call (for a Message or
    a Job, as long as it is used)."""
    __slots__ = ()


_ELEM_SIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "uint8": 1, "int8": 1, "int16": 2, "int32": 4}
_NP_NAMES = {np.dtype(t): t for t in _ELEM_SIZE if t != "bfloat16"}


def _view(x, what, dtypes, writable=False):
    """(address, element count, dtype name) of a C-contiguous numpy array, torch CPU tensor or
    Ptr whose dtype is one of `dtypes`; TypeError otherwise."""
    if isinstance(x, Ptr):
        if x.dtype not in _ELEM_SIZE or not isinstance(x.address, int) or not isinstance(x.count, int) or \
                x.count < 0 or (x.count and not x.address):
            raise TypeError("%s: invalid %r" % (what, x))
        addr, count, dtype = x.address, x.count, x.dtype
    elif hasattr(x, "data_ptr") and hasattr(x, "is_contiguous"):  # a torch tensor
        dtype = str(x.dtype).replace("torch.", "")
        if x.device.type != "cpu":
            raise TypeError("%s: a %s tensor; the library reads CPU memory: copy it to a (pinned) CPU "
                            "tensor first" % (what, x.device.type))
        if not x.is_contiguous():
            raise TypeError("%s: tensor is not contiguous" % what)
        if writable and x.requires_grad:
            raise TypeError("%s: tensor requires grad; pass .detach()" % what)
        addr, count = x.data_ptr(), x.numel()
    elif isinstance(x, np.ndarray):
        dtype = _NP_NAMES.get(x.dtype) or x.dtype.name  # the dict: dtype.name costs ~20 us
        if not x.flags["C_CONTIGUOUS"]:
            raise TypeError("%s: array is not C-contiguous" % what)
        if writable and not x.flags["WRITEABLE"]:
            raise TypeError("%s: array is read-only" % what)
        addr, count = x.ctypes.data, x.size
    else:
        raise TypeError("%s: expected a numpy array, a torch tensor or a Ptr, got %s" % (what, type(x).__name__))
    if dtype not in dtypes:
        raise TypeError("%s: expected %s elements, got %s" % (what, " or ".join(dtypes), dtype))
    return addr, count, dtype


_FLOATS = ("float32", "float16", "bfloat16")
_F32 = ("float32",)


def _float_ptr(x, what, writable=False):
    """(address, element count) of a float32 vector."""
    return _view(x, what, _F32, writable)[:2]


def _bytes_ptr(msg):
    """(address, length, keep-alive object) of a message: bytes, bytearray, memoryview, a numpy
    array (its bytes), a uint8 torch tensor or a uint8 Ptr."""
    if isinstance(msg, Ptr) or (hasattr(msg, "data_ptr") and hasattr(msg, "is_contiguous")):
        addr, n, _ = _view(msg, "message", ("uint8",))
        return addr, n, msg
    a = msg if isinstance(msg, np.ndarray) else np.frombuffer(msg, dtype=np.uint8)
    if a.dtype != np.uint8 or not a.flags["C_CONTIGUOUS"]:
        a = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    return a.ctypes.data, a.size, a


def _dtype_name(dtype):
    """"float32", "float16" or "bfloat16" from a name or a numpy or torch dtype; ValueError otherwise."""
    name = dtype if isinstance(dtype, str) else (np.dtype(dtype).name if isinstance(dtype, (type, np.dtype))
                                                 else str(dtype).replace("torch.", ""))
    if name not in DTYPES:
        raise ValueError("dtype: %r is not one of %s" % (dtype, ", ".join(DTYPES)))
    return name


def _new_floats(n, dtype):
    """A new vector of n elements: numpy for float32 and float16, torch for bfloat16 (numpy has none)."""
    if dtype == "bfloat16":
        import torch
        return torch.empty(n, dtype=torch.bfloat16)
    return np.empty(n, dtype=dtype)


def _result(out, addr, count, dtype):
    """The first `count` elements of out, as the kind of buffer out is."""
    return Ptr(addr, count, dtype) if isinstance(out, Ptr) else out[:count]


def _enum(name, value, names):
    if isinstance(value, str):
        if value.lower() not in names:
            raise ValueError("%s: %r is not one of %s" % (name, value, ", ".join(names)))
        return names[value.lower()]
    return int(value)


def _params(bits=0, seed=0, step=0, stream=0, bucket=0, rounding=0, norm=0, checksum=0, coder=0, scheme=0,
            alpha=0.0, levels=None, k=0, threshold=0.0, unbiased=0, index_coder=0):
    """A Params from the keyword arguments every encoding call takes: dq_params's fields, where
    0 is the library's default (bits 4 for QSGD, bucket 512, QSGD, stochastic, L2, the default
    coder; the sparse schemes need these fields left at 0); the enums as constants or names
    (SCHEMES, ROUNDINGS, NORMS, CODERS). levels (TRUNC_NU): a float32 vector, kept alive by
    the Params."""
    p = Params()
    p.bits = bits
    p.bucket = bucket
    p.scheme = _enum("scheme", scheme, SCHEMES)
    p.rounding = _enum("rounding", rounding, ROUNDINGS)
    p.norm = _enum("norm", norm, NORMS)
    p.seed = seed & 0xFFFFFFFFFFFFFFFF
    p.step = step & 0xFFFFFFFFFFFFFFFF
    p.stream = stream & 0xFFFFFFFF
    p.checksum = checksum
    p.coder = _enum("coder", coder, CODERS)
    p.alpha = alpha
    if levels is not None:
        p.levels = ctypes.cast(_float_ptr(levels, "levels")[0], ctypes.POINTER(ctypes.c_float))
        p._keep = levels
    p.k = k
    p.threshold = threshold
    p.unbiased = unbiased
    p.index_coder = index_coder
    return p


# ---------------------------------------------------------------- codec
# Every encoding call takes dq_params's fields as keyword arguments (_params): bits, seed, step,
# stream, bucket, rounding, norm, checksum, coder, scheme, alpha, levels, k, threshold,
# unbiased, index_coder.
def encode_bound(n, bits):
    """dq_encode_bound: the largest level-scheme message of n elements at `bits` bits, any params
    and coder (a receiver's buffer); 0 if invalid."""
    return int(lib.dq_encode_bound(n, bits))


def encode_bound_coded(n, bits):
    """dq_encode_bound_coded: a sender's buffer size with which any coder succeeds and
    coder="auto" always sends the smallest form; 0 if invalid."""
    return int(lib.dq_encode_bound_coded(n, bits))


def encode_capacity(n, bits=0, bucket=0, **params):
    """dq_encode_capacity: the out size encode() needs for these params and n; the exact size
    written for the fixed layout, at most this for the others."""
    p = _params(bits, bucket=bucket, **params)
    size = ctypes.c_size_t()
    _check(lib.dq_encode_capacity(ctypes.byref(p), n, ctypes.byref(size)), "dq_encode_capacity")
    return size.value


def encode(x, bits=0, seed=0, step=0, stream=0, residual=None, *, out=None, **params):
    """dq_encode_typed: quantize x (float32, float16 or bfloat16) into a message.

    residual: None, or error-feedback memory of x's length (float32, float16 or bfloat16,
    writable): the message then carries x + residual and residual becomes (x + residual) -
    decoded, rounded to its dtype. The bytes are those of the float32 path on float(x).
    out: where to write (uint8, at least encode_capacity(); at least encode_bound_coded() for a
    forced coder to be kept); by default a new np.uint8 array of encode_capacity() bytes.
    Returns the message: out[:length] (a Ptr of that length when out is a Ptr)."""
    xp, n, xt = _view(x, "encode x", _FLOATS)
    rp, rt = None, "float32"
    if residual is not None:
        rp, rn, rt = _view(residual, "encode residual", _FLOATS, writable=True)
        if rn != n:
            raise ValueError("encode: residual has %d elements, x has %d" % (rn, n))
    p = _params(bits, seed, step, stream, **params)
    if out is None:
        size = ctypes.c_size_t()
        _check(lib.dq_encode_capacity(ctypes.byref(p), n, ctypes.byref(size)), "dq_encode_capacity")
        out = np.empty(size.value, dtype=np.uint8)
    op, cap, _ = _view(out, "encode out", ("uint8",), writable=True)
    length = ctypes.c_size_t()
    _check(lib.dq_encode_typed(ctypes.byref(p), DTYPES[xt], xp, n, DTYPES[rt], rp, op, cap, ctypes.byref(length)),
           "dq_encode")
    return _result(out, op, length.value, "uint8")


def range_align(n, bits=0, bucket=0, **params):
    """dq_range_align: the range granularity of an n-element message, lcm(256, bucket) capped
    at n: a multiple of it starts a whole dqsgd bucket (scale) and a whole payload block. 0 for
    invalid params or n = 0."""
    p = _params(bits, bucket=bucket, **params)
    return int(lib.dq_range_align(ctypes.byref(p), n))


def header_read(msg):
    """dq_header_read: validate a message header; returns a Header (count, msg_size, bits...)."""
    ptr, n, _keep = _bytes_ptr(msg)
    h = Header()
    _check(lib.dq_header_read(ptr, n, ctypes.byref(h)), "dq_header_read")
    return h


def verify(msg):
    """dq_verify: check the header and, when the message carries one, the payload checksum,
    without decoding (the range decoders do not check the checksum)."""
    ptr, n, _keep = _bytes_ptr(msg)
    _check(lib.dq_verify(ptr, n), "dq_verify")


def _decode_out(n, out, dtype, what):
    """(out, address, dtype) of the output of n decoded elements: out, else a new vector of dtype."""
    if out is None:
        out = _new_floats(n, _dtype_name(dtype))
    op, cap, ot = _view(out, what, _FLOATS, writable=True)
    if cap < n:
        raise ValueError("%s: %d elements, the message has %d" % (what, cap, n))
    return out, op, ot


def decode(msg, out=None, dtype="float32"):
    """dq_decode_typed: the message's values, rounded to out's dtype (float32, float16 or
    bfloat16): written into out (at least the element count), else into a new vector of dtype
    (numpy; a torch tensor for bfloat16). Returns the count elements decoded."""
    h = header_read(msg)
    ptr, n, _keep = _bytes_ptr(msg)
    out, op, ot = _decode_out(h.count, out, dtype, "decode out")
    _check(lib.dq_decode_typed(ptr, n, DTYPES[ot], op, h.count), "dq_decode")
    return _result(out, op, h.count, ot)


def decode_add(msg, weight, acc):
    """dq_decode_add_typed: acc = round(float(acc) + weight * decoded) in place (acc: float32,
    float16 or bfloat16, exactly the message's element count). For float32 bit-identical to
    decode() followed by that loop in float32."""
    ap, an, at = _view(acc, "decode_add acc", _FLOATS, writable=True)
    ptr, n, _keep = _bytes_ptr(msg)
    _check(lib.dq_decode_add_typed(ptr, n, ctypes.c_float(weight), DTYPES[at], ap, an), "dq_decode_add")
    return acc


def decode_range(msg, begin, end, out=None):
    """dq_decode_range: elements begin..end-1 of the message into out[0..end-begin) (float32;
    a new array by default). begin a multiple of range_align(), end one or the count. Checks the
    header, the range's scales and padding but not the payload checksum: verify() first. Reads
    the fixed layout and rANS messages; Elias messages are one stream (DQError)."""
    m = end - begin
    if out is None:
        out = np.empty(max(m, 0), np.float32)
    op, cap = _float_ptr(out, "decode_range out", writable=True)
    if cap < m:
        raise ValueError("decode_range out: %d elements, the range has %d" % (cap, m))
    ptr, n, _keep = _bytes_ptr(msg)
    _check(lib.dq_decode_range(ptr, n, begin, end, op), "dq_decode_range")
    return _result(out, op, m, "float32")


def decode_add_range(msg, begin, end, weight, acc):
    """dq_decode_add_range: acc[0..end-begin) += weight * elements begin..end-1 (float32), as
    decode_range() reads them."""
    ap, cap = _float_ptr(acc, "decode_add_range acc", writable=True)
    if cap < end - begin:
        raise ValueError("decode_add_range acc: %d elements, the range has %d" % (cap, end - begin))
    ptr, n, _keep = _bytes_ptr(msg)
    _check(lib.dq_decode_add_range(ptr, n, begin, end, ctypes.c_float(weight), ap), "dq_decode_add_range")
    return acc


class Message:
    """dq_message_open: a message opened once (header, size, payload checksum); `header` is its
    Header, and decode() / decode_add() do not parse it again (float32; other dtypes go through
    the typed decoders, which do). Keeps a reference to msg, whose bytes must not change while
    the Message is used."""

    def __init__(self, msg):
        ptr, n, keep = _bytes_ptr(msg)
        self._keep = (msg, keep)
        self._src = (ptr, n)
        self._m = (ctypes.c_uint64 * ((_MESSAGE_SIZE + 7) // 8))()  # 8-byte aligned, as dq_message needs
        _check(lib.dq_message_open(ptr, n, ctypes.byref(self._m)), "dq_message_open")
        self.header = Header.from_buffer_copy(self._m, 0)  # dq_message's first member

    def decode(self, out=None, dtype="float32"):
        """dq_message_decode: the values into out or a new vector, as decode()."""
        count = self.header.count
        out, op, ot = _decode_out(count, out, dtype, "Message.decode out")
        if ot == "float32":
            _check(lib.dq_message_decode(ctypes.byref(self._m), op, count), "dq_message_decode")
        else:
            _check(lib.dq_decode_typed(self._src[0], self._src[1], DTYPES[ot], op, count), "dq_decode")
        return _result(out, op, count, ot)

    def decode_add(self, weight, acc):
        """dq_message_decode_add: acc += weight * decoded, in place, as decode_add()."""
        ap, an, at = _view(acc, "Message.decode_add acc", _FLOATS, writable=True)
        if at == "float32":
            _check(lib.dq_message_decode_add(ctypes.byref(self._m), ctypes.c_float(weight), ap, an),
                   "dq_message_decode_add")
        else:
            _check(lib.dq_decode_add_typed(self._src[0], self._src[1], ctypes.c_float(weight), DTYPES[at], ap, an),
                   "dq_decode_add")
        return acc


def message_norm2(msg):
    """dq_message_norm2: ||x||^2 of the encoded vector from an L2-scaled message's scales."""
    ptr, n, _keep = _bytes_ptr(msg)
    v = ctypes.c_double()
    _check(lib.dq_message_norm2(ptr, n, ctypes.byref(v)), "dq_message_norm2")
    return v.value


def sparse_indices(msg):
    """The indices a top-k or threshold message sends, ascending (np.uint32): its index stream
    (doc/FORMAT.md 20.1: k at byte 48, the stream's length L at 56, the stream at 64) through
    dq_index_decode, after dq_header_read has validated the message."""
    h = header_read(msg)
    if h.scheme not in (SCHEME_TOPK, SCHEME_THRESHOLD):
        raise ValueError("sparse_indices: a scheme %d message; top-k (%d) and threshold (%d) carry indices" % (
            h.scheme, SCHEME_TOPK, SCHEME_THRESHOLD))
    ptr, n, _keep = _bytes_ptr(msg)
    length = int.from_bytes(ctypes.string_at(ptr + 56, 8), "little")
    idx = np.empty(h.nnz, dtype=np.uint32)
    k = ctypes.c_size_t()
    _check(lib.dq_index_decode(ptr + 64, length, idx.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), idx.size,
                               ctypes.byref(k)), "dq_index_decode")
    return idx[: k.value]


def message_bits(n, bits, bucket=BUCKET_DEFAULT):
    """dq_message_bits: exact size in bits of a QSGD message (header included); 0 if invalid."""
    return float(lib.dq_message_bits(n, bits, bucket))


def convert(src, dst):
    """dq_convert: dst[0..n) = src[0..n) converted between float32, float16 and bfloat16 (round
    to nearest even; widening is exact), n = len(src) <= len(dst). Returns dst."""
    sp, n, st = _view(src, "convert src", _FLOATS)
    dp, dn, dt = _view(dst, "convert dst", _FLOATS, writable=True)
    if dn < n:
        raise ValueError("convert: dst has %d elements, src %d" % (dn, n))
    _check(lib.dq_convert(DTYPES[st], sp, n, DTYPES[dt], dp), "dq_convert")
    return dst


# ---------------------------------------------------------------- jobs
def job_work_size(n, parts, bits=0, **params):
    """dq_job_work_size: the bytes of work a Job of these params, n elements and `parts` parts needs."""
    p = _params(bits, **params)
    size = ctypes.c_size_t()
    _check(lib.dq_job_work_size(ctypes.byref(p), n, parts, ctypes.byref(size)), "dq_job_work_size")
    return size.value


class Job:
    """dq_job_*: one message of n elements encoded in parts, e.g. by threads (ctypes releases
    the GIL during each call): the bytes encode() writes into an out of encode_bound_coded()
    bytes or more. Four phases; within one the parts may run concurrently in any order, and a phase
    starts when every call of the one before has returned:

        job = dqsgd.Job(n, parts=2, bits=4, seed=s, step=t, stream=rank)   # dq_job_init
        for j in range(job.parts): job.quantize(j, x, residual)   # x, residual: the whole vectors
        job.plan()
        for j in range(job.parts): job.code(j)
        msg = job.finish()                                         # out[:length]

    parts: the most parts wanted; job.parts is how many the vector was cut into (whole rANS
    chunks and range units), job.range(j) part j's elements. out: as encode()'s (at least
    encode_capacity() bytes; a new np.uint8 array by default); work: uint8 scratch of at least
    job_work_size() bytes (a new array by default; pass one to reuse it). out, work and the
    Job stay in use until finish() returns. x and residual are float32 (convert() others)."""

    def __init__(self, n, parts, bits=0, *, out=None, work=None, **params):
        self._p = _params(bits, **params)
        self.n = n
        if out is None:
            out = np.empty(encode_capacity(n, bits, **params), np.uint8)
        if work is None:
            work = np.empty(job_work_size(n, parts, bits, **params), np.uint8)
        self._out, self._work = out, work
        op, cap, _ = _view(out, "Job out", ("uint8",), writable=True)
        wp, wcap, _ = _view(work, "Job work", ("uint8",), writable=True)
        self._op = op
        self._job = (ctypes.c_uint64 * ((_JOB_SIZE + 7) // 8))()  # 8-byte aligned, as dq_job needs
        _check(lib.dq_job_init(self._job, ctypes.byref(self._p), n, parts, op, cap, wp, wcap), "dq_job_init")
        self.parts = ctypes.c_size_t.from_buffer(self._job, _JOB_OFF["parts"]).value

    def range(self, j):
        """dq_job_range: part j's elements (begin, end)."""
        b, e = ctypes.c_size_t(), ctypes.c_size_t()
        _check(lib.dq_job_range(self._job, j, ctypes.byref(b), ctypes.byref(e)), "dq_job_range")
        return b.value, e.value

    def quantize(self, j, x, residual=None):
        """dq_job_quantize: part j quantizes its elements of x (the whole float32 vector) and,
        with residual (the whole error-feedback memory), updates its slice of it."""
        xp, xn = _float_ptr(x, "Job.quantize x")
        rp, rn = _float_ptr(residual, "Job.quantize residual", writable=True) if residual is not None else (None, xn)
        if xn != self.n or rn != self.n:
            raise ValueError("Job.quantize: x and residual need %d elements, got %d and %d" % (self.n, xn, rn))
        _check(lib.dq_job_quantize(self._job, j, xp, rp), "dq_job_quantize")

    def plan(self):
        """dq_job_plan: once, after every quantize(): picks the coder (the first failed part's status)."""
        _check(lib.dq_job_plan(self._job), "dq_job_plan")

    def code(self, j):
        """dq_job_code: part j codes its rANS chunks (nothing for the other coders)."""
        _check(lib.dq_job_code(self._job, j), "dq_job_code")

    def finish(self):
        """dq_job_finish: once, after every code(): assembles the message; returns it (out[:length])."""
        length = ctypes.c_size_t()
        _check(lib.dq_job_finish(self._job, ctypes.byref(length)), "dq_job_finish")
        return _result(self._out, self._op, length.value, "uint8")


# ---------------------------------------------------------------- shared-scale integer sums
# dq_shared_*: workers agree on one power-of-two unit per bucket (an elementwise max of their
# exponents), quantize to integer levels on it and sum the levels with a plain integer
# allreduce; the sum times the unit is exactly the float sum of the workers' decoded vectors.
_INT_TYPES = {8: np.int8, 16: np.int16, 32: np.int32}


def _int_ptr(a, dtype, what, n=None, writable=False):
    """(address, count) of an integer vector of numpy type dtype (np.int8, np.int16, np.int32):
    a numpy array, torch CPU tensor or Ptr; n, when given, is the element count it must have."""
    ptr, cnt, _ = _view(a, what, (np.dtype(dtype).name,), writable)
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
