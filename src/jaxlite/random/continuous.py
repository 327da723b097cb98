"""Continuous samplers: uniform floats, and what transforms of them give.

Every float sampler starts from `uniform`, whose values take their mantissa from the top
bits of the key's random words. Normals are `sqrt(2) * erf_inv(u)`, exponentials
`-log(1 - u)`, Cauchy variates `tan(pi * (u - 1/2))`, and so on: each sampler is the
inverse CDF (or a short formula in normals and uniforms) applied with the very
arithmetic JAX uses, and with XLA's float32 roundings (`xla_math`), so float32 samples
are JAX's values bit for bit.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.dispatch import jit
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.numpy.ufuncs import promote_dtypes_inexact
from jaxlite.random import xla_math as xla
from jaxlite.random.arguments import (
    UINT_DTYPES,
    check_out_sharding,
    check_safe_cast,
    check_shape,
    const,
    entries,
    float_dtype,
    random_bits,
    shape_or_broadcast,
    split_key,
    unstack,
)
from jaxlite.random.keys import check_prng_key

__all__ = [
    "cauchy",
    "double_sided_maxwell",
    "exponential",
    "gumbel",
    "laplace",
    "logistic",
    "lognormal",
    "maxwell",
    "normal",
    "pareto",
    "rayleigh",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
]


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in `[minval, maxval)`."""
    check_out_sharding("uniform", out_sharding)
    typed, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonicalize_shape(shape)
    return _uniform(typed, minval, maxval, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _uniform(key, minval, maxval, shape, dtype):
    check_shape("uniform", shape)
    minval = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = UINT_DTYPES[nbits]
    raw = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint_dtype)
    # The top `nmant` bits as the mantissa of a float in [1, 2), minus 1: exactly
    # mantissa * 2**-nmant, which is what JAX's bitcast computes.
    mantissa = lax.shift_right_logical(raw, const(uint_dtype, rng_bits - nmant))
    floats = lax.mul(
        lax.convert_element_type(mantissa, dtype), const(dtype, 2.0**-nmant)
    )
    out = xla.mul_add(floats, lax.sub(maxval, minval), minval)
    return lax.max(minval, out)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal floats (complex dtypes give independent real and imaginary parts
    of variance 1/2)."""
    check_out_sharding("normal", out_sharding)
    typed, _ = check_prng_key("normal", key)
    shape = canonicalize_shape(shape)
    dtype = float_dtype("normal", dtype, np.inexact, "a float or complex")
    return _normal(typed, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        key_re, key_im = split_key(key)
        real_dtype = np.array(0, dtype).real.dtype
        re = lax.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
        im = lax.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
        return (re + 1j * im) / const(dtype, np.sqrt(2))
    return _normal_real(key, shape, dtype)


def _normal_real(key, shape, dtype):
    check_shape("normal", shape)
    lo = np.nextafter(const(dtype, -1.0), const(dtype, 0.0))
    u = _uniform(key, lo, const(dtype, 1.0), shape, dtype)
    return lax.mul(const(dtype, np.sqrt(2)), xla.erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Standard normal floats conditioned on `lower < x < upper`."""
    check_out_sharding("truncated_normal", out_sharding)
    if shape is not None:
        shape = canonicalize_shape(shape)
    typed, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    return _truncated_normal(typed, lower, upper, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
    shape = shape_or_broadcast("truncated_normal", shape, lower, upper)
    sqrt2 = const(dtype, np.sqrt(2))
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = xla.erf(lax.div(lower, sqrt2))
    b = xla.erf(lax.div(upper, sqrt2))
    u = _uniform(key, a, b, shape, dtype)
    out = lax.mul(sqrt2, xla.erf_inv(u))
    # Keep rounding (or u == a) from leaving the open interval (lower, upper).
    inf = const(dtype, np.inf)
    return jnp.clip(
        out,
        lax.nextafter(lax.stop_gradient(lower), lax.full_like(lower, inf)),
        lax.nextafter(lax.stop_gradient(upper), lax.full_like(upper, -inf)),
    )


def exponential(key, shape=(), dtype=None, *, out_sharding=None):
    """Exponential floats with rate 1: `-log(1 - u)`."""
    check_out_sharding("exponential", out_sharding)
    typed, _ = check_prng_key("exponential", key)
    dtype = float_dtype("exponential", dtype)
    return _exponential(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _exponential(key, shape, dtype):
    check_shape("exponential", shape)
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    return lax.neg(xla.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None, *, out_sharding=None):
    """Laplace floats with scale 1."""
    check_out_sharding("laplace", out_sharding)
    typed, _ = check_prng_key("laplace", key)
    dtype = float_dtype("laplace", dtype)
    return _laplace(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _laplace(key, shape, dtype):
    check_shape("laplace", shape)
    lo = -1.0 + float(dtypes.finfo(dtype).epsneg)
    u = _uniform(key, lo, 1.0, shape, dtype)
    return lax.mul(lax.sign(u), xla.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None, *, out_sharding=None):
    """Logistic floats: `log(u) - log(1 - u)`."""
    check_out_sharding("logistic", out_sharding)
    typed, _ = check_prng_key("logistic", key)
    dtype = float_dtype("logistic", dtype)
    return _logistic(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _logistic(key, shape, dtype):
    check_shape("logistic", shape)
    u = _uniform(key, float(dtypes.finfo(dtype).tiny), 1.0, shape, dtype)
    return lax.sub(xla.log(u), xla.log1p(lax.neg(u)))


def lognormal(key, sigma=1.0, shape=None, dtype=None, *, out_sharding=None):
    """Log-normal floats: `exp(sigma * normal)`."""
    check_out_sharding("lognormal", out_sharding)
    typed, _ = check_prng_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _lognormal(typed, sigma, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _lognormal(key, sigma, shape, dtype):
    shape = shape_or_broadcast("lognormal", shape, sigma)
    sigma = lax.convert_element_type(sigma, dtype)
    scaled = lax.mul(_normal_real(key, shape, dtype), sigma)
    return xla.exp(scaled)


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Gumbel floats: `-log(-log(u))`.

    `mode="high"` spends two uniforms per value for a wider range of tiny `u`.
    """
    check_out_sharding("gumbel", out_sharding)
    typed, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonicalize_shape(shape)
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(typed, shape, dtype, mode)


@partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key, shape, dtype, mode):
    check_shape("gumbel", shape)
    finfo = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest(key, shape)
    if mode in ("high", "highest"):
        high, low = unstack(_uniform(key, 0.0, 1.0, (2, *shape), dtype))
        refined = (
            high + const(dtype, 2.0**-finfo.nmant) * low + const(dtype, finfo.tiny)
        )
        x = jnp.where(high >= 0.5, high, refined)
        return lax.neg(xla.log(lax.neg(xla.log1p(lax.neg(x)))))
    u = _uniform(key, float(finfo.tiny), 1.0, shape, dtype)
    return lax.neg(xla.log(lax.neg(xla.log(u))))


def _count_leading_zeros(x):
    """The number of leading zero bits of uint32 `x` (32 for 0), by binary search."""
    count = lax.full_like(x, 0)
    for width in (16, 8, 4, 2, 1):
        empty = lax.lt(x, const(np.uint32, 1 << (32 - width)))
        count = jnp.where(empty, count + const(np.uint32, width), count)
        x = jnp.where(empty, lax.shift_left(x, const(np.uint32, width)), x)
    return jnp.where(lax.eq(x, const(np.uint32, 0)), count + const(np.uint32, 1), count)


def _fraction_from_bits(hi, lo):
    """The 64-bit fixed-point fraction `0.hi lo` as the nearest float32 below it, with
    a full 24-bit mantissa however small it is (exactness down to 2**-64)."""
    hi_zeros = _count_leading_zeros(hi)
    lo_zeros = _count_leading_zeros(lo)
    hi_empty = lax.eq(hi_zeros, const(np.uint32, 32))
    # Shifting by 32 gives 0 in lax, as on XLA.
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hi_zeros),
        jnp.where(
            hi_empty,
            lax.shift_left(lo, lo_zeros),
            lax.shift_right_logical(lo, const(np.uint32, 32) - hi_zeros),
        ),
    )
    mantissa = lax.shift_right_logical(mantissa, const(np.uint32, 8))
    mantissa = lax.bitwise_and(mantissa, const(np.uint32, (1 << 23) - 1))
    zeros = jnp.where(hi_empty, const(np.uint32, 32) + lo_zeros, hi_zeros)
    exponent = lax.shift_left(const(np.uint32, 126) - zeros, const(np.uint32, 23))
    exponent = lax.bitwise_and(exponent, const(np.uint32, (1 << 30) - (1 << 22)))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def _gumbel_highest(key, shape):
    """float32 Gumbel variates from 64 random bits each: `u` (or `1 - u`, whichever is
    below one half) is read exactly from the bits, so the tails reach about 44."""
    hi, lo = unstack(random_bits(key, 32, (2, *shape)))
    flip = lax.lt(hi, const(np.uint32, 1 << 31))
    # 1 - u in 64-bit fixed point: the complement plus one, carried into the high word.
    neg_hi, neg_lo = lax.bitwise_not(hi), lax.bitwise_not(lo)
    carry = lax.convert_element_type(
        lax.eq(neg_lo, const(np.uint32, 0xFFFFFFFF)), np.uint32
    )
    neg_hi, neg_lo = neg_hi + carry, neg_lo + const(np.uint32, 1)
    x = _fraction_from_bits(jnp.where(flip, hi, neg_hi), jnp.where(flip, lo, neg_lo))
    small = lax.neg(xla.log(lax.neg(xla.log1p(lax.neg(x)))))
    large = lax.neg(xla.log(lax.neg(xla.log(x))))
    return jnp.where(flip, small, large)


# --------------------------------------------------------------------------------------
# More inverse CDFs and transforms


def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard Cauchy floats: `tan(pi * (u - 1/2))`."""
    check_out_sharding("cauchy", out_sharding)
    typed, _ = check_prng_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    return _cauchy(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _cauchy(key, shape, dtype):
    check_shape("cauchy", shape)
    u = _uniform(key, float(dtypes.finfo(dtype).eps), 1.0, shape, dtype)
    return xla.tan(lax.mul(const(dtype, np.pi), lax.sub(u, const(dtype, 0.5))))


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto(b) floats on `[1, inf)`: `exp(e / b)` for a standard exponential `e`."""
    check_out_sharding("pareto", out_sharding)
    typed, _ = check_prng_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = shape_or_broadcast("pareto", shape, b)
    check_safe_cast("pareto", dtype, b)
    return _pareto(typed, b, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _pareto(key, b, shape, dtype):
    b = lax.convert_element_type(b, dtype)
    return xla.exp(xla.divide(_exponential(key, shape, dtype), b))


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh floats: `scale * sqrt(-2 log(u))`."""
    check_out_sharding("rayleigh", out_sharding)
    typed, _ = check_prng_key("rayleigh", key)
    dtype = float_dtype("rayleigh", dtype)
    shape = shape_or_broadcast("rayleigh", shape, scale)
    check_safe_cast("rayleigh", dtype, scale)
    return _rayleigh(typed, scale, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _rayleigh(key, scale, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(lax.convert_element_type(scale, dtype), shape)
    radius = lax.sqrt(lax.mul(xla.log(u), lax.full_like(u, -2)))
    return lax.mul(scale, radius)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) floats with the given mean and unit shape, by Michael,
    Schucany and Haas's transformation of a normal and a uniform variate."""
    check_out_sharding("wald", out_sharding)
    typed, _ = check_prng_key("wald", key)
    dtype = float_dtype("wald", dtype)
    shape = shape_or_broadcast("wald", shape, mean)
    check_safe_cast("wald", dtype, mean)
    return _wald(typed, mean, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _wald(key, mean, shape, dtype):
    key_v, key_z = split_key(key)
    mean = jnp.broadcast_to(lax.convert_element_type(mean, dtype), shape)
    v = _normal_real(key_v, shape, dtype)
    z = _uniform(key_z, 0.0, 1.0, shape, dtype)
    y = v * v
    mean_sq = mean * mean
    # As XLA's CPU backend fuses it: each sum's first product is an fma.
    root = lax.sqrt(xla.mul_add(4 * mean, y, mean_sq * (y * y)))
    x = xla.mul_add(-(mean * 0.5), root, mean + mean_sq * y * 0.5)
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: `scale * (-log(1 - u)) ** (1 / concentration)`."""
    typed, _ = check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min(typed, scale, concentration, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(3, 4))
def _weibull_min(key, scale, concentration, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    exponential = lax.neg(xla.log1p(lax.neg(u)))
    powered = _power(exponential, 1.0 / concentration)
    return powered * scale


def _power(x, y):
    """`x ** y` with JAX's promotion and broadcasting, rounded as XLA's pow."""
    x, y = jnp.broadcast_arrays(*promote_dtypes_inexact(x, y))
    return xla.pow(x, y)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """One-sided Maxwell floats: the length of a standard normal vector in 3-D."""
    check_out_sharding("maxwell", out_sharding)
    typed, _ = check_prng_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _maxwell(key, shape, dtype):
    samples = _normal_real(key, (*shape, 3), dtype)
    if samples.dtype != np.float32 or samples.size > 4096:
        return lax.sqrt(xla.sum_last_axis(samples * samples))
    # XLA's CPU backend sums small rows of squares in this order, two of the squares
    # fused into the additions.
    x, y, z = entries(samples, -1)
    return lax.sqrt(xla.mul_add(z, z, xla.mul_add(x, x, y * y)))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell floats with a random sign, scaled by `scale` and shifted by `loc`.

    As in JAX, the result has shape `shape + broadcast(loc, scale).shape`, where an
    empty `shape` counts as that broadcast shape (so `shape=()` and array parameters
    give its square)."""
    typed, _ = check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = canonicalize_shape(shape)
    return _double_sided_maxwell(typed, loc, scale, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    params_shape = jnp.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (*(shape or params_shape), *params_shape)
    key_maxwell, key_sign = split_key(key)
    magnitude = _maxwell(key_maxwell, shape, dtype)
    scale, loc = (lax.convert_element_type(v, dtype) for v in (scale, loc))
    signed, scale, loc = jnp.broadcast_arrays(
        _signs(key_sign, shape, dtype) * magnitude, scale, loc
    )
    return xla.mul_add(signed, scale, loc)


def _signs(key, shape, dtype):
    """-1 or +1 with equal probability (`rademacher`): a uniform float below 1/2."""
    heads = _uniform(key, 0.0, 1.0, shape, dtypes.default_float_dtype()) < 0.5
    return (2 * heads.astype(dtype) - 1).astype(dtype)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular floats on `[left, right]` peaking at `mode`, by inverting the CDF."""
    check_out_sharding("triangular", out_sharding)
    typed, _ = check_prng_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = shape_or_broadcast("triangular", shape, left, mode, right)
    check_safe_cast("triangular", dtype, left, mode, right)
    return _triangular(typed, left, mode, right, shape, dtype)


@partial(jit, static_argnums=(4, 5))
def _triangular(key, left, mode, right, shape, dtype):
    left, mode, right = (
        jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
        for v in (left, mode, right)
    )
    width = right - left
    below_mode = (mode - left) / width
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    rising = left + lax.sqrt(u * width * (mode - left))
    falling = right - lax.sqrt((1 - u) * width * (right - mode))
    return jnp.where(u < below_mode, rising, falling)
