"""Array constructors of lax: `full` and `full_like`, built from a constant and
`broadcast_in_dim` (so that `jnp.ones((3,))` stages as `broadcast_in_dim 1.0:f32[]`)."""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.core import has_data
from jaxlite.lax.elementwise import convert_element_type
from jaxlite.lax.structural import broadcast_in_dim, canonicalize_shape


def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value` (a scalar)."""
    shape = canonicalize_shape(shape)
    if np.ndim(fill_value) != 0:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape "
            f"{np.shape(fill_value)}."
        )
    if dtype is None:
        dtype, weak = dtypes.result_type(fill_value, return_weak_type_flag=True)
    else:
        dtype, weak = dtypes.canonicalize_dtype(dtype), False
    if has_data(dtype):  # keys: the dtype's rules fill its data
        return dtype._rules.full(shape, fill_value, dtype)
    value = convert_element_type(fill_value, dtype, weak)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like `x` (its shape and, unless given, its dtype) filled with a scalar."""
    shape = np.shape(x) if shape is None else shape
    if dtype is None:
        dtype = dtypes.result_type(x)
        if has_data(dtype):
            return full(shape, fill_value, dtype)
        weak = dtypes.is_weakly_typed(x)
        value = convert_element_type(fill_value, dtype, weak)
        return broadcast_in_dim(value, canonicalize_shape(shape), ())
    return full(shape, fill_value, dtype)


def zeros_like_array(x):
    return full_like(x, 0)
