"""What every sampler does before it samples: check its arguments, the JAX way.

The public samplers check shapes and dtypes eagerly, with JAX's messages, then call a
`jit`-compiled body. The helpers here are those checks, plus the few small tools every
body uses (typed-key splitting, raw bits, constants of a dtype, slicing by `split`).
They are shared by the sampler modules of `jaxlite.random` and are not public API.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from jaxlite import dtypes, lax, prng
from jaxlite import numpy as jnp
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.sharding import NamedSharding, PartitionSpec, get_abstract_mesh

__all__ = [
    "check_out_sharding",
    "check_safe_cast",
    "check_shape",
    "const",
    "entries",
    "float_dtype",
    "random_bits",
    "shape_or_broadcast",
    "split_key",
    "split_shape",
    "unstack",
]

UINT_DTYPES = prng.UINT_DTYPES


def check_shape(name, shape, *param_shapes):
    """`shape` must be the broadcast of itself with the parameters' shapes."""
    if param_shapes:
        broadcast = jnp.broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != tuple(broadcast):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape "
                "argument, and the result of broadcasting the shapes must equal the "
                f"shape argument, but got result {broadcast} for shape argument {shape}."
            )


def float_dtype(name, dtype, kinds=np.floating, what="a float"):
    """The canonical dtype asked for (default: the default float), checked."""
    dtype = dtypes.canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, kinds):
        raise ValueError(
            f"dtype argument to `{name}` must be {what} dtype, got {dtype}"
        )
    return dtype


def shape_or_broadcast(name, shape, *args):
    """`shape` checked against the parameters' shapes, or their broadcast shape."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = canonicalize_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def check_safe_cast(name, dtype, *args):
    """Parameters must convert to the sample dtype without loss (JAX's rule)."""
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


def check_out_sharding(name, out_sharding):
    """A sampler's `out_sharding`, checked as JAX checks it: None, a NamedSharding,
    or a PartitionSpec under a mesh (`jax.set_mesh`). Libraries pass the sharding of
    the value a sample will replace (`jax.typeof(x).sharding`, replicated over the
    empty mesh). On jaxlite's one device every such layout holds the whole array, so
    the sample itself does not change."""
    if out_sharding is None:
        return
    if not isinstance(out_sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(
            f"`out_sharding` argument of {name} only supports instances of "
            f"`NamedSharding` or `PartitionSpec`. Got {out_sharding} of type: "
            f"{type(out_sharding)}"
        )
    if isinstance(out_sharding, PartitionSpec) and get_abstract_mesh().empty:
        raise ValueError(
            "Using PartitionSpec when you are not under a mesh context is not "
            "allowed. Please pass a NamedSharding instance or enter into a mesh "
            f"context via `jax.set_mesh`. Got {out_sharding}"
        )


def split_shape(num):
    """The shape of the keys `split(key, num)` makes (`num` an int or a shape)."""
    dims = tuple(num) if isinstance(num, Sequence) else (num,)
    dims = tuple(operator.index(d) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"split: the number of keys must be nonnegative, got {num}")
    return dims


def split_key(key, num=2):
    """`split` on a typed key inside samplers."""
    return prng.random_split(key, split_shape(num))


def random_bits(key, bit_width, shape):
    return prng.random_bits(key, bit_width, shape)


def const(dtype, value):
    return np.array(value, dtype)


def entries(x, axis):
    """The slices of `x` along `axis` (dropped), by `split`, which batches simply."""
    pieces = lax.split(x, (1,) * x.shape[axis], axis=axis)
    return [lax.squeeze(piece, (axis,)) for piece in pieces]


def unstack(x):
    """The slices of `x` along its first axis."""
    return entries(x, 0)
