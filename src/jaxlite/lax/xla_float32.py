"""Float32 transcendental functions rounded as XLA's CPU backend rounds them.

NumPy's SIMD routines and XLA:CPU (what JAX runs) compute `exp`, `tanh`, `sin`, ...
differently, and the last bits show: `jnp.exp(1.0)` prints 2.7182817 in JAX, and
NumPy's float32 exp rounds to 2.718282. This module computes them as XLA does, so the
results equal JAX's bit for bit:

- `exp`, `log`, `log1p`, `expm1`, `tanh`, `logistic`, `erf`, `erf_inv` are XLA's own
  polynomial and rational approximations, and `sinh`, `cosh`, `exp2`, `asin`, `acos`,
  `asinh`, `acosh`, `atanh` XLA's expansions of those operations; the algorithms are
  in `jaxlite.backend.xla_kernels`, written once against a small float32 arithmetic
  (the native backend runs the same kernels on LLVM IR values);
- `sin`, `cos`, `tan`, `atan`, `atan2`, `pow`, `cbrt` are calls of the C library's
  `sinf`, `cosf`, ... in XLA, so here too (ctypes, elementwise; where no C math
  library can be loaded, float64 NumPy results rounded to float32, within an ulp).

This module supplies that arithmetic twice: on float32 NumPy arrays (with an exactly
rounded fused multiply-add emulated in float64), and on Python floats for 0-d values,
where a NumPy call (about a microsecond) would cost more than the arithmetic. XLA runs
with denormals-are-zero and flush-to-zero; both are emulated. 16-bit floats are
computed in float32 and rounded, as XLA does, where XLA does (not for the operations
it expands in the 16-bit type: logistic, expm1, exp2, asin, ...).

The trade: an exact kernel costs 20 to 60 NumPy calls (the libm ones a C call per
element), 8 microseconds on a scalar and 30 to 100 on small arrays, where NumPy's ufunc
is one call within a few ulp. So only operations run one at a time (eager, the way
values are printed and explored) use the kernels, and only on arrays of at most
`jaxlite_xla_exact_math_limit` elements (jaxlite.config). Compiled code (`jit`, and
the eager calls of jnp functions that run compiled, `eager_jit`) keeps NumPy's ufuncs:
there jaxlite is for speed, and the cost would be paid on every call and every loop
iteration (a 50-op jitted function on 100 elements ran 20x slower, a 1,000-step scan
of a 64-wide tanh 15x). Its results are within a few ulp of JAX's, as XLA's own jit
and eager results may differ where XLA fuses operations. jaxlite.random uses the
kernels at every size and under jit (`xla_exact`), since its samples must equal JAX's.

JAX's own results depend on the array size for some sizes below about 64 elements
(XLA's compiler then calls the C library's `expf` for 3, 5, 6 or 7 elements, inlines
an `atan` polynomial instead of `atanf`, ...): the kernels reproduce JAX's results on
scalars and on large arrays, which agree.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import operator
import platform
import struct
import sys

import numpy as np
from ml_dtypes import bfloat16

from jaxlite.backend import xla_kernels as _kernels
from jaxlite.config import current
from jaxlite.core import eager_impl_rules, impl_rules

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_I32 = np.dtype(np.int32)


def _h(bits):
    """The float32 with IEEE bits `bits`."""
    return np.uint32(bits).view(np.float32)


def _f(v):
    return np.float32(v)


_TINY = _f(np.finfo(np.float32).tiny)
# Products below this flush to zero under flush-to-zero: x86 detects a tiny result
# after rounding to float32's precision (unbounded exponent), so a product just below
# the smallest normal that rounds up to it stays (`mul_ftz`).
_FTZ_BELOW = float(_TINY) * (1 - 2.0**-25)
_ONE = _f(1)
_HALF = _f(0.5)
_ZERO = _f(0)
_INF = _f(np.inf)

# --------------------------------------------------------------------------------------
# Bounded memory: elementwise functions on large arrays, in pieces

_CHUNK = 1 << 16  # elements per piece: the float64 temporaries of a piece stay small


def _in_pieces(fn, args, dtype):
    """`fn(*args)` for an elementwise `fn` of broadcastable NumPy values: directly
    for at most `_CHUNK` elements, else piece by piece into one preallocated result,
    so the temporaries `fn` makes (float64 sums, masks, a kernel's intermediates)
    take memory for one piece at a time, not for the whole array. The values are
    the same: each element is computed alone."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    if math.prod(shape) <= _CHUNK:
        return fn(*args)
    out = np.empty(shape, dtype)
    _fill_pieces(fn, [np.broadcast_to(a, shape) for a in args], out)
    return out


def _fill_pieces(fn, args, out):
    inner = math.prod(out.shape[1:])
    if inner > _CHUNK:  # rows too long: one row at a time, split further
        for i in range(out.shape[0]):
            _fill_pieces(fn, [a[i] for a in args], out[i])
        return
    step = max(1, _CHUNK // max(inner, 1))
    for i in range(0, out.shape[0], step):
        out[i : i + step] = fn(*[a[i : i + step] for a in args])


# --------------------------------------------------------------------------------------
# An exactly rounded fused multiply-add


def _two_sum(a, b):
    """`s, e` with `s = fl(a + b)` and `a + b == s + e` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    """`p, e` with `p = fl(a * b)` and `a * b == p + e` exactly (Dekker, Veltkamp)."""
    p = a * b

    def halves(x):
        t = 134217729.0 * x
        hi = t - (t - x)
        return hi, x - hi

    ah, al = halves(a)
    bh, bl = halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma_narrow(a, b, c, dtype):
    """fma for dtypes whose products are exact in float64 (float32 and narrower).

    `a * b + c` is rounded once to float64 and once to `dtype`; the second rounding is
    wrong only when the first lands exactly halfway between two `dtype` values (the
    float64 bits below `dtype`'s mantissa read 100...0), and then the sign of the first
    rounding's error says which way the exact sum lies.
    """
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b
        s = p + c
        r = s.astype(dtype)
        dropped = 52 - int(np.finfo(dtype).nmant)
        low = np.asarray(s).view(np.uint64) & np.uint64((1 << dropped) - 1)
        tie = low == np.uint64(1 << (dropped - 1))
        if np.any(tie):
            # Rare: redo the suspicious elements only.
            p, c, s = (np.broadcast_to(v, tie.shape)[tie] for v in (p, c, s))
            _, err = _two_sum(p, c)
            near = s.astype(dtype)
            toward = np.where(s > near.astype(np.float64), np.inf, -np.inf)
            other = np.nextafter(near, toward.astype(dtype))
            fix = (s != near.astype(np.float64)) & (err != 0) & np.isfinite(err)
            closer = np.where(err > 0, np.maximum(near, other), np.minimum(near, other))
            r = np.array(np.broadcast_to(r, tie.shape))
            r[tie] = np.where(fix, closer, near)
    return r


def _fma_f64(a, b, c):
    """Exactly rounded float64 fma: Boldo and Melquiond's emulation by rounding to odd."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        v, ve = _two_sum(tl, ul)
        even = (v.view(np.int64) & 1) == 0
        away = np.nextafter(v, np.where(ve > 0, np.inf, -np.inf))
        v = np.where((ve != 0) & even, away, v)
        out = th + v
        exact = np.isfinite(out) & np.isfinite(uh) & np.isfinite(ul)
        return np.where(exact, out, a * b + c)


_TIE_BITS = np.uint64((1 << 29) - 1)  # the float64 mantissa bits float32 drops
_TIE = np.uint64(1 << 28)  # ... reading 100...0: halfway between two float32 values


def fma_f32(a, b, c):
    """`a * b + c` rounded once to float32, for float32 operands, in as few NumPy
    calls as possible: the product is exact in float64, so only a float64 sum that
    lands on a float32 tie needs the careful path. Large arrays go in pieces (the
    float64 sums take twice the result's memory)."""
    return _in_pieces(_fma_f32, (a, b, c), _F32)


def _fma_f32(a, b, c):
    s = np.add(np.multiply(a, b, dtype=_F64), c, dtype=_F64)
    if ((s.view(_U64) & _TIE_BITS) == _TIE).any():
        out = _fma_narrow(a, b, c, _F32)
        return out[()] if out.ndim == 0 else out
    return s.astype(_F32)  # a NumPy scalar for scalar operands, as fma_values gives


def fma_values(a, b, c):
    """`a * b + c` with one rounding, on NumPy values of one float dtype."""
    found = {getattr(v, "dtype", None) for v in (a, b, c)}
    dtype = found.pop() if len(found) == 1 else None
    if dtype is None:
        dtype = np.result_type(a, b, c)
    if dtype == _F32:
        return fma_f32(a, b, c)
    if dtype == np.float64:
        out = _in_pieces(_fma_f64, (a, b, c), dtype)
    else:
        out = _in_pieces(lambda *v: _fma_narrow(*v, dtype), (a, b, c), dtype)
    return out[()] if out.ndim == 0 else out


# --------------------------------------------------------------------------------------
# The C library's float functions (XLA calls sinf, cosf, tanf, atanf, atan2f, powf and
# cbrtf), through ctypes

_libm_functions = {}


def _libm_function(name, arity):
    """The C library's float function `name`, or None where it cannot be loaded."""
    if name not in _libm_functions:
        try:
            library = ctypes.CDLL(ctypes.util.find_library("m"))
            fun = getattr(library, name)
        except (OSError, AttributeError, TypeError):
            fun = None
        else:
            fun.restype = ctypes.c_float
            fun.argtypes = [ctypes.c_float] * arity
        _libm_functions[name] = fun
    return _libm_functions[name]


_NUMPY_FALLBACK = {
    "sinf": np.sin,
    "cosf": np.cos,
    "tanf": np.tan,
    "atanf": np.arctan,
    "atan2f": np.arctan2,
    "powf": np.power,
    "cbrtf": np.cbrt,
}
_CBRT_OF_SUBNORMAL = _h(0xA6214518)  # glibc's cbrtf under denormals-are-zero

# XLA calls these with the SSE flags denormals-are-zero and flush-to-zero set, and what
# a C library then returns for a subnormal input is its own: glibc 2.36's tanf returns
# the input, 2.41's reads it as zero; 2.36's cbrtf reads garbage, 2.41's computes the
# cube root; 2.41's atan2f gives NaN. So where the flags can be set around the C call
# (CPython on x86-64 glibc: fesetenv), the calls here set them too and get this
# machine's answers, as XLA does; elsewhere glibc 2.36's are modelled.
_DAZ_FTZ = 0x8040  # the MXCSR bits
_FENV_T = ctypes.c_uint32 * 8  # glibc's x86-64 fenv_t: x87 state, then the MXCSR


class _RawFloat(ctypes.c_float):
    """A result type ctypes returns unconverted: read (`.value`) once the flags are
    off again, a subnormal result is not flushed by the reading."""


_flag_setters = []


def _denormal_flag_setters():
    """(fegetenv, fesetenv) where XLA's flags can be set around a C call, else None."""
    if not _flag_setters:
        _flag_setters.append(_find_flag_setters())
    return _flag_setters[0]


def _find_flag_setters():
    if sys.implementation.name != "cpython":  # PyPy's ctypes is Python code
        return None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    if platform.libc_ver()[0] != "glibc":
        return None
    try:
        library = ctypes.CDLL(ctypes.util.find_library("m"))
        get, put = library.fegetenv, library.fesetenv
    except (OSError, AttributeError, TypeError):
        return None
    saved, flushed, seen = _FENV_T(), _FENV_T(), _FENV_T()
    if get(saved) != 0:
        return None
    flushed[:] = saved[:]
    flushed[7] |= _DAZ_FTZ
    put(flushed)
    get(seen)
    put(saved)
    return (get, put) if seen[7] & _DAZ_FTZ == _DAZ_FTZ else None


def _call_with_xla_flags(name, columns):
    """C's `name` on the float32 values in `columns` (one list per argument) with
    denormals-are-zero and flush-to-zero set, as XLA calls it; None where the flags
    cannot be set here."""
    setters = _denormal_flag_setters()
    fun = _libm_function(name, len(columns))
    if setters is None or fun is None:
        return None
    if name not in _raw_functions:
        raw = ctypes.CDLL(ctypes.util.find_library("m"))[name]  # a second pointer
        raw.restype, raw.argtypes = _RawFloat, [ctypes.c_float] * len(columns)
        _raw_functions[name] = raw
    raw = _raw_functions[name]
    get, put = setters
    # Converted to C floats before the flags are set (flush-to-zero would flush a
    # subnormal while rounding the Python float).
    args = [list(map(ctypes.c_float, column)) for column in columns]
    saved, flushed = _FENV_T(), _FENV_T()
    get(saved)
    flushed[:] = saved[:]
    flushed[7] |= _DAZ_FTZ
    put(flushed)
    try:
        results = list(map(raw, *args))
    finally:
        put(saved)
    return [r.value for r in results]


_raw_functions = {}


def libm_reads_subnormals():
    """Whether the C library's functions are called as XLA calls them, the flags set
    (`_call_with_xla_flags`), so that a subnormal input handed to them unchanged is
    read as this C library reads it, as in XLA. Where the flags cannot be set, the
    kernels flush such inputs themselves, modelling glibc 2.36's reading."""
    return _denormal_flag_setters() is not None


def libm_values(name, *args):
    """C's float32 function `name` (`"sinf"`, `"powf"`, ...) elementwise on NumPy
    values, as XLA calls it: with denormals-are-zero and flush-to-zero set, so that a
    computed subnormal result becomes zero, while one returned as given (sinf, tanf,
    atanf of a subnormal return it) stays; cbrtf of a subnormal reads garbage. Large
    arrays go in pieces (a Python float per element while a piece is converted)."""
    args = [np.asarray(a, _F32) for a in args]
    return _in_pieces(lambda *v: _libm_values(name, *v), args, _F32)


def _libm_values(name, *args):
    args = np.broadcast_arrays(*[np.asarray(a, _F32) for a in args])
    fun = _libm_function(name, len(args))
    with np.errstate(all="ignore"):
        if fun is None:
            fallback = _NUMPY_FALLBACK[name]
            out = fallback(*[a.astype(np.float64) for a in args]).astype(_F32)
        else:
            flat = [a.ravel().tolist() for a in args]
            flushed = _call_with_xla_flags(name, flat)
            if flushed is not None:
                out = np.array(flushed, _F32).reshape(args[0].shape)
                return out[()] if out.ndim == 0 else out
            out = np.fromiter(map(fun, *flat), _F32, count=args[0].size)
            out = out.reshape(args[0].shape)
        computed = out.view(_U32) != args[0].view(_U32)
        out = np.where(computed & (np.abs(out) < _TINY), out * _ZERO, out)
        if name == "cbrtf":
            subnormal = (np.abs(args[0]) < _TINY) & (args[0] != _ZERO)
            out = np.where(subnormal, _CBRT_OF_SUBNORMAL, out)
    return out[()] if out.ndim == 0 else out


# --------------------------------------------------------------------------------------
# The kernels' arithmetic (see backend/xla_kernels.py): on float32 NumPy arrays, and
# on Python floats holding float32 values. Comparisons and mask logic are Python's
# operators on both (the kernels' constants are float32 values: exact either way).

_COMPARISONS = tuple(
    staticmethod(op)
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq)
)


class _ArrayMath:
    """Float32 arithmetic on NumPy arrays. `fma` computes in float64 (the product is
    exact, the sum rounded once) and rounds to float32; that double rounding is wrong
    only where the float64 sum lies exactly halfway between two float32 values and
    the float64 addition had rounded onto it. Each `fma` marks those (rare) elements
    in `suspects` as it goes, keeping nothing else, and `_run` recomputes them with
    `exact=True` (`fma_f32` throughout)."""

    __slots__ = ("suspects", "exact")

    mul = staticmethod(np.multiply)
    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    div = staticmethod(np.divide)
    sqrt = staticmethod(np.sqrt)
    neg = staticmethod(np.negative)
    abs = staticmethod(np.abs)
    floor = staticmethod(np.floor)
    isnan = staticmethod(np.isnan)
    lt, le, gt, ge, eq = _COMPARISONS
    or_, and_ = staticmethod(operator.or_), staticmethod(operator.and_)

    def __init__(self, exact=False):
        self.suspects = None  # a boolean mask (broadcastable), or None: no tie yet
        self.exact = exact

    def fma(self, a, b, c):
        if self.exact:
            return fma_f32(_F32.type(a), _F32.type(b), _F32.type(c))
        s = np.multiply(a, b, dtype=_F64)
        s += c
        tie = np.bitwise_and(s.view(_U64), _TIE_BITS) == _TIE
        if tie.any():
            # A tie the float64 addition rounded onto (an exact sum rounds right).
            _, err = _two_sum(np.multiply(a, b, dtype=_F64), np.asarray(c, _F64))
            tie &= err != 0
            self.suspects = tie if self.suspects is None else self.suspects | tie
        return s.astype(_F32)

    @staticmethod
    def where(cond, a, b):
        return np.where(cond, _F32.type(a), _F32.type(b))

    @staticmethod
    def clamp(lo, x, hi):
        # NaN propagates, as XLA's compare-and-select clamps do.
        return np.minimum(np.maximum(x, _F32.type(lo)), _F32.type(hi))

    @staticmethod
    def daz(x):
        return np.where(np.abs(x) < _TINY, x * _ZERO, x)

    @staticmethod
    def mul_ftz(a, b):
        p = np.multiply(a, b, dtype=_F64)  # exact
        return np.where(np.abs(p) < _FTZ_BELOW, p * 0.0, p).astype(_F32)

    @staticmethod
    def copysign_one(x):
        return np.copysign(_ONE, x)

    @staticmethod
    def pow2(n):
        return ((n.astype(_I32) << 23) + np.int32(0x3F800000)).view(_F32)

    @staticmethod
    def frexp(x):
        bits = x.view(_U32)
        e = ((bits >> np.uint32(23)).astype(_I32) - np.int32(126)).astype(_F32)
        mant = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F32)
        return mant, e

    @staticmethod
    def libm(name, *args):
        return libm_values(name, *args)

    libm_reads_subnormals = staticmethod(libm_reads_subnormals)


_pack_f = struct.Struct("f").pack
_unpack_f = struct.Struct("f").unpack
_TINY_F = float(_TINY)
_INF_F = math.inf


def _r32(v):
    """The Python float `v` rounded to float32 (to nearest, ties to even)."""
    return _unpack_f(_pack_f(v))[0]


class _ScalarMath:
    """The same float32 arithmetic on Python floats (0-d inputs): one float64
    operation and one rounding to float32 per step, a few hundred nanoseconds where
    a NumPy call costs a microsecond."""

    exact = True
    lt, le, gt, ge, eq = _COMPARISONS
    or_, and_ = staticmethod(operator.or_), staticmethod(operator.and_)

    @staticmethod
    def mul(a, b):
        return _r32(a * b)

    @staticmethod
    def add(a, b):
        return _r32(a + b)

    @staticmethod
    def sub(a, b):
        return _r32(a - b)

    @staticmethod
    def div(a, b):
        if b:
            return _r32(a / b)
        if a != a or not a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)

    @staticmethod
    def fma(a, b, c):
        s = a * b + c
        r = _r32(s)
        d = s - r
        if d and d == d:
            other = r + d + d
            if _r32(other) == other:
                # s lies halfway between r and other: if the float64 sum was
                # rounded, the exact sum lies on the side of its rounding error.
                p = a * b
                bb = s - p
                err = (p - (s - bb)) + (c - bb)
                if err and (err > 0) == (other > r):
                    return other
        return r

    @staticmethod
    def sqrt(x):
        if x > 0.0 and x != _INF_F:
            return _r32(math.sqrt(x))
        return x if x >= 0.0 or x != x else math.nan

    @staticmethod
    def neg(x):
        return -x

    @staticmethod
    def abs(x):
        return abs(x)

    @staticmethod
    def floor(x):
        return float(math.floor(x)) if abs(x) < _INF_F else x

    @staticmethod
    def isnan(x):
        return x != x

    @staticmethod
    def where(cond, a, b):
        return a if cond else b

    @staticmethod
    def clamp(lo, x, hi):
        if x != x:
            return x
        return hi if x > hi else lo if x < lo else x

    @staticmethod
    def daz(x):
        return x if abs(x) >= _TINY_F or x != x else x * 0.0

    @staticmethod
    def mul_ftz(a, b):
        p = a * b  # exact
        return p * 0.0 if abs(p) < _FTZ_BELOW else _r32(p)

    @staticmethod
    def copysign_one(x):
        return math.copysign(1.0, x)

    @staticmethod
    def pow2(n):
        if n != n:
            return 1.0  # z is NaN too
        return 0.0 if n == -127.0 else math.ldexp(1.0, int(n))

    @staticmethod
    def frexp(x):
        mant, e = math.frexp(x)
        return mant, float(e)

    libm_reads_subnormals = staticmethod(libm_reads_subnormals)

    @staticmethod
    def libm(name, *args):
        fun = _libm_function(name, len(args))
        if fun is None:
            return float(libm_values(name, *args))
        if name == "atanf" and libm_reads_subnormals():
            # XLA's atan is atan2(x, 1): on one element XLA:CPU calls atan2f (on
            # arrays, atanf). The two differ only where a C library reads a
            # subnormal under the flags its own way (glibc 2.41: NaN from atan2f).
            name, args = "atan2f", (args[0], 1.0)
        flushed = _call_with_xla_flags(name, [[a] for a in args])
        if flushed is not None:
            return flushed[0]
        out = fun(*args)
        x = args[0]
        if name == "cbrtf" and x and abs(x) < _TINY_F:
            return float(_CBRT_OF_SUBNORMAL)
        if out and abs(out) < _TINY_F and out != x:
            return out * 0.0  # computed subnormal results flush to zero
        return out


_SCALAR_MATH = _ScalarMath()


# --------------------------------------------------------------------------------------
# Running a kernel: dtypes, 0-d values, and the rare fma ties


_SCALAR_LOOP_MAX = 8  # elements; measured: about where the two cost the same


def _run(kernel, *args):
    """`kernel` on float32 (or 16-bit float) NumPy values, rounded as XLA does."""
    args = [np.asarray(a) for a in args]
    dtype = args[0].dtype
    if len(args) > 1:
        args = np.broadcast_arrays(*args)
    if args[0].ndim == 0:
        out = kernel(*[float(a) for a in args], _SCALAR_MATH)
        return np.float32(out) if dtype == _F32 else np.asarray(out, dtype)[()]
    if args[0].size <= _SCALAR_LOOP_MAX:
        # A few elements: one Python-float kernel each beats the NumPy calls.
        flat = zip(*[a.ravel().tolist() for a in args])
        out = np.array([kernel(*v, _SCALAR_MATH) for v in flat], _F32)
        out = out.reshape(args[0].shape)
        return out if dtype == _F32 else out.astype(dtype)
    xs = [a if a.dtype == _F32 else a.astype(_F32) for a in args]
    with np.errstate(all="ignore"):
        out = _in_pieces(lambda *v: _run_arrays(kernel, v), xs, _F32)
        return out if dtype == _F32 else out.astype(dtype)


def _run_arrays(kernel, xs):
    """`kernel` on float32 arrays of one shape (a piece of at most `_CHUNK`
    elements), the elements of a suspicious fma recomputed exactly."""
    m = _ArrayMath()
    out = kernel(*xs, m)
    if m.suspects is not None:
        ties = np.broadcast_to(m.suspects, out.shape)
        if ties.any():
            out = np.array(out)
            out[ties] = kernel(*[a[ties] for a in xs], _ArrayMath(exact=True))
    return out


_KERNELS = _kernels.KERNELS
KERNEL_NAMES = frozenset(_KERNELS)


def _public(name):
    kernel = _KERNELS[name]

    def fun(*args):
        return _run(kernel, *args)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"XLA:CPU's float32 `{name}` on NumPy values, bit for bit."
    return fun


exp, exp2, log, log1p, expm1 = (
    _public(n) for n in ("exp", "exp2", "log", "log1p", "expm1")
)
tanh, logistic, sinh, cosh = (_public(n) for n in ("tanh", "logistic", "sinh", "cosh"))
erf, erf_inv = _public("erf"), _public("erf_inv")
sin, cos, tan, atan, cbrt = (_public(n) for n in ("sin", "cos", "tan", "atan", "cbrt"))
asin, acos, asinh, acosh, atanh = (
    _public(n) for n in ("asin", "acos", "asinh", "acosh", "atanh")
)
atan2, pow = _public("atan2"), _public("pow")  # noqa: A001 (lax's name)


# --------------------------------------------------------------------------------------
# Rules for the lax primitives: exact kernels for small float32 arrays

_EXACT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float16, bfloat16))
# XLA computes these 16-bit operations' expansions (1 / (1 + exp(-x)), ...) in the
# 16-bit type around a float32 core, which the kernels do not follow.
_FLOAT32_ONLY = frozenset(
    {"logistic", "expm1", "exp2", "asin", "acos", "asinh", "acosh", "atanh"}
    | {"atan2", "pow"}
)


def exact_impl_rule(name, fallback):
    """An impl rule: the exact kernel `name` for float32 (or, unless the name is in
    `_FLOAT32_ONLY`, 16-bit float) operands of one dtype and at most
    `jaxlite_xla_exact_math_limit` elements, else `fallback` (the primitive's NumPy
    impl rule). The cheap dtype test comes first: this runs on every eager call."""
    kernel = _KERNELS[name]
    exact_dtypes = {_F32} if name in _FLOAT32_ONLY else _EXACT_DTYPES

    def impl(*args, **params):
        first = getattr(args[0], "dtype", None)
        if (
            first in exact_dtypes
            and all(getattr(a, "dtype", None) == first for a in args[1:])
            and max(np.size(a) for a in args) <= current().xla_exact_math_limit
        ):
            return [_run(kernel, *args)]
        return fallback(*args, **params)

    impl.__name__ = f"_{name}_impl"
    return impl


def use_exact_kernel(prim, name):
    """Give the lax primitive `prim` (its impl rule already registered with NumPy's
    function) the exact kernel `name` as its eager-only rule (`eager_impl_rules`, run
    by EvalTrace alone). Compiled code never reaches it: the backend reads
    `lowering_rules` and `impl_rules` only, so jit keeps NumPy's function."""
    eager_impl_rules[prim] = exact_impl_rule(name, impl_rules[prim])
