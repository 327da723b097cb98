"""Float32 arithmetic as XLA's CPU backend computes it, so samples match JAX bit for bit.

JAX's samples are what XLA's CPU compiler makes of each sampler's arithmetic: it fuses a
multiply that feeds an add into one fused multiply-add, flushes subnormal floats to zero,
evaluates `log`, `log1p`, `exp`, `erf` and `erf_inv` with its own polynomials, and calls
the C library's `powf` and `tanf` for `pow` and `tan`. This module reproduces those
roundings for float32: an exactly rounded `fma` primitive, the same polynomials evaluated
in the same order, and the platform's own `powf`/`tanf` (through ctypes, where a C math
library can be loaded). Other float widths use jaxlite's own functions.

One XLA operation is not reproduced: `rsqrt` (which XLA also substitutes for `x /
sqrt(y)`) is the processor's `rsqrtss` estimate refined by one Newton step. The estimate
comes from a table that differs between processor vendors and generations, so the refined
value, correctly rounded 1/sqrt in about 80% of cases, is off by one ulp in the others in
a way only that processor determines. Samplers that need it (gamma's `1 / sqrt(d)`) use
the correctly rounded value and may differ from JAX by an ulp there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.elementwise import lax_operands
from jaxlite.lax.rules import FLOAT, broadcast_shapes, check_dtype, check_same_dtypes

__all__ = [
    "bitcast_convert_type",
    "divide",
    "erf",
    "erf_inv",
    "exp",
    "fma",
    "log",
    "log1p",
    "mul_add",
    "pow",
    "sum_last_axis",
    "tan",
]


def _u32(v):
    return np.uint32(v)


# --------------------------------------------------------------------------------------
# Float kernels as XLA's CPU backend computes them
#
# Two primitives XLA has and jaxlite.lax lacks: an exactly rounded fused multiply-add
# and a same-width bitcast. The kernels below use them to follow XLA's float32
# algorithms step by step; every `_fma` stands where XLA's compiler fuses a multiply
# into an add.


def _two_sum(a, b):
    """`s, e` with `s = fl(a + b)` and `a + b == s + e` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


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
        dropped = 52 - int(dtypes.finfo(dtype).nmant)
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


def fma_values(a, b, c):
    """`a * b + c` with one rounding, on NumPy values of one float dtype."""
    dtype = np.result_type(a, b, c)
    out = _fma_f64(a, b, c) if dtype == np.float64 else _fma_narrow(a, b, c, dtype)
    return out[()] if out.ndim == 0 else out


def _fma_abstract(a, b, c):
    avals = (a, b, c)
    check_same_dtypes("fma", avals)
    check_dtype("fma", a.dtype, FLOAT)
    shape = broadcast_shapes("fma", a.shape, b.shape, c.shape)
    weak = all(x.weak_type for x in avals)
    return [ShapedArray(shape, a.dtype, weak)], no_effects


def _fma_out_shape(a, b, c):
    return broadcast_shapes("fma", np.shape(a), np.shape(b), np.shape(c))


def _broadcast_tangent(t, shape):
    if np.shape(t) == shape:
        return t
    dims = () if not np.ndim(t) else tuple(range(len(shape)))
    return lax.broadcast_in_dim(t, shape, dims)


def _fma_jvp_a(t, a, b, c):
    return _broadcast_tangent(lax.mul(t, b), _fma_out_shape(a, b, c))


def _fma_jvp_b(t, a, b, c):
    return _broadcast_tangent(lax.mul(a, t), _fma_out_shape(a, b, c))


def _fma_jvp_c(t, a, b, c):
    return _broadcast_tangent(t, _fma_out_shape(a, b, c))


fma_p = Primitive("fma")
impl_rules[fma_p] = lambda a, b, c: [fma_values(a, b, c)]
abstract_eval_rules[fma_p] = _fma_abstract
ad.defjvp(fma_p, _fma_jvp_a, _fma_jvp_b, _fma_jvp_c)
batching.defbroadcasting(fma_p)


def fma(a, b, c):
    """`a * b + c` rounded once, as XLA computes a multiply fused into an add."""
    return fma_p.bind(*lax_operands(a, b, c))


def divide(x, y):
    """`x / y` with jnp broadcasting, as XLA computes it: a divisor that has to be
    broadcast is inverted before broadcasting (XLA's rewrite `A / broadcast(B) =>
    A * broadcast(1 / B)`), so the quotient is rounded twice."""
    if np.shape(y) != np.shape(x) and np.size(y) < np.size(x):
        return x * lax.div(lax.full_like(y, 1), y)
    return x / y


def sum_last_axis(x):
    """`jnp.sum(x, axis=-1)` in the order XLA's CPU backend adds float32 rows of up
    to 64 elements: one after the other for inputs of at most 4096 elements; for larger
    ones, into 16 interleaved partial sums combined pairwise (sums 0 and 8, 1 and 9,
    ..., then halves again). Other cases use jaxlite's own summation."""
    n = x.shape[-1]
    small = math.prod(x.shape) <= 4096
    if x.dtype != _F32 or n > 64 or (small and n > 32) or n == 0:
        return jnp.sum(x, axis=-1)
    columns = [
        lax.squeeze(c, (x.ndim - 1,)) for c in lax.split(x, (1,) * n, x.ndim - 1)
    ]
    zero = lax.full_like(columns[0], 0)
    if small:
        total = zero
        for column in columns:
            total = lax.add(total, column)
        return total
    partial = [zero] * 16
    for i, column in enumerate(columns):
        partial[i % 16] = lax.add(partial[i % 16], column)
    while len(partial) > 1:
        half = len(partial) // 2
        partial = [lax.add(partial[i], partial[i + half]) for i in range(half)]
    return partial[0]


def mul_add(a, b, c):
    """`a * b + c` as XLA's CPU backend computes it in one fusion: one fma for float32
    and float64; 16-bit floats round the product and the sum separately."""
    a, b, c = lax_operands(a, b, c)
    if np.dtype(a.dtype).itemsize >= 4:
        return fma_p.bind(a, b, c)
    return lax.add(lax.mul(a, b), c)


def _bitcast_impl(x, *, new_dtype):
    out = np.asarray(x).view(new_dtype)
    return [out[()] if out.ndim == 0 else out]


def _bitcast_abstract(x, *, new_dtype):
    if np.dtype(x.dtype).itemsize != np.dtype(new_dtype).itemsize:
        raise NotImplementedError(
            f"bitcast_convert_type from {x.dtype} to {new_dtype}: jaxlite only "
            "bitcasts between dtypes of one width"
        )
    return [ShapedArray(x.shape, new_dtype)], no_effects


bitcast_convert_type_p = Primitive("bitcast_convert_type")
impl_rules[bitcast_convert_type_p] = _bitcast_impl
abstract_eval_rules[bitcast_convert_type_p] = _bitcast_abstract
ad.defjvp(bitcast_convert_type_p, None)
batching.defvectorized(bitcast_convert_type_p)


def bitcast_convert_type(x, new_dtype):
    """Reinterpret the bits of `x` as `new_dtype` (of the same width)."""
    return bitcast_convert_type_p.bind(x, new_dtype=np.dtype(new_dtype))


# -- float32 kernels ---------------------------------------------------------------------

_F32 = np.dtype("float32")
_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _f(v):
    return np.float32(v)


def _where(pred, x, y):
    return jnp.where(pred, x, y)


def _flush_subnormal_input(x, out):
    """`out`, or a zero of x's sign where x is subnormal (XLA reads those as zero)."""
    return _where(lax.lt(lax.abs(x), _TINY32), lax.mul(x, _f(0)), out)


def _horner(x, coefficients):
    """`c0 * x**n + ... + cn` by Horner's rule with one fma per step."""
    acc = lax.full_like(x, _f(coefficients[0]))
    for c in coefficients[1:]:
        acc = fma(acc, x, _f(c))
    return acc


# Cephes' logf: log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1], and log(2) in two
# parts (Q1 + Q2) so that e * Q2 is exact.
_LOG_P = (
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
)
_LOG_Q1 = _f(-2.12194440e-4)
_LOG_Q2 = _f(0.693359375)
_SQRT_HALF = _f(0.707106781186547524)


def _frexp(x):
    """Mantissa in [0.5, 1) and exponent (as float32) of positive normal float32 `x`."""
    bits = bitcast_convert_type(x, np.uint32)
    exponent = lax.convert_element_type(
        lax.shift_right_logical(bits, _u32(23)), np.int32
    )
    exponent = lax.convert_element_type(lax.sub(exponent, np.int32(126)), _F32)
    mantissa = lax.bitwise_or(lax.bitwise_and(bits, _u32(0x807FFFFF)), _u32(0x3F000000))
    return bitcast_convert_type(mantissa, _F32), exponent


def log_f32(x):
    """XLA's float32 `log` (Cephes, with its fused multiply-adds)."""
    m, e = _frexp(lax.max(x, _TINY32))
    small = lax.lt(m, _SQRT_HALF)
    e = lax.sub(e, _where(small, _f(1), _f(0)))
    r = lax.add(lax.sub(m, _f(1)), _where(small, m, _f(0)))
    r2 = lax.mul(r, r)
    r3 = lax.mul(r2, r)
    p = _LOG_P
    y0 = fma(fma(lax.full_like(r, _f(p[0])), r, _f(p[1])), r, _f(p[2]))
    y1 = fma(fma(lax.full_like(r, _f(p[3])), r, _f(p[4])), r, _f(p[5]))
    y2 = fma(fma(lax.full_like(r, _f(p[6])), r, _f(p[7])), r, _f(p[8]))
    y = fma(fma(y0, r3, y1), r3, y2)
    y = fma(y, r3, lax.mul(e, _LOG_Q1))
    out = lax.add(lax.add(lax.sub(r, lax.mul(r2, _f(0.5))), y), lax.mul(e, _LOG_Q2))
    # Subnormals count as zero (XLA runs with denormals-are-zero).
    out = _where(lax.lt(x, _TINY32), _f(-np.inf), out)
    out = _where(lax.eq(x, _f(np.inf)), _f(np.inf), out)
    negative = lax.le(x, lax.neg(_TINY32))
    return _where(lax.bitwise_or(negative, lax.ne(x, x)), _f(np.nan), out)


# Cephes' log1p: a rational approximation below sqrt(2) - 1, log(1 + x) above.
_LOG1P_NUM = (
    4.5270000862445199635215e-5,
    4.9854102823193375972212e-1,
    6.5787325942061044846969e0,
    2.9911919328553073277375e1,
    6.0949667980987787057556e1,
    5.7112963590585538103336e1,
    2.0039553499201281259648e1,
)
_LOG1P_DEN = (
    1.0,
    1.5062909083469192043167e1,
    8.3047565967967209469310e1,
    2.2176239823732856465394e2,
    3.0909872225312059774938e2,
    2.1642788614495947685003e2,
    6.0118660497603843919306e1,
)


def log1p_f32(x):
    """XLA's float32 `log1p`."""
    large = log_f32(lax.add(x, _f(1)))
    x2 = lax.mul(x, x)
    ratio = lax.div(_horner(x, _LOG1P_NUM), _horner(x, _LOG1P_DEN))
    small = lax.add(x, fma(_f(-0.5), x2, lax.mul(lax.mul(x, x2), ratio)))
    small = _flush_subnormal_input(x, small)
    return _where(lax.lt(lax.abs(x), _f(0.41421356237309504880)), small, large)


# Cephes' expf: exp(r) * 2**n with r = x - n * log(2) and n clamped to [-127, 127].
_EXP_P = (
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)


def exp_f32(x):
    """XLA's float32 `exp`."""
    x = lax.clamp(_f(-87.8), x, _f(88.8))
    n = lax.floor(fma(x, _f(1.44269504088896341), _f(0.5)))
    n = lax.clamp(_f(-127), n, _f(127))
    r = fma(_f(-0.693359375), n, x)
    r = fma(_f(2.12194440e-4), n, r)
    z = fma(_horner(r, _EXP_P), lax.mul(r, r), r)
    z = lax.add(_f(1), z)
    n = lax.convert_element_type(n, np.int32)
    scale = lax.shift_left(lax.add(n, np.int32(127)), np.int32(23))
    out = lax.mul(z, bitcast_convert_type(scale, _F32))
    # Subnormal results flush to zero.
    return _where(lax.lt(out, _TINY32), _f(0), out)


# A rational approximation of erf on [-3.83, 3.83] (beyond it erf rounds to +-1).
_ERF_NUM = (
    0.00022905065861350646,
    0.0034082910107109506,
    0.050955695062380861,
    0.18520832239976145,
    1.128379143519084,
)
_ERF_DEN = (
    -1.1791602954361697e-7,
    0.000023547966471313185,
    0.0010179625278914885,
    0.014070470171167667,
    0.11098505178285362,
    0.49746925110067538,
    1.0,
)


def erf_f32(x):
    """XLA's float32 `erf`."""
    x2 = lax.mul(x, x)
    ratio = lax.div(lax.mul(x, _horner(x2, _ERF_NUM)), _horner(x2, _ERF_DEN))
    inside = lax.le(lax.abs(x), _f(3.832506856900711))
    sign = lax.bitwise_and(bitcast_convert_type(x, np.uint32), _u32(0x80000000))
    one = bitcast_convert_type(lax.bitwise_or(sign, _u32(0x3F800000)), _F32)
    out = _where(lax.bitwise_or(inside, lax.ne(x, x)), ratio, one)
    return _flush_subnormal_input(x, out)


# Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing
# Gems, 2011): a polynomial in w = -log(1 - x**2), split at w = 5.
_ERFINV_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERFINV_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def erf_inv_f32(x):
    """XLA's float32 `erf_inv`."""
    w = lax.neg(log1p_f32(lax.mul(x, lax.neg(x))))
    central = lax.lt(w, _f(5))
    w = _where(central, lax.sub(w, _f(2.5)), lax.sub(lax.sqrt(w), _f(3)))
    p = _where(central, _f(_ERFINV_CENTRAL[0]), _f(_ERFINV_TAIL[0]))
    for c, t in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        p = fma(p, w, _where(central, _f(c), _f(t)))
    out = lax.mul(p, x)
    out = _where(lax.eq(lax.abs(x), _f(1)), lax.mul(x, _f(np.inf)), out)
    return _flush_subnormal_input(x, out)


def _dispatch(kernel, fallback, derivative):
    """The kernel for float32 (and, via float32, 16-bit floats), `fallback` for other
    dtypes; differentiated with `derivative(x, y)` as JAX differentiates the primitive."""

    def apply(x):
        if x.dtype == _F32:
            return kernel(x)
        if dtypes.issubdtype(x.dtype, np.floating) and np.dtype(x.dtype).itemsize < 4:
            # XLA computes 16-bit floats' transcendental functions in float32.
            out = kernel(lax.convert_element_type(x, _F32))
            return lax.convert_element_type(out, x.dtype)
        return fallback(x)

    apply.__name__ = kernel.__name__.removesuffix("_f32")
    apply.__doc__ = f"`{apply.__name__}` rounded as XLA does for float32."
    fun = custom_jvp(apply)

    @fun.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = fun(x)
        return y, lax.mul(t, derivative(x, y))

    return fun


def _one(x):
    return lax.full_like(x, 1)


log = _dispatch(log_f32, lax.log, lambda x, y: lax.div(_one(x), x))
log1p = _dispatch(
    log1p_f32, lax.log1p, lambda x, y: lax.div(_one(x), lax.add(x, _one(x)))
)
exp = _dispatch(exp_f32, lax.exp, lambda x, y: y)
erf = _dispatch(
    erf_f32,
    lax.erf,
    lambda x, y: lax.mul(
        lax.full_like(x, 2 / np.sqrt(np.pi)), exp(lax.neg(lax.mul(x, x)))
    ),
)
erf_inv = _dispatch(
    erf_inv_f32,
    lax.erf_inv,
    lambda x, y: lax.mul(lax.full_like(x, np.sqrt(np.pi) / 2), exp(lax.mul(y, y))),
)


# -- pow and tan: the C library's powf and tanf ------------------------------------------
#
# XLA's CPU backend compiles float32 `pow` and `tan` to calls of the C library's `powf`
# and `tanf`. Those are not correctly rounded (glibc's powf is off by one ulp for about
# 0.06% of arguments), so the primitives below call the same functions through ctypes,
# elementwise. XLA runs with denormals-are-zero and flush-to-zero, so subnormal
# arguments count as zero and subnormal results become zero. Where no C math library
# can be loaded, they round NumPy's float64 results instead (within an ulp of JAX).

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


def _flush_subnormal(x):
    return np.where(np.abs(x) < _TINY32, np.float32(0) * x, x)


def libm_values(name, fallback, *args):
    """C's float32 function `name` elementwise on NumPy values (XLA's roundings)."""
    args = np.broadcast_arrays(*[_flush_subnormal(np.asarray(a, _F32)) for a in args])
    fun = _libm_function(name, len(args))
    if fun is None:
        with np.errstate(all="ignore"):
            out = fallback(*[a.astype(np.float64) for a in args]).astype(_F32)
    else:
        flat = [a.ravel().tolist() for a in args]
        out = np.fromiter(map(fun, *flat), _F32, count=args[0].size)
        out = out.reshape(args[0].shape)
    out = _flush_subnormal(out)
    return out[()] if out.ndim == 0 else out


def _libm_abstract(name):
    def abstract(*avals):
        check_same_dtypes(name, avals)
        if avals[0].dtype != _F32:
            raise TypeError(f"{name} takes float32 operands, got {avals[0].dtype}")
        shape = broadcast_shapes(name, *(a.shape for a in avals))
        weak = all(a.weak_type for a in avals)
        return [ShapedArray(shape, _F32, weak)], no_effects

    return abstract


def _powf_jvp_x(t, x, y):
    out = lax.mul(y, powf_p.bind(x, lax.sub(y, lax.full_like(y, 1))))
    return _broadcast_tangent(lax.mul(t, out), _fma_out_shape(x, y, y))


def _powf_jvp_y(t, x, y):
    # 0 ** y has derivative 0 in y (as lax.pow's rule has it), not nan.
    safe_x = _where(lax.eq(x, _f(0)), _f(1), x)
    out = lax.mul(powf_p.bind(x, y), lax.log(safe_x))
    return _broadcast_tangent(lax.mul(t, out), _fma_out_shape(x, y, y))


powf_p = Primitive("powf")
impl_rules[powf_p] = lambda x, y: [libm_values("powf", np.power, x, y)]
abstract_eval_rules[powf_p] = _libm_abstract("powf")
ad.defjvp(powf_p, _powf_jvp_x, _powf_jvp_y)
batching.defbroadcasting(powf_p)


def _tanf_jvp(t, x):
    y = tanf_p.bind(x)
    return lax.mul(t, lax.add(lax.full_like(y, 1), lax.mul(y, y)))


tanf_p = Primitive("tanf")
impl_rules[tanf_p] = lambda x: [libm_values("tanf", np.tan, x)]
abstract_eval_rules[tanf_p] = _libm_abstract("tanf")
ad.defjvp(tanf_p, _tanf_jvp)
batching.defvectorized(tanf_p)


def _in_float32(fun, fallback, *args):
    """`fun` on float32 operands (16-bit floats computed in float32, as XLA does),
    `fallback` on other dtypes."""
    dtype = args[0].dtype
    if dtype == _F32:
        return fun(*args)
    if dtypes.issubdtype(dtype, np.floating) and np.dtype(dtype).itemsize < 4:
        out = fun(*[lax.convert_element_type(a, _F32) for a in args])
        return lax.convert_element_type(out, dtype)
    return fallback(*args)


def pow(x, y):  # noqa: A001 (lax's name)
    """`x ** y` for float `x` and `y` of one dtype, rounded as XLA's `pow`."""
    x, y = lax_operands(x, y)
    return _in_float32(powf_p.bind, lax.pow, x, y)


def tan(x):
    """`tan(x)`, rounded as XLA's `tan`."""
    (x,) = lax_operands(x)
    return _in_float32(tanf_p.bind, lax.tan, x)
