"""Discrete samplers: integers, booleans, signs, shuffles, choices and counts.

Integers in a range use two random words per value, so that the modulus bias is small;
shuffles sort by fresh random keys; choices with probabilities search a cumulative sum
(or take the top of Gumbel-perturbed log-probabilities, without replacement). The count
distributions are rejection samplers run in lockstep over all elements by a
`while_loop`, as JAX runs them: geometric variates by inverting the CDF, Poisson
variates by Knuth's product of uniforms for small means and Hormann's transformed
rejection for large ones, binomial variates by inversion for small means and Kachitvichyanukul
and Schmeiser's BTRS otherwise, and multinomial counts as a chain of binomials.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.core import concrete_or_error
from jaxlite.dispatch import jit
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.random import xla_math as xla
from jaxlite.random.arguments import (
    UINT_DTYPES,
    check_out_sharding,
    check_shape,
    const,
    random_bits,
    shape_or_broadcast,
    split_key,
    unstack,
)
from jaxlite.random.continuous import _signs, _uniform, gumbel, uniform
from jaxlite.random.keys import check_prng_key
from jaxlite.util import canonicalize_axis

__all__ = [
    "bernoulli",
    "binomial",
    "categorical",
    "choice",
    "geometric",
    "multinomial",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
]


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs, -1 or +1 with equal probability."""
    check_out_sharding("rademacher", out_sharding)
    typed, _ = check_prng_key("rademacher", key)
    dtype = dtypes.canonicalize_user_dtype(int if dtype is None else dtype)
    return _rademacher(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _rademacher(key, shape, dtype):
    return _signs(key, shape, dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in `[minval, maxval)` (two random words per value)."""
    check_out_sharding("randint", out_sharding)
    typed, _ = check_prng_key("randint", key)
    dtype = dtypes.canonicalize_user_dtype(int if dtype is None else dtype)
    shape = canonicalize_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:
        # Sample in 32 bits to keep the modulus bias small, as JAX does.
        sampling_dtype = np.dtype("int32")
        minval = jnp.clip(
            jnp.asarray(minval).astype("int32"), int(info.min), int(info.max)
        )
        maxval = jnp.clip(
            jnp.asarray(maxval).astype("int32"), int(info.min), int(info.max) + 1
        )
    out = _randint(typed, minval, maxval, shape, sampling_dtype)
    return out.astype(dtype)


def _convert_and_clip_integer(val, dtype):
    """`val` converted to integer `dtype`, clipped to its range instead of wrapping."""
    lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(val.dtype).min))
    hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(val.dtype).max))
    clipped = jnp.clip(val, const(val.dtype, lo), const(val.dtype, hi))
    return clipped.astype(dtype)


@partial(jit, static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    check_arraylike("randint", minval, maxval)
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    # Where maxval exceeds dtype's range (randint(key, s, 0, 256, uint8)), the span is
    # one larger than maxval - minval after clipping.
    top = _convert_and_clip_integer(
        jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype
    )
    maxval_out_of_range = lax.gt(maxval, top)
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    k1, k2 = split_key(key)
    higher_bits = random_bits(k1, nbits, shape)
    lower_bits = random_bits(k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned)
    # maxval <= minval always gives minval.
    span = jnp.where(maxval <= minval, lax.full_like(span, 1), span)
    span = jnp.where(
        maxval_out_of_range & (maxval > minval), span + const(unsigned, 1), span
    )
    # (hi * 2**nbits + lo) % span, with 2**nbits % span computed without overflow.
    multiplier = lax.rem(lax.full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(
        lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span)
    )
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Booleans that are True with probability `p`."""
    check_out_sharding("bernoulli", out_sharding)
    if shape is not None:
        shape = canonicalize_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    typed, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            f"bernoulli probability `p` must have a floating dtype, got {dtype}."
        )
    p = lax.convert_element_type(p, dtype)
    return _bernoulli(typed, p, shape, mode)


@partial(jit, static_argnums=(2, 3))
def _bernoulli(key, p, shape, mode):
    if shape is None:
        shape = np.shape(p)
    else:
        check_shape("bernoulli", shape, np.shape(p))
    dtype = p.dtype
    if mode == "high":
        u1, u2 = unstack(_uniform(key, 0.0, 1.0, (2, *shape), dtype))
        # The second uniform fills in the bits below the first one's resolution.
        u2 = u2 * const(dtype, 2.0 ** -dtypes.finfo(dtype).nmant)
        return u2 < p - u1
    return _uniform(key, 0.0, 1.0, shape, dtype) < p


def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of `arange(x)` (int `x`) or of `x` along `axis`."""
    check_out_sharding("permutation", out_sharding)
    typed, _ = check_prng_key("permutation", key)
    check_arraylike("permutation", x)
    axis = canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = concrete_or_error(int, x, "argument x of jax.random.permutation()")
        return _shuffle(typed, jnp.arange(r), axis)
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return _shuffle(typed, x, axis)
    ind = _shuffle(typed, jnp.arange(x.shape[axis]), 0)
    return _take(x, ind, axis)


@partial(jit, static_argnums=(2,))
def _shuffle(key, x, axis):
    # Sort by fresh random 32-bit keys, enough rounds that ties (which would bias the
    # result) are unlikely: the number of rounds grows with log(size) / log(2**32).
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        key, subkey = split_key(key)
        sort_keys = random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _take(arr, ind, axis):
    moved = jnp.moveaxis(arr, axis, 0)[ind]
    return jnp.moveaxis(
        moved, tuple(range(ind.ndim)), tuple(range(axis, axis + ind.ndim))
    )


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample of `a` (or of `arange(a)` for an int), with probabilities `p`."""
    typed, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(
            f"shape argument of jax.random.choice must be a sequence, got {shape}"
        )
    check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = concrete_or_error(
            int, a, "The error occurred in jax.random.choice()"
        )
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size "
            f"{n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else _take(arr, ind, axis)
        else:
            population = n_inputs if arr.ndim == 0 else arr
            shuffled = permutation(typed, population, axis)
            result = lax.slice_in_dim(shuffled, 0, n_draws, axis=axis)
    else:
        check_arraylike("choice", p)
        (p_arr,) = promote_dtypes_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = _cumsum(p_arr)
            u = uniform(typed, shape, dtype=p_cuml.dtype)
            r = p_cuml[-1] * (1 - u)
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            # The Gumbel top-k trick.
            g = gumbel(typed, (n_inputs,), dtype=p_arr.dtype, mode=mode) + xla.log(
                p_arr
            )
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    out_shape = (
        shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1 :]
    )
    return result.reshape(out_shape)


def _cumsum(x):
    """`cumsum` of a vector as XLA's CPU backend adds it: blocks of 16 summed in order,
    block totals scanned the same way, then added back."""
    n = x.shape[0]
    if n <= 16:
        return jnp.cumsum(x)
    blocks = -(-n // 16)
    padded = jnp.concatenate([x, jnp.zeros(blocks * 16 - n, x.dtype)]).reshape(
        blocks, 16
    )
    inner = jnp.cumsum(padded, axis=1)
    outer = _cumsum(inner[:, -1])
    offsets = jnp.concatenate([jnp.zeros(1, x.dtype), outer[:-1]])
    return (inner + offsets[:, None]).reshape(-1)[:n]


def categorical(
    key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None
):
    """Category indices drawn with probabilities `softmax(logits, axis)`."""
    check_out_sharding("categorical", out_sharding)
    typed, _ = check_prng_key("categorical", key)
    check_arraylike("categorical", logits)
    logits_arr = jnp.asarray(logits)
    batch_shape = tuple(np.delete(np.array(logits_arr.shape, dtype=int), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape)
        check_shape("categorical", shape, batch_shape)
    shape_prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= logits_arr.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis % logits_arr.ndim, logits_arr.shape[axis])
        noise = gumbel(
            typed, (*shape_prefix, *logits_shape), logits_arr.dtype, mode=mode
        )
        expanded = lax.expand_dims(logits_arr, tuple(range(len(shape_prefix))))
        return jnp.argmax(noise + expanded, axis=axis)
    logits_arr = logits_arr + gumbel(
        typed, logits_arr.shape, logits_arr.dtype, mode=mode
    )
    k = math.prod(shape_prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({logits_arr.shape[axis]})."
        )
    _, indices = lax.top_k(jnp.moveaxis(logits_arr, axis, -1), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dimensions)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson(lam) integers: Knuth's method below 10, Hormann's rejection above."""
    check_out_sharding("poisson", out_sharding)
    typed, _ = check_prng_key("poisson", key)
    dtype = dtypes.canonicalize_user_dtype(int if dtype is None else dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    else:
        shape = np.shape(lam)
    lam = jnp.broadcast_to(lam, shape)
    lam = lax.convert_element_type(lam, np.float32)
    return _poisson(typed, lam, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _poisson(key, lam, shape, dtype):
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    # The rejection sampler accepts at most 89% of candidates as lam grows; any large
    # value keeps its lanes busy where Knuth's method is used.
    lam_rejection = jnp.where(use_knuth, 1e5, lam)
    max_iters = dtypes.iinfo(dtype).max
    result = jnp.where(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters),
    )
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = split_key(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = _uniform(subkey, 0.0, 1.0, shape, np.dtype("float32"))
        return i + 1, k, rng, log_prod + xla.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)

    k_init = jnp.zeros(shape, dtype)
    log_init = jnp.zeros(shape, np.float32)
    k = lax.while_loop(cond, body, (0, k_init, key, log_init))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    # Hormann, "The transformed rejection method for generating Poisson random
    # variables" (1993).
    log_lam = xla.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_key(key, 3)
        u = _uniform(subkey_0, 0.0, 1.0, shape, lam.dtype) - 0.5
        v = _uniform(subkey_1, 0.0, 1.0, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = xla.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        # (k < 0 is rejected below; keep lgamma away from its poles meanwhile.)
        t = -lam + k * log_lam - lax.lgamma(jnp.where(k < 0, 0.0, k) + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = jnp.where(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    k_init = jnp.full(shape, -1, lam.dtype)
    accepted = jnp.zeros(shape, bool)
    k = lax.while_loop(cond, body, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


# --------------------------------------------------------------------------------------
# Geometric, binomial and multinomial counts


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    check_out_sharding("geometric", out_sharding)
    typed, _ = check_prng_key("geometric", key)
    dtype = dtypes.canonicalize_user_dtype(int if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(
            f"dtype argument to `geometric` must be an int dtype, got {dtype}"
        )
    shape = shape_or_broadcast("geometric", shape, p)
    check_arraylike("geometric", p)
    return _geometric(typed, p, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _geometric(key, p, shape, dtype):
    (p,) = promote_dtypes_inexact(p)
    u = _uniform(key, 0.0, 1.0, shape, p.dtype)
    # u == 0 would give an infinite count; JAX maps it to u = 1 (a count of 1).
    u = jnp.where(u == 0, lax.full_like(u, 1), u)
    log_one_minus_p = jnp.broadcast_to(xla.log1p(lax.neg(p)), shape)
    trials = lax.floor(lax.div(xla.log(u), log_one_minus_p)) + 1
    return trials.astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts, as floats (NaN for invalid parameters, inf for n = inf).

    As in JAX (and TensorFlow), counts with mean `n * min(p, 1 - p)` up to 10 come
    from summing geometric waiting times; larger ones from the BTRS rejection sampler
    (Hormann, "The generation of binomial random variates", 1993).
    """
    typed, _ = check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = dtypes.canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(
            f"dtype argument to `binomial` must be a float dtype, got {dtype}"
        )
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _binomial(typed, n, p, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _binomial(key, count, prob, shape, dtype):
    if shape is None:
        shape = jnp.broadcast_shapes(np.shape(count), np.shape(prob))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    # Sample the count of the rarer outcome, q = min(p, 1 - p).
    p_below_half = prob < 0.5
    q = jnp.where(p_below_half, prob, 1.0 - prob)
    count_nan_or_negative = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_nan = jnp.isnan(q)
    q_negative = q < 0.0
    q = jnp.where(q_nan | q_negative, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_negative | (count * q <= 10.0)
    count = lax.floor(count)  # float counts are floored, as by NumPy
    # Each method gets harmless parameters where the other one is used.
    count_inversion = jnp.where(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = jnp.where(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = jnp.where(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = np.array(dtypes.finfo(dtype).max, dtype)
    samples = jnp.where(
        use_inversion,
        _binomial_inversion(key, count_inversion, q, shape, dtype, max_iters),
        _binomial_btrs(key, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = q_negative | q_nan | count_nan_or_negative
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan), samples)
    samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    keep = p_below_half | count_nan_or_negative | q_nan | count_inf
    return jnp.where(keep, samples, count.astype(dtype) - samples)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    """Count geometric waiting times (number of trials to a success) until their sum
    exceeds `count`."""
    log_one_minus_prob = xla.log1p(lax.neg(prob))

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = split_key(key)
        num_geom = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(subkey, 0.0, 1.0, shape, prob.dtype)
        geom = lax.ceil(lax.div(xla.log(u), log_one_minus_prob))
        return i + 1, num_geom, geom_sum + geom, key

    def cond(carry):
        i, _, geom_sum, _ = carry
        return jnp.any(geom_sum <= count) & (i < max_iters)

    zeros = jnp.zeros(shape, prob.dtype)
    num_geom = lax.while_loop(cond, body, (0, zeros, zeros, key))[1]
    return (num_geom - 1).astype(dtype)


# log(k!) - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi) / 2 for k = 0..9: the error of
# Stirling's approximation, tabulated where its series is poor.
_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k):
    """The tail of Stirling's series for log(k!): tabulated up to 9, then its first
    three terms."""
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    tabulated = k <= 9
    k = lax.clamp(const(k.dtype, 0.0), k, const(k.dtype, 9.0))
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    index = lax.convert_element_type(lax.floor(k), np.int32)
    return jnp.where(tabulated, table[index], series)


def _binomial_btrs(key, count, prob, shape, dtype, max_iters):
    """Hormann's BTRS: transformed rejection with a squeeze, one uniform pair a round."""
    stddev = lax.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = lax.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, key_u, key_v = split_key(key, 3)
        u = _uniform(key_u, 0.0, 1.0, shape, prob.dtype)
        v = _uniform(key_v, 0.0, 1.0, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - lax.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = lax.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = xla.log(v * alpha / (a / (us * us) + b))
        bound = (
            (m + 0.5) * xla.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * xla.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * xla.log(r * (count - k + 1) / (k + 1))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(count - k)
        )
        accept = accept1 | (~reject & (v <= bound))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    k_init = jnp.full(shape, -1, prob.dtype)
    accepted = jnp.zeros(shape, bool)
    return lax.while_loop(cond, body, (0, k_init, accepted, key))[1].astype(dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of `n` draws among the outcomes of `p` (last axis), one binomial per
    outcome: the count of outcome i is Binomial(remaining draws, p_i / sum_{j>=i} p_j).
    """
    typed, _ = check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    if shape is None:
        shape = p.shape
    else:
        shape = canonicalize_shape(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = _reverse_cumsum(p)
    ratios = p / jnp.where(remaining == 0, lax.full_like(remaining, 1), remaining)
    keys = split_key(typed, ratios.shape[0])

    def draw(left, ratio_key):
        ratio, key = ratio_key
        count = binomial(key, left, jnp.clip(ratio, 0, 1), dtype=left.dtype)
        return left - count, count

    _, counts = lax.scan(draw, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(
        dtypes.canonicalize_user_dtype(float if dtype is None else dtype)
    )


def _reverse_cumsum(x):
    """Sums of `x[i:]` along axis 0."""
    return jnp.flip(jnp.cumsum(jnp.flip(x, 0), axis=0), 0)
