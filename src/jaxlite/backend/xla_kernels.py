"""XLA:CPU's float32 algorithms, written once against a small arithmetic interface.

Each kernel below follows, step by step, what XLA's CPU compiler emits for one float32
operation: the same approximation (coefficients written down as the float32 values it
uses), evaluated in the same order, with an `m.fma` wherever the compiler fuses a
multiply into the add that consumes it (LLVM fuses a multiply with one use), subnormal
arguments read as zero where the operation does arithmetic on them, and subnormal
results flushed to zero. `kernel(*args, m)` runs it with the arithmetic `m`, so each
algorithm exists once and several interpreters run it:

- `jaxlite.lax.xla_float32` on float32 NumPy arrays, and on Python floats holding
  float32 values (for 0-d inputs, where NumPy's per-call cost would dominate): the
  eager exact results;
- `jaxlite.backend.native.xla_math` on LLVM IR values of one float32 element: each
  operation emits its instruction (Python floats become float32 constants), so
  compiled code gives the same bits.

So a kernel must not branch on values: every choice between values is `m.where`,
and a Python `if` only on what is fixed when the kernel is written (`fused`,
`m.libm_reads_subnormals()`). Each operation of `m` rounds its result to float32:
`mul`, `add`, `sub`, `div`, `sqrt`, `fma` (one rounding), `where`, `clamp`
(NaN propagating), `floor`, `abs`, `neg`, `daz` (subnormal to signed zero), `mul_ftz`
(a product flushed to zero as flush-to-zero flushes it: where it is tiny after
rounding to float32's precision, which `daz(mul(a, b))` misses for a product rounding
up to the smallest normal), `copysign_one`, `pow2` (2**n by its bits, for integral n
in [-127, 127]; 2**-127 reads as 0), `frexp` (mantissa in [0.5, 1) and exponent of a
positive normal float) and `libm` (a call of the C library's float function, as XLA
makes it). The comparisons `lt`, `le`, `gt`, `ge`, `eq` (ordered: false for NaN) and
`isnan` give masks, combined with `or_` and `and_`, for `where`.

The module is plain Python (NumPy only for its constants) in the backend layer, where
both `lax` and `backend.native` may import it.
"""

from __future__ import annotations

import numpy as np


def _h(bits):
    """The float32 with IEEE bits `bits`, as a Python float."""
    return float(np.uint32(bits).view(np.float32))


def _f(v):
    """`v` rounded to float32, as a Python float."""
    return float(np.float32(v))


_TINY = _f(np.finfo(np.float32).tiny)
_INF = float("inf")
_NAN = float("nan")
_LN2 = _h(0x3F317218)  # log(2) rounded to float32


def _horner(m, x, coefficients):
    """`c0 * x**n + ... + cn` by Horner's rule with one fma per step."""
    acc = m.fma(coefficients[0], x, coefficients[1])
    for c in coefficients[2:]:
        acc = m.fma(acc, x, c)
    return acc


# --------------------------------------------------------------------------------------
# exp, logistic, exp2 (Cephes' expf: exp(r) * 2**n, r = x - n log 2, n in [-127, 127])

_EXP_LO, _EXP_HI = _f(-87.8), _f(88.8)
_LOG2E = _h(0x3FB8AA3B)
_LN2_HI = _h(0x3F318000)  # 0.693359375: n * _LN2_HI is exact
_LN2_LO = _h(0x395E8083)  # 2.12194440e-4, so that _LN2_HI - _LN2_LO ~ log(2)
_EXP_P = tuple(
    _h(b) for b in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA)
) + (0.5,)


def exp_parts(x, m):
    """`z, scale` with exp(x) = z * scale: z = exp(r) in [0.7, 1.5), scale = 2**n."""
    x = m.clamp(_EXP_LO, x, _EXP_HI)
    n = m.floor(m.fma(x, _LOG2E, 0.5))
    n = m.clamp(-127.0, n, 127.0)
    r = m.fma(n, -_LN2_HI, x)
    r = m.fma(n, _LN2_LO, r)
    p = _horner(m, r, _EXP_P)
    z = m.add(m.fma(p, m.mul(r, r), r), 1.0)
    return z, m.pow2(n)


def exp(x, m):
    z, scale = exp_parts(m.daz(x), m)
    return m.daz(m.mul(z, scale))


def logistic(x, m):
    # 1 / (1 + exp(-x)), with the 1 + ... fused into exp's last multiply.
    z, scale = exp_parts(m.neg(m.daz(x)), m)
    return m.daz(m.div(1.0, m.fma(z, scale, 1.0)))


def exp2(x, m):
    # XLA expands exp2(x) to exp(x * log(2)).
    return exp(m.mul(m.daz(x), _LN2), m)


# --------------------------------------------------------------------------------------
# log, log1p (Cephes' logf: log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1], with
# log(2) in two parts so that e * _LOG_Q2 is exact; log1p: a rational function below
# sqrt(2) - 1)

_LOG_P = tuple(
    _f(c)
    for c in (
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
)
_LOG_Q1 = _f(-2.12194440e-4)
_LOG_Q2 = _f(0.693359375)
_SQRT_HALF = _f(0.707106781186547524)
_LOG1P_SMALL = _f(0.41421356237309504880)  # sqrt(2) - 1


def log(x, m):
    mant, e = m.frexp(m.clamp(_TINY, x, _INF))
    small = m.lt(mant, _SQRT_HALF)
    e = m.sub(e, m.where(small, 1.0, 0.0))
    r = m.add(m.sub(mant, 1.0), m.where(small, mant, 0.0))
    r2 = m.mul(r, r)
    r3 = m.mul(r2, r)
    p = _LOG_P
    y0 = m.fma(m.fma(p[0], r, p[1]), r, p[2])
    y1 = m.fma(m.fma(p[3], r, p[4]), r, p[5])
    y2 = m.fma(m.fma(p[6], r, p[7]), r, p[8])
    y = m.fma(m.fma(y0, r3, y1), r3, y2)
    y = m.fma(y, r3, m.mul(e, _LOG_Q1))
    out = m.add(m.add(m.sub(r, m.mul(r2, 0.5)), y), m.mul(e, _LOG_Q2))
    # Subnormals count as zero (denormals-are-zero).
    out = m.where(m.lt(x, _TINY), -_INF, out)
    out = m.where(m.eq(x, _INF), _INF, out)
    return m.where(m.or_(m.le(x, -_TINY), m.isnan(x)), _NAN, out)


_LOG1P_NUM = tuple(
    _f(c)
    for c in (
        4.5270000862445199635215e-5,
        4.9854102823193375972212e-1,
        6.5787325942061044846969e0,
        2.9911919328553073277375e1,
        6.0949667980987787057556e1,
        5.7112963590585538103336e1,
        2.0039553499201281259648e1,
    )
)
_LOG1P_DEN = tuple(
    _f(c)
    for c in (
        1.0,
        1.5062909083469192043167e1,
        8.3047565967967209469310e1,
        2.2176239823732856465394e2,
        3.0909872225312059774938e2,
        2.1642788614495947685003e2,
        6.0118660497603843919306e1,
    )
)


def log1p(x, m, fused=True):
    # `fused=False`: x**2 / 2 rounded on its own (and the other product fused), as
    # where XLA's compiler shares it between atanh's log1p(x) and log1p(-x).
    x = m.daz(x)
    large = log(m.add(x, 1.0), m)
    x2 = m.mul(x, x)
    ratio = m.div(_horner(m, x, _LOG1P_NUM), _horner(m, x, _LOG1P_DEN))
    if fused:
        small = m.add(x, m.fma(-0.5, x2, m.mul(m.mul(x, x2), ratio)))
    else:
        small = m.add(x, m.fma(m.mul(x, x2), ratio, m.mul(x2, -0.5)))
    return m.where(m.lt(m.abs(x), _LOG1P_SMALL), small, large)


# --------------------------------------------------------------------------------------
# tanh (a rational function of x clamped to [-7.99881172, 7.99881172]), expm1

_TANH_CLAMP = _h(0x40FFF644)
_TANH_NUM = tuple(
    _h(b)
    for b in (
        0xA59F25C0,
        0x2A61337E,
        0xAEBD37FF,
        0x335C0041,
        0x3779434A,
        0x3A270DED,
        0x3BA059DC,
    )
)
_TANH_DEN = tuple(_h(b) for b in (0x35A0D3D8, 0x38F895D6, 0x3B14AA05, 0x3BA059DD))
_TANH_SMALL = _f(4e-4)  # tanh(x) = x below


def tanh(x, m):
    ax = m.abs(x)
    xc = m.clamp(-_TANH_CLAMP, x, _TANH_CLAMP)
    x2 = m.daz(m.mul(xc, xc))
    num = m.mul(xc, _horner(m, x2, _TANH_NUM))
    out = m.div(num, _horner(m, x2, _TANH_DEN))
    out = m.where(m.lt(ax, _TANH_SMALL), x, out)
    return m.where(m.ge(ax, 20.0), m.copysign_one(x), out)


def expm1(x, m):
    z, scale = exp_parts(m.daz(x), m)
    e = m.mul(z, scale)
    h = m.mul(x, 0.5)
    # |x| <= 0.5: tanh(x / 2) * (exp(x) + 1), which keeps the low bits.
    near = m.mul(tanh(h, m), m.add(e, 1.0))
    out = m.where(m.gt(m.abs(x), 0.5), m.sub(e, 1.0), near)
    # x itself where h is flushed to zero: x / 2 below the smallest normal, which
    # flush-to-zero flushes even where it rounds up to it (|x| an ulp below 2 * tiny).
    return m.where(m.lt(m.abs(x), 2.0 * _TINY), x, out)


# --------------------------------------------------------------------------------------
# sinh, cosh: XLA expands them with exp(x - log 2) (and expm1 for sinh of |x| < 1)


def sinh(x, m):
    x = m.daz(x)
    em1 = expm1(x, m)
    near = m.mul(m.add(em1, m.div(em1, m.add(em1, 1.0))), 0.5)
    z1, s1 = exp_parts(m.add(x, -_LN2), m)
    z2, s2 = exp_parts(m.sub(-_LN2, x), m)
    far = m.fma(z1, s1, m.neg(m.daz(m.mul(z2, s2))))
    return m.daz(m.where(m.lt(m.abs(x), 1.0), near, far))


def cosh(x, m):
    x = m.daz(x)
    z1, s1 = exp_parts(m.add(x, -_LN2), m)
    z2, s2 = exp_parts(m.sub(-_LN2, x), m)
    return m.fma(z2, s2, m.daz(m.mul(z1, s1)))


# --------------------------------------------------------------------------------------
# erf (a rational function on [-3.83, 3.83], +-1 beyond), erf_inv (Giles'
# single-precision approximation: "Approximating the erfinv function", GPU Computing
# Gems, 2011, a polynomial in w = -log(1 - x**2) split at w = 5)

ERF_NUM = tuple(
    _f(c)
    for c in (
        0.00022905065861350646,
        0.0034082910107109506,
        0.050955695062380861,
        0.18520832239976145,
        1.128379143519084,
    )
)
ERF_DEN = tuple(
    _f(c)
    for c in (
        -1.1791602954361697e-7,
        0.000023547966471313185,
        0.0010179625278914885,
        0.014070470171167667,
        0.11098505178285362,
        0.49746925110067538,
        1.0,
    )
)
_ERF_BOUND = _f(3.832506856900711)


def erf(x, m):
    x = m.daz(x)
    x2 = m.daz(m.mul(x, x))
    ratio = m.div(m.mul(x, _horner(m, x2, ERF_NUM)), _horner(m, x2, ERF_DEN))
    inside = m.or_(m.le(m.abs(x), _ERF_BOUND), m.isnan(x))
    out = m.where(inside, ratio, m.copysign_one(x))
    return m.where(m.eq(x, 0.0), x, out)


ERFINV_CENTRAL = tuple(
    _f(c)
    for c in (
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
)
ERFINV_TAIL = tuple(
    _f(c)
    for c in (
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
)


def erf_inv(x, m):
    x = m.daz(x)
    w = m.neg(log1p(m.mul(x, m.neg(x)), m))
    central = m.lt(w, 5.0)
    w = m.where(central, m.sub(w, 2.5), m.sub(m.sqrt(w), 3.0))
    p = m.where(central, ERFINV_CENTRAL[0], ERFINV_TAIL[0])
    for c, t in zip(ERFINV_CENTRAL[1:], ERFINV_TAIL[1:]):
        p = m.fma(p, w, m.where(central, c, t))
    out = m.mul_ftz(p, x)
    out = m.where(m.eq(m.abs(x), 1.0), m.mul(x, _INF), out)
    return m.where(m.eq(x, 0.0), x, out)


# --------------------------------------------------------------------------------------
# The C library's functions (XLA calls sinf, cosf, tanf, atanf, atan2f, powf, cbrtf),
# and XLA's expansions of asin, acos, asinh, acosh, atanh into them and the kernels
# above


def _libm(name):
    def kernel(x, m):
        return m.libm(name, x)

    kernel.__name__ = name.removesuffix("f")
    return kernel


def atan2(y, x, m):
    return m.libm("atan2f", y, x)


def pow(x, y, m):  # noqa: A001 (lax's name)
    return m.libm("powf", x, y)


# XLA hands atan2f the input of asin and acos unchanged: under its flags the C library
# reads a subnormal its own way (glibc 2.36 as zero, 2.41's atan2f gives NaN). Where
# the calls here set the flags too (`m.libm_reads_subnormals()`), so do the kernels;
# elsewhere they model glibc 2.36.


def asin(x, m):
    flushed = m.daz(x)
    root = m.sqrt(m.daz(m.mul(m.sub(1.0, flushed), m.add(flushed, 1.0))))
    y = x if m.libm_reads_subnormals() else flushed
    half = m.libm("atan2f", y, m.add(root, 1.0))
    return m.add(half, half)


_HALF_PI_BELOW = _h(0x3FC90FDA)  # an ulp below pi / 2


def acos(x, m):
    flushed = m.daz(x)
    root = m.sqrt(m.daz(m.mul(m.sub(1.0, flushed), m.add(flushed, 1.0))))
    if m.libm_reads_subnormals():
        return m.libm("atan2f", root, x)
    out = m.libm("atan2f", root, flushed)
    # glibc 2.36's atan2f(1, x) of a negative subnormal x, read as zero with
    # denormals-are-zero: an ulp below pi / 2.
    return m.where(m.and_(m.eq(flushed, 0.0), m.lt(x, 0.0)), _HALF_PI_BELOW, out)


# Where asinh and acosh switch to log(|x|) + log(2): from sqrt(max) (asinh's x * x
# overflows) and from max / 2 (acosh's product, about 2x, overflows).
_ASINH_FAR = _h(0x5F7FFFFF)
_ACOSH_FAR = _h(0x7EFFFFFF)


def asinh(x, m):
    x = m.daz(x)
    ax = m.abs(x)
    x2 = m.daz(m.mul(x, x))
    q = m.daz(m.div(x2, m.add(m.sqrt(m.add(x2, 1.0)), 1.0)))
    near = log1p(m.add(ax, q), m)
    far = m.add(log(ax, m), _LN2)
    sign = m.where(m.eq(x, 0.0), x, m.copysign_one(x))
    return m.mul(sign, m.where(m.ge(ax, _ASINH_FAR), far, near))


def acosh(x, m):
    x = m.daz(x)
    below = m.sqrt(m.add(x, -1.0))
    above = m.sqrt(m.add(x, 1.0))
    near = log1p(m.daz(m.mul(below, m.add(above, below))), m)
    far = m.add(log(x, m), _LN2)
    return m.where(m.ge(x, _ACOSH_FAR), far, near)


def atanh(x, m):
    x = m.daz(x)
    out = m.mul(m.sub(log1p(x, m, False), log1p(m.neg(x), m, False)), 0.5)
    return m.where(m.gt(m.abs(x), 1.0), _NAN, m.daz(out))


KERNELS = {
    "exp": exp,
    "exp2": exp2,
    "log": log,
    "log1p": log1p,
    "expm1": expm1,
    "tanh": tanh,
    "logistic": logistic,
    "sinh": sinh,
    "cosh": cosh,
    "erf": erf,
    "erf_inv": erf_inv,
    "sin": _libm("sinf"),
    "cos": _libm("cosf"),
    "tan": _libm("tanf"),
    "atan": _libm("atanf"),
    "cbrt": _libm("cbrtf"),
    "asin": asin,
    "acos": acos,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
    "atan2": atan2,
    "pow": pow,
}
