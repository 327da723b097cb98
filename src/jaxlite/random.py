"""jaxlite.random: JAX's random number API, with JAX's numbers.

Randomness is explicit: a draw is a pure function of a key, and new keys come from
`split` and `fold_in` (see `jaxlite.prng` for keys and the Threefry hash). Each sampler
turns the key's bits into values with the arithmetic JAX uses: uniform floats take their
mantissa from the top bits, normals are `sqrt(2) * erf_inv(u)`, integers in a range use
two words per value, shuffles sort by random keys, gamma variates run Marsaglia and
Tsang's rejection loop per element, and so on. The transcendental functions and fused
multiply-adds are those of XLA's CPU backend (`prng.log`, `prng.fma`, ...), so float32
samples are the very values JAX returns, not merely close to them.

Everything is written with jaxlite.lax, so samplers run under jit, vmap and grad: keys
get float0 tangents, while parameters such as `minval`, `mean` or `a` are differentiated
through. The entry points check their arguments eagerly and run a `jit`-compiled body,
as JAX does, so eager calls cost one cached program each.

Exactness. Keys, bits and the integer samplers are exact everywhere; float32 (and 16-bit)
samples are exact too, except where XLA uses the CPU's approximate `rsqrt` or libm's
`pow` (gamma, beta and dirichlet differ by a few ulps for most shape parameters),
LAPACK (multivariate_normal) or its own `lgamma` (poisson with lam >= 10 can flip a
rare accept decision). float64 samples that need `log`, `erf_inv` and the like use
NumPy's functions and may differ from JAX's in the last bit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial

import numpy as np

from jaxlite import dtypes, lax, prng
from jaxlite import numpy as jnp
from jaxlite.api_vmap import vmap
from jaxlite.core import concrete_or_error
from jaxlite.dispatch import jit
from jaxlite.lax.callbacks import pure_callback
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.prng import PRNGKeyArray, check_prng_key, return_keys
from jaxlite.util import canonicalize_axis

__all__ = [
    "PRNGKey",
    "bernoulli",
    "beta",
    "bits",
    "categorical",
    "choice",
    "clone",
    "dirichlet",
    "exponential",
    "fold_in",
    "gamma",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "multivariate_normal",
    "normal",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "split",
    "truncated_normal",
    "uniform",
    "wrap_key_data",
]

UINT_DTYPES = prng.UINT_DTYPES

# --------------------------------------------------------------------------------------
# Keys


_JAX_ONLY_IMPLS = ("philox2x32", "philox4x32", "rbg", "unsafe_rbg", "threefry4x32")


def _check_impl(impl):
    if impl is None or impl == prng.IMPL_NAME or isinstance(impl, prng.KeyTy):
        return
    if impl in _JAX_ONLY_IMPLS:
        raise NotImplementedError(
            f'PRNG implementation "{impl}" is not available in jaxlite, which '
            f'implements only "{prng.IMPL_NAME}" (JAX\'s default).'
        )
    if isinstance(impl, str):
        raise ValueError(
            f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
            f'"{prng.IMPL_NAME}"?'
        )
    raise TypeError(
        f"unrecognized type {type(impl)} for specifying PRNG implementation."
    )


def _impl_from(impl, dtype, ctor):
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                f"Cannot specify both `impl` and `dtype` arguments to jax.random.{ctor}"
            )
        impl = dtype
    _check_impl(impl)


def _seed_data(ctor_name, seed):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use jax.vmap for batching"
        )
    return prng.random_seed(seed)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (`dtype=key<fry>`, shape `()`) from an integer seed."""
    _impl_from(impl, dtype, "key")
    return PRNGKeyArray(_seed_data("key", seed))


def PRNGKey(seed, *, impl=None):  # noqa: N802 (JAX's name)
    """A legacy raw key: the `uint32[2]` data of `key(seed)`."""
    _check_impl(impl)
    return _seed_data("PRNGKey", seed)


def key_dtype(impl=None):
    """The dtype of typed keys (`key<fry>`)."""
    _check_impl(impl)
    return prng.key_dtype


def key_data(keys):
    """The uint32 data under typed keys (raw keys are returned as they are)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return typed._base_array


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32 data whose last axis has size 2."""
    _impl_from(impl, dtype, "wrap_key_data")
    return prng.wrap_key_data(key_bits_array)


def key_impl(keys):
    """The name of the keys' generator: always `'threefry2x32'` in jaxlite."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return prng.IMPL_NAME


def clone(key):
    """The same key (JAX's hook for key-reuse checking, which jaxlite does not do)."""
    return key


def _split_shape(num):
    dims = tuple(num) if isinstance(num, Sequence) else (num,)
    dims = tuple(operator.index(d) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"split: the number of keys must be nonnegative, got {num}")
    return dims


def split(key, num=2):
    """Split a key into `num` new keys (an int, or a shape) along new leading axes."""
    typed, was_raw = check_prng_key("split", key)
    return return_keys(was_raw, prng.random_split(typed, _split_shape(num)))


def _split(key, num=2):
    """`split` on a typed key inside samplers."""
    return prng.random_split(key, _split_shape(num))


def fold_in(key, data):
    """A new key from `key` and 32 bits of `data` (e.g. a step number)."""
    typed, was_raw = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            "fold_in accepts a scalar, but was given an array of"
            f"shape {np.shape(data)} != (). Use jax.vmap for batching."
        )
    data = jnp.asarray(data, dtype="uint32")
    return return_keys(was_raw, prng.random_fold_in(typed, data))


def _random_bits(key, bit_width, shape):
    return prng.random_bits(key, bit_width, shape)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32, or uint64 with x64)."""
    typed, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(
            f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}"
        )
    shape = canonicalize_shape(shape)
    return _random_bits(typed, dtype.itemsize * 8, shape)


# --------------------------------------------------------------------------------------
# Argument checks shared by the samplers


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        broadcast = jnp.broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != tuple(broadcast):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape "
                "argument, and the result of broadcasting the shapes must equal the "
                f"shape argument, but got result {broadcast} for shape argument {shape}."
            )


def _float_dtype(name, dtype, kinds=np.floating, what="a float"):
    dtype = dtypes.canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, kinds):
        raise ValueError(
            f"dtype argument to `{name}` must be {what} dtype, got {dtype}"
        )
    return dtype


def _shape_or_broadcast(name, shape, *args):
    """`shape` checked against the parameters' shapes, or their broadcast shape."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = canonicalize_shape(shape)
    _check_shape(name, shape, *arg_shapes)
    return shape


def _check_safe_cast(name, dtype, *args):
    for arg in args:
        # Safe when promoting with `dtype` (a weak arg counting as weak) gives `dtype`.
        if dtypes.result_type(arg, dtype) == dtype:
            continue
        arg_dtype = dtypes.dtype(arg)
        # (JAX raises its TypePromotionError, a ValueError.)
        raise ValueError(
            f"In arguments to {name}, cannot safely cast argument of type "
            f"{arg_dtype} to {dtype}"
        )


def _const(dtype, value):
    return np.array(value, dtype)


def _unstack(x):
    """The slices of `x` along its first axis (by `split`, which batches simply)."""
    return _entries(x, 0)


# --------------------------------------------------------------------------------------
# uniform, normal and friends


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in `[minval, maxval)`."""
    typed, _ = check_prng_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = canonicalize_shape(shape)
    return _uniform(typed, minval, maxval, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _uniform(key, minval, maxval, shape, dtype):
    _check_shape("uniform", shape)
    minval = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = UINT_DTYPES[nbits]
    raw = _random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint_dtype)
    # The top `nmant` bits as the mantissa of a float in [1, 2), minus 1: exactly
    # mantissa * 2**-nmant, which is what JAX's bitcast computes.
    mantissa = lax.shift_right_logical(raw, _const(uint_dtype, rng_bits - nmant))
    floats = lax.mul(
        lax.convert_element_type(mantissa, dtype), _const(dtype, 2.0**-nmant)
    )
    out = prng.mul_add(floats, lax.sub(maxval, minval), minval)
    return lax.max(minval, out)


def normal(key, shape=(), dtype=None):
    """Standard normal floats (complex dtypes give independent real and imaginary parts
    of variance 1/2)."""
    typed, _ = check_prng_key("normal", key)
    shape = canonicalize_shape(shape)
    dtype = _float_dtype("normal", dtype, np.inexact, "a float or complex")
    return _normal(typed, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        key_re, key_im = _split(key)
        real_dtype = np.array(0, dtype).real.dtype
        re = lax.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
        im = lax.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
        return (re + 1j * im) / _const(dtype, np.sqrt(2))
    return _normal_real(key, shape, dtype)


def _normal_real(key, shape, dtype):
    _check_shape("normal", shape)
    lo = np.nextafter(_const(dtype, -1.0), _const(dtype, 0.0))
    u = _uniform(key, lo, _const(dtype, 1.0), shape, dtype)
    return lax.mul(_const(dtype, np.sqrt(2)), _erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats conditioned on `lower < x < upper`."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    typed, _ = check_prng_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    return _truncated_normal(typed, lower, upper, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
    shape = _shape_or_broadcast("truncated_normal", shape, lower, upper)
    sqrt2 = _const(dtype, np.sqrt(2))
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = _erf(lax.div(lower, sqrt2))
    b = _erf(lax.div(upper, sqrt2))
    u = _uniform(key, a, b, shape, dtype)
    out = lax.mul(sqrt2, _erf_inv(u))
    # Keep rounding (or u == a) from leaving the open interval (lower, upper).
    inf = _const(dtype, np.inf)
    return jnp.clip(
        out,
        lax.nextafter(lax.stop_gradient(lower), lax.full_like(lower, inf)),
        lax.nextafter(lax.stop_gradient(upper), lax.full_like(upper, -inf)),
    )


def exponential(key, shape=(), dtype=None):
    """Exponential floats with rate 1: `-log(1 - u)`."""
    typed, _ = check_prng_key("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    return _exponential(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _exponential(key, shape, dtype):
    _check_shape("exponential", shape)
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    return lax.neg(_log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None):
    """Laplace floats with scale 1."""
    typed, _ = check_prng_key("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    return _laplace(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _laplace(key, shape, dtype):
    _check_shape("laplace", shape)
    lo = -1.0 + float(dtypes.finfo(dtype).epsneg)
    u = _uniform(key, lo, 1.0, shape, dtype)
    return lax.mul(lax.sign(u), _log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Logistic floats: `log(u) - log(1 - u)`."""
    typed, _ = check_prng_key("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    return _logistic(typed, canonicalize_shape(shape), dtype)


@partial(jit, static_argnums=(1, 2))
def _logistic(key, shape, dtype):
    _check_shape("logistic", shape)
    u = _uniform(key, float(dtypes.finfo(dtype).tiny), 1.0, shape, dtype)
    return lax.sub(_log(u), _log1p(lax.neg(u)))


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Log-normal floats: `exp(sigma * normal)`."""
    typed, _ = check_prng_key("lognormal", key)
    dtype = _float_dtype("lognormal", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _lognormal(typed, sigma, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _lognormal(key, sigma, shape, dtype):
    shape = _shape_or_broadcast("lognormal", shape, sigma)
    sigma = lax.convert_element_type(sigma, dtype)
    scaled = lax.mul(_normal_real(key, shape, dtype), sigma)
    return _exp(scaled)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Gumbel floats: `-log(-log(u))`.

    `mode="high"` spends two uniforms per value for a wider range of tiny `u`.
    """
    typed, _ = check_prng_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    shape = canonicalize_shape(shape)
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    if mode == "highest":
        raise NotImplementedError(
            "gumbel(mode='highest') is not implemented in jaxlite; use mode='high'"
        )
    return _gumbel(typed, shape, dtype, mode)


@partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key, shape, dtype, mode):
    _check_shape("gumbel", shape)
    finfo = dtypes.finfo(dtype)
    if mode == "high":
        high, low = _unstack(_uniform(key, 0.0, 1.0, (2, *shape), dtype))
        refined = (
            high + _const(dtype, 2.0**-finfo.nmant) * low + _const(dtype, finfo.tiny)
        )
        x = jnp.where(high >= 0.5, high, refined)
        return lax.neg(_log(lax.neg(_log1p(lax.neg(x)))))
    u = _uniform(key, float(finfo.tiny), 1.0, shape, dtype)
    return lax.neg(_log(lax.neg(_log(u))))


def rademacher(key, shape=(), dtype=None):
    """Random signs, -1 or +1 with equal probability."""
    typed, _ = check_prng_key("rademacher", key)
    dtype = dtypes.canonicalize_user_dtype(int if dtype is None else dtype)
    shape = canonicalize_shape(shape)
    samples = _bernoulli(typed, _const(dtypes.default_float_dtype(), 0.5), shape, "low")
    samples = samples.astype(dtype)
    return (2 * samples - 1).astype(dtype)


# --------------------------------------------------------------------------------------
# Integers, booleans, shuffles and choices


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in `[minval, maxval)` (two random words per value)."""
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
    clipped = jnp.clip(val, _const(val.dtype, lo), _const(val.dtype, hi))
    return clipped.astype(dtype)


@partial(jit, static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
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
    k1, k2 = _split(key)
    higher_bits = _random_bits(k1, nbits, shape)
    lower_bits = _random_bits(k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned)
    # maxval <= minval always gives minval.
    span = jnp.where(maxval <= minval, lax.full_like(span, 1), span)
    span = jnp.where(
        maxval_out_of_range & (maxval > minval), span + _const(unsigned, 1), span
    )
    # (hi * 2**nbits + lo) % span, with 2**nbits % span computed without overflow.
    multiplier = lax.rem(lax.full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(
        lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span)
    )
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability `p`."""
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
        _check_shape("bernoulli", shape, np.shape(p))
    dtype = p.dtype
    if mode == "high":
        u1, u2 = _unstack(_uniform(key, 0.0, 1.0, (2, *shape), dtype))
        # The second uniform fills in the bits below the first one's resolution.
        u2 = u2 * _const(dtype, 2.0 ** -dtypes.finfo(dtype).nmant)
        return u2 < p - u1
    return _uniform(key, 0.0, 1.0, shape, dtype) < p


def permutation(key, x, axis=0, independent=False):
    """A random permutation of `arange(x)` (int `x`) or of `x` along `axis`."""
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
        key, subkey = _split(key)
        sort_keys = _random_bits(subkey, 32, x.shape)
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
            g = gumbel(typed, (n_inputs,), dtype=p_arr.dtype, mode=mode) + _log(p_arr)
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


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities `softmax(logits, axis)`."""
    typed, _ = check_prng_key("categorical", key)
    check_arraylike("categorical", logits)
    logits_arr = jnp.asarray(logits)
    batch_shape = tuple(np.delete(np.array(logits_arr.shape, dtype=int), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape)
        _check_shape("categorical", shape, batch_shape)
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


# --------------------------------------------------------------------------------------
# Gamma and the distributions built on it


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) variate by Marsaglia and Tsang's method ("A simple method for
    generating gamma variables", 2000), looping until a candidate is accepted.

    alpha < 1 is boosted: Gamma(alpha) ~ Gamma(alpha + 1) * U ** (1 / alpha).
    """
    dtype = alpha.dtype
    zero, one = _const(dtype, 0), _const(dtype, 1)
    one_third = _const(dtype, 1.0 / 3.0)
    squeeze = _const(dtype, 0.0331)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_third)
    # XLA rewrites x / sqrt(y) as x * rsqrt(y), and rsqrt(y) rounds 1 / sqrt(y).
    c = lax.mul(one_third, lax.div(one, lax.sqrt(d)))

    def rejected(state):
        _, x2, v3, u = state
        squeeze_fails = lax.ge(u, lax.sub(one, lax.mul(squeeze, lax.mul(x2, x2))))
        log_v3 = lax.add(lax.sub(one, v3), _log(v3))
        bound = prng.fma(d, log_v3, lax.mul(x2, _const(dtype, 0.5)))
        return lax.bitwise_and(squeeze_fails, lax.ge(_log(u), bound))

    def next_candidate(state):
        key = state[0]
        key, x_key, u_key = _split(key, 3)

        def positive_v(state):
            key = state[0]
            key, subkey = _split(key)
            x = _normal_real(subkey, (), dtype)
            return key, x, prng.fma(x, c, one)

        _, x, v = lax.while_loop(
            lambda s: lax.le(s[2], zero), positive_v, (x_key, zero, _const(dtype, -1))
        )
        u = _uniform(u_key, 0.0, 1.0, (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _split(key)
    # The initial state is rejected, so the loop draws at least one candidate.
    init = (key, zero, one, _const(dtype, 2))
    _, _, v3, _ = lax.while_loop(rejected, next_candidate, init)
    if log_space:
        log_samples = lax.neg(_exponential(subkey, (), dtype))
        no_boost = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = jnp.where(
            no_boost, zero, lax.mul(log_samples, lax.div(one, alpha_orig))
        )
        return lax.add(lax.add(_log(d), _log(v3)), log_boost)
    samples = lax.sub(one, _uniform(subkey, 0.0, 1.0, (), dtype))
    boost = jnp.where(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v3), boost)


def _gamma_samples(key, a, log_space):
    count = math.prod(a.shape)
    keys = _split(key, count)
    samples = vmap(partial(_gamma_one, log_space=log_space))(keys, a.reshape(-1))
    return samples.reshape(a.shape)


@partial(custom_jvp, nondiff_argnums=(2,))
def _gamma_core(key, a, log_space):
    return _gamma_samples(key, a, log_space)


@_gamma_core.defjvp
def _gamma_core_jvp(log_space, primals, tangents):
    key, a = primals
    _, a_dot = tangents
    sample = _gamma_core(key, a, log_space)
    return sample, lax.mul(a_dot, _gamma_grad(sample, a, log_space))


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a) floats with unit scale; differentiable in `a` (implicit reparametrization)."""
    typed, _ = check_prng_key("gamma", key)
    dtype = _float_dtype("gamma", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _gamma(typed, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a) floats, computed in log space (accurate for tiny `a`)."""
    typed, _ = check_prng_key("loggamma", key)
    dtype = _float_dtype("gamma", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _gamma(typed, a, shape, dtype, True)


@partial(jit, static_argnums=(2, 3, 4))
def _gamma(key, a, shape, dtype, log_space):
    if shape is None:
        shape = np.shape(a)
    else:
        _check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return _gamma_core(key, a, log_space)


def _gamma_grad(sample, a, log_space):
    """d sample / d a at fixed CDF value: -(dP/da) / (dP/dx) for P(a, x) = igamma.

    Computed on the host in float64 (see `_gamma_grad_np`); it is a tangent, so it is
    only ever differentiated once more, where it counts as a constant.
    """
    x = lax.exp(sample) if log_space else sample
    spec = jnp.zeros(np.shape(a), a.dtype)
    grad = pure_callback(
        _gamma_grad_np,
        spec,
        lax.stop_gradient(a),
        lax.stop_gradient(x),
        vmap_method="broadcast_all",
    )
    if log_space:
        tiny = _const(x.dtype, dtypes.finfo(x.dtype).tiny)
        grad = lax.div(grad, jnp.where(x == 0, tiny, lax.stop_gradient(x)))
    return grad


def _gamma_grad_np(a, x):
    """-(dP/da) / (dP/dx) for the regularized incomplete gamma function P(a, x).

    Host code in float64. dP/dx is the Gamma density; dP/da differentiates, carrying
    derivatives in `a` along with values, the series for P when x < a + 1 and the
    continued fraction for Q = 1 - P otherwise (the split of Numerical Recipes' gammp).
    """
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    grads = [
        _gamma_grad_scalar(float(ai), float(xi)) for ai, xi in zip(a64.flat, x64.flat)
    ]
    return np.array(grads, np.float64).reshape(a64.shape).astype(np.asarray(a).dtype)


def _gamma_grad_scalar(a, x):
    if not (a > 0 and x > 0 and math.isfinite(x)):
        return 0.0 if x <= 0 else math.nan
    log_x = math.log(x)
    if x < a + 1:
        # P = x**a e**-x / Gamma(a + 1) * sum_n x**n / ((a + 1) ... (a + n))
        term, d_term, total, d_total = 1.0, 0.0, 1.0, 0.0
        for n in range(1, 10000):
            ratio = x / (a + n)
            d_term = (d_term - term / (a + n)) * ratio
            term *= ratio
            total, d_total = total + term, d_total + d_term
            if abs(term) < 1e-17 * total:
                break
        scale = math.exp(a * log_x - x - math.lgamma(a + 1))
        d_log_scale = log_x - _digamma(a) - 1 / a
        dp_da = scale * (d_log_scale * total + d_total)
    else:
        # Q = x**a e**-x / Gamma(a) * h, h = 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/...)),
        # by the modified Lentz method.
        tiny = 1e-300
        b, d_b = x + 1 - a, -1.0
        c, d_c = 1 / tiny, 0.0
        d, d_d = 1 / b, d_b / -(b * b)
        h, d_h = d, d_d
        for i in range(1, 10000):
            an, d_an = -i * (i - a), float(i)
            b += 2
            den = an * d + b
            d_den = d_an * d + an * d_d + d_b
            den = den if abs(den) > tiny else tiny
            d, d_d = 1 / den, -d_den / (den * den)
            c_new = b + an / c
            d_c = d_b + d_an / c - an * d_c / (c * c)
            c = c_new if abs(c_new) > tiny else tiny
            delta, d_delta = c * d, d_c * d + c * d_d
            h, d_h = h * delta, d_h * delta + h * d_delta
            if abs(delta - 1) < 1e-16:
                break
        scale = math.exp(a * log_x - x - math.lgamma(a))
        dp_da = -scale * ((log_x - _digamma(a)) * h + d_h)
    density = math.exp((a - 1) * log_x - x - math.lgamma(a))
    return -dp_da / density


def _digamma(v):
    """The digamma function: recurrence up to 6, then its asymptotic series."""
    result = 0.0
    while v < 6:
        result -= 1 / v
        v += 1
    f = 1 / (v * v)
    tail = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))
    return result + math.log(v) - 0.5 / v - tail


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats, from two log-gamma variates."""
    typed, _ = check_prng_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    _check_safe_cast("beta", dtype, a, b)
    shape = _shape_or_broadcast("beta", shape, a, b)
    return _beta(typed, a, b, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _beta(key, a, b, shape, dtype):
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = _split(key)
    log_gamma_a = _gamma(key_a, a, shape, dtype, True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, True)
    # gamma_a / (gamma_a + gamma_b) without overflow or underflow.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = _exp(lax.sub(log_gamma_a, log_max))
    gamma_b_scaled = _exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a_scaled, lax.add(gamma_a_scaled, gamma_b_scaled))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along the last axis, from log-gamma variates."""
    typed, _ = check_prng_key("dirichlet", key)
    check_arraylike("dirichlet", alpha)
    dtype = _float_dtype("dirichlet", dtype)
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
        _check_shape("dirichlet", shape, alpha.shape[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    full_shape = (*shape, alpha.shape[-1])
    log_gamma = _gamma(
        key, jnp.broadcast_to(alpha, full_shape), full_shape, dtype, True
    )
    # Normalize in log space, as a softmax.
    shifted = log_gamma - jnp.max(log_gamma, axis=-1, keepdims=True)
    unnormalized = _exp(shifted)
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------
# Poisson


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers: Knuth's method below 10, Hormann's rejection above."""
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
        rng, subkey = _split(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = _uniform(subkey, 0.0, 1.0, shape, np.dtype("float32"))
        return i + 1, k, rng, log_prod + _log(u)

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
    log_lam = _log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, 3)
        u = _uniform(subkey_0, 0.0, 1.0, shape, lam.dtype) - 0.5
        v = _uniform(subkey_1, 0.0, 1.0, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = _log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
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
# multivariate_normal


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with the given mean (`(..., n)`) and covariance (`(..., n, n)`).

    `method="cholesky"` (the default) factors `cov` with a Cholesky decomposition
    written in lax (differentiable, batchable). "eigh" and "svd" factor it on the host
    with NumPy (through `pure_callback`), so they are not differentiable in `cov`.
    """
    typed, _ = check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dtype = mean.dtype
    else:
        dtype = dtypes.canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(
            f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}"
        )
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _multivariate_normal(typed, mean, cov, shape, dtype, method)


@partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if not np.ndim(mean) >= 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {np.ndim(mean)}"
        )
    if not np.ndim(cov) >= 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {np.ndim(cov)}"
        )
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {np.shape(cov)}."
        )
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "cholesky":
        factor = _cholesky(cov)
    else:
        factor = _host_factor(cov, method)
    samples = _normal(key, (*shape, n), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def _cholesky(a):
    """Lower Cholesky factor of `a` (`(..., n, n)`), column by column (Cholesky-Crout);
    NaN where `a` is not positive definite.

    As JAX does, `a` is first symmetrized, so gradients are symmetric. Columns and
    entries are taken apart with `split` and the factor is assembled with `stack`:
    those have every autodiff and batching rule.
    """
    a = (a + jnp.swapaxes(a, -1, -2)) / 2
    n = a.shape[-1]
    rows = np.arange(n)
    columns = []
    for j in range(n):
        residual = _entries(a, -1)[j]
        for column in columns:
            residual = residual - column * _entries(column, -1)[j][..., None]
        diag = lax.sqrt(_entries(residual, -1)[j])
        below = jnp.where(rows > j, residual / diag[..., None], 0)
        columns.append(jnp.where(rows == j, diag[..., None], below))
    return jnp.stack(columns, axis=-1)


def _entries(x, axis):
    """The slices of `x` along `axis` (dropped), by `split`."""
    pieces = lax.split(x, (1,) * x.shape[axis], axis=axis)
    return [lax.squeeze(piece, (axis,)) for piece in pieces]


def _host_factor(cov, method):
    def factor(c):
        c = np.asarray(c)
        if method == "svd":
            u, s, _ = np.linalg.svd(c)
            return (u * np.sqrt(s[..., None, :])).astype(c.dtype)
        w, v = np.linalg.eigh(c)
        return (v * np.sqrt(w[..., None, :])).astype(c.dtype)

    spec = jnp.zeros(cov.shape, cov.dtype)
    return pure_callback(
        factor, spec, lax.stop_gradient(cov), vmap_method="expand_dims"
    )


_log, _log1p, _exp, _erf, _erf_inv = (
    prng.log,
    prng.log1p,
    prng.exp,
    prng.erf,
    prng.erf_inv,
)
