"""Values made from types and shapes: `dtype`, `empty` and `broadcast_like`.

`dtype(x)` is the canonical dtype a value or dtype-like gets in jaxlite (Python floats
are float32 unless x64 is on), the dtype `lax` functions compute in. `empty(shape,
dtype)` is an array whose contents do not matter: a primitive, as in JAX, so a
compiler may leave the buffer uninitialised; the NumPy backend fills it with zeros,
the values JAX gives on CPU. `broadcast_like(x, y)` broadcasts `x` to the shape of `y`
with NumPy's rules (`jnp.broadcast_to`), keeping x's dtype and weak type.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.lax.structural import broadcast_in_dim, canonicalize_shape, operand

__all__ = ["broadcast_like", "dtype", "empty", "empty_p"]


def dtype(x):
    """The canonical dtype of `x`: an array, a scalar, a Python scalar or a dtype-like.

    Raises ValueError for None and TypeError for what has no dtype, as JAX does."""
    return dtypes.dtype(x)


# --------------------------------------------------------------------------------------
# empty


def _empty_impl(*, shape, dtype, out_sharding):
    return [np.zeros(shape, dtype)]


def _empty_abstract(*, shape, dtype, out_sharding):
    return [ShapedArray(shape, dtype)], no_effects


# No operands, so no JVP or batching rule is ever needed (exempt in the rule tests).
empty_p = Primitive("empty")
impl_rules[empty_p] = _empty_impl
abstract_eval_rules[empty_p] = _empty_abstract


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose contents are unspecified (zeros here)."""
    shape = canonicalize_shape(shape)
    dtype = dtypes.canonicalize_user_dtype(dtype, "empty")
    return empty_p.bind(dtype=dtype, out_sharding=None, shape=shape)


# --------------------------------------------------------------------------------------
# broadcast_like


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy rules) to the shape of `like_arr`, in arr's dtype."""
    x = operand(arr)
    shape = tuple(np.shape(like_arr))
    x_shape = tuple(np.shape(x))
    lead = len(shape) - len(x_shape)
    if lead < 0 or any(
        d not in (1, t) for d, t in zip(x_shape, shape[lead:], strict=True)
    ):
        name = np.dtype(x.dtype).name
        raise ValueError(
            f"Incompatible types for broadcasting: input type={name}"
            f"[{','.join(map(str, x_shape))}] and requested type={name}"
            f"[{','.join(map(str, shape))}]. (broadcast_like broadcasts its first "
            "argument to the shape of its second with NumPy's rules.)"
        )
    if x_shape == shape:
        return x
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))
