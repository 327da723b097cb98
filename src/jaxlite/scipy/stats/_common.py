"""Shared helpers of the jaxlite.scipy.stats modules: argument promotion (JAX's rules,
weak Python scalars stay weak), scalar constants of an array's dtype, and `where` with
scalar branches."""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.numpy import ufuncs
from jaxlite.numpy.ufuncs import promote_args_inexact, promote_dtypes_inexact

__all__ = [
    "const",
    "promote_args_inexact",
    "promote_dtypes_inexact",
    "strong",
    "weak_const",
    "where",
]


def const(x, value):
    """`value` as a scalar of x's dtype, weak only when `x` is a weak scalar (as JAX's
    constants: a weak array meets strong constants, so results lose the weak type)."""
    if np.ndim(x) == 0 and dtypes.is_weakly_typed(x):
        return lax.full_like(x, value, shape=())
    return lax.full((), value, dtypes.dtype(x))


def where(cond, on_true, on_false):
    return ufuncs.where(cond, on_true, on_false)


def weak_const(x, value):
    """`value` as a weak scalar of x's dtype, like a Python number in JAX's code (the
    result keeps x's weak type)."""
    return lax.full_like(x, value, shape=())


def strong(x):
    """`x` without its weak type (JAX's code mixes in constants of a fixed dtype)."""
    return lax.convert_element_type(x, dtypes.dtype(x))
