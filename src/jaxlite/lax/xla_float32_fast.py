"""XLA's float32 `erf` and `erf_inv` approximations for compiled code, in a few NumPy
calls.

The exact kernels (`xla_float32`) follow XLA's rounding step by step, 30 to 60 NumPy
calls each, and NumPy has no `erf` of its own (`math.erf` elementwise costs a Python
call per element). Code compiled to the NumPy tier (`jit`) uses these instead (the
native tier emits the exact kernels as IR): the same rational function and polynomials
(`jaxlite.backend.xla_kernels`, the float32 coefficients XLA uses), evaluated in
float32 as one matrix product of the coefficients and the powers of the argument
(every NumPy call an array-array one: a NumPy scalar operand costs twice a call).
The results are within a few ulp of XLA's (at most 7 measured over 10^5
normal samples), as compiled code's are elsewhere (NumPy's `np.exp` is not XLA's
`exp` either). 16-bit floats are computed in float32 and rounded, as XLA does.

Memory: the powers take 7 to 9 values per element, so arrays larger than `_CHUNK`
elements are computed in pieces of that size, written into the result: the extra
memory stays bounded whatever the operand's size.
"""

from __future__ import annotations

import numpy as np
from ml_dtypes import bfloat16

from jaxlite.backend import xla_kernels as _kernels

_F32 = np.dtype(np.float32)
_CHUNK = 1 << 15  # elements per piece: 1.2 MB of float32 powers for erf_inv


def _coefficients(*polynomials):
    """A (len(polynomials), n) float32 matrix of coefficients in ascending powers,
    each polynomial (given highest power first) padded with zeros to the longest."""
    n = max(len(p) for p in polynomials)
    rows = [list(p[::-1]) + [0.0] * (n - len(p)) for p in polynomials]
    return np.array(rows, _F32)


def _polynomials(coefficients, powers):
    """Each row of `coefficients` evaluated at t, `powers` an uninitialised array
    holding t in its row 1 (row 0 is set to 1 here: `np.ones` costs four times an
    `empty` and a `fill`). One multiply per row, out given by position (cheaper than
    by keyword): a broadcast (2-d) multiply would cost about three times a row's."""
    one, t, *rows = powers
    one.fill(1)
    previous = t
    for row in rows:
        previous = _multiply(previous, t, row)
    return np.dot(coefficients, powers)


_multiply, _divide = np.multiply, np.divide

# XLA's erf: x * P(x^2) / Q(x^2), x clamped to [-3.8325..., 3.8325...], where the
# ratio reaches 1. Every call counts at a few hundred elements (each costs about
# half a microsecond, as much as `np.exp` of 100 values): one `clip` ufunc call
# clamps, and the six powers are spelt out rather than looped over (the results are
# those of `_polynomials`, bit for bit).
_ERF = _coefficients(_kernels.ERF_NUM, _kernels.ERF_DEN)
_ERF_BOUND = np.asarray(3.832506856900711, _F32)  # 0-d arrays: cheaper than scalars
_ERF_LOW = -_ERF_BOUND
try:  # the ufunc itself: `np.clip` wraps it in 2 us of argument checks
    from numpy._core.umath import clip as _clip
except ImportError:  # pragma: no cover - NumPy moved it; the same values, slower
    _clip = np.clip


def _erf32(x):
    x = _clip(x, _ERF_LOW, _ERF_BOUND)  # NaN stays NaN
    powers = np.empty((_ERF.shape[1], x.size), _F32)
    one, t, t2, t3, t4, t5, t6 = powers
    one.fill(1)
    _multiply(x, x, t)
    _multiply(t, t, t2)
    _multiply(t2, t, t3)
    _multiply(t3, t, t4)
    _multiply(t4, t, t5)
    _multiply(t5, t, t6)
    num, den = np.dot(_ERF, powers)
    _multiply(num, x, num)
    return _divide(num, den, num)


# XLA's erf_inv (Giles): w = -log(1 - x^2); a polynomial in w - 2.5 where w < 5, in
# sqrt(w) - 3 elsewhere; times x. +-1 gives +-inf, |x| > 1 NaN.
_ERF_INV = _coefficients(_kernels.ERFINV_CENTRAL, _kernels.ERFINV_TAIL)
_INF = _F32.type(np.inf)


def _erf_inv32(x):
    minus_w = np.multiply(x, x)
    np.negative(minus_w, out=minus_w)
    np.log1p(minus_w, out=minus_w)
    central = minus_w > _F32.type(-5)
    powers = np.empty((_ERF_INV.shape[1], x.size), _F32)
    t = powers[1]
    np.negative(minus_w, out=t)
    np.sqrt(t, out=t)
    t -= _F32.type(3)
    np.copyto(t, np.subtract(_F32.type(-2.5), minus_w), where=central)
    both = _polynomials(_ERF_INV, powers)
    out = both[1]
    np.copyto(out, both[0], where=central)
    out *= x
    np.copyto(out, np.multiply(x, _INF), where=np.isinf(minus_w))  # x = +-1
    return out


def _elementwise(kernel32, name):
    """A function of one float array: `kernel32` on its float32 values, rounded to
    its dtype; arrays over `_CHUNK` elements in pieces. For generated code, which
    runs with NumPy's floating-point warnings off (backend `Executable`)."""

    def fun(x):
        x = np.asarray(x)
        dtype = x.dtype
        if x.size <= _CHUNK:
            out = kernel32(x.reshape(-1).astype(_F32, copy=False))
            out = out.astype(dtype, copy=False).reshape(x.shape)
            return out[()] if out.ndim == 0 else out
        out = np.empty(x.shape, dtype)
        flat, flat_out = x.reshape(-1), out.reshape(-1)
        for i in range(0, x.size, _CHUNK):
            piece = flat[i : i + _CHUNK].astype(_F32, copy=False)
            flat_out[i : i + _CHUNK] = kernel32(piece)
        return out

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"XLA's float32 `{name}` approximation, in a few NumPy calls."
    fun.kernel32 = kernel32
    return fun


erf = _elementwise(_erf32, "erf")
erf_inv = _elementwise(_erf_inv32, "erf_inv")


_FAST_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float16, bfloat16))


def fast_lowering(fast, fallback):
    """A lowering rule for a unary float primitive: `fast` (above) for float32 and
    16-bit float operands, `fallback` (a function of the value, e.g. the NumPy impl)
    for float64. A 1-d float32 operand of at most `_CHUNK` elements, the common
    case, calls the float32 kernel itself."""

    def rule(ctx, x):
        aval = ctx.avals_in()[0]
        dtype = np.dtype(aval.dtype)
        if dtype == _F32 and len(aval.shape) == 1 and 0 < aval.shape[0] <= _CHUNK:
            fn = fast.kernel32
        else:
            fn = fast if dtype in _FAST_DTYPES else fallback
        ctx.fresh_output = True  # a new array (or a scalar) of the output's aval
        return f"{ctx.add_global(fn, fn.__name__.strip('_'))}({x})"

    return rule
