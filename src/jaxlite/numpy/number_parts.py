"""Functions on the parts of numbers: a float's mantissa and exponent (`frexp`,
`ldexp`), its fractional and integral parts (`modf`) and its spacing; an integer's
common divisors and multiples (`gcd`, `lcm`) and its set bits (`bitwise_count`).

jaxlite has no bit-cast primitive, so the float functions work with values: a power
of two `2**n` is applied as a product of powers of two that are each finite in the
dtype (every product is then exact, so `ldexp` rounds only where the result itself
must be rounded, into the subnormal range or to infinity), and `frexp` estimates the
exponent from `log2` and corrects it by comparing the mantissa with 1/2 and 1. `gcd`
runs Euclid's algorithm in a `while_loop` until every element has converged; the bit
count adds neighbouring bit fields (1, 2, 4, ... bits wide) of the unsigned value.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.lax import elementwise as ew
from jaxlite.numpy.ufuncs import (
    absolute,
    check_arraylike,
    equal,
    floor,
    isfinite,
    log2,
    logical_not,
    logical_or,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes_inexact,
    promote_shapes,
    signbit,
)

__all__ = ["bitwise_count", "frexp", "gcd", "lcm", "ldexp", "modf", "spacing"]


def _pow2_steps(dtype):
    """Exponent steps s (largest first, the first repeated) whose powers 2**s and
    2**-s are finite in `dtype` and whose greedy sums reach every exponent needed
    to scale between the smallest subnormal and the largest finite value."""
    info = dtypes.finfo(dtype)
    top = 1 << (int(np.log2(info.maxexp)) - 1)
    steps = [top]
    s = top
    while s:
        steps.append(s)
        s >>= 1
    return steps


def _scale_by_pow2(x, n):
    """`x * 2**n` for an integer array `n`, exact in every step: `x` is multiplied
    by the powers of two that sum to `n` (each finite), so the only rounding is
    into the subnormal range or to infinity."""
    dtype = np.dtype(x.dtype)
    n = lax.convert_element_type(n, np.int32)
    rem = ew.abs_p.bind(n)
    up = ew.ge_p.bind(n, lax.full_like(n, 0))
    for s in _pow2_steps(dtype):
        take = ew.ge_p.bind(rem, lax.full_like(rem, s))
        factor = lax.select(up, lax.full_like(x, 2.0**s), lax.full_like(x, 2.0**-s))
        x = lax.select(take, ew.mul_p.bind(x, factor), x)
        rem = lax.select(take, ew.sub_p.bind(rem, lax.full_like(rem, s)), rem)
    return x


def ldexp(x1, x2, /):
    """`x1 * 2**x2` for integer `x2`."""
    check_arraylike("ldexp", x1, x2)
    x1_dtype = dtypes.dtype(x1)
    x2_dtype = dtypes.dtype(x2)
    if dtypes.issubdtype(x1_dtype, np.complexfloating) or dtypes.issubdtype(
        x2_dtype, np.inexact
    ):
        raise ValueError(
            f"ldexp not supported for input types {(x1_dtype, x2_dtype)}: x1 must "
            "be real and x2 an integer."
        )
    (x1,) = promote_args_inexact("ldexp", x1)
    x1 = lax.convert_element_type(x1, x1.dtype, False)
    x1, x2 = promote_shapes("ldexp", x1, x2)
    from jaxlite.numpy.shape import broadcast_arrays

    x1, x2 = broadcast_arrays(x1, lax.convert_element_type(x2, np.int32))
    return _scale_by_pow2(x1, x2)


def frexp(x, /):
    """Mantissa `m` (with `0.5 <= |m| < 1`) and integer exponent `e` of `x`, with
    `x == m * 2**e`; zeros, infinities and NaN give `(x, 0)`."""
    check_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(x)
    x = lax.convert_element_type(x, x.dtype, False)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    mag = ew.abs_p.bind(x)
    special = logical_or(equal(x, 0), logical_not(isfinite(x)))
    safe = lax.select(special, lax.full_like(x, 1), mag)
    # floor(log2|x|) + 1 may be off by one near powers of two: corrected below.
    log2_mag = log2(safe)
    e = lax.convert_element_type(floor(log2_mag), np.int32)
    e = ew.add_p.bind(e, lax.full_like(e, 1))
    m = _scale_by_pow2(safe, ew.neg_p.bind(e))
    for _ in range(2):
        big = ew.ge_p.bind(m, lax.full_like(m, 1))
        m = lax.select(big, ew.mul_p.bind(m, lax.full_like(m, 0.5)), m)
        e = lax.select(big, ew.add_p.bind(e, lax.full_like(e, 1)), e)
        small = ew.lt_p.bind(m, lax.full_like(m, 0.5))
        m = lax.select(small, ew.mul_p.bind(m, lax.full_like(m, 2)), m)
        e = lax.select(small, ew.sub_p.bind(e, lax.full_like(e, 1)), e)
    m = lax.select(signbit(x), ew.neg_p.bind(m), m)
    return lax.select(special, x, m), lax.select(special, lax.full_like(e, 0), e)


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
    toward = lax.select(signbit(x), ew.neg_p.bind(inf), inf)
    return ew.sub_p.bind(ew.nextafter_p.bind(x, toward), x)


def _integer_args(fun_name, x1, x2):
    x1, x2 = promote_args_numeric(fun_name, x1, x2)
    if not dtypes.issubdtype(np.dtype(x1.dtype), np.integer):
        raise ValueError(f"Arguments to jax.numpy.{fun_name} must be integers.")
    from jaxlite.numpy.shape import broadcast_arrays

    return broadcast_arrays(x1, x2)


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
        zero, lax.full_like(d, 0), absolute(ew.mul_p.bind(a, ew.div_p.bind(b, safe_d)))
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
