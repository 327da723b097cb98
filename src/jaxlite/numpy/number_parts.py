"""Functions on the parts of numbers: a float's mantissa and exponent (`frexp`,
`ldexp`), its fractional and integral parts (`modf`) and its spacing; an integer's
common divisors and multiples (`gcd`, `lcm`) and its set bits (`bitwise_count`).

`frexp` reads the exponent field from the float's bits (`lax.bitcast_convert_type`)
and sets it to that of 1/2 to get the mantissa; `ldexp` adds its argument to that
exponent and multiplies the mantissa by the power of two, as JAX does (so results
and the rounding of subnormal results agree with JAX). `gcd`
runs Euclid's algorithm in a `while_loop` until every element has converged; the bit
count adds neighbouring bit fields (1, 2, 4, ... bits wide) of the unsigned value.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.lax import elementwise as ew
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.numpy.ufuncs import (
    absolute,
    add,
    check_arraylike,
    equal,
    greater,
    isinf,
    isnan,
    logical_or,
    multiply,
    power,
    promote_args,
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
    signbit,
    subtract,
    where,
)

__all__ = ["bitwise_count", "frexp", "gcd", "lcm", "ldexp", "modf", "spacing"]


def _bitcast(x, dtype):
    """`lax.bitcast_convert_type` between same-width dtypes (its impl returns shape
    (1,) for a 0-d operand, so a scalar goes through shape (1,))."""
    if np.ndim(x) == 0:
        return lax.reshape(lax.bitcast_convert_type(lax.reshape(x, (1,)), dtype), ())
    return lax.bitcast_convert_type(x, dtype)


def ldexp(x1, x2, /):
    """`x1 * 2**x2` for integer `x2`, as JAX computes it: the exponent of `x1`
    (from `frexp`) plus `x2`, applied as a power of two in the float dtype."""
    check_arraylike("ldexp", x1, x2)
    x1_dtype = dtypes.dtype(x1)
    x2_dtype = dtypes.dtype(x2)
    if dtypes.issubdtype(x1_dtype, np.complexfloating) or dtypes.issubdtype(
        x2_dtype, np.inexact
    ):
        raise ValueError(f"ldexp not supported for input types {(x1_dtype, x2_dtype)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = add(lax.convert_element_type(e, x2.dtype), x2)
    # One factor of 2 moves into the mantissa, so 2**e stays finite one step longer.
    up = greater(e, 0)
    m = where(up, multiply(m, 2), m)
    e = where(up, subtract(e, 1), e)
    out = multiply(m, power(2, e))
    return where(logical_or(isinf(x1), equal(x1, 0)), x1, out)


def frexp(x, /):
    """Mantissa `m` (with `0.5 <= |m| < 1`) and integer exponent `e` of `x`, with
    `x == m * 2**e`; zeros, infinities and NaN give `(x, 0)`. Read from the bits:
    the exponent field gives `e`, and `m` is `x` with its exponent field set to
    that of 1/2 (subnormals are first scaled into the normal range). The
    derivative of `m` is `2**-e` (of `e`, zero)."""
    check_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


def _frexp_fun(x):
    dtype = np.dtype(x.dtype)
    info = dtypes.finfo(dtype)
    itype = np.dtype(f"int{info.bits}")
    nmant, exp_mask, bias = info.nmant, (1 << info.nexp) - 1, 1 - info.minexp

    def c(v):
        return lax.full((), v, itype)

    subnormal = ew.lt_p.bind(ew.abs_p.bind(x), lax.full((), info.tiny, dtype))
    scaled = where(subnormal, multiply(x, lax.full((), 2.0**nmant, dtype)), x)
    bits = _bitcast(scaled, itype)
    field = ew.and_p.bind(ew.shift_right_arithmetic_p.bind(bits, c(nmant)), c(exp_mask))
    e = ew.add_p.bind(
        ew.sub_p.bind(field, c(bias - 1)), where(subnormal, c(-nmant), c(0))
    )
    mantissa = ew.and_p.bind(bits, c(~(exp_mask << nmant)))
    m = _bitcast(ew.or_p.bind(mantissa, c((bias - 1) << nmant)), dtype)
    special = logical_or(logical_or(isinf(x), isnan(x)), equal(x, 0))
    e = where(special, c(0), e)
    return where(special, x, m), lax.convert_element_type(e, np.int32)


def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    scale = lax.exp2(lax.neg(lax.convert_element_type(e, t.dtype)))
    return (m, e), (multiply(t, scale), np.zeros(np.shape(e), dtypes.float0))


_frexp_fun.__name__ = "frexp"
_frexp = custom_jvp(_frexp_fun)
_frexp.defjvp(_frexp_jvp)


def modf(x, /, out=None):
    """Fractional and integral parts of `x`, both with the sign of `x`."""
    check_arraylike("modf", x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = promote_dtypes_inexact(x)
    whole = lax.select(
        ew.ge_p.bind(x, lax.full_like(x, 0)), ew.floor_p.bind(x), ew.ceil_p.bind(x)
    )
    return ew.sub_p.bind(x, whole), whole


def spacing(x, /):
    """The distance from `x` to the next representable number away from zero
    (negative for negative `x`)."""
    (x,) = promote_args_inexact("spacing", x)
    x = lax.convert_element_type(x, x.dtype, False)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = lax.full_like(x, np.inf)
    if np.dtype(x.dtype) == np.float16:  # as NumPy (and JAX): always toward +inf
        return ew.sub_p.bind(ew.nextafter_p.bind(x, inf), x)
    negative = signbit(x)
    out = ew.sub_p.bind(ew.nextafter_p.bind(x, lax.select(negative, -inf, inf)), x)
    # Where subnormals flush to zero the step is 0: report the smallest subnormal.
    tiny = lax.full_like(x, float(dtypes.finfo(x.dtype).smallest_subnormal))
    tiny = lax.select(negative, ew.neg_p.bind(tiny), tiny)
    return lax.select(ew.eq_p.bind(out, lax.full_like(out, 0)), tiny, out)


def _integer_args(fun_name, x1, x2):
    check_arraylike(fun_name, x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not dtypes.issubdtype(np.dtype(x1.dtype), np.integer):
        raise ValueError(f"Arguments to jax.numpy.{fun_name} must be integers.")
    from jaxlite.numpy.shape import broadcast_arrays

    x1, x2 = broadcast_arrays(x1, x2)
    if np.ndim(x1):  # as in JAX, only weak scalars stay weak through the loop
        x1, x2 = (lax.convert_element_type(v, v.dtype, False) for v in (x1, x2))
    return x1, x2


def gcd(x1, x2):
    """Greatest common divisor of `|x1|` and `|x2|` (Euclid's algorithm, run until
    every element has converged)."""
    x1, x2 = _integer_args("gcd", x1, x2)
    return _gcd(absolute(x1), absolute(x2))


def _gcd(a, b):
    zero = lax.full_like(b, 0)

    def cond(ab):
        return lax.reduce_or(ew.ne_p.bind(ab[1], zero), tuple(range(np.ndim(zero))))

    def body(ab):
        a, b = ab
        nonzero = ew.ne_p.bind(b, zero)
        safe_b = lax.select(nonzero, b, lax.full_like(b, 1))
        return (
            lax.select(nonzero, b, a),
            lax.select(nonzero, ew.rem_p.bind(a, safe_b), zero),
        )

    return lax.while_loop(cond, body, (a, b))[0]


def lcm(x1, x2):
    """Least common multiple of `|x1|` and `|x2|` (0 if either is 0)."""
    x1, x2 = _integer_args("lcm", x1, x2)
    a, b = absolute(x1), absolute(x2)
    d = _gcd(a, b)
    zero = ew.eq_p.bind(d, lax.full_like(d, 0))
    safe_d = lax.select(zero, lax.full_like(d, 1), d)
    return lax.select(
        zero, lax.full_like(d, 0), ew.mul_p.bind(a, ew.div_p.bind(b, safe_d))
    )


def bitwise_count(x, /):
    """The number of 1 bits in `|x|` (uint8), by adding neighbouring bit fields."""
    (x,) = promote_args("bitwise_count", x)
    dtype = np.dtype(x.dtype)
    if dtype == np.bool_:
        return lax.convert_element_type(x, np.uint8)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"bitwise_count requires integer arguments, got {dtype}.")
    udtype = np.dtype(f"uint{dtype.itemsize * 8}")
    if dtype.kind == "i":
        x = ew.abs_p.bind(x)
    u = lax.convert_element_type(x, udtype)

    def c(v):
        return lax.full_like(u, v)

    def shr(v, s):
        return ew.shift_right_logical_p.bind(v, c(s))

    bits = dtype.itemsize * 8
    m1, m2, m4 = (int(h * (bits // 8), 16) for h in ("55", "33", "0f"))
    u = ew.sub_p.bind(u, ew.and_p.bind(shr(u, 1), c(m1)))
    u = ew.add_p.bind(ew.and_p.bind(u, c(m2)), ew.and_p.bind(shr(u, 2), c(m2)))
    u = ew.and_p.bind(ew.add_p.bind(u, shr(u, 4)), c(m4))
    s = 8
    while s < bits:
        u = ew.add_p.bind(u, shr(u, s))
        s *= 2
    return lax.convert_element_type(ew.and_p.bind(u, c(0xFF)), np.uint8)
