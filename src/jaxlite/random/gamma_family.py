"""Gamma variates and the distributions built on them.

A Gamma(a) variate comes from Marsaglia and Tsang's rejection method ("A simple method
for generating gamma variables", 2000): a cubed, shifted normal accepted by a squeeze
test or a log test, each element looping until it is accepted; shapes below one are
boosted, Gamma(a) ~ Gamma(a + 1) * U ** (1 / a). As in JAX this is one primitive,
`random_gamma` (a key and an array of shapes in, samples out), whose implementation
splits the key once per element and runs the element loops in lockstep under `vmap`.

Its derivative in `a` is implicit reparametrization: holding the sample's CDF value
fixed, d sample / d a = -(dP/da) / (dP/dx) for the regularized incomplete gamma function
P(a, x), which is `lax.random_gamma_grad`. Beta, Dirichlet, chi-square, F, Student's t,
generalized normal and Lp-ball samples are formulas in gamma (or log-gamma) variates.
"""

from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from jaxlite import dtypes, lax, prng
from jaxlite import numpy as jnp
from jaxlite.api_vmap import vmap
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    concrete_or_error,
    no_effects,
    physical_rules,
)
from jaxlite.dispatch import jit
from jaxlite.interpreters import ad, batching
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.numpy.ufuncs import check_arraylike
from jaxlite.random import xla_math as xla
from jaxlite.random.arguments import (
    check_out_sharding,
    check_safe_cast,
    check_shape,
    const,
    float_dtype,
    shape_or_broadcast,
    split_key,
)
from jaxlite.random.continuous import (
    _exponential,
    _normal_real,
    _power,
    _signs,
    _uniform,
)
from jaxlite.random.keys import check_prng_key

__all__ = [
    "ball",
    "beta",
    "chisquare",
    "dirichlet",
    "f",
    "gamma",
    "generalized_normal",
    "loggamma",
    "random_gamma_p",
    "t",
]


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) variate by Marsaglia and Tsang's method ("A simple method for
    generating gamma variables", 2000), looping until a candidate is accepted.

    alpha < 1 is boosted: Gamma(alpha) ~ Gamma(alpha + 1) * U ** (1 / alpha).
    """
    dtype = alpha.dtype
    zero, one = const(dtype, 0), const(dtype, 1)
    one_third = const(dtype, 1.0 / 3.0)
    squeeze = const(dtype, 0.0331)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_third)
    # XLA rewrites x / sqrt(y) as x * rsqrt(y), and its rsqrt is the processor's
    # estimate refined once (see xla_math): correctly rounded here, so c can be an ulp
    # off JAX's on some processors for some d.
    c = lax.mul(one_third, lax.div(one, lax.sqrt(d)))

    def rejected(state):
        _, x2, v3, u = state
        squeeze_fails = lax.ge(u, lax.sub(one, lax.mul(squeeze, lax.mul(x2, x2))))
        log_v3 = lax.add(lax.sub(one, v3), xla.log(v3))
        bound = xla.fma(d, log_v3, lax.mul(x2, const(dtype, 0.5)))
        return lax.bitwise_and(squeeze_fails, lax.ge(xla.log(u), bound))

    def next_candidate(state):
        key = state[0]
        key, x_key, u_key = split_key(key, 3)

        def positive_v(state):
            key = state[0]
            key, subkey = split_key(key)
            x = _normal_real(subkey, (), dtype)
            return key, x, xla.fma(x, c, one)

        _, x, v = lax.while_loop(
            lambda s: lax.le(s[2], zero), positive_v, (x_key, zero, const(dtype, -1))
        )
        u = _uniform(u_key, 0.0, 1.0, (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = split_key(key)
    # The initial state is rejected, so the loop draws at least one candidate.
    init = (key, zero, one, const(dtype, 2))
    _, _, v3, _ = lax.while_loop(rejected, next_candidate, init)
    if log_space:
        log_samples = lax.neg(_exponential(subkey, (), dtype))
        no_boost = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = jnp.where(
            no_boost, zero, lax.mul(log_samples, lax.div(one, alpha_orig))
        )
        return lax.add(lax.add(xla.log(d), xla.log(v3)), log_boost)
    samples = lax.sub(one, _uniform(subkey, 0.0, 1.0, (), dtype))
    boost = jnp.where(boost_mask, one, xla.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v3), boost)


@partial(jit, static_argnums=(2, 3, 4))
def _gamma_samples(key_data, a, keys_ndim, log_space, impl):
    """Samples for the shapes `a` from the uint32 data of keys of `impl`, whose axes
    (`keys_ndim` of them) lead `a`'s: each key is split into one key per element of
    the rest of `a` (the physical rule of `random_gamma`)."""
    keys = prng.random_wrap(key_data, impl=impl)
    keys = keys.reshape(-1)
    per_key = math.prod(a.shape[keys_ndim:])
    keys = vmap(partial(split_key, num=per_key))(keys).reshape(-1)
    samples = vmap(partial(_gamma_one, log_space=log_space))(keys, a.reshape(-1))
    return samples.reshape(a.shape)


def _random_gamma_physical(avals_in, avals_out, key_data, a, *, log_space):
    keys = avals_in[0]
    impl = keys.dtype._impl
    return [_gamma_samples(key_data, a, keys.ndim, log_space, impl)]


def _random_gamma_abstract(keys, a, *, log_space):
    if not dtypes.issubdtype(keys.dtype, dtypes.prng_key):
        raise TypeError(f"random_gamma takes key array operand, got dtype {keys.dtype}")
    if tuple(a.shape[: keys.ndim]) != tuple(keys.shape):
        raise TypeError(
            f"random_gamma: the keys' shape {keys.shape} must be a prefix of the shape "
            f"of a, {tuple(a.shape)}"
        )
    return [ShapedArray(a.shape, a.dtype, a.weak_type)], no_effects


def _random_gamma_jvp_a(a_dot, sample, keys, a, *, log_space):
    return lax.mul(a_dot, _gamma_grad(sample, a, log_space))


def _random_gamma_batch(axis_size, vals, dims, *, log_space):
    keys, a = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
    return [random_gamma_p.bind(keys, a, log_space=log_space)], [0]


random_gamma_p = Primitive("random_gamma")
abstract_eval_rules[random_gamma_p] = _random_gamma_abstract
physical_rules[random_gamma_p] = _random_gamma_physical
ad.defjvp_with_output(random_gamma_p, None, _random_gamma_jvp_a)
batching.batch_rules[random_gamma_p] = _random_gamma_batch


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a) floats with unit scale; differentiable in `a` (implicit reparametrization)."""
    check_out_sharding("gamma", out_sharding)
    typed, _ = check_prng_key("gamma", key)
    dtype = float_dtype("gamma", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _gamma(typed, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """log of Gamma(a) floats, computed in log space (accurate for tiny `a`)."""
    check_out_sharding("loggamma", out_sharding)
    typed, _ = check_prng_key("loggamma", key)
    dtype = float_dtype("gamma", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _gamma(typed, a, shape, dtype, True)


@partial(jit, static_argnums=(2, 3, 4))
def _gamma(key, a, shape, dtype, log_space):
    if shape is None:
        shape = np.shape(a)
    else:
        check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


def _gamma_grad(sample, a, log_space):
    """d sample / d a at a fixed CDF value (`lax.random_gamma_grad`), or
    d log(sample) / d a for log-space samples.

    Where a log-space sample is below the normal float range, exp(sample) would lose
    it; there P(a, x) ~ x**a / Gamma(a + 1), whose limit (digamma(a + 1) - log x) / a
    is used instead (JAX divides by the smallest normal float, which is off there).
    """
    if not log_space:
        return lax.random_gamma_grad(a, sample)
    one = lax.full_like(a, 1)
    tiny = dtypes.finfo(sample.dtype).tiny
    underflow = lax.lt(sample, lax.full_like(sample, math.log(tiny)))
    x = jnp.where(underflow, one, lax.exp(sample))
    grad = lax.div(lax.random_gamma_grad(a, x), x)
    limit = lax.div(lax.sub(lax.digamma(lax.add(a, one)), sample), a)
    return jnp.where(underflow, limit, grad)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) floats, from two log-gamma variates."""
    check_out_sharding("beta", out_sharding)
    typed, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_safe_cast("beta", dtype, a, b)
    shape = shape_or_broadcast("beta", shape, a, b)
    return _beta(typed, a, b, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _beta(key, a, b, shape, dtype):
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = split_key(key)
    log_gamma_a = _gamma(key_a, a, shape, dtype, True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, True)
    # gamma_a / (gamma_a + gamma_b) without overflow or underflow.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = xla.exp(lax.sub(log_gamma_a, log_max))
    gamma_b_scaled = xla.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a_scaled, lax.add(gamma_a_scaled, gamma_b_scaled))


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) vectors along the last axis, from log-gamma variates."""
    check_out_sharding("dirichlet", out_sharding)
    typed, _ = check_prng_key("dirichlet", key)
    check_arraylike("dirichlet", alpha)
    dtype = float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _dirichlet(typed, alpha, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _dirichlet(key, alpha, shape, dtype):
    alpha = jnp.asarray(alpha)
    if alpha.ndim < 1:
        raise ValueError(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}"
        )
    if shape is None:
        shape = alpha.shape[:-1]
    else:
        check_shape("dirichlet", shape, alpha.shape[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    full_shape = (*shape, alpha.shape[-1])
    log_gamma = _gamma(
        key, jnp.broadcast_to(alpha, full_shape), full_shape, dtype, True
    )
    # Normalize in log space, as a softmax.
    shifted = log_gamma - jnp.max(log_gamma, axis=-1, keepdims=True)
    unnormalized = xla.exp(shifted)
    total = xla.sum_last_axis(unnormalized)[..., None]
    return xla.divide(unnormalized, total)


# --------------------------------------------------------------------------------------
# Chi-square, F, Student's t, generalized normal and Lp balls


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square(df) floats: twice a Gamma(df / 2) variate (drawn in log space)."""
    check_out_sharding("chisquare", out_sharding)
    typed, _ = check_prng_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = shape_or_broadcast("chisquare", shape, df)
    check_safe_cast("chisquare", dtype, df)
    return _chisquare(typed, df, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _chisquare(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    two = lax.full_like(df, 2)
    log_g = _gamma(key, lax.div(df, two), shape, dtype, True)
    return xla.exp(log_g) * 2


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F(dfnum, dfden) floats: a ratio of chi-square variates, each over its df."""
    check_out_sharding("f", out_sharding)
    typed, _ = check_prng_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = shape_or_broadcast("f", shape, dfnum, dfden)
    check_safe_cast("f", dtype, dfnum, dfden)
    return _f(typed, dfnum, dfden, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _f(key, dfnum, dfden, shape, dtype):
    dfnum = lax.convert_element_type(dfnum, dtype)
    dfden = lax.convert_element_type(dfden, dtype)
    key_den, key_num = split_key(key)
    log_num = _gamma(
        key_num, lax.div(dfnum, lax.full_like(dfnum, 2)), shape, dtype, True
    )
    log_den = _gamma(
        key_den, lax.div(dfden, lax.full_like(dfden, 2)), shape, dtype, True
    )
    # (chi2_num / dfnum) / (chi2_den / dfden), rearranged as XLA's simplifier does:
    # (a / b) / (c / d) => (a * d) / (b * c), with the constant 2 of chi2 = 2 g moved.
    numerator = xla.exp(log_num) * (dfden * 2)
    denominator = xla.exp(log_den) * (dfnum * 2)
    return numerator / denominator


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t(df) floats: `normal * sqrt((df / 2) / Gamma(df / 2))`."""
    check_out_sharding("t", out_sharding)
    typed, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = shape_or_broadcast("t", shape, df)
    check_safe_cast("t", dtype, df)
    return _t(typed, df, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _t(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = split_key(key)
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(df, lax.full_like(df, 2))
    g = _gamma(key_g, half_df, shape, dtype, False)
    return n * lax.sqrt(half_df / g)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Floats with density proportional to `exp(-|x| ** p)`: a random sign times
    `Gamma(1 / p) ** (1 / p)`."""
    check_out_sharding("generalized_normal", out_sharding)
    shape = canonicalize_shape(shape)
    typed, _ = check_prng_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype, np.generic, "a")
    check_shape("generalized_normal", shape)
    return _generalized_normal(typed, p, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _generalized_normal(key, p, shape, dtype):
    key_g, key_sign = split_key(key)
    g = _gamma(key_g, 1 / p, shape, dtype, False)
    return _signs(key_sign, shape, dtype) * _power(g, 1 / p)


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Points uniform in the unit Lp ball of dimension `d` (Barthe, Guedon, Mendelson
    and Naor's construction from generalized normals and an exponential)."""
    check_out_sharding("ball", out_sharding)
    shape = canonicalize_shape(shape)
    typed, _ = check_prng_key("ball", key)
    dtype = float_dtype("ball", dtype, np.generic, "a")
    check_shape("ball", shape)
    d = concrete_or_error(operator.index, d, "The error occurred in jax.random.ball()")
    return _ball(typed, p, d, shape, dtype)


@partial(jit, static_argnums=(2, 3, 4))
def _ball(key, p, d, shape, dtype):
    key_g, key_e = split_key(key)
    g = _generalized_normal(key_g, p, (*shape, d), dtype)
    e = _exponential(key_e, shape, dtype)
    norm_p = xla.sum_last_axis(_power(jnp.abs(g), p)) + e
    # g / norm_p ** (1 / p), as XLA rewrites it: a / b ** c => a * b ** -c.
    return g * _power(norm_p, -(1 / p))[..., None]
