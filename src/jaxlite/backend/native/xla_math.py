"""XLA:CPU's float32 transcendental functions, emitted inline as LLVM IR.

XLA's CPU compiler does not call the C library for float32 `exp`, `log`, `log1p`,
`expm1`, `tanh`, `logistic`, `erf` and `erf_inv`: it emits its own polynomial and
rational approximations into the loop, where LLVM vectorises them, and expands `exp2`,
`sinh`, `cosh`, `asinh`, `acosh` and `atanh` into those. jaxlite reproduces
those algorithms bit for bit in NumPy (`jaxlite.lax.xla_float32_kernels`, run by
`jaxlite.lax.xla_float32` for eager values); `emit_<name>(em, x)` here emits the same
algorithm, step by step and in the same order, for one float32 element `x` with the
IR builder `em.b`, so compiled code gives JAX's bits too. Each step is one IEEE float32
operation (LLVM does not reassociate or contract them without fast-math flags), an
`llvm.fma.f32` wherever XLA fuses a multiply into the add that consumes it, and a
`select` wherever the algorithm picks between values: no branches, no calls, so a loop
over them vectorises. `sin` and `cos` are calls of the C library's `sinf` and `cosf`,
as in XLA.

Subnormals. XLA runs with denormals-are-zero and flush-to-zero set; compiled jaxlite
code does not touch the processor's flags. The kernels (like the NumPy ones, which run
without the flags either) make the flushing explicit where it changes a result: an
input read as zero (`daz`), a subnormal result flushed to a signed zero, a product
flushed where x86 flushes it (tiny after rounding, even where IEEE rounding reaches
the smallest normal: `mul_ftz`; expm1's x / 2 by its condition on x). Subnormal
intermediates that cannot reach the result's bits are left alone, exactly as the
NumPy kernels leave them, so the two agree bit for bit with each other and with JAX.

The coefficients are the float32 values of `xla_float32_kernels` (tests compare the
kernels here with those, bit for bit, over the whole float32 range).
"""

from __future__ import annotations

import struct

from llvmlite import ir

from jaxlite.backend.native.scalar import F32, F64, I32, intrinsic

__all__ = [
    "KERNELS",
    "emit_acosh",
    "emit_asinh",
    "emit_atanh",
    "emit_cos",
    "emit_cosh",
    "emit_erf",
    "emit_erf_inv",
    "emit_exp",
    "emit_exp2",
    "emit_expm1",
    "emit_log",
    "emit_log1p",
    "emit_logistic",
    "emit_sin",
    "emit_sinh",
    "emit_tanh",
]


def _h(bits):
    """The float32 with IEEE bits `bits`, as a Python float."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _f(v):
    """`v` rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


_TINY = _h(0x00800000)  # the smallest normal float32
_FTZ_BELOW = _TINY * (1 - 2.0**-25)  # products below flush to zero (`mul_ftz`)
_INF = float("inf")
_NAN = float("nan")


class _Ops:
    """Float32 IR arithmetic on one builder: the operations of the arithmetic
    `xla_float32_kernels` is written against, each one IEEE operation (Python floats
    are float32 constants). Comparisons return i1 values."""

    __slots__ = ("b",)

    def __init__(self, builder):
        self.b = builder

    @staticmethod
    def _v(x):
        return x if isinstance(x, ir.Value) else ir.Constant(F32, float(x))

    def _intrinsic(self, name, *xs):
        fn = intrinsic(self.b.module, name, F32, [F32] * len(xs), [F32])
        return self.b.call(fn, [self._v(x) for x in xs])

    # arithmetic, one rounding each
    def add(self, x, y):
        return self.b.fadd(self._v(x), self._v(y))

    def sub(self, x, y):
        return self.b.fsub(self._v(x), self._v(y))

    def mul(self, x, y):
        return self.b.fmul(self._v(x), self._v(y))

    def div(self, x, y):
        return self.b.fdiv(self._v(x), self._v(y))

    def fma(self, x, y, z):
        return self._intrinsic("llvm.fma", x, y, z)

    def horner(self, x, coefficients):
        """`c0 * x**n + ... + cn` by Horner's rule, one fma per step."""
        acc = self.fma(coefficients[0], x, coefficients[1])
        for c in coefficients[2:]:
            acc = self.fma(acc, x, c)
        return acc

    def sqrt(self, x):
        return self._intrinsic("llvm.sqrt", x)

    def floor(self, x):
        return self._intrinsic("llvm.floor", x)

    def abs(self, x):
        return self._intrinsic("llvm.fabs", x)

    def neg(self, x):
        return self.b.fneg(self._v(x))

    def copysign(self, magnitude, sign):
        return self._intrinsic("llvm.copysign", magnitude, sign)

    # comparisons (ordered: false for NaN) and selection
    def lt(self, x, y):
        return self.b.fcmp_ordered("<", self._v(x), self._v(y))

    def le(self, x, y):
        return self.b.fcmp_ordered("<=", self._v(x), self._v(y))

    def gt(self, x, y):
        return self.b.fcmp_ordered(">", self._v(x), self._v(y))

    def ge(self, x, y):
        return self.b.fcmp_ordered(">=", self._v(x), self._v(y))

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", self._v(x), self._v(y))

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def or_(self, p, q):
        return self.b.or_(p, q)

    def where(self, cond, x, y):
        return self.b.select(cond, self._v(x), self._v(y))

    def clamp(self, lo, x, hi):
        """max(lo, min(x, hi)) with NaN propagating (XLA's compare-and-select)."""
        x = self.where(self.lt(x, lo), lo, x)
        return self.where(self.gt(x, hi), hi, x)

    def daz(self, x):
        """A subnormal `x` read as a zero of its sign (denormals-are-zero)."""
        return self.where(self.lt(self.abs(x), _TINY), self.copysign(0.0, x), x)

    def mul_ftz(self, x, y):
        """`x * y` flushed to zero as flush-to-zero flushes it: where it is tiny after
        rounding to float32's precision (x86 detects tininess after rounding), so a
        product just below the smallest normal that rounds up to it stays. The
        product is exact in double."""
        b = self.b
        p = b.fmul(b.fpext(self._v(x), F64), b.fpext(self._v(y), F64))
        below = b.fcmp_ordered("<", self.abs64(p), ir.Constant(F64, _FTZ_BELOW))
        out = b.fptrunc(p, F32)
        return self.where(below, self.copysign(0.0, out), out)

    def abs64(self, x):
        fn = intrinsic(self.b.module, "llvm.fabs", F64, [F64], [F64])
        return self.b.call(fn, [x])

    # bits
    def pow2(self, n):
        """2**n for integral n in [-127, 127] by its bits (2**-127 reads as 0). A NaN
        n (only where the result is NaN anyway) is read as 0: fptosi of NaN is
        poison in LLVM."""
        b = self.b
        n = self.where(self.isnan(n), 0.0, n)
        k = b.fptosi(n, I32)
        bits = b.add(b.shl(k, ir.Constant(I32, 23)), ir.Constant(I32, 0x3F800000))
        return b.bitcast(bits, F32)

    def frexp(self, x):
        """Mantissa in [0.5, 1) and exponent (as a float) of a positive normal x."""
        b = self.b
        bits = b.bitcast(x, I32)
        e = b.sub(b.lshr(bits, ir.Constant(I32, 23)), ir.Constant(I32, 126))
        mant = b.or_(
            b.and_(bits, ir.Constant(I32, 0x807FFFFF)), ir.Constant(I32, 0x3F000000)
        )
        return b.bitcast(mant, F32), b.sitofp(e, F32)


# --------------------------------------------------------------------------------------
# exp, logistic (Cephes' expf: exp(r) * 2**n, r = x - n log 2, n in [-127, 127])

_EXP_LO, _EXP_HI = _f(-87.8), _f(88.8)
_LOG2E = _h(0x3FB8AA3B)
_LN2_HI = _h(0x3F318000)
_LN2_LO = _h(0x395E8083)
_EXP_P = tuple(
    _h(b) for b in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA)
) + (0.5,)


def _exp_parts(m, x):
    """`z, scale` with exp(x) = z * scale: z = exp(r) in [0.7, 1.5), scale = 2**n."""
    x = m.clamp(_EXP_LO, x, _EXP_HI)
    n = m.floor(m.fma(x, _LOG2E, 0.5))
    n = m.clamp(-127.0, n, 127.0)
    r = m.fma(n, -_LN2_HI, x)
    r = m.fma(n, _LN2_LO, r)
    p = m.horner(r, _EXP_P)
    z = m.add(m.fma(p, m.mul(r, r), r), 1.0)
    return z, m.pow2(n)


def emit_exp(em, x):
    m = _Ops(em.b)
    z, scale = _exp_parts(m, m.daz(x))
    return m.daz(m.mul(z, scale))


def emit_logistic(em, x):
    # 1 / (1 + exp(-x)), the 1 + ... fused into exp's last multiply.
    m = _Ops(em.b)
    z, scale = _exp_parts(m, m.neg(m.daz(x)))
    return m.daz(m.div(1.0, m.fma(z, scale, 1.0)))


# --------------------------------------------------------------------------------------
# log, log1p (Cephes' logf on [sqrt(1/2), sqrt(2)) with log(2) in two parts; log1p: a
# rational function below sqrt(2) - 1)

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


def _log(m, x):
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


def emit_log(em, x):
    return _log(_Ops(em.b), x)


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


def _log1p(m, x, fused=True):
    # `fused=False`: x**2 / 2 rounded on its own (and the other product fused), as
    # where XLA's compiler shares it between atanh's log1p(x) and log1p(-x).
    x = m.daz(x)
    large = _log(m, m.add(x, 1.0))
    x2 = m.mul(x, x)
    ratio = m.div(m.horner(x, _LOG1P_NUM), m.horner(x, _LOG1P_DEN))
    if fused:
        small = m.add(x, m.fma(-0.5, x2, m.mul(m.mul(x, x2), ratio)))
    else:
        small = m.add(x, m.fma(m.mul(x, x2), ratio, m.mul(x2, -0.5)))
    return m.where(m.lt(m.abs(x), _f(0.41421356237309504880)), small, large)


def emit_log1p(em, x):
    return _log1p(_Ops(em.b), x)


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


def _tanh(m, x):
    ax = m.abs(x)
    xc = m.clamp(-_TANH_CLAMP, x, _TANH_CLAMP)
    x2 = m.daz(m.mul(xc, xc))
    num = m.mul(xc, m.horner(x2, _TANH_NUM))
    out = m.div(num, m.horner(x2, _TANH_DEN))
    out = m.where(m.lt(ax, _f(4e-4)), x, out)
    return m.where(m.ge(ax, 20.0), m.copysign(1.0, x), out)


def emit_tanh(em, x):
    return _tanh(_Ops(em.b), x)


def emit_expm1(em, x):
    return _expm1(_Ops(em.b), x)


def _expm1(m, x):
    z, scale = _exp_parts(m, m.daz(x))
    e = m.mul(z, scale)
    h = m.mul(x, 0.5)
    # |x| <= 0.5: tanh(x / 2) * (exp(x) + 1), which keeps the low bits.
    near = m.mul(_tanh(m, h), m.add(e, 1.0))
    out = m.where(m.gt(m.abs(x), 0.5), m.sub(e, 1.0), near)
    # x itself where XLA's h is flushed to zero: x / 2 below the smallest normal
    # (flush-to-zero flushes it even where it rounds up to it).
    return m.where(m.lt(m.abs(x), 2.0 * _TINY), x, out)


# --------------------------------------------------------------------------------------
# XLA's expansions: exp2 = exp(x log 2), sinh and cosh with exp(x - log 2) (and expm1
# for sinh of |x| < 1), asinh, acosh, atanh with log and log1p

_LN2 = _h(0x3F317218)  # log(2) rounded to float32


def emit_exp2(em, x):
    m = _Ops(em.b)
    z, scale = _exp_parts(m, m.daz(m.mul(m.daz(x), _LN2)))
    return m.daz(m.mul(z, scale))


def emit_sinh(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    em1 = _expm1(m, x)
    near = m.mul(m.add(em1, m.div(em1, m.add(em1, 1.0))), 0.5)
    z1, s1 = _exp_parts(m, m.add(x, -_LN2))
    z2, s2 = _exp_parts(m, m.sub(-_LN2, x))
    far = m.fma(z1, s1, m.neg(m.daz(m.mul(z2, s2))))
    return m.daz(m.where(m.lt(m.abs(x), 1.0), near, far))


def emit_cosh(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    z1, s1 = _exp_parts(m, m.add(x, -_LN2))
    z2, s2 = _exp_parts(m, m.sub(-_LN2, x))
    return m.fma(z2, s2, m.daz(m.mul(z1, s1)))


def emit_asinh(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    ax = m.abs(x)
    x2 = m.daz(m.mul(x, x))
    q = m.daz(m.div(x2, m.add(m.sqrt(m.add(x2, 1.0)), 1.0)))
    near = _log1p(m, m.add(ax, q))
    far = m.add(_log(m, ax), _LN2)
    sign = m.where(m.eq(x, 0.0), x, m.copysign(1.0, x))
    return m.mul(sign, m.where(m.ge(ax, _h(0x5F7FFFFF)), far, near))


def emit_acosh(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    below = m.sqrt(m.add(x, -1.0))
    above = m.sqrt(m.add(x, 1.0))
    near = _log1p(m, m.daz(m.mul(below, m.add(above, below))))
    far = m.add(_log(m, x), _LN2)
    return m.where(m.ge(x, _h(0x7EFFFFFF)), far, near)


def emit_atanh(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    both = m.sub(_log1p(m, x, False), _log1p(m, m.neg(x), False))
    return m.where(m.gt(m.abs(x), 1.0), _NAN, m.daz(m.mul(both, 0.5)))


# --------------------------------------------------------------------------------------
# erf (a rational function on [-3.83, 3.83], +-1 beyond), erf_inv (Giles' single-
# precision approximation: a polynomial in w = -log1p(-x**2), split at w = 5)

_ERF_NUM = tuple(
    _f(c)
    for c in (
        0.00022905065861350646,
        0.0034082910107109506,
        0.050955695062380861,
        0.18520832239976145,
        1.128379143519084,
    )
)
_ERF_DEN = tuple(
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


def emit_erf(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    x2 = m.daz(m.mul(x, x))
    ratio = m.div(m.mul(x, m.horner(x2, _ERF_NUM)), m.horner(x2, _ERF_DEN))
    inside = m.or_(m.le(m.abs(x), _ERF_BOUND), m.isnan(x))
    out = m.where(inside, ratio, m.copysign(1.0, x))
    return m.where(m.eq(x, 0.0), x, out)


_ERFINV_CENTRAL = tuple(
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
_ERFINV_TAIL = tuple(
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


def emit_erf_inv(em, x):
    m = _Ops(em.b)
    x = m.daz(x)
    w = m.neg(_log1p(m, m.mul(x, m.neg(x))))
    central = m.lt(w, 5.0)
    w = m.where(central, m.sub(w, 2.5), m.sub(m.sqrt(w), 3.0))
    p = m.where(central, _ERFINV_CENTRAL[0], _ERFINV_TAIL[0])
    for c, t in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        p = m.fma(p, w, m.where(central, c, t))
    out = m.mul_ftz(p, x)
    out = m.where(m.eq(m.abs(x), 1.0), m.mul(x, _INF), out)
    return m.where(m.eq(x, 0.0), x, out)


# --------------------------------------------------------------------------------------
# sin, cos: XLA calls the C library's sinf and cosf


def _libm_call(em, symbol, x):
    """C's float function `symbol` of `x`, a computed subnormal result flushed to
    zero (flush-to-zero: XLA calls it with the flag set). A subnormal `x` is passed
    as it is: sinf and cosf read it as the C library reads it under
    denormals-are-zero here (glibc: sinf returns it, cosf gives 1)."""
    m = _Ops(em.b)
    module = em.b.module
    fn = module.globals.get(symbol)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(F32, [F32]), symbol)
    out = em.b.call(fn, [x])
    computed = em.b.icmp_unsigned("!=", em.b.bitcast(out, I32), em.b.bitcast(x, I32))
    tiny = em.b.and_(computed, m.lt(m.abs(out), _TINY))
    return m.where(tiny, m.copysign(0.0, out), out)


def emit_sin(em, x):
    return _libm_call(em, "sinf", x)


def emit_cos(em, x):
    return _libm_call(em, "cosf", x)


KERNELS = {
    "exp": emit_exp,
    "log": emit_log,
    "log1p": emit_log1p,
    "expm1": emit_expm1,
    "tanh": emit_tanh,
    "logistic": emit_logistic,
    "erf": emit_erf,
    "erf_inv": emit_erf_inv,
    "exp2": emit_exp2,
    "sinh": emit_sinh,
    "cosh": emit_cosh,
    "asinh": emit_asinh,
    "acosh": emit_acosh,
    "atanh": emit_atanh,
    "sin": emit_sin,
    "cos": emit_cos,
}
"""The float32 kernels emitted here, by op name (`Elemental`'s method names)."""
