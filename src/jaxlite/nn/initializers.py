"""`jax.nn.initializers`: functions that make parameter arrays.

Each initializer is called as `init(key, shape, dtype)` and draws from
`jaxlite.random`, which is bit-exact with JAX's generator, so the same key gives the
same weights as under JAX. The constructors (`normal(stddev)`, `glorot_uniform()`,
...) return such functions. `variance_scaling` is the common core: it scales the
distribution so that the variance is `scale / fan`, where the fans are computed from
the shape (the `in_axis` and `out_axis` sizes, times the receptive field: every
other axis but the `batch_axis` ones). Truncated normals are divided by the standard
deviation of a unit normal truncated to [-2, 2] so the variance comes out right.
"""

from __future__ import annotations

import math
import typing

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import dtypes, random
from jaxlite.lax.structural import canonicalize_shape

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]


@typing.runtime_checkable
class Initializer(typing.Protocol):
    """The type of an initializer: `init(key, shape, dtype=None) -> Array`."""

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def _dtype(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (the key is unused)."""
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (the key is unused)."""
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling arrays with `value`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_dtype(dtype))

    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from [0, scale)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)

    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from a normal distribution with mean 0 and standard
    deviation `stddev`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from a normal distribution truncated to
    [lower, upper] (in units of standard deviations), then scaled by `stddev`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        sample = random.truncated_normal(key, lower, upper, shape, dtype)
        return sample * jnp.array(stddev, dtype)

    return init


def _size(shape, axis):
    if isinstance(axis, int):
        return shape[axis]
    return math.prod(shape[i] for i in axis)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight of `shape`: the in/out axis sizes times the
    receptive field (the product of the remaining non-batch axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional "
            "weights tensor with default in_axis. Must be at least 2D or specify "
            "in_axis explicitly."
        )
    in_size = _size(shape, in_axis)
    out_size = _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive_field = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field, out_size * receptive_field


def _real_dtype(dtype):
    return np.dtype(dtypes.finfo(dtype).dtype)


def _complex_uniform(key, shape, dtype):
    """Complex values uniform on the disc of radius sqrt(2) (variance 1)."""
    key_r, key_theta = random.split(key)
    real = _real_dtype(dtype)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Complex values with Rayleigh-distributed modulus truncated at `upper`."""
    key_r, key_theta = random.split(key)
    real = _real_dtype(dtype)
    t = (1 - jnp.exp(jnp.array(-(upper**2), dtype))) * random.uniform(
        key_r, shape, real
    ).astype(dtype)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def variance_scaling(
    scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None
):
    """An initializer whose samples have variance `scale / n`, where `n` is
    fan_in, fan_out, their average or their geometric mean (`mode`), from a
    "truncated_normal", "normal" or "uniform" `distribution`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = canonicalize_shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        is_real = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if is_real:
                # std of a unit normal truncated to [-2, 2]
                stddev = jnp.sqrt(variance) / jnp.array(0.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(0.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if is_real:
                sample = random.uniform(key, shape, dtype, -1)
                return sample * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}"
        )

    return init


def _variance_preset(scale, mode, distribution, doc):
    def constructor(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(
            scale,
            mode,
            distribution,
            in_axis=in_axis,
            out_axis=out_axis,
            batch_axis=batch_axis,
            dtype=dtype,
        )

    constructor.__doc__ = doc
    return constructor


glorot_uniform = _variance_preset(
    1.0,
    "fan_avg",
    "uniform",
    "Glorot (Xavier) uniform: variance 2 / (fan_in + fan_out).",
)
glorot_normal = _variance_preset(
    1.0,
    "fan_avg",
    "truncated_normal",
    "Glorot (Xavier) truncated normal: variance 2 / (fan_in + fan_out).",
)
lecun_uniform = _variance_preset(
    1.0, "fan_in", "uniform", "LeCun uniform: variance 1 / fan_in."
)
lecun_normal = _variance_preset(
    1.0, "fan_in", "truncated_normal", "LeCun truncated normal: variance 1 / fan_in."
)
he_uniform = _variance_preset(
    2.0, "fan_in", "uniform", "He (Kaiming) uniform: variance 2 / fan_in."
)
he_normal = _variance_preset(
    2.0,
    "fan_in",
    "truncated_normal",
    "He (Kaiming) truncated normal: variance 2 / fan_in.",
)
for _f, _name in (
    (glorot_uniform, "glorot_uniform"),
    (glorot_normal, "glorot_normal"),
    (lecun_uniform, "lecun_uniform"),
    (lecun_normal, "lecun_normal"),
    (he_uniform, "he_uniform"),
    (he_normal, "he_normal"),
):
    _f.__name__ = _f.__qualname__ = _name
del _f, _name
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def _orthogonal_matrix(key, n, m, dtype):
    """An (n, m) matrix with orthonormal rows or columns, uniformly distributed
    (`jax.random.orthogonal`): the QR factor of a Gaussian matrix, with each column
    multiplied by the sign of R's diagonal so the distribution is uniform."""
    try:
        from jaxlite.numpy.linalg import qr
    except ImportError:
        qr = None
    if qr is None:
        raise NotImplementedError(
            "The orthogonal initializer needs jnp.linalg.qr, which this build of "
            "jaxlite lacks."
        )
    z = random.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = qr(z)
    d = jnp.diagonal(r, 0, -2, -1)
    q = q * jnp.expand_dims(jnp.sign(d), -2)
    return q.mT if n < m else q


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of (semi-)orthogonal matrices: the array reshaped to
    (everything else, shape[column_axis]) has orthonormal rows or columns, times
    `scale`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _dtype(dtype)
        shape = canonicalize_shape(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = _orthogonal_matrix(key, n_rows, n_cols, dtype)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer for 3-D, 4-D or 5-D convolution kernels: zero everywhere
    except the spatial centre, which holds an orthogonal matrix (the "delta
    orthogonal" of Xiao et al., 2018)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _dtype(dtype)
        shape = canonicalize_shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(
                "Delta orthogonal initializer requires a 3D, 4D or 5D shape."
            )
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(
            key, shape[-2:]
        )
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(ortho)

    return init
